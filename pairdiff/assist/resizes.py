"""Resizes: a change boxed in place on both sides that is a thing grown or shrunk where it
stood, found by matching one side's content at a smaller scale inside the other."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from PIL import Image

from pairdiff.assist.found import Found, whole_pixels
from pairdiff.assist.refiner import Refiner
from pairdiff.lazy import lazy_module

signal = lazy_module("scipy.signal")

# A change boxed in place on both sides may be a thing that grew or shrank where it stood: its
# extent is then the larger of the two, and the smaller is found inside it as the other side's
# content at a smaller scale, when that matches clearly better than the two sides in place.
_RESIZE_SCALES = tuple(np.arange(0.45, 0.9, 0.025))
_RESIZE_CORRELATION = 0.75
_RESIZE_MARGIN = 0.15
_RESIZE_KINDS = {"other", "colour", "lighting"}
_RESIZE_WORK = 48  # the coarse search runs with the extent's longer side this many pixels


def _masked_ncc(p: np.ndarray, q: np.ndarray, mask: np.ndarray) -> float | None:
    """Normalised correlation of p and q over mask's pixels; None when too few or too flat."""
    if int(mask.sum()) < 16:
        return None
    pv, qv = p[mask], q[mask]
    pv, qv = pv - pv.mean(), qv - qv.mean()
    if min(pv.std(), qv.std()) < 4.0:  # too flat to say
        return None
    return float((pv * qv).sum() / np.sqrt((pv * pv).sum() * (qv * qv).sum()))


def resized(f: Found, refine: Refiner) -> Found:
    """f with its smaller side's box where the thing stands at its new size, when f is a thing
    that grew or shrank in place; f itself otherwise."""
    if f.whole or f.kind not in _RESIZE_KINDS or len(f.boxes_a) != 1 or f.boxes_a != f.boxes_b:
        return f
    x1, y1, x2, y2 = whole_pixels(f.boxes_a[0])
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
