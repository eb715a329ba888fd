"""Gold feedback: an annotator's own boxes against the known answer, only right after they
submitted a gold pair, and only in projects that show it."""

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.submitting import annotation_submit
from review.gold_feedback import gold_feedback_for
from tests.factories import answer, make_pair

KNOWN = answer(boxes_a=[[10, 10, 40, 40]], boxes_b=[[12, 10, 42, 40]])["changes"]
MINE = answer(boxes_a=[[11, 10, 40, 41]], boxes_b=[[12, 10, 42, 40]])


def _submitted(project, user, *, gold=True):
    project.gold_rate = 1.0  # gold pairs are handed out first
    project.save()
    pair = make_pair(project)
    if gold:
        gold_answer_set(pair=pair, changes=KNOWN)
    assignment = assignment_lease_next(project=project, user=user)
    annotation_submit(assignment_id=assignment.pk, user=user, body=MINE)
    return assignment


def test_feedback_is_the_callers_boxes_against_the_known_answer(project, annotator_1):
    project.gold_feedback = True
    project.save()
    assignment = _submitted(project, annotator_1)

    feedback = gold_feedback_for(assignment_id=assignment.pk, user=annotator_1)

    assert feedback["yours"] == [
        {k: MINE["changes"][0][k] for k in ("boxes_a", "boxes_b", "entity_a", "entity_b")}
    ]
    assert feedback["known"] == [
        {k: KNOWN[0][k] for k in ("boxes_a", "boxes_b", "entity_a", "entity_b")}
    ]


def test_no_feedback_off_the_setting_for_others_for_regular_pairs_or_later(
    project, annotator_1, annotator_2
):
    assignment = _submitted(project, annotator_1)
    assert gold_feedback_for(assignment_id=assignment.pk, user=annotator_1) is None  # setting off
    project.gold_feedback = True
    project.save()
    assert gold_feedback_for(assignment_id=assignment.pk, user=annotator_2) is None  # not theirs
    later = timezone.now() + timedelta(minutes=11)
    assert gold_feedback_for(assignment_id=assignment.pk, user=annotator_1, now=later) is None
    regular = _submitted(project, annotator_1, gold=False)
    assert gold_feedback_for(assignment_id=regular.pk, user=annotator_1) is None


def test_no_feedback_before_submitting(project, annotator_1):
    project.gold_feedback = True
    project.gold_rate = 1.0
    project.save()
    pair = make_pair(project)
    gold_answer_set(pair=pair, changes=KNOWN)
    assignment = assignment_lease_next(project=project, user=annotator_1)
    assert gold_feedback_for(assignment_id=assignment.pk, user=annotator_1) is None


def test_the_endpoint_answers_404_without_feedback(client, project, annotator_1):
    project.gold_feedback = True
    project.save()
    assignment = _submitted(project, annotator_1)
    regular = _submitted(project, annotator_1, gold=False)
    client.force_login(annotator_1)
    body = client.get(reverse("review:gold_feedback", args=[assignment.pk])).json()
    assert body["images"]["a"] == reverse("annotator:pair_image", args=[body["pair"], "a"])
    assert client.get(reverse("review:gold_feedback", args=[regular.pk])).status_code == 404
