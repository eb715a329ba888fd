"""Edits that move, turn, add, remove, resize or replace a region of any photo.

Each takes the photo, its analysis, a generator and its turn (how many pairs of the same
category came before on this photo) and returns an Edit, or None when the photo offers no
place for it. Regions come from `regions.analyse`; what a region leaves behind is inpainted.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from pairdiff.lazy import lazy_module
from pairdiff.synth.base import Edit, Xyxy, change
from pairdiff.synth.ops import cap, composite, direction, feather, fill, overlaps, where, window
from pairdiff.synth.regions import Analysis, Region

transform = lazy_module("skimage.transform")

_TOP = 8  # edits pick among this many of the most salient regions


def pick_region(
    an: Analysis, rng: np.random.Generator, avoid: Region | None = None, textured: bool = False
) -> Region:
    """One of the most salient regions (or, for edits that only show on texture — blur,
    turning — one of the most textured inner ones)."""
    ranked = list(an.regions)
    if textured:
        inner = [r for r in ranked if r.saliency > -500] or ranked
        ranked = sorted(inner, key=lambda r: -r.texture)
    pool = [r for r in ranked[:_TOP] if r is not avoid] or ranked
    return pool[int(rng.integers(len(pool)))]


def _size(img: np.ndarray) -> tuple[int, int]:
    return img.shape[1], img.shape[0]


def entity(r: Region) -> str:
    return f"{r.colour} region"


def _lift(img: np.ndarray, r: Region, margin: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The region's pixels (float) and its mask, with `margin` around them."""
    h, w = r.mask.shape
    pix = window(img, r.y0 - margin, r.x0 - margin, h + 2 * margin, w + 2 * margin)
    return pix.astype(np.float32), np.pad(r.mask, margin)


def free_spot(
    img: np.ndarray, size: tuple[int, int], rng: np.random.Generator, avoid: list[Xyxy]
) -> tuple[int, int] | None:
    """Top-left (y, x) of a window of `size` inside the photo, clear of `avoid`."""
    h, w = size
    ih, iw = img.shape[:2]
    if h + 8 >= ih or w + 8 >= iw:
        return None
    for _ in range(200):
        y, x = int(rng.integers(4, ih - h - 3)), int(rng.integers(4, iw - w - 3))
        if not any(overlaps((x, y, x + w, y + h), b, gap=12) for b in avoid):
            return y, x
    return None


def move_region(img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int) -> Edit | None:
    r = pick_region(an, rng)
    pix, mask = _lift(img, r)
    spot = free_spot(img, mask.shape, rng, [r.box])
    if spot is None:
        return None
    y, x = spot
    out = img.copy()
    box_a = fill(out, r.mask, r.y0, r.x0, rng)
    box_b = composite(out, pix, feather(mask, 1.0), y, x)
    way = direction(x + 2 - r.x0, y + 2 - r.y0)
    phrase = r.phrase(_size(img))
    return Edit(
        photo="",
        image_a=img,
        image_b=out,
        instruction=f"Move {phrase} {way}.",
        changes=[
            change(
                "region_move", f"{cap(phrase)} moved {way}.", entity(r), entity(r), [box_a], [box_b]
            )
        ],
        params={"to": [x, y]},
    )


def turn_region(img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int) -> Edit | None:
    """Motion: the region turns about its centre, as an object changing its pose would."""
    angle = float(rng.uniform(18, 35)) * (1 if turn % 2 == 0 else -1)
    return turn_by(img, an, rng, angle, pick_region(an, rng, textured=True), kind="region_turn")


def turn_by(
    img: np.ndarray,
    an: Analysis,
    rng: np.random.Generator,
    angle: float,
    r: Region,
    *,
    kind: str,
) -> Edit:
    """Region ``r`` turned about its centre by ``angle`` degrees (positive: anticlockwise)."""
    h, w = r.mask.shape
    m = int(0.3 * max(h, w)) + 2
    pix, mask = _lift(img, r, m)
    turned = transform.rotate(pix, angle, order=1, mode="edge", preserve_range=True)
    turned_mask = transform.rotate(mask.astype(np.float32), angle, order=1) > 0.5
    out = img.copy()
    box_a = fill(out, r.mask, r.y0, r.x0, rng)
    box_b = composite(out, turned, feather(turned_mask, 1.0), r.y0 - m, r.x0 - m)
    way = "anticlockwise" if angle > 0 else "clockwise"
    phrase = r.phrase(_size(img))
    return Edit(
        photo="",
        image_a=img,
        image_b=out,
        instruction=f"Turn {phrase} {way}.",
        changes=[
            change(
                kind,
                f"{cap(phrase)} turned {way} by about {round(abs(angle), -1):.0f} degrees.",
                entity(r),
                entity(r),
                [box_a],
                [box_b],
            )
        ],
        params={"angle": round(angle, 1)},
    )


def remove_or_add(
    img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int
) -> Edit | None:
    """Appear / disappear: the region is inpainted away, or a copy of it appears elsewhere."""
    r = pick_region(an, rng)
    phrase = r.phrase(_size(img))
    out = img.copy()
    if turn % 2 == 0:
        box = fill(out, r.mask, r.y0, r.x0, rng)
        return Edit(
            photo="",
            image_a=img,
            image_b=out,
            instruction=f"Remove {phrase}.",
            changes=[
                change("region_remove", f"{cap(phrase)} disappeared.", entity(r), "", [box], [])
            ],
        )
    pix, mask = _lift(img, r)
    spot = free_spot(img, mask.shape, rng, [r.box])
    if spot is None:
        return None
    y, x = spot
    if rng.random() < 0.5:
        pix, mask = pix[:, ::-1], mask[:, ::-1]  # a mirrored copy, not a pixel twin
    box = composite(out, pix, feather(mask, 1.0), y, x)
    place = where(box, _size(img))
    return Edit(
        photo="",
        image_a=img,
        image_b=out,
        instruction=f"Add another {entity(r)} {place}.",
        changes=[
            change(
                "region_add",
                f"A second {entity(r)} appeared {place}.",
                "",
                entity(r),
                [],
                [box],
            )
        ],
        params={"copied_from": list(r.box)},
    )


def _scaled(pix: np.ndarray, mask: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """Pixels and mask resized to `size` (w, h)."""
    channels = [
        np.asarray(Image.fromarray(pix[..., c]).resize(size, Image.Resampling.BICUBIC))
        for c in range(pix.shape[-1])
    ]
    m = Image.fromarray(mask.astype(np.uint8) * 255).resize(size, Image.Resampling.BILINEAR)
    return np.stack(channels, axis=-1), np.asarray(m) > 127


def resize_or_replace(
    img: np.ndarray, an: Analysis, rng: np.random.Generator, turn: int
) -> Edit | None:
    """Replacement / size: the region grows or shrinks in place, or another region's content
    takes its place."""
    r = pick_region(an, rng)
    phrase = r.phrase(_size(img))
    h, w = r.mask.shape
    if turn % 2 == 0:
        s = float(rng.uniform(1.35, 1.55) if rng.random() < 0.5 else rng.uniform(0.55, 0.7))
        source, word = r, ("larger" if s > 1 else "smaller")
        size = (max(4, round(w * s)), max(4, round(h * s)))
    else:
        source = pick_region(an, rng, avoid=r)
        if source is r:
            return None
        size, s, word = (w, h), 1.0, ""
    pix, mask = _lift(img, source, 0)
    pix, mask = _scaled(pix, mask, size)
    ny, nx = round(r.y0 + h / 2 - size[1] / 2), round(r.x0 + w / 2 - size[0] / 2)
    out = img.copy()
    box_a = fill(out, r.mask, r.y0, r.x0, rng)
    box_b = composite(out, pix.astype(np.float32), feather(mask, 1.0), ny, nx)
    if source is r:
        text, instruction = f"{cap(phrase)} became {word}.", f"Make {phrase} {word}."
        kind, entity_b = "region_resize", entity(r)
    else:
        entity_b = entity(source)
        text = f"{cap(phrase)} was replaced by a {entity_b}."
        instruction = f"Replace {phrase} with a {entity_b}."
        kind = "region_replace"
    return Edit(
        photo="",
        image_a=img,
        image_b=out,
        instruction=instruction,
        changes=[change(kind, text, entity(r), entity_b, [box_a], [box_b])],
        params={"scale": round(s, 3), "source": list(source.box)},
    )
