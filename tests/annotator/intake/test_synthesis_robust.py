"""Synthesis never fails whole on one photo and never runs inside the request (issue 24 item 5):
a photo that cannot take an edit skips that edit with a reason, the work runs as a job (after
the response without a broker), and a job whose work raised is failed, never left running."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import ClientHandler
from PIL import Image
from rest_framework.test import APIClient

from annotator.models import Pair
from jobs.models import Job, JobStatus
from pairdiff.synth.custom import CATEGORIES, photo_load, plan, synthesize
from projects.creating import project_create
from projects.models import Preset
from tests.conftest import member
from tests.factories import zip_of


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


FLAT = _png(np.full((240, 320, 3), (120, 30, 200), dtype=np.uint8))


def test_a_flat_photo_takes_or_skips_every_edit_with_a_reason():
    photo = photo_load(FLAT, "flat.png")

    for slot in plan(1, 2 * len(CATEGORIES), list(CATEGORIES)):
        outcome = synthesize(photo, slot, seed=0)  # no IndexError from an empty edit
        assert outcome.pair is not None or outcome.problems, slot.category


@pytest.fixture
def vdiff(db):
    return project_create(slug="bench", name="Bench", preset=Preset.VDIFF)


def _start(client, files: dict[str, bytes], **fields):
    return client.post(
        "/api/v1/projects/bench/synthesize/",
        {
            "images": SimpleUploadedFile("photos.zip", zip_of(files), "application/zip"),
            "per_image": 10,
            **fields,
        },
        format="multipart",
    )


def test_a_flat_photo_ends_its_job_with_reasons(vdiff, django_capture_on_commit_callbacks):
    client = APIClient()
    client.force_authenticate(member(vdiff, "boss", "lead"))

    with django_capture_on_commit_callbacks(execute=True):
        response = _start(client, {"flat.png": FLAT})

    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)  # finished either way
    assert job.done == job.total == 10
    assert job.result["skipped"] == len(job.errors) == 10 - job.result["created"]
    assert all(e["message"] for e in job.errors)


def test_a_job_whose_work_raises_is_failed_not_left_running(
    vdiff, monkeypatch, django_capture_on_commit_callbacks
):
    import annotator.intake.synthesis

    def broken(*args, **kwargs):
        raise MemoryError("out of memory in the middle of an edit")

    monkeypatch.setattr(annotator.intake.synthesis, "synthesize", broken)
    client = APIClient()
    client.force_authenticate(member(vdiff, "boss", "lead"))

    with pytest.raises(MemoryError), django_capture_on_commit_callbacks(execute=True):
        _start(client, {"flat.png": FLAT})

    job = Job.objects.get()
    assert job.status == JobStatus.FAILED
    assert "stopped" in job.message and "MemoryError" in job.message


class NotingHandler(ClientHandler):
    """Notes the job's state when the response was ready to be written."""

    status_when_answered: str | None = None

    def get_response(self, request):
        response = super().get_response(request)
        job = Job.objects.order_by("-pk").first()
        self.status_when_answered = job.status if job else None
        return response


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_synthesis_runs_after_the_response():
    from accounts.services import token_create

    project = project_create(slug="bench", name="Bench", preset=Preset.VDIFF)
    client = APIClient()
    token = token_create(user=member(project, "boss", "lead"), name="t")[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    client.handler = NotingHandler()

    response = _start(client, {"flat.png": FLAT}, per_image=2)

    assert response.status_code == 202
    assert client.handler.status_when_answered == JobStatus.QUEUED
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.status != JobStatus.RUNNING and job.finished_at is not None  # in close()
    assert Pair.objects.count() == job.result["created"]
