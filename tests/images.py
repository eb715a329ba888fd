"""Small real images made in memory from scikit-image's sample photos."""

from __future__ import annotations

import io
from functools import cache

import numpy as np
from PIL import Image
from skimage import data as samples


@cache
def _photo(name: str) -> np.ndarray:
    array = getattr(samples, name)()
    return np.stack([array] * 3, axis=-1) if array.ndim == 2 else array[..., :3]


def photo(
    name: str = "astronaut", *, size: tuple[int, int] = (96, 64), offset: int = 0
) -> Image.Image:
    """A crop of a sample photo, resized to `size` (width, height); `offset` varies the content."""
    array = _photo(name)
    crop = array[offset : offset + 256, offset : offset + 256]
    return Image.fromarray(crop).resize(size)


def encode(image: Image.Image, fmt: str = "PNG", **params) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def photo_bytes(
    name: str = "astronaut", *, size: tuple[int, int] = (96, 64), offset: int = 0, fmt: str = "PNG"
) -> bytes:
    return encode(photo(name, size=size, offset=offset), fmt)


def edited_pair(
    offset: int = 0, *, size: tuple[int, int] = (96, 64), name: str = "astronaut"
) -> tuple[bytes, bytes]:
    """A and B: one photo crop, and the same with a recoloured square (a real, local change)."""
    a = photo(name, size=size, offset=offset)
    b = np.asarray(a).copy()
    b[10:30, 20:40] = b[10:30, 20:40][..., ::-1]
    return encode(a), encode(Image.fromarray(b))


# Colour photos a factory pair is cut from in turn: releases keep every near-duplicate of one
# photo in one split, so crops a pixel apart of one photo would all be one source.
DISTINCT_PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")


def distinct_pair(n: int) -> tuple[bytes, bytes]:
    """The ``n``-th of a series of pairs whose images A are not near-duplicates of each other
    (a difference hash more than a few bits apart): the photo cycles, and crops of one photo
    lie 53 pixels apart (modulo 200)."""
    name = DISTINCT_PHOTOS[n % len(DISTINCT_PHOTOS)]
    return edited_pair((n // len(DISTINCT_PHOTOS) * 53) % 200, name=name)
