"""Edits of appearance on any photo: colour, tint, noise, resolution, texture, light, text.

Same contract as `anyobjects`: (photo, analysis, generator, turn) → Edit or None.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from pairdiff.lazy import lazy_module
from pairdiff.synth.anyobjects import _size, entity, pick_region
from pairdiff.synth.base import Edit, Xyxy, change
from pairdiff.synth.looks import _TINTS
from pairdiff.synth.ops import cap, composite, feather, hue_name, to_u8, where, whole, window
from pairdiff.synth.regions import Analysis, Region, flat_window

ndi = lazy_module("scipy.ndimage")
color = lazy_module("skimage.color")


def _alpha(r: Region, pad: int = 3) -> tuple[np.ndarray, int, int]:
    """A soft alpha over the region, with its top-left (y, x)."""
    return feather(np.pad(r.mask, pad), 1.0), r.y0 - pad, r.x0 - pad


def _under(img: np.ndarray, alpha: np.ndarray, y: int, x: int, margin: int = 0) -> np.ndarray:
    h, w = alpha.shape
    return window(img, y - margin, x - margin, h + 2 * margin, w + 2 * margin).astype(np.float32)


def _local(
    kind: str,
    text: str,
    instruction: str,
    r: Region,
    img: np.ndarray,
    out: np.ndarray,
    box: Xyxy,
    **params: object,
) -> Edit:
    return Edit(
        photo="",
        image_a=img,
        image_b=out,
        instruction=instruction,
        changes=[change(kind, text, entity(r), entity(r), [box], [box])],
        params=params,
    )


def _global(
    kind: str, text: str, instruction: str, img: np.ndarray, out: np.ndarray, **params: object
) -> Edit:
    box = whole(img)
    return Edit(
        photo="",
        image_a=img,
        image_b=out,
        instruction=instruction,
        changes=[change(kind, text, "image", "image", [box], [box])],
        params=params,
    )


_PALETTE = (0.0, 0.08, 0.15, 0.33, 0.5, 0.62, 0.78, 0.9)


def recolour(img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int) -> Edit | None:
    """Regional colour: the region's hue swings far round the wheel (a grey one is coloured)."""
    r = pick_region(an, rng)
    alpha, y, x = _alpha(r)
    base = _under(img, alpha, y, x)
    hsv = color.rgb2hsv(base / 255.0)
    inside = hsv[np.pad(r.mask, 3)]
    hue = float(np.median(inside[:, 0]))
    far = [h for h in _PALETTE if min(abs(h - hue), 1 - abs(h - hue)) >= 0.25]
    target = float(far[int(rng.integers(len(far)))])
    offset = (hsv[..., 0] - hue + 0.5) % 1.0 - 0.5
    hsv[..., 0] = (target + 0.3 * offset) % 1.0
    hsv[..., 1] = np.maximum(hsv[..., 1], 0.6)  # grey stays grey under any hue: colour it
    hsv[..., 2] = np.clip(hsv[..., 2], 0.25, 0.95)
    out = img.copy()
    box = composite(out, color.hsv2rgb(hsv) * 255.0, alpha, y, x)
    new = hue_name(target, 0.8)
    phrase = r.phrase(_size(img))
    return _local(
        "region_recolour",
        f"{cap(phrase)} turned {new}.",
        f"Make {phrase} {new}.",
        r,
        img,
        out,
        box,
        to=new,
    )


def tint(img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int) -> Edit:
    name, gains = _TINTS[(turn + int(rng.integers(len(_TINTS)))) % len(_TINTS)]
    strength = float(rng.uniform(0.85, 1.0))
    mult = 1.0 + strength * (np.asarray(gains, np.float32) - 1.0)
    return _global(
        "image_tint",
        f"The whole image took on a {name} tint.",
        f"Give the whole image a {name} tint.",
        img,
        to_u8(img * mult),
        tint=name,
        strength=round(strength, 3),
    )


def noise_or_pixelate(
    img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int
) -> Edit | None:
    """Noise / resolution: grain on a region or on everything, or a region's resolution drops."""
    channels = 1 if an.grey else 3
    if turn % 3 == 1:
        sigma = float(rng.uniform(9.0, 13.0))
        noisy = to_u8(img + rng.normal(0.0, sigma, img.shape[:2] + (channels,)))
        return _global(
            "image_noise",
            "The whole image became grainy.",
            "Add film grain to the whole image.",
            img,
            noisy,
            sigma=round(sigma, 2),
        )
    r = pick_region(an, rng)
    alpha, y, x = _alpha(r)
    base = _under(img, alpha, y, x)
    out = img.copy()
    phrase = r.phrase(_size(img))
    if turn % 3 == 0:
        sigma = float(rng.uniform(18.0, 28.0))
        top = base + rng.normal(0.0, sigma, alpha.shape + (channels,))
        box = composite(out, top, alpha, y, x)
        text, instruction = f"{cap(phrase)} became noisy.", f"Add noise to {phrase}."
        return _local("region_noise", text, instruction, r, img, out, box, sigma=round(sigma, 2))
    block = int(rng.integers(6, 11))
    h, w = alpha.shape
    small = Image.fromarray(to_u8(base)).resize(
        (max(1, w // block), max(1, h // block)), Image.Resampling.BOX
    )
    coarse = np.asarray(small.resize((w, h), Image.Resampling.NEAREST), np.float32)
    box = composite(out, coarse, alpha, y, x)
    text = f"{cap(phrase)} became pixelated (lower resolution)."
    instruction = f"Lower the resolution of {phrase}."
    return _local("region_pixelate", text, instruction, r, img, out, box, block=block)


def blur_or_sharpen(
    img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int
) -> Edit | None:
    """Texture: a region is smoothed away, sharpened, or takes on a woven pattern (the one
    texture change that shows even on a smooth photo)."""
    r = pick_region(an, rng, textured=True)
    alpha, y, x = _alpha(r)
    out = img.copy()
    phrase = r.phrase(_size(img))
    if turn % 3 == 0:
        sigma = float(rng.uniform(2.5, 4.0))
        m = int(3 * sigma) + 1
        top = ndi.gaussian_filter(_under(img, alpha, y, x, m), (sigma, sigma, 0))[m:-m, m:-m]
        box = composite(out, top, alpha, y, x)
        text, instruction = f"{cap(phrase)} became smooth and blurred.", f"Smooth {phrase}."
        return _local("region_blur", text, instruction, r, img, out, box, sigma=round(sigma, 2))
    if turn % 3 == 1:
        amount = float(rng.uniform(2.0, 3.0))
        base = _under(img, alpha, y, x, 4)
        top = (base + amount * (base - ndi.gaussian_filter(base, (1.5, 1.5, 0))))[4:-4, 4:-4]
        box = composite(out, top, alpha, y, x)
        text, instruction = f"{cap(phrase)} became sharper and grittier.", f"Sharpen {phrase}."
        return _local(
            "region_sharpen", text, instruction, r, img, out, box, amount=round(amount, 2)
        )
    period, angle = float(rng.uniform(5.0, 9.0)), float(rng.uniform(0, np.pi))
    yy, xx = np.mgrid[0 : alpha.shape[0], 0 : alpha.shape[1]].astype(np.float32)
    weave = np.sin(2 * np.pi * (xx * np.cos(angle) + yy * np.sin(angle)) / period)
    base = _under(img, alpha, y, x)
    top = base * (1.0 + 0.3 * weave[..., None]) + 18.0 * weave[..., None]
    box = composite(out, top, alpha, y, x)
    text, instruction = f"{cap(phrase)} took on a striped texture.", f"Give {phrase} stripes."
    return _local("region_pattern", text, instruction, r, img, out, box, period=round(period, 1))


def light(img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int) -> Edit | None:
    """Lighting: the whole photo gets brighter or darker, or a pool of light or shadow falls
    on a region."""
    brighter = turn % 4 < 2
    word = "brighter" if brighter else "darker"
    if turn % 2 == 0:
        gamma = float(rng.uniform(0.5, 0.65) if brighter else rng.uniform(1.5, 1.9))
        out = to_u8(255.0 * (img / 255.0) ** gamma)
        return _global(
            "image_light",
            f"The whole image became {word}.",
            f"Make the whole image {word}.",
            img,
            out,
            gamma=round(gamma, 3),
        )
    r = pick_region(an, rng)
    x1, y1, x2, y2 = r.box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    rx, ry = 0.8 * (x2 - x1) + 8, 0.8 * (y2 - y1) + 8
    y0, x0 = int(cy - ry), int(cx - rx)
    yy, xx = np.mgrid[y0 : int(cy + ry) + 2, x0 : int(cx + rx) + 2].astype(np.float32)
    t = np.clip(1.0 - np.sqrt(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2), 0.0, 1.0)
    alpha = t * t * (3.0 - 2.0 * t)
    base = _under(img, alpha, y0, x0)
    gain = float(rng.uniform(1.7, 2.2) if brighter else rng.uniform(0.4, 0.55))
    out = img.copy()
    box = composite(out, base * gain + (14.0 if brighter else 0.0), alpha, y0, x0)
    phrase = r.phrase(_size(img))
    what = "A bright light" if brighter else "A shadow"
    return _local(
        "region_light",
        f"{what} now falls on {phrase}.",
        f"{'Shine a light' if brighter else 'Cast a shadow'} on {phrase}.",
        r,
        img,
        out,
        box,
        gain=round(gain, 3),
    )


# Word pairs of equal standing, so "changed to" reads naturally either way.
_WORDS = (
    ("OPEN", "SHUT"),
    ("SALE", "SOLD"),
    ("EXIT", "ENTER"),
    ("STOP", "SLOW"),
    ("NORTH", "SOUTH"),
    ("HOT", "COLD"),
    ("2019", "2024"),
    ("LEFT", "RIGHT"),
)


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _cover(word: str, size: int) -> np.ndarray:
    """Anti-aliased coverage of the word in [0, 1], cropped to its ink."""
    font = _font(size)
    canvas = Image.new("L", (size * (len(word) + 2), size * 3))
    ImageDraw.Draw(canvas).text((size, size), word, fill=255, font=font)
    left, top, right, bottom = canvas.getbbox() or (0, 0, 1, 1)
    return np.asarray(canvas.crop((left, top, right, bottom)), np.float32) / 255.0


def write_text(img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int) -> Edit | None:
    """OCR / text: a word painted on a flat part of the photo changes to another word (A and B
    both carry a word), or a word appears where there was none."""
    old, new = _WORDS[(turn + int(rng.integers(len(_WORDS)))) % len(_WORDS)]
    if rng.random() < 0.5:
        old, new = new, old
    size = max(14, round(min(img.shape[:2]) * float(rng.uniform(0.08, 0.12))))
    covers = {w: _cover(w, size) for w in (old, new)}
    h = max(c.shape[0] for c in covers.values())
    w = max(c.shape[1] for c in covers.values())
    spot = flat_window(img, (h + 6, w + 6), rng)
    if spot is None:
        return None
    y, x = spot[0] + 3, spot[1] + 3
    level = float(img[y : y + h, x : x + w].mean())
    ink_value = 25.0 if level > 120 else 235.0
    alter = turn % 2 == 0

    def painted(word: str) -> tuple[np.ndarray, tuple[int, int, int, int]]:
        canvas = img.copy()
        cover = covers[word]
        ink = np.full(cover.shape + (3,), ink_value, np.float32)
        return canvas, composite(canvas, ink, cover, y, x)

    image_b, box_b = painted(new)
    place = where(box_b, _size(img))
    if alter:
        image_a, box_a = painted(old)
        text = f"The text '{old}' {place} changed to '{new}'."
        changes = [change("text_alter", text, "text", "text", [box_a], [box_b])]
        instruction = f"Change the text '{old}' to '{new}'."
    else:
        image_a = img
        text = f"The text '{new}' appeared {place}."
        changes = [change("text_write", text, "", "text", [], [box_b])]
        instruction = f"Write '{new}' {place}."
    return Edit(
        photo="",
        image_a=image_a,
        image_b=image_b,
        instruction=instruction,
        changes=changes,
        params={"old": old if alter else "", "new": new, "font_px": size},
    )
