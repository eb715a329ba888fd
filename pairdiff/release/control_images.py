"""Image B of a made no-difference control: image A again in a file of its own (pure).

A control that named image A twice could be answered without a look at the pixels: one path,
one set of bytes, one size. Its B is a re-encoded copy instead, written the way the edited B of
a real pair is written, so its name, size and bytes say nothing that a real B does not:

- PNG: the same chunks (ancillary ones byte for byte) and the same filtered scanlines, so the
  pixels are identical; only the zlib stream of the image data is compressed again, at a level
  of the same zlib header (the level an encoder wrote is readable there) with another memory
  level, and cut into IDAT chunks of the original's size. The size moves by a fraction of a
  per cent, as a small edit's does.
- JPEG: decoded and encoded again with the original's quantisation tables and subsampling (the
  quality it was saved at) and its EXIF and ICC profile: pixels differ by the rounding of one
  more save, as an edited JPEG's untouched pixels do.
- anything else: decoded and saved again in its own format.

Deterministic: the same bytes in give the same bytes out (for one zlib and Pillow), so a
control published in one version gets the same B file in the next.
"""

from __future__ import annotations

import io
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# zlib levels by the FLEVEL bits of a zlib header (0: fastest … 3: slowest), tried in turn.
_LEVELS = {0: (1,), 1: (2, 3, 4, 5), 2: (6,), 3: (7, 8, 9)}
_MEMORY = (9, 7, 6, 8, 5)  # memory levels tried (8 is zlib's default)


def reencoded(data: bytes) -> bytes:
    """Image A's bytes encoded again, with the same pixels (PNG) or one more save's rounding
    (JPEG); never ``data`` itself unless no encoding of the format differs."""
    if data.startswith(PNG_SIGNATURE):
        out = _png_again(data)
        if out is not None:
            return out
    return _pillow_again(data)


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


def _png_again(data: bytes) -> bytes | None:
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
    piece = max(len(idat[0]), 1)
    for level in _LEVELS.get(flevel, (6,)):
        for memory in _MEMORY:
            packer = zlib.compressobj(level, zlib.DEFLATED, 15, memory)
            again = packer.compress(raw) + packer.flush()
            if again == stream:
                continue
            parts = [again[i : i + piece] for i in range(0, len(again), piece)]
            out = [PNG_SIGNATURE]
            written = False
            for kind, body in chunks:
                if kind != b"IDAT":
                    out.append(_chunk(kind, body))
                elif not written:
                    out.extend(_chunk(b"IDAT", part) for part in parts)
                    written = True
            return b"".join(out)
    return None


def _pillow_again(data: bytes) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.load()
        fmt = image.format or "PNG"
        out = io.BytesIO()
        extra = {k: image.info[k] for k in ("exif", "icc_profile", "dpi") if k in image.info}
        if fmt == "JPEG":
            progressive = bool(image.info.get("progressive") or image.info.get("progression"))
            image.save(
                out,
                format="JPEG",
                quality="keep",
                subsampling="keep",
                progressive=progressive,
                **extra,
            )
        elif fmt == "WEBP":
            lossless = bool(image.info.get("lossless"))
            image.save(out, format="WEBP", lossless=lossless, quality=90, **extra)
        else:
            image.save(out, format=fmt, **extra)
    return out.getvalue()
