"""Edits of appearance: colour, noise, blur, light and resolution."""

from __future__ import annotations

import numpy as np
from PIL import Image

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import Edit, change
from pairdiff.synth.ops import (
    cap,
    composite,
    feather,
    hue_name,
    pick,
    pick_variant,
    to_u8,
    whole,
    window,
)
from pairdiff.synth.photos import AREAS, Blob, astronaut_parts, cat_eyes, coffee_cup, coins, photo
from pairdiff.synth.photos import ellipse as area_ellipse

ndi = lazy_module("scipy.ndimage")
color = lazy_module("skimage.color")

# Photos that read well under a whole-image change; the mostly black Hubble field hides a
# tint or a gamma change almost entirely.
GLOBAL_PHOTOS: tuple[str, ...] = (
    "astronaut",
    "camera",
    "chelsea",
    "coffee",
    "coins",
    "immunohistochemistry",
    "moon",
    "rocket",
)
_GREY = frozenset({"camera", "coins", "moon", "page", "grass", "gravel", "brick"})


def _global_photo(rng: np.random.Generator) -> tuple[str, np.ndarray]:
    name = pick(rng, GLOBAL_PHOTOS)
    return name, photo(name)


# The surfaces of photos.AREAS on which each local edit is visible and makes sense.
SURFACES: dict[str, tuple[str, ...]] = {
    "noise": ("texture", "smooth", "dark", "sky"),
    "blur": ("texture",),
    "light": ("texture", "smooth", "dark"),
    "shadow": ("texture", "smooth"),
}


def _region(
    rng: np.random.Generator, edit: str, edge: float = 0.3, avoid: tuple[str, ...] = ()
) -> tuple[str, np.ndarray, int, int, str, str]:
    """Where a local edit goes: (photo, alpha, y0, x0, entity, phrase); not on ``avoid``."""
    areas = [a for a in AREAS if a.surface in SURFACES[edit] and a.photo not in avoid]
    parts = astronaut_parts()
    blobs: list[tuple[str, Blob]] = [
        ("coins", pick(rng, coins())),
        ("astronaut", parts["patch"]),
        ("astronaut", parts["tag"]),
    ]
    k = int(rng.integers(len(areas) + len(blobs)))
    if k < len(areas):
        area = areas[k]
        alpha, y0, x0 = area_ellipse(area, rng, edge)
        return area.photo, alpha, y0, x0, area.label, area.name
    name, blob = blobs[k - len(areas)]
    alpha = feather(np.pad(blob.mask, 3), 1.0)
    return name, alpha, blob.y0 - 3, blob.x0 - 3, blob.label, blob.name


def _crop(img: np.ndarray, alpha: np.ndarray, y0: int, x0: int, margin: int = 0) -> np.ndarray:
    """The image under `alpha` (plus margin), float32, edge-replicated outside the image."""
    h, w = alpha.shape
    return window(img, y0 - margin, x0 - margin, h + 2 * margin, w + 2 * margin).astype(np.float32)


def recolour_region(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    parts = astronaut_parts()
    targets = (
        ("astronaut", [parts["patch"]], "blue"),
        ("astronaut", [parts["suit"]], "orange"),
        ("astronaut", [parts["tank"]], "brown"),
        ("chelsea", list(cat_eyes()), "green"),
        ("coffee", [coffee_cup()], "red"),
    )
    name, blobs, old = targets[turn % len(targets)]
    img = photo(name)
    out = img.copy()
    alphas = [feather(np.pad(b.mask, 2), 0.7) for b in blobs]
    crops = [_crop(img, a, b.y0 - 2, b.x0 - 2) for a, b in zip(alphas, blobs, strict=True)]
    # HSV only for the pixels the edit touches: the suit's box is half background.
    hsv = [
        color.rgb2hsv(c[a > 0][:, None] / 255.0)[:, 0] for c, a in zip(crops, alphas, strict=True)
    ]
    inside = np.concatenate(
        [h[np.pad(b.mask, 2)[a > 0]] for h, a, b in zip(hsv, alphas, blobs, strict=True)]
    )
    coloured = inside[inside[:, 1] > 0.25]
    hue, value = float(np.median(coloured[:, 0])), float(np.median(coloured[:, 2]))
    palette = [0.0, 0.08, 0.15, 0.33, 0.5, 0.62, 0.78, 0.9]
    far = [h for h in palette if min(abs(h - hue), 1 - abs(h - hue)) >= 0.2]
    # Never a target named like the old colour ("from green to green": a yellowish green
    # eye is far in hue from green but said to be green already).
    far = [h for h in far if hue_name(h, value).split()[-1] != old] or far
    target = float(pick_variant(rng, far, variant))
    new = hue_name(target, value)
    boxes = []
    for h, c, a, b in zip(hsv, crops, alphas, blobs, strict=True):
        # Hues are pulled halfway towards the target rather than rotated as a block: a dark
        # crease that was slightly purple-red would otherwise land on a different colour.
        offset = (h[:, 0] - hue + 0.5) % 1.0 - 0.5
        h[:, 0] = (target + 0.5 * offset) % 1.0
        c[a > 0] = color.hsv2rgb(h[:, None])[:, 0] * 255.0
        boxes.append(composite(out, c, a, b.y0 - 2, b.x0 - 2))
    phrase, entity = blobs[0].name, blobs[0].label
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Make {phrase} {new}.",
        changes=[
            change(
                "recolour_region",
                f"{cap(phrase)} changed from {old} to {new}.",
                entity,
                entity,
                boxes,
                boxes,
            )
        ],
        params={"hue": round(target, 3), "to": new},
    )


def add_noise(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    if turn % 3 == 1 and variant % 2 == 1:
        return _pixelate_all(rng)
    if turn % 3 == 1:
        name, img = _global_photo(rng)
        sigma = float(rng.uniform(6.0, 11.0))
        channels = 1 if name in _GREY else 3
        noisy = img + rng.normal(0.0, sigma, img.shape[:2] + (channels,))
        box = whole(img)
        return Edit(
            photo=name,
            image_a=img,
            image_b=to_u8(noisy),
            instruction="Add film grain to the whole image.",
            changes=[
                change(
                    "add_noise", "The whole image became grainy.", "image", "image", [box], [box]
                )
            ],
            params={"sigma": round(sigma, 2), "scope": "global"},
        )
    name, alpha, y0, x0, entity, phrase = _region(rng, "noise", avoid=("brick",))
    # Twins of one category (a question shows it): noisy and pixelated; the third variant is
    # the first again, byte for byte, which the demo skips as a repeat.
    return _effect(rng, name, alpha, y0, x0, entity, phrase, variant % 2)


def _pixelate_all(rng: np.random.Generator) -> Edit:
    """The whole photo pixelated: the twin of "The whole image became grainy." (the same photo,
    drawn first from the same generator), so the two make a twin group; the third twin
    repeats the first byte for byte (the demo skips it)."""
    name, img = _global_photo(rng)
    h, w = img.shape[:2]
    block = max(4, min(h, w) // 96)
    small = Image.fromarray(img).resize((max(1, w // block), max(1, h // block)))
    out = np.asarray(small.resize((w, h), Image.Resampling.NEAREST), np.uint8)
    box = whole(img)
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction="Pixelate the whole image.",
        changes=[
            change("add_noise", "The whole image became pixelated.", "image", "image", [box], [box])
        ],
        params={"block": block, "scope": "global"},
    )


def _effect(
    rng: np.random.Generator,
    name: str,
    alpha: np.ndarray,
    y0: int,
    x0: int,
    entity: str,
    phrase: str,
    effect: int,
) -> Edit:
    """One region made noisy (0), pixelated (1), blurred (2) or sharper (3): twins differ in
    the effect."""
    img = photo(name)
    out = img.copy()
    sigma = float(rng.uniform(14.0, 24.0))
    channels = 1 if name in _GREY else 3
    base = _crop(img, alpha, y0, x0)
    noise = rng.normal(0.0, sigma, alpha.shape + (channels,))
    if effect == 0:
        top, word, kind, verb = base + noise, "noisy", "add_noise", "Add noise to"
    elif effect == 1:
        h, w = alpha.shape
        block = max(8, min(h, w) // 6)
        small = Image.fromarray(to_u8(base)).resize((max(1, w // block), max(1, h // block)))
        top = np.asarray(small.resize((w, h), Image.Resampling.NEAREST), np.float32)
        word, kind, verb = "pixelated", "add_noise", "Pixelate"
    elif effect == 2:
        m = 28
        wide = _crop(img, alpha, y0, x0, m)
        top = ndi.gaussian_filter(wide, (9.0, 9.0, 0))[m:-m, m:-m]
        word, kind, verb = "blurred", "blur_region", "Blur"
    else:  # an unsharp mask: edges and grain stand out
        m = 8
        wide = _crop(img, alpha, y0, x0, m)
        top = (wide + 2.5 * (wide - ndi.gaussian_filter(wide, (2.0, 2.0, 0))))[m:-m, m:-m]
        word, kind, verb = "sharper", "blur_region", "Sharpen"
    box = composite(out, top, alpha, y0, x0)
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"{verb} {phrase}.",
        changes=[change(kind, f"{cap(phrase)} became {word}.", entity, entity, [box], [box])],
        params={"sigma": round(sigma, 2), "scope": "local", "effect": word},
    )


def blur_region(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    # The brick wall's fine low-contrast grain hides a blur as strong as noise is visible.
    name, alpha, y0, x0, entity, phrase = _region(rng, "blur", avoid=("brick",))
    # Twins of one category: blurred and sharper (the third variant repeats the first).
    if variant % 3 == 1:
        return _effect(rng, name, alpha, y0, x0, entity, phrase, 3)
    img = photo(name)
    out = img.copy()
    sigma = float(rng.uniform(2.0, 3.5))
    m = int(3 * sigma) + 1
    blurred = ndi.gaussian_filter(_crop(img, alpha, y0, x0, m), (sigma, sigma, 0))[m:-m, m:-m]
    box = composite(out, blurred, alpha, y0, x0)
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Blur {phrase}.",
        changes=[
            change("blur_region", f"{cap(phrase)} became blurred.", entity, entity, [box], [box])
        ],
        params={"sigma": round(sigma, 2)},
    )


def lighting(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    brighter = (turn % 4 < 2) != (variant % 2 == 1)
    if turn % 2 == 0:
        name, img = _global_photo(rng)
        gamma = float(rng.uniform(0.55, 0.72) if brighter else rng.uniform(1.45, 1.8))
        out = to_u8(255.0 * (img / 255.0) ** gamma)
        word = "brighter" if brighter else "darker"
        box = whole(img)
        return Edit(
            photo=name,
            image_a=img,
            image_b=out,
            instruction=f"Make the whole image {word}.",
            changes=[
                change(
                    "lighting", f"The whole image became {word}.", "image", "image", [box], [box]
                )
            ],
            params={"gamma": round(gamma, 3), "scope": "global"},
        )
    # One region for both twins (light and shadow): the surfaces a shadow shows on, which a
    # light shows on too.
    name, alpha, y0, x0, entity, phrase = _region(rng, "shadow", edge=1.0)
    img = photo(name)
    out = img.copy()
    base = _crop(img, alpha, y0, x0)
    # Light scales what a surface reflects, so its texture survives; a flat lift would paint a
    # grey disc over a black coat. The small offset lets light show even on near-black cloth.
    if brighter:
        gain = float(rng.uniform(1.6, 2.2))
        top = base * gain + 12.0
        text, instruction = (
            f"A bright light now falls on {phrase}.",
            f"Shine a light on {phrase}.",
        )
    else:
        gain = float(rng.uniform(0.45, 0.6))
        top = base * gain
        text, instruction = (f"A shadow now falls on {phrase}.", f"Cast a shadow on {phrase}.")
    box = composite(out, top, alpha, y0, x0)
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=instruction,
        changes=[change("lighting", text, entity, entity, [box], [box])],
        params={"gain": round(gain, 3), "scope": "local"},
    )


# Tints far apart (no yellow beside orange): twins of one photo take three of them.
_TINTS: tuple[tuple[str, tuple[float, float, float]], ...] = (
    ("orange", (1.16, 1.0, 0.78)),
    ("blue", (0.8, 0.95, 1.2)),
    ("green", (0.82, 1.15, 0.82)),
    ("magenta", (1.16, 0.82, 1.12)),
)


def global_colour(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    name, img = _global_photo(rng)
    tint, gains = _TINTS[(turn + variant) % len(_TINTS)]
    strength = float(rng.uniform(0.8, 1.0))
    mult = 1.0 + strength * (np.asarray(gains, np.float32) - 1.0)
    box = whole(img)
    return Edit(
        photo=name,
        image_a=img,
        image_b=to_u8(img * mult),
        instruction=f"Tint the whole image {tint}.",
        changes=[
            change(
                "global_colour",
                f"The whole image was tinted {tint}.",
                "image",
                "image",
                [box],
                [box],
            )
        ],
        params={"tint": tint, "strength": round(strength, 3)},
    )


def downscale(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    name, img = _global_photo(rng)
    factor = float(pick_variant(rng, (0.4, 0.5, 0.6), variant))
    h, w = img.shape[:2]
    size = (round(w * factor), round(h * factor))
    out = np.asarray(Image.fromarray(img).resize(size, Image.Resampling.LANCZOS))
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Reduce the resolution to {size[0]}x{size[1]} pixels.",
        changes=[
            change(
                "downscale",
                f"Image B has a lower resolution: {size[0]}x{size[1]} instead of {w}x{h} pixels.",
                "image",
                "image",
                [whole(img)],
                [whole(out)],
            )
        ],
        params={"factor": factor},
    )
