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
    assert np.array_equal(png_fast.decode(png), _pillow_pixels(png))
    assert np.array_equal(png_fast.imagecodecs.spng_decode(stored), _pillow_pixels(png))


def test_the_stored_stream_is_a_valid_zlib_stream_of_the_same_rows():
    data = _png(photo(size=(700, 400)), compress_level=1)
    stored = png_fast.restored(data)
    assert stored is not None
    (body,) = _idat_bodies(stored.tobytes())
    assert zlib.decompress(body) == zlib.decompress(b"".join(_idat_bodies(data)))


def _rows(data: bytes) -> bytes:
    return zlib.decompress(b"".join(_idat_bodies(data)))


@pytest.mark.parametrize(
    "forge",
    [
        lambda d: d[: len(d) // 2] + bytes([d[len(d) // 2] ^ 0xFF]) + d[len(d) // 2 + 1 :],
        lambda d: _forged(d, zlib.compress(_rows(d)[:-7])),  # rows missing
        lambda d: _forged(d, zlib.compress(_rows(d) + bytes(40))),  # rows to spare
        lambda d: _forged(d, zlib.compress(_rows(d))[:-1] + b"\x00"),  # bad Adler-32
        lambda d: d[:28] + b"\x01" + d[29:],  # interlaced (and a bad IHDR CRC)
    ],
    ids=["bad-crc", "short", "long", "adler", "interlaced"],
)
def test_anything_unusual_goes_to_libspng_as_it_came(forge):
    data = forge(_png(PHOTO))
    assert png_fast.restored(data) is None


def test_a_bad_idat_crc_keeps_libspngs_verdict():
    data = bytearray(_png(PHOTO))
    data[len(data) // 2] ^= 0xFF
    assert png_fast.restored(bytes(data)) is None
    with pytest.raises(RuntimeError):
        png_fast.decode(bytes(data))


def test_rows_inflated_into_a_buffer_of_their_own_are_copied_in(monkeypatch):
    """Should the codec ever return the rows instead of writing them where it was told."""
    real = png_fast.imagecodecs.deflate_decode
    monkeypatch.setattr(
        png_fast.imagecodecs, "deflate_decode", lambda data, out: bytes(real(data, out=len(out)))
    )
    png = _png(PHOTO, compress_level=1)
    assert np.array_equal(png_fast.decode(png), _pillow_pixels(png))


# The libdeflate route (png_fast.restored), seen from decode: what it accepts, libspng accepts
# with the same pixels; whatever it does not accept gets libspng's verdict on the original bytes.


def _forged(data: bytes, stream: bytes, *, crc_ok: bool = True) -> bytes:
    """The PNG with its pixel stream replaced by ``stream`` in one IDAT chunk."""
    idat = _chunk(b"IDAT", stream)
    if not crc_ok:
        idat = idat[:-4] + bytes(b ^ 0xFF for b in idat[-4:])
    return data[: 8 + 25] + idat + _chunk(b"IEND", b"")


def _verdict(data: bytes, decode=png_fast.decode) -> str:
    """What ``decode`` says of the bytes: "ok", or its error's message."""
    try:
        decode(data)
    except Exception as exc:
        return str(exc)
    return "ok"


def _spng_verdict(data: bytes) -> str:
    """What libspng says of the bytes directly (the route before the libdeflate one)."""
    return _verdict(data, png_fast.imagecodecs.spng_decode)


@pytest.mark.parametrize(
    "png",
    [
        _png(PHOTO),
        _png(PHOTO.convert("RGBA")),
        _png(PHOTO.convert("L")),
        _png(PHOTO, compress_level=9, optimize=True),
        _png(photo(size=(300, 250))),  # scanlines over one stored block (65,535 bytes)
    ],
    ids=["RGB", "RGBA", "L", "optimized", "several-blocks"],
)
def test_the_libdeflate_route_takes_plain_pngs_and_gives_the_same_pixels(png):
    stored = png_fast.restored(png)
    assert stored is not None
    assert np.array_equal(png_fast.decode(png), _pillow_pixels(png))
    assert np.array_equal(png_fast.decode(stored.tobytes()), _pillow_pixels(png))


def _corrupt_cases() -> dict[str, bytes]:
    data = _png(PHOTO)
    stream = b"".join(_idat_bodies(data))
    raw = zlib.decompress(stream)
    flipped = bytearray(stream)
    flipped[len(flipped) // 2] ^= 0xFF
    bad_adler = stream[:-1] + bytes([stream[-1] ^ 1])
    bad_filter = zlib.compress(b"\x07" + raw[1:])
    return {
        "flipped byte, CRC fixed": _forged(data, bytes(flipped)),
        "bad Adler-32": _forged(data, bad_adler),
        "cut short": _forged(data, stream[: len(stream) // 2]),
        "rows missing": _forged(data, zlib.compress(raw[: len(raw) // 2])),
        "one byte missing": _forged(data, zlib.compress(raw[:-1])),
        "bad filter byte": _forged(data, bad_filter),
    }


@pytest.mark.parametrize("case", list(_corrupt_cases()))
def test_a_corrupt_idat_is_rejected_with_libspngs_own_verdict(case):
    data = _corrupt_cases()[case]
    assert png_fast.applies(data)
    expected = _spng_verdict(data)
    assert expected != "ok"

    assert _verdict(data) == expected
    with pytest.raises(ImageRejected, match="truncated or corrupt") as caught:
        inspect_image(data)
    assert expected in str(caught.value)


def test_the_libdeflate_route_declines_what_it_cannot_vouch_for():
    data = _png(PHOTO)
    stream = b"".join(_idat_bodies(data))
    raw = zlib.decompress(stream)
    small_window = zlib.compressobj(6, zlib.DEFLATED, 9)  # CINFO 1: zlib checks distances
    longer = zlib.compress(raw + b"\0" * 7)  # libspng ignores rows past the last one
    split = data[: 8 + 25] + _chunk(b"IDAT", stream[:100]) + _chunk(b"tEXt", b"a\0b")
    split += _chunk(b"IDAT", stream[100:]) + _chunk(b"IEND", b"")
    ihdr = bytearray(data[16:29])
    ihdr[12] = 1  # Adam7 (Pillow writes no interlaced PNG)
    interlaced = data[:8] + _chunk(b"IHDR", bytes(ihdr)) + data[33:]
    declined = {
        "small window": _forged(data, small_window.compress(raw) + small_window.flush()),
        "longer stream": _forged(data, longer),
        "split IDAT": split,
        "interlaced": interlaced,
        # imagecodecs' libspng does not check IDAT CRCs (Pillow neither): accepted as before,
        # though the route declines it, so a libspng that checks them would still be heard.
        "bad IDAT CRC": _forged(data, stream, crc_ok=False),
    }
    for name, forged in declined.items():
        assert png_fast.restored(forged) is None, name
        assert _verdict(forged) == _spng_verdict(forged), name
    # libspng takes a stream longer than the rows, and so does decode, as before.
    assert _verdict(declined["longer stream"]) == "ok"


def test_big_images_take_the_original_route(monkeypatch):
    data = _png(PHOTO)
    monkeypatch.setattr(png_fast, "_FAST_MAX_RAW", 65 * (1 + 97 * 3) - 1)
    assert png_fast.restored(data) is None
    assert np.array_equal(png_fast.decode(data), _pillow_pixels(data))
