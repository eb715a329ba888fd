"""Decoding untrusted bytes and bringing A and B into one working frame (and boxes back)."""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageOps

from pairdiff import png_fast
from pairdiff.geometry import Box

Xyxy = tuple[int, int, int, int]


class DecodeError(ValueError):
    """Bytes that are not a usable image; str() is the reason recorded on the prediction."""


def decode(data: object, max_pixels: int, side: str) -> np.ndarray:
    """RGB uint8 array of the image as displayed (EXIF orientation applied)."""
    return np.asarray(decode_image(data, max_pixels, side), np.uint8)


def decode_image(data: object, max_pixels: int, side: str) -> Image.Image:
    """The image as displayed (EXIF orientation applied), in RGB; kept in Pillow so that
    shrinking it to the working frame copies the full-size pixels no more than once."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError(f"image {side}: expected bytes, got {type(data).__name__}")
    if not data:
        raise DecodeError(f"image {side}: empty file")
    raw = bytes(data)
    try:
        # Pillow warns about odd EXIF or bombs; the outcome (an image or an error) is what counts.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            img = Image.open(io.BytesIO(raw))
            if img.width * img.height > max_pixels:
                reason = f"image {side}: {img.width}×{img.height} is over {max_pixels:,} pixels"
                img.close()
                raise DecodeError(reason)
            # Pillow has read the header (and refused bombs); a plain PNG, which has no EXIF
            # orientation, is decoded faster by libspng, to the same pixels.
            fast = _plain_png(raw, img) if img.format == "PNG" else None
            if fast is not None:
                img.close()
                return _rgb(fast)
            # In place: the decoded copy is ours (the caller's bytes are never touched), and
            # copying a 1024² image only to read it costs as much as decoding it.
            ImageOps.exif_transpose(img, in_place=True)
            return _rgb(img)
    except DecodeError:
        raise
    except Exception as exc:  # Pillow raises many types on hostile bytes
        reason = str(exc) or type(exc).__name__
        raise DecodeError(f"image {side}: cannot decode ({reason})") from exc


def _plain_png(data: bytes, img: Image.Image) -> Image.Image | None:
    """libspng's pixels of a plain PNG, or None when it does not qualify, libspng refuses it,
    or libspng gives something other than Pillow's size and mode (then Pillow decides)."""
    if png_fast.plain_mode(data) != img.mode:
        return None
    try:
        pixels = png_fast.decode(data)
    except Exception:  # hostile bytes: Pillow's own decoder gives the error
        return None
    bands = len(img.mode)
    shape = (img.height, img.width) if bands == 1 else (img.height, img.width, bands)
    if pixels.dtype != np.uint8 or pixels.shape != shape:
        return None
    return Image.fromarray(pixels, img.mode)


def _rgb(img: Image.Image) -> Image.Image:
    if img.mode == "RGB":
        return img
    if img.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        # Wide greyscale: stretch to 8 bits rather than clipping everything at 255.
        values = np.nan_to_num(np.asarray(img, np.float64))
        low, high = float(values.min()), float(values.max())
        scale = 255.0 / (high - low) if high > low else 0.0
        grey = np.rint((values - low) * scale).astype(np.uint8)
        return Image.fromarray(np.repeat(grey[..., None], 3, axis=-1))
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    if img.mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        # Transparent pixels on white, the way the annotation workspace shows them.
        white = Image.new("RGBA", img.size, (255, 255, 255, 255))
        img = Image.alpha_composite(white, img.convert("RGBA"))
    return img.convert("RGB")


@dataclass(frozen=True)
class Frames:
    """A and B resampled into one working frame, and the way back to each side's pixels."""

    a: np.ndarray  # (h, w, 3) uint8
    b: np.ndarray
    size_a: tuple[int, int]  # (width, height) as displayed
    size_b: tuple[int, int]

    @property
    def shape(self) -> tuple[int, int]:
        return self.a.shape[0], self.a.shape[1]

    @property
    def same_size(self) -> bool:
        return self.size_a == self.size_b

    def box_a(self, box: Xyxy) -> Box:
        return _scale_box(box, self.shape, self.size_a)

    def box_b(self, box: Xyxy) -> Box:
        return _scale_box(box, self.shape, self.size_b)

    def whole_a(self) -> Box:
        return Box(0, 0, *self.size_a)

    def whole_b(self) -> Box:
        return Box(0, 0, *self.size_b)


def common_frame(a: np.ndarray | Image.Image, b: np.ndarray | Image.Image, max_side: int) -> Frames:
    """Both images in A's aspect, no larger than max_side and never upsampled beyond the
    smaller of the two: comparing a sharp A with an enlarged, blurry B would light up every
    edge, whereas at B's own resolution a pure resize leaves nothing to see."""
    img_a, img_b = _image(a), _image(b)
    wa, ha = img_a.size
    wb, hb = img_b.size
    scale = min(1.0, max_side / max(wa, ha), wb / wa, hb / ha)
    size = (max(1, round(wa * scale)), max(1, round(ha * scale)))
    # Same-size images get the same cheap box (area) average, which keeps their differences as
    # they were and costs a fraction of Lanczos at 1024² → 512². Different sizes were most
    # likely resized with a good filter; matching it keeps a pure resize from lighting up.
    kernel = Image.Resampling.BOX if (wa, ha) == (wb, hb) else Image.Resampling.LANCZOS
    return Frames(_resize(img_a, size, kernel), _resize(img_b, size, kernel), (wa, ha), (wb, hb))


def _image(img: np.ndarray | Image.Image) -> Image.Image:
    return img if isinstance(img, Image.Image) else Image.fromarray(img)


def _resize(img: Image.Image, size: tuple[int, int], kernel: Image.Resampling) -> np.ndarray:
    if img.size != size:
        factor = img.width // size[0]
        if kernel == Image.Resampling.BOX and img.size == (size[0] * factor, size[1] * factor):
            # A whole-number shrink: the same box average, several times faster.
            img = img.reduce(factor)
        else:
            img = img.resize(size, kernel)
    return np.asarray(img, np.uint8)


def _scale_box(box: Xyxy, shape: tuple[int, int], size: tuple[int, int]) -> Box:
    """A working-frame box in a side's own pixels: whole pixels, outward, inside the frame."""
    h, w = shape
    width, height = size
    sx, sy = width / w, height / h
    # The epsilon keeps an exact multiple (e.g. 10 * 2.0) from rounding outward by float noise.
    x1 = min(max(0, math.floor(box[0] * sx + 1e-6)), width - 1)
    y1 = min(max(0, math.floor(box[1] * sy + 1e-6)), height - 1)
    x2 = max(min(width, math.ceil(box[2] * sx - 1e-6)), x1 + 1)
    y2 = max(min(height, math.ceil(box[3] * sy - 1e-6)), y1 + 1)
    return Box(x1, y1, x2, y2)
