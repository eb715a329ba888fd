"""PixelDiff: the built-in, offline pre-annotator (no model, no network)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairdiff.pixeldiff import words
from pairdiff.pixeldiff.decode import DecodeError, Frames, Xyxy, common_frame, decode_image
from pairdiff.pixeldiff.group import group
from pairdiff.pixeldiff.local import Local, Views, describe
from pairdiff.pixeldiff.maps import changed_mask, maps, regions, threshold
from pairdiff.pixeldiff.settings import Settings
from pairdiff.pixeldiff.whole import GlobalChange, fit_tone, photometric, spread, texture
from pairdiff.predict import (
    CHANGE_TOO_LARGE,
    NO_VISIBLE_CHANGE,
    SCATTERED_CHANGES,
    PredictedChange,
    PredictionResult,
)


class PixelDiff:
    """Perceptual image difference → boxes on both sides, global-change suggestions and
    screening flags. Options are the fields of `Settings` (e.g. ``PixelDiff(max_side=768)``)."""

    name = "pixeldiff"
    version = "1"

    def __init__(self, **options: float) -> None:
        self.settings = Settings(**options)  # type: ignore[arg-type]

    def predict(
        self,
        image_a: bytes,
        image_b: bytes,
        *,
        categories: Sequence[str],
        instruction: str = "",
    ) -> PredictionResult:
        """Propose the changes between A and B; never raises, errors come back as `error`."""
        try:
            a = decode_image(image_a, self.settings.max_pixels, "A")
            b = decode_image(image_b, self.settings.max_pixels, "B")
        except DecodeError as exc:
            return PredictionResult(error=str(exc))
        slugs = (categories,) if isinstance(categories, str) else tuple(categories or ())
        try:
            return _Run(self.settings, common_frame(a, b, self.settings.max_side), slugs).result()
        except Exception as exc:  # a pre-annotation job must record a failure, not crash on it
            return PredictionResult(error=f"pixeldiff failed: {type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Finding:
    """What pixeldiff took a change for: kind (appear, move, colour, …, global:lighting, …)
    and its detail ("brighter", "smaller", "warm")."""

    kind: str
    detail: str


def analyse(
    frames: Frames, categories: Sequence[str], settings: Settings | None = None
) -> tuple[PredictionResult, list[Finding]]:
    """pixeldiff on two images already in one working frame: the prediction and, change by
    change, what it was taken for. Errors propagate (the caller decides what a failure means)."""
    run = _Run(settings or Settings(), frames, tuple(categories))
    result = run.result()
    return result, run.findings


class _Run:
    """One prediction: the analysis steps share the working images and their maps."""

    def __init__(self, s: Settings, frames: Frames, categories: tuple[str, ...]) -> None:
        self.s, self.frames, self.categories = s, frames, categories
        self.maps = maps(frames.a, frames.b, s)
        self.lab_a, self.lab_b, self.score = self.maps.lab_a, self.maps.lab_b, self.maps.score
        self.diag: dict[str, object] = {"frame": list(frames.shape[::-1])}
        self.findings: list[Finding] = []

    def result(self) -> PredictionResult:
        globals_ = self._global()
        levels = threshold(self.score, self.s)
        level = levels[0]
        self.diag["threshold"] = [round(v, 3) for v in levels]
        # Local edits are looked for even on top of a global change: the tone fit has taken
        # light and colour casts out of the score, and the adaptive threshold rises above grain.
        mask = changed_mask(self.score, levels, self.s)
        views = Views(self.lab_a, self.lab_b, mask)
        locals_ = group(
            [c for r in regions(mask, self.score, level, self.s) for c in describe(r, views)]
        )
        # Grain or blur everywhere shows more in some places than others; those places are the
        # global change again, not local edits of their own.
        seen = {g.kind for g in globals_}
        locals_ = [c for c in locals_ if c.kind not in seen & {"noise", "blur"}]
        # Faint, small regions are mostly re-encoding residue (JPEG on both sides, a tone
        # curve stretching the shadows): not worth an annotator's time.
        locals_ = [c for c in locals_ if self._local_confidence(c) >= self.s.min_confidence]
        flags = self._flags(globals_, locals_, mask)
        changes = [self._global_change(g) for g in globals_]
        changes += [self._local_change(c) for c in locals_]
        # What each change is, in pixeldiff's own words (the assists draft sentences from it).
        self.findings = [Finding(f"global:{g.kind}", g.detail) for g in globals_]
        self.findings += [Finding(c.kind, c.detail) for c in locals_]
        return PredictionResult(
            changes=tuple(changes),
            flags=flags,
            confidence=self._confidence(changes, flags, level),
            raw=json.dumps(self.diag, sort_keys=True),
        )

    def _global(self) -> list[GlobalChange]:
        """Whole-image changes: lighting or a colour cast, noise or blur, a new resolution."""
        s, found = self.s, []
        visible = self.score > 1.0
        self.spread = spread(visible)
        self.diag["spread"] = round(self.spread, 3)
        lab_fit = self.lab_a
        if self.spread >= s.global_spread:
            # A tone curve fitted from A to B absorbs lighting and colour casts; what it leaves
            # behind is local. If it explains little, look at fine detail (noise, blur).
            # A pure tone curve maps A onto B's very pixels, so only the rest is scored; B's
            # side of the scoring is the first maps' own.
            fit = maps(fit_tone(self.frames.a, self.frames.b), self.frames.b, s, self.maps)
            lab_fit, score_fit = fit.lab_a, fit.score
            left = score_fit > 1.0
            spread_left = spread(left)
            self.diag["spread_after_tone"] = round(spread_left, 3)
            if spread_left < s.global_spread and left.mean() < 0.5 * visible.mean():
                explained = 1.0 - float(left.mean()) / float(visible.mean())
                found.append(photometric(self.lab_a, self.lab_b, explained))
                self.lab_a, self.score = lab_fit, score_fit
        if not found:
            # Fine grain over a textured photo can stay under the visibility threshold pixel by
            # pixel, so noise and blur are judged on detail energy wherever the spread is.
            tex = texture(lab_fit, self.lab_b, s.global_spread)
            if tex is not None:
                found.append(tex)
        if not self.frames.same_size:
            (wa, ha), (wb, hb) = self.frames.size_a, self.frames.size_b
            word = "lower" if wb * hb < wa * ha else "higher" if wb * hb > wa * ha else "different"
            # A resize is itself the noise/resolution change; a blur found with it is its echo.
            found = [g for g in found if g.kind not in ("noise", "blur")]
            found.insert(0, GlobalChange("resolution", word, 1.0))
        self.diag["global"] = [g.kind for g in found]
        return found

    def _flags(
        self, globals_: list[GlobalChange], locals_: list[Local], mask: np.ndarray
    ) -> tuple[str, ...]:
        s, flags = self.s, []
        if not globals_ and not locals_:
            flags.append(NO_VISIBLE_CHANGE)
        unexplained = self.spread >= s.global_spread and not globals_
        if locals_ and (mask.mean() > s.too_large or unexplained):
            flags.append(CHANGE_TOO_LARGE)
        if len(locals_) > 1:
            main = locals_[0]
            diag = float(np.hypot(*self.frames.shape))
            min_area = max(4 * s.min_area * mask.size, s.scatter_area * main.area)
            if any(
                c.area >= min_area and _gap(c, main) > s.scatter_distance * diag
                for c in locals_[1:]
            ):
                flags.append(SCATTERED_CHANGES)
        return tuple(flags)

    def _global_change(self, g: GlobalChange) -> PredictedChange:
        f = self.frames
        return PredictedChange(
            category=words.category(f"global:{g.kind}", self.categories),
            description=words.global_sentence(g, f.size_a, f.size_b),
            entity_a="image",
            entity_b="image",
            boxes_a=(f.whole_a(),),
            boxes_b=(f.whole_b(),),
            confidence=round(min(1.0, max(0.0, g.confidence)), 3),
        )

    def _local_confidence(self, c: Local) -> float:
        # Strength 1 is just visible (confidence 0.5); small regions are less certain.
        h, w = self.frames.shape
        size = min(1.0, c.area / (8 * self.s.min_area * h * w))
        return round((1.0 - 0.5**c.strength) * size, 3)

    def _local_change(self, c: Local) -> PredictedChange:
        f = self.frames
        return PredictedChange(
            category=words.category(c.kind, self.categories),
            description=words.local_sentence(c, f.shape),
            entity_a="",
            entity_b="",
            boxes_a=tuple(f.box_a(b) for b in c.boxes_a),
            boxes_b=tuple(f.box_b(b) for b in c.boxes_b),
            confidence=self._local_confidence(c),
        )

    def _confidence(
        self, changes: list[PredictedChange], flags: tuple[str, ...], level: float
    ) -> float:
        if not changes:
            # Sure of "nothing" when nothing came near the threshold.
            peak = float(self.score.max()) if self.score.size else 0.0
            return round(1.0 - 0.9 * min(1.0, peak / level), 3)
        best = max(c.confidence or 0.0 for c in changes)
        penalty = 0.7 if {SCATTERED_CHANGES, CHANGE_TOO_LARGE} & set(flags) else 1.0
        return round(best * penalty, 3)


def _gap(c: Local, main: Local) -> float:
    """Smallest distance between any box of c and any box of main (0 when they overlap)."""
    return min(_box_gap(p, q) for p in c.boxes_a + c.boxes_b for q in main.boxes_a + main.boxes_b)


def _box_gap(p: Xyxy, q: Xyxy) -> float:
    dx = max(0, max(p[0], q[0]) - min(p[2], q[2]))
    dy = max(0, max(p[1], q[1]) - min(p[3], q[3]))
    return float(np.hypot(dx, dy))
