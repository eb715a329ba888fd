"""Edits of objects: add, remove, move, count and resize."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache

import numpy as np
from PIL import Image

from pairdiff.synth.anyobjects import pick_region, turn_by
from pairdiff.synth.base import Edit, Xyxy, change
from pairdiff.synth.ops import (
    bright_busy,
    cap,
    column,
    composite,
    direction,
    feather,
    fill,
    find_empty,
    glow,
    overlaps,
    pick,
    pick_variant,
    where,
)
from pairdiff.synth.photos import Blob, astronaut_parts, coins, galaxies, lights, photo
from pairdiff.synth.regions import Analysis, analyse

_NUMBERS = ("no", "one", "two", "three", "four", "five")


@cache
def _busy(name: str, threshold: float) -> np.ndarray:
    return bright_busy(photo(name), threshold)


def _size(img: np.ndarray) -> tuple[int, int]:
    return img.shape[1], img.shape[0]


def _variant(
    pix: np.ndarray, alpha: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Mirror or rotate a copied object so the copy is not a pixel-identical twin."""
    k = int(rng.integers(4))
    if rng.random() < 0.5:
        pix, alpha = pix[:, ::-1], alpha[:, ::-1]
    return np.rot90(pix, k), np.rot90(alpha, k)


def _lift(blob: Blob, img: np.ndarray, light: bool) -> tuple[np.ndarray, np.ndarray, int, int]:
    """What pasting the blob elsewhere puts down: its light for luminous objects (added to the
    new spot), its pixels otherwise; with the padded mask and the top-left (y, x) it came from."""
    margin = 4 if light else 2
    pix, mask, y, x = blob.cut(img, margin)
    return (glow(pix, mask) if light else pix.astype(np.float32)), mask, y, x


def _galaxy_name(blob: Blob, img: np.ndarray) -> str:
    return f"the galaxy {where(blob.box, _size(img))}"


def _apart(rng: np.random.Generator, blobs: Sequence[Blob], img: np.ndarray) -> list[Blob]:
    """Three galaxies (in a seeded order) whose places share no word — "at the top left",
    "at the bottom right", "in the centre" — so twins name places that exclude each other;
    fewer when the photo has no such three (the list then repeats)."""
    chosen: list[Blob] = []
    words: set[str] = set()
    for i in rng.permutation(len(blobs)):
        place = set(where(blobs[int(i)].box, _size(img)).split()[2:])
        if not place & words:
            chosen.append(blobs[int(i)])
            words |= place
        if len(chosen) == 3:
            break
    return (chosen * 3)[:3]


def paste_object(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    if turn % 3 != 1:
        name, src, threshold = "hubble_deep_field", pick(rng, galaxies()), 60.0
        label = "galaxy"
    else:
        # The lit towers count as occupied, so the new lamp does not hang on a girder.
        name, src, threshold = "rocket", pick(rng, lights()), 110.0
        label = "floodlight"
    img = photo(name)
    out = img.copy()
    pix, mask, _, _ = _lift(src, img, light=True)
    alpha = feather(mask, 2.0)
    third = img.shape[1] // 3  # twins put it on the left, in the middle and on the right
    x_lo, x_hi = (variant % 3) * third, (variant % 3 + 1) * third
    if label == "galaxy":
        pix, alpha = _variant(pix, alpha, rng)
        h = img.shape[0]
        area: Xyxy | None = (x_lo, int(0.38 * h), x_hi, int(0.62 * h))
    else:
        # Floodlights stand in one row along the horizon; one in the sky would not be a lamp.
        area = (x_lo, src.y0 - 4, x_hi, src.y0 + alpha.shape[0] + 4)
    taken = [b.box for b in (galaxies() if label == "galaxy" else lights())]
    y, x = find_empty(_busy(name, threshold), alpha.shape, rng, taken, area)
    box = composite(out, pix, alpha, y, x, add=True)
    # The column only: twins differ in it, and "at the bottom" would be true of all three.
    place = column(box, _size(img))
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Add a {label} {place}.",
        changes=[change("paste_object", f"A {label} appeared {place}.", label, label, [], [box])],
        params={"source_box": list(src.box)},
    )


def remove_object(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    # Floodlights are not removed: their halo and the girders behind them cannot be rebuilt
    # from the surroundings without leaving a visible haze.
    # Not the mission patch: it is the only one of its kind, so twins removing it would all
    # say "The round mission patch disappeared." (one pair, no twin); coins again instead.
    source = ("coin", "galaxy", "coin")[turn % 3]
    if source == "coin":
        # Twins take three coins of one row: their names differ in the position only.
        row = pick(rng, sorted({c.name.split(" in the ")[-1] for c in coins()}))
        name, blob = (
            "coins",
            pick_variant(rng, [c for c in coins() if c.name.endswith(row)], variant),
        )
        phrase = blob.name
    elif source == "galaxy":
        name = "hubble_deep_field"
        blob = _apart(rng, galaxies(), photo(name))[variant % 3]
        phrase = _galaxy_name(blob, photo(name))
    else:
        name, blob = "astronaut", astronaut_parts()["patch"]
        phrase = blob.name
    img = photo(name)
    out = img.copy()
    box = fill(out, blob.mask, blob.y0, blob.x0, rng)
    label = blob.label
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Remove {phrase}.",
        changes=[change("remove_object", f"{cap(phrase)} disappeared.", label, label, [box], [])],
    )


def move_object(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    if turn % 3 != 1:
        name, blob = "hubble_deep_field", pick(rng, galaxies())
        img = photo(name)
        phrase, light = _galaxy_name(blob, img), True
        top, mask, oy, ox = _lift(blob, img, light)
        far = blob.box[0] - 60, blob.box[1] - 60, blob.box[2] + 60, blob.box[3] + 60
        taken = [b.box for b in galaxies()] + [far]
        y, x = find_empty(_busy(name, 60.0), mask.shape, rng, taken, _towards(blob, img, variant))
    else:
        name, blob = "astronaut", astronaut_parts()["patch"]
        img = photo(name)
        phrase, light = blob.name, False
        top, mask, oy, ox = _lift(blob, img, light)
        # Spots on the suit that are flat orange and clear of the straps, ring and helmet:
        # twins go up (0) and to the left (1), which share no part; the third twin repeats
        # the first byte for byte (the demo skips it) — "up and to the left" would be
        # partly true of both.
        dy, dx = ((-62, -8), (20, -78))[variant % 3 % 2]
        y, x = oy + dy, ox + dx
    out = img.copy()
    box_a = fill(out, blob.mask, blob.y0, blob.x0, rng)
    box_b = composite(out, top, feather(mask, 2.0 if light else 1.0), y, x, add=light)
    way = direction(x - ox, y - oy)
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Move {phrase} {way}.",
        changes=[
            change(
                "move_object",
                f"{cap(phrase)} moved {way}.",
                blob.label,
                blob.label,
                [box_a],
                [box_b],
            )
        ],
    )


def _towards(blob: Blob, img: np.ndarray, variant: int) -> Xyxy:
    """Where twin moves of one galaxy go: left (0), right (1) or up (2) of it, within a band
    as tall (or wide) as the galaxy, so the directions share no part."""
    x1, y1, x2, y2 = blob.box
    h, w = img.shape[:2]
    pad = 6
    if variant % 3 == 0:
        return (0, y1 - pad, max(x1 - 60, 1), y2 + pad)
    if variant % 3 == 1:
        return (min(x2 + 60, w - 1), y1 - pad, w, y2 + pad)
    return (x1 - pad, 0, x2 + pad, max(y1 - 60, 1))


def count_change(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    # The coins are packed in a grid with no room for more, so the count goes down; twins
    # remove 1, 3 and 5, counts two apart.
    img = photo("coins")
    out = img.copy()
    everyone = coins()
    k = 1 + 2 * ((turn + variant) % 3)
    chosen = sorted(rng.choice(len(everyone), size=k, replace=False).tolist())
    boxes = [fill(out, everyone[i].mask, everyone[i].y0, everyone[i].x0, rng) for i in chosen]
    n = len(everyone)
    return Edit(
        photo="coins",
        image_a=img,
        image_b=out,
        instruction=f"Remove {_NUMBERS[k]} of the coins.",
        changes=[
            change(
                "count_change",
                f"There are now {n - k} coins instead of {n}.",
                "coins",
                "coins",
                boxes,
                [],
            )
        ],
        params={"removed": chosen, "count_a": n, "count_b": n - k},
    )


def _scaled(pix: np.ndarray, mask: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    h, w = mask.shape
    size = (max(2, round(w * s)), max(2, round(h * s)))
    big = np.stack(
        [
            np.asarray(Image.fromarray(pix[..., c]).resize(size, Image.Resampling.BICUBIC))
            for c in range(pix.shape[-1])
        ],
        axis=-1,
    )
    m = Image.fromarray(mask.astype(np.uint8) * 255).resize(size, Image.Resampling.BILINEAR)
    return big, np.asarray(m) > 127


def resize_object(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    source = ("coin", "galaxy", "patch")[turn % 3]
    if source == "coin":
        # A coin with room to grow: twins make it larger and smaller (the third repeats the
        # first), where a crowded coin could only shrink, three times the same sentence.
        roomy = [c for c in coins() if not _crowded(c)]
        name, blob = "coins", pick(rng, roomy or coins())
        phrase, light = blob.name, False
        others = [c.box for c in coins() if c is not blob]
        s = float(rng.uniform(1.15, 1.25))
        grown = _grown_box(blob.box, s)
        if (rng.random() < 0.5) != (variant % 2 == 1) or any(
            overlaps(grown, o, gap=2) for o in others
        ):
            s = float(rng.uniform(0.68, 0.8))
    elif source == "galaxy":
        name, blob = "hubble_deep_field", pick(rng, galaxies())
        phrase, light = _galaxy_name(blob, photo(name)), True
        s = float(rng.uniform(1.7, 2.2) if variant % 2 == 0 else rng.uniform(0.5, 0.6))
    else:
        name, blob = "astronaut", astronaut_parts()["patch"]
        phrase, light = blob.name, False
        grow = (rng.random() < 0.5) != (variant % 2 == 1)
        s = float(rng.uniform(1.2, 1.32) if grow else rng.uniform(0.68, 0.78))
    img = photo(name)
    out = img.copy()
    top, mask, _, _ = _lift(blob, img, light)
    top, mask = _scaled(top, mask, s)
    alpha = feather(mask, 2.0 if light else 1.0)
    h, w = blob.mask.shape
    ny = round(blob.y0 + h / 2 - alpha.shape[0] / 2)
    nx = round(blob.x0 + w / 2 - alpha.shape[1] / 2)
    box_a = fill(out, blob.mask, blob.y0, blob.x0, rng)
    box_b = composite(out, top, alpha, ny, nx, add=light)
    word = "larger" if s > 1 else "smaller"
    return Edit(
        photo=name,
        image_a=img,
        image_b=out,
        instruction=f"Make {phrase} {word}.",
        changes=[
            change(
                "resize_object",
                f"{cap(phrase)} became {word}.",
                blob.label,
                blob.label,
                [box_a],
                [box_b],
            )
        ],
        params={"scale": round(s, 3)},
    )


def _crowded(coin: Blob) -> bool:
    """Whether the coin grown by the most ``resize_object`` grows it would touch another."""
    grown = _grown_box(coin.box, 1.25)
    return any(overlaps(grown, c.box, gap=2) for c in coins() if c is not coin)


def _grown_box(box: Xyxy, s: float) -> Xyxy:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    hw, hh = (box[2] - box[0]) * s / 2, (box[3] - box[1]) * s / 2
    return (round(cx - hw), round(cy - hh), round(cx + hw), round(cy + hh))


_TURN_PHOTOS = ("astronaut", "coffee", "chelsea")


@cache
def _analysis(name: str) -> Analysis:
    return analyse(photo(name))


def turn_object(rng: np.random.Generator, turn: int, variant: int = 0) -> Edit:
    """Motion: one textured region of a photo turns about its centre; twins turn the same
    region by 20, 45 and 90 degrees (angles at least 15 apart)."""
    name = _TURN_PHOTOS[turn % len(_TURN_PHOTOS)]
    img = photo(name)
    an = _analysis(name)
    region = pick_region(an, rng, textured=True)
    angle = (20.0, 45.0, 90.0)[variant % 3] * (1 if turn % 2 == 0 else -1)
    edit = turn_by(img, an, rng, angle, region, kind="turn_object")
    return replace(edit, photo=name)
