"""PNG pixels by libspng, where they are exactly the pixels Pillow would give.

Pillow unfilters PNG rows a byte at a time; libspng (through imagecodecs) decodes 8-bit grey,
RGB and RGBA PNGs to identical pixels in about 60 % of the CPU (512×384: 4.9 against 7.9 ms;
1024²: 17.6 against 30.1 ms), and decoding is most of an import's cost and a good part of a
pixeldiff prediction's. Pillow stays the authority on the format: callers open every image with
it first (format, header, pixel limits, bombs) and use this only where a file qualifies;
anything else, and any file libspng refuses, is decoded by Pillow.

More than half of libspng's time went to the zlib it is built with (1.2.13; about 2.4 of 4.0 ms
at 512×384, Paeth-filtered RGB). `decode` inflates the IDAT stream with imagecodecs' libdeflate
(0.9 ms; its zlib-ng takes 1.4) and hands libspng the same scanlines in stored (uncompressed)
deflate blocks, so libspng still unfilters every row and checks every filter byte: 2.6 against
4.0 ms, the same pixels. Only a stream that fully passes that route is accepted there. Any other
outcome (a CRC or checksum mismatch, a stream too short or too long, an unusual zlib header)
decodes the original bytes with libspng as before, so a bad file gets exactly the verdict and
message it got. What is left is mostly libspng's unfiltering (Paeth: about 1.3 ms).
"""

from __future__ import annotations

import struct
import zlib

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
# Channels of the colour types in _MODES, for the size of the inflated scanlines.
_CHANNELS = {0: 1, 2: 3, 6: 4}
# The fast route holds the inflated scanlines twice (inflated, then in stored blocks) beside
# the pixels; bigger images (over 8 MP RGB) take the original one, which holds the pixels only.
_FAST_MAX_RAW = 24 * 1024**2
_STORED_BLOCK = 0xFFFF  # the most bytes a stored deflate block holds


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
    stored = _with_stored_idat(data)
    if stored is not None:
        try:
            return imagecodecs.spng_decode(stored)
        except Exception:  # libspng's own verdict on the original bytes, below
            pass
    return imagecodecs.spng_decode(data)


def _with_stored_idat(data: bytes) -> bytes | None:
    """The PNG with its IDAT chunks replaced by one holding the same scanlines in stored
    deflate blocks, inflated by libdeflate; None unless every step checks out: an 8-bit grey,
    RGB or RGBA PNG without interlacing, consecutive IDAT chunks with good CRCs, a zlib stream
    with a 32 KiB window and no dictionary, its Adler-32 right, inflating to exactly the size
    of the scanlines (libspng takes a longer one too; the original route accepts it)."""
    if len(data) < 33 or not data.startswith(_SIGNATURE) or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack_from(">IIBBBBB", data, 16)
    if depth != 8 or colour not in _CHANNELS or interlace != 0:
        return None
    size = height * (1 + width * _CHANNELS[colour])
    if not 0 < size <= _FAST_MAX_RAW:
        return None
    parts: list[memoryview] = []
    view = memoryview(data)
    start = end = position = 8
    for _ in range(_MAX_CHUNKS):
        if position + 12 > len(data):
            return None
        length, kind = struct.unpack_from(">I4s", data, position)
        following = position + 12 + length
        if following > len(data):
            return None
        if kind == b"IDAT":
            if parts and end != position:
                return None  # IDAT chunks split by another chunk: libspng's verdict
            if not parts:
                start = position
            body = view[position + 8 : position + 8 + length]
            (crc,) = struct.unpack_from(">I", data, position + 8 + length)
            if imagecodecs.deflate_crc32(body, zlib.crc32(b"IDAT")) != crc:
                return None
            parts.append(body)
            end = following
        elif parts or kind == b"IEND":
            break
        position = following
    else:
        return None
    stream = b"".join(parts)
    if len(stream) < 2 or stream[0] != 0x78 or stream[1] & 0x20:
        return None  # a window other than 32 KiB (zlib checks distances against it), or FDICT
    try:
        raw = imagecodecs.deflate_decode(stream, out=size)
    except Exception:
        return None
    if len(raw) != size:
        return None
    return _with_stored_idat_of(raw, before=view[:start], after=view[end:])


def _with_stored_idat_of(raw: bytes, *, before: memoryview, after: memoryview) -> bytes:
    """before + an IDAT chunk of a zlib stream holding raw in stored (uncompressed) deflate
    blocks + after, joined in one copy."""
    pieces: list[bytes | memoryview] = [b"IDAT\x78\x01"]  # 32 KiB window, no dictionary
    view = memoryview(raw)
    for offset in range(0, len(raw) or 1, _STORED_BLOCK):  # one block at least
        block = view[offset : offset + _STORED_BLOCK]
        final = offset + _STORED_BLOCK >= len(raw)
        pieces += [struct.pack("<BHH", final, len(block), 0xFFFF ^ len(block)), block]
    pieces.append(struct.pack(">I", imagecodecs.deflate_adler32(raw)))
    crc = 0
    for piece in pieces:
        crc = imagecodecs.deflate_crc32(piece, crc)
    length = sum(len(piece) for piece in pieces) - 4
    return b"".join([before, struct.pack(">I", length), *pieces, struct.pack(">I", crc), after])
