"""Pairs with known answers from anyone's photos (`manage.py synthesize`).

B is A with one programmatic change in one of VDiff-Bench's ten categories, placed on regions
found in the photo itself (see `regions`). Every pair is checked before it is kept: the change
is visible, and no pixel changed outside the boxes of its known answer (`checks`). A pair that
fails is drawn again with the next attempt's generator; after ATTEMPTS failures the slot is
reported as skipped. The same photos, options and seed give byte-identical pairs.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from PIL import Image

from pairdiff.pixeldiff.decode import DecodeError, decode
from pairdiff.synth import _png
from pairdiff.synth.anylooks import (
    blur_or_sharpen,
    light,
    noise_or_pixelate,
    recolour,
    tint,
    write_text,
)
from pairdiff.synth.anyobjects import move_region, remove_or_add, resize_or_replace, turn_region
from pairdiff.synth.base import Edit, EditUnfit, SynthPair
from pairdiff.synth.checks import pair_problem
from pairdiff.synth.regions import Analysis, analyse

EditFn = Callable[[np.ndarray, Analysis, np.random.Generator, int], Edit | None]

# VDiff-Bench's ten categories (pairdiff.taxonomy.VDIFF), each with the edit that makes it.
EDITS: dict[str, EditFn] = {
    "position": move_region,
    "motion": turn_region,
    "regional_colour": recolour,
    "global_colour": tint,
    "appear_disappear": remove_or_add,
    "noise_resolution": noise_or_pixelate,
    "texture": blur_or_sharpen,
    "replacement_size": resize_or_replace,
    "ocr_text": write_text,
    "lighting": light,
}
CATEGORIES: tuple[str, ...] = tuple(EDITS)
ATTEMPTS = 6
# Larger photos are scaled down first: the edits' cost grows with the pixel count, and a phone
# photo's 12 MP add nothing to a benchmark pair but minutes of work.
MAX_SIDE = 1600
MIN_SIDE = 64


class PhotoUnusable(ValueError):
    """A photo that cannot be synthesized from; str() says why."""


@dataclass(frozen=True, eq=False)
class Photo:
    """One source photo: its name, the sha256 of its bytes and its pixels as displayed."""

    name: str
    sha256: str
    pixels: np.ndarray

    @cached_property
    def analysis(self) -> Analysis:
        return analyse(self.pixels)


def photo_load(data: bytes, name: str, *, max_pixels: int = 40_000_000) -> Photo:
    """Decode (EXIF orientation applied) and scale to at most MAX_SIDE; PhotoUnusable else."""
    try:
        pixels = decode(data, max_pixels, name)
    except DecodeError as exc:
        raise PhotoUnusable(str(exc)) from exc
    h, w = pixels.shape[:2]
    if min(h, w) < MIN_SIDE:
        raise PhotoUnusable(f"{name}: {w}x{h} is too small (at least {MIN_SIDE} px a side)")
    if max(h, w) > MAX_SIDE:
        f = MAX_SIDE / max(h, w)
        size = (max(1, round(w * f)), max(1, round(h * f)))
        pixels = np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.LANCZOS))
    pixels = np.ascontiguousarray(pixels)
    pixels.setflags(write=False)
    return Photo(name=name, sha256=hashlib.sha256(data).hexdigest(), pixels=pixels)


@dataclass(frozen=True)
class Slot:
    """Which pair to make: the photo's position in the input, its j-th pair, the category."""

    photo: int
    index: int
    category: str
    turn: int


def plan(n_photos: int, per_image: int, categories: Sequence[str]) -> list[Slot]:
    """Categories cycle over the whole run, so even three photos with four pairs each cover all
    ten; `turn` counts the earlier pairs of the same category (edits vary with it)."""
    unknown = [c for c in categories if c not in EDITS]
    if unknown or not categories:
        raise ValueError(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    slots = []
    for p in range(n_photos):
        for j in range(per_image):
            n = p * per_image + j
            slots.append(Slot(p, j, categories[n % len(categories)], n // len(categories)))
    return slots


@dataclass(frozen=True)
class Outcome:
    slot: Slot
    pair: SynthPair | None
    problems: list[str] = field(default_factory=list)  # why earlier attempts were discarded


def pair_key(photo: Photo, slot: Slot, seed: int) -> str:
    """A neutral, stable id: annotators see it, and a gold pair mixed into their queue must not
    announce itself as synthesized (leads see that in the pair's metadata)."""
    return hashlib.sha256(f"{photo.sha256}:{seed}:{slot.index}".encode()).hexdigest()[:20]


def synthesize(photo: Photo, slot: Slot, *, seed: int) -> Outcome:
    """The pair of `slot` from `photo`, or None with every attempt's reason."""
    problems = []
    for attempt in range(ATTEMPTS):
        rng = np.random.default_rng(
            random.Random(f"{seed}:{photo.sha256}:{slot.index}:{attempt}").getrandbits(64)
        )
        if not photo.analysis.regions and slot.category not in ("global_colour", "ocr_text"):
            return Outcome(slot, None, ["no region stands out in this photo"])
        try:
            edit = EDITS[slot.category](photo.pixels, photo.analysis, rng, slot.turn + attempt)
        except EditUnfit as exc:
            problems.append(f"attempt {attempt + 1}: {exc}")
            continue
        if edit is None:
            problems.append(f"attempt {attempt + 1}: no room for the edit")
            continue
        problem = pair_problem(edit.image_a, edit.image_b, edit.changes)
        if problem:
            problems.append(f"attempt {attempt + 1}: {problem}")
            continue
        return Outcome(slot, _pair(photo, slot, seed, attempt, edit), problems)
    return Outcome(slot, None, problems)


def _pair(photo: Photo, slot: Slot, seed: int, attempt: int, edit: Edit) -> SynthPair:
    a, b = edit.image_a, edit.image_b
    return SynthPair(
        key=pair_key(photo, slot, seed),
        image_a=_png(np.asarray(a)),
        image_b=_png(np.asarray(b)),
        size_a=(a.shape[1], a.shape[0]),
        size_b=(b.shape[1], b.shape[0]),
        instruction=edit.instruction,
        source={
            "photo": photo.name,
            "photo_sha256": photo.sha256,
            "edit": edit.changes[0].kind,
            "seed": seed,
            "index": slot.index,
            "attempt": attempt,
            **edit.params,
        },
        changes=edit.changes,
    )
