"""PNG pixels by libspng, where they are exactly the pixels Pillow would give.

Pillow unfilters PNG rows a byte at a time; libspng (through imagecodecs) decodes 8-bit grey,
RGB and RGBA PNGs to identical pixels in about 60 % of the CPU (512×384: 4.9 against 7.9 ms;
1024²: 17.6 against 30.1 ms), and decoding is most of an import's cost and a good part of a
pixeldiff prediction's. Pillow stays the authority on the format: callers open every image with
it first (format, header, pixel limits, bombs) and use this only where a file qualifies;
anything else, and any file libspng refuses, is decoded by Pillow.
"""

from __future__ import annotations

import struct

import numpy as np

from pairdiff.lazy import lazy_module

imagecodecs = lazy_module("imagecodecs")

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# IHDR colour types libspng decodes to Pillow's own modes (it has no grey + alpha).
_MODES = {0: "L", 2: "RGB", 6: "RGBA"}
# Chunks Pillow reads only while loading (they follow the pixels), for EXIF orientation.
_LATE_METADATA = frozenset({b"eXIf", b"tEXt", b"zTXt", b"iTXt"})
# Colour space and physical size: neither Pillow nor libspng changes the pixels for them, and
# none can hold an EXIF or XMP orientation.
_PLAIN = frozenset({b"IHDR", b"IDAT", b"IEND", b"sRGB", b"gAMA", b"cHRM", b"iCCP", b"pHYs"})
# A real PNG has a few dozen chunks; walking millions of tiny ones in Python is Pillow's job.
_MAX_CHUNKS = 10_000


def _chunk_kinds(data: bytes) -> list[bytes] | None:
    """The kinds of an 8-bit grey, RGB or RGBA PNG's chunks up to IEND (or to the end of a
    file without one); None for any other file or one cut short mid-chunk."""
    if len(data) < 33 or not data.startswith(_SIGNATURE) or data[12:16] != b"IHDR":
        return None
    if data[24] != 8 or data[25] not in _MODES:
        return None
    kinds: list[bytes] = []
    position = 8
    for _ in range(_MAX_CHUNKS):
        if position + 8 > len(data):
            # No IEND: Pillow decodes such a file too, when it is not cut short mid-chunk.
            return kinds if position == len(data) else None
        length, kind = struct.unpack_from(">I4s", data, position)
        kinds.append(kind)
        if kind == b"IEND":
            return kinds
        position += 12 + length
    return None


def applies(data: bytes) -> bool:
    """Whether `decode` may stand in for Pillow's load() to check that a file decodes: no
    metadata after the pixels (Pillow would read the orientation there while loading)."""
    kinds = _chunk_kinds(data)
    if kinds is None or b"IDAT" not in kinds:
        return False
    return not _LATE_METADATA.intersection(kinds[kinds.index(b"IDAT") :])


def plain_mode(data: bytes) -> str | None:
    """Pillow's mode for a PNG whose pixels are the image as displayed: only plain chunks
    (no EXIF, text that may hold XMP, palette or transparency key), ending at IEND."""
    kinds = _chunk_kinds(data)
    if not kinds or kinds[-1] != b"IEND" or not _PLAIN.issuperset(kinds):
        return None
    return _MODES[data[25]]


def decode(data: bytes) -> np.ndarray:
    """The pixels, as Pillow's load() gives them; raises on truncated or corrupt data."""
    return imagecodecs.spng_decode(data)
