"""Taking a submitted answer back to edit it, while the pair is not yet cross-checked."""

import pytest
from django.urls import reverse

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Assignment, AssignmentState, PairEvent
from annotator.revising import annotation_reopen
from annotator.selectors import annotator_submitted
from annotator.submitting import SubmitConflict, annotation_submit
from tests.factories import answer, make_pair

BODY = answer(boxes_a=[[20, 10, 40, 30]], boxes_b=[])


def _submit(project, user, body=BODY):
    assignment = assignment_lease_next(project=project, user=user)
    annotation_submit(assignment_id=assignment.pk, user=user, body=body)
    return assignment


def test_a_reopened_answer_is_the_draft_again_on_a_live_lease(project, annotator_1):
    pair = make_pair(project)
    assignment = _submit(project, annotator_1)
    assert [a.editable for a in annotator_submitted(annotator_1, project)] == [True]

    annotation_reopen(assignment_id=assignment.pk, user=annotator_1)

    assignment.refresh_from_db()
    pair.refresh_from_db()
    assert assignment.state == AssignmentState.LEASED and assignment.submitted_at is None
    draft = assignment.draft
    assert draft["changes"] == BODY["changes"] and draft["tier"] == BODY["tier"]
    assert draft["ui"] == {"absent_a": [False], "absent_b": [True]}
    assert not Annotation.objects.filter(assignment=assignment).exists()
    assert pair.n_submitted == 0
    assert PairEvent.objects.filter(pair=pair, kind="reopened_to_edit").count() == 1
    # Submitted again (same idempotency key as before), it counts once.
    annotation_submit(
        assignment_id=assignment.pk, user=annotator_1, body=BODY, idempotency_key="k1"
    )
    pair.refresh_from_db()
    assert pair.n_submitted == 1


def test_no_edit_once_cross_checked_for_gold_or_for_someone_else(project, annotator_1, annotator_2):
    make_pair(project)
    first = _submit(project, annotator_1)
    with pytest.raises(Assignment.DoesNotExist):  # not theirs
        annotation_reopen(assignment_id=first.pk, user=annotator_2)
    _submit(project, annotator_2)  # both in: the cross-check has run
    assert [a.editable for a in annotator_submitted(annotator_1, project)] == [False]
    with pytest.raises(SubmitConflict):
        annotation_reopen(assignment_id=first.pk, user=annotator_1)

    project.gold_rate = 1.0
    project.save()
    gold = make_pair(project)
    gold_answer_set(pair=gold, changes=BODY["changes"])
    on_gold = _submit(project, annotator_1)
    assert on_gold.pair_id == gold.pk
    with pytest.raises(SubmitConflict):
        annotation_reopen(assignment_id=on_gold.pk, user=annotator_1)


def test_the_project_page_lists_submitted_pairs_with_edit(client, project, annotator_1):
    make_pair(project)
    assignment = _submit(project, annotator_1)
    client.force_login(annotator_1)
    body = client.get(reverse("console:project", args=[project.slug])).content.decode()
    edit = reverse("annotator:annotation_edit", args=[assignment.pk])
    assert "Your submitted pairs" in body and f'action="{edit}"' in body
    response = client.post(edit)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotator:workspace", args=[assignment.pk])
    assert client.post(edit).status_code == 302  # again: not submitted any more, said politely
