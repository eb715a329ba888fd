"""Image B of a made no-difference control: image A again in a file of its own (pure).

A control that named image A twice could be answered without a look at the pixels: one path,
one set of bytes, one size. Its B is a re-encoded copy instead, written the way the edited B of
a real pair is written, so its name, size and bytes say nothing that a real B does not:

- PNG: the same chunks (ancillary ones byte for byte) and the same filtered scanlines, so the
  pixels are identical; only the zlib stream of the image data is compressed again, at a level
  of the same zlib header (the level an encoder wrote is readable there) with another memory
  level (the one whose size is nearest the original's), and cut into IDAT chunks of the
  original's size. The size moves by a fraction of a per cent, as a small edit's does.
- JPEG: decoded and encoded again with the original's quantisation tables and subsampling (the
  quality it was saved at) and its EXIF and ICC profile: pixels differ by the rounding of one
  more save, as an edited JPEG's untouched pixels do (where a save changes nothing, its
  Huffman tables are optimised: the same pixels in other bytes).
- anything else: decoded and saved again in its own format.

Deterministic: the same bytes in give the same bytes out (for one zlib and Pillow), so a
control published in one version gets the same B file in the next.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# zlib levels by the FLEVEL bits of a zlib header (0: fastest … 3: slowest), the likeliest first.
_LEVELS = {0: (1,), 1: (5, 4, 3, 2), 2: (6,), 3: (9, 8, 7)}
_MEMORY = (9, 7, 6, 8, 5)  # memory levels tried (8 is zlib's default)
NEAR = 0.02


def reencoded(data: bytes, avoid: Sequence[bytes] = ()) -> bytes:
    """Image A's bytes encoded again, with the same pixels (PNG) or one more save's rounding
    (JPEG); never ``data`` itself nor one of ``avoid`` unless no encoding of the format
    differs."""
    if data.startswith(PNG_SIGNATURE):
        out = _png_again(data, avoid)
        if out is not None:
            return out
    return _pillow_again(data, avoid)


# How a made control's file is made from the original of its source's image A:
COPY = "copy"  # image A: the original, byte for byte
REENCODE = "reencode"  # image A: re-encoded (its source's A is the only one of its bytes)
B_OF_COPY = "b"  # image B beside a copied A: the original re-encoded
B_OF_REENCODE = "b-of-reencoded"  # image B beside a re-encoded A: that A re-encoded again


def control_file(original: bytes, how: str) -> bytes:
    """The bytes of one of a made control's files (``how``: COPY, REENCODE, B_OF_COPY or
    B_OF_REENCODE), from the original of its source's image A: never the bytes of another
    file of the release made from the same original."""
    if how == COPY:
        return original
    if how in (REENCODE, B_OF_COPY):
        return reencoded(original)
    if how == B_OF_REENCODE:
        return reencoded(reencoded(original), avoid=(original,))
    raise ValueError(f"unknown control file kind {how!r}")


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    out = []
    at = len(PNG_SIGNATURE)
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        out.append((kind, data[at + 8 : at + 8 + length]))
        at += 12 + length
        if kind == b"IEND":
            break
    return out


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _stream(data: bytes) -> bytes:
    try:
        return b"".join(body for kind, body in _chunks(data) if kind == b"IDAT")
    except struct.error:
        return b""


def _png_again(data: bytes, avoid: Sequence[bytes] = ()) -> bytes | None:
    """The PNG with its image data compressed again (see the module's note), or None when the
    file is not a PNG this can read or no setting gives other bytes."""
    try:
        chunks = _chunks(data)
        idat = [body for kind, body in chunks if kind == b"IDAT"]
        stream = b"".join(idat)
        raw = zlib.decompress(stream)
    except (struct.error, zlib.error):
        return None
    if not idat or len(stream) < 2:
        return None
    flevel = stream[1] >> 6
    levels = _LEVELS.get(flevel, (6,))
    # Every memory level at the header's likeliest level, its other levels at zlib's default;
    # when none comes within NEAR of the original's size (another deflate wrote it), every
    # level: the stream nearest the original's size that is neither it nor one avoided.
    shun = {stream, *(_stream(other) for other in avoid)}
    first = [(levels[0], m) for m in _MEMORY] + [(lv, 8) for lv in levels[1:]]
    best = _nearest(raw, stream, shun, first)
    if best is None or abs(len(best) / len(stream) - 1) > NEAR:
        best = _nearest(raw, stream, shun, [(lv, m) for lv in range(1, 10) for m in (8, 9)], best)
    if best is None:
        return None
    piece = max(len(idat[0]), 1)
    parts = [best[i : i + piece] for i in range(0, len(best), piece)]
    out = [PNG_SIGNATURE]
    written = False
    for kind, body in chunks:
        if kind != b"IDAT":
            out.append(_chunk(kind, body))
        elif not written:
            out.extend(_chunk(b"IDAT", part) for part in parts)
            written = True
    return b"".join(out)


def _nearest(
    raw: bytes,
    stream: bytes,
    shun: set[bytes],
    settings: list[tuple[int, int]],
    best: bytes | None = None,
) -> bytes | None:
    """Of the streams ``settings`` compress ``raw`` to, none of ``shun``, the one nearest
    ``stream``'s size (``best`` competing)."""
    for level, memory in settings:
        packer = zlib.compressobj(level, zlib.DEFLATED, 15, memory)
        again = packer.compress(raw) + packer.flush()
        if again not in shun and (
            best is None or abs(len(again) - len(stream)) < abs(len(best) - len(stream))
        ):
            best = again
    return best


def _pillow_again(data: bytes, avoid: Sequence[bytes] = ()) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.load()
        fmt = image.format or "PNG"
        out = io.BytesIO()
        extra = {k: image.info[k] for k in ("exif", "icc_profile", "dpi") if k in image.info}
        if fmt == "JPEG":
            progressive = bool(image.info.get("progressive") or image.info.get("progression"))
            for optimize in (False, True):  # a save that changes nothing: its Huffman
                out = io.BytesIO()  # tables optimised, the same pixels in other bytes
                image.save(
                    out,
                    format="JPEG",
                    quality="keep",
                    subsampling="keep",
                    progressive=progressive,
                    optimize=optimize,
                    **extra,
                )
                if out.getvalue() != data and out.getvalue() not in avoid:
                    break
        elif fmt == "WEBP":
            lossless = bool(image.info.get("lossless"))
            image.save(out, format="WEBP", lossless=lossless, quality=90, **extra)
        else:
            image.save(out, format=fmt, **extra)
    return out.getvalue()
