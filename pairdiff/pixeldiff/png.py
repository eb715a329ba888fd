"""Plain 8-bit PNGs decoded by libpng (through imagecodecs): the pixels Pillow gives, in about
half the time, which at 1024² is a good part of a prediction's cost.

Only files whose every chunk is known to change neither the pixels nor the EXIF orientation
take this path; anything else (palettes, transparency keys, 16 bits, text that may hold XMP,
eXIf, animation, interlacing) and any file libpng refuses are left to Pillow, so the outcome
is always Pillow's.
"""

from __future__ import annotations

import struct

import numpy as np
from PIL import Image

from pairdiff.lazy import lazy_module

imagecodecs = lazy_module("imagecodecs")

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Colour space and physical-size chunks: Pillow and libpng both leave the pixels as stored.
_PLAIN = frozenset({b"IHDR", b"IDAT", b"IEND", b"sRGB", b"gAMA", b"cHRM", b"iCCP", b"pHYs"})
# PNG colour type → the mode Pillow opens it in (8 bits a sample).
_MODES = {0: "L", 2: "RGB", 4: "LA", 6: "RGBA"}


def plain_mode(data: bytes) -> str | None:
    """Pillow's mode for a non-interlaced 8-bit grey, RGB or alpha PNG made only of plain
    chunks and ending at IEND; None for any other file."""
    if not data.startswith(_SIGNATURE) or len(data) < 8 + 25:
        return None
    length, kind = struct.unpack_from(">I4s", data, 8)
    if kind != b"IHDR" or length != 13:
        return None
    depth, colour, compression, filtering, interlace = data[24:29]
    if depth != 8 or colour not in _MODES or (compression, filtering, interlace) != (0, 0, 0):
        return None
    pos = 8
    while pos + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        if kind not in _PLAIN:
            return None
        pos += 12 + length
        if kind == b"IEND":
            return _MODES[colour] if pos <= len(data) else None
    return None


def decode_plain(data: bytes, mode: str, size: tuple[int, int]) -> Image.Image | None:
    """The image libpng decodes from a `plain_mode` file, or None when libpng refuses it or
    gives something other than `size` pixels of `mode` (then Pillow decides)."""
    try:
        pixels = imagecodecs.png_decode(data)
    except Exception:  # hostile bytes: Pillow's own decoder gives the error
        return None
    bands = len(mode)
    shape = (size[1], size[0]) if bands == 1 else (size[1], size[0], bands)
    if pixels.dtype != np.uint8 or pixels.shape != shape:
        return None
    return Image.fromarray(pixels, mode)
