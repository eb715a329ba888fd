"""A pair's difference components after alignment, with tight boxes on A and B and a draft.

`precompute` is what the worker runs once per pair: decode, align B to A, find the changes
with pixeldiff on A and B brought onto A, tighten each box to the pixel-difference extent at
full size (a small median filter and a threshold above the pair's own noise floor keep blur
edges and JPEG ringing out), map B's boxes back through the alignment, and write a draft.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image

from pairdiff.assist.align import Alignment, estimate_alignment, map_box
from pairdiff.assist.colours import region_colour
from pairdiff.assist.drafts import Evidence, draft_sentence, suggest_entity
from pairdiff.lazy import lazy_module
from pairdiff.pixeldiff import words
from pairdiff.pixeldiff.decode import DecodeError, common_frame, decode
from pairdiff.pixeldiff.maps import to_lab
from pairdiff.pixeldiff.predictor import analyse
from pairdiff.pixeldiff.settings import Settings

ndi = lazy_module("scipy.ndimage")
signal = lazy_module("scipy.signal")
transform = lazy_module("skimage.transform")

VERSION = 1
Xyxy = tuple[float, float, float, float]
# In a JPEG pair, the share of a change's own strong difference (95th percentile in its window)
# a pixel must reach to count as the change rather than its ringing.
_SPREAD = 0.2
# Kinds whose change sits in the same place on both sides: one extent serves A and B.
_IN_PLACE = {"colour", "lighting", "noise", "blur", "other"}


@dataclass(frozen=True)
class Component:
    """One change the pixels show. Boxes are in each side's own pixels (none: that side is
    absent); zone_a / zone_b are where a click on that side picks it (an absent side's zone is
    the other side's box brought over). whole: a whole-image change.

    Not an ``answers.ChangeAnswer``: the workspace's suggestion for a click, with click zones,
    a draft sentence and pixeldiff's kind, written as the JSON the page reads."""

    kind: str
    category: str
    boxes_a: list[list[int]]
    boxes_b: list[list[int]]
    zone_a: list[int]
    zone_b: list[int]
    draft: str
    entity: str
    confidence: float
    whole: bool = False

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "category": self.category,
            "boxes_a": self.boxes_a,
            "boxes_b": self.boxes_b,
            "zone_a": self.zone_a,
            "zone_b": self.zone_b,
            "draft": self.draft,
            "entity": self.entity,
            "confidence": self.confidence,
            "whole": self.whole,
        }


@dataclass(frozen=True)
class Assist:
    """Everything the workspace needs for one pair; error is set (and the rest empty) when the
    images could not be analysed."""

    alignment: Alignment | None
    components: list[Component] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict:
        return {
            "version": VERSION,
            "alignment": self.alignment.to_json() if self.alignment else None,
            "components": [c.to_json() for c in self.components],
        }


def precompute(
    image_a: bytes,
    image_b: bytes,
    *,
    categories: Sequence[str],
    vocabulary: Sequence[str] = (),
    instruction: str = "",
    settings: Settings | None = None,
) -> Assist:
    """The assist of one pair; never raises on bad images (the error says why)."""
    s = settings or Settings()
    try:
        a = decode(image_a, s.max_pixels, "A")
        b = decode(image_b, s.max_pixels, "B")
    except DecodeError as exc:
        return Assist(None, error=str(exc))
    alignment = estimate_alignment(a, b)
    lossy = any(bytes(data[:3]) == b"\xff\xd8\xff" for data in (image_a, image_b))  # JPEG
    found = _components(a, b, alignment, categories, vocabulary, instruction, s, lossy)
    return Assist(alignment, found)


def _components(
    a: np.ndarray,
    b: np.ndarray,
    alignment: Alignment,
    categories: Sequence[str],
    vocabulary: Sequence[str],
    instruction: str,
    s: Settings,
    lossy: bool = False,
) -> list[Component]:
    ha, wa = a.shape[:2]
    hb, wb = b.shape[:2]
    m = np.asarray(alignment.matrix, float)
    inverse = np.linalg.inv(m)
    b_on_a = _onto_a(a, b, m)
    if alignment.is_frame_scale:
        # pixeldiff's own frame handling (and its resolution finding) for a pure resize.
        frames = common_frame(a, b, s.max_side)
    else:
        frames = common_frame(a, b_on_a, s.max_side)
    result, findings = analyse(frames, categories, s)
    refine = _Refiner(a, b_on_a, frames.shape, lossy)
    found = []
    for change, finding in zip(result.changes, findings, strict=True):
        whole = finding.kind.startswith("global:")
        boxes_a = [_xyxy(b) for b in change.boxes_a]
        boxes_b = [_xyxy(b) for b in change.boxes_b]
        if alignment.is_frame_scale:
            # pixeldiff gave B's boxes in B's pixels; with B brought onto A they are in A's.
            boxes_b = [x for x in (map_box(inverse, b, (wa, ha)) for b in boxes_b) if x]
        if whole:
            boxes_a = boxes_b = [(0.0, 0.0, float(wa), float(ha))]
        else:
            boxes_a, boxes_b = refine.boxes(finding.kind, boxes_a, boxes_b)
        found.append(
            _Found(
                finding.kind,
                finding.detail,
                change.category,
                change.description,
                float(change.confidence or 0.0),
                boxes_a,
                boxes_b,
                whole,
            )
        )
    found = _moves(found, a, b_on_a, categories, refine)
    found = [_resized(f, refine) for f in found]
    found = [_rows_joined(f) for f in found]
    out = []
    for f in found:
        first_a = f.boxes_a[0] if f.boxes_a else None
        first_b = f.boxes_b[0] if f.boxes_b else None
        evidence = Evidence(
            kind=f.kind,
            detail=f.detail,
            box_a=first_a,
            box_b_on_a=first_b,
            colour_a=refine.colour(a, first_a or first_b),
            colour_b=refine.colour(b_on_a, first_b or first_a),
            size_a=(wa, ha),
            sentence=f.sentence,
            count=max(len(f.boxes_a), len(f.boxes_b)),
        )
        entity = suggest_entity(f.kind, vocabulary, instruction)
        if f.whole:
            on_b = [(0.0, 0.0, float(wb), float(hb))]
        else:
            on_b = [x for x in (map_box(m, box, (wb, hb)) for box in f.boxes_b) if x]
        zone_a = _extent(f.boxes_a or f.boxes_b)
        zone_b = _extent(on_b) or _extent(
            [x for x in (map_box(m, box, (wb, hb)) for box in f.boxes_a) if x]
        )
        if zone_a is None or zone_b is None:
            continue  # B shows nothing of where it happened (outside a crop)
        out.append(
            Component(
                kind=f.kind,
                category=f.category,
                boxes_a=[_pixels(box, (wa, ha)) for box in f.boxes_a],
                boxes_b=[_pixels(box, (wb, hb)) for box in on_b],
                zone_a=_pixels(zone_a, (wa, ha)),
                zone_b=_pixels(zone_b, (wb, hb)),
                draft=draft_sentence(evidence, entity),
                entity=entity,
                confidence=f.confidence,
                whole=f.whole,
            )
        )
    return out


@dataclass
class _Found:
    """One change on its way to a Component: boxes of both sides in A's frame."""

    kind: str
    detail: str
    category: str
    sentence: str
    confidence: float
    boxes_a: list[Xyxy]
    boxes_b: list[Xyxy]
    whole: bool


# Two regions are one move when their sizes differ by less than this factor per axis and
# what A showed at the first is what B shows at the second.
_MOVE_SIZE = 1.5
_MOVE_KEPT = 0.5  # the share of a thing's changed pixels that must arrive unchanged
_MOVE_DELTA_E = 12.0  # flat look-alikes (no texture to correlate): median colours this close
_LOCAL_KINDS = {"appear", "disappear", "other", "colour", "lighting", "move"}
# The tight boxes of a thing where it was and where it went agree to within this many pixels
# (a feathered paste, a fill's slack): the match is searched over that much shift.
_MOVE_SLACK = 4


def _moves(
    found: list[_Found],
    a: np.ndarray,
    b_on_a: np.ndarray,
    categories: Sequence[str],
    refine: _Refiner | None = None,
) -> list[_Found]:
    """Join the place something left with the place a look-alike arrived (pixeldiff sees a long
    move as two changes: a disappearance and an appearance, or two regions changed in place):
    one move, its box on A where it was and on B where it went. Best matches first; each
    region takes part in one move at most."""
    refine = refine or _Refiner(a, b_on_a, a.shape[:2])
    local = [f for f in found if not f.whole and f.kind in _LOCAL_KINDS and f.kind != "move"]
    sources = [f for f in local if len(f.boxes_a) == 1]
    targets = [f for f in local if len(f.boxes_b) == 1]
    options = []
    for g in sources:
        for c in targets:
            if c is g:
                continue
            score = _carried(g.boxes_a[0], c.boxes_b[0], a, b_on_a, refine)
            if score is not None:
                options.append((-score, id(g), id(c), g, c))
    used: set[int] = set()
    joined = []
    for _, gi, ci, g, c in sorted(options, key=lambda o: o[0]):
        if gi in used or ci in used:
            continue
        used |= {gi, ci}
        category = words.category("move", categories) or g.category
        joined.append(
            _Found(
                "move",
                "",
                category,
                "",
                min(g.confidence, c.confidence),
                g.boxes_a,
                c.boxes_b,
                False,
            )
        )
    return [f for f in found if id(f) not in used] + joined


def _carried(
    src: Xyxy, dst: Xyxy, a: np.ndarray, b_on_a: np.ndarray, refine: _Refiner
) -> float | None:
    """How surely what A showed at src is what B shows at dst (B in A's frame): a score, or None
    when their sizes differ too much, or the content did not go there (or stayed at src).

    Only the pixels that changed at src are compared (a thing is rarely its box: around it the
    box holds the background of each place, and a refill's slack), over a few pixels' shift
    between the two tight boxes: the share of them B shows at dst as A showed them, to within
    the pair's noise. A copy keeps most of them; a look-alike refill or an unrelated change
    keeps few (per pixel, texture does not agree by chance)."""
    ws, hs = src[2] - src[0], src[3] - src[1]
    wd, hd = dst[2] - dst[0], dst[3] - dst[1]
    if min(ws, hs, wd, hd) < 2 or max(ws / wd, wd / ws, hs / hd, hd / hs) > _MOVE_SIZE:
        return None
    x1, y1, x2, y2 = _whole(src)
    thing = refine.changed[y1:y2, x1:x2]
    left = refine.grey_a[y1:y2, x1:x2]
    if thing.sum() >= 16 and left[thing].std() >= 4.0:
        h, w = thing.shape
        cx, cy = round((dst[0] + dst[2] - w) / 2), round((dst[1] + dst[3] - h) / 2)
        there = max(
            (
                v
                for dy in range(-_MOVE_SLACK, _MOVE_SLACK + 1)
                for dx in range(-_MOVE_SLACK, _MOVE_SLACK + 1)
                if (v := _kept(left, refine.grey_b, thing, cx + dx, cy + dy, refine.level))
                is not None
            ),
            default=0.0,
        )
        return there if there >= _MOVE_KEPT else None
    # Flat content: nothing to tell a copy by, so the colours decide.
    distance = float(np.linalg.norm(_median_lab(a, src) - _median_lab(b_on_a, dst)))
    return 1.0 - distance / _MOVE_DELTA_E if distance < _MOVE_DELTA_E else None


def _kept(
    patch: np.ndarray, grey: np.ndarray, mask: np.ndarray, x: int, y: int, level: float
) -> float | None:
    """The share of mask's pixels of patch that grey shows to within level with patch's
    top-left at (x, y); None off the frame."""
    h, w = patch.shape
    if x < 0 or y < 0 or y + h > grey.shape[0] or x + w > grey.shape[1]:
        return None
    return float((np.abs(patch - grey[y : y + h, x : x + w])[mask] <= level).mean())


def _masked_ncc(p: np.ndarray, q: np.ndarray, mask: np.ndarray) -> float | None:
    """Normalised correlation of p and q over mask's pixels; None when too few or too flat."""
    if int(mask.sum()) < 16:
        return None
    pv, qv = p[mask], q[mask]
    pv, qv = pv - pv.mean(), qv - qv.mean()
    if min(pv.std(), qv.std()) < 4.0:  # too flat to say
        return None
    return float((pv * qv).sum() / np.sqrt((pv * pv).sum() * (qv * qv).sum()))


# A change boxed in place on both sides may be a thing that grew or shrank where it stood: its
# extent is then the larger of the two, and the smaller is found inside it as the other side's
# content at a smaller scale, when that matches clearly better than the two sides in place.
_RESIZE_SCALES = tuple(np.arange(0.45, 0.9, 0.025))
_RESIZE_CORRELATION = 0.75
_RESIZE_MARGIN = 0.15
_RESIZE_KINDS = {"other", "colour", "lighting"}
_RESIZE_WORK = 48  # the coarse search runs with the extent's longer side this many pixels


def _resized(f: _Found, refine: _Refiner) -> _Found:
    """f with its smaller side's box where the thing stands at its new size, when f is a thing
    that grew or shrank in place; f itself otherwise."""
    if f.whole or f.kind not in _RESIZE_KINDS or len(f.boxes_a) != 1 or f.boxes_a != f.boxes_b:
        return f
    x1, y1, x2, y2 = _whole(f.boxes_a[0])
    if min(x2 - x1, y2 - y1) < 12:
        return f
    mask = refine.changed[y1:y2, x1:x2]
    grey_a = refine.grey_a[y1:y2, x1:x2]
    grey_b = refine.grey_b[y1:y2, x1:x2]
    stayed = _masked_ncc(grey_a, grey_b, mask)
    if stayed is None:
        return f
    best = None
    for big, small, side in ((grey_a, grey_b, "b"), (grey_b, grey_a, "a")):
        found = _scaled_match(big, mask, small)
        if found and (best is None or found[0] > best[0]):
            best = (*found, side)
    if best is None or best[0] < _RESIZE_CORRELATION or best[0] < stayed + _RESIZE_MARGIN:
        return f
    _, (bx1, by1, bx2, by2), side = best
    box = (float(x1 + bx1), float(y1 + by1), float(x1 + bx2), float(y1 + by2))
    if side == "b":
        return replace(f, kind="resize", boxes_b=[box])
    return replace(f, kind="resize", boxes_a=[box])


def _scaled_match(
    big: np.ndarray, mask: np.ndarray, small: np.ndarray
) -> tuple[float, tuple[int, int, int, int]] | None:
    """Where `big` (its changed pixels `mask`), made smaller, best matches inside `small` (same
    size): the correlation and the box, in the window's pixels. Searched coarse, then refined
    at full size around the best coarse place and scale."""
    h, w = big.shape
    f = min(1.0, _RESIZE_WORK / max(h, w))
    coarse = _resample(big, f), _resample(mask.astype(np.float32), f) > 0.5, _resample(small, f)
    best = None
    for s in _RESIZE_SCALES:
        got = _best_place(*coarse, s, None)
        if got and (best is None or got[0] > best[0]):
            best = (*got, s)
    if best is None:
        return None
    _, (cx, cy), s0 = best
    step = 1.0 / f
    fine = None
    for s in (s0 - 0.02, s0 - 0.01, s0, s0 + 0.01, s0 + 0.02):
        near = (round(cx * step), round(cy * step), math.ceil(step) + 1)
        got = _best_place(big, mask, small, s, near)
        if got and (fine is None or got[0] > fine[0]):
            fine = (*got, s)
    if fine is None:
        return None
    score, (x, y), s = fine
    tw, th = max(1, round(w * s)), max(1, round(h * s))
    return score, (x, y, x + tw, y + th)


def _best_place(
    big: np.ndarray,
    mask: np.ndarray,
    small: np.ndarray,
    s: float,
    near: tuple[int, int, int] | None,
) -> tuple[float, tuple[int, int]] | None:
    """The best top-left of big scaled by s inside small (within `near`'s radius of its point
    when given) by _masked_ncc, with its score."""
    h, w = big.shape
    tw, th = max(1, round(w * s)), max(1, round(h * s))
    if tw < 4 or th < 4:
        return None
    patch = _resample(big, tw / w, (tw, th))
    pmask = _resample(mask.astype(np.float32), tw / w, (tw, th)) > 0.5
    x0, y0, x1, y1 = 0, 0, w - tw, h - th  # the top-left corners tried
    if near is not None:
        nx, ny, r = near
        x0, y0, x1, y1 = max(0, nx - r), max(0, ny - r), min(x1, nx + r), min(y1, ny + r)
    if x1 < x0 or y1 < y0:
        return None
    scores = _ncc_map(patch, pmask, small[y0 : y1 + th, x0 : x1 + tw])
    if scores is None:
        return None
    y, x = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return float(scores[y, x]), (x0 + int(x), y0 + int(y))


def _ncc_map(patch: np.ndarray, mask: np.ndarray, image: np.ndarray) -> np.ndarray | None:
    """_masked_ncc of patch against image at every top-left where it fits, at once (sums over
    the mask by correlation); -1 where either side is too flat to say; None for no place."""
    n = int(mask.sum())
    if n < 16:
        return None
    m = mask.astype(np.float64)
    pv = patch.astype(np.float64)[mask]
    p0 = np.where(mask, patch - pv.mean(), 0.0)
    if pv.std() < 4.0:
        return None
    q = image.astype(np.float64)
    sum_q = signal.correlate(q, m, mode="valid")
    sum_qq = signal.correlate(q * q, m, mode="valid")
    sum_pq = signal.correlate(q, p0, mode="valid")
    var_q = np.maximum(sum_qq - sum_q * sum_q / n, 0.0)
    norm = np.sqrt(float((p0 * p0).sum()) * var_q)
    flat = var_q < 16.0 * n  # a standard deviation under 4 grey levels
    return np.where(flat | (norm < 1e-6), -1.0, sum_pq / np.where(norm < 1e-6, 1.0, norm))


def _resample(grey: np.ndarray, f: float, size: tuple[int, int] | None = None) -> np.ndarray:
    """grey scaled by f (or to size, width × height), as float32."""
    h, w = grey.shape
    size = size or (max(1, round(w * f)), max(1, round(h * f)))
    image = Image.fromarray(np.asarray(grey, np.float32), mode="F")
    return np.asarray(image.resize(size, Image.Resampling.BILINEAR), np.float32)


# Pieces of one change that run together along a row (the words of a written line, the parts
# of a thing pixeldiff split): their vertical spans overlap by at least this share of the
# shorter one and the gap between them is at most this share of its height.
_ROW_OVERLAP = 0.6
_ROW_GAP = 0.8


def _rows_joined(f: _Found) -> _Found:
    """f with the boxes of each side that run together along a row joined into one."""
    if f.whole:
        return f
    a, b = _join_rows(f.boxes_a), _join_rows(f.boxes_b)
    return f if (a, b) == (f.boxes_a, f.boxes_b) else replace(f, boxes_a=a, boxes_b=b)


def _join_rows(boxes: list[Xyxy]) -> list[Xyxy]:
    out = sorted(boxes)
    joined = True
    while joined and len(out) > 1:
        joined = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                if _same_row(out[i], out[j]):
                    merged = _extent([out[i], out[j]])
                    assert merged is not None
                    out = sorted([*out[:i], *out[i + 1 : j], *out[j + 1 :], merged])
                    joined = True
                    break
            if joined:
                break
    return out


def _same_row(p: Xyxy, q: Xyxy) -> bool:
    shorter = min(p[3] - p[1], q[3] - q[1])
    shared = min(p[3], q[3]) - max(p[1], q[1])
    gap = max(p[0], q[0]) - min(p[2], q[2])
    return shorter > 0 and shared >= _ROW_OVERLAP * shorter and gap <= _ROW_GAP * shorter


def _whole(box: Xyxy) -> tuple[int, int, int, int]:
    return int(box[0]), int(box[1]), math.ceil(box[2]), math.ceil(box[3])


def _crop(rgb: np.ndarray, box: Xyxy) -> np.ndarray:
    x1, y1, x2, y2 = int(box[0]), int(box[1]), math.ceil(box[2]), math.ceil(box[3])
    return np.ascontiguousarray(rgb[y1:y2, x1:x2, :3])


def _median_lab(rgb: np.ndarray, box: Xyxy) -> np.ndarray:
    return np.median(to_lab(_crop(rgb, box)).reshape(-1, 3), axis=0)


def _xyxy(box) -> Xyxy:
    return (float(box.x1), float(box.y1), float(box.x2), float(box.y2))


def _extent(boxes: Sequence[Xyxy]) -> Xyxy | None:
    """The box around all of them, None for none."""
    if not boxes:
        return None
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _pixels(box: Xyxy, size: tuple[int, int]) -> list[int]:
    """Whole pixels, outward, inside the frame."""
    w, h = size
    x1 = min(max(0, math.floor(box[0] + 1e-6)), w - 1)
    y1 = min(max(0, math.floor(box[1] + 1e-6)), h - 1)
    x2 = max(min(w, math.ceil(box[2] - 1e-6)), x1 + 1)
    y2 = max(min(h, math.ceil(box[3] - 1e-6)), y1 + 1)
    return [x1, y1, x2, y2]


def _onto_a(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
    """B resampled into A's frame through the alignment; where B shows nothing, A's pixels
    (no difference there, rather than a border of false changes)."""
    ha, wa = a.shape[:2]
    if np.allclose(m, np.eye(3)) and b.shape == a.shape:
        return b
    if np.allclose(m[:2, 1], [0, m[1, 1]]) and np.allclose(m[:2, 2], 0) and m[0, 1] == 0:
        # A pure frame scale: Pillow's resize, as pixeldiff's common frame does.
        return np.asarray(Image.fromarray(b).resize((wa, ha), Image.Resampling.LANCZOS), np.uint8)
    tform = transform.ProjectiveTransform(matrix=m)
    warped = transform.warp(
        b.astype(np.float32),
        tform,
        output_shape=(ha, wa),
        order=1,
        cval=np.nan,
        preserve_range=True,
    )
    invalid = np.isnan(warped).any(axis=-1)
    out = np.clip(np.nan_to_num(warped), 0, 255).round().astype(np.uint8)
    out[invalid] = a[invalid]
    return out


class _Refiner:
    """Tightens boxes in A's frame to where A and B-on-A differ beyond the pair's noise."""

    def __init__(
        self, a: np.ndarray, b_on_a: np.ndarray, work_shape: tuple[int, int], lossy: bool = False
    ) -> None:
        self.lossy = lossy
        self.diff = np.abs(a.astype(np.int16) - b_on_a.astype(np.int16)).max(axis=-1)
        # Most of a pair is unchanged: the median difference is its noise floor (0 for a
        # lossless edit, a few levels for JPEG).
        noise = float(np.median(self.diff))
        self.level = max(3.0, 3.0 * noise + 2.0)
        over = self.diff > self.level
        # What changed: over the level with two neighbours over it too (lone pixels are noise).
        self.changed = over & (ndi.convolve(over.astype(np.uint8), np.ones((3, 3), np.uint8)) >= 3)
        self.grey_a = _grey(a)
        self.grey_b = _grey(b_on_a)
        ha, wa = a.shape[:2]
        # pixeldiff's boxes are whole pixels of a smaller frame: out by up to one of them.
        self.pad = math.ceil(max(wa / work_shape[1], ha / work_shape[0])) + 3

    def boxes(
        self, kind: str, boxes_a: list[Xyxy], boxes_b: list[Xyxy]
    ) -> tuple[list[Xyxy], list[Xyxy]]:
        if kind in _IN_PLACE and boxes_a:
            tight = [self.extent(b) for b in boxes_a]
            return tight, list(tight)
        if any(_overlap(p, q) for p in boxes_a for q in boxes_b):
            return boxes_a, boxes_b  # a resize or a short move: the two extents run together
        return [self.extent(b) for b in boxes_a], [self.extent(b) for b in boxes_b]

    def extent(self, box: Xyxy) -> Xyxy:
        h, w = self.diff.shape
        x1, y1 = max(0, int(box[0]) - self.pad), max(0, int(box[1]) - self.pad)
        x2, y2 = min(w, math.ceil(box[2]) + self.pad), min(h, math.ceil(box[3]) + self.pad)
        window = self.diff[y1:y2, x1:x2]
        # JPEG ringing spreads a change through the 8×8 blocks it touches with a fraction of its
        # strength: there the level rises with the change's own difference. (Lossless pairs
        # keep every differing pixel: a soft edge is part of the thing.)
        strong = float(np.percentile(window, 95)) if self.lossy else 0.0
        over = window > max(self.level, _SPREAD * strong)
        # A pixel with two neighbours over the level too is part of a region; lone ones are
        # noise (JPEG ringing, dithering) and do not widen the box.
        window = over & (ndi.convolve(over.astype(np.uint8), np.ones((3, 3), np.uint8)) >= 3)
        if window.sum() < 0.05 * (box[2] - box[0]) * (box[3] - box[1]):
            return box  # too little clear difference to trust over pixeldiff's region
        rows = np.flatnonzero(window.any(axis=1))
        cols = np.flatnonzero(window.any(axis=0))
        return (
            float(x1 + cols[0]),
            float(y1 + rows[0]),
            float(x1 + cols[-1] + 1),
            float(y1 + rows[-1] + 1),
        )

    def colour(self, rgb: np.ndarray, box: Xyxy | None) -> str:
        if box is None:
            return ""
        x1, y1, x2, y2 = (int(box[0]), int(box[1]), math.ceil(box[2]), math.ceil(box[3]))
        crop = rgb[y1:y2, x1:x2]
        if not crop.size:
            return ""
        return region_colour(crop, self.diff[y1:y2, x1:x2] > self.level)


def _grey(rgb: np.ndarray) -> np.ndarray:
    rgb = rgb[..., :3].astype(np.float32)
    return rgb @ np.array([0.299, 0.587, 0.114], np.float32)


def _overlap(p: Xyxy, q: Xyxy) -> bool:
    return min(p[2], q[2]) > max(p[0], q[0]) and min(p[3], q[3]) > max(p[1], q[1])
