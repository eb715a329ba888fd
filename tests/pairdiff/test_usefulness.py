"""What makes a pair worth annotating next: pre-annotators in doubt, rare categories."""

import pytest

from pairdiff.usefulness import (
    UNKNOWN,
    Guess,
    agreement,
    doubt,
    likely_category,
    rarity,
    usefulness,
)


def _guess(box_a, box_b, category="attribute", confidence=None) -> Guess:
    change = {
        "category": category,
        "boxes_a": [box_a] if box_a else [],
        "boxes_b": [box_b] if box_b else [],
    }
    return Guess(changes=[change], confidence=confidence)


SAME = _guess([10, 10, 50, 50], [10, 10, 50, 50])
ELSEWHERE = _guess([200, 200, 240, 240], [200, 200, 240, 240])
ABSENT_B = _guess([10, 10, 50, 50], None)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (SAME, SAME, 1.0),
        (SAME, ELSEWHERE, 0.0),
        (SAME, ABSENT_B, 0.5),  # A agrees, B is absent in one
        (SAME, _guess([10, 10, 50, 50], [10, 10, 50, 50], "object"), 0.5),
        (SAME, Guess(changes=[]), 0.0),
        (Guess(changes=[]), Guess(changes=[]), 1.0),
    ],
)
def test_agreement_between_two_pre_annotators(a, b, expected) -> None:
    assert agreement(a, b) == pytest.approx(expected)
    assert agreement(b, a) == pytest.approx(expected)


def test_disagreeing_or_unsure_pre_annotators_mean_more_doubt() -> None:
    agreeing_sure = doubt([SAME, _guess([10, 10, 50, 50], [10, 10, 50, 50], confidence=0.9)])
    disagreeing = doubt([SAME, ELSEWHERE])
    unsure_alone = doubt([_guess([1, 1, 5, 5], [1, 1, 5, 5], confidence=0.2)])
    sure_alone = doubt([_guess([1, 1, 5, 5], [1, 1, 5, 5], confidence=0.95)])

    assert disagreeing > agreeing_sure
    assert unsure_alone > sure_alone
    assert doubt([]) == UNKNOWN


def test_rare_categories_come_first() -> None:
    accepted = {"attribute": 40, "object": 10}

    assert rarity("counting", accepted) == 1.0
    assert rarity("attribute", accepted) == 0.0
    assert rarity("object", accepted) == pytest.approx(0.75)
    assert rarity("object", {}) == 0.0 and rarity("", accepted) == 0.0
    assert usefulness([SAME, SAME], "counting", accepted) > usefulness(
        [SAME, SAME], "attribute", accepted
    )


def test_likely_category_prefers_the_hint_then_the_vote() -> None:
    votes = [SAME, _guess([1, 1, 2, 2], [1, 1, 2, 2], "object"), SAME]

    assert likely_category("relation", votes) == "relation"
    assert likely_category("", votes) == "attribute"
    assert likely_category("", []) == ""
