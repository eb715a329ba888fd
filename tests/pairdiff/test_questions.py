import re
from collections import Counter

import pytest

from pairdiff.release.fallback import fallback_negatives
from pairdiff.release.questions import (
    LETTERS,
    NO_DIFFERENCE,
    answer_positions,
    question_item,
)


def _norm(text: str) -> str:
    return re.sub(r"[\s.!?;:,]+$", "", " ".join(text.casefold().split()))


@pytest.mark.parametrize(
    ("n_items", "expected_counts"),
    [(1000, [250, 250, 250, 250]), (10, [2, 2, 3, 3]), (3, [0, 1, 1, 1]), (0, [0, 0, 0, 0])],
)
def test_answer_positions_are_balanced(n_items: int, expected_counts: list[int]) -> None:
    positions = answer_positions(n_items, seed="release-1")
    counts = Counter(positions)
    assert len(positions) == n_items
    assert set(positions) <= {0, 1, 2, 3}
    assert sorted(counts[p] for p in range(4)) == expected_counts


def test_answer_positions_balance_any_number_of_options() -> None:
    counts = Counter(answer_positions(11, seed=3, n_options=5))
    assert sorted(counts[p] for p in range(5)) == [2, 2, 2, 2, 3]


def test_answer_positions_are_seeded() -> None:
    assert answer_positions(100, seed=1) == answer_positions(100, seed=1)
    assert answer_positions(100, seed=1) != answer_positions(100, seed=2)


def test_which_positions_get_the_extra_answer_depends_on_the_seed() -> None:
    favoured = {frozenset(answer_positions(2, seed=s)) for s in range(30)}
    assert len(favoured) > 1


@pytest.mark.parametrize(("n_items", "n_options"), [(-1, 4), (4, 0)])
def test_answer_positions_reject_bad_sizes(n_items: int, n_options: int) -> None:
    with pytest.raises(ValueError):
        answer_positions(n_items, seed=0, n_options=n_options)


TRUTH = "The cup moved to the left of the plate."
NEGATIVES = ("The cup moved to the right of the plate.", "The bowl moved to the left of the plate.")


@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_question_item_puts_the_truth_at_the_answer_position(position: int) -> None:
    item = question_item(description=TRUTH, negatives=NEGATIVES, answer_position=position, seed="s")
    assert item["question"] == (
        "Which sentence describes the difference between image A and image B?"
    )
    assert list(item["options"]) == list(LETTERS)
    assert item["answer"] == LETTERS[position]
    assert item["options"][LETTERS[position]] == TRUTH
    assert sorted(item["options"].values()) == sorted([TRUTH, *NEGATIVES, NO_DIFFERENCE])


def test_question_item_is_seeded() -> None:
    def options(seed: int) -> dict:
        return question_item(description=TRUTH, negatives=NEGATIVES, answer_position=0, seed=seed)[
            "options"
        ]

    assert options(1) == options(1)
    assert len({tuple(options(s).values()) for s in range(20)}) > 1


@pytest.mark.parametrize(
    ("negatives", "position"),
    [
        (NEGATIVES[:1], 0),
        ((*NEGATIVES, "The cup was removed."), 0),
        ((NEGATIVES[0], NEGATIVES[0]), 0),
        ((NEGATIVES[0], "the cup moved to the LEFT of the plate"), 0),
        ((NEGATIVES[0], NO_DIFFERENCE), 0),
        ((NEGATIVES[0], "  "), 0),
        (NEGATIVES, 4),
        (NEGATIVES, -1),
    ],
)
def test_question_item_rejects_bad_input(negatives: tuple[str, ...], position: int) -> None:
    with pytest.raises(ValueError):
        question_item(description=TRUTH, negatives=negatives, answer_position=position, seed=0)


def test_generated_negatives_make_a_valid_question() -> None:
    negatives = fallback_negatives(description=TRUTH, entities=["cup"], seed=7)
    assert negatives[0] == "The cup moved to the right of the plate."
    item = question_item(description=TRUTH, negatives=negatives, answer_position=2, seed=7)
    assert item["answer"] == "C"
    assert len(set(item["options"].values())) == 4
