"""pairdiff.assist: the A→B alignment, click-to-box components and drafted descriptions."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from skimage import data

from pairdiff.assist import estimate_alignment, map_box, precompute
from pairdiff.assist.colours import colour_name
from pairdiff.assist.drafts import suggest_entity
from pairdiff.geometry import Box, iou
from pairdiff.pixeldiff.maps import to_lab
from pairdiff.synth import TWINS, make_pair
from pairdiff.taxonomy import VDIFF

CATEGORIES = [c.slug for c in VDIFF]


def _png(rgb: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, "PNG")
    return out.getvalue()


def _near(box, truth, px: float = 3.0) -> bool:
    return max(abs(p - q) for p, q in zip(box, truth, strict=True)) <= px


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    return data.astronaut()


def test_a_shifted_pair_mirrors_a_box_to_its_true_place(astronaut):
    # B shows A moved 17 px right and 9 px up (what was at x is at x + 17 in B).
    b = np.roll(astronaut, (-9, 17), axis=(0, 1))
    alignment = estimate_alignment(astronaut, b)
    assert alignment.kind == "translation"
    mirrored = map_box(alignment.matrix, (100, 120, 220, 260), (512, 512))
    assert mirrored is not None and _near(mirrored, (117, 111, 237, 251))
    assert alignment.residual < 1.0


def test_a_cropped_pair_mirrors_a_box_to_its_true_place(astronaut):
    b = astronaut[40:440, 60:460]
    alignment = estimate_alignment(astronaut, b)
    mirrored = map_box(alignment.matrix, (100, 100, 200, 200), (400, 400))
    assert mirrored is not None and _near(mirrored, (40, 60, 140, 160))


def test_a_cropped_and_resized_pair_is_aligned_by_an_affine_transform(astronaut):
    b = np.asarray(Image.fromarray(astronaut[40:440, 60:460]).resize((300, 300), Image.LANCZOS))
    alignment = estimate_alignment(astronaut, b)
    assert alignment.kind == "affine"
    mirrored = map_box(alignment.matrix, (100, 100, 200, 200), (300, 300))
    assert mirrored is not None and _near(mirrored, (30, 45, 105, 120))


def test_a_plain_resize_keeps_the_frame_scale(astronaut):
    b = np.asarray(Image.fromarray(astronaut).resize((307, 307), Image.LANCZOS))
    alignment = estimate_alignment(astronaut, b)
    assert alignment.kind == "scale"
    assert np.allclose(np.asarray(alignment.matrix)[:2, :2], np.diag([0.6, 0.6]), atol=1e-3)


def test_the_residual_grid_shows_where_b_differs(astronaut):
    b = astronaut.copy()
    b[:64, :64] = 255 - b[:64, :64]  # the top-left tile no longer matches
    alignment = estimate_alignment(astronaut, b)
    assert alignment.grid[0][0] is not None and alignment.grid[0][0] > 20
    assert alignment.grid[7][7] == 0.0


@pytest.mark.parametrize("index", [0, 1, 2, 3, 7, 10])
def test_components_box_the_known_change_tightly_on_both_sides(index):
    pair = make_pair(index * TWINS, 0)  # the first of each twin group: one pair per kind
    truth = pair.changes[0]
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES)
    assert assist.error == "" and assist.components
    for side in ("a", "b"):
        known = getattr(truth, f"boxes_{side}")
        found = [b for c in assist.components for b in getattr(c, f"boxes_{side}")]
        if not known:
            continue
        assert max(iou(Box(*known[0]), Box(*b)) for b in found) >= 0.8


def test_an_added_object_is_absent_on_a_and_clickable_there():
    pair = make_pair(1 * TWINS, 0)  # a galaxy pasted on the right
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES)
    (found,) = assist.components
    assert found.boxes_a == [] and len(found.boxes_b) == 1
    assert found.zone_a == found.zone_b  # same size: where it appears on B is where to click on A


def test_drafts_name_the_entity_from_the_vocabulary_and_the_colours():
    pair = make_pair(13 * TWINS, 0)  # the spacesuit recoloured red → green
    assist = precompute(
        pair.image_a,
        pair.image_b,
        categories=CATEGORIES,
        vocabulary=["spacesuit", "image"],
        instruction="Make the spacesuit green.",
    )
    (found,) = assist.components
    assert found.entity == "spacesuit"
    assert found.category == "regional_colour"
    assert found.draft.startswith("The spacesuit at ")
    assert found.draft.endswith("changed colour from red to green.")


def test_a_global_change_is_the_whole_frame_with_pixeldiffs_sentence():
    pair = make_pair(8 * TWINS, 0)  # the whole image brighter
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES, vocabulary=["image"])
    (found,) = assist.components
    assert found.whole and found.boxes_a == [[0, 0, 512, 512]] == found.boxes_b
    assert found.draft == "The whole image became brighter." and found.entity == "image"


def test_a_move_is_drafted_with_its_direction_and_distance():
    pair = make_pair(3 * TWINS, 0)  # a galaxy moved to the left
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES)
    (found,) = assist.components
    assert found.kind == "move"
    assert "moved to the left by about" in found.draft


def test_bad_bytes_give_an_error_not_an_exception():
    assist = precompute(b"not an image", _png(np.zeros((8, 8, 3), np.uint8)), categories=[])
    assert assist.alignment is None and "image A" in assist.error


@pytest.mark.parametrize(
    ("rgb", "name"),
    [
        ((200, 30, 35), "red"),
        ((30, 80, 200), "blue"),
        ((245, 245, 245), "white"),
        ((20, 20, 20), "black"),
        ((120, 70, 30), "brown"),
        ((40, 155, 50), "green"),
    ],
)
def test_colour_names_in_cielab(rgb, name):
    assert colour_name(to_lab(np.array([[rgb]], np.uint8))[0, 0]) == name


def test_entity_suggestions_come_only_from_the_vocabulary():
    words = ["coin", "mission patch", "image"]
    assert suggest_entity("disappear", words, "Remove one of the coins.") == "coin"
    assert suggest_entity("colour", words, "Make the round mission patch red.") == "mission patch"
    assert suggest_entity("colour", words, "Make the mug red.") == ""
    assert suggest_entity("global:lighting", words, "") == "image"


def test_a_disappearance_and_its_look_alike_appearance_are_joined_into_one_move():
    from pairdiff.assist.found import Found as _Found
    from pairdiff.assist.moves import join_moves as _moves

    rng = np.random.default_rng(0)
    thing = rng.integers(0, 255, (30, 40, 3), dtype=np.uint8)
    a = np.full((200, 300, 3), 90, np.uint8)
    b = a.copy()
    a[20:50, 30:70] = thing  # here on A ...
    b[120:150, 200:240] = thing  # ... there on B
    gone = _Found("disappear", "", "appear_disappear", "", 0.9, [(30, 20, 70, 50)], [], False)
    came = _Found("appear", "", "appear_disappear", "", 0.8, [], [(200, 120, 240, 150)], False)
    other = _Found(
        "colour",
        "",
        "regional_colour",
        "",
        0.7,
        [(0, 150, 20, 170)] * 1,
        [(0, 150, 20, 170)],
        False,
    )
    (kept, move) = _moves([gone, came, other], a, b, CATEGORIES)
    assert kept is other
    assert (move.kind, move.category) == ("move", "position")
    assert (move.boxes_a, move.boxes_b) == ([(30, 20, 70, 50)], [(200, 120, 240, 150)])
    # Something else arriving is not the thing that left.
    b[120:150, 200:240] = rng.integers(0, 255, (30, 40, 3), dtype=np.uint8)
    assert [f.kind for f in _moves([gone, came], a, b, CATEGORIES)] == ["disappear", "appear"]


def test_jpeg_noise_does_not_widen_a_box(astronaut):
    # Both sides re-encoded as JPEG (quality 85): ringing everywhere, one real edit.
    b = astronaut.copy()
    b[300:360, 200:280] = b[300:360, 200:280][..., ::-1]

    def jpeg(rgb: np.ndarray) -> bytes:
        out = io.BytesIO()
        Image.fromarray(rgb).save(out, "JPEG", quality=85)
        return out.getvalue()

    assist = precompute(jpeg(astronaut), jpeg(b), categories=CATEGORIES)
    boxes = [box for c in assist.components for box in c.boxes_a]
    assert max(iou(Box(200, 300, 280, 360), Box(*box)) for box in boxes) >= 0.9


# Pairs as `manage.py synthesize` makes them (pairdiff.synth.custom), from scikit-image photos
# the demo never edits; each reproduces a click that boxed B wrongly (bench/RESULTS.md,
# "Assists", synthesized run of 2026-12-02 09:19).
SYNTH_PHOTOS = {
    "motorcycle_left.png": lambda: data.stereo_motorcycle()[0],
    "motorcycle_right.png": lambda: data.stereo_motorcycle()[1],
    "retina.png": lambda: data.retina()[::3, ::3],
    "cell.png": lambda: data.cell(),
}


def _synthesized(photo: str, index: int, category: str, turn: int):
    from pairdiff.synth.custom import Slot, photo_load, synthesize

    encoded = io.BytesIO()  # as bench/pixeldiff.py encodes them (the pair's seed hashes the bytes)
    Image.fromarray(SYNTH_PHOTOS[photo]()).save(encoded, "PNG", compress_level=1)
    outcome = synthesize(
        photo_load(encoded.getvalue(), photo),
        Slot(photo=0, index=index, category=category, turn=turn),
        seed=0,
    )
    assert outcome.pair is not None, outcome.problems
    return outcome.pair


def _click(assist, side: str, box):
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    zone = lambda c: c.zone_a if side == "a" else c.zone_b  # noqa: E731
    hits = [
        c
        for c in assist.components
        if zone(c)[0] - 3 <= x <= zone(c)[2] + 3 and zone(c)[1] - 3 <= y <= zone(c)[3] + 3
    ]
    local = sorted(
        (c for c in hits if not c.whole),
        key=lambda c: (zone(c)[2] - zone(c)[0]) * (zone(c)[3] - zone(c)[1]),
    )
    assert local, f"a click at {x, y} on {side.upper()} finds no region"
    return local[0]


def _best_iou(truth, boxes) -> float:
    return max((iou(Box(*truth), Box(*box)) for box in boxes), default=0.0)


@pytest.mark.parametrize(
    ("photo", "index", "turn"), [("motorcycle_left.png", 0, 0), ("retina.png", 2, 1)]
)
def test_a_textured_patch_moved_away_from_a_look_alike_refill_is_one_move(photo, index, turn):
    # The patch's old place is refilled with texture like its surroundings, so at both places
    # the pixels changed "in place"; B's box belongs where the patch went.
    pair = _synthesized(photo, index, "position", turn)
    (change,) = pair.changes
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES)
    found = _click(assist, "a", change.boxes_a[0])
    assert found.kind == "move"
    assert _best_iou(change.boxes_a[0], found.boxes_a) >= 0.9
    assert _best_iou(change.boxes_b[0], found.boxes_b) >= 0.9


def test_a_patch_that_shrank_in_place_is_boxed_at_its_new_size_on_b():
    pair = _synthesized("motorcycle_right.png", 3, "replacement_size", 0)
    (change,) = pair.changes
    assert change.kind == "region_resize"
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES)
    found = _click(assist, "a", change.boxes_a[0])
    assert _best_iou(change.boxes_a[0], found.boxes_a) >= 0.9
    assert _best_iou(change.boxes_b[0], found.boxes_b) >= 0.85


def test_a_recoloured_patch_is_not_taken_for_a_resize(astronaut):
    b = astronaut.copy()
    b[300:360, 200:280] = b[300:360, 200:280][..., ::-1]
    assist = precompute(_png(astronaut), _png(b), categories=CATEGORIES)
    found = _click(assist, "a", (200, 300, 280, 360))
    assert found.kind != "resize"
    assert _best_iou((200, 300, 280, 360), found.boxes_b) >= 0.9


def test_a_written_line_is_one_box_not_one_per_word():
    pair = _synthesized("cell.png", 2, "ocr_text", 1)
    (change,) = pair.changes
    assert change.kind == "text_write" and not change.boxes_a
    assist = precompute(pair.image_a, pair.image_b, categories=CATEGORIES)
    found = _click(assist, "b", change.boxes_b[0])
    assert len(found.boxes_b) == 1
    assert _best_iou(change.boxes_b[0], found.boxes_b) >= 0.9


def test_pieces_far_apart_or_on_other_rows_stay_apart():
    from pairdiff.assist.found import join_rows as _join_rows

    words = [(10, 50, 40, 70), (46, 51, 90, 70), (96, 50, 120, 69)]
    assert _join_rows(words) == [(10, 50, 120, 70)]
    apart = [(10, 50, 40, 70), (200, 50, 240, 70), (10, 120, 40, 140)]
    assert _join_rows(apart) == sorted(apart)
