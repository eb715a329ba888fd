import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.anchors import (
    LOC_NULL,
    anchor_index,
    parse_tokens,
    region_tokens,
    side_tokens,
)


@pytest.mark.parametrize(
    ("c", "expected"),
    [
        (0, 0),
        (99.9, 0),
        (99.99999999999999, 0),
        (100, 1),
        (150, 1),
        (899, 8),
        (900, 9),
        (999, 9),
        (1000, 9),
    ],
)
def test_anchor_index_examples(c: float, expected: int) -> None:
    assert anchor_index(c) == expected


@pytest.mark.parametrize("c", [-1, -0.01, 1000.01, 1e6, math.nan, math.inf, True, "5", None])
def test_anchor_index_outside_zero_to_thousand_is_an_error(c: object) -> None:
    with pytest.raises(ValueError, match="must be a number between 0 and 1000"):
        anchor_index(c)  # type: ignore[arg-type]


@given(st.integers(0, 1000))
def test_anchor_index_matches_floor_of_c_over_100_capped_at_9(c: int) -> None:
    assert anchor_index(c) == min(math.floor(c / 100), 9)


@pytest.mark.parametrize(
    ("box", "expected"),
    [
        ((125, 730, 228, 783), "<loc_1><loc_7><loc_2><loc_7>"),
        ((0, 0, 1000, 1000), "<loc_0><loc_0><loc_9><loc_9>"),
        ([99.9, 100, 999, 900], "<loc_0><loc_1><loc_9><loc_9>"),
    ],
)
def test_region_tokens_are_four_anchors_in_xyxy_order(box: tuple[int, ...], expected: str) -> None:
    assert region_tokens(box) == expected


def test_region_tokens_need_four_coordinates() -> None:
    with pytest.raises(ValueError, match="must have 4 coordinates"):
        region_tokens((1, 2, 3))


def test_absent_side_is_loc_null() -> None:
    assert side_tokens([]) == LOC_NULL == "<loc_null>"


def test_side_tokens_concatenate_regions() -> None:
    boxes = [(125, 730, 228, 783), (0, 0, 1000, 1000)]

    assert side_tokens(boxes) == "<loc_1><loc_7><loc_2><loc_7><loc_0><loc_0><loc_9><loc_9>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<loc_null>", None),
        ("  <loc_null>\n", None),
        ("<loc_1><loc_7><loc_2><loc_7>", [(1, 7, 2, 7)]),
        ("<loc_1> <loc_7> <loc_2> <loc_7>", [(1, 7, 2, 7)]),
        ("<loc_0><loc_0><loc_9><loc_9><loc_3><loc_4><loc_5><loc_6>", [(0, 0, 9, 9), (3, 4, 5, 6)]),
        # Well-formed but inverted regions are returned as written, for scoring to judge.
        ("<loc_5><loc_5><loc_1><loc_1>", [(5, 5, 1, 1)]),
    ],
)
def test_parse_tokens_examples(text: str, expected: list[tuple[int, ...]] | None) -> None:
    assert parse_tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected anchor tokens or <loc_null>"),
        ("   ", "expected anchor tokens or <loc_null>"),
        ("<loc_1><loc_2><loc_3>", "3 anchors is not a whole number of regions of 4"),
        ("<loc_1><loc_2><loc_3><loc_4><loc_5>", "5 anchors"),
        ("<loc_12><loc_2><loc_3><loc_4>", r"<loc_12> is not one of <loc_0>\.\.<loc_9>"),
        ("<loc_-1><loc_2><loc_3><loc_4>", "<loc_-1> is not an anchor token"),
        ("<loc_a><loc_2><loc_3><loc_4>", "<loc_a> is not an anchor token"),
        ("<loc_1><loc_2><loc_3><loc_4> car", "unexpected text 'car'"),
        ("the car <loc_1><loc_2><loc_3><loc_4>", "unexpected text 'the car"),
        ("<loc_1><loc_2><loc_3><loc_4", "unexpected text '<loc_4'"),
        ("<loc_null><loc_null>", "<loc_null> must stand alone"),
        ("<loc_null><loc_1><loc_2><loc_3><loc_4>", "<loc_null> must stand alone"),
        ("<LOC_1><loc_2><loc_3><loc_4>", "unexpected text"),
    ],
)
def test_parse_tokens_rejects_malformed_strings(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_tokens(text)


thousand_boxes = st.tuples(
    st.integers(0, 1000), st.integers(0, 1000), st.integers(0, 1000), st.integers(0, 1000)
)


@given(st.lists(thousand_boxes, max_size=4))
def test_parse_tokens_round_trips_side_tokens(boxes: list[tuple[int, int, int, int]]) -> None:
    expected = [tuple(anchor_index(c) for c in box) for box in boxes] or None

    assert parse_tokens(side_tokens(boxes)) == expected
