"""Colour names for a region's mean CIELAB colour: the nearest of a small vocabulary."""

from __future__ import annotations

import numpy as np

from pairdiff.pixeldiff.maps import to_lab

# Plain words an annotator would write, each at a typical sRGB value of its own.
_NAMED_RGB: dict[str, tuple[int, int, int]] = {
    "black": (20, 20, 20),
    "grey": (128, 128, 128),
    "white": (245, 245, 245),
    "red": (200, 30, 35),
    "orange": (240, 135, 20),
    "yellow": (240, 220, 40),
    "green": (40, 155, 50),
    "cyan": (40, 190, 205),
    "blue": (30, 80, 200),
    "purple": (125, 50, 160),
    "pink": (240, 130, 180),
    "brown": (120, 70, 30),
}
_NAMES = tuple(_NAMED_RGB)
_LAB = to_lab(np.array([list(_NAMED_RGB.values())], np.uint8))[0]


def colour_name(lab: np.ndarray) -> str:
    """The vocabulary word nearest (CIE76 ΔE) to a CIELAB colour (L, a, b)."""
    lab = np.asarray(lab, np.float32).reshape(3)
    chroma = float(np.hypot(lab[1], lab[2]))
    if chroma < 8.0:
        # Near-neutral: lightness alone decides (a dim pastel is grey, not a faint hue).
        return "black" if lab[0] < 25 else "white" if lab[0] > 85 else "grey"
    # Chromatic: the nearest hue (lightness and chroma shift a lot under shading, hue little);
    # an orange or yellow that dark is brown.
    hue = np.degrees(np.arctan2(lab[2], lab[1]))
    turn = np.abs((_HUES - hue + 180.0) % 360.0 - 180.0)
    name = _HUED[int(np.argmin(turn))]
    if name in ("orange", "yellow") and lab[0] < 50:
        return "brown"
    return name


def region_colour(rgb: np.ndarray, mask: np.ndarray | None = None) -> str:
    """The name of the mean colour of the pixels under `mask` (all of rgb without one)."""
    lab = to_lab(np.ascontiguousarray(rgb[..., :3]))
    pixels = lab[mask] if mask is not None and mask.any() else lab.reshape(-1, 3)
    return colour_name(np.median(pixels, axis=0))


_HUED = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink")
_HUES = np.array(
    [np.degrees(np.arctan2(_LAB[_NAMES.index(n)][2], _LAB[_NAMES.index(n)][1])) for n in _HUED]
)
