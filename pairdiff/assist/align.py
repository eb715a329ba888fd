"""The A→B alignment of a pair: which point of B shows what a point of A shows.

Candidates, cheapest first: the frame scale (B is A resized, the workspace's old mirror), a
translation found by phase correlation (B shifted or cropped at A's pixel scale, or shifted after
resizing), and an affine transform from ORB keypoints matched with RANSAC (cropped and rescaled).
Each is scored by its residual: the median absolute grey-level difference between A and B mapped
onto A, over the part of A that B shows. The simplest candidate within a small margin of the best
wins; the residual, and an 8×8 grid of it, say where the alignment is poor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pairdiff.lazy import lazy_module

registration = lazy_module("skimage.registration")
feature = lazy_module("skimage.feature")
measure = lazy_module("skimage.measure")
transform = lazy_module("skimage.transform")

Matrix = list[list[float]]
Xyxy = tuple[float, float, float, float]

# Longest side the alignment is estimated at (keypoints and correlation are cheap there).
WORK_SIDE = 512
# A candidate must show this share of A to be believed (a crop showing less is not a crop).
_MIN_OVERLAP = 0.25
# Grey levels a more complex candidate must beat a simpler one by to be chosen.
_MARGIN = 1.5
GRID = 8
# Candidates that agree with the frame scale to this many B pixels at every corner of A are it.
_SAME_PX = 1.5


@dataclass(frozen=True)
class Alignment:
    """matrix: 3×3, A's pixel (x, y, 1) → B's pixel; kind: scale, translation or affine;
    residual: median |A − B mapped| in grey levels over `overlap` (share of A that B shows);
    grid: the residual per tile of an 8×8 grid over A (None where B shows nothing)."""

    matrix: Matrix
    kind: str
    residual: float
    overlap: float
    grid: list[list[float | None]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "matrix": [[round(v, 6) for v in row] for row in self.matrix],
            "kind": self.kind,
            "residual": round(self.residual, 2),
            "overlap": round(self.overlap, 3),
            "grid": self.grid,
        }

    @property
    def is_frame_scale(self) -> bool:
        return self.kind == "scale"


def frame_scale(size_a: tuple[int, int], size_b: tuple[int, int]) -> np.ndarray:
    (wa, ha), (wb, hb) = size_a, size_b
    return np.array([[wb / wa, 0, 0], [0, hb / ha, 0], [0, 0, 1]], float)


def map_box(matrix: Matrix | np.ndarray, box: Xyxy, size: tuple[int, int]) -> Xyxy | None:
    """The box through the matrix: the extent of its four mapped corners, clipped to the frame
    (width, height); None when nothing of it lands inside."""
    m = np.asarray(matrix, float)
    x1, y1, x2, y2 = box
    corners = np.array([[x1, y1, 1], [x2, y1, 1], [x1, y2, 1], [x2, y2, 1]], float) @ m.T
    xy = corners[:, :2] / corners[:, 2:3]
    w, h = size
    bx1, by1 = max(0.0, float(xy[:, 0].min())), max(0.0, float(xy[:, 1].min()))
    bx2, by2 = min(float(w), float(xy[:, 0].max())), min(float(h), float(xy[:, 1].max()))
    if bx2 - bx1 < 1 or by2 - by1 < 1:
        return None
    return (bx1, by1, bx2, by2)


def _grey(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def _shrink(grey: np.ndarray, k: float) -> np.ndarray:
    if k >= 1.0:
        return grey
    h, w = grey.shape
    out = transform.resize(grey, (max(1, round(h * k)), max(1, round(w * k))), anti_aliasing=True)
    return np.asarray(out, np.float32)


def estimate_alignment(rgb_a: np.ndarray, rgb_b: np.ndarray) -> Alignment:
    """The best of the candidates for B against A (both uint8 RGB arrays, full size)."""
    ha, wa = rgb_a.shape[:2]
    hb, wb = rgb_b.shape[:2]
    k = min(1.0, WORK_SIDE / max(wa, ha))
    ga, gb = _shrink(_grey(rgb_a), k), _shrink(_grey(rgb_b), k)
    to_work = np.diag([k, k, 1.0])
    from_work = np.diag([1 / k, 1 / k, 1.0])
    scale = frame_scale((wa, ha), (wb, hb))
    scored: list[tuple[float, str, np.ndarray, float, list[list[float | None]]]] = []

    def score(kind: str, m: np.ndarray) -> None:
        residual, overlap, grid = _residual(ga, gb, to_work @ m @ from_work)
        if overlap >= _MIN_OVERLAP:
            scored.append((residual, kind, m, overlap, grid))

    # A later, costlier candidate is only tried while the ones before leave a visible residual.
    score("scale", scale)
    if not _good(scored):
        for m in _translations(ga, gb, scale, k):
            score("translation", m)
    if not _good(scored):
        affine = _affine(ga, gb)
        if affine is not None:
            score("affine", from_work @ affine @ to_work)
    if not scored:  # nothing overlaps believably: the frame scale, poor as it may be
        residual, overlap, grid = _residual(ga, gb, to_work @ scale @ from_work)
        return Alignment(scale.tolist(), "scale", residual, overlap, grid)
    best = min(s[0] for s in scored)
    order = {"scale": 0, "translation": 1, "affine": 2}
    residual, kind, m, overlap, grid = min(
        (s for s in scored if s[0] <= best + _MARGIN), key=lambda s: (order[s[1]], s[0])
    )
    if kind != "scale" and _moves_under(m, scale, (wa, ha), _SAME_PX):
        # A sub-pixel "shift" is the resampling of a resize, not a camera that moved: the frame
        # scale it is, so a resized pair mirrors exactly as it always did.
        kind, m = "scale", scale
        residual, overlap, grid = _residual(ga, gb, to_work @ scale @ from_work)
    return Alignment(m.tolist(), kind, residual, overlap, grid)


def _moves_under(m: np.ndarray, other: np.ndarray, size: tuple[int, int], px: float) -> bool:
    """No corner of A lands more than px (B pixels) away under m than under other."""
    w, h = size
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], float)
    p, q = corners @ m.T, corners @ other.T
    gap = p[:, :2] / p[:, 2:3] - q[:, :2] / q[:, 2:3]
    return bool(np.abs(gap).max() < px)


def _good(scored: list) -> bool:
    """Some candidate already leaves less than a grey level unexplained (re-encoding noise)."""
    return any(s[0] < 1.0 for s in scored)


def _translations(ga: np.ndarray, gb: np.ndarray, scale: np.ndarray, k: float) -> list[np.ndarray]:
    """Phase correlation at A's pixel scale (B shifted or cropped) and, when the sizes differ,
    after bringing B to A's frame (shifted, then resized)."""
    out = []
    ha, wa = ga.shape
    # B at A's scale, in a canvas of A's size (a crop sits at its offset, the rest is zero).
    canvas = np.zeros_like(ga)
    h, w = min(ha, gb.shape[0]), min(wa, gb.shape[1])
    canvas[:h, :w] = gb[:h, :w]
    mask_b = np.zeros(ga.shape, bool)
    mask_b[:h, :w] = True
    dy, dx = _shift(ga, canvas, mask_b)
    # canvas shifted by (dy, dx) matches A: A's (x, y) is B's (x − dx, y − dy), in work pixels.
    out.append(np.array([[1, 0, -dx / k], [0, 1, -dy / k], [0, 0, 1]], float))
    if not np.allclose(scale, np.eye(3)):
        resized = np.asarray(transform.resize(gb, ga.shape, anti_aliasing=True), np.float32)
        dy, dx = _shift(ga, resized, np.ones(ga.shape, bool))
        shift = np.array([[1, 0, -dx / k], [0, 1, -dy / k], [0, 0, 1]], float)
        out.append(scale @ shift)
    return out


def _shift(ga: np.ndarray, gb: np.ndarray, mask_b: np.ndarray) -> tuple[float, float]:
    if mask_b.all():
        shift, _, _ = registration.phase_cross_correlation(ga, gb, upsample_factor=10)
    else:
        shift = registration.phase_cross_correlation(
            ga, gb, reference_mask=np.ones(ga.shape, bool), moving_mask=mask_b
        )[0]
    return float(shift[0]), float(shift[1])


def _affine(ga: np.ndarray, gb: np.ndarray) -> np.ndarray | None:
    """A→B affine transform (work pixels) from ORB keypoints and RANSAC, None when too few
    keypoints agree."""
    try:
        found = []
        for g in (ga, gb):
            orb = feature.ORB(n_keypoints=400, fast_threshold=0.05)
            orb.detect_and_extract(g / 255.0)
            found.append((orb.keypoints, orb.descriptors))
    except RuntimeError:  # no keypoints at all (a flat image)
        return None
    (ka, da), (kb, db) = found
    if len(ka) < 8 or len(kb) < 8:
        return None
    matches = feature.match_descriptors(da, db, cross_check=True, max_ratio=0.8)
    if len(matches) < 8:
        return None
    src = ka[matches[:, 0]][:, ::-1]  # (row, col) → (x, y)
    dst = kb[matches[:, 1]][:, ::-1]
    model, inliers = measure.ransac(
        (src, dst),
        transform.AffineTransform,
        min_samples=3,
        residual_threshold=2.0,
        max_trials=500,
        rng=0,
    )
    if model is None or inliers is None or inliers.sum() < 8:
        return None
    return np.asarray(model.params, float)


def _residual(
    ga: np.ndarray, gb: np.ndarray, work: np.ndarray
) -> tuple[float, float, list[list[float | None]]]:
    """Median |A − B mapped onto A| where B shows A (work pixels), the share of A it shows and
    the median per tile of an 8×8 grid."""
    tform = transform.ProjectiveTransform(matrix=work)
    warped = transform.warp(
        gb, tform, output_shape=ga.shape, order=1, cval=np.nan, preserve_range=True
    )
    valid = ~np.isnan(warped)
    overlap = float(valid.mean())
    if not valid.any():
        return 255.0, 0.0, []
    diff = np.abs(ga - np.where(valid, warped, 0.0))
    residual = float(np.median(diff[valid]))
    h, w = ga.shape
    ys = np.linspace(0, h, GRID + 1).astype(int)
    xs = np.linspace(0, w, GRID + 1).astype(int)
    grid: list[list[float | None]] = []
    for y0, y1 in zip(ys[:-1], ys[1:], strict=True):
        row: list[float | None] = []
        for x0, x1 in zip(xs[:-1], xs[1:], strict=True):
            v = valid[y0:y1, x0:x1]
            row.append(
                round(float(np.median(diff[y0:y1, x0:x1][v])), 1) if v.mean() > 0.5 else None
            )
        grid.append(row)
    return residual, overlap, grid
