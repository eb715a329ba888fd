"""Deterministic demo and benchmark pairs: real photos from scikit-image, edited in code.

Each pair keeps the true boxes of its edit as the known (gold) answer. The same (index, seed)
gives byte-identical PNGs, so demo data and gold pairs can be rebuilt anywhere.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Iterator

import numpy as np
from PIL import Image

from pairdiff.synth.base import CATEGORIES, Edit, SynthChange, SynthPair, Xyxy
from pairdiff.synth.looks import (
    add_noise,
    blur_region,
    downscale,
    global_colour,
    lighting,
    recolour_region,
)
from pairdiff.synth.objects import (
    count_change,
    move_object,
    paste_object,
    remove_object,
    resize_object,
    turn_object,
)
from pairdiff.synth.text import change_text

__all__ = [
    "TWINS",
    "CATEGORIES",
    "EDIT_KINDS",
    "SynthChange",
    "SynthPair",
    "Xyxy",
    "iter_pairs",
    "make_pair",
]

# Each edit takes the pair's generator and its turn: how many pairs of the same kind came
# before. The turn cycles through an edit's sources (which photo, which object, which tint) so
# that a short series already shows them all; everything else is drawn from the generator.
_EDITS: dict[str, Callable[[np.random.Generator, int, int], Edit]] = {
    "recolour_region": recolour_region,
    "paste_object": paste_object,
    "remove_object": remove_object,
    "move_object": move_object,
    "count_change": count_change,
    "change_text": change_text,
    "add_noise": add_noise,
    "blur_region": blur_region,
    "lighting": lighting,
    "global_colour": global_colour,
    "resize_object": resize_object,
    "downscale": downscale,
    "turn_object": turn_object,
}
TWINS = 3  # pairs a twin group has: one photo, one region, three values of one slot

EDIT_KINDS: tuple[str, ...] = tuple(_EDITS)


def _png(img: np.ndarray) -> bytes:
    """Lossless PNG; greyscale when the three channels agree, which is a third of the work."""
    grey = img[..., 0]
    if np.array_equal(grey, img[..., 1]) and np.array_equal(grey, img[..., 2]):
        img = grey
    buf = io.BytesIO()
    # Level 1 costs a few per cent in size but is about three times faster than the default,
    # and PNG stays lossless at every level.
    Image.fromarray(img).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def make_pair(index: int, seed: int) -> SynthPair:
    """Pair number `index` (>= 0) of the series `seed`. Pairs come in twin groups of TWINS
    consecutive indexes: one kind, one generator (so one photo and one region), and the
    member's variant picks another value of one slot (a colour, a count, a direction…); the
    kind cycles through EDIT_KINDS from group to group."""
    if index < 0:
        raise ValueError(f"index must be >= 0, got {index}")
    group, variant = divmod(index, TWINS)
    turn, k = divmod(group, len(EDIT_KINDS))
    kind = EDIT_KINDS[k]
    # A string seed is hashed with SHA-512 by `random`, so it is stable across processes and
    # independent of PYTHONHASHSEED.
    rng = np.random.default_rng(random.Random(f"{seed}:twins:{group}").getrandbits(64))
    edit = _EDITS[kind](rng, turn, variant)
    a, b = edit.image_a, edit.image_b
    return SynthPair(
        key=f"demo-{seed}-{index:04d}",
        image_a=_png(a),
        image_b=_png(b),
        size_a=(a.shape[1], a.shape[0]),
        size_b=(b.shape[1], b.shape[0]),
        instruction=edit.instruction,
        source={
            "photo": edit.photo,
            "edit": edit.changes[0].kind if edit.changes else kind,
            "seed": seed,
            "index": index,
            "twin_group": f"{seed}-{group}",
            "variant": variant,
            **edit.params,
        },
        changes=edit.changes,
    )


def iter_pairs(n: int, seed: int = 0) -> Iterator[SynthPair]:
    """make_pair(0..n-1, seed): the first TWINS * len(EDIT_KINDS) pairs cover every kind."""
    for index in range(n):
        yield make_pair(index, seed)
