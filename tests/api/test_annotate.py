from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Assignment, AssignmentState
from projects.creating import project_create
from projects.members import membership_set
from projects.models import Role
from tests.factories import answer, make_pair


@pytest.fixture
def api(annotator_1):
    client = APIClient()
    client.force_authenticate(annotator_1)
    return client


def _lease(api, slug="cars"):
    return api.post(f"/api/v1/projects/{slug}/next/")


def test_next_leases_a_pair_with_what_the_client_needs(api, project):
    pair = make_pair(project, external_id="car-7", instruction="paint it blue")

    response = _lease(api)

    assert response.status_code == 200
    body = response.json()["assignment"]
    assert body["pair"] == {
        "id": pair.pk,
        "external_id": "car-7",
        "instruction": "paint it blue",
        "image_a": {"url": f"/pairs/{pair.pk}/image/a/", "width": 96, "height": 64},
        "image_b": {"url": f"/pairs/{pair.pk}/image/b/", "width": 96, "height": 64},
    }
    assert body["id"] == Assignment.objects.get().pk and body["expires_at"]


def test_next_is_204_when_nothing_is_left(api, project):
    response = _lease(api)
    assert response.status_code == 204 and response.content == b""


def test_next_is_forbidden_for_researchers_and_hidden_from_outsiders(project, researcher, outsider):
    client = APIClient()
    client.force_authenticate(researcher)
    assert _lease(client).status_code == 403
    client.force_authenticate(outsider)
    assert _lease(client).status_code == 404


def test_submit_is_idempotent_with_the_header(api, project):
    make_pair(project)
    assignment_id = _lease(api).json()["assignment"]["id"]
    url = f"/api/v1/assignments/{assignment_id}/submit/"

    first = api.post(url, answer(), format="json", HTTP_IDEMPOTENCY_KEY="abc")
    again = api.post(url, answer(), format="json", HTTP_IDEMPOTENCY_KEY="abc")

    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json() == again.json()
    assert first.json()["annotation"]["changes"][0]["boxes_a"] == [[20, 10, 40, 30]]
    assert Annotation.objects.count() == 1


def test_submit_errors_name_the_fields(api, project):
    make_pair(project)
    assignment_id = _lease(api).json()["assignment"]["id"]

    response = api.post(
        f"/api/v1/assignments/{assignment_id}/submit/",
        answer(tier="superb", boxes_b=[[0, 0, 500, 10]]),
        format="json",
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"tier", "changes.0.boxes_b.0"}


def test_draft_round_trip_and_renewal(api, project):
    make_pair(project)
    assignment_id = _lease(api).json()["assignment"]["id"]

    response = api.put(
        f"/api/v1/assignments/{assignment_id}/draft/", {"tier": "good"}, format="json"
    )

    assert response.status_code == 200 and response.json()["lease"] == "held"
    assert Assignment.objects.get().draft["tier"] == "good"


def test_a_draft_must_be_an_object(api, project):
    make_pair(project)
    assignment_id = _lease(api).json()["assignment"]["id"]
    response = api.put(f"/api/v1/assignments/{assignment_id}/draft/", [1, 2], format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_annotators_cannot_touch_each_others_assignments(api, project, annotator_2):
    make_pair(project)
    assignment_id = _lease(api).json()["assignment"]["id"]
    other = APIClient()
    other.force_authenticate(annotator_2)

    for response in (
        other.put(f"/api/v1/assignments/{assignment_id}/draft/", {}, format="json"),
        other.post(f"/api/v1/assignments/{assignment_id}/submit/", answer(), format="json"),
        other.post(f"/api/v1/assignments/{assignment_id}/skip/"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_session_clients_need_the_csrf_token(project, annotator_1):
    make_pair(project)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(annotator_1)
    assert _lease(client).status_code == 403


def test_skip_returns_the_pair_to_others(api, project, annotator_2):
    make_pair(project)
    assignment_id = _lease(api).json()["assignment"]["id"]

    assert api.post(f"/api/v1/assignments/{assignment_id}/skip/").status_code == 204
    assert _lease(api).status_code == 204
    other = APIClient()
    other.force_authenticate(annotator_2)
    assert _lease(other).status_code == 200


def test_next_resumes_the_callers_live_lease_in_this_project_only(api, project, annotator_1):
    other = project_create(slug="boats", name="Boats")
    membership_set(project=other, user=annotator_1, role=Role.ANNOTATOR)
    pair, boat = make_pair(project), make_pair(other)
    in_boats = _lease(api, "boats").json()["assignment"]

    first = _lease(api).json()["assignment"]
    again = _lease(api).json()["assignment"]

    assert in_boats["pair"]["id"] == boat.pk
    assert first["pair"]["id"] == pair.pk and again["id"] == first["id"]
    assert again["expires_at"] >= first["expires_at"]  # renewed


def test_without_a_broker_next_returns_expired_leases_to_the_pool_first(api, project, annotator_2):
    project.overlap = 1
    project.save(update_fields=["overlap"])
    pair = make_pair(project)
    theirs = assignment_lease_next(project=project, user=annotator_2)
    Assignment.objects.filter(pk=theirs.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    response = _lease(api)

    assert response.json()["assignment"]["pair"]["id"] == pair.pk
    assert Assignment.objects.get(pk=theirs.pk).state == AssignmentState.EXPIRED


def test_an_admin_outside_the_project_leases_as_a_lead(project, db):
    make_pair(project)
    admin = get_user_model().objects.create_superuser("admin", password="admin-password-1")
    client = APIClient()
    client.force_authenticate(admin)

    assert _lease(client).status_code == 200
