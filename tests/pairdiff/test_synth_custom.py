"""Pairs from anyone's photos: every category, exact boxes, visible changes, seeded."""

import io
from functools import cache

import numpy as np
import pytest
from PIL import Image
from skimage import data

from pairdiff.synth.base import SynthChange
from pairdiff.synth.checks import changed_outside, pair_problem
from pairdiff.synth.custom import CATEGORIES, Photo, photo_load, plan, synthesize


def _encode(pixels: np.ndarray, fmt: str) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format=fmt)
    return out.getvalue()


@cache
def own_photos() -> tuple[Photo, ...]:
    """Three photos the demo never uses, as a lead would upload them (JPEG and PNG)."""
    return (
        photo_load(_encode(data.stereo_motorcycle()[0][::2, ::2], "JPEG"), "motorcycle.jpg"),
        photo_load(_encode(data.clock(), "PNG"), "clock.png"),
        photo_load(_encode(data.retina()[::5, ::5], "JPEG"), "retina.jpg"),
    )


@cache
def made(seed: int = 0):
    photos = own_photos()
    return [synthesize(photos[s.photo], s, seed=seed) for s in plan(3, 4, CATEGORIES)]


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_three_photos_make_pairs_in_all_ten_categories() -> None:
    pairs = [o.pair for o in made()]

    assert all(p is not None for p in pairs)
    assert {p.changes[0].category for p in pairs} == set(CATEGORIES)
    assert len(CATEGORIES) == 10


@pytest.mark.parametrize("n", range(12))
def test_every_changed_pixel_lies_inside_the_known_boxes(n: int) -> None:
    pair = made()[n].pair
    a, b = _pixels(pair.image_a), _pixels(pair.image_b)
    inside = np.zeros(a.shape[:2], bool)
    for change in pair.changes:
        for x1, y1, x2, y2 in (*change.boxes_a, *change.boxes_b):
            assert 0 <= x1 < x2 <= a.shape[1] and 0 <= y1 < y2 <= a.shape[0]
            inside[y1:y2, x1:x2] = True
    changed = np.any(a != b, axis=-1)

    assert changed.sum() >= 64  # visible: something changed
    assert not (changed & ~inside).any()
    # The boxes are tight: each side's box holds changed pixels on its border rows/columns.
    for change in pair.changes:
        for x1, y1, x2, y2 in (*change.boxes_a, *change.boxes_b):
            assert changed[y1:y2, x1:x2].any()


def test_absent_sides_and_entities_follow_the_edit() -> None:
    changes = [o.pair.changes[0] for o in made()]
    removed = [c for c in changes if c.kind == "region_remove"]
    added = [c for c in changes if c.kind in ("region_add", "text_write")]
    whole = [c for c in changes if c.kind.startswith("image_")]

    for c in removed:
        assert c.boxes_a and c.boxes_b == [] and c.entity_b == "" and c.entity_a
    for c in added:
        assert c.boxes_a == [] and c.boxes_b and c.entity_a == "" and c.entity_b
    for c in whole:
        assert c.entity_a == c.entity_b == "image"
    assert all(c.description.endswith(".") and len(c.description) > 10 for c in changes)


def test_same_photos_and_seed_give_identical_pairs_another_seed_others() -> None:
    photos = own_photos()
    slot = plan(3, 4, CATEGORIES)[5]
    first, again = (
        synthesize(photos[slot.photo], slot, seed=7),
        synthesize(photos[slot.photo], slot, seed=7),
    )
    other = synthesize(photos[slot.photo], slot, seed=8)
    assert first.pair is not None and again.pair is not None and other.pair is not None

    assert (first.pair.image_a, first.pair.image_b) == (again.pair.image_a, again.pair.image_b)
    assert first.pair.key == again.pair.key != other.pair.key
    assert first.pair.image_b != other.pair.image_b


def test_plan_cycles_categories_over_the_whole_run() -> None:
    slots = plan(3, 4, CATEGORIES)

    assert [s.category for s in slots[:10]] == list(CATEGORIES)
    assert [(s.photo, s.index) for s in slots[:5]] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    with pytest.raises(ValueError, match="unknown categories"):
        plan(1, 1, ["teleport"])


def _change(boxes_a, boxes_b) -> SynthChange:
    return SynthChange("region_move", "position", "relation", "x.", "r", "r", boxes_a, boxes_b)


def test_a_pair_with_pixels_changed_outside_its_boxes_is_discarded() -> None:
    a = np.full((40, 50, 3), 120, np.uint8)
    b = a.copy()
    b[5:15, 5:15] = 250
    b[30, 45] = 0  # a stray change the answer does not cover

    change = _change([(5, 5, 15, 15)], [(5, 5, 15, 15)])
    assert changed_outside(a, b, [change]) == 1
    assert "1 changed pixels lie outside the boxes" in pair_problem(a, b, [change])
    b[30, 45] = 120
    assert pair_problem(a, b, [change]) == ""


def test_a_change_too_faint_to_see_is_discarded() -> None:
    a = np.full((100, 100, 3), 120, np.uint8)
    b = a.copy()
    b[10:60, 10:60] += 1  # ΔE well under a just-noticeable difference

    assert "too faint" in pair_problem(a, b, [_change([(10, 10, 60, 60)], [(10, 10, 60, 60)])])


def test_a_photo_too_small_or_not_an_image_is_refused() -> None:
    from pairdiff.synth.custom import PhotoUnusable

    with pytest.raises(PhotoUnusable, match="too small"):
        photo_load(_encode(np.zeros((20, 30, 3), np.uint8), "PNG"), "tiny.png")
    with pytest.raises(PhotoUnusable):
        photo_load(b"not an image", "notes.txt")


def test_large_photos_are_scaled_to_the_working_size() -> None:
    big = np.repeat(np.repeat(data.astronaut(), 4, axis=0), 4, axis=1)  # 2048 x 2048
    photo = photo_load(_encode(big, "PNG"), "big.png")

    assert max(photo.pixels.shape[:2]) == 1600
