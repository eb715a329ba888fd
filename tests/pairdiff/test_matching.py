import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.geometry import Box, iou
from pairdiff.matching import Matching, iou_matrix, match_boxes, side_agrees


def strip(x1: float, x2: float) -> Box:
    """A box spanning ``x1..x2`` at a fixed height, so IoU is the 1-D interval IoU."""
    return Box(x1, 0, x2, 10)


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    x1, x2 = sorted(draw(st.lists(st.integers(0, 100), min_size=2, max_size=2, unique=True)))
    y1, y2 = sorted(draw(st.lists(st.integers(0, 100), min_size=2, max_size=2, unique=True)))
    return Box(x1, y1, x2, y2)


def test_identical_boxes_match_each_other() -> None:
    a = [strip(0, 10), strip(50, 60)]
    b = [strip(50, 60), strip(0, 10)]

    expected = Matching(pairs=[(0, 1, 1.0), (1, 0, 1.0)], unmatched_a=[], unmatched_b=[])

    assert match_boxes(a, b) == expected


def test_matching_is_optimal_not_greedy() -> None:
    # a0–b0 is the best single pair (9/11), but taking it leaves a1 with b1 (1/3).
    # Pairing across (2/3 + 2/3) gives the larger total, and both pairs pass 0.5.
    a = [strip(10, 20), strip(13, 23)]
    b = [strip(11, 21), strip(8, 18)]
    assert iou(a[0], b[0]) == pytest.approx(9 / 11)
    greedy_total = iou(a[0], b[0]) + iou(a[1], b[1])

    m = match_boxes(a, b)

    assert [(i, j) for i, j, _ in m.pairs] == [(0, 1), (1, 0)]
    assert [score for _, _, score in m.pairs] == pytest.approx([2 / 3, 2 / 3])
    assert sum(score for _, _, score in m.pairs) > greedy_total
    assert side_agrees(m)


def test_unequal_counts_leave_the_extra_boxes_unmatched() -> None:
    a = [strip(0, 10), strip(40, 50), strip(80, 90)]
    b = [strip(81, 91)]

    m = match_boxes(a, b)

    assert m.pairs == [(2, 0, pytest.approx(9 / 11))]
    assert (m.unmatched_a, m.unmatched_b) == ([0, 1], [])
    assert not side_agrees(m)


def test_assigned_pair_with_zero_iou_is_not_a_match() -> None:
    a = [strip(0, 10), strip(50, 60)]
    b = [strip(1, 11), strip(70, 80)]

    m = match_boxes(a, b)

    assert m.pairs == [(0, 0, pytest.approx(9 / 11))]
    assert (m.unmatched_a, m.unmatched_b) == ([1], [1])


def test_touching_boxes_are_not_a_match() -> None:
    m = match_boxes([strip(0, 10)], [strip(10, 20)])

    assert m == Matching(pairs=[], unmatched_a=[0], unmatched_b=[0])


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([], [], Matching(pairs=[], unmatched_a=[], unmatched_b=[])),
        ([strip(0, 10)], [], Matching(pairs=[], unmatched_a=[0], unmatched_b=[])),
        ([], [strip(0, 10), strip(5, 9)], Matching(pairs=[], unmatched_a=[], unmatched_b=[0, 1])),
    ],
    ids=["both-empty", "b-empty", "a-empty"],
)
def test_empty_sides(a: list[Box], b: list[Box], expected: Matching) -> None:
    assert match_boxes(a, b) == expected


def test_pair_scores_are_plain_floats_and_indices_plain_ints() -> None:
    m = match_boxes([strip(0, 10)], [strip(0, 10)])

    assert [tuple(type(v) for v in p) for p in m.pairs] == [(int, int, float)]


@pytest.mark.parametrize(
    ("a", "b", "threshold", "agrees"),
    [
        ([], [], 0.5, True),
        ([strip(0, 10)], [], 0.5, False),
        ([], [strip(0, 10)], 0.5, False),
        ([strip(0, 10)], [strip(0, 10)], 0.5, True),
        ([strip(0, 10)], [strip(0, 5)], 0.5, True),  # IoU exactly 0.5
        ([strip(0, 10)], [strip(0, 4.9)], 0.5, False),
        ([strip(0, 10)], [strip(0, 4.9)], 0.4, True),
        ([strip(0, 10)], [strip(20, 30)], 0.5, False),
        ([strip(0, 10), strip(20, 30)], [strip(0, 10)], 0.5, False),
        ([strip(0, 10), strip(20, 30)], [strip(21, 30), strip(1, 10)], 0.5, True),
        ([strip(0, 10), strip(20, 30)], [strip(25, 30), strip(1, 10)], 0.5, True),
        ([strip(0, 10), strip(20, 30)], [strip(26, 30), strip(1, 10)], 0.5, False),
    ],
)
def test_side_agrees_table(a: list[Box], b: list[Box], threshold: float, agrees: bool) -> None:
    assert side_agrees(match_boxes(a, b), threshold) is agrees


@pytest.mark.parametrize("threshold", [-0.1, 1.1])
def test_side_agrees_rejects_threshold_outside_zero_one(threshold: float) -> None:
    with pytest.raises(ValueError, match="must lie between 0 and 1"):
        side_agrees(match_boxes([], []), threshold)


def test_mean_iou_averages_matched_pairs() -> None:
    m = match_boxes([strip(0, 10), strip(20, 30)], [strip(0, 10), strip(20, 25)])

    assert m.mean_iou == pytest.approx(0.75)


def test_mean_iou_without_pairs_is_zero() -> None:
    assert match_boxes([], []).mean_iou == 0.0
    assert match_boxes([strip(0, 10)], [strip(20, 30)]).mean_iou == 0.0


def test_is_empty_only_when_neither_side_has_boxes() -> None:
    assert match_boxes([], []).is_empty
    assert not match_boxes([strip(0, 10)], []).is_empty
    assert not match_boxes([strip(0, 10)], [strip(0, 10)]).is_empty


@given(st.lists(boxes(), max_size=5), st.lists(boxes(), max_size=5))
def test_matching_accounts_for_every_box_once(a: list[Box], b: list[Box]) -> None:
    m = match_boxes(a, b)

    assert sorted([i for i, _, _ in m.pairs] + m.unmatched_a) == list(range(len(a)))
    assert sorted([j for _, j, _ in m.pairs] + m.unmatched_b) == list(range(len(b)))
    assert [i for i, _, _ in m.pairs] == sorted(i for i, _, _ in m.pairs)
    assert all(score == iou(a[i], b[j]) > 0 for i, j, score in m.pairs)
    assert match_boxes(a, b) == m


@given(st.lists(boxes(), max_size=4), st.lists(boxes(), max_size=4))
def test_swapping_sides_keeps_the_total_iou(a: list[Box], b: list[Box]) -> None:
    forward = sum(score for _, _, score in match_boxes(a, b).pairs)
    backward = sum(score for _, _, score in match_boxes(b, a).pairs)

    assert forward == pytest.approx(backward)


@given(st.lists(boxes(), min_size=1, max_size=6), st.lists(boxes(), min_size=1, max_size=6))
def test_iou_matrix_equals_pairwise_iou_exactly(a, b):
    matrix = iou_matrix(a, b)
    assert matrix.shape == (len(a), len(b))
    assert all(matrix[i, j] == iou(x, y) for i, x in enumerate(a) for j, y in enumerate(b))


def test_a_tie_in_total_iou_goes_to_the_matching_with_more_pairs_over_the_bar() -> None:
    # (0, 0, 2, 10)–(0, 0, 3, 10) and (0, 0, 3, 10)–(1, 0, 3, 10) give 2/3 + 2/3; the other
    # way round 1 + 1/3. Both total 4/3; only the first has every pair at 0.5 or more.
    a = [Box(0, 0, 2, 10), Box(0, 0, 3, 10)]
    b = [Box(0, 0, 3, 10), Box(1, 0, 3, 10)]

    m = match_boxes(a, b, prefer_iou=0.5)

    assert [(i, j) for i, j, _ in m.pairs] == [(0, 0), (1, 1)]
    assert side_agrees(m, 0.5)
