import itertools
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairdiff.agreement import (
    TIERS,
    AgreementPolicy,
    SideAgreement,
    compare_answers,
    iou_text,
)
from pairdiff.answers import Answer, ChangeAnswer
from pairdiff.geometry import Box

POLICY = AgreementPolicy()
CAR = (10, 10, 50, 50)
DOG = (100, 100, 150, 150)


def change(
    a=(CAR,),
    b=(CAR,),
    *,
    category="attribute",
    entity_a="car",
    entity_b="car",
    description="The car turned blue.",
) -> ChangeAnswer:
    return ChangeAnswer(
        category=category,
        description=description,
        entity_a=entity_a,
        entity_b=entity_b,
        boxes_a=tuple(Box(*v) for v in a),
        boxes_b=tuple(Box(*v) for v in b),
    )


def answer(*changes: ChangeAnswer, tier: str = "excellent") -> Answer:
    return Answer(tier=tier, defects=(), time_spent_ms=1000, changes=changes)


REMOVED_DOG = change(
    (DOG,), (), category="object", entity_a="dog", entity_b="", description="The dog is gone."
)


def test_identical_excellent_answers_are_accepted_with_their_boxes_as_consensus() -> None:
    verdict = compare_answers(answer(change()), answer(change()), POLICY)

    assert (verdict.status, verdict.reasons, verdict.messages) == ("accepted", [], {})
    assert verdict.mean_iou == 1.0
    assert verdict.consensus == [
        ChangeAnswer("attribute", "The car turned blue.", "car", "car", (Box(*CAR),), (Box(*CAR),))
    ]


@pytest.mark.parametrize(
    ("first", "second", "status", "reasons"),
    [
        (change(a=(), entity_a=""), change(a=(), entity_a=""), "accepted", []),
        (change(b=(), entity_b=""), change(b=(), entity_b=""), "accepted", []),
        (change(a=(), entity_a="car"), change(a=(), entity_a=""), "accepted", []),
        (change(a=(), entity_a=""), change(), "disputed", ["change[0].side_a.null_mismatch"]),
        (change(), change(b=(), entity_b=""), "disputed", ["change[0].side_b.null_mismatch"]),
    ],
    ids=[
        "added-both-mark-A-absent",
        "removed-both-mark-B-absent",
        "label-of-an-absent-side-is-not-compared",
        "A-absent-against-a-box",
        "B-absent-against-a-box",
    ],
)
def test_absent_sides_agree_only_when_both_annotators_mark_them(
    first, second, status, reasons
) -> None:
    verdict = compare_answers(answer(first), answer(second), POLICY)

    assert (verdict.status, verdict.reasons) == (status, reasons)


def test_null_mismatch_is_reported_on_the_side_not_as_unmatched_boxes() -> None:
    verdict = compare_answers(answer(change(a=())), answer(change()), POLICY)

    assert verdict.changes[0].side_a == SideAgreement(
        side="a", matched=[], unmatched_1=[], unmatched_2=[0], agrees=False, null_consistent=False
    )
    assert verdict.messages == {
        "change[0].side_a.null_mismatch": "change 1: A is absent in one annotation only"
    }


WIDE = (0, 0, 10000, 10)


@pytest.mark.parametrize(
    ("x2", "iou", "status", "reasons"),
    [
        (4999, 0.4999, "disputed", ["change[0].side_b.iou_below_threshold"]),
        (5000, 0.5, "accepted", []),
        (5001, 0.5001, "accepted", []),
    ],
)
def test_iou_just_under_the_threshold_disagrees_and_at_or_over_it_agrees(
    x2, iou, status, reasons
) -> None:
    first = answer(change((), (WIDE,), entity_a=""))
    second = answer(change((), ((0, 0, x2, 10),), entity_a=""))

    verdict = compare_answers(first, second, POLICY)

    # The narrow box lies inside the wide one: IoU = x2 / 10000 exactly.
    assert verdict.changes[0].side_b.matched == [(0, 0, iou)]
    assert (verdict.status, verdict.reasons) == (status, reasons)


def test_iou_below_the_threshold_is_explained_with_four_digits() -> None:
    verdict = compare_answers(
        answer(change((), (WIDE,), entity_a="")),
        answer(change((), ((0, 0, 4999, 10),), entity_a="")),
        POLICY,
    )

    assert verdict.messages == {
        "change[0].side_b.iou_below_threshold": "change 1: IoU 0.4999 on B is below 0.5"
    }


def test_project_threshold_replaces_the_default() -> None:
    first, second = answer(change(b=(WIDE,))), answer(change(b=((0, 0, 6000, 10),)))

    assert compare_answers(first, second, POLICY).status == "accepted"
    assert compare_answers(first, second, AgreementPolicy(iou_threshold=0.7)).status == "disputed"


SHEEP = ((10, 10, 20, 20), (40, 10, 50, 20), (70, 10, 80, 20))


def counting(b) -> ChangeAnswer:
    return change(
        (SHEEP[0],), b, category="counting", entity_a="sheep", entity_b="sheep", description="x"
    )


@pytest.mark.parametrize(
    ("second_boxes", "status", "reasons"),
    [
        ((SHEEP[2], SHEEP[0], SHEEP[1]), "accepted", []),
        (SHEEP[:2], "disputed", ["change[0].side_b.unmatched_boxes"]),
        ((*SHEEP, (100, 10, 110, 20)), "disputed", ["change[0].side_b.unmatched_boxes"]),
    ],
    ids=["same-boxes-other-order", "one-box-missing", "one-box-extra"],
)
def test_counting_change_needs_every_box_matched(second_boxes, status, reasons) -> None:
    verdict = compare_answers(answer(counting(SHEEP)), answer(counting(second_boxes)), POLICY)

    assert (verdict.status, verdict.reasons) == (status, reasons)


def test_missing_box_is_named_by_its_index() -> None:
    verdict = compare_answers(answer(counting(SHEEP)), answer(counting(SHEEP[:2])), POLICY)

    assert (verdict.changes[0].side_b.unmatched_1, verdict.changes[0].side_b.unmatched_2) == (
        [2],
        [],
    )


def test_tied_box_matchings_prefer_the_one_that_agrees_whoever_came_first() -> None:
    # Both matchings total 4/3: (2/3, 2/3) agrees, (1, 1/3) does not.
    boxes_1 = ((0, 0, 2, 10), (0, 0, 3, 10))
    boxes_2 = ((0, 0, 3, 10), (1, 0, 3, 10))
    first, second = answer(change(b=boxes_1)), answer(change(b=boxes_2))

    forward = compare_answers(first, second, POLICY)
    backward = compare_answers(second, first, POLICY)

    assert (forward.status, backward.status) == ("accepted", "accepted")
    assert forward.changes[0].side_b.matched == [(0, 0, 2 / 3), (1, 1, 2 / 3)]


def test_boxes_are_matched_optimally_not_greedily() -> None:
    # Greedy takes the best pair (9/11) and strands the other at 1/3; optimal gives 2/3 + 2/3.
    first = answer(change(b=((10, 0, 20, 10), (13, 0, 23, 10))))
    second = answer(change(b=((11, 0, 21, 10), (8, 0, 18, 10))))

    verdict = compare_answers(first, second, POLICY)

    assert verdict.status == "accepted"
    assert [(i, j) for i, j, _ in verdict.changes[0].side_b.matched] == [(0, 1), (1, 0)]


@pytest.mark.parametrize(
    ("label_1", "label_2", "synonyms", "agree"),
    [
        ("car", "Cars", {}, True),
        ("the red car.", "Red  cars", {}, True),
        ("people", "person", {}, True),
        ("leaves", "leaf", {}, True),
        ("boxes", "box", {}, True),
        ("automobile", "car", {"car": ["automobile", "auto"]}, True),
        ("autos", "Automobile", {"car": ["automobile", "auto"]}, True),
        ("automobile", "car", {}, False),
        ("car", "truck", {}, False),
        ("glass", "grass", {}, False),
    ],
)
def test_entity_labels_agree_after_normalisation_and_synonyms(
    label_1, label_2, synonyms, agree
) -> None:
    first = answer(change(entity_a=label_1, entity_b=label_1))
    second = answer(change(entity_a=label_2, entity_b=label_2))

    verdict = compare_answers(first, second, AgreementPolicy(synonyms=synonyms))

    expected = [] if agree else ["change[0].entity_a", "change[0].entity_b"]
    assert (verdict.status, verdict.reasons) == ("accepted" if agree else "disputed", expected)


def test_different_categories_disagree() -> None:
    verdict = compare_answers(answer(change()), answer(change(category="object")), POLICY)

    assert (verdict.status, verdict.reasons) == ("disputed", ["change[0].category"])


TIER_TABLE = [
    # first, second, verdict when all agrees, verdict when a box disagrees, tier reason
    ("excellent", "excellent", "accepted", "disputed", None),
    ("excellent", "good", "disputed", "disputed", "tier:one_good"),
    ("excellent", "fair", "rejected", "rejected", "tier:fair"),
    ("excellent", "poor", "rejected", "rejected", "tier:poor"),
    ("good", "excellent", "disputed", "disputed", "tier:one_good"),
    ("good", "good", "rejected", "rejected", "tier:good"),
    ("good", "fair", "rejected", "rejected", "tier:fair"),
    ("good", "poor", "rejected", "rejected", "tier:poor"),
    ("fair", "excellent", "rejected", "rejected", "tier:fair"),
    ("fair", "good", "rejected", "rejected", "tier:fair"),
    ("fair", "fair", "rejected", "rejected", "tier:fair"),
    ("fair", "poor", "rejected", "rejected", "tier:poor"),
    ("poor", "excellent", "rejected", "rejected", "tier:poor"),
    ("poor", "good", "rejected", "rejected", "tier:poor"),
    ("poor", "fair", "rejected", "rejected", "tier:poor"),
    ("poor", "poor", "rejected", "rejected", "tier:poor"),
]


def test_tier_table_covers_all_sixteen_combinations() -> None:
    assert sorted(row[:2] for row in TIER_TABLE) == sorted(itertools.product(TIERS, TIERS))


@pytest.mark.parametrize(("tier_1", "tier_2", "agreeing", "disagreeing", "reason"), TIER_TABLE)
def test_tiers_decide_the_verdict(tier_1, tier_2, agreeing, disagreeing, reason) -> None:
    tier_reasons = [reason] if reason else []
    good = compare_answers(answer(change(), tier=tier_1), answer(change(), tier=tier_2), POLICY)
    bad = compare_answers(
        answer(change(), tier=tier_1),
        answer(change(a=((30, 30, 70, 70),)), tier=tier_2),
        POLICY,
    )

    assert (good.status, good.reasons) == (agreeing, tier_reasons)
    assert (bad.status, bad.reasons) == (
        disagreeing,
        [*tier_reasons, "change[0].side_a.iou_below_threshold"],
    )
    assert good.consensus is not None if agreeing == "accepted" else good.consensus is None


def test_tier_rule_is_a_project_setting() -> None:
    policy = AgreementPolicy(
        accept_tiers=frozenset({("excellent", "excellent"), ("good", "excellent")}),
        dispute_tiers=frozenset({("good", "good")}),
    )

    mixed = compare_answers(answer(change()), answer(change(), tier="good"), policy)
    both_good = compare_answers(
        answer(change(), tier="good"), answer(change(), tier="good"), policy
    )

    assert (mixed.status, mixed.reasons) == ("accepted", [])
    assert (both_good.status, both_good.reasons) == ("disputed", ["tier:both_good"])


def test_consensus_boxes_are_the_rounded_mean_of_matched_boxes_in_the_first_order() -> None:
    first = answer(change(((10, 10, 50, 50),), ((100, 100, 140, 150), (0, 0, 10, 10))))
    second = answer(change(((12, 14, 53, 51),), ((0, 0, 11, 11), (101, 100, 141, 151))))

    verdict = compare_answers(first, second, POLICY)

    assert verdict.consensus is not None
    (consensus,) = verdict.consensus
    # Means: A (11, 12, 51.5, 50.5); B (100.5, 100, 140.5, 150.5) and (0, 0, 10.5, 10.5).
    assert consensus.boxes_a == (Box(11, 12, 52, 51),)
    assert consensus.boxes_b == (Box(101, 100, 141, 151), Box(0, 0, 11, 11))


def test_consensus_rounds_half_pixels_up() -> None:
    # x1 mean 2.5 and x2 mean 5.5: round() would give 2 and 6, half up gives 3 and 6.
    first = answer(change(((2, 0, 5, 10),), ()))
    second = answer(change(((3, 0, 6, 10),), ()))

    verdict = compare_answers(first, second, POLICY)

    assert verdict.consensus is not None
    assert verdict.consensus[0].boxes_a == (Box(3, 0, 6, 10),)


@pytest.mark.parametrize(
    ("description_1", "description_2", "expected"),
    [
        ("Blue car.", "The car turned dark blue.", "The car turned dark blue."),
        ("The car turned dark blue.", "Blue car.", "The car turned dark blue."),
        ("The car is blue.", "The car is navy", "The car is blue."),
    ],
    ids=["second-longer", "first-longer", "tie-keeps-first"],
)
def test_consensus_keeps_the_longer_description(description_1, description_2, expected) -> None:
    first = answer(change(description=description_1))
    second = answer(change(description=description_2))

    verdict = compare_answers(first, second, POLICY)

    assert verdict.consensus is not None
    assert verdict.consensus[0].description == expected


def test_consensus_labels_are_the_first_annotations_normalised() -> None:
    first = answer(change(entity_a="Automobiles", entity_b="the Cars."))
    second = answer(change(entity_a="car", entity_b="car"))

    verdict = compare_answers(first, second, AgreementPolicy(synonyms={"car": ["automobile"]}))

    assert verdict.consensus is not None
    assert (verdict.consensus[0].entity_a, verdict.consensus[0].entity_b) == ("car", "car")


def test_multiple_changes_are_matched_regardless_of_order() -> None:
    verdict = compare_answers(answer(change(), REMOVED_DOG), answer(REMOVED_DOG, change()), POLICY)

    assert (verdict.status, verdict.reasons) == ("accepted", [])
    assert [(c.index_1, c.index_2) for c in verdict.changes] == [(0, 1), (1, 0)]
    assert verdict.consensus is not None
    assert [c.category for c in verdict.consensus] == ["attribute", "object"]


def test_equal_category_breaks_a_tie_between_whole_image_changes() -> None:
    whole = ((0, 0, 100, 100),)
    light = change(whole, whole, category="lighting", entity_a="image", entity_b="image")
    noise = change(whole, whole, category="noise_resolution", entity_a="image", entity_b="image")

    verdict = compare_answers(answer(light, noise), answer(noise, light), POLICY)

    assert verdict.status == "accepted"
    assert [(c.index_1, c.index_2) for c in verdict.changes] == [(0, 1), (1, 0)]


def test_pairing_prefers_changes_that_agree_over_closer_boxes() -> None:
    big, short = ((0, 0, 100, 100),), ((0, 0, 100, 80),)  # IoU 0.8
    first = answer(
        change(big, big, entity_a="car", entity_b="car"),
        change(short, short, entity_a="bus", entity_b="bus"),
    )
    second = answer(
        change(big, big, entity_a="bus", entity_b="bus"),
        change(short, short, entity_a="car", entity_b="car"),
    )

    verdict = compare_answers(first, second, POLICY)

    assert verdict.status == "accepted"
    assert [(c.index_1, c.index_2) for c in verdict.changes] == [(0, 1), (1, 0)]


@pytest.mark.parametrize(
    ("first", "second", "reasons", "pairs"),
    [
        (
            (change(), REMOVED_DOG),
            (change(),),
            ["change_count", "change[1].unmatched"],
            [(0, 0), (1, None)],
        ),
        (
            (change(),),
            (change(), REMOVED_DOG),
            ["change_count", "change_2[1].unmatched"],
            [(0, 0), (None, 1)],
        ),
        (
            (change(),),
            (REMOVED_DOG,),
            ["change[0].unmatched", "change_2[0].unmatched"],
            [(0, None), (None, 0)],
        ),
    ],
    ids=["second-missed-a-change", "second-added-a-change", "nothing-in-common"],
)
def test_changes_without_a_counterpart_make_the_pair_disagree(
    first, second, reasons, pairs
) -> None:
    verdict = compare_answers(answer(*first), answer(*second), POLICY)

    assert (verdict.status, verdict.reasons) == ("disputed", reasons)
    assert [(c.index_1, c.index_2) for c in verdict.changes] == pairs
    assert verdict.consensus is None


def test_descriptions_are_reported_but_never_block_by_default() -> None:
    first = answer(change(description="The car turned blue."))
    second = answer(change(description="A vehicle got repainted"))

    verdict = compare_answers(first, second, POLICY)

    assert verdict.status == "accepted"
    assert verdict.changes[0].description_similarity == 0.0


def test_a_description_threshold_blocks_dissimilar_descriptions() -> None:
    first = answer(change(description="The car turned blue."))
    second = answer(change(description="A vehicle got repainted"))

    verdict = compare_answers(first, second, AgreementPolicy(description_threshold=0.3))

    assert (verdict.status, verdict.reasons) == ("disputed", ["change[0].description"])
    assert verdict.messages["change[0].description"] == (
        "change 1: the descriptions are 0% similar, below 30%"
    )


def test_every_reason_is_recorded_in_a_stable_order() -> None:
    first = answer(change(entity_a="car", description="The car turned blue."))
    second = answer(
        change(
            ((30, 30, 70, 70),),
            (),
            category="object",
            entity_a="truck",
            entity_b="",
            description="Truck gone",
        ),
        tier="good",
    )

    verdict = compare_answers(first, second, AgreementPolicy(description_threshold=0.5))

    assert verdict.reasons == [
        "tier:one_good",
        "change[0].category",
        "change[0].entity_a",
        "change[0].side_a.iou_below_threshold",
        "change[0].side_b.null_mismatch",
        "change[0].description",
    ]
    assert list(verdict.messages) == verdict.reasons
    assert verdict.status == "disputed"


def test_mean_iou_averages_every_matched_box_pair() -> None:
    first = answer(change(b=(WIDE,)))
    second = answer(change(b=((0, 0, 5000, 10),)))

    assert compare_answers(first, second, POLICY).mean_iou == pytest.approx(0.75)
    assert compare_answers(answer(), answer(), POLICY).mean_iou is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"iou_threshold": 1.5},
        {"description_threshold": -0.1},
        {"dispute_tiers": frozenset({("excellent", "excellent")})},
    ],
)
def test_policy_rejects_impossible_settings(kwargs) -> None:
    with pytest.raises(ValueError):
        AgreementPolicy(**kwargs)


coordinates = st.lists(st.integers(0, 60), min_size=2, max_size=2, unique=True).map(sorted)
short = st.lists(st.integers(0, 4), min_size=2, max_size=2, unique=True).map(sorted)
boxes = st.builds(lambda xs, ys: Box(xs[0], ys[0], xs[1], ys[1]), coordinates, coordinates)
# Strips on a small grid: equal-total box matchings (ties) come up often there.
strips = st.builds(lambda xs: Box(xs[0], 0, xs[1], 10), short)
changes = st.builds(
    change,
    st.lists((boxes | strips).map(lambda b: (b.x1, b.y1, b.x2, b.y2)), max_size=3),
    st.lists((boxes | strips).map(lambda b: (b.x1, b.y1, b.x2, b.y2)), max_size=3),
    category=st.sampled_from(["attribute", "object"]),
    entity_a=st.sampled_from(["car", "Cars", "dog", ""]),
    entity_b=st.sampled_from(["car", "dog", ""]),
    description=st.sampled_from(["The car turned blue.", "A dog appeared.", ""]),
)
answers = st.builds(
    lambda tier, cs: answer(*cs, tier=tier), st.sampled_from(TIERS), st.lists(changes, max_size=3)
)


@st.composite
def related_answers(draw: st.DrawFn) -> tuple[Answer, Answer]:
    """A second answer sharing the first's changes: reordered, boxes shuffled, maybe one fewer."""
    first = draw(answers)
    reordered = [
        replace(
            c,
            boxes_a=tuple(draw(st.permutations(c.boxes_a))),
            boxes_b=tuple(draw(st.permutations(c.boxes_b))),
        )
        for c in draw(st.permutations(first.changes))
    ]
    kept = reordered[: draw(st.integers(len(reordered) - 1, len(reordered)))]
    return first, answer(*kept, tier=draw(st.sampled_from(TIERS)))


@st.composite
def answers_differing_in_boxes(draw: st.DrawFn) -> tuple[Answer, Answer]:
    """Two excellent answers alike but for their boxes, redrawn as strips on a small grid."""
    first = replace(draw(answers), tier="excellent")

    def redraw(boxes: tuple[Box, ...]) -> tuple[Box, ...]:
        return tuple(draw(st.lists(strips, min_size=len(boxes), max_size=len(boxes))))

    changes = tuple(
        replace(c, boxes_a=redraw(c.boxes_a), boxes_b=redraw(c.boxes_b)) for c in first.changes
    )
    return first, replace(first, changes=changes)


policies = st.builds(
    AgreementPolicy,
    iou_threshold=st.floats(0, 1),
    description_threshold=st.floats(0, 1),
    synonyms=st.just({"car": ["dog"]}) | st.just({}),
)


@given(st.tuples(answers, answers) | related_answers() | answers_differing_in_boxes(), policies)
def test_verdict_status_does_not_depend_on_who_submitted_first(pair, policy) -> None:
    first, second = pair

    forward = compare_answers(first, second, policy)
    backward = compare_answers(second, first, policy)

    assert forward.status == backward.status


@settings(max_examples=300)
@given(st.lists(strips, min_size=1, max_size=3), st.lists(strips, min_size=1, max_size=3))
def test_box_agreement_does_not_depend_on_who_submitted_first(boxes_1, boxes_2) -> None:
    as_values = [[(b.x1, b.y1, b.x2, b.y2) for b in boxes] for boxes in (boxes_1, boxes_2)]
    first, second = (answer(change(b=values)) for values in as_values)

    forward = compare_answers(first, second, POLICY)
    backward = compare_answers(second, first, POLICY)

    assert (forward.status, forward.reasons) == (backward.status, backward.reasons)


@given(answers, policies)
def test_an_excellent_answer_agrees_with_itself(ans, policy) -> None:
    own = Answer("excellent", ans.defects, ans.time_spent_ms, ans.changes)

    verdict = compare_answers(own, own, policy)

    assert (verdict.status, verdict.reasons) == ("accepted", [])
    assert verdict.consensus is not None
    assert [(c.boxes_a, c.boxes_b) for c in verdict.consensus] == [
        (c.boxes_a, c.boxes_b) for c in own.changes
    ]


@pytest.mark.parametrize("defect", ["instruction_not_followed", "unrelated_changes"])
def test_an_excellent_answer_flagged_with_a_contradicting_defect_goes_to_a_lead(defect) -> None:
    flagged = replace(answer(change()), defects=(defect,))
    verdict = compare_answers(flagged, answer(change()), AgreementPolicy())
    assert verdict.status == "disputed"
    assert verdict.reasons == ["defects"]
    assert verdict.consensus is None
    assert defect in verdict.messages["defects"]


def test_other_defects_do_not_stop_an_excellent_pair() -> None:
    flagged = replace(answer(change()), defects=("artefacts",))
    assert compare_answers(flagged, answer(change()), AgreementPolicy()).status == "accepted"


def test_a_rejected_pair_stays_rejected_whatever_its_defects() -> None:
    flagged = replace(answer(change(), tier="poor"), defects=("unrelated_changes",))
    verdict = compare_answers(flagged, answer(change()), AgreementPolicy())
    assert verdict.status == "rejected" and "defects" not in verdict.reasons


@pytest.mark.parametrize(
    ("iou", "text"),
    [
        (0.004009, "< 0.01"),
        (0.0, "0"),
        (0.04009, "0.0401"),
        (0.142857, "0.1429"),
        (0.49994, "0.4999"),
    ],
)
def test_an_iou_reads_with_sane_precision(iou, text):
    assert iou_text(iou) == text
