import pytest

from annotator.models import Annotation, PairStatus
from pairdiff.answers import AnswerInvalid
from review.agreement import agreement_compute
from review.models import Decision, Resolution
from review.resolutions import ResolutionRefused, resolution_record
from tests.factories import answer, make_pair


def _snapshot():
    return [(a.pk, a.tier, [c.boxes_b for c in a.changes.all()]) for a in Annotation.objects.all()]


def test_accepting_annotation_2_makes_its_answer_stand(disputed, lead):
    before = _snapshot()

    resolution = resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.ACCEPT_2)

    disputed.refresh_from_db()
    assert disputed.status == PairStatus.ACCEPTED
    assert resolution.answer["changes"][0]["boxes_b"] == [[30, 20, 50, 40]]
    assert (resolution.status_before, resolution.status_after) == ("disputed", "accepted")
    assert _snapshot() == before  # the annotations are never overwritten


def test_a_merged_answer_is_checked_like_a_submission(disputed, lead):
    merged = answer(boxes_b=[[25, 15, 45, 35]])

    resolution = resolution_record(
        pair_id=disputed.pk, lead=lead, decision=Decision.MERGE, answer=merged, comment="split"
    )

    assert resolution.answer["changes"][0]["boxes_b"] == [[25, 15, 45, 35]]
    assert resolution.comment == "split"
    with pytest.raises(AnswerInvalid) as exc:
        resolution_record(
            pair_id=disputed.pk,
            lead=lead,
            decision=Decision.MERGE,
            answer=answer(boxes_b=[[0, 0, 500, 10]]),
        )
    assert list(exc.value.fields) == ["answer.changes.0.boxes_b.0"]
    assert Resolution.objects.count() == 1


def test_reject_needs_a_reason(disputed, lead):
    with pytest.raises(AnswerInvalid) as exc:
        resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.REJECT)
    assert "reason" in exc.value.fields

    resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.REJECT, reason="blurry")
    disputed.refresh_from_db()
    assert disputed.status == PairStatus.REJECTED


def test_reopen_returns_the_pair_to_its_verdict_and_keeps_history(disputed, lead):
    resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.ACCEPT_1)

    reopened = resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.REOPEN)

    disputed.refresh_from_db()
    assert disputed.status == PairStatus.DISPUTED
    assert (reopened.status_before, reopened.status_after) == ("accepted", "disputed")
    assert [r.decision for r in disputed.resolutions.all()] == ["accept_1", "reopen"]


def test_a_recompute_keeps_the_leads_decision(disputed, lead, project):
    resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.REJECT, reason="no")
    project.iou_threshold = 0.1
    project.save()

    agreement = agreement_compute(pair_id=disputed.pk)

    disputed.refresh_from_db()
    assert agreement.status == "accepted" and disputed.status == PairStatus.REJECTED


def test_accepting_needs_cross_checked_annotations(project, lead):
    pair = make_pair(project)
    with pytest.raises(ResolutionRefused):
        resolution_record(pair_id=pair.pk, lead=lead, decision=Decision.ACCEPT_1)
