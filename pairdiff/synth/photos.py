"""Photos shipped inside scikit-image, and the objects found in them.

Every analysis is cached: the photos never change, and re-segmenting the coins on every pair
would cost more than the edit itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import Xyxy
from pairdiff.synth.ops import mask_box, window

ndi = lazy_module("scipy.ndimage")
color = lazy_module("skimage.color")
data = lazy_module("skimage.data")
filters = lazy_module("skimage.filters")
morphology = lazy_module("skimage.morphology")
segmentation = lazy_module("skimage.segmentation")

# Photos that the edits draw on; all ship with scikit-image, so nothing is downloaded.
PHOTOS: tuple[str, ...] = (
    "astronaut",
    "brick",
    "camera",
    "chelsea",
    "coffee",
    "coins",
    "grass",
    "gravel",
    "hubble_deep_field",
    "immunohistochemistry",
    "moon",
    "page",
    "rocket",
)


@dataclass(frozen=True, eq=False)
class Blob:
    """One object of a photo: a boolean mask whose top-left pixel sits at (y0, x0)."""

    label: str
    y0: int
    x0: int
    mask: np.ndarray
    name: str = ""

    @property
    def box(self) -> Xyxy:
        return mask_box(self.mask, self.y0, self.x0)

    def cut(self, img: np.ndarray, margin: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        """The blob's pixels and mask with `margin` around them, and their top-left (y, x)."""
        h, w = self.mask.shape
        y, x = self.y0 - margin, self.x0 - margin
        pix = window(img, y, x, h + 2 * margin, w + 2 * margin)
        return pix, np.pad(self.mask, margin), y, x


@cache
def photo(name: str) -> np.ndarray:
    """The photo as a read-only RGB uint8 array."""
    if name not in PHOTOS:
        raise KeyError(name)
    img = getattr(data, name)()
    if name == "hubble_deep_field":
        # The full field is 1000x872 and its galaxies are tiny; a 640x512 crop keeps them
        # visible at a size comparable to the other photos, and keeps PNG encoding fast.
        img = img[300:812, :640]
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=-1)
    img = np.ascontiguousarray(img[..., :3])
    img.setflags(write=False)
    return img


def _blobs(mask: np.ndarray, label: str, min_area: int) -> list[Blob]:
    lab, _ = ndi.label(mask)
    out = []
    for i, sl in enumerate(ndi.find_objects(lab), start=1):
        if sl is None:
            continue
        part = lab[sl] == i
        if part.sum() >= min_area:
            out.append(Blob(label, sl[0].start, sl[1].start, part))
    return out


def _grow(b: Blob, n: int, shape: tuple[int, ...]) -> Blob:
    """The blob dilated by n pixels, clipped to an image of `shape`."""
    mask = ndi.binary_dilation(np.pad(b.mask, n), iterations=n)
    y0, x0 = b.y0 - n, b.x0 - n
    cy, cx = max(0, -y0), max(0, -x0)
    mask = mask[cy : shape[0] - y0, cx : shape[1] - x0]
    return Blob(b.label, y0 + cy, x0 + cx, mask, b.name)


def _inside(box: Xyxy, w: int, h: int, margin: int) -> bool:
    return box[0] >= margin and box[1] >= margin and box[2] <= w - margin and box[3] <= h - margin


def _largest(mask: np.ndarray) -> Blob:
    return max(_blobs(mask, "", 1), key=lambda b: int(b.mask.sum()))


def _merge(blobs: list[Blob], label: str, name: str) -> Blob:
    y0 = min(b.y0 for b in blobs)
    x0 = min(b.x0 for b in blobs)
    y1 = max(b.y0 + b.mask.shape[0] for b in blobs)
    x1 = max(b.x0 + b.mask.shape[1] for b in blobs)
    mask = np.zeros((y1 - y0, x1 - x0), bool)
    for b in blobs:
        h, w = b.mask.shape
        mask[b.y0 - y0 : b.y0 - y0 + h, b.x0 - x0 : b.x0 - x0 + w] |= b.mask
    return Blob(label, y0, x0, mask, name)


_ROWS = ("top", "second", "third", "bottom")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


@cache
def coins() -> tuple[Blob, ...]:
    """The 24 coins, named by grid position (watershed on the Sobel map, as in the skimage
    coins tutorial: a global threshold merges the top row into its bright background)."""
    grey = photo("coins")[..., 0]
    markers = np.zeros(grey.shape, np.uint8)
    markers[grey < 30] = 1
    markers[grey > 150] = 2
    seg = segmentation.watershed(filters.sobel(grey), markers) == 2
    seg = ndi.binary_opening(ndi.binary_fill_holes(seg), iterations=2)
    seg = ndi.binary_dilation(seg, iterations=1)
    found = sorted(_blobs(seg, "coin", 300), key=lambda b: b.y0 + b.mask.shape[0] / 2)
    rows: list[list[Blob]] = []
    for b in found:
        cy = b.y0 + b.mask.shape[0] / 2
        if rows and cy - (rows[-1][0].y0 + rows[-1][0].mask.shape[0] / 2) < 35:
            rows[-1].append(b)
        else:
            rows.append([b])
    named = []
    for r, row in enumerate(rows):
        row_word = "bottom" if r == len(rows) - 1 else _ROWS[min(r, 2)]
        for c, b in enumerate(sorted(row, key=lambda b: b.x0)):
            name = f"the {_ORDINALS[c]} coin from the left in the {row_word} row"
            named.append(Blob("coin", b.y0, b.x0, b.mask, name))
    return tuple(named)


@cache
def galaxies() -> tuple[Blob, ...]:
    """The largest bright galaxies of the Hubble crop, each with its faint halo."""
    img = photo("hubble_deep_field").astype(np.float32).mean(axis=-1)
    core = ndi.gaussian_filter(img, 1.0) > 70
    h, w = core.shape
    # Galaxies cut by the crop's edge would look sliced when copied or enlarged.
    whole = [b for b in _blobs(core, "galaxy", 40) if _inside(b.box, w, h, 8)]
    found = sorted(whole, key=lambda b: -int(b.mask.sum()))[:10]
    # Their halos fade out far beyond the bright core; a tight mask would leave a ghost behind.
    return tuple(_grow(b, 6, img.shape) for b in found)


@cache
def lights() -> tuple[Blob, ...]:
    """The star-shaped floodlights along the bottom of the rocket photo, as discs around them."""
    img = photo("rocket").astype(np.float32).mean(axis=-1)
    core = img > 245
    core[:330] = False
    out = []
    # The discs reach past the flare's spikes; what is left of them would give the lamp away.
    r = 24
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    disc = yy**2 + xx**2 <= r**2
    for b in _blobs(core, "floodlight", 12):
        cy, cx = (int(v) for v in ndi.center_of_mass(b.mask))
        y, x = b.y0 + cy - r, b.x0 + cx - r
        if x >= 0 and x + 2 * r + 1 <= img.shape[1] and y + 2 * r + 1 <= img.shape[0]:
            out.append(Blob("floodlight", y, x, disc))
    return tuple(out)


def _hsv_mask(
    name: str, roi: Xyxy, test: Callable[[np.ndarray], np.ndarray], opening: int = 1
) -> np.ndarray:
    img = photo(name)
    x1, y1, x2, y2 = roi
    hsv = color.rgb2hsv(img[y1:y2, x1:x2])
    mask = np.zeros(img.shape[:2], bool)
    part = test(hsv)
    mask[y1:y2, x1:x2] = ndi.binary_opening(part, iterations=opening) if opening else part
    return mask


def _not_orange(hsv: np.ndarray) -> np.ndarray:
    return ~((hsv[..., 0] < 0.11) & (hsv[..., 1] > 0.45))


@cache
def astronaut_parts() -> dict[str, Blob]:
    """Mission patch, name tag, shuttle fuel tank and spacesuit, found by colour."""
    patch = _largest(_hsv_mask("astronaut", (120, 330, 225, 440), _not_orange, 2))
    tag = _largest(_hsv_mask("astronaut", (272, 332, 336, 380), _not_orange, 1))
    tank = _largest(
        _hsv_mask(
            "astronaut",
            (385, 0, 445, 178),
            lambda h: (h[..., 0] < 0.14) & (h[..., 1] > 0.25) & (h[..., 2] > 0.08),
        )
    )
    suit_mask = _hsv_mask(
        "astronaut",
        (0, 150, 380, 512),
        lambda h: (h[..., 0] < 0.09) & (h[..., 1] > 0.5) & (h[..., 2] > 0.2),
        0,
    )
    suit_mask = ndi.binary_opening(ndi.binary_closing(suit_mask, iterations=3), iterations=2)
    # Only small holes are closed: filling all of them would swallow the patch and the tag.
    suit_mask = morphology.remove_small_holes(suit_mask, max_size=800)
    suit = _blobs(suit_mask, "spacesuit", 2000)

    def filled(b: Blob, label: str, name: str) -> Blob:
        return Blob(label, b.y0, b.x0, ndi.binary_fill_holes(b.mask), name)

    return {
        "patch": filled(patch, "mission patch", "the round mission patch"),
        "tag": filled(tag, "name tag", "the name tag"),
        "tank": filled(tank, "fuel tank", "the shuttle's fuel tank"),
        "suit": _merge(suit, "spacesuit", "the spacesuit"),
    }


@cache
def cat_eyes() -> tuple[Blob, ...]:
    """The two irises of the cat (pupil included, so the whole eye reads as one colour)."""
    out = []
    for roi in ((125, 75, 220, 155), (285, 100, 350, 170)):
        mask = _hsv_mask(
            "chelsea",
            roi,
            lambda h: (
                (h[..., 0] > 0.1) & (h[..., 0] < 0.3) & (h[..., 1] > 0.25) & (h[..., 2] > 0.3)
            ),
        )
        b = _largest(mask)
        hull = morphology.convex_hull_image(b.mask)
        out.append(Blob("eyes", b.y0, b.x0, hull, "the cat's eyes"))
    return tuple(out)


@cache
def coffee_cup() -> Blob:
    """The red cup with its saucer: one glaze, one colour."""
    mask = _hsv_mask(
        "coffee",
        (0, 0, 600, 400),
        # The glaze is more saturated than the equally red-brown table.
        lambda h: (
            ((h[..., 0] < 0.045) | (h[..., 0] > 0.93)) & (h[..., 1] > 0.82) & (h[..., 2] > 0.05)
        ),
        2,
    )
    b = _largest(mask)
    return Blob("cup", b.y0, b.x0, ndi.binary_fill_holes(b.mask), "the cup and saucer")


@dataclass(frozen=True)
class Word:
    text: str
    window: Xyxy
    replacements: tuple[str, ...]


# Words of the `page` photo: a search window around each (from a word-level segmentation of the
# photo) and replacements of similar length, so the edited line keeps its layout.
PAGE_WORDS: tuple[Word, ...] = (
    Word("Region-based", (3, 12, 145, 34), ("Graph-based", "Edge-based", "Pixel-based")),
    Word("segmentation", (147, 13, 295, 36), ("registration", "restoration", "recognition")),
    Word("first", (52, 49, 85, 63), ("then", "now", "last")),
    Word("determine", (87, 50, 161, 64), ("compute", "estimate", "measure")),
    Word("markers", (164, 50, 225, 64), ("labels", "seeds", "peaks")),
    Word("coins", (280, 51, 320, 64), ("cells", "stars", "beads")),
    Word("pixels", (217, 69, 261, 85), ("points", "values", "voxels")),
    Word("object", (177, 86, 226, 103), ("target", "signal", "region")),
    Word("found", (112, 103, 156, 118), ("seen", "placed", "kept")),
    Word("extreme", (235, 106, 298, 119), ("opposite", "outer", "inner")),
    Word("histogram", (3, 116, 70, 133), ("spectrum", "profile", "contour")),
)


@cache
def page_background() -> np.ndarray:
    """The paper without the ink, as a local mean of the paper pixels around each point.

    A grey closing alone finds the ink but sits on the paper's brightest grains; filling an
    erased word with it leaves a visibly lighter patch.
    """
    grey = photo("page")[..., 0].astype(np.float32)
    envelope = ndi.uniform_filter(ndi.grey_closing(grey, size=(9, 9)), 9)
    paper = (~ndi.binary_dilation(envelope - grey > 25, iterations=2)).astype(np.float32)
    weight = np.maximum(ndi.gaussian_filter(paper, 5.0), 1e-3)
    return ndi.gaussian_filter(grey * paper, 5.0) / weight


def page_ink(word: Word, threshold: float) -> tuple[np.ndarray, int, int]:
    """The ink mask of one word inside its window, with the window's top-left (y, x)."""
    x1, y1, x2, y2 = word.window
    grey = photo("page")[y1:y2, x1:x2, 0].astype(np.float32)
    return (page_background()[y1:y2, x1:x2] - grey) > threshold, y1, x1


@dataclass(frozen=True)
class Area:
    """A named stretch of a photo where an elliptic local edit looks natural.

    `surface` decides which edits fit (see looks.SURFACES): blurring a smooth or dark area
    changes nothing a person can see, a shadow on a black coat is invisible, and a pool of
    light or shadow on the sky makes no physical sense.
    """

    photo: str
    label: str
    name: str
    box: Xyxy
    surface: str = "texture"  # "texture", "smooth", "dark" or "sky"


AREAS: tuple[Area, ...] = (
    Area("astronaut", "flag", "the flag", (0, 0, 92, 260)),
    Area("camera", "sky", "the sky", (230, 5, 500, 85), "sky"),
    Area("camera", "grass", "the grass", (250, 300, 500, 500)),
    Area("camera", "coat", "the man's coat", (10, 170, 120, 380), "dark"),
    Area("coffee", "table", "the table", (490, 190, 598, 398)),
    Area("chelsea", "fur", "the fur on the cat's forehead", (190, 10, 320, 110)),
    Area("chelsea", "fur", "the fur on the cat's cheek", (30, 150, 150, 260)),
    Area("rocket", "sky", "the sky", (345, 15, 432, 230), "sky"),
    Area("rocket", "sky", "the sky", (210, 15, 300, 120), "sky"),
    Area("moon", "surface", "the lunar surface", (60, 200, 360, 500), "smooth"),
    Area("grass", "grass", "the grass", (40, 40, 472, 472)),
    Area("gravel", "gravel", "the gravel", (40, 40, 472, 472)),
    Area("brick", "brick wall", "the brick wall", (40, 40, 472, 472)),
    Area("immunohistochemistry", "tissue", "the stained tissue", (240, 300, 390, 490)),
)


def ellipse(area: Area, rng: np.random.Generator, edge: float = 0.3) -> tuple[np.ndarray, int, int]:
    """A soft elliptic alpha inside the area, exactly 0 at and beyond its rim, with its (y, x).

    `edge` is the fraction of the radius over which alpha fades; 1 fades from the centre out,
    the way a pool of light or a shadow does.
    """
    x1, y1, x2, y2 = area.box
    rx = max(12.0, float(rng.uniform(0.25, 0.45)) * (x2 - x1))
    ry = max(12.0, float(rng.uniform(0.25, 0.45)) * (y2 - y1))
    cx = float(rng.uniform(x1 + rx, x2 - rx))
    cy = float(rng.uniform(y1 + ry, y2 - ry))
    y0, x0 = int(cy - ry), int(cx - rx)
    yy, xx = np.mgrid[y0 : int(cy + ry) + 2, x0 : int(cx + rx) + 2].astype(np.float32)
    r = np.sqrt(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2)
    t = np.clip((1.0 - r) / edge, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t), y0, x0
