import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pairdiff.coords import (
    from_coco,
    from_label_studio,
    from_thousand,
    to_coco,
    to_label_studio,
    to_thousand,
)
from pairdiff.geometry import Box, BoxError, Frame

FRAME = Frame(640, 480)


@st.composite
def framed_boxes(draw: st.DrawFn, whole_pixels: bool = True) -> tuple[Box, Frame]:
    frame = Frame(draw(st.integers(1, 5000)), draw(st.integers(1, 5000)))
    if whole_pixels:
        xs: list[float]
        ys: list[float]
        xs = draw(st.lists(st.integers(0, frame.width), min_size=2, max_size=2, unique=True))
        ys = draw(st.lists(st.integers(0, frame.height), min_size=2, max_size=2, unique=True))
    else:
        coord = st.floats(0, 1)
        xs = [frame.width * v for v in draw(st.lists(coord, min_size=2, max_size=2, unique=True))]
        ys = [frame.height * v for v in draw(st.lists(coord, min_size=2, max_size=2, unique=True))]
    (x1, x2), (y1, y2) = sorted(xs), sorted(ys)
    assume(x1 < x2 and y1 < y2)
    return Box.parse([x1, y1, x2, y2], frame), frame


def _coords(box: Box) -> list[float]:
    return [box.x1, box.y1, box.x2, box.y2]


@pytest.mark.parametrize(
    ("box", "frame", "expected"),
    [
        (Box(0, 0, 640, 480), FRAME, (0, 0, 1000, 1000)),
        (Box(64, 48, 320, 240), FRAME, (100, 100, 500, 500)),
        (Box(125, 730, 228, 783), Frame(1000, 1000), (125, 730, 228, 783)),
        # 1000 * 1 / 640 = 1.5625 → 2; 1000 * 0.8 / 640 = 1.25 → 1
        (Box(1, 1, 2, 2), FRAME, (2, 2, 3, 4)),
        (Box(0.8, 0.8, 3, 3), FRAME, (1, 2, 5, 6)),
        # Python's round halves to even: 1000 * 4 / 1600 = 2.5 → 2, 1000 * 12 / 1600 = 7.5 → 8
        (Box(4, 4, 12, 12), Frame(1600, 1600), (2, 2, 8, 8)),
    ],
)
def test_to_thousand_examples(box: Box, frame: Frame, expected: tuple[int, ...]) -> None:
    result = to_thousand(box, frame)

    assert result == expected
    assert all(type(c) is int for c in result)


def test_to_thousand_uses_each_sides_own_frame() -> None:
    # The same object drawn on A (1920×1080) and on a half-size B (960×540).
    box_a = Box(480, 270, 960, 540)
    box_b = Box(240, 135, 480, 270)

    assert to_thousand(box_a, Frame(1920, 1080)) == (250, 250, 500, 500)
    assert to_thousand(box_b, Frame(960, 540)) == (250, 250, 500, 500)
    assert to_thousand(box_b, Frame(1920, 1080)) == (125, 125, 250, 250)


def test_from_thousand_scales_to_pixels() -> None:
    assert from_thousand([250, 500, 500, 1000], FRAME) == Box(160, 240, 320, 480)
    assert from_thousand([0, 0, 1000, 1000], Frame(333, 77)) == Box(0, 0, 333, 77)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([-1, 0, 10, 10], "must lie between 0 and 1000"),
        ([0, 0, 1001, 10], "must lie between 0 and 1000"),
        ([10, 0, 10, 10], "x1 must be less than x2"),
        ([0, 20, 10, 10], "y1 must be less than y2"),
        ([0, 0, 10], "expected 4 numbers"),
        ([0, 0, math.nan, 10], "not a finite number"),
        ([0, 0, True, 10], "not a number"),
    ],
)
def test_from_thousand_rejects_invalid_values(values: list[float], message: str) -> None:
    with pytest.raises(BoxError, match=message):
        from_thousand(values, FRAME)


@given(st.integers(1, 10_000), st.integers(1, 10_000), st.data())
def test_thousand_to_pixels_to_thousand_is_exact(
    width: int, height: int, data: st.DataObject
) -> None:
    c = st.integers(0, 1000)
    x1, x2 = sorted(data.draw(st.lists(c, min_size=2, max_size=2, unique=True)))
    y1, y2 = sorted(data.draw(st.lists(c, min_size=2, max_size=2, unique=True)))
    frame = Frame(width, height)

    assert to_thousand(from_thousand([x1, y1, x2, y2], frame), frame) == (x1, y1, x2, y2)


def test_to_coco_is_x_y_width_height() -> None:
    assert to_coco(Box(10, 20, 40, 30)) == [10, 20, 30, 10]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([10, 10, 0, 5], "width and height must be positive"),
        ([10, 10, 5, -5], "width and height must be positive"),
        ([630, 10, 20, 5], "lies outside the 640×480 image"),
        ([-1, 10, 20, 5], "lies outside the 640×480 image"),
        ([1, 2, 3], "expected 4 numbers"),
        (["1", 2, 3, 4], "not a number"),
    ],
)
def test_from_coco_rejects_invalid_values(values: list[float], message: str) -> None:
    with pytest.raises(BoxError, match=message):
        from_coco(values, FRAME)


@given(framed_boxes())
def test_pixels_to_coco_to_pixels_is_exact(framed: tuple[Box, Frame]) -> None:
    box, frame = framed

    assert from_coco(to_coco(box), frame) == box


@given(framed_boxes(whole_pixels=False))
def test_fractional_pixels_to_coco_to_pixels_is_close(framed: tuple[Box, Frame]) -> None:
    box, frame = framed
    back = from_coco(to_coco(box), frame)

    assert _coords(back) == pytest.approx(_coords(box), abs=1e-6)


def test_to_label_studio_is_percent_of_the_image() -> None:
    assert to_label_studio(Box(64, 120, 320, 480), FRAME) == {
        "x": 10.0,
        "y": 25.0,
        "width": 40.0,
        "height": 75.0,
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"x": 10, "y": 10, "width": 0, "height": 5}, "width and height must be positive"),
        ({"x": 95, "y": 10, "width": 10, "height": 5}, "lies outside the 640×480 image"),
        ({"x": 10, "y": 10, "width": 5}, "missing height"),
        ({"x": 10, "y": 10, "width": 5, "height": 5, "rotation": 30}, "rotated"),
        ({"x": "10", "y": 10, "width": 5, "height": 5}, "not a number"),
        ([10, 10, 5, 5], "expected an object"),
    ],
)
def test_from_label_studio_rejects_invalid_values(value: object, message: str) -> None:
    with pytest.raises(BoxError, match=message):
        from_label_studio(value, FRAME)  # type: ignore[arg-type]


def test_from_label_studio_accepts_unrotated_value_with_extra_keys() -> None:
    value = {"x": 10, "y": 25, "width": 40, "height": 75, "rotation": 0, "rectanglelabels": []}

    assert from_label_studio(value, FRAME) == Box(64, 120, 320, 480)


@given(st.one_of(framed_boxes(), framed_boxes(whole_pixels=False)))
def test_pixels_to_label_studio_to_pixels_is_within_a_millionth(framed: tuple[Box, Frame]) -> None:
    box, frame = framed
    back = from_label_studio(to_label_studio(box, frame), frame)

    assert _coords(back) == pytest.approx(_coords(box), abs=1e-6)


@pytest.mark.parametrize("frame", [Frame(640, 480), Frame(3, 7), Frame(4999, 4001)])
def test_box_touching_the_far_edges_survives_label_studio_round_trip(frame: Frame) -> None:
    box = Box(frame.width / 3, frame.height / 3, frame.width, frame.height)

    back = from_label_studio(to_label_studio(box, frame), frame)

    assert (back.x2, back.y2) == (frame.width, frame.height)
    assert back.x1 == pytest.approx(box.x1, abs=1e-6)
