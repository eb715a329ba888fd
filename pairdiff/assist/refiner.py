"""Tight boxes at full size: B brought onto A through the alignment, and each change's box
shrunk to the extent of its pixel difference above the pair's own noise floor."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image

from pairdiff.assist.colours import region_colour
from pairdiff.assist.found import Xyxy, boxes_overlap
from pairdiff.lazy import lazy_module

ndi = lazy_module("scipy.ndimage")
transform = lazy_module("skimage.transform")

# In a JPEG pair, the share of a change's own strong difference (95th percentile in its window)
# a pixel must reach to count as the change rather than its ringing.
_SPREAD = 0.2
# Kinds whose change sits in the same place on both sides: one extent serves A and B.
_IN_PLACE = {"colour", "lighting", "noise", "blur", "other"}


class Refiner:
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
        self.grey_a = grey_of(a)
        self.grey_b = grey_of(b_on_a)
        ha, wa = a.shape[:2]
        # pixeldiff's boxes are whole pixels of a smaller frame: out by up to one of them.
        self.pad = math.ceil(max(wa / work_shape[1], ha / work_shape[0])) + 3

    def boxes(
        self, kind: str, boxes_a: list[Xyxy], boxes_b: list[Xyxy]
    ) -> tuple[list[Xyxy], list[Xyxy]]:
        if kind in _IN_PLACE and boxes_a:
            tight = [self.extent(b) for b in boxes_a]
            return tight, list(tight)
        if any(boxes_overlap(p, q) for p in boxes_a for q in boxes_b):
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


def grey_of(rgb: np.ndarray) -> np.ndarray:
    rgb = rgb[..., :3].astype(np.float32)
    return rgb @ np.array([0.299, 0.587, 0.114], np.float32)


def onto_a(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
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
