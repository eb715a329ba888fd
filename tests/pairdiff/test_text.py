import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.text import description_similarity, description_words


def test_words_are_folded_stripped_of_punctuation_and_singular() -> None:
    assert description_words("The CARS turned dark-blue!") == [
        "the",
        "car",
        "turned",
        "dark",
        "blue",
    ]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("The car turned blue.", "The car turned blue.", 1.0),
        ("The car turned blue.", "the CAR turned blue", 1.0),
        ("Two cars left.", "Two car left", 1.0),
        ("", "", 1.0),
        ("  ", "!!", 1.0),
        ("The car turned blue.", "", 0.0),
        ("The car turned blue.", "A dog appeared", 0.0),
        # Dice 2·2/6 (shared: the, car); difflib ratio 2·2/6 (matches: the, car).
        ("the red car", "the blue car", 2 / 3),
    ],
)
def test_similarity_of_known_pairs(a: str, b: str, expected: float) -> None:
    assert description_similarity(a, b) == pytest.approx(expected)


def test_word_order_lowers_similarity_below_one() -> None:
    score = description_similarity("white to blue", "blue to white")

    # Same word set (Dice 1) but a different sequence (ratio 1/3).
    assert score == pytest.approx((1 + 1 / 3) / 2)


def test_closer_wording_scores_higher() -> None:
    reference = "The car changed from white to dark blue."
    close = description_similarity(reference, "The car changed from white to blue.")
    far = description_similarity(reference, "A bicycle appeared next to the tree.")

    assert 0 < far < close < 1


@given(st.text(), st.text())
def test_similarity_is_symmetric_and_within_unit_interval(a: str, b: str) -> None:
    score = description_similarity(a, b)

    assert 0.0 <= score <= 1.0
    assert score == description_similarity(b, a)


@given(st.text())
def test_a_description_is_fully_similar_to_itself(text: str) -> None:
    assert description_similarity(text, text) == 1.0
