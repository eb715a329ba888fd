"""A member removed from a project (or no longer an annotator in it) stops working at once: an
old lease takes no draft, submit or skip, on the page or over the API, and a removed lead no
longer reads the project's jobs."""

import json

import pytest
from django.test import Client

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, AssignmentState, PairEvent
from jobs.lifecycle import job_create
from jobs.models import JobKind
from projects.members import membership_set
from projects.models import Membership, Role
from tests.factories import answer, make_pair


@pytest.fixture
def lease(project, annotator_1):
    make_pair(project)
    return assignment_lease_next(project=project, user=annotator_1)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _demote(project, user, how: str) -> None:
    if how == "removed":
        Membership.objects.filter(project=project, user=user).delete()
    else:
        membership_set(project=project, user=user, role=Role.RESEARCHER)


@pytest.mark.parametrize("how", ["removed", "made-researcher"])
def test_an_old_lease_takes_no_draft_submit_or_skip(project, annotator_1, lease, how):
    _demote(project, annotator_1, how)
    client = _client(annotator_1)
    body = json.dumps(answer())

    draft = client.put(f"/api/v1/assignments/{lease.pk}/draft/", body, "application/json")
    submit = client.post(f"/api/v1/assignments/{lease.pk}/submit/", body, "application/json")
    skip = client.post(f"/api/v1/assignments/{lease.pk}/skip/", "{}", "application/json")
    page = client.get(f"/a/{lease.pk}/")

    for response in (draft, submit, skip):
        assert response.status_code == 403
        assert response.json()["error"] == {
            "code": "permission_denied",
            "message": "you are no longer an annotator of this project",
            "fields": {},
        }
    assert page.status_code == 403
    lease.refresh_from_db()
    assert lease.state == AssignmentState.LEASED and lease.draft is None
    assert not Annotation.objects.exists()
    assert not PairEvent.objects.filter(kind="skipped").exists()


def test_a_member_taken_back_works_on_again(project, annotator_1, lease):
    _demote(project, annotator_1, "removed")
    membership_set(project=project, user=annotator_1, role=Role.ANNOTATOR)

    response = _client(annotator_1).post(
        f"/api/v1/assignments/{lease.pk}/submit/", json.dumps(answer()), "application/json"
    )

    assert response.status_code == 201


def test_a_removed_lead_no_longer_reads_the_projects_jobs(project, lead):
    job = job_create(kind=JobKind.IMPORT, project=project, user=lead)
    client = _client(lead)
    assert client.get(f"/api/v1/jobs/{job.pk}/").status_code == 200

    Membership.objects.filter(project=project, user=lead).delete()

    assert client.get(f"/api/v1/jobs/{job.pk}/").status_code == 404
    assert client.get(f"/jobs/{job.pk}/").status_code == 404


@pytest.mark.parametrize("how", ["removed", "made-researcher"])
def test_a_removed_member_cannot_take_back_a_submitted_answer(project, annotator_1, lease, how):
    """Issue 24 item 7: POST /a/<id>/edit/ withdrew a removed member's submitted answer."""
    submitted = _client(annotator_1).post(
        f"/api/v1/assignments/{lease.pk}/submit/", json.dumps(answer()), "application/json"
    )
    assert submitted.status_code == 201
    _demote(project, annotator_1, how)

    response = _client(annotator_1).post(f"/a/{lease.pk}/edit/")

    assert response.status_code == 403
    lease.refresh_from_db()
    assert lease.state == AssignmentState.SUBMITTED
    assert Annotation.objects.filter(assignment=lease).exists()
    assert not PairEvent.objects.filter(kind="reopened_to_edit").exists()


@pytest.mark.parametrize("how", ["removed", "made-researcher"])
def test_a_removed_member_reads_no_gold_feedback(project, annotator_1, how):
    """Issue 24 item 7: the known answer's boxes stayed readable for 10 minutes."""
    from annotator.intake.gold import gold_answer_set

    project.gold_feedback, project.gold_rate = True, 1.0
    project.save()
    pair = make_pair(project)
    gold_answer_set(pair=pair, changes=answer()["changes"])
    assignment = assignment_lease_next(project=project, user=annotator_1)
    client = _client(annotator_1)
    client.post(
        f"/api/v1/assignments/{assignment.pk}/submit/", json.dumps(answer()), "application/json"
    )
    assert client.get(f"/review/assignments/{assignment.pk}/gold-feedback/").status_code == 200

    _demote(project, annotator_1, how)

    assert client.get(f"/review/assignments/{assignment.pk}/gold-feedback/").status_code == 404
