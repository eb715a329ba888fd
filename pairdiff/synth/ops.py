"""Array helpers shared by the edits: boxes, soft masks, blending, background fill, phrasing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import EditUnfit, Xyxy

ndi = lazy_module("scipy.ndimage")
sparse = lazy_module("scipy.sparse")
transform = lazy_module("skimage.transform")

T = TypeVar("T")

# Alpha below this is zeroed so feathering stays a few pixels wide instead of leaking a faint
# halo that would make every box larger than what a person can see.
_ALPHA_FLOOR = 0.04


def mask_box(mask: np.ndarray, y0: int = 0, x0: int = 0) -> Xyxy:
    """Exclusive bounding box of a mask whose top-left pixel sits at (y0, x0); EditUnfit when
    the mask is empty (an edit that changed nothing has no box)."""
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if not rows.size:
        raise EditUnfit("the edit changed no pixel of this photo")
    return (x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)


def diff_box(a: np.ndarray, b: np.ndarray, y0: int = 0, x0: int = 0) -> Xyxy:
    """Box of every pixel that differs between two equally shaped crops."""
    return mask_box(np.any(a != b, axis=-1), y0, x0)


def whole(img: np.ndarray) -> Xyxy:
    return (0, 0, img.shape[1], img.shape[0])


def feather(mask: np.ndarray, sigma: float) -> np.ndarray:
    """Soft alpha: 1 inside the mask, fading to exactly 0 about 2*sigma outside it."""
    alpha = np.clip(2.0 * ndi.gaussian_filter(mask.astype(np.float32), sigma), 0.0, 1.0)
    alpha[alpha < _ALPHA_FLOOR] = 0.0
    return alpha


def to_u8(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def _clip(img: np.ndarray, y: int, x: int, h: int, w: int) -> tuple[slice, slice, slice, slice]:
    """Slices of the image and of a (h, w) patch placed at (y, x), clipped to the image."""
    ys, xs = max(y, 0), max(x, 0)
    ye, xe = min(y + h, img.shape[0]), min(x + w, img.shape[1])
    return slice(ys, ye), slice(xs, xe), slice(ys - y, ye - y), slice(xs - x, xe - x)


def window(img: np.ndarray, y: int, x: int, h: int, w: int) -> np.ndarray:
    """The (h, w) window at (y, x), edge-replicated where it runs off the image."""
    iy, ix, _, _ = _clip(img, y, x, h, w)
    part = img[iy, ix]
    pads = ((iy.start - y, y + h - iy.stop), (ix.start - x, x + w - ix.stop), (0, 0))
    return np.pad(part, pads, mode="edge") if any(a or b for a, b in pads) else part.copy()


def composite(
    img: np.ndarray, top: np.ndarray, alpha: np.ndarray, y: int, x: int, *, add: bool = False
) -> Xyxy:
    """Blend `top` over `img` in place at (y, x); returns the box of the pixels that changed.

    With `add`, `top` is light added to the base (stars, lamps): pasting their pixels instead
    would carry the dark or glowing surroundings of the source spot along as a visible disc.
    """
    iy, ix, py, px = _clip(img, y, x, *alpha.shape)
    base = img[iy, ix].astype(np.float32)
    src = top[py, px].astype(np.float32)
    if add:
        src = base + src
    out = to_u8(base + alpha[py, px, None] * (src - base))
    box = diff_box(img[iy, ix], out, iy.start, ix.start)
    img[iy, ix] = out
    return box


def glow(pix: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The light of a bright object: what its pixels add to the background around it."""
    ring = ndi.binary_dilation(mask, iterations=3) & ~mask
    if not ring.any():
        ring = ~mask
    floor = np.median(pix[ring].astype(np.float32), axis=0)
    pix = pix.astype(np.float32)
    # Near clipping the true light is unknown and stronger than it looks; subtracting the
    # background there would tint a white-hot core with the complementary colour.
    keep = np.clip((pix.max(axis=-1, keepdims=True) - 200.0) / 50.0, 0.0, 1.0)
    return np.clip(pix - floor * (1.0 - keep), 0.0, None)


def _harmonic(img: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """Fill the hole with the smoothest surface that meets its rim (Laplace's equation).

    Unlike biharmonic inpainting it never overshoots the rim's values: the slight contact
    shadow around a coin would otherwise be extrapolated into a dark blot where it stood.
    """
    h, w = hole.shape
    n = int(hole.sum())
    index = np.full((h, w), -1)
    index[hole] = np.arange(n)
    ys, xs = np.nonzero(hole)
    rows, cols, vals = [np.arange(n)], [np.arange(n)], [np.zeros(n)]
    rhs = np.zeros((n, img.shape[-1]))
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        ny, nx = ys + dy, xs + dx
        ok = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        vals[0][ok] += 1.0  # image borders act as mirrors: no neighbour, no term
        inner = np.zeros(n, bool)
        inner[ok] = hole[ny[ok], nx[ok]]
        rows.append(np.flatnonzero(inner))
        cols.append(index[ny[inner], nx[inner]])
        vals.append(-np.ones(int(inner.sum())))
        known = ok & ~inner
        rhs[known] += img[ny[known], nx[known]]
    matrix = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))))
    out = img.astype(np.float64)
    out[hole] = np.asarray(sparse.linalg.spsolve(matrix.tocsc(), rhs)).reshape(n, -1)
    return out


def fill(img: np.ndarray, mask: np.ndarray, y0: int, x0: int, rng: np.random.Generator) -> Xyxy:
    """Replace the masked pixels (mask top-left at y0, x0) with surrounding background, in place.

    The smooth fill is solved on a downscaled crop, since its cost grows with the number of
    missing pixels; the lost grain is put back as noise measured on a ring around the hole, so
    the fill does not show up as a suspiciously smooth blob.
    """
    h, w = mask.shape
    margin = max(6, int(0.3 * max(h, w)))
    big = np.zeros((h + 2 * margin, w + 2 * margin), bool)
    big[margin : margin + h, margin : margin + w] = mask
    # Two pixels of slack swallow the object's anti-aliased rim, which would otherwise bleed
    # into the fill as a dark smear.
    hole = ndi.binary_dilation(big, iterations=2)
    iy, ix, py, px = _clip(img, y0 - margin, x0 - margin, *big.shape)
    hole = hole[py, px]
    crop = img[iy, ix].astype(np.float32)
    ch, cw = hole.shape
    f = max(1, round(max(ch, cw) / 48))
    small_shape = (max(ch // f, 4), max(cw // f, 4))
    small = transform.resize(crop, small_shape, anti_aliasing=True, preserve_range=True)
    small_hole = transform.resize(hole.astype(np.float32), small_shape) > 0.01
    smooth = transform.resize(_harmonic(small, small_hole), (ch, cw), order=1, preserve_range=True)
    # Measured a few pixels away from the hole, past the object's own glow and shadow edges.
    ring = ndi.binary_dilation(hole, iterations=10) & ~ndi.binary_dilation(hole, iterations=3)
    grain = (crop - ndi.gaussian_filter(crop, (1.0, 1.0, 0)))[ring]
    # Grain shared by the channels (luminance) and per channel (colour noise) are measured
    # apart, so a grey photo gets no colour speckle and a noisy colour one keeps its own.
    shared = grain.mean(axis=-1, keepdims=True)
    noise = rng.normal(0.0, _mad(shared), (ch, cw, 1)) + rng.normal(
        0.0, _mad(grain - shared), (ch, cw, 3)
    )
    return composite(img, smooth + noise, feather(hole, 1.0), iy.start, ix.start)


def _mad(x: np.ndarray) -> float:
    """Robust standard deviation: edges in the ring (straps, seams) would inflate a plain one."""
    return 1.4826 * float(np.median(np.abs(x))) if x.size else 0.0


def bright_busy(img: np.ndarray, threshold: float) -> np.ndarray:
    """Integral image of pixels brighter than `threshold`, for O(1) emptiness tests."""
    busy = img.max(axis=-1) > threshold
    return np.pad(busy.cumsum(0).cumsum(1), ((1, 0), (1, 0)))


def busy_count(integral: np.ndarray, y: int, x: int, h: int, w: int) -> int:
    return int(integral[y + h, x + w] - integral[y, x + w] - integral[y + h, x] + integral[y, x])


def find_empty(
    integral: np.ndarray,
    size: tuple[int, int],
    rng: np.random.Generator,
    avoid: list[Xyxy],
    area: Xyxy | None = None,
) -> tuple[int, int]:
    """Top-left (y, x) of a window of `size` that is as empty as possible and clear of `avoid`."""
    h, w = size
    ih, iw = integral.shape[0] - 1, integral.shape[1] - 1
    ax1, ay1, ax2, ay2 = area or (0, 0, iw, ih)
    ax1, ay1 = max(ax1, 0), max(ay1, 0)
    ymax, xmax = max(ay1, min(ay2, ih) - h), max(ax1, min(ax2, iw) - w)
    best, best_cost = (ay1, ax1), np.inf
    for _ in range(300):
        y = int(rng.integers(ay1, ymax + 1))
        x = int(rng.integers(ax1, xmax + 1))
        if any(overlaps((x, y, x + w, y + h), b, gap=8) for b in avoid):
            continue
        cost = busy_count(integral, y, x, h, w)
        if cost < best_cost:
            best, best_cost = (y, x), cost
        if cost == 0:
            break
    return best


def overlaps(a: Xyxy, b: Xyxy, gap: int = 0) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def where(box: Xyxy, size: tuple[int, int]) -> str:
    """Coarse position of a box in words: 'at the top left', 'in the centre', 'on the right'."""
    cx = (box[0] + box[2]) / 2 / size[0]
    cy = (box[1] + box[3]) / 2 / size[1]
    col = "left" if cx < 0.36 else "right" if cx > 0.64 else ""
    row = "top" if cy < 0.36 else "bottom" if cy > 0.64 else ""
    if row and col:
        return f"at the {row} {col}"
    if row:
        return f"at the {row}"
    if col:
        return f"on the {col}"
    return "in the centre"


def column(box: Xyxy, size: tuple[int, int]) -> str:
    """Which third of the width a box is in: 'on the left', 'in the centre', 'on the right'."""
    cx = (box[0] + box[2]) / 2 / size[0]
    return "on the left" if cx < 0.36 else "on the right" if cx > 0.64 else "in the centre"


def direction(dx: float, dy: float) -> str:
    """'up and to the left' style description of a displacement in image coordinates."""
    big = max(abs(dx), abs(dy))
    vertical = ("down" if dy > 0 else "up") if abs(dy) > 0.35 * big else ""
    horizontal = ("to the right" if dx > 0 else "to the left") if abs(dx) > 0.35 * big else ""
    return " and ".join(p for p in (vertical, horizontal) if p)


_HUES = (
    (0.04, "red"),
    (0.11, "orange"),
    (0.19, "yellow"),
    (0.45, "green"),
    (0.55, "teal"),
    (0.72, "blue"),
    (0.85, "purple"),
    (0.95, "pink"),
    (1.01, "red"),
)


def hue_name(hue: float, value: float = 1.0) -> str:
    """English name of an HSV hue in [0, 1); dark warm hues read as brown, dark cold as 'dark'."""
    name = next(n for limit, n in _HUES if hue < limit)
    if value < 0.35:
        return "brown" if name in ("orange", "yellow") else f"dark {name}"
    return name


def pick(rng: np.random.Generator, items: Sequence[T]) -> T:
    return items[int(rng.integers(len(items)))]


def pick_variant(rng: np.random.Generator, items: Sequence[T], variant: int) -> T:
    """The ``variant``-th item of a seeded order of ``items``: twins (one generator, variants
    0, 1, 2) draw the same and get different items."""
    order = rng.permutation(len(items))
    return items[int(order[variant % len(items)])]


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]
