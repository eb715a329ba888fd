import hashlib
import io
import struct
import warnings
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from skimage.data import astronaut

from pairdiff.images import (
    DEFAULT_LIMITS,
    ImageInfo,
    ImageLimits,
    ImageRejected,
    format_sizes,
    inspect_image,
    make_thumbnail,
)

MIB = 1024**2


def _photo(width: int = 300, height: int = 200) -> Image.Image:
    return Image.fromarray(astronaut()[:height, :width])


def _encode(img: Image.Image, fmt: str, **params: object) -> bytes:
    out = io.BytesIO()
    img.save(out, format=fmt, **params)
    return out.getvalue()


def _with_orientation(img: Image.Image, fmt: str, orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _encode(img, fmt, exif=exif)


def _png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose IHDR claims width×height; decoding it would fail as truncated."""
    data = bytearray(_encode(Image.new("L", (8, 8)), "PNG"))
    # Signature (8) + IHDR length (4) + type (4): the width and height start at byte 16.
    struct.pack_into(">II", data, 16, width, height)
    struct.pack_into(">I", data, 29, zlib.crc32(data[12:29]))
    return bytes(data)


def _rejection(data: bytes, limits: ImageLimits = DEFAULT_LIMITS) -> str:
    with pytest.raises(ImageRejected) as info:
        inspect_image(data, limits)
    return str(info.value)


@pytest.mark.parametrize(
    ("fmt", "mime_type", "extension"),
    [
        ("PNG", "image/png", ".png"),
        ("JPEG", "image/jpeg", ".jpg"),
        ("WEBP", "image/webp", ".webp"),
        ("TIFF", "image/tiff", ".tiff"),
        ("BMP", "image/bmp", ".bmp"),
    ],
)
def test_inspect_accepts_allowed_formats_with_their_size(fmt, mime_type, extension):
    data = _encode(_photo(300, 200), fmt)

    assert inspect_image(data) == ImageInfo(
        format=fmt,
        mime_type=mime_type,
        extension=extension,
        width=300,
        height=200,
        orientation=1,
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
    )


def test_inspect_hashes_the_raw_bytes():
    data = _encode(_photo(), "JPEG", quality=90)

    info = inspect_image(data)

    assert (info.sha256, info.size_bytes) == (hashlib.sha256(data).hexdigest(), len(data))


def test_inspect_rejects_gif_by_content():
    assert _rejection(_encode(_photo(), "GIF")) == (
        "format GIF is not allowed (allowed: JPEG, PNG, WEBP, TIFF, BMP)"
    )


def test_inspect_uses_the_allowed_formats_of_the_limits():
    limits = ImageLimits(formats=frozenset({"PNG"}))

    assert _rejection(_encode(_photo(), "JPEG"), limits) == (
        "format JPEG is not allowed (allowed: PNG)"
    )


@pytest.mark.parametrize(
    "data",
    [b"this is a text file named photo.png\n", b"%PDF-1.7\n", b"\x00" * 64],
    ids=["text", "pdf", "zeros"],
)
def test_inspect_rejects_non_images(data):
    assert _rejection(data) == "not an image (could not be decoded)"


def test_inspect_rejects_an_empty_file():
    assert _rejection(b"") == "not an image (empty file)"


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "TIFF", "BMP"])
def test_inspect_rejects_truncated_images(fmt):
    data = _encode(_photo(), fmt)

    assert _rejection(data[: len(data) // 2]).startswith("image is truncated or corrupt: ")


@pytest.mark.parametrize("fmt", ["PNG", "WEBP", "TIFF"])
def test_inspect_rejects_animated_and_multi_page_images(fmt):
    frames = [_photo(), _photo().transpose(Image.Transpose.FLIP_LEFT_RIGHT)]
    data = _encode(frames[0], fmt, save_all=True, append_images=frames[1:])

    assert _rejection(data) == (
        f"image has 2 frames; animated or multi-page {fmt} images are not allowed"
    )


def test_inspect_accepts_multi_picture_jpeg_as_its_first_image():
    # Phones write MPO (a JPEG plus depth/preview frames); browsers show the first one.
    frames = [_photo(300, 200), _photo(150, 100)]
    data = _encode(frames[0], "MPO", save_all=True, append_images=frames[1:])

    info = inspect_image(data)

    assert (info.format, info.mime_type, info.width, info.height) == (
        "JPEG",
        "image/jpeg",
        300,
        200,
    )


def test_inspect_rejects_pixels_over_limit_without_decoding():
    # Decoding would fail as truncated: the pixel message proves the header check ran first.
    assert _rejection(_png_claiming(8000, 6000)) == (
        "image is 8000×6000 = 48.0 MP, over the limit of 40.0 MP"
    )


@pytest.mark.parametrize(
    ("width", "height", "message"),
    [
        (10_000, 10_000, "image is 10000×10000 = 100.0 MP, over the limit of 40.0 MP"),
        (30_000, 30_000, "image is 900.0 MP, over the limit of 40.0 MP"),
    ],
    ids=["pillow-warns", "pillow-refuses"],
)
def test_inspect_turns_pillow_bomb_checks_into_rejections(width, height, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _rejection(_png_claiming(width, height)) == message


def test_inspect_with_a_higher_pixel_limit_still_never_leaks_bomb_warnings():
    limits = ImageLimits(max_pixels=10**9)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warned = _rejection(_png_claiming(10_000, 10_000), limits)
        refused = _rejection(_png_claiming(30_000, 30_000), limits)

    assert warned.startswith("image is truncated or corrupt: ")
    assert refused == "image is 900.0 MP, over the limit of 179.0 MP"


def test_inspect_reports_exact_pixels_when_rounding_would_hide_the_excess():
    assert _rejection(_png_claiming(8000, 5001)) == (
        "image is 8000×5001 = 40,008,000 pixels, over the limit of 40,000,000 pixels"
    )


def test_inspect_rejects_bytes_over_the_limit_before_opening():
    assert _rejection(b"\x00" * int(60.2 * MIB)) == "file is 60.2 MB, over the limit of 50.0 MB"


def test_inspect_rejects_a_real_image_over_a_small_byte_limit():
    data = _encode(_photo(), "PNG")

    assert _rejection(data, ImageLimits(max_bytes=1000)) == (
        f"file is {len(data) / 1024:.1f} KB, over the limit of 1000 bytes"
    )


@pytest.mark.parametrize(
    ("size", "limit", "expected"),
    [
        (int(60.2 * MIB), 50 * MIB, ("60.2 MB", "50.0 MB")),
        (50 * MIB + 1, 50 * MIB, ("52,428,801 bytes", "52,428,800 bytes")),
        (1536, 1000, ("1.5 KB", "1000 bytes")),
        (25 * 1024**3, 20 * 1024**3, ("25.0 GB", "20.0 GB")),
    ],
)
def test_format_sizes(size, limit, expected):
    assert format_sizes(size, limit) == expected


@pytest.mark.parametrize(
    ("orientation", "width", "height"),
    [(1, 300, 200), (2, 300, 200), (3, 300, 200), (4, 300, 200)]
    + [(5, 200, 300), (6, 200, 300), (7, 200, 300), (8, 200, 300)],
)
def test_inspect_reports_the_displayed_size_of_exif_oriented_jpeg(orientation, width, height):
    info = inspect_image(_with_orientation(_photo(300, 200), "JPEG", orientation))

    assert (info.width, info.height, info.orientation) == (width, height, orientation)


@pytest.mark.parametrize("fmt", ["PNG", "WEBP", "TIFF"])
def test_inspect_reports_the_displayed_size_of_other_oriented_formats(fmt):
    info = inspect_image(_with_orientation(_photo(300, 200), fmt, 6))

    assert (info.width, info.height, info.orientation) == (200, 300, 6)


def test_inspect_treats_unreadable_exif_as_no_orientation():
    data = _encode(_photo(300, 200), "JPEG", exif=b"Exif\x00\x00MM\x00\x2a\xff\xff")

    info = inspect_image(data)

    assert (info.width, info.height, info.orientation) == (300, 200, 1)


_SAMPLES = [_encode(_photo(64, 48), fmt) for fmt in ("PNG", "JPEG", "WEBP", "TIFF", "BMP")]
_MAGIC = [sample[:16] for sample in _SAMPLES] + [b"GIF89a", b"II*\x00", b"BM", b"RIFF"]
_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(data: bytes) -> ImageInfo | ImageRejected:
    try:
        return inspect_image(data)
    except ImageRejected as exc:
        return exc


@_FUZZ
@given(st.binary(max_size=4096))
def test_inspect_raises_only_image_rejected_on_random_bytes(data):
    assert isinstance(_outcome(data), ImageInfo | ImageRejected)


@_FUZZ
@given(st.sampled_from(_MAGIC), st.binary(max_size=2048))
def test_inspect_raises_only_image_rejected_on_junk_after_a_real_header(magic, tail):
    assert isinstance(_outcome(magic + tail), ImageInfo | ImageRejected)


def _pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img)


@_FUZZ
@given(st.sampled_from(_SAMPLES), st.floats(min_value=0, max_value=1, exclude_max=True))
def test_inspect_rejects_truncations_that_lose_pixels(sample, fraction):
    cut = sample[: int(len(sample) * fraction)]

    outcome = _outcome(cut)

    # Cutting only a trailer (PNG's IEND, JPEG's EOI) loses nothing; browsers show it too.
    if isinstance(outcome, ImageInfo):
        assert np.array_equal(_pixels(cut), _pixels(sample))
    else:
        assert isinstance(outcome, ImageRejected)


@_FUZZ
@given(st.sampled_from(_SAMPLES), st.data())
def test_inspect_raises_only_image_rejected_on_damaged_images(sample, data):
    damaged = bytearray(sample)
    for _ in range(data.draw(st.integers(1, 8))):
        damaged[data.draw(st.integers(0, len(damaged) - 1))] = data.draw(st.integers(0, 255))

    assert isinstance(_outcome(bytes(damaged)), ImageInfo | ImageRejected)


def _thumbnail(data: bytes, max_side: int = 320) -> Image.Image:
    thumb = Image.open(io.BytesIO(make_thumbnail(data, max_side)))
    assert (thumb.format, thumb.mode) == ("JPEG", "RGB")
    return thumb


def test_thumbnail_is_a_small_jpeg_keeping_the_aspect_ratio():
    thumb = _thumbnail(_encode(_photo(512, 300), "PNG"))

    assert thumb.size == (320, 188)


def test_thumbnail_never_enlarges():
    assert _thumbnail(_encode(_photo(100, 50), "PNG")).size == (100, 50)


def test_thumbnail_honours_max_side():
    assert max(_thumbnail(_encode(_photo(512, 300), "WEBP"), max_side=64).size) == 64


def test_thumbnail_is_upright_for_exif_orientation_6():
    stored = Image.new("RGB", (640, 400), "red")
    stored.paste((0, 0, 255), (320, 0, 640, 400))

    thumb = _thumbnail(_with_orientation(stored, "JPEG", 6))

    # Orientation 6 turns the stored image a quarter clockwise: its left half goes on top.
    assert thumb.size == (200, 320)
    top, bottom = thumb.getpixel((100, 40)), thumb.getpixel((100, 280))
    assert top[0] > 200 > top[2] and bottom[2] > 200 > bottom[0]


def _mean(thumb: Image.Image) -> float:
    return float(np.asarray(thumb).mean())


def _gradient16() -> Image.Image:
    return Image.fromarray(np.tile(np.linspace(0, 65535, 256, dtype=np.uint16), (64, 1)))


def _palette_with_transparency() -> Image.Image:
    img = Image.new("P", (64, 64), 0)
    img.putpalette([0, 0, 0] * 256)
    img.info["transparency"] = 0
    return img


@pytest.mark.parametrize(
    ("img", "fmt", "low", "high"),
    [
        (Image.new("RGBA", (64, 64), (0, 0, 0, 0)), "PNG", 250, 255),
        (Image.new("LA", (64, 64), (0, 0)), "PNG", 250, 255),
        (_palette_with_transparency(), "PNG", 250, 255),
        (_gradient16(), "PNG", 110, 145),
        (_gradient16().convert("I"), "TIFF", 110, 145),
        (Image.fromarray(np.full((64, 64), 0.5, dtype=np.float32)), "TIFF", 120, 136),
        (Image.new("1", (64, 64), 1), "BMP", 250, 255),
        (Image.new("L", (64, 64), 128), "JPEG", 120, 136),
        (Image.new("CMYK", (64, 64), (0, 0, 0, 0)), "JPEG", 245, 255),
        (Image.new("CMYK", (64, 64), (0, 0, 0, 0)), "TIFF", 245, 255),
    ],
    ids=[
        "rgba",
        "la",
        "p-transparent",
        "grey16",
        "int32",
        "float",
        "1bit",
        "grey",
        "cmyk-jpeg",
        "cmyk-tiff",
    ],
)
def test_thumbnail_converts_every_mode_to_sensible_rgb(img, fmt, low, high):
    assert low <= _mean(_thumbnail(_encode(img, fmt))) <= high


def test_thumbnail_rejects_non_images():
    with pytest.raises(ImageRejected):
        make_thumbnail(b"not an image")


def test_thumbnail_needs_a_positive_max_side():
    with pytest.raises(ValueError, match="max_side"):
        make_thumbnail(_encode(_photo(), "PNG"), max_side=0)
