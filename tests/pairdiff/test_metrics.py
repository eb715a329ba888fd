from typing import Literal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.metrics import TIERS, confusion, krippendorff_alpha_ordinal, weighted_kappa

tier_pairs = st.lists(st.tuples(st.sampled_from(TIERS), st.sampled_from(TIERS)), max_size=40)


def textbook_kappa(pairs: list[tuple[str, str]], weights: str) -> float:
    """Cohen's weighted kappa as in the textbooks: (p_o − p_e) / (1 − p_e) with agreement
    weights v = 1 − |i − j|/(k − 1) (linear) or 1 − (i − j)²/(k − 1)² (quadratic)."""
    k = len(TIERS)
    table = np.zeros((k, k))
    for a, b in pairs:
        table[TIERS.index(a), TIERS.index(b)] += 1
    p = table / table.sum()
    i, j = np.indices((k, k))
    v = 1 - (np.abs(i - j) / (k - 1)) ** (1 if weights == "linear" else 2)
    p_o = (v * p).sum()
    p_e = (v * np.outer(p.sum(axis=1), p.sum(axis=0))).sum()
    return (p_o - p_e) / (1 - p_e)


def test_confusion_counts_each_pair_in_sorted_order() -> None:
    pairs = [("object", "object"), ("attribute", "object"), ("object", "object")]

    assert confusion(pairs) == {("attribute", "object"): 1, ("object", "object"): 2}
    assert list(confusion(pairs)) == [("attribute", "object"), ("object", "object")]


def test_confusion_of_nothing_is_empty() -> None:
    assert confusion([]) == {}


# Hand computation on the scale a < b < c with pairs (a,a) (a,b) (b,b) (c,b), N = 4:
# rater 1 marginals (1/2, 1/4, 1/4), rater 2 marginals (1/4, 3/4, 0).
# Linear w = (0, 1/2, 1): Σ w·observed = 1/2·1/4 + 1/2·1/4 = 1/4;
# Σ w·expected = 1/2·3/8 + 1/2·1/16 + 1·1/16 + 1/2·3/16 = 3/8; κ = 1 − (1/4)/(3/8) = 1/3.
# Quadratic w = (0, 1/4, 1): Σ w·observed = 1/8; Σ w·expected = 7/32; κ = 1 − 4/7 = 3/7.
@pytest.mark.parametrize(("weights", "expected"), [("linear", 1 / 3), ("quadratic", 3 / 7)])
def test_weighted_kappa_matches_a_hand_computed_example(
    weights: Literal["linear", "quadratic"], expected: float
) -> None:
    pairs = [("a", "a"), ("a", "b"), ("b", "b"), ("c", "b")]

    assert weighted_kappa(pairs, categories=("a", "b", "c"), weights=weights) == pytest.approx(
        expected
    )


def test_two_category_kappa_is_cohens_kappa_of_the_wikipedia_example() -> None:
    # Wikipedia, "Cohen's kappa", simple example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15

    for weights in ("linear", "quadratic"):
        assert weighted_kappa(pairs, ("yes", "no"), weights) == pytest.approx(0.4)


@given(tier_pairs, st.sampled_from(["linear", "quadratic"]))
def test_weighted_kappa_equals_the_textbook_formula(pairs, weights) -> None:
    kappa = weighted_kappa(pairs, weights=weights)

    if kappa is None:
        assert not pairs or len(set(pairs)) == 1 and pairs[0][0] == pairs[0][1]
    else:
        assert kappa == pytest.approx(textbook_kappa(pairs, weights))


@given(tier_pairs)
def test_weighted_kappa_does_not_depend_on_which_rater_is_first(pairs) -> None:
    swapped = [(b, a) for a, b in pairs]

    assert weighted_kappa(pairs) == pytest.approx(weighted_kappa(swapped))


def test_perfect_agreement_gives_one_and_opposite_ends_give_negative_kappa() -> None:
    assert weighted_kappa([("excellent", "excellent"), ("poor", "poor")]) == 1.0
    assert weighted_kappa([("excellent", "poor"), ("poor", "excellent")]) == pytest.approx(-1.0)


def test_quadratic_weights_punish_far_disagreements_more_than_linear() -> None:
    pairs = [("excellent", "excellent"), ("good", "good"), ("fair", "fair"), ("poor", "poor")]
    near = [*pairs, ("excellent", "good"), ("good", "excellent")]

    quadratic = weighted_kappa(near, weights="quadratic")
    linear = weighted_kappa(near, weights="linear")
    assert quadratic is not None and linear is not None
    assert quadratic > linear


@pytest.mark.parametrize(
    ("pairs", "categories"),
    [
        ([], TIERS),
        ([("excellent", "excellent")] * 5, TIERS),
        ([("excellent", "excellent")], ("excellent",)),
    ],
    ids=["no-pairs", "no-variance", "one-category"],
)
def test_weighted_kappa_is_none_when_undefined(pairs, categories) -> None:
    assert weighted_kappa(pairs, categories) is None


def test_one_rater_constant_and_the_other_not_gives_zero() -> None:
    assert weighted_kappa([("good", "good"), ("good", "fair")]) == pytest.approx(0.0)


def test_weighted_kappa_rejects_unknown_values_and_weights() -> None:
    with pytest.raises(ValueError, match="'great' is not one of"):
        weighted_kappa([("great", "good")])
    with pytest.raises(ValueError, match="weights"):
        weighted_kappa([("good", "good")], weights="cubic")  # type: ignore[arg-type]


# Krippendorff, K. (2011). "Computing Krippendorff's Alpha-Reliability", Annenberg School for
# Communication, University of Pennsylvania (repository.upenn.edu/asc_papers/43), the
# reliability data of section C: 4 observers × 12 units, values 1–5, missing values (".").
# Its ordinal alpha is .815; the same data and figure are pinned by the `krippendorff` PyPI
# package (tests/test_krippendorff.py::test_ordinal_metric) and the R irr kripp.alpha example.
OBSERVERS = [
    "1 2 3 3 2 1 4 1 2 . . .",
    "1 2 3 3 2 2 4 1 2 5 . 3",
    ". 3 3 3 2 3 4 2 2 5 1 .",
    "1 2 3 3 2 4 4 1 2 5 1 .",
]


def test_alpha_matches_krippendorffs_ordinal_example() -> None:
    rows = [[None if v == "." else v for v in row.split()] for row in OBSERVERS]
    units = [list(unit) for unit in zip(*rows, strict=True)]

    alpha = krippendorff_alpha_ordinal(units, categories=("1", "2", "3", "4", "5"))

    assert alpha is not None
    assert round(alpha, 3) == 0.815


def test_alpha_of_one_disagreeing_unit_is_zero() -> None:
    # o(E,G) = o(G,E) = 1, n = 2, δ²(E,G) = (2 − 1)² = 1: α = 1 − 1·2 / (2·1·1·1) = 0.
    assert krippendorff_alpha_ordinal([["excellent", "good"]]) == pytest.approx(0.0)


def test_alpha_is_one_for_perfect_agreement_and_ignores_unpaired_units() -> None:
    units: list[list[str | None]]
    units = [["excellent", "excellent"], ["poor", "poor", "poor"], ["good"], ["fair", None]]

    assert krippendorff_alpha_ordinal(units) == 1.0


def test_alpha_counts_far_ordinal_disagreement_as_worse() -> None:
    agreeing = [["excellent", "excellent"], ["good", "good"], ["fair", "fair"], ["poor", "poor"]]
    near = krippendorff_alpha_ordinal([*agreeing, ["excellent", "good"]])
    far = krippendorff_alpha_ordinal([*agreeing, ["excellent", "poor"]])

    assert far is not None and near is not None
    assert far < near


@pytest.mark.parametrize(
    "units",
    [[], [["good"], ["fair", None]], [["good", "good"], ["good", "good", "good"]]],
    ids=["no-units", "nothing-pairable", "one-value-only"],
)
def test_alpha_is_none_when_undefined(units) -> None:
    assert krippendorff_alpha_ordinal(units) is None


def test_alpha_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match="'great' is not one of"):
        krippendorff_alpha_ordinal([["great", "good"]])


@given(st.lists(st.lists(st.sampled_from(TIERS), min_size=2, max_size=4), max_size=15))
def test_alpha_ignores_the_direction_of_the_scale(units) -> None:
    forward = krippendorff_alpha_ordinal(units)
    backward = krippendorff_alpha_ordinal(units, categories=TIERS[::-1])

    assert (forward is None and backward is None) or forward == pytest.approx(backward)
