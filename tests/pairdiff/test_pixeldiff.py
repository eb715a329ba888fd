"""The built-in pixeldiff pre-annotator on real photos edited in code, with known boxes."""

from __future__ import annotations

import io
from functools import cache

import numpy as np
import pytest
from PIL import Image
from skimage import data as samples

from pairdiff.geometry import Box, iou
from pairdiff.pixeldiff import PixelDiff, Settings
from pairdiff.predict import (
    CHANGE_TOO_LARGE,
    FLAGS,
    NO_VISIBLE_CHANGE,
    SCATTERED_CHANGES,
    PredictionResult,
    Predictor,
)
from pairdiff.synth import EDIT_KINDS, TWINS, SynthPair, make_pair
from pairdiff.taxonomy import MINCU, VDIFF

VDIFF_SLUGS = [c.slug for c in VDIFF]
MINCU_SLUGS = [c.slug for c in MINCU]
LOCAL_KINDS = (
    "recolour_region",
    "paste_object",
    "remove_object",
    "move_object",
    "count_change",
    "change_text",
    "blur_region",
    "resize_object",
)


@cache
def _predictor() -> PixelDiff:
    return PixelDiff()


def _predict(a: bytes, b: bytes, categories: list[str] = VDIFF_SLUGS) -> PredictionResult:
    return _predictor().predict(a, b, categories=categories)


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def _astronaut(size: int = 256) -> np.ndarray:
    return np.asarray(Image.fromarray(samples.astronaut()).resize((size, size)))


def _recolour(pixels: np.ndarray, x1: int, y1: int, x2: int, y2: int) -> np.ndarray:
    """A copy with one rectangle's colour channels rotated (red→green→blue): a local edit."""
    out = pixels.copy()
    out[y1:y2, x1:x2] = out[y1:y2, x1:x2][..., [1, 2, 0]]
    return out


def _kind_pair(kind: str, seed: int = 0) -> SynthPair:
    return make_pair(EDIT_KINDS.index(kind) * TWINS, seed)


def _best_iou(truth: Box, predicted: list[Box]) -> float:
    return max((iou(truth, p) for p in predicted), default=0.0)


def _all_boxes(result: PredictionResult, side: str) -> list[Box]:
    return [b for c in result.changes for b in getattr(c, f"boxes_{side}")]


def _assert_well_formed(result: PredictionResult, size_a: tuple, size_b: tuple) -> None:
    """Whole-pixel boxes inside each side's own frame, known flags, confidences in [0, 1]."""
    assert not result.error
    assert set(result.flags) <= set(FLAGS)
    assert result.confidence is not None and 0.0 <= result.confidence <= 1.0
    for change in result.changes:
        assert change.confidence is not None and 0.0 <= change.confidence <= 1.0
        assert change.boxes_a or change.boxes_b
        for boxes, (width, height) in ((change.boxes_a, size_a), (change.boxes_b, size_b)):
            for box in boxes:
                values = [box.x1, box.y1, box.x2, box.y2]
                assert all(float(v).is_integer() for v in values)
                assert 0 <= box.x1 < box.x2 <= width and 0 <= box.y1 < box.y2 <= height


def test_it_is_a_predictor_named_pixeldiff():
    predictor: Predictor = PixelDiff()
    assert (predictor.name, predictor.version) == ("pixeldiff", "1")
    assert PixelDiff(max_side=256, delta_e=5.0).settings.max_side == 256
    with pytest.raises(TypeError):
        PixelDiff(no_such_option=1)


def test_identical_images_have_no_visible_change():
    image = _png(_astronaut())
    result = _predict(image, image)
    assert result.changes == ()
    assert result.flags == (NO_VISIBLE_CHANGE,)
    assert result.confidence == 1.0
    assert not result.error


def test_a_local_recolour_gives_one_box_on_both_sides():
    a = _astronaut()
    b = _recolour(a, 150, 40, 210, 90)
    result = _predict(_png(a), _png(b))
    assert len(result.changes) == 1
    change = result.changes[0]
    truth = Box(150, 40, 210, 90)
    assert iou(change.boxes_a[0], truth) >= 0.5
    assert iou(change.boxes_b[0], truth) >= 0.5
    assert result.flags == ()
    _assert_well_formed(result, (256, 256), (256, 256))


def test_the_generated_recolour_is_found_with_its_category():
    pair = _kind_pair("recolour_region")
    result = _predict(pair.image_a, pair.image_b)
    truth = pair.changes[0]
    assert len(result.changes) == 1
    assert iou(result.changes[0].boxes_a[0], Box(*truth.boxes_a[0])) >= 0.5
    assert iou(result.changes[0].boxes_b[0], Box(*truth.boxes_b[0])) >= 0.5
    assert result.changes[0].category == "regional_colour"


@pytest.mark.parametrize("kind", LOCAL_KINDS)
def test_generated_local_edits_are_found_where_they_are(kind):
    """Every true box on a present side is matched at IoU >= 0.5 (an absent side is absent)."""
    pair = _kind_pair(kind)
    result = _predict(pair.image_a, pair.image_b)
    _assert_well_formed(result, pair.size_a, pair.size_b)
    assert NO_VISIBLE_CHANGE not in result.flags
    for truth in pair.changes:
        for side in ("a", "b"):
            for box in getattr(truth, f"boxes_{side}"):
                assert _best_iou(Box(*box), _all_boxes(result, side)) >= 0.5, (kind, side, box)


@pytest.mark.parametrize(("kind", "side"), [("paste_object", "a"), ("remove_object", "b")])
def test_an_added_or_removed_object_leaves_its_empty_side_empty(kind, side):
    pair = _kind_pair(kind)
    result = _predict(pair.image_a, pair.image_b)
    assert len(result.changes) == 1
    assert getattr(result.changes[0], f"boxes_{side}") == ()
    assert result.changes[0].category == "appear_disappear"


def test_a_move_is_one_change_from_the_old_place_to_the_new():
    pair = _kind_pair("move_object")
    result = _predict(pair.image_a, pair.image_b)
    truth = pair.changes[0]
    assert len(result.changes) == 1
    change = result.changes[0]
    assert change.category == "position"
    assert iou(change.boxes_a[0], Box(*truth.boxes_a[0])) >= 0.5
    assert iou(change.boxes_b[0], Box(*truth.boxes_b[0])) >= 0.5
    assert SCATTERED_CHANGES not in result.flags


def test_global_brightness_is_a_whole_image_lighting_change():
    a = _astronaut()
    b = np.clip(255.0 * (a / 255.0) ** 0.6, 0, 255).astype(np.uint8)
    result = _predict(_png(a), _png(b))
    whole = Box(0, 0, 256, 256)
    assert result.changes[0].boxes_a == (whole,)
    assert result.changes[0].boxes_b == (whole,)
    assert result.changes[0].category == "lighting"
    assert "brighter" in result.changes[0].description
    assert NO_VISIBLE_CHANGE not in result.flags and CHANGE_TOO_LARGE not in result.flags


def test_a_global_suggestion_uses_only_the_projects_categories():
    a = _astronaut()
    b = np.clip(a * 0.6, 0, 255).astype(np.uint8)
    assert _predict(_png(a), _png(b), MINCU_SLUGS).changes[0].category == "attribute"
    assert _predict(_png(a), _png(b), ["object", "counting"]).changes[0].category == ""
    assert _predict(_png(a), _png(b), []).changes[0].category == ""


@pytest.mark.parametrize(
    ("kind", "seed", "category"),
    [
        ("global_colour", 0, "global_colour"),
        ("add_noise", 1, "noise_resolution"),  # turn 1 of add_noise is the whole-image grain
        ("downscale", 0, "noise_resolution"),
    ],
)
def test_generated_global_changes_are_detected_as_global(kind, seed, category):
    index = (EDIT_KINDS.index(kind) + (len(EDIT_KINDS) if seed else 0)) * TWINS
    pair = make_pair(index, seed)
    assert pair.changes[0].boxes_a == [(0, 0, *pair.size_a)]
    result = _predict(pair.image_a, pair.image_b)
    first = result.changes[0]
    assert first.category == category
    assert first.boxes_a == (Box(0, 0, *pair.size_a),)
    assert first.boxes_b == (Box(0, 0, *pair.size_b),)


def test_two_far_apart_edits_of_different_size_are_scattered():
    a = _astronaut()
    b = _recolour(a, 20, 20, 90, 90)
    # A small dark patch far away: a different edit, not a second copy of the first.
    b[150:175, 150:175] = (b[150:175, 150:175] * 0.3).astype(np.uint8)
    result = _predict(_png(a), _png(b))
    assert SCATTERED_CHANGES in result.flags
    assert len(result.changes) == 2
    boxes = _all_boxes(result, "a")
    assert _best_iou(Box(20, 20, 90, 90), boxes) >= 0.5
    assert _best_iou(Box(150, 150, 175, 175), boxes) >= 0.5


def test_a_single_edit_is_not_scattered():
    a = _astronaut()
    result = _predict(_png(a), _png(_recolour(a, 20, 20, 90, 90)))
    assert SCATTERED_CHANGES not in result.flags


def test_a_huge_local_change_is_too_large():
    a = _astronaut()
    b = a.copy()
    # Most of the picture replaced by another photo: not a lighting or colour change.
    other = np.asarray(Image.fromarray(samples.chelsea()).resize((256, 256)))
    b[:, :170] = other[:, :170]
    result = _predict(_png(a), _png(b))
    assert CHANGE_TOO_LARGE in result.flags
    assert NO_VISIBLE_CHANGE not in result.flags


def test_boxes_are_in_each_sides_own_frame_when_sizes_differ():
    a = np.asarray(Image.fromarray(samples.astronaut()).resize((400, 300)))
    edited = _recolour(a, 100, 60, 180, 140)
    b = np.asarray(Image.fromarray(edited).resize((200, 150), Image.Resampling.LANCZOS))
    result = _predict(_png(a), _png(b))
    _assert_well_formed(result, (400, 300), (200, 150))
    resolution = result.changes[0]
    assert resolution.category == "noise_resolution"
    assert resolution.boxes_a == (Box(0, 0, 400, 300),)
    assert resolution.boxes_b == (Box(0, 0, 200, 150),)
    local = [c for c in result.changes[1:] if c.boxes_a[0] != Box(0, 0, 400, 300)]
    assert len(local) == 1
    assert iou(local[0].boxes_a[0], Box(100, 60, 180, 140)) >= 0.5
    assert iou(local[0].boxes_b[0], Box(50, 30, 90, 70)) >= 0.5


def test_boxes_are_in_the_displayed_frame_of_an_exif_rotated_image():
    upright = _astronaut()[:, :200]  # 200 wide, 256 tall as displayed
    edited = _recolour(upright, 120, 30, 180, 80)
    # A is stored lying on its side with EXIF orientation 6 (rotate 90° clockwise to show).
    stored = Image.fromarray(upright).transpose(Image.Transpose.ROTATE_90)
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    stored.save(out, format="PNG", exif=exif)
    result = _predict(out.getvalue(), _png(edited))
    _assert_well_formed(result, (200, 256), (200, 256))
    assert len(result.changes) == 1
    assert iou(result.changes[0].boxes_a[0], Box(120, 30, 180, 80)) >= 0.5
    assert iou(result.changes[0].boxes_b[0], Box(120, 30, 180, 80)) >= 0.5


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"not an image at all",
        _png(np.zeros((32, 32, 3), np.uint8))[:60],  # truncated
        None,
        "a string",
    ],
)
@pytest.mark.parametrize("side", ["a", "b"])
def test_bad_input_is_an_error_not_an_exception(bad, side):
    good = _png(np.zeros((32, 32, 3), np.uint8))
    a, b = (bad, good) if side == "a" else (good, bad)
    result = PixelDiff().predict(a, b, categories=VDIFF_SLUGS)
    assert result.error.startswith(f"image {side.upper()}")
    assert result.changes == () and result.flags == ()


def test_an_image_over_the_pixel_limit_is_refused():
    image = _png(_astronaut(64))
    result = PixelDiff(max_pixels=1000).predict(image, image, categories=[])
    assert "over 1,000 pixels" in result.error


@pytest.mark.parametrize("mode", ["L", "RGBA", "P", "I;16", "LA"])
def test_other_pixel_formats_are_compared(mode):
    a = Image.fromarray(_astronaut(96))
    inverted = np.asarray(a).copy()
    # Inverted rather than recoloured, so that the edit shows in greyscale too.
    inverted[30:60, 30:60] = 255 - inverted[30:60, 30:60]
    b = Image.fromarray(inverted)
    if mode == "I;16":
        a, b = (Image.fromarray(np.asarray(i.convert("L"), np.uint16) * 257) for i in (a, b))
    elif mode == "P":
        # Without dithering: diffused error would carry the edit's difference downstream.
        a, b = (i.convert("P", dither=Image.Dither.NONE) for i in (a, b))
    else:
        a, b = a.convert(mode), b.convert(mode)
    out_a, out_b = io.BytesIO(), io.BytesIO()
    a.save(out_a, format="PNG")
    b.save(out_b, format="PNG")
    result = _predict(out_a.getvalue(), out_b.getvalue())
    _assert_well_formed(result, (96, 96), (96, 96))
    assert _best_iou(Box(30, 30, 60, 60), _all_boxes(result, "a")) >= 0.5


def test_tiny_images_do_not_break_it():
    a = np.zeros((5, 7, 3), np.uint8)
    b = a.copy()
    b[1:4, 2:5] = 255
    assert _predict(_png(a), _png(a)).flags == (NO_VISIBLE_CHANGE,)
    result = _predict(_png(a), _png(b))
    _assert_well_formed(result, (7, 5), (7, 5))
    assert result.changes


def test_inputs_are_left_untouched_and_answers_repeat():
    pair = _kind_pair("move_object")
    a, b = bytearray(pair.image_a), bytearray(pair.image_b)
    first = PixelDiff().predict(a, b, categories=VDIFF_SLUGS)
    second = PixelDiff().predict(bytes(a), bytes(b), categories=VDIFF_SLUGS)
    assert (bytes(a), bytes(b)) == (pair.image_a, pair.image_b)
    assert first == second
    assert first.raw == second.raw


def test_settings_are_frozen_named_and_checked():
    s = Settings()
    assert "max_side" in Settings.names()
    with pytest.raises(AttributeError):
        s.max_side = 3
    for bad in ({"delta_e": 0}, {"mad_k": -1.0}, {"max_side": 8}, {"grow": True}):
        with pytest.raises(ValueError):
            Settings(**bad)
    assert Settings(min_confidence=0).min_confidence == 0


def test_jpeg_on_both_sides_still_shows_just_the_edit():
    """Re-encoding residue (JPEG's blocks, its halved colour resolution) is not an edit."""
    a = _astronaut()
    b = _recolour(a, 150, 40, 210, 90)

    def jpeg(pixels: np.ndarray) -> bytes:
        out = io.BytesIO()
        Image.fromarray(pixels).save(out, format="JPEG", quality=90)
        return out.getvalue()

    result = _predict(jpeg(a), jpeg(b))
    assert len(result.changes) == 1
    assert iou(result.changes[0].boxes_a[0], Box(150, 40, 210, 90)) >= 0.5
    assert result.flags == ()


def test_a_rewritten_word_is_suggested_as_text():
    pair = _kind_pair("change_text")
    result = _predict(pair.image_a, pair.image_b)
    assert [c.category for c in result.changes] == ["ocr_text"]
