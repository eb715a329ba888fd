from dataclasses import replace

import pytest

from pairdiff.agreement import AgreementPolicy
from pairdiff.answers import Answer, ChangeAnswer
from pairdiff.geometry import Box, BoxError
from pairdiff.gold import GoldChangeScore, GoldScore, answer_from_changes, score_against_gold

POLICY = AgreementPolicy()
CAR = [10, 10, 50, 50]
DOG = [100, 100, 150, 150]


def raw(boxes_a=(CAR,), boxes_b=(CAR,), category="attribute", entity="car") -> dict:
    return {
        "category": category,
        "description": "The car turned blue.",
        "entity_a": entity,
        "entity_b": entity,
        "boxes_a": [list(b) for b in boxes_a],
        "boxes_b": [list(b) for b in boxes_b],
    }


DOG_REMOVED = raw((DOG,), (), category="object", entity="dog")


def test_answer_from_changes_reads_the_submit_body_shape() -> None:
    gold = answer_from_changes([raw(boxes_b=())])

    assert gold == Answer(
        tier="excellent",
        defects=(),
        time_spent_ms=0,
        changes=(
            ChangeAnswer(
                category="attribute",
                description="The car turned blue.",
                entity_a="car",
                entity_b="car",
                boxes_a=(Box(10, 10, 50, 50),),
                boxes_b=(),
            ),
        ),
    )


def test_answer_from_changes_defaults_missing_fields_to_absent() -> None:
    gold = answer_from_changes([{"category": "object", "boxes_a": [DOG]}])

    assert gold.changes[0] == ChangeAnswer("object", "", "", "", (Box(*DOG),), ())


@pytest.mark.parametrize(
    ("boxes", "error"),
    [([[10, 10, 5, 50]], BoxError), ([[10, 10, 50]], BoxError), ("10,10,50,50", ValueError)],
    ids=["inverted-box", "three-numbers", "not-a-list"],
)
def test_answer_from_changes_rejects_bad_boxes(boxes, error) -> None:
    with pytest.raises(error):
        answer_from_changes([{"category": "object", "boxes_a": boxes}])


def score(answer_changes: list[dict], gold_changes: list[dict], tier="excellent") -> GoldScore:
    answer = answer_from_changes(answer_changes, tier=tier)
    return score_against_gold(answer, answer_from_changes(gold_changes), POLICY)


def test_an_answer_equal_to_gold_scores_one_and_passes() -> None:
    assert score([raw()], [raw()]) == GoldScore(
        changes=[GoldChangeScore(0, 0, 1.0, 1.0, True, True, True, 1.0, True)],
        missed=[],
        extra=[],
        score=1.0,
        passed=True,
    )


@pytest.mark.parametrize(
    ("answered", "gold", "expected"),
    [
        (
            raw(boxes_b=([0, 0, 40, 10],)),
            raw(boxes_b=([0, 0, 100, 10],)),
            GoldChangeScore(0, 0, 1.0, 0.4, True, True, True, (1 + 0.4 + 1) / 3, False),
        ),
        (
            raw(category="object"),
            raw(),
            GoldChangeScore(0, 0, 1.0, 1.0, False, True, True, 2 / 3, False),
        ),
        (
            raw(boxes_a=()),
            raw(boxes_a=()),
            GoldChangeScore(0, 0, None, 1.0, True, True, True, 1.0, True),
        ),
        (
            raw(),
            raw(boxes_a=()),
            GoldChangeScore(0, 0, 0.0, 1.0, True, False, True, 2 / 3, False),
        ),
        (
            raw(boxes_b=(DOG,)),
            raw(boxes_b=(DOG, CAR)),
            GoldChangeScore(0, 0, 1.0, 0.5, True, True, True, (1 + 0.5 + 1) / 3, False),
        ),
    ],
    ids=[
        "iou-below-threshold",
        "wrong-category",
        "absent-side-answered-absent",
        "box-drawn-where-gold-is-absent",
        "one-of-two-boxes-missed",
    ],
)
def test_each_change_is_scored_by_iou_category_and_absent_sides(answered, gold, expected) -> None:
    result = score([answered], [gold])

    assert result.changes == [replace(expected, score=pytest.approx(expected.score))]
    assert result.score == pytest.approx(expected.score)
    assert result.passed is expected.passed


def test_a_missed_gold_change_counts_zero() -> None:
    result = score([raw()], [raw(), DOG_REMOVED])

    assert (result.missed, result.extra) == ([1], [])
    assert result.score == pytest.approx(0.5)
    assert not result.passed


def test_an_extra_change_counts_zero() -> None:
    result = score([DOG_REMOVED, raw()], [raw()])

    assert (result.missed, result.extra) == ([], [0])
    assert [(c.index, c.gold_index) for c in result.changes] == [(1, 0)]
    assert result.score == pytest.approx(0.5)
    assert not result.passed


def test_changes_are_paired_regardless_of_order() -> None:
    result = score([DOG_REMOVED, raw()], [raw(), DOG_REMOVED])

    assert [(c.index, c.gold_index) for c in result.changes] == [(0, 1), (1, 0)]
    assert (result.score, result.passed) == (1.0, True)


def test_no_change_against_no_change_is_correct() -> None:
    assert score([], []) == GoldScore(changes=[], missed=[], extra=[], score=1.0, passed=True)


def test_tier_labels_and_description_are_not_scored() -> None:
    answered = {**raw(entity="truck"), "description": "Something else entirely."}

    result = score([answered], [raw()], tier="poor")

    assert (result.score, result.passed) == (1.0, True)
