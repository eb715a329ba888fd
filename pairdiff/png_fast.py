"""Full decoding of common PNGs by libspng, for checks that only need to know they decode.

Pillow unfilters PNG rows a byte at a time; libspng (through imagecodecs) decodes the same
8-bit grey, RGB and RGBA images to identical pixels in about half the CPU, and decoding is
most of an import's cost. Pillow stays the authority on the format: it opens every image and
reads its header; this only replaces its `load()` where both decoders are known to agree.
"""

from __future__ import annotations

import struct

import imagecodecs
import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# IHDR colour types libspng decodes to Pillow's own modes: grey (L), RGB, RGBA.
_COLOUR_TYPES = frozenset({0, 2, 6})
# Chunks Pillow reads only while loading (they follow the pixels), for EXIF orientation.
_LATE_METADATA = frozenset({b"eXIf", b"tEXt", b"zTXt", b"iTXt"})
# A real PNG has a few dozen chunks; walking millions of tiny ones in Python is Pillow's job.
_MAX_CHUNKS = 10_000


def applies(data: bytes) -> bool:
    """Whether `decode` may stand in for Pillow's load: an 8-bit grey, RGB or RGBA PNG, its
    chunks well framed, with no metadata after the pixels. Anything else goes to Pillow."""
    if len(data) < 33 or not data.startswith(_SIGNATURE) or data[12:16] != b"IHDR":
        return False
    if data[24] != 8 or data[25] not in _COLOUR_TYPES:
        return False
    after_pixels = False
    position = 8
    for _ in range(_MAX_CHUNKS):
        if position + 8 > len(data):
            # No IEND: Pillow decodes such a file too, when it is not cut short mid-chunk.
            return position == len(data)
        length, kind = struct.unpack_from(">I4s", data, position)
        if kind == b"IDAT":
            after_pixels = True
        elif after_pixels and kind in _LATE_METADATA:
            return False
        elif kind == b"IEND":
            return True
        position += 12 + length
    return False


def decode(data: bytes) -> np.ndarray:
    """The pixels, as Pillow's load() gives them; raises on truncated or corrupt data."""
    return imagecodecs.spng_decode(data)
