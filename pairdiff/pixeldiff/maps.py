"""Perceptual difference maps, the adaptive threshold, clean-up and connected regions."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.pixeldiff.decode import Xyxy
from pairdiff.pixeldiff.morphology import dilate, erode
from pairdiff.pixeldiff.settings import Settings

ndi = lazy_module("scipy.ndimage")

# sRGB decoding as a 256-entry table: converting uint8 through it is far cheaper than the
# power function per pixel, and skimage's rgb2lab costs several times more at 512².
_LINEAR = np.where(
    (v := np.arange(256) / 255.0) <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4
).astype(np.float32)
# sRGB (D65) to XYZ, rows pre-divided by the D65 white point.
_TO_XYZ = np.array(
    [
        [0.412453, 0.357580, 0.180423],
        [0.212671, 0.715160, 0.072169],
        [0.019334, 0.119193, 0.950227],
    ],
    np.float32,
) / np.array([[0.950456], [1.0], [1.088754]], np.float32)


# f(X), f(Y), f(Z) → L*, a*, b* as one small matrix product (L* still needs its -16).
_FROM_F = np.array([[0.0, 116.0, 0.0], [500.0, -500.0, 0.0], [0.0, 200.0, -200.0]], np.float32)


def to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a uint8 RGB image, float32 (h, w, 3); L in [0, 100]."""
    xyz = np.take(_LINEAR, rgb) @ _TO_XYZ.T  # take: the same gather, a quarter faster
    # The cube root everywhere, then the linear toe copied in where it applies. float32 powf
    # is twice as fast as glibc's cbrtf and, above the toe, within one ulp of the true root
    # (cbrtf: two). The toe is two cheap operations over the frame; gathering and scattering
    # the dark pixels by a boolean index cost several times more on a dark photo (the same
    # float32 values either way).
    f = np.power(xyz, np.float32(1 / 3))
    toe = 7.787 * xyz
    toe += 16.0 / 116.0
    np.copyto(f, toe, where=xyz <= 0.008856)
    lab = f @ _FROM_F.T
    lab[..., 0] -= 16.0
    return lab


# How far one differing pixel reaches into the score: the chroma blur (4 px), the 3×3 range
# (1) and the ΔE smoothing (4); SSIM's window reaches 5.
REACH = 9


Planes = dict[str, np.ndarray]


@dataclass(frozen=True)
class Maps:
    """Both working images in CIELAB and their score map; `box` is where it was scored and
    `planes` holds what scoring computed from B alone there (`score_map`'s `b_planes`)."""

    lab_a: np.ndarray
    lab_b: np.ndarray
    score: np.ndarray
    box: tuple[slice, slice] | None = None
    planes: Planes = field(default_factory=dict, repr=False, compare=False)


def maps(rgb_a: np.ndarray, rgb_b: np.ndarray, s: Settings, same_b: Maps | None = None) -> Maps:
    """CIELAB of both sides and the score map, computed on B and scored only inside the box
    where the pixels of A and B differ (grown by twice the filters' reach): outside it the two
    sides are the same pixels, so B's Lab is A's and the score is exactly 0 (every filter of
    equal inputs gives equal outputs). A pair edited in place and saved losslessly skips most
    of the frame; a re-encoded or globally changed pair differs everywhere and costs the same.

    `same_b` is the maps of another A against this very B (the tone-fitted A after A): B's
    Lab is taken from it (always B's whole Lab, see above), and where the score is worked out
    in the same box, so are the planes scoring filters out of B alone.
    """
    lab_a = to_lab(rgb_a)
    box = differing_box(rgb_a, rgb_b, 2 * REACH)
    score: np.ndarray = np.zeros(rgb_a.shape[:2], np.float32)
    if same_b is not None:
        lab_b = same_b.lab_b
    else:
        lab_b = lab_a.copy()
        if box is not None:
            lab_b[box] = to_lab(rgb_b[box])
    planes: Planes = {}
    if same_b is not None and box is not None and _same_box(same_b.box, box):
        planes = same_b.planes
    if box is not None:
        score[box] = score_map(lab_a[box], lab_b[box], s, frame=score.shape, b_planes=planes)
    return Maps(lab_a, lab_b, score, box, planes)


def _same_box(p: tuple[slice, slice] | None, q: tuple[slice, slice]) -> bool:
    return p is not None and all(
        (a.start, a.stop) == (b.start, b.stop) for a, b in zip(p, q, strict=True)
    )


def differing_box(a: np.ndarray, b: np.ndarray, margin: int) -> tuple[slice, slice] | None:
    """Rows and columns of the smallest box holding every pixel where A and B differ, grown by
    margin and clipped to the frame; None when the images are identical."""
    h, w = a.shape[:2]
    # Rows of bytes (r, g, b, r, g, b, ...): reducing along a length-3 axis is slow.
    box = nonzero_box(a.reshape(h, -1) != b.reshape(h, -1), 0)
    if box is None:
        return None
    rows, cols = box
    channels = a.size // (h * w)
    # Columns of bytes back to columns of pixels.
    first, last = cols.start // channels, (cols.stop - 1) // channels + 1
    return (
        slice(max(0, rows.start - margin), min(h, rows.stop + margin)),
        slice(max(0, first - margin), min(w, last + margin)),
    )


def score_map(
    lab_a: np.ndarray,
    lab_b: np.ndarray,
    s: Settings,
    frame: tuple[int, int] | None = None,
    b_planes: Planes | None = None,
) -> np.ndarray:
    """Per-pixel difference in units of "just visible": the larger of colour (ΔE) and
    structure (SSIM on lightness). ΔE sees recolouring and light; SSIM sees blur, noise and
    texture that barely move the mean colour. `frame` is the whole frame's shape when these
    are a part of it. `b_planes` keeps what is filtered out of `lab_b` alone (B's blurred
    chroma, its 3×3 ranges, its local mean lightness): filled on the first call, taken from
    it on a call with the same `lab_b`."""
    planes: Planes = {} if b_planes is None else b_planes
    de = np.sqrt((lab_a[..., 0] - lab_b[..., 0]) ** 2 + _chroma_distance(lab_a, lab_b, planes) ** 2)
    # A little smoothing: one odd pixel (resampling, dithering) is not a change.
    score = ndi.gaussian_filter(de, 1.0)
    score /= s.delta_e
    # Gaussian SSIM (σ 1.5) uses an 11×11 window; smaller images are judged on ΔE alone.
    if min(frame or score.shape) >= 11:
        ssim = _ssim(lab_a[..., 0], lab_b[..., 0], data_range=100.0, planes=planes)
        np.subtract(1.0, ssim, out=ssim)  # (1 - ssim) / 2 / dissimilarity, in place
        ssim /= 2.0
        ssim /= s.dissimilarity
        np.maximum(score, ssim, out=score)
    return score.astype(np.float32, copy=False)


def _chroma_distance(lab_a: np.ndarray, lab_b: np.ndarray, b_planes: Planes) -> np.ndarray:
    """Chroma difference that forgives colour smeared by a pixel or two.

    The eye resolves colour far more coarsely than lightness, and JPEG halves chroma
    resolution: a colour edge in B smeared across its neighbours would otherwise light up
    every edge. So chroma is blurred a little, and a pixel only differs by how far its colour
    lies outside the range the other image has within one pixel of it (both ways round).
    B's blurred channels and their ranges come from `b_planes` when it has them.
    """
    total_ab = np.zeros(lab_a.shape[:2], np.float32)
    total_ba = np.zeros(lab_a.shape[:2], np.float32)
    for c in (1, 2):
        # One contiguous channel at a time: filters run several times faster than on (h, w, 2).
        ca = ndi.gaussian_filter(np.ascontiguousarray(lab_a[..., c]), 1.0)
        if f"chroma{c}" not in b_planes:
            cb = ndi.gaussian_filter(np.ascontiguousarray(lab_b[..., c]), 1.0)
            b_planes[f"chroma{c}"] = cb
            b_planes[f"low{c}"], b_planes[f"high{c}"] = _range(cb)
        cb = b_planes[f"chroma{c}"]
        total_ab += _outside(cb, *_range(ca))
        total_ba += _outside(ca, b_planes[f"low{c}"], b_planes[f"high{c}"])
    return np.sqrt(np.minimum(total_ab, total_ba))


def _ssim(
    x: np.ndarray, y: np.ndarray, data_range: float, planes: Planes | None = None
) -> np.ndarray:
    """Per-pixel SSIM with Gaussian weights (σ 1.5, an 11×11 window) and population
    covariance: skimage's structural_similarity(full=True) map, its local moments filtered on
    float32. y's local mean (a plane filtered on its own, as in a stack) is kept in `planes`
    and taken from it when there."""
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    x = x.astype(np.float32)
    y = y.astype(np.float32)
    planes = {} if planes is None else planes
    # Only the sum of the two variances is used, so x² + y² is filtered once (linear).
    ux, uxx_yy, uxy = ndi.gaussian_filter(
        np.stack([x, x * x + y * y, x * y]), (0, 1.5, 1.5), truncate=3.5, mode="reflect"
    )
    if "mean_l" not in planes:
        planes["mean_l"] = ndi.gaussian_filter(y, 1.5, truncate=3.5, mode="reflect")
    uy = planes["mean_l"]
    # ((2·ux·uy + c1)·(2·(uxy - ux·uy) + c2)) / ((means + c1)·(uxx_yy - means + c2)), the
    # same operations in the same order, written into four arrays instead of a dozen.
    means = ux * ux
    means += uy * uy
    num = 2 * ux
    num *= uy
    num += c1
    cov = ux * uy
    np.subtract(uxy, cov, out=cov)
    cov *= 2
    cov += c2
    num *= cov
    den = means + c1
    np.subtract(uxx_yy, means, out=means)
    means += c2
    den *= means
    num /= den
    return num


def _range(ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest value of ref's 3×3 neighbourhood at each pixel."""
    p = np.pad(ref, 1, mode="edge")
    # Shifted slices: several times faster than scipy's min/max filters; results written in
    # place, since each full-frame temporary costs as much as the arithmetic.
    rows_lo = np.minimum(p[:-2], p[1:-1])
    np.minimum(rows_lo, p[2:], out=rows_lo)
    rows_hi = np.maximum(p[:-2], p[1:-1])
    np.maximum(rows_hi, p[2:], out=rows_hi)
    low = np.minimum(rows_lo[:, :-2], rows_lo[:, 1:-1])
    np.minimum(low, rows_lo[:, 2:], out=low)
    high = np.maximum(rows_hi[:, :-2], rows_hi[:, 1:-1])
    np.maximum(high, rows_hi[:, 2:], out=high)
    return low, high


def _outside(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """How far x lies outside the range [low, high] (0 inside it), squared; low and high are
    left as they are (B's are used twice)."""
    out = np.subtract(x, high)
    below = np.subtract(low, x)
    np.maximum(out, below, out=out)
    np.maximum(out, 0.0, out=out)
    return np.square(out, out=out)


def threshold(score: np.ndarray, s: Settings) -> tuple[float, float]:
    """Robust adaptive thresholds (high, low): median + k·MAD, never below the visibility
    floor (1.0); low is where a region may grow to (hysteresis).

    When nothing changed the floor decides; when B is re-encoded or grainy everywhere the
    median and spread rise with that background and only real edits stand out; the cap keeps
    a change that covers most of the frame from raising the bar above itself.
    """
    if np.count_nonzero(score) < score.size // 2:
        # Scores are never negative: with most of the frame exactly 0 (a local edit saved
        # losslessly) the median and its spread are 0, and sorting is not needed to know it.
        med = mad = 0.0
    else:
        med = float(np.median(score))
        mad = 1.4826 * float(np.median(np.abs(score - med)))
    # Capped: when most of the frame changed, the median sits inside the change itself.
    high = min(max(1.0, med + s.mad_k * mad), s.max_threshold)
    # Growing stops short of the background's own level, else grain joins everything.
    low = min(high, max(s.grow * high, med + 0.5 * s.mad_k * mad))
    return high, low


def changed_mask(score: np.ndarray, levels: tuple[float, float], s: Settings) -> np.ndarray:
    """Pixels above the threshold, grown by hysteresis, opened, closed and de-speckled."""
    h, w = score.shape
    radius = max(1, round(s.close * float(np.hypot(h, w))))
    min_pixels = max(4, round(s.min_area * h * w))
    mask = np.zeros((h, w), bool)
    # Only nonzero scores can pass the threshold (`low` is a positive share of `high` >= 1),
    # and closing reaches `radius` beyond them: worked out inside their box grown by twice
    # that, the mask is the same as over the whole frame (a local edit leaves most of the
    # score exactly 0).
    box = nonzero_box(score, 2 * radius + 2)
    if box is not None:
        mask[box] = _cleaned(score[box], levels, radius, min_pixels)
    return mask


def _cleaned(
    score: np.ndarray, levels: tuple[float, float], radius: int, min_pixels: int
) -> np.ndarray:
    high, low = levels
    mask = _hysteresis(score, low, high)
    mask = dilate(erode(mask, 1), 1)  # opening by a 3×3 cross: single-pixel specks go
    # Closing joins the speckles of a noisy or textured edit into one area; padding first
    # keeps regions at the border from being eaten by the erosion.
    padded = np.pad(mask, radius)
    mask = erode(dilate(padded, radius), radius)[radius:-radius, radius:-radius]
    return drop_small(mask, min_pixels)


def nonzero_box(values: np.ndarray, margin: int) -> tuple[slice, slice] | None:
    """Rows and columns of the smallest box holding every nonzero value, grown by margin and
    clipped to the frame; None when all are 0."""
    rows = np.flatnonzero(values.any(axis=1))
    if not rows.size:
        return None
    cols = np.flatnonzero(values[rows[0] : rows[-1] + 1].any(axis=0))
    h, w = values.shape
    return (
        slice(max(0, int(rows[0]) - margin), min(h, int(rows[-1]) + 1 + margin)),
        slice(max(0, int(cols[0]) - margin), min(w, int(cols[-1]) + 1 + margin)),
    )


def _hysteresis(score: np.ndarray, low: float, high: float) -> np.ndarray:
    """Connected areas above `low` that reach above `high` somewhere (skimage's
    apply_hysteresis_threshold, counting with bincount instead of a per-label sum)."""
    labels, n = ndi.label(score > min(low, high))
    reached = np.bincount(labels[score > high], minlength=n + 1) > 0
    reached[0] = False
    return reached[labels]


def drop_small(mask: np.ndarray, min_pixels: int) -> np.ndarray:
    labels, n = ndi.label(mask)
    if n == 0:
        return mask
    sizes = np.bincount(labels.ravel())
    keep = sizes >= min_pixels
    keep[0] = False
    return keep[labels]


@dataclass
class Region:
    """Connected changed pixels (after merging nearby parts), in working-frame pixels."""

    box: Xyxy  # x1, y1, x2, y2, exclusive
    mask: np.ndarray  # bool, the size of box
    strength: float  # mean score over the region, relative to the threshold

    @property
    def area(self) -> int:
        return int(self.mask.sum())


def regions(mask: np.ndarray, score: np.ndarray, level: float, s: Settings) -> list[Region]:
    """Connected regions of the mask; parts closer than merge_gap become one region, since
    one edit often breaks into pieces (a word's letters, a galaxy's halo)."""
    labels, n = ndi.label(mask)
    if n == 0:
        return []
    slices = ndi.find_objects(labels)
    boxes = [(sl[1].start, sl[0].start, sl[1].stop, sl[0].stop) for sl in slices]
    gap = max(1.0, s.merge_gap * float(np.hypot(*mask.shape)))
    groups = _merge_boxes(boxes, gap)
    out = []
    for members in groups:
        x1 = min(boxes[i][0] for i in members)
        y1 = min(boxes[i][1] for i in members)
        x2 = max(boxes[i][2] for i in members)
        y2 = max(boxes[i][3] for i in members)
        crop = labels[y1:y2, x1:x2]
        part = np.isin(crop, [i + 1 for i in members])
        strength = float(score[y1:y2, x1:x2][part].mean()) / level
        out.append(Region((x1, y1, x2, y2), part, strength))
    return out


def _merge_boxes(boxes: list[Xyxy], gap: float) -> list[list[int]]:
    """Groups of box indices whose boxes (grown by gap/2) overlap, transitively."""
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    changed = True
    while changed:
        changed = False
        # Merged groups are compared by their union box, so the loop repeats until stable.
        unions: dict[int, list[float]] = {}
        for i, b in enumerate(boxes):
            u = unions.setdefault(find(i), [b[0], b[1], b[2], b[3]])
            u[:] = [min(u[0], b[0]), min(u[1], b[1]), max(u[2], b[2]), max(u[3], b[3])]
        roots = list(unions)
        for j, r in enumerate(roots):
            for q in roots[j + 1 :]:
                if find(r) == find(q):
                    continue
                ur, uq = unions[r], unions[q]
                dx = max(ur[0], uq[0]) - min(ur[2], uq[2])
                dy = max(ur[1], uq[1]) - min(ur[3], uq[3])
                if max(dx, dy) <= gap:
                    parent[find(q)] = find(r)
                    changed = True
    groups: dict[int, list[int]] = {}
    for i in range(len(boxes)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())
