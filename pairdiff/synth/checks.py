"""What every synthesized pair must pass before it is kept: the change is visible, and nothing
changed outside the boxes of its known answer (otherwise the gold answer would be wrong)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import SynthChange, Xyxy

color = lazy_module("skimage.color")

# CIE76 ΔE of 2.3 is the textbook just-noticeable difference; 5 is what people see without
# looking for it. A pair must have enough such pixels to be answerable at all.
VISIBLE_DELTA_E = 5.0
MIN_VISIBLE_PIXELS = 64
MIN_VISIBLE_SHARE = 0.0008


def changed_mask(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pixels whose value differs in any channel (both uint8 RGB of one size)."""
    return np.any(a != b, axis=-1)


def boxes_mask(shape: tuple[int, ...], boxes: Iterable[Xyxy]) -> np.ndarray:
    inside = np.zeros(shape[:2], bool)
    for x1, y1, x2, y2 in boxes:
        inside[y1:y2, x1:x2] = True
    return inside


def changed_outside(a: np.ndarray, b: np.ndarray, changes: list[SynthChange]) -> int:
    """How many changed pixels lie outside every box of every change, on either side (A and B
    share one frame, so a box on either side covers the same pixels)."""
    boxes = [box for c in changes for box in (*c.boxes_a, *c.boxes_b)]
    return int((changed_mask(a, b) & ~boxes_mask(a.shape, boxes)).sum())


def visible_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels whose colour moved by at least VISIBLE_DELTA_E (CIE76), over the changed area."""
    changed = changed_mask(a, b)
    if not changed.any():
        return 0
    ys, xs = np.nonzero(changed)
    crop = np.s_[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    delta = color.deltaE_cie76(color.rgb2lab(a[crop]), color.rgb2lab(b[crop]))
    return int((delta >= VISIBLE_DELTA_E).sum())


def pair_problem(a: np.ndarray, b: np.ndarray, changes: list[SynthChange]) -> str:
    """Why the pair must be discarded, or "" when it is good."""
    if a.shape != b.shape:
        return "A and B differ in size"  # every edit here keeps the frame
    h, w = a.shape[:2]
    for c in changes:
        for x1, y1, x2, y2 in (*c.boxes_a, *c.boxes_b):
            if not (0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h):
                return f"box {[x1, y1, x2, y2]} is not inside the {w}x{h} image"
        if not c.boxes_a and not c.boxes_b:
            return "a change without a box on either side"
    outside = changed_outside(a, b, changes)
    if outside:
        return f"{outside} changed pixels lie outside the boxes"
    needed = max(MIN_VISIBLE_PIXELS, round(MIN_VISIBLE_SHARE * h * w))
    seen = visible_pixels(a, b)
    if seen < needed:
        return f"too faint: {seen} visibly changed pixels, {needed} needed"
    return ""
