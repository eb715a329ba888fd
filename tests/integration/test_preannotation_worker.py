"""A pre-annotation job end to end: REST → Redis → a Celery worker running pixeldiff."""

import time

import pytest
from rest_framework.test import APIClient

from annotator.models import PairStatus, Prediction
from annotator.services import PairInput, pair_create
from jobs.models import Job, JobStatus
from tests.images import edited_pair

pytestmark = [
    pytest.mark.integration,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


def test_a_worker_runs_a_pixeldiff_job_and_the_predictions_land(project, lead, celery_worker):
    pairs = [
        pair_create(project=project, pair_input=PairInput(*edited_pair(o, size=(160, 120))))
        for o in (0, 30)
    ]
    client = APIClient()
    client.force_authenticate(lead)

    response = client.post(
        "/api/v1/projects/cars/preannotate/", {"backend": "pixeldiff"}, format="json"
    )
    job_id = response.json()["job"]["id"]
    deadline = time.monotonic() + 90
    while Job.objects.get(pk=job_id).status in (JobStatus.QUEUED, JobStatus.RUNNING):
        assert time.monotonic() < deadline, "the worker did not finish the job within 90 s"
        time.sleep(0.3)

    job = Job.objects.get(pk=job_id)
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert client.get(f"/api/v1/jobs/{job_id}/").json()["percent"] == 100
    for pair in pairs:
        prediction = Prediction.objects.get(pair=pair, model_name="pixeldiff")
        assert prediction.error == "" and prediction.changes  # the recoloured square was seen
        pair.refresh_from_db()
        assert pair.status == PairStatus.PRE_ANNOTATED
