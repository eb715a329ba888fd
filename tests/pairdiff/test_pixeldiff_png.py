"""Plain PNGs are decoded by libspng to exactly Pillow's pixels; every other file stays Pillow's."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageOps, PngImagePlugin
from skimage import data as samples

from pairdiff import png_fast as png
from pairdiff.pixeldiff.decode import DecodeError, _rgb, decode_image


def _photo(size: int = 300) -> Image.Image:
    return Image.fromarray(samples.astronaut()).resize((size, size - 37))


def _save(img: Image.Image, **params) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG", **params)
    return out.getvalue()


def _pillows(data: bytes) -> np.ndarray:
    """What decoding gave before the fast path: Pillow's pixels, EXIF-rotated, in RGB."""
    return np.asarray(_rgb(ImageOps.exif_transpose(Image.open(io.BytesIO(data)))))


def _chunks() -> PngImagePlugin.PngInfo:
    """Colour-space and size chunks a camera or editor writes; none changes the pixels."""
    info = PngImagePlugin.PngInfo()
    info.add(b"gAMA", (45455).to_bytes(4, "big"))
    info.add(b"cHRM", bytes(32))
    info.add(b"sRGB", b"\x00")
    return info


def _decoded(data: bytes) -> np.ndarray:
    return np.asarray(decode_image(data, 40_000_000, "A"))


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA"])
@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_a_plain_png_takes_the_fast_path_to_pillows_pixels(mode, level):
    img = _photo().convert(mode)
    if "A" in mode:  # an alpha ramp, so that compositing on white matters
        alpha = np.tile(np.linspace(0, 255, img.width).astype(np.uint8), (img.height, 1))
        img.putalpha(Image.fromarray(alpha))
    data = _save(img, compress_level=level, pnginfo=_chunks(), dpi=(72, 72))
    assert png.plain_mode(data) == mode
    assert np.array_equal(png.decode(data), np.asarray(Image.open(io.BytesIO(data))))
    assert np.array_equal(_decoded(data), _pillows(data))


def test_a_photos_worth_of_idat_chunks_decodes_the_same():
    img = _photo(1024)
    # Many small IDAT chunks, as libpng's writers make them.
    PngImagePlugin.ImageFile.MAXBLOCK, old = 8192, PngImagePlugin.ImageFile.MAXBLOCK
    try:
        data = _save(img, compress_level=1)
    finally:
        PngImagePlugin.ImageFile.MAXBLOCK = old
    assert png.plain_mode(data) == "RGB"
    assert np.array_equal(_decoded(data), _pillows(data))


def _exif_rotated() -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6
    return _save(_photo(), exif=exif)


def _with_text() -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "may be XMP holding an orientation")
    return _save(_photo(), pnginfo=info)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(_exif_rotated(), id="exif orientation"),
        pytest.param(_with_text(), id="text chunk"),
        pytest.param(_save(_photo().convert("P")), id="palette"),
        pytest.param(_save(_photo(), transparency=(0, 0, 0)), id="transparency key"),
        pytest.param(
            _save(Image.fromarray(np.arange(9000, dtype=np.uint16).reshape(90, 100))), id="16 bits"
        ),
        pytest.param(_save(_photo().convert("1")), id="1 bit"),
        pytest.param(_save(_photo().convert("LA")), id="grey and alpha"),
        pytest.param(b"GIF89a, not a PNG", id="not a png"),
    ],
)
def test_other_files_are_left_to_pillow_and_decode_as_before(data):
    assert png.plain_mode(data) is None
    if data.startswith(b"\x89PNG"):
        assert np.array_equal(_decoded(data), _pillows(data))


def test_an_exif_rotated_png_is_still_shown_upright():
    data = _exif_rotated()
    stored = Image.open(io.BytesIO(data))
    assert decode_image(data, 40_000_000, "A").size == (stored.height, stored.width)


@pytest.mark.parametrize("cut", [200, 5000, -20, -13])
def test_a_truncated_png_decodes_or_fails_as_pillow_does(cut):
    data = _save(_photo())[:cut]
    assert png.plain_mode(data) is None  # no IEND: not plain
    try:
        expected = _pillows(data)
    except OSError:
        with pytest.raises(DecodeError):
            decode_image(data, 40_000_000, "A")
    else:
        assert np.array_equal(_decoded(data), expected)


def test_a_bad_pixel_checksum_decodes_as_pillow_decodes_it():
    data = bytearray(_save(_photo()))
    data[-13] ^= 0xFF  # the last IDAT chunk's checksum, which neither decoder checks
    assert png.plain_mode(bytes(data)) == "RGB"
    assert np.array_equal(_decoded(bytes(data)), _pillows(bytes(data)))


def test_bytes_libspng_refuses_fall_back_to_pillow(monkeypatch):
    def refuse(data: bytes) -> np.ndarray:
        raise ValueError("libspng refuses")

    data = _save(_photo())
    monkeypatch.setattr(png, "decode", refuse)
    assert np.array_equal(_decoded(data), _pillows(data))
