"""Without a broker, work runs inside the request that started it; a request killed mid-way
(a gunicorn timeout, a restart) leaves a job running and its files behind. The sweeps still run:
`manage.py sweep`, and a request every DIFFMARK_SWEEP_SECONDS."""

import io
import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.utils import timezone

from jobs.lifecycle import job_claim, job_create
from jobs.models import Job, JobKind, JobStatus
from pairdiff.release.splits import SplitPlan
from releases.building import release_register
from releases.models import ReleaseStatus
from tests.factories import answer, make_accepted

LONG_AGO = timedelta(hours=2)


def _killed_import(project) -> Job:
    """An import whose request died mid-way: running, no heartbeat for two hours, its upload
    still in storage."""
    job = job_create(kind=JobKind.IMPORT, project=project)
    folder = f"imports/{project.slug}/{job.pk}"
    job.params = {
        "manifest": default_storage.save(f"{folder}/manifest.jsonl", io.BytesIO(b"{}")),
        "images": default_storage.save(f"{folder}/images.zip", io.BytesIO(b"PK")),
    }
    job.save(update_fields=["params"])
    job_claim(job)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - LONG_AGO)
    return job


def _unstarted_import(project) -> Job:
    job = job_create(kind=JobKind.IMPORT, project=project)
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - LONG_AGO)
    return job


def _killed_build(project, annotators):
    make_accepted(project, annotators, [answer()])
    release = release_register(project=project, name="v1", plan=SplitPlan())
    job_claim(release.job)
    default_storage.save(f"{release.prefix}/images/half.png", io.BytesIO(b"x"))
    Job.objects.filter(pk=release.job.pk).update(heartbeat_at=timezone.now() - LONG_AGO)
    return release


def _assert_swept(job, unstarted, release):
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "no progress for" in job.message
    assert not default_storage.exists(job.params["manifest"])
    assert not default_storage.exists(job.params["images"])
    unstarted.refresh_from_db()
    assert unstarted.status == JobStatus.FAILED and "ended before it started" in unstarted.message
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    assert not default_storage.exists(f"{release.prefix}/images/half.png")


@pytest.fixture
def left_behind(project, annotator_1, annotator_2):
    return (
        _killed_import(project),
        _unstarted_import(project),
        _killed_build(project, [annotator_1, annotator_2]),
    )


def test_the_sweep_command_fails_what_killed_requests_left_and_cleans_their_files(
    left_behind, capsys
):
    job, unstarted, release = left_behind

    call_command("sweep")

    _assert_swept(job, unstarted, release)
    printed = json.loads(capsys.readouterr().out)
    assert printed["jobs"] == [job.pk] and printed["unstarted"] == [unstarted.pk]
    assert printed["releases"] == [release.pk]


def test_without_a_broker_a_request_runs_the_sweep_at_most_once_a_period(
    left_behind, client, lead, settings, django_assert_max_num_queries
):
    settings.DIFFMARK_SWEEP_ON_REQUEST = True
    cache.clear()
    job, unstarted, release = left_behind
    client.force_login(lead)

    assert client.get("/").status_code == 200

    _assert_swept(job, unstarted, release)
    again = _killed_import(job.project)
    client.get("/")  # within the period: no sweep
    again.refresh_from_db()
    assert again.status == JobStatus.RUNNING
    cache.clear()  # the period ended
    client.get("/")
    again.refresh_from_db()
    assert again.status == JobStatus.FAILED


def test_with_a_broker_requests_leave_sweeping_to_beat(left_behind, client, lead, settings):
    settings.DIFFMARK_SWEEP_ON_REQUEST = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    cache.clear()
    job, _, _ = left_behind
    client.force_login(lead)

    client.get("/")

    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING


def test_a_live_in_request_import_is_not_swept(project, settings):
    """The heartbeat of a running import is its progress: a live one is never failed."""
    job = _killed_import(project)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())

    call_command("sweep", stdout=io.StringIO())

    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING
    assert default_storage.exists(job.params["images"])
