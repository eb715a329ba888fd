"""Negatives of sentences with too few slots (``fallback``): well-formed and false, each with
its slot and why (issue 25: "a reviewer reading 20 random questions finds no fake-looking or
true negative")."""

from __future__ import annotations

import re

import pytest

from pairdiff.release.adversarial import other_truths
from pairdiff.release.fallback import SAME_THING, explain, fallback_negatives, of_other_things
from pairdiff.release.question_set import question_set
from tests.pairdiff.test_release_adversarial import _records


def _negatives(description: str, entities=("",), pool=(), seed: int | str = 1, n: int = 2):
    return fallback_negatives(
        description=description, entities=list(entities), entity_pool=list(pool), seed=seed, n=n
    )


def test_an_entity_swap_keeps_the_sentence_and_fixes_its_article():
    assert _negatives("A cup was added on the table.", ["", "cup"], ["apple"])[0] == (
        "An apple was added on the table."
    )
    assert _negatives("An apple was added.", ["apple"], ["bowl"])[0] == "A bowl was added."


@pytest.mark.parametrize("seed", range(12))
def test_a_swap_never_names_the_same_thing_the_sentence_or_no_thing(seed):
    pool = ["mug", "glass", "cup", "image", "region", "text", "table", "coffee cup", "bowl"]
    for negative in _negatives("A cup was added on the table.", ["", "cup"], pool, seed, n=5):
        thing = re.fullmatch(r"An? (\w+) was added on the table\.", negative)
        assert thing, negative  # the sentence stays, only its thing changes
        assert thing[1] not in {"cup", "mug", "glass", "table", "image", "region", "text"}
        assert not any({"cup", thing[1]} <= group for group in SAME_THING)


def test_what_happened_is_never_changed():
    for seed in range(10):
        for negative in _negatives("A cup was added on the table.", ["", "cup"], seed=seed, n=4):
            assert "added" in negative and "removed" not in negative
        for negative in _negatives("The round mission patch disappeared.", ["patch"], seed=seed):
            assert negative.endswith(" disappeared.") and "appeared." not in negative[:-13]


def test_modifiers_of_the_swapped_thing_go_with_it():
    for negative in _negatives("The round mission patch disappeared.", ["patch"], ["car"], n=3):
        assert re.fullmatch(r"The \w+ disappeared\.", negative), negative  # no "mission car"


def test_every_mention_of_the_thing_is_swapped():
    negative = _negatives("An apple was added next to the other apples.", ["apple"], ["bowl"])[0]
    assert negative == "A bowl was added next to the other bowls."


def test_a_direction_word_is_turned_first_and_only_to_its_opposite():
    negatives = _negatives("The vase is now in front of the box.", ["vase"], ["lamp"])
    assert negatives[0] == "The vase is now behind the box."
    assert negatives[1] == "The lamp is now in front of the box."
    # "from left to right" has no turn that says something new: "right to right" is none.
    assert all("right to right" not in n for n in _negatives("It slid from left to right.", n=2))


def test_a_thing_that_cannot_do_what_the_sentence_says_is_never_swapped_in():
    negatives = _negatives("The door was opened.", ["door"], ["dog", "apple"], n=3)
    assert negatives[0] == "The door was closed."
    assert not any(re.search(r"The (dog|apple) was opened", n) for n in negatives)
    assert re.fullmatch(r"An? \w+ (appeared|disappeared|moved to the left)\.", negatives[1])


def test_too_few_negatives_is_a_value_error_never_a_made_up_one():
    with pytest.raises(ValueError):
        _negatives("", n=2)
    assert len(_negatives("Something is different.", n=2)) == 2  # templates of other things


@pytest.mark.parametrize(
    ("truth", "negative", "slot", "why"),
    [
        ("The door was opened.", "The door was closed.", "direction", "opposite"),
        ("A cup was added on the table.", "A bowl was added on the table.", "entity", "bowl"),
        ("Something is different.", "An apple appeared.", "entity", "names an apple"),
    ],
)
def test_each_negative_says_which_slot_it_changed_and_why(truth, negative, slot, why):
    found_slot, found_why = explain(truth, negative)
    assert found_slot == slot and why in found_why


def test_the_question_file_records_the_slot_and_why_of_a_fallback():
    records = _records([("test", "object", "The door was opened.", "p1")])
    records[0]["changes"][0]["entity_a"] = records[0]["changes"][0]["entity_b"] = "door"
    result = question_set(records, seed=0, verified={}, edited={})
    [row] = result.rows
    assert {n["made"] for n in row["negatives"]} == {"fallback"}
    assert {n["slot"] for n in row["negatives"]} == {"direction", "entity"}
    assert all(n["why"] and "word rule" not in n["why"] for n in row["negatives"])


def _named(rows, things):
    records = _records(rows)
    for record, thing in zip(records, things, strict=True):
        record["changes"][0]["entity_a"] = record["changes"][0]["entity_b"] = thing
    return records


def test_a_sentence_with_no_slot_takes_truths_of_other_things_in_its_category():
    records = _named(
        [
            ("test", "object", "A cup was added on the table.", "p1"),
            ("train", "object", "A bird was added on the fence.", "p2"),
            ("train", "object", "A mug was added on the desk.", "p3"),  # the same thing
            ("train", "object", "A cup was added on the shelf.", "p4"),  # names the cup
            ("train", "object", "A box was added next to the door.", "p1"),  # the same photo
            ("train", "attribute", "A lamp was added on the floor.", "p5"),  # category
            ("train", "object", "The dog was replaced by a cat.", "p6"),
        ],
        ["cup", "bird", "mug", "cup", "box", "lamp", "dog"],
    )
    found = {n["text"]: n["made"] for n in other_truths(records[0], records, {})}
    assert found == {
        "A bird was added on the fence.": "category_truth",
        "The dog was replaced by a cat.": "category_truth",
    }
    assert list(found)[0] == "A bird was added on the fence."  # saying the same happened first
    assert of_other_things(records[0], records[1]) and not of_other_things(records[0], records[2])


@pytest.mark.parametrize("seed", range(8))
def test_a_made_up_colour_is_never_a_neighbour_of_the_truth_s(seed):
    from pairdiff.release.slots import NEAR_COLOURS, candidates

    for truth, colour in (
        ("The patch changed from red to blue.", "blue"),
        ("The car is teal.", "teal"),
    ):
        for c in candidates(truth, seed=str(seed), per_slot=8):
            new = c.sentence.rstrip(".").split()[-1]
            if c.slot.startswith("colour") and new != colour and truth.endswith(f"{colour}."):
                assert not any({colour, new} <= g for g in NEAR_COLOURS), c.sentence


def test_a_thing_not_named_by_its_label_is_found_as_the_sentence_s_subject():
    # No entity label in the sentence (a label of no thing, or none): the subject is swapped.
    for entities in ([""], ["thing"], ["image"]):
        negatives = _negatives("The round mission patch disappeared.", entities, ["car"])
        assert negatives[0] == "The car disappeared."
    assert _negatives("An old red car was removed.", pool=["apple"])[0] == "An apple was removed."
