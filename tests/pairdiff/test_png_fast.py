"""libspng stands in for Pillow's PNG load only where it gives the same pixels and verdicts."""

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from pairdiff import images, png_fast
from pairdiff.images import ImageRejected, inspect_image
from tests.images import photo


def _png(img: Image.Image, **params: object) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG", **params)
    return out.getvalue()


def _pillow_pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _exif_orientation(value: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = value
    return exif.tobytes()


def _with_chunk_after_pixels(data: bytes, kind: bytes, body: bytes) -> bytes:
    """The PNG with one more chunk just before IEND (the last 12 bytes)."""
    return data[:-12] + _chunk(kind, body) + data[-12:]


PHOTO = photo(size=(97, 65))  # odd sizes: rows that are not a multiple of any vector width


@pytest.mark.parametrize(
    "png",
    [
        _png(PHOTO),
        _png(PHOTO.convert("RGBA")),
        _png(PHOTO.convert("L")),
        _png(PHOTO, compress_level=9, optimize=True),  # every filter type
        _png(PHOTO, compress_level=0),
    ],
    ids=["RGB", "RGBA", "L", "optimized", "stored"],
)
def test_the_pixels_are_pillows_to_the_byte(png):
    assert png_fast.applies(png)
    assert np.array_equal(png_fast.decode(png), _pillow_pixels(png))


@pytest.mark.parametrize(
    "png",
    [
        _png(PHOTO.convert("P")),
        _png(PHOTO.convert("LA")),
        _png(PHOTO.convert("1")),
        _png(Image.fromarray(np.asarray(PHOTO.convert("L")).astype(np.uint16) * 257)),
        _with_chunk_after_pixels(_png(PHOTO), b"eXIf", _exif_orientation(6)),
        _with_chunk_after_pixels(_png(PHOTO), b"tEXt", b"Comment\x00late"),
        _png(PHOTO)[:-500],  # cut short: Pillow says so
        _png(PHOTO)[:-12] + _chunk(b"tIME", bytes(7)) * 10_000 + _chunk(b"IEND", b""),
        b"\x89PNG\r\n\x1a\n",
        b"GIF89a",
    ],
    ids=[
        "palette",
        "grey+alpha",
        "bilevel",
        "16-bit",
        "late-eXIf",
        "late-text",
        "cut",
        "10,000 chunks",
        "bare",
        "gif",
    ],
)
def test_everything_else_is_left_to_pillow(png):
    assert not png_fast.applies(png)


def test_inspect_decodes_with_libspng_where_it_applies(monkeypatch):
    calls = []
    monkeypatch.setattr(png_fast, "decode", lambda data: calls.append(len(data)))
    rgb, palette = _png(PHOTO), _png(PHOTO.convert("P"))

    inspect_image(rgb)
    inspect_image(palette)

    assert calls == [len(rgb)]


def test_both_paths_give_the_same_info():
    data = _png(PHOTO)
    fast = inspect_image(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(png_fast, "applies", lambda data: False)
        slow = inspect_image(data)

    assert fast == slow


def test_a_corrupt_pixel_stream_is_rejected_like_pillow_rejects_it():
    data = bytearray(_png(PHOTO))
    data[len(data) // 2] ^= 0xFF  # inside IDAT: a broken deflate stream or checksum
    assert png_fast.applies(bytes(data))

    with pytest.raises(ImageRejected, match="corrupt"):
        inspect_image(bytes(data))
    with pytest.raises(OSError), Image.open(io.BytesIO(bytes(data))) as img:
        img.load()


def test_missing_pixel_rows_are_rejected():
    """Well framed chunks, but the deflate stream holds half the rows the header promises."""
    data = _png(PHOTO)
    raw = zlib.decompress(b"".join(_idat_bodies(data)))
    short = zlib.compress(raw[: len(raw) // 2])
    header = data[: 8 + 25]  # signature and IHDR
    forged = header + _chunk(b"IDAT", short) + _chunk(b"IEND", b"")
    assert png_fast.applies(forged)

    with pytest.raises(ImageRejected, match="truncated or corrupt"):
        inspect_image(forged)


def test_orientation_read_at_open_matches_pillows_after_loading():
    exif = _exif_orientation(6)
    early = _png(PHOTO, exif=exif)  # Pillow writes eXIf before the pixels
    assert png_fast.applies(early)

    info = inspect_image(early)

    assert (info.width, info.height, info.orientation) == (65, 97, 6)


def test_late_exif_still_turns_the_image():
    late = _with_chunk_after_pixels(_png(PHOTO), b"eXIf", _exif_orientation(8))

    info = inspect_image(late)

    assert (info.width, info.height, info.orientation) == (65, 97, 8)


def test_the_decoders_have_the_same_limits(monkeypatch):
    """The pixel limit is checked on the header, before either decoder runs."""
    monkeypatch.setattr(png_fast, "decode", _never)
    with pytest.raises(ImageRejected, match="over the limit"):
        inspect_image(_png(PHOTO), images.ImageLimits(max_pixels=97 * 65 - 1))


def _never(data: bytes) -> None:
    raise AssertionError("decoded an image over the limit")


def _idat_bodies(data: bytes) -> list[bytes]:
    bodies, position = [], 8
    while position < len(data):
        length, kind = struct.unpack_from(">I4s", data, position)
        if kind == b"IDAT":
            bodies.append(data[position + 8 : position + 8 + length])
        position += 12 + length
    return bodies
