"""Regions of an arbitrary photo worth editing, found from the image itself (no hand-made masks).

The photo is cut into SLIC superpixels on a small copy; each superpixel gets a saliency score
(how far its colour is from the rest of the photo, minus a penalty for touching the border,
since what touches the frame is usually background). Edits pick among the most salient
superpixels of a reasonable size, so a moved or recoloured region is something a person can
point at. Flat windows (for drawn text) are found from the local variance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import Xyxy
from pairdiff.synth.ops import hue_name, mask_box, where

ndi = lazy_module("scipy.ndimage")
color = lazy_module("skimage.color")
segmentation = lazy_module("skimage.segmentation")
transform = lazy_module("skimage.transform")

# Superpixels are computed at this side at most: SLIC's cost grows with the pixel count and
# regions a person can point at are never smaller than a few of these cells.
_WORK_SIDE = 256
_MIN_AREA, _MAX_AREA = 0.006, 0.12  # of the image: too small to see, too large to be "a region"


@dataclass(frozen=True, eq=False)
class Region:
    """A connected region: a boolean mask whose top-left pixel sits at (y0, x0)."""

    y0: int
    x0: int
    mask: np.ndarray
    colour: str  # "red", "dark blue", "bright", "dark"…
    saliency: float
    texture: float = 0.0  # spread of lightness inside: what blurring or turning can show

    @cached_property
    def box(self) -> Xyxy:
        return mask_box(self.mask, self.y0, self.x0)

    def phrase(self, size: tuple[int, int]) -> str:
        """'the red region at the top left' — what a description calls it."""
        return f"the {self.colour} region {where(self.box, size)}"


@dataclass(frozen=True)
class Analysis:
    """What the edits need to know about one photo, computed once per photo."""

    regions: tuple[Region, ...]  # most salient first
    grey: bool


def analyse(img: np.ndarray) -> Analysis:
    """Candidate regions of an RGB uint8 photo, most salient first."""
    h, w = img.shape[:2]
    grey = bool(np.abs(img.astype(np.int16) - img[..., :1]).max() <= 2)
    f = max(1.0, max(h, w) / _WORK_SIDE)
    small = transform.resize(img, (max(8, round(h / f)), max(8, round(w / f))), anti_aliasing=True)
    labels = segmentation.slic(small, n_segments=80, compactness=12, start_label=1, channel_axis=-1)
    lab = color.rgb2lab(small)
    mean_lab = lab.reshape(-1, 3).mean(axis=0)
    sh, sw = labels.shape
    out = []
    for i, sl in enumerate(ndi.find_objects(labels), start=1):
        if sl is None:
            continue
        part = labels[sl] == i
        area = part.sum() / (sh * sw)
        if not _MIN_AREA <= area <= _MAX_AREA:
            continue
        # Compact blobs only: a thin sliver along an edge reads as noise, not a region.
        if part.sum() < 0.4 * part.size:
            continue
        touches = sl[0].start == 0 or sl[1].start == 0 or sl[0].stop == sh or sl[1].stop == sw
        inside = lab[sl][part]
        contrast = float(np.linalg.norm(inside.mean(axis=0) - mean_lab))
        texture = float(inside[:, 0].std())
        # What touches the frame is usually background: it comes after every inner region.
        score = contrast + 0.3 * texture - (1000.0 if touches else 0.0)
        mask = _upscale(part, sl, f, (h, w))
        if mask is None:
            continue
        mask_full, y0, x0 = mask
        out.append(Region(y0, x0, mask_full, _colour_word(inside, grey), score, texture))
    out.sort(key=lambda r: -r.saliency)
    return Analysis(regions=tuple(out), grey=grey)


def _upscale(
    part: np.ndarray, sl: tuple[slice, slice], f: float, shape: tuple[int, int]
) -> tuple[np.ndarray, int, int] | None:
    """The superpixel's mask in full-resolution pixels, smoothed, with its top-left."""
    y0, x0 = int(sl[0].start * f), int(sl[1].start * f)
    y1 = min(shape[0], int(np.ceil(sl[0].stop * f)))
    x1 = min(shape[1], int(np.ceil(sl[1].stop * f)))
    big = transform.resize(part.astype(np.float32), (y1 - y0, x1 - x0), order=1) > 0.5
    big = ndi.binary_fill_holes(ndi.binary_opening(big, iterations=1))
    if big.sum() < 64:
        return None
    rows, cols = np.flatnonzero(big.any(axis=1)), np.flatnonzero(big.any(axis=0))
    big = big[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    return big, y0 + int(rows[0]), x0 + int(cols[0])


def _colour_word(inside_lab: np.ndarray, grey: bool) -> str:
    lightness = float(inside_lab[:, 0].mean())
    chroma = float(np.hypot(inside_lab[:, 1].mean(), inside_lab[:, 2].mean()))
    if grey or chroma < 12:
        return "bright" if lightness > 65 else "dark" if lightness < 35 else "grey"
    rgb = color.lab2rgb(inside_lab.mean(axis=0)[None, None, :])
    hsv = color.rgb2hsv(rgb)[0, 0]
    return hue_name(float(hsv[0]), float(hsv[2]))


def flat_window(
    img: np.ndarray, size: tuple[int, int], rng: np.random.Generator, tries: int = 200
) -> tuple[int, int] | None:
    """Top-left (y, x) of a window of `size` (h, w) with little texture, where drawn text reads
    clearly; None when the photo is too small for it."""
    h, w = size
    ih, iw = img.shape[:2]
    if h + 8 > ih or w + 8 > iw:
        return None
    grey = img.astype(np.float32).mean(axis=-1)
    sq = np.pad((grey**2).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    s = np.pad(grey.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    best, best_cost = None, np.inf
    for _ in range(tries):
        y = int(rng.integers(4, ih - h - 3))
        x = int(rng.integers(4, iw - w - 3))
        n = h * w
        total = s[y + h, x + w] - s[y, x + w] - s[y + h, x] + s[y, x]
        total2 = sq[y + h, x + w] - sq[y, x + w] - sq[y + h, x] + sq[y, x]
        var = total2 / n - (total / n) ** 2
        if var < best_cost:
            best, best_cost = (y, x), var
    return best
