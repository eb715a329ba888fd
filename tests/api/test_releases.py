import hashlib
import json

import pytest
from rest_framework.test import APIClient

from accounts.services import token_create
from pairdiff.release.splits import SplitPlan
from releases.building import release_create
from releases.models import Release, ReleaseStatus
from tests.factories import answer, make_accepted


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _bodies(n):
    categories = ["attribute", "object", "counting", "relation"]
    return [answer(category=categories[i % 4]) for i in range(n)]


@pytest.fixture
def ready(project, annotator_1, annotator_2, lead, django_capture_on_commit_callbacks):
    make_accepted(project, [annotator_1, annotator_2], _bodies(8))
    with django_capture_on_commit_callbacks(execute=True):
        release = release_create(
            project=project, name="v1", plan=SplitPlan(seed=1, test_fraction=0.5), user=lead
        )
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY
    return release


@pytest.fixture
def building(project, ready, lead, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        return release_create(project=project, name="v2", plan=SplitPlan(), user=lead)


def test_a_researcher_downloads_a_release_with_a_token_and_checks_every_sha256(ready, researcher):
    _, secret = token_create(user=researcher, name="laptop")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")

    [listed] = client.get("/api/v1/projects/cars/releases/").json()["results"]
    assert listed["name"] == "v1" and listed["counts"]["total"] == 8
    manifest = client.get(listed["url"]).json()["manifest"]
    for name, entry in manifest["files"].items():
        response = client.get(f"/api/v1/releases/{ready.pk}/files/{name}")
        assert response.status_code == 200, name
        body = b"".join(response.streaming_content)
        assert hashlib.sha256(body).hexdigest() == entry["sha256"], name
        assert response["ETag"] == f'"{entry["sha256"]}"'
        assert int(response["Content-Length"]) == entry["size"]


def test_a_researcher_sees_ready_releases_only_and_a_lead_sees_all(
    building, ready, researcher, lead
):
    names = [
        r["name"]
        for r in _client(researcher).get("/api/v1/projects/cars/releases/").json()["results"]
    ]
    assert names == ["v1"]
    lead_view = _client(lead).get("/api/v1/projects/cars/releases/").json()["results"]
    assert [(r["name"], r["status"]) for r in lead_view] == [("v2", "building"), ("v1", "ready")]
    assert _client(researcher).get(f"/api/v1/releases/{building.pk}/").status_code == 404


@pytest.mark.parametrize("who", ["annotator_1", "outsider"])
def test_annotators_and_outsiders_cannot_read_releases(ready, who, request):
    client = _client(request.getfixturevalue(who))
    assert client.get(f"/api/v1/releases/{ready.pk}/").status_code == 404
    assert client.get(f"/api/v1/releases/{ready.pk}/files/benchmark.json").status_code == 404
    assert client.get(f"/api/v1/releases/{ready.pk}/records/").status_code == 404


def test_a_researcher_of_another_project_cannot_read_it(ready, db):
    from projects.creating import project_create
    from projects.models import Preset, Role
    from tests.conftest import member

    other = project_create(slug="boats", name="Boats", preset=Preset.MINCU)
    stranger = member(other, "boat-researcher", Role.RESEARCHER)
    assert _client(stranger).get(f"/api/v1/releases/{ready.pk}/").status_code == 404


@pytest.mark.parametrize(
    "name", ["nothing.json", "../manifest.json", "images/../../secret", "/etc/passwd"]
)
def test_only_files_of_the_manifest_can_be_downloaded(ready, researcher, name):
    response = _client(researcher).get(f"/api/v1/releases/{ready.pk}/files/{name}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_records_are_paginated_and_filtered(ready, researcher):
    client = _client(researcher)
    page = client.get(f"/api/v1/releases/{ready.pk}/records/").json()
    assert page["count"] == 8 and len(page["results"]) == 8
    test = client.get(f"/api/v1/releases/{ready.pk}/records/?split=test").json()
    assert test["count"] == 4  # half of each category's two pairs
    assert {r["split"] for r in test["results"]} == {"test"}
    counting = client.get(f"/api/v1/releases/{ready.pk}/records/?category=counting").json()
    assert [r["category"] for r in counting["results"]] == ["counting", "counting"]
    hard = client.get(f"/api/v1/releases/{ready.pk}/records/?difficulty=hard").json()
    assert hard["count"] == 8  # 20×20 boxes on 96×64 images


@pytest.mark.parametrize("query", ["split=dev", "difficulty=trivial"])
def test_unknown_record_filters_are_a_clear_400(ready, researcher, query):
    response = _client(researcher).get(f"/api/v1/releases/{ready.pk}/records/?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_a_lead_builds_a_release_over_rest(
    project, annotator_1, annotator_2, lead, django_capture_on_commit_callbacks
):
    make_accepted(project, [annotator_1, annotator_2], _bodies(4))
    with django_capture_on_commit_callbacks(execute=True):
        response = _client(lead).post(
            "/api/v1/projects/cars/releases/",
            {"name": "paper", "seed": 4, "test_per_category": 1, "test_ratio": [1, 2, 2]},
            format="json",
        )
    assert response.status_code == 202
    body = response.json()
    assert body["release"]["name"] == "paper" and body["job"]["kind"] == "release"
    release = Release.objects.get(name="paper")
    assert release.status == ReleaseStatus.READY
    assert release.plan["test_ratio"] == [1, 2, 2]
    job = _client(lead).get(f"/api/v1/jobs/{body['job']['id']}/").json()
    assert job["status"] == "succeeded"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": "x", "test_ratio": [1, 2]}, "test_ratio"),
        ({"name": "x", "val_fraction": 0.8, "test_fraction": 0.8}, "non_field_errors"),
        ({"name": "x", "seed": -1}, "seed"),
    ],
)
def test_bad_release_requests_name_the_field(project, lead, body, field):
    response = _client(lead).post("/api/v1/projects/cars/releases/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_a_duplicate_name_is_refused(ready, lead):
    response = _client(lead).post("/api/v1/projects/cars/releases/", {"name": "v1"}, format="json")
    assert response.status_code == 400
    assert "exists already" in response.json()["error"]["message"]


@pytest.mark.parametrize("who", ["researcher", "annotator_1"])
def test_only_leads_build_releases(project, who, request):
    response = _client(request.getfixturevalue(who)).post(
        "/api/v1/projects/cars/releases/", {"name": "v9"}, format="json"
    )
    assert response.status_code == 403


def test_the_manifest_itself_can_be_downloaded(ready, researcher):
    response = _client(researcher).get(f"/api/v1/releases/{ready.pk}/files/manifest.json")
    assert response.status_code == 200
    assert json.loads(b"".join(response.streaming_content)) == ready.manifest


def test_a_file_lost_from_storage_is_a_clear_503_not_a_500(ready, researcher):
    from django.core.files.storage import default_storage

    default_storage.delete(f"{ready.prefix}/benchmark.json")
    response = _client(researcher).get(f"/api/v1/releases/{ready.pk}/files/benchmark.json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"
