"""Replacing a printed word on the `page` photo."""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import Edit, Xyxy, change
from pairdiff.synth.ops import composite, feather, mask_box
from pairdiff.synth.photos import PAGE_WORDS, page_background, page_ink, photo

ndi = lazy_module("scipy.ndimage")

# Glyphs are drawn this many times larger than the target and shrunk, which gives the soft,
# anti-aliased strokes of a photographed page instead of hard bitmap edges.
_RENDER_SIZE = 160


@cache
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=_RENDER_SIZE)


def _ink(text: str) -> tuple[np.ndarray, int, int]:
    """Large rendering of `text`, cropped to its ink, and the ink's offset from the baseline
    origin (left, top), so two words rendered alike can be aligned on one baseline."""
    font = _font()
    pad = _RENDER_SIZE
    canvas = Image.new("L", (pad * 2 + _RENDER_SIZE * len(text), pad * 3))
    # A light stroke matches the heavier print of the photographed book.
    draw = ImageDraw.Draw(canvas)
    draw.text(
        (pad, pad * 2), text, fill=255, font=font, anchor="ls", stroke_width=1, stroke_fill=255
    )
    left, top, right, bottom = canvas.getbbox() or (0, 0, 1, 1)
    ink = np.asarray(canvas.crop((left, top, right, bottom)), np.float32) / 255.0
    return ink, left - pad, top - pad * 2


def _render_like(old: str, new: str, box: Xyxy) -> tuple[np.ndarray, int, int]:
    """Coverage of `new` as it would be printed where `old` fills `box`: same height, same
    letter width and same baseline; returned with its top-left (y, x) in the photo."""
    old_ink, old_left, old_top = _ink(old)
    new_ink, new_left, new_top = _ink(new)
    x1, y1, x2, y2 = box
    sy = (y2 - y1) / old_ink.shape[0]
    # The photographed typeface is wider than the default font; stretching by the measured
    # ratio keeps the new word's letters as wide as their neighbours'.
    sx = (x2 - x1) / old_ink.shape[1]
    # A longer word is squeezed into the old word's width rather than running into the next.
    sx = min(sx, (x2 - x1 + 1) / max(1, new_ink.shape[1] + new_left - old_left))
    fx = x1 + (new_left - old_left) * sx
    fy = y1 + (new_top - old_top) * sy
    w = max(1, round(new_ink.shape[1] * sx))
    h = max(1, round(new_ink.shape[0] * sy))
    small = Image.fromarray(new_ink).resize((w, h), Image.Resampling.BOX)
    cover = ndi.gaussian_filter(np.asarray(small, np.float32), 0.45)
    return np.clip(cover * 1.2, 0.0, 1.0), round(fy), round(fx)


def change_text(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    word = PAGE_WORDS[turn % len(PAGE_WORDS)]
    new = word.replacements[variant % len(word.replacements)]
    img = photo("page")
    out = img.copy()
    strong, y0, x0 = page_ink(word, 35.0)
    faint, _, _ = page_ink(word, 14.0)
    h, w = strong.shape
    ink_level = float(np.percentile(img[y0 : y0 + h, x0 : x0 + w, 0][strong], 20))

    hole = ndi.binary_dilation(faint | strong, iterations=1)
    paper = page_background()[y0 : y0 + h, x0 : x0 + w, None].repeat(3, axis=-1)
    # The paper is grainy; an erased word filled with the smooth background estimate would
    # leave a visibly clean ghost of the old word.
    paper = paper + rng.normal(0.0, 3.0, (h, w, 1))
    box_a = composite(out, paper, feather(hole, 0.6), y0, x0)

    cover, cy, cx = _render_like(word.text, new, mask_box(strong, y0, x0))
    cover[cover < 0.04] = 0.0
    ink = np.full(cover.shape + (3,), ink_level, np.float32)
    box_b = composite(out, ink, cover, cy, cx)
    return Edit(
        photo="page",
        image_a=img,
        image_b=out,
        instruction=f"Replace the word '{word.text}' with '{new}'.",
        changes=[
            change(
                "change_text",
                f"The word '{word.text}' changed to '{new}'.",
                "word",
                "word",
                [box_a],
                [box_b],
            )
        ],
        params={"old": word.text, "new": new},
    )
