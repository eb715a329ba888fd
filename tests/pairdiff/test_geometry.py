import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.geometry import (
    Box,
    BoxError,
    Difficulty,
    Frame,
    difficulty,
    difficulty_of_ratio,
    intersection_area,
    iou,
    mean_box,
)

FRAME = Frame(640, 480)


@st.composite
def boxes(draw: st.DrawFn, frame: Frame = FRAME) -> Box:
    x1, x2 = sorted(
        draw(st.lists(st.integers(0, frame.width), min_size=2, max_size=2, unique=True))
    )
    y1, y2 = sorted(
        draw(st.lists(st.integers(0, frame.height), min_size=2, max_size=2, unique=True))
    )
    return Box(x1, y1, x2, y2)


@pytest.mark.parametrize(
    ("width", "height"),
    [(0, 480), (640, 0), (-640, 480), (640.5, 480), (True, 480), ("640", 480), (None, 480)],
)
def test_frame_without_positive_whole_size_is_rejected(width: object, height: object) -> None:
    with pytest.raises(BoxError, match="must be a positive whole number"):
        Frame(width, height)  # type: ignore[arg-type]


def test_frame_area_is_width_times_height() -> None:
    assert Frame(640, 480).area == 307_200


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([10, 5, 8, 20], r"box \[10, 5, 8, 20\]: x1 must be less than x2"),
        ([10, 5, 10, 20], "x1 must be less than x2"),
        ([10, 20, 30, 20], "y1 must be less than y2"),
        ([10, 30, 30, 20], "y1 must be less than y2"),
        ([-1, 5, 8, 20], r"box \[-1, 5, 8, 20\] lies outside the 640×480 image"),
        ([0, -0.5, 8, 20], "lies outside the 640×480 image"),
        ([600, 10, 641, 50], r"lies outside the 640×480 image \(x2 must be at most 640\)"),
        ([10, 10, 50, 480.01], "lies outside"),
        ([700, 500, 800, 600], "lies outside"),
        ([10, 5, math.nan, 20], "nan is not a finite number"),
        ([10, 5, math.inf, 20], "inf is not a finite number"),
        ([True, 5, 8, 20], "True is not a number"),
        ([10, "5", 80, 20], "'5' is not a number"),
        ([10, None, 80, 20], "None is not a number"),
        ("1234", "expected a list of 4 numbers"),
        ({"x1": 1, "y1": 2, "x2": 3, "y2": 4}, "expected a list of 4 numbers"),
        (12, "expected a list of 4 numbers"),
        ([10, 5, 80], "expected 4 numbers, got 3"),
        ([10, 5, 80, 20, 1], "expected 4 numbers, got 5"),
        ([], "expected 4 numbers, got 0"),
        ([[10, 5], [80, 20]], "expected 4 numbers, got 2"),
    ],
)
def test_invalid_box_is_rejected_with_a_clear_message(values: object, message: str) -> None:
    with pytest.raises(BoxError, match=message):
        Box.parse(values, FRAME)


@pytest.mark.parametrize(
    "values",
    [[0, 0, 640, 480], [0, 0, 1, 1], (10.5, 20.25, 30, 40), [639, 479, 640, 480]],
)
def test_box_inside_image_is_accepted(values: list[float]) -> None:
    box = Box.parse(values, FRAME)

    assert [box.x1, box.y1, box.x2, box.y2] == list(values)


def test_parsed_box_coordinates_are_plain_floats() -> None:
    box = Box.parse([1, 2, 3, 4], FRAME)

    assert all(type(v) is float for v in (box.x1, box.y1, box.x2, box.y2))


def test_box_error_is_a_value_error() -> None:
    assert issubclass(BoxError, ValueError)


def test_box_size_properties() -> None:
    box = Box(10, 20, 40, 30)

    assert (box.width, box.height, box.area) == (30, 10, 300)


def test_whole_box_covers_the_image() -> None:
    assert Box.whole(FRAME) == Box(0, 0, 640, 480)
    assert Box.whole(FRAME).area == FRAME.area


@pytest.mark.parametrize(
    ("box", "expected"),
    [
        (Box(10, 20, 30, 40), [10, 20, 30, 40]),
        (Box(10.5, 20.25, 30.125, 40.999), [10.5, 20.25, 30.12, 41]),
        (Box(0.333333, 1, 2.0, 3), [0.33, 1, 2, 3]),
    ],
)
def test_as_list_gives_ints_where_integral_else_two_decimals(
    box: Box, expected: list[float]
) -> None:
    result = box.as_list()

    assert result == expected
    assert [type(v) for v in result] == [type(v) for v in expected]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (Box(0, 0, 10, 10), Box(0, 0, 10, 10), 1.0),
        (Box(0, 0, 10, 10), Box(5, 5, 15, 15), 25 / 175),
        (Box(0, 0, 10, 10), Box(0, 0, 10, 5), 0.5),
        (Box(0, 0, 10, 10), Box(2, 2, 8, 8), 36 / 100),
        (Box(0, 0, 10, 10), Box(10, 0, 20, 10), 0.0),
        (Box(0, 0, 10, 10), Box(50, 50, 60, 60), 0.0),
    ],
    ids=["identical", "quarter-overlap", "half", "contained", "touching", "disjoint"],
)
def test_iou_hand_computed_values(a: Box, b: Box, expected: float) -> None:
    assert iou(a, b) == pytest.approx(expected)


def test_intersection_area_of_overlapping_boxes() -> None:
    assert intersection_area(Box(0, 0, 10, 10), Box(5, 5, 15, 15)) == 25
    assert intersection_area(Box(0, 0, 10, 10), Box(10, 10, 20, 20)) == 0


@given(boxes(), boxes())
def test_iou_is_symmetric_and_between_zero_and_one(a: Box, b: Box) -> None:
    assert iou(a, b) == iou(b, a)
    assert 0.0 <= iou(a, b) <= 1.0
    assert intersection_area(a, b) == intersection_area(b, a)


@given(st.tuples(st.floats(0, 1e4), st.floats(0, 1e4), st.floats(1e-3, 1e4), st.floats(1e-3, 1e4)))
def test_iou_of_a_box_with_itself_is_exactly_one(values: tuple[float, ...]) -> None:
    x, y, w, h = values
    box = Box(x, y, x + w, y + h)

    assert iou(box, box) == 1.0


def test_mean_box_is_coordinate_wise_mean() -> None:
    assert mean_box([Box(0, 0, 10, 10), Box(2, 4, 14, 20)]) == Box(1, 2, 12, 15)


def test_mean_box_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one box"):
        mean_box([])


@given(st.lists(boxes(), min_size=1, max_size=5))
def test_mean_box_stays_inside_the_image(items: list[Box]) -> None:
    mean = mean_box(items)

    assert Box.parse([mean.x1, mean.y1, mean.x2, mean.y2], FRAME) == mean


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [
        (1.0, Difficulty.EASY),
        (0.2500001, Difficulty.EASY),
        (0.25, Difficulty.MEDIUM),
        (0.1000001, Difficulty.MEDIUM),
        (0.10, Difficulty.HARD),
        (0.0, Difficulty.HARD),
    ],
)
def test_difficulty_of_ratio_boundaries(ratio: float, expected: Difficulty) -> None:
    assert difficulty_of_ratio(ratio) is expected


@pytest.mark.parametrize("ratio", [-0.1, 1.5, math.nan])
def test_difficulty_of_ratio_outside_zero_one_is_an_error(ratio: float) -> None:
    with pytest.raises(ValueError, match="must lie between 0 and 1"):
        difficulty_of_ratio(ratio)


SQUARE = Frame(100, 100)


@pytest.mark.parametrize(
    ("box", "expected"),
    [
        (Box(0, 0, 50, 50), Difficulty.MEDIUM),  # exactly 25 %
        (Box(0, 0, 50, 51), Difficulty.EASY),  # 25.5 %
        (Box(0, 0, 10, 100), Difficulty.HARD),  # exactly 10 %
        (Box(0, 0, 11, 100), Difficulty.MEDIUM),  # 11 %
        (Box(0, 0, 1, 1), Difficulty.HARD),
        (Box(0, 0, 100, 100), Difficulty.EASY),
    ],
)
def test_difficulty_of_a_single_box(box: Box, expected: Difficulty) -> None:
    assert difficulty([([box], SQUARE)]) is expected


def test_difficulty_takes_the_largest_box_over_both_sides() -> None:
    sides = [([Box(0, 0, 10, 10)], SQUARE), ([Box(0, 0, 5, 5), Box(0, 0, 60, 60)], SQUARE)]

    assert difficulty(sides) is Difficulty.EASY


def test_difficulty_measures_each_box_against_its_own_image() -> None:
    # The same 100×50 pixel box is 25 % of A (200×100) but only 6.25 % of B (400×200).
    box = Box(0, 0, 100, 50)

    assert difficulty([([box], Frame(200, 100))]) is Difficulty.MEDIUM
    assert difficulty([([box], Frame(400, 200))]) is Difficulty.HARD
    assert difficulty([([box], Frame(200, 100)), ([box], Frame(400, 200))]) is Difficulty.MEDIUM


@pytest.mark.parametrize("sides", [[], [([], SQUARE)], [([], SQUARE), ([], Frame(50, 50))]])
def test_difficulty_without_boxes_is_none(sides: list[tuple[list[Box], Frame]]) -> None:
    assert difficulty(sides) is None


def test_difficulty_values_are_strings() -> None:
    assert [d.value for d in Difficulty] == ["easy", "medium", "hard"]
    assert Difficulty.EASY == "easy"
