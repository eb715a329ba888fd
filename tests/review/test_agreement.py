import pytest

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.models import PairStatus
from annotator.submitting import annotation_submit
from review.agreement import agreement_compute
from review.models import Agreement, GoldScore
from tests.factories import answer, make_pair


@pytest.fixture
def pair(project):
    return make_pair(project)


def _annotate(project, user, body):
    assignment = assignment_lease_next(project=project, user=user)
    return annotation_submit(assignment_id=assignment.pk, user=user, body=body)[0]


def test_two_excellent_matching_answers_are_accepted_with_mean_boxes(
    project, pair, annotator_1, annotator_2
):
    _annotate(project, annotator_1, answer(boxes_a=[[20, 10, 40, 30]]))
    _annotate(project, annotator_2, answer(boxes_a=[[22, 12, 42, 32]]))

    agreement = agreement_compute(pair_id=pair.pk)

    pair.refresh_from_db()
    assert pair.status == PairStatus.ACCEPTED and agreement.status == "accepted"
    assert agreement.reasons == []
    assert agreement.consensus[0]["boxes_a"] == [[21, 11, 41, 31]]
    assert agreement.consensus[0]["boxes_b"] == [[20, 10, 40, 30]]


@pytest.mark.parametrize(
    ("tier_2", "boxes_b_2", "status", "reason"),
    [
        ("good", None, "disputed", "tier:one_good"),
        ("excellent", [[30, 20, 50, 40]], "disputed", "change[0].side_b.iou_below_threshold"),
        ("fair", None, "rejected", "tier:fair"),
    ],
)
def test_verdicts_record_their_reasons(
    project, pair, annotator_1, annotator_2, tier_2, boxes_b_2, status, reason
):
    _annotate(project, annotator_1, answer())
    _annotate(project, annotator_2, answer(tier=tier_2, boxes_b=boxes_b_2))

    agreement = agreement_compute(pair_id=pair.pk)

    pair.refresh_from_db()
    assert (pair.status, agreement.status) == (status, status)
    assert reason in [r["code"] for r in agreement.reasons]
    assert all(r["message"] for r in agreement.reasons)


def test_nothing_is_decided_before_the_second_annotation(project, pair, annotator_1):
    _annotate(project, annotator_1, answer())

    assert agreement_compute(pair_id=pair.pk) is None
    pair.refresh_from_db()
    assert pair.status == PairStatus.IN_ANNOTATION


def test_computing_twice_changes_nothing(project, pair, annotator_1, annotator_2):
    _annotate(project, annotator_1, answer())
    _annotate(project, annotator_2, answer())
    first = agreement_compute(pair_id=pair.pk)

    again = agreement_compute(pair_id=pair.pk)

    assert Agreement.objects.count() == 1 and again.consensus == first.consensus
    assert pair.events.filter(kind="agreement").count() == 1


def test_the_last_submit_triggers_the_cross_check(
    project, pair, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as first:
        _annotate(project, annotator_1, answer())
    with django_capture_on_commit_callbacks(execute=True) as second:
        _annotate(project, annotator_2, answer())

    pair.refresh_from_db()
    assert (len(first), len(second)) == (0, 1)
    assert pair.status == PairStatus.ACCEPTED


def test_answers_on_gold_pairs_are_scored_for_leads(
    project, pair, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    gold_answer_set(pair=pair, changes=answer()["changes"])
    project.gold_rate = 0.2
    project.save()
    with django_capture_on_commit_callbacks(execute=True):
        good = _annotate(project, annotator_1, answer(boxes_a=[[21, 11, 41, 31]]))
    with django_capture_on_commit_callbacks(execute=True):
        bad = _annotate(project, annotator_2, answer(category="object"))

    assert GoldScore.objects.get(annotation=good).passed is True
    scored = GoldScore.objects.get(annotation=bad)
    assert scored.passed is False and scored.details["changes"][0]["category_correct"] is False


def test_with_overlap_one_the_single_answer_decides(project, pair, annotator_1):
    project.overlap = 1
    project.save()
    _annotate(project, annotator_1, answer())

    assert agreement_compute(pair_id=pair.pk).status == "accepted"


@pytest.mark.parametrize(
    ("rule", "tiers", "status"),
    [
        ("strict", ("excellent", "good"), "disputed"),
        ("good", ("excellent", "good"), "accepted"),
        ("good", ("good", "good"), "accepted"),
        ("good", ("good", "fair"), "disputed"),
        ("strict", ("good", "good"), "rejected"),
    ],
)
def test_the_projects_tier_rule_decides(
    project, pair, annotator_1, annotator_2, rule, tiers, status
):
    project.tier_rule = rule
    project.save()
    _annotate(project, annotator_1, answer(tier=tiers[0]))
    _annotate(project, annotator_2, answer(tier=tiers[1]))

    assert agreement_compute(pair_id=pair.pk).status == status


def test_the_cross_check_reads_each_annotations_changes_in_order_also_none(
    project, pair, annotator_1, annotator_2
):
    two = answer()
    two["changes"].append(two["changes"][0] | {"description": "A second one.", "boxes_a": []})
    first = _annotate(project, annotator_1, two)
    second = _annotate(project, annotator_2, {**answer(tier="poor"), "changes": []})

    agreement = agreement_compute(pair_id=pair.pk)

    assert (agreement.annotation_1_id, agreement.annotation_2_id) == (first.pk, second.pk)
    read = [a.changes.all() for a in (agreement.annotation_1, agreement.annotation_2)]
    assert [[c.description for c in changes] for changes in read] == [
        ["The patch changed from red to blue.", "A second one."],
        [],
    ]
    assert agreement.status == "rejected"
