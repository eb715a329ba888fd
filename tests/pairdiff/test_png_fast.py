"""libspng stands in for Pillow's PNG load only where it gives the same pixels and verdicts."""

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image, PngImagePlugin

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


def _colour_chunks() -> PngImagePlugin.PngInfo:
    info = PngImagePlugin.PngInfo()
    info.add(b"gAMA", (45455).to_bytes(4, "big"))
    info.add(b"sRGB", b"\x00")
    return info


# 21,845 pixels of RGB: a row of 65,535 bytes and its filter byte, just over one stored block.
_BLOCK_EDGE = Image.fromarray(np.asarray(photo(size=(21845, 3)), np.uint8))


@pytest.mark.parametrize(
    "png",
    [
        _png(PHOTO),
        _png(PHOTO.convert("RGBA")),
        _png(PHOTO.convert("L")),
        _png(PHOTO, compress_level=9, optimize=True),  # every filter type
        _png(PHOTO, compress_level=0),
        _png(PHOTO, pnginfo=_colour_chunks()),  # chunks before the pixels, kept as they are
        _png(photo(size=(1, 1))),
        _png(_BLOCK_EDGE),
        _png(photo(size=(700, 400)), compress_level=1),  # many IDAT chunks
    ],
    ids=["RGB", "RGBA", "L", "optimized", "stored", "colour", "1x1", "block-edge", "IDATs"],
)
def test_pixels_by_way_of_stored_data_are_pillows_to_the_byte(png):
    stored = png_fast.restored(png)
    assert stored is not None
    kinds = [k for k in png_fast._chunk_kinds(stored.tobytes()) or []]
    assert kinds.count(b"IDAT") == 1 and kinds[-1] == b"IEND"
    assert np.array_equal(png_fast.pixels(png), _pillow_pixels(png))
    assert np.array_equal(png_fast.pixels(png), png_fast.decode(png))


def test_the_stored_stream_is_a_valid_zlib_stream_of_the_same_rows():
    data = _png(photo(size=(700, 400)), compress_level=1)
    stored = png_fast.restored(data)
    assert stored is not None
    (body,) = _idat_bodies(stored.tobytes())
    assert zlib.decompress(body) == zlib.decompress(b"".join(_idat_bodies(data)))


def _forged(data: bytes, stream: bytes) -> bytes:
    return data[: 8 + 25] + _chunk(b"IDAT", stream) + _chunk(b"IEND", b"")


def _rows(data: bytes) -> bytes:
    return zlib.decompress(b"".join(_idat_bodies(data)))


@pytest.mark.parametrize(
    "forge",
    [
        lambda d: d[: len(d) // 2] + bytes([d[len(d) // 2] ^ 0xFF]) + d[len(d) // 2 + 1 :],
        lambda d: _forged(d, zlib.compress(_rows(d)[:-7])),  # rows missing
        lambda d: _forged(d, zlib.compress(_rows(d) + bytes(40))),  # rows to spare
        lambda d: _forged(d, zlib.compress(_rows(d))[:-1] + b"\x00"),  # bad Adler-32
        lambda d: d[:-12] + _chunk(b"tIME", bytes(7)) + d[-12:],  # not a plain PNG
        lambda d: d[:28] + b"\x01" + d[29:],  # interlaced (and a bad IHDR CRC)
    ],
    ids=["bad-crc", "short", "long", "adler", "tIME", "interlaced"],
)
def test_anything_unusual_goes_to_libspng_as_it_came(forge):
    data = forge(_png(PHOTO))
    assert png_fast.restored(data) is None


def test_a_bad_idat_crc_keeps_libspngs_verdict():
    data = bytearray(_png(PHOTO))
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(RuntimeError):
        png_fast.decode(bytes(data))
    with pytest.raises(RuntimeError):
        png_fast.pixels(bytes(data))


def test_rows_inflated_into_a_buffer_of_their_own_are_copied_in(monkeypatch):
    """Should the codec ever return the rows instead of writing them where it was told."""
    real = png_fast.imagecodecs.deflate_decode
    monkeypatch.setattr(
        png_fast.imagecodecs, "deflate_decode", lambda data, out: bytes(real(data, out=len(out)))
    )
    png = _png(PHOTO, compress_level=1)
    assert np.array_equal(png_fast.pixels(png), _pillow_pixels(png))
