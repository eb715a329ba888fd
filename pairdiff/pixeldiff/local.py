"""What happened inside each changed region: which side holds something, and of what kind."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.pixeldiff.decode import Xyxy
from pairdiff.pixeldiff.maps import Region
from pairdiff.pixeldiff.shapes import moved, scaled
from pairdiff.pixeldiff.whole import detail_energy

ndi = lazy_module("scipy.ndimage")

# A side "holds something" where its colour stands this many spreads away from the unchanged
# ring around the region.
_CONTENT_K = 3.0
# Below this mean lightness there is nothing for light to act on: a bright blob on a near
# black sky is an object, not a pool of light.
_DARK_L = 12.0
# The largest brightening (p95 of B/A in grey levels) still taken for light falling on a surface.
_MAX_GAIN = 3.5


@dataclass
class Local:
    """One local change in working-frame pixels; kind is appear, disappear, move, count,
    resize, lighting, colour, noise, blur, text or other.

    Not a ``predict.PredictedChange`` (which the predictor makes of it): a finding still being
    measured and merged, in the common working frame, with no category, entity or sentence."""

    kind: str
    boxes_a: list[Xyxy]
    boxes_b: list[Xyxy]
    area: int
    strength: float
    detail: str = ""
    # Mean CIELAB colour of what changed (B's, or A's for a disappearance): look-alike regions
    # are grouped into one change.
    colour: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32), repr=False)


@dataclass(frozen=True)
class Views:
    """The working images in CIELAB and the final changed mask (so rings avoid every region)."""

    lab_a: np.ndarray
    lab_b: np.ndarray
    changed: np.ndarray


@dataclass(frozen=True)
class _Stats:
    """Measurements of one region's changed pixels that the kinds are told apart by."""

    la: np.ndarray  # (n, 3) Lab of the changed pixels in A
    lb: np.ndarray
    corr: float  # correlation of A's and B's lightness: the shading survived
    zero_mean: float  # |mean change| / mean |change|: ~0 for noise, blur, a swap in place
    detail: float  # fine-detail energy B / A: > 1 noisier, < 1 smoother

    @classmethod
    def of(cls, crop_a: np.ndarray, crop_b: np.ndarray, mask: np.ndarray) -> _Stats:
        la, lb = crop_a[mask], crop_b[mask]
        d = lb - la
        zero_mean = float(
            np.linalg.norm(d.mean(axis=0)) / (np.linalg.norm(d, axis=1).mean() + 1e-6)
        )
        ca, cb = la[:, 0] - la[:, 0].mean(), lb[:, 0] - lb[:, 0].mean()
        corr = float((ca * cb).sum() / (np.sqrt((ca * ca).sum() * (cb * cb).sum()) + 1e-6))
        # Per window rather than per frame: regions are few and small, frames are not.
        ea = float(detail_energy(crop_a)[mask].mean())
        eb = float(detail_energy(crop_b)[mask].mean())
        return cls(la, lb, corr, zero_mean, (eb + 0.5) / (ea + 0.5))


def describe(region: Region, v: Views) -> list[Local]:
    """Classify one region and give each side its own box (or none when that side is empty);
    a region holding several separate objects (neighbouring coins) gives one Local each."""
    x1, y1, x2, y2 = region.box
    h, w = v.changed.shape
    pad = int(np.clip(0.25 * max(x2 - x1, y2 - y1), 6, 40))
    wx1, wy1, wx2, wy2 = max(0, x1 - pad), max(0, y1 - pad), min(w, x2 + pad), min(h, y2 + pad)
    win = (slice(wy1, wy2), slice(wx1, wx2))
    mask = np.zeros((wy2 - wy1, wx2 - wx1), bool)
    mask[y1 - wy1 : y2 - wy1, x1 - wx1 : x2 - wx1] = region.mask
    # The ring: unchanged pixels around the region, the same in A and B; what "background"
    # looks like here.
    ring = ~ndi.binary_dilation(v.changed[win], iterations=3)
    crop_a, crop_b = v.lab_a[win], v.lab_b[win]
    st = _Stats.of(crop_a, crop_b, mask)
    box = region.box

    def local(kind: str, boxes_a: list[Xyxy], boxes_b: list[Xyxy], detail: str = "") -> Local:
        colour = (st.la if kind == "disappear" else st.lb).mean(axis=0)
        return Local(kind, boxes_a, boxes_b, region.area, region.strength, detail, colour)

    has_ring = ring.sum() >= 20
    if has_ring and st.corr < 0.4:
        # Who holds the change: a side whose blurred colour departs from the background over
        # much of the region holds an object (noise and blur barely move the blurred colour),
        # and unrelated shading on the two sides says it is not the same thing repainted.
        out_a = mask & _stands_out(_smooth(crop_a), ring)
        out_b = mask & _stands_out(_smooth(crop_b), ring)
        share_a, share_b = out_a.sum() / mask.sum(), out_b.sum() / mask.sum()
        # An object on a busy background may not stand out in colour, but where it went the
        # detail went with it (a smooth fill), and where one came detail arrived; both shift
        # the mean, unlike grain.
        shifted = st.zero_mean > 0.5
        a_holds = share_a > 0.25 or (shifted and st.detail < 0.2)
        b_holds = share_b > 0.25 or (shifted and st.detail > 5.0)
        if a_holds and share_b < max(0.05, min(0.2, 0.4 * share_a)):
            return [local("disappear", [b], []) for b in _objects(out_a, box, wx1, wy1)]
        if b_holds and share_a < max(0.05, min(0.2, 0.4 * share_b)) and not _lit(st.la, st.lb):
            return [local("appear", [], [b]) for b in _objects(out_b, box, wx1, wy1)]
    # Changes in place (light, noise, blur, colour) cover the same area on both sides.
    if _lit(st.la, st.lb):
        brighter = np.median(st.lb[:, 0] - st.la[:, 0]) > 0
        return [local("lighting", [box], [box], "brighter" if brighter else "darker")]
    if st.zero_mean < 0.35:
        if st.detail > 2.0 or (st.corr > 0.6 and st.detail > 1.1):
            return [local("noise", [box], [box], "noisier")]
        if st.detail < 0.5:
            return [local("blur", [box], [box], "blurred")]
    # Otherwise each side gets its own extent: the changed pixels near where that side departs
    # from the background (the old word on A and the new one on B; the large and small coin).
    own_a = own_b = None
    if has_ring:
        dev_a, dev_b = _deviation(crop_a, ring), _deviation(crop_b, ring)
        own_a = _extent(dev_a, dev_b, mask, wx1, wy1)
        own_b = _extent(dev_b, dev_a, mask, wx1, wy1)
    if own_a and own_b:
        word = scaled(own_a, own_b)
        if word:
            return [local("resize", [own_a], [own_b], word)]
        if moved(own_a, own_b):
            return [local("move", [own_a], [own_b])]
    d_l = float(np.median(np.abs(st.lb[:, 0] - st.la[:, 0])))
    d_c = float(np.median(np.hypot(*(st.lb[:, 1:] - st.la[:, 1:]).T)))
    if d_c > 1.5 * d_l and st.corr > 0.6:
        return [local("colour", [box], [box])]
    if own_a and own_b and st.zero_mean < 0.3 and (x2 - x1) >= 2 * (y2 - y1):
        # A wide strip where marks were erased and others drawn in their place, as much ink
        # gone as come: most likely a word or a line of text rewritten.
        return [local("text", [own_a], [own_b])]
    return [local("other", [own_a or box], [own_b or box])]


def _smooth(lab: np.ndarray) -> np.ndarray:
    return ndi.gaussian_filter(lab, (1.5, 1.5, 0))


def _deviation(lab: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Distance from the ring's median colour, in units of the ring's spread (floor 3 ΔE)."""
    around = lab[ring]
    centre = np.median(around, axis=0)
    spread = 1.4826 * np.median(np.abs(around - centre), axis=0)
    # The floor: on a flat ring the spread is ~0 and every rounding would stand out.
    scale = max(3.0, float(np.sqrt(np.sum(spread**2))))
    return np.sqrt(np.sum((lab - centre) ** 2, axis=-1)) / scale


def _stands_out(lab: np.ndarray, ring: np.ndarray) -> np.ndarray:
    return _deviation(lab, ring) > _CONTENT_K


def _objects(content: np.ndarray, box: Xyxy, x0: int, y0: int) -> list[Xyxy]:
    """Boxes of the separate objects in a side's content: the region's box when it is one
    object, one box per sizeable part when closing had joined neighbours (a row of coins)."""
    parts, n = ndi.label(ndi.binary_erosion(content, iterations=1))
    if n < 2:
        return [box]
    sizes = np.bincount(parts.ravel())[1:]
    big = [i + 1 for i, size in enumerate(sizes) if size >= 0.15 * sizes.sum()]
    # Split only on clear evidence: the parts are most of a content that is most of the region
    # (a faint object breaks into crumbs that are not objects of their own).
    x1, y1, x2, y2 = box
    area = (x2 - x1) * (y2 - y1)
    if (
        len(big) < 2
        or sum(sizes[i - 1] for i in big) < 0.5 * sizes.sum()
        or content.sum() < 0.2 * area
    ):
        return [box]
    out = []
    for label in big:
        ys, xs = np.nonzero(parts == label)
        # The erosion took a pixel, the blurred content lost a few more of the soft rim.
        b = (
            x0 + int(xs.min()) - 3,
            y0 + int(ys.min()) - 3,
            x0 + int(xs.max()) + 4,
            y0 + int(ys.max()) + 4,
        )
        out.append((max(b[0], box[0]), max(b[1], box[1]), min(b[2], box[2]), min(b[3], box[3])))
    return out


def _extent(
    dev: np.ndarray, dev_other: np.ndarray, mask: np.ndarray, x0: int, y0: int
) -> Xyxy | None:
    """Box of the changed pixels close to where this side departs from the background (and
    not far less than the other side does there: a faint old halo under a bright new object
    is the new object's); None when that is only a sliver of the region. dev and dev_other
    are each side's `_deviation` from the ring."""
    own = mask & (dev > _CONTENT_K) & (dev >= 0.7 * dev_other)
    own = mask & ndi.binary_dilation(own, iterations=2)
    if own.sum() < 0.1 * mask.sum():
        return None
    rows = np.flatnonzero(own.any(axis=1))
    cols = np.flatnonzero(own.any(axis=0))
    return (x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)


def _level(lab: np.ndarray) -> np.ndarray:
    """Approximate 8-bit grey level from lightness (inverse CIELAB, sRGB-like gamma), plus 1."""
    y = np.clip((lab[:, 0] + 16.0) / 116.0, 0.0, None) ** 3
    return 255.0 * y ** (1 / 2.2) + 1.0


def _lit(la: np.ndarray, lb: np.ndarray) -> bool:
    """Light or shadow on a surface: lightness moved one way nearly everywhere, on something
    not black, by a plausible gain, and the hue stayed (a lamp does not repaint what it lights)."""
    if float(np.median(la[:, 0])) < _DARK_L:
        return False
    d_l = lb[:, 0] - la[:, 0]
    direction = np.sign(np.median(d_l))
    if direction == 0 or float(np.mean(np.sign(d_l) == direction)) < 0.85:
        return False
    # Light multiplies what a surface reflects by a modest gain; a lamp or a star pasted on a
    # dim spot outshines it many times over.
    if direction > 0 and float(np.percentile(_level(lb) / _level(la), 95)) > _MAX_GAIN:
        return False
    chroma_a = np.hypot(la[:, 1], la[:, 2])
    chroma_b = np.hypot(lb[:, 1], lb[:, 2])
    coloured = (chroma_a > 8.0) & (chroma_b > 8.0)
    if coloured.mean() < 0.2:
        return True  # greys: lightness is all there is
    hue_a = np.arctan2(la[coloured, 2], la[coloured, 1])
    hue_b = np.arctan2(lb[coloured, 2], lb[coloured, 1])
    turn = np.abs((hue_b - hue_a + np.pi) % (2 * np.pi) - np.pi)
    return float(np.degrees(np.median(turn))) < 15.0
