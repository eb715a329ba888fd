import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotator.models import Pair
from jobs.models import Job, JobStatus
from tests.factories import make_pair
from tests.images import edited_pair


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _png(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="image/png")


def test_a_lead_uploads_one_pair(project, lead):
    a, b = edited_pair()

    response = _client(lead).post(
        "/api/v1/projects/cars/pairs/",
        {
            "image_a": _png("a.png", a),
            "image_b": _png("b.png", b),
            "external_id": "up-1",
            "category": "attribute",
            "metadata": json.dumps({"camera": "left"}),
        },
        format="multipart",
    )

    assert response.status_code == 201
    body = response.json()
    pair = Pair.objects.get()
    assert body["id"] == pair.pk and body["external_id"] == "up-1"
    assert body["image_a"]["width"] == 96 and pair.metadata == {"camera": "left"}
    assert pair.image_a.read() == a


def test_metadata_past_16_kb_is_refused_with_its_size_and_never_echoed(project, lead):
    a, b = edited_pair()
    response = _client(lead).post(
        "/api/v1/projects/cars/pairs/",
        {
            "image_a": _png("a.png", a),
            "image_b": _png("b.png", b),
            "metadata": json.dumps({"source": "a/" * 30_000}),
        },
        format="multipart",
    )

    assert response.status_code == 400
    assert "metadata is larger than 16 KB" in response.json()["error"]["fields"]["metadata"][0]
    assert len(response.content) < 1_000 and Pair.objects.count() == 0


def test_an_upload_that_is_not_an_image_names_the_field(project, lead):
    _, b = edited_pair()
    response = _client(lead).post(
        "/api/v1/projects/cars/pairs/",
        {"image_a": _png("a.png", b"hello, I am text"), "image_b": _png("b.png", b)},
        format="multipart",
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert "not an image" in error["message"] and list(error["fields"]) == ["image_a"]
    assert Pair.objects.count() == 0


def test_pairs_list_filters_by_status(project, lead, django_assert_num_queries):
    make_pair(project)
    kept = make_pair(project)
    Pair.objects.filter(pk=kept.pk).update(status="accepted")

    with django_assert_num_queries(3):  # project with the role, count, the page with its agreements
        response = _client(lead).get("/api/v1/projects/cars/pairs/?status=accepted")

    assert [p["id"] for p in response.json()["results"]] == [kept.pk]


@pytest.mark.parametrize("who", ["annotator_1", "researcher", "outsider"])
def test_only_leads_see_pairs(project, request, who):
    pair = make_pair(project)
    client = _client(request.getfixturevalue(who))
    assert client.get("/api/v1/projects/cars/pairs/").status_code in (403, 404)
    assert client.get(f"/api/v1/pairs/{pair.pk}/").status_code == 404


def test_bulk_import_runs_as_a_job(project, lead, django_capture_on_commit_callbacks):
    a, b = edited_pair()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.png", a)
        zf.writestr("b.png", b)
    rows = [
        {"id": "z1", "image_a": "a.png", "image_b": "b.png"},
        {"id": "z2", "image_a": "a.png", "image_b": "missing.png"},
    ]
    manifest = "\n".join(json.dumps(r) for r in rows).encode()

    with django_capture_on_commit_callbacks(execute=True):
        response = _client(lead).post(
            "/api/v1/projects/cars/imports/",
            {
                "manifest": SimpleUploadedFile("m.jsonl", manifest),
                "images": SimpleUploadedFile("images.zip", archive.getvalue()),
            },
            format="multipart",
        )

    assert response.status_code == 202
    job_id = response.json()["job"]["id"]
    job = _client(lead).get(f"/api/v1/jobs/{job_id}/").json()
    assert job["status"] == JobStatus.SUCCEEDED and job["result"]["imported"] == 1
    assert job["errors"][0]["id"] == "z2" and "not found" in job["errors"][0]["message"]
    assert list(Pair.objects.values_list("external_id", flat=True)) == ["z1"]


def test_jobs_are_hidden_from_other_projects(project, lead, outsider):
    job = Job.objects.create(kind="import", project=project, created_by=lead)
    assert _client(outsider).get(f"/api/v1/jobs/{job.pk}/").status_code == 404
