import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.labels import labels_agree, normalise_label, singular, synonym_index

SYNONYMS = {"car": ["automobile", "Autos", "motor car"], "person": ["pedestrian", "human"]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Car", "car"),
        ("  red   car ", "red car"),
        ("(car).", "car"),
        ('"Car"!', "car"),
        ("T-Shirt", "t shirt"),
        ("traffic_light", "traffic light"),
        ("the car", "car"),
        ("A dog", "dog"),
        ("the", "the"),
        ("a :the car", "car"),
        ("car's wheel", "car's wheel"),
        ("", ""),
        ("  ...  ", ""),
    ],
)
def test_normalise_folds_case_whitespace_end_punctuation_and_articles(
    text: str, expected: str
) -> None:
    assert normalise_label(text) == expected


@pytest.mark.parametrize(
    ("plural", "expected"),
    [
        ("cars", "car"),
        ("trees", "tree"),
        ("boxes", "box"),
        ("dishes", "dish"),
        ("watches", "watch"),
        ("classes", "class"),
        ("buses", "bus"),
        ("houses", "house"),
        ("horses", "horse"),
        ("shoes", "shoe"),
        ("tomatoes", "tomato"),
        ("berries", "berry"),
        ("movies", "movie"),
        ("ties", "tie"),
        ("leaves", "leaf"),
        ("knives", "knife"),
        ("gloves", "glove"),
        ("people", "person"),
        ("children", "child"),
        ("mice", "mouse"),
        ("men", "man"),
        ("women", "woman"),
        ("snowmen", "snowman"),
        ("teeth", "tooth"),
        ("lenses", "lens"),
        ("menus", "menu"),
        ("red cars", "red car"),
        ("slices of pizza", "slice of pizza"),
    ],
)
def test_plurals_become_singular(plural: str, expected: str) -> None:
    assert normalise_label(plural) == expected


@pytest.mark.parametrize(
    "word",
    [
        "glass",
        "grass",
        "bus",
        "gas",
        "lens",
        "dress",
        "status",
        "octopus",
        "tennis",
        "iris",
        "series",
        "species",
        "news",
        "sheep",
        "specimen",
        # Pluralia tantum: "glasses" are spectacles, kept apart from one drinking "glass".
        "glasses",
        "jeans",
        "scissors",
    ],
)
def test_words_that_only_look_plural_are_kept(word: str) -> None:
    assert singular(word) == word


@pytest.mark.parametrize("word", ["3s", "car's", "x-rays", "abc"])
def test_singular_leaves_non_alphabetic_and_short_words_alone(word: str) -> None:
    assert singular(word) == word


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("car", "Cars", True),
        ("the red car.", "Red  cars", True),
        ("car", "automobile", True),
        ("automobiles", "car", True),
        ("Autos", "automobile", True),
        ("motor-cars", "car", True),
        ("pedestrians", "people", True),
        ("human", "person", True),
        ("car", "truck", False),
        ("automobile", "pedestrian", False),
        ("red car", "car", False),
        ("glass", "glasses", False),
        ("", "", True),
        ("car", "", False),
    ],
)
def test_labels_agree_after_normalisation_and_synonyms(a: str, b: str, agree: bool) -> None:
    assert labels_agree(a, b, SYNONYMS) is agree
    assert labels_agree(b, a, SYNONYMS) is agree


def test_synonym_variants_and_canonicals_are_normalised_both_ways() -> None:
    assert synonym_index({"Cars": ["The Automobiles."]}) == {"car": "car", "automobile": "car"}


def test_synonyms_map_whole_labels_only() -> None:
    assert normalise_label("red automobile", SYNONYMS) == "red automobile"


def test_a_canonical_is_never_rewritten_by_another_group() -> None:
    synonyms = {"car": ["auto"], "auto": ["autocar"]}

    assert normalise_label("auto", synonyms) == "auto"
    assert normalise_label("autocar", synonyms) == "auto"


def test_a_variant_under_two_canonicals_goes_to_the_first_listed() -> None:
    synonyms = {"bike": ["cycle"], "motorbike": ["cycle"]}

    assert normalise_label("cycles", synonyms) == "bike"


def test_no_synonyms_means_normalisation_only() -> None:
    assert normalise_label("Cars", None) == normalise_label("Cars", {}) == "car"


@given(st.text())
def test_normalising_twice_changes_nothing(text: str) -> None:
    once = normalise_label(text, SYNONYMS)

    assert normalise_label(once, SYNONYMS) == once


@given(st.lists(st.sampled_from(["the", "a", "cars", "people", "peoples", "-", ".", "boxes"])))
def test_normalising_word_salad_twice_changes_nothing(words: list[str]) -> None:
    once = normalise_label(" ".join(words))

    assert normalise_label(once) == once


@given(st.text(), st.text())
def test_labels_agree_is_symmetric(a: str, b: str) -> None:
    assert labels_agree(a, b, SYNONYMS) == labels_agree(b, a, SYNONYMS)
