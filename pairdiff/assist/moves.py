"""Moves: the place something left joined with the place a look-alike arrived, which pixeldiff
sees as two changes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pairdiff.assist.found import Found, Xyxy, median_lab, whole_pixels
from pairdiff.assist.refiner import Refiner
from pairdiff.pixeldiff import words

# Two regions are one move when their sizes differ by less than this factor per axis and
# what A showed at the first is what B shows at the second.
_MOVE_SIZE = 1.5
_MOVE_KEPT = 0.5  # the share of a thing's changed pixels that must arrive unchanged
_MOVE_DELTA_E = 12.0  # flat look-alikes (no texture to correlate): median colours this close
_LOCAL_KINDS = {"appear", "disappear", "other", "colour", "lighting", "move"}
# The tight boxes of a thing where it was and where it went agree to within this many pixels
# (a feathered paste, a fill's slack): the match is searched over that much shift.
_MOVE_SLACK = 4


def join_moves(
    found: list[Found],
    a: np.ndarray,
    b_on_a: np.ndarray,
    categories: Sequence[str],
    refine: Refiner | None = None,
) -> list[Found]:
    """Join the place something left with the place a look-alike arrived (pixeldiff sees a long
    move as two changes: a disappearance and an appearance, or two regions changed in place):
    one move, its box on A where it was and on B where it went. Best matches first; each
    region takes part in one move at most."""
    refine = refine or Refiner(a, b_on_a, a.shape[:2])
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
            Found(
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
    src: Xyxy, dst: Xyxy, a: np.ndarray, b_on_a: np.ndarray, refine: Refiner
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
    x1, y1, x2, y2 = whole_pixels(src)
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
    distance = float(np.linalg.norm(median_lab(a, src) - median_lab(b_on_a, dst)))
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
