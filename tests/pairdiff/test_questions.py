import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairdiff.release.questions import (
    LETTERS,
    NO_DIFFERENCE,
    answer_positions,
    hard_negatives,
    question_item,
)

POOL = ("bowl", "plate", "apple", "dog", "chair", "lamp", "bottle", "cup", "bird", "car")


def _norm(text: str) -> str:
    return re.sub(r"[\s.!?;:,]+$", "", " ".join(text.casefold().split()))


def _negatives(description: str, category: str, entity: str = "", **kwargs) -> list[str]:
    args: dict[str, Any] = {
        "description": description,
        "category": category,
        "entity_a": entity,
        "entity_b": entity,
        "absent_a": False,
        "absent_b": False,
        "entity_pool": POOL,
        "seed": 7,
    }
    return hard_negatives(**(args | kwargs))


@pytest.mark.parametrize(
    ("description", "category", "entity", "extra", "expected"),
    [
        # direction
        (
            "The cup moved to the left of the plate.",
            "position",
            "cup",
            {},
            "The cup moved to the right of the plate.",
        ),
        (
            "The ball rolled from left to right.",
            "motion",
            "ball",
            {},
            "The ball rolled from right to left.",
        ),
        (
            "Left of the sign, a man waves.",
            "relation",
            "man",
            {},
            "Right of the sign, a man waves.",
        ),
        ("The lower half became darker.", "lighting", "", {}, "The upper half became darker."),
        (
            "The water level became lower.",
            "position",
            "water",
            {},
            "The water level became higher.",
        ),
        ("The vase is in front of the box.", "relation", "vase", {}, "The vase is behind the box."),
        (
            "There are more birds on the wire.",
            "counting",
            "",
            {},
            "There are fewer birds on the wire.",
        ),
        # counts
        (
            "Three birds became four birds.",
            "counting",
            "bird",
            {},
            "Four birds became three birds.",
        ),
        ("A single car is parked.", "counting", "car", {}, "Two cars are parked."),
        # added / removed
        (
            "A bicycle was added next to the door.",
            "appear_disappear",
            "bicycle",
            {"absent_a": True},
            "A bicycle was removed next to the door.",
        ),
        (
            "A bicycle appeared next to the door.",
            "mystery",
            "bicycle",
            {"absent_a": True},
            "A bicycle disappeared next to the door.",
        ),
        # entities: an exchange of the two labels, and a pool label with its article fixed
        (
            "The dog was replaced by a cat.",
            "replacement_size",
            "",
            {"entity_a": "dog", "entity_b": "cat"},
            "The cat was replaced by a dog.",
        ),
        (
            "A bicycle was added next to the door.",
            "object",
            "bicycle",
            {"entity_pool": ["apple"]},
            "An apple was added next to the door.",
        ),
        # casing of the original word is kept
        ("The sign reads OPEN.", "ocr_text", "sign", {}, "The sign reads CLOSED."),
    ],
)
def test_first_negative_swaps_what_the_category_prefers(
    description: str, category: str, entity: str, extra: dict, expected: str
) -> None:
    assert _negatives(description, category, entity, **extra)[0] == expected


def test_colour_swap_changes_a_colour_and_nothing_else() -> None:
    colours = "red orange yellow pink brown gold beige maroon green blue purple violet cyan "
    colours += "teal turquoise navy black white grey silver"
    truth = "The car changed from white to dark blue."
    for seed in range(10):
        for negative in _negatives(truth, "attribute", "car", seed=seed):
            match = re.fullmatch(r"The car changed from (dark )?(\w+) to (dark )?(\w+)\.", negative)
            assert match, negative
            assert match.group(2) in colours.split() and match.group(4) in colours.split()
            assert "white to dark blue" not in negative


def test_colour_swap_prefers_a_contrasting_colour() -> None:
    blues = {"green", "blue", "purple", "violet", "cyan", "teal", "turquoise", "navy"}
    for seed in range(10):
        negatives = _negatives("The door was painted blue.", "regional_colour", "door", seed=seed)
        found = re.fullmatch(r"The door was painted (\w+)\.", negatives[0])
        assert found, negatives[0]
        colour = found.group(1)
        assert colour not in blues


def test_colour_word_that_names_the_entity_is_not_recoloured() -> None:
    negatives = _negatives("An orange was added.", "attribute", "orange", n=4)
    assert all(re.search(r"\borange\b", n, re.I) is None or "removed" in n for n in negatives)


def test_count_change_never_reuses_a_count_already_in_the_sentence() -> None:
    negatives = _negatives("Three birds became four birds.", "counting", "bird", n=3)
    assert negatives[0] == "Four birds became three birds."
    assert set(negatives[1:]) <= {
        "Two birds became four birds.",
        "Five birds became four birds.",
        "Three birds became five birds.",
        "Three birds became six birds.",
    }


def test_entity_swap_uses_a_pool_label_not_already_in_the_sentence() -> None:
    for seed in range(10):
        negatives = _negatives(
            "The cup moved to the left of the plate.", "object", "cup", seed=seed
        )
        entity_swaps = [n for n in negatives if n.endswith("moved to the left of the plate.")]
        assert entity_swaps
        for negative in entity_swaps:
            label = negative.split()[1]
            assert label in POOL and label not in {"cup", "plate"}


@pytest.mark.parametrize(
    ("category", "entity", "allowed"),
    [
        (
            "position",
            "cup",
            {"The cup moved to the left.", "The cup moved to the right.", "The cup moved up."},
        ),
        ("appear_disappear", "cup", {"The cup was removed.", "The cup was added."}),
        (
            "lighting",
            "cup",
            {"The image became brighter.", "The image became darker.", "A shadow appeared."},
        ),
    ],
)
def test_sentence_with_nothing_to_swap_falls_back_to_category_templates(
    category: str, entity: str, allowed: set[str]
) -> None:
    negatives = _negatives("Something is different here.", category, entity, entity_pool=[])
    assert set(negatives) <= allowed


def test_templates_without_entities_speak_of_an_object() -> None:
    negatives = _negatives("Something is different.", "mystery", "", entity_pool=[], n=3)
    assert len(negatives) == 3
    assert all("object" in n or "image" in n for n in negatives)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10, 40])
@pytest.mark.parametrize(
    "description",
    [
        "The car changed from white to dark blue.",
        "Three birds became four birds.",
        "Something is different.",
        "There is no difference between the two images",
        "A BİG car turned pİnk; fİve of them.",  # "İ".lower() is two characters
    ],
)
def test_returns_exactly_n_distinct_negatives_never_the_truth(description: str, n: int) -> None:
    negatives = _negatives(description, "attribute", "car", n=n)
    assert len(negatives) == n
    normalised = {_norm(x) for x in negatives}
    assert len(normalised) == n
    assert _norm(description) not in normalised
    assert _norm(NO_DIFFERENCE) not in normalised


def test_truth_differing_only_in_case_and_punctuation_is_not_a_negative() -> None:
    # "the cup moved to the right" would be the template; the truth says it already.
    negatives = _negatives("the CUP moved to the right!", "position", "cup", entity_pool=[], n=5)
    assert all(_norm(n) != "the cup moved to the right" for n in negatives)


def test_same_arguments_give_the_same_negatives() -> None:
    first = _negatives("The car changed from white to dark blue.", "attribute", "car", n=4)
    again = _negatives("The car changed from white to dark blue.", "attribute", "car", n=4)
    assert first == again


def test_negatives_vary_with_the_seed() -> None:
    truth = "The car changed from white to dark blue."
    outputs = {tuple(_negatives(truth, "attribute", "car", seed=seed)) for seed in range(10)}
    assert len(outputs) > 1


@pytest.mark.parametrize("description", ["", "   \n"])
def test_blank_description_is_rejected(description: str) -> None:
    with pytest.raises(ValueError):
        _negatives(description, "position", "cup")


def test_negative_n_is_rejected() -> None:
    with pytest.raises(ValueError):
        _negatives("The cup moved.", "position", "cup", n=-1)


_WORDS = re.findall(
    r"\S+",
    "the a cup cups car left right red blue dark three one single moved added removed "
    "appeared more lower in front of behind was is orange 2 12 an apple it",
)


@settings(max_examples=200, deadline=None)
@given(
    description=st.one_of(
        st.text(min_size=1, max_size=40).filter(str.strip),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join),
    ),
    category=st.sampled_from(["attribute", "counting", "position", "object", "ocr_text", "zzz"]),
    entity_a=st.sampled_from(["", "cup", "car", "orange", "red car", "a"]),
    entity_b=st.sampled_from(["", "cup", "apple"]),
    absent_a=st.booleans(),
    pool=st.lists(st.sampled_from(["cup", "Cups", "bowl", "", "apple", "left"]), max_size=4),
    seed=st.one_of(st.integers(), st.text(max_size=5)),
    n=st.integers(min_value=1, max_value=5),
)
def test_any_sentence_gets_n_distinct_negatives_none_the_truth(
    description: str,
    category: str,
    entity_a: str,
    entity_b: str,
    absent_a: bool,
    pool: list[str],
    seed: int | str,
    n: int,
) -> None:
    negatives = hard_negatives(
        description=description,
        category=category,
        entity_a=entity_a,
        entity_b=entity_b,
        absent_a=absent_a,
        absent_b=False,
        entity_pool=pool,
        seed=seed,
        n=n,
    )
    normalised = [_norm(x) for x in negatives]
    assert len(negatives) == n
    assert len(set(normalised)) == n
    assert _norm(description) not in normalised
    assert _norm(NO_DIFFERENCE) not in normalised


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
    negatives = _negatives(TRUTH, "position", "cup")
    item = question_item(description=TRUTH, negatives=negatives, answer_position=2, seed=7)
    assert item["answer"] == "C"
    assert len(set(item["options"].values())) == 4
