"""Whole-image changes: lighting, a colour cast, noise, blur and a change of resolution."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.pixeldiff.maps import nonzero_box

ndi = lazy_module("scipy.ndimage")

TILES = 8  # the frame is judged on an 8×8 grid: "everywhere" means most tiles
# Energy (L² units) of new fine detail that counts as noise: grain of σ ≈ 2 grey levels, or
# the artefacts of a JPEG re-save at quality ~90.
_NOISE_ENERGY = 0.5


@dataclass(frozen=True)
class GlobalChange:
    """A change of the whole image; kind is one of lighting, global_colour, noise, blur,
    resolution; detail is a phrase for the description ("brighter", "warm")."""

    kind: str
    detail: str
    confidence: float


def spread(changed: np.ndarray) -> float:
    """Share of grid tiles in which at least a tenth of the pixels changed."""
    ys, xs = _grid(changed.shape)
    # Counted per tile in two reductions rather than averaged tile by tile; the shares are
    # float32 quotients of whole numbers, as the float32 tile means were, to the bit.
    rows = np.add.reduceat(changed, ys[:-1], axis=0, dtype=np.int64)
    counts = np.add.reduceat(rows, xs[:-1], axis=1).astype(np.float32)
    sizes = np.outer(np.diff(ys), np.diff(xs)).astype(np.float32)
    return float(np.mean(counts / sizes >= np.float32(0.1)))


def _grid(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Row and column edges of the grid tiles (fewer tiles for images smaller than the grid)."""
    h, w = shape[:2]
    ys = np.linspace(0, h, min(TILES, h) + 1).astype(int)
    xs = np.linspace(0, w, min(TILES, w) + 1).astype(int)
    return ys, xs


def _tile_means(
    values: np.ndarray, only: np.ndarray | None = None, elsewhere: np.ndarray | float = 0.0
) -> np.ndarray:
    """Mean of each grid tile; with `only`, of the tiles it marks, the rest taking `elsewhere`."""
    ys, xs = _grid(values.shape)
    tiles = [
        (slice(y0, y1), slice(x0, x1))
        for y0, y1 in zip(ys[:-1], ys[1:], strict=True)
        for x0, x1 in zip(xs[:-1], xs[1:], strict=True)
    ]
    if only is None:
        return np.array([values[t].mean() for t in tiles])
    out = np.broadcast_to(np.asarray(elsewhere, values.dtype), (len(tiles),)).copy()
    for i in np.flatnonzero(only):
        out[i] = values[tiles[i]].mean()
    return out


def fit_tone(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A with B's global tone curve applied: per channel, each level of A maps to the median
    level B has where A has it. A gamma, exposure or tint is such a curve; a local edit is not,
    and the median ignores the few pixels it touches."""
    out = np.empty_like(a)
    for c in range(3):
        hist = np.bincount(
            a[..., c].ravel().astype(np.int64) * 256 + b[..., c].ravel(), minlength=256 * 256
        ).reshape(256, 256)
        counts = hist.sum(axis=1)
        cum = np.cumsum(hist, axis=1)
        present = counts > 0
        medians = np.argmax(cum >= (counts[:, None] + 1) // 2, axis=1).astype(np.float32)
        levels = np.arange(256)
        # Levels A never uses are interpolated; the curve is kept monotone, as tone curves are.
        curve = np.interp(levels, levels[present], medians[present])
        curve = np.maximum.accumulate(curve)
        out[..., c] = np.rint(curve).astype(np.uint8)[a[..., c]]
    return out


def photometric(lab_a: np.ndarray, lab_b: np.ndarray, explained: float) -> GlobalChange:
    """Lighting or colour cast, whichever moved the image more: mean lightness shift against
    the mean shift of the chroma plane (a*, b*)."""
    d = (lab_b - lab_a).reshape(-1, 3).mean(axis=0)
    d_l, d_a, d_b = (float(v) for v in d)
    chroma = math.hypot(d_a, d_b)
    if abs(d_l) >= chroma:
        return GlobalChange("lighting", "brighter" if d_l > 0 else "darker", explained)
    return GlobalChange("global_colour", tint_name(d_a, d_b), explained)


def tint_name(d_a: float, d_b: float) -> str:
    """A colour word for a shift in the a*, b* plane (hue angle in CIELAB)."""
    angle = math.degrees(math.atan2(d_b, d_a)) % 360
    names: tuple[tuple[int, str], ...]
    names = ((30, "magenta"), (70, "warm orange"), (105, "yellow"), (190, "green"))
    names += ((290, "cool blue"), (335, "purple"), (360, "magenta"))
    return next(name for limit, name in names if angle < limit)


def detail_energy(lab: np.ndarray) -> np.ndarray:
    """Local energy of fine detail in lightness: what noise raises and blur removes."""
    fine = _fine(lab)
    return ndi.gaussian_filter(fine * fine, 2.0)


def _fine(lab: np.ndarray) -> np.ndarray:
    light = lab[..., 0]
    return light - ndi.gaussian_filter(light, 1.0)


# How far the σ 1 blur of `_fine` reaches (scipy truncates at 4σ).
_FINE_REACH = 4


def _fine_box(lab: np.ndarray, other: np.ndarray) -> tuple[slice, slice] | None:
    """The box outside which `_fine(lab)` is `_fine(other)`: where the lightness planes differ,
    grown by the blur's reach (None when they are the same)."""
    return nonzero_box(lab[..., 0] != other[..., 0], _FINE_REACH)


def _touched(shape: tuple[int, ...], box: tuple[slice, slice] | None) -> np.ndarray:
    """Which grid tiles (in `_tile_means` order) overlap the box."""
    ys, xs = _grid(shape)
    if box is None:
        return np.zeros((len(ys) - 1) * (len(xs) - 1), bool)
    rows = (ys[:-1] < box[0].stop) & (ys[1:] > box[0].start)
    cols = (xs[:-1] < box[1].stop) & (xs[1:] > box[1].start)
    return np.outer(rows, cols).ravel()


def _fine_like(
    lab: np.ndarray, other_fine: np.ndarray, box: tuple[slice, slice] | None
) -> np.ndarray:
    """`_fine(lab)`, reusing `other_fine` (`_fine(other)`) outside `box` (`_fine_box(lab,
    other)`): only the box (computed with as much again around it as the blur reaches) is
    filtered, which is exactly the whole-frame result (a local edit leaves the rest alone)."""
    light = lab[..., 0]
    if box is None:
        return other_fine.copy()
    h, w = light.shape
    rows, cols = box
    y1, x1 = max(0, rows.start - _FINE_REACH), max(0, cols.start - _FINE_REACH)
    y2, x2 = min(h, rows.stop + _FINE_REACH), min(w, cols.stop + _FINE_REACH)
    part = _fine(lab[y1:y2, x1:x2])
    out = other_fine.copy()
    out[box] = part[rows.start - y1 : rows.stop - y1, cols.start - x1 : cols.stop - x1]
    return out


def texture(lab_a: np.ndarray, lab_b: np.ndarray, share: float) -> GlobalChange | None:
    """Noise or blur over at least `share` of the tiles.

    Noise is fresh fine detail unrelated to what was there (grain, compression artefacts): the
    fine part of B - A has energy and does not mirror A's fine detail. Blur takes A's fine
    detail away: B keeps a fraction of it where A was textured.
    """
    if min(lab_a.shape[:2]) < 4 * TILES:
        return None  # tiles of a pixel or two say nothing about grain
    box = _fine_box(lab_b, lab_a)
    # Tiles clear of the box have B's fine detail equal to A's, to the bit: there B's energy is
    # A's and nothing is new, so only the tiles the box touches are measured again.
    touched = _touched(lab_a.shape, box)
    if not _may_reach(int(touched.sum()), touched.size, share):
        return None
    fine_a = _fine(lab_a)
    fine_b = _fine_like(lab_b, fine_a, box)
    fine_d = fine_b - fine_a
    ea = _tile_means(fine_a * fine_a)
    eb = _tile_means(fine_b * fine_b, touched, ea)
    ed = _tile_means(fine_d * fine_d, touched)
    mirror = _tile_means(fine_d * fine_a, touched) / np.sqrt(ed * ea + 1e-9)
    noisy = float(np.mean((ed >= _NOISE_ENERGY) & (mirror > -0.5)))
    if noisy >= share:
        return GlobalChange("noise", "noisier", noisy)
    textured = ea > 2.0
    if textured.sum() >= 0.25 * ea.size:
        blurrier = float(np.mean(eb[textured] < 0.6 * ea[textured]))
        if blurrier >= share:
            return GlobalChange("blur", "blurred", blurrier)
    return None


def _may_reach(touched: int, tiles: int, share: float) -> bool:
    """Whether noise or blur could be found in `share` of the tiles when only `touched` of
    them can have changed: noise needs that share of all the tiles to have new detail, blur
    that share of the textured ones (at least a quarter of all, else blur is not judged) to
    have lost it; untouched tiles have neither. Short of either by a whole tile, the answer
    is no whatever the pixels, and the fine detail of the frame need not be worked out."""
    least_textured = math.ceil(0.25 * tiles)
    return touched > share * tiles - 1 or touched > share * least_textured - 1
