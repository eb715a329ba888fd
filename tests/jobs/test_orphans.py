"""A job never stays "running" after the process that ran it died (issue 24 item 5): the claim
records the process (host and pid), and the sweep fails a job whose process on this host is
gone at once, without waiting DIFFMARK_STALE_JOB_MINUTES for its heartbeat to age."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from jobs.lifecycle import job_claim, job_create
from jobs.models import Job, JobKind, JobStatus
from jobs.sweeps import jobs_fail_stale

pytestmark = pytest.mark.django_db


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_claim_records_the_process_that_runs_the_job(project):
    job = job_create(kind=JobKind.SYNTHESIZE, project=project)

    assert job_claim(job)

    job.refresh_from_db()
    assert job.runner == f"{socket.gethostname()}:{os.getpid()}"


def test_a_running_job_whose_process_died_is_failed_by_the_next_sweep(project):
    dead = job_create(kind=JobKind.SYNTHESIZE, project=project)
    alive = job_create(kind=JobKind.IMPORT, project=project)
    elsewhere = job_create(kind=JobKind.IMPORT, project=project)
    for job in (dead, alive, elsewhere):
        job_claim(job)
    Job.objects.filter(pk=dead.pk).update(runner=f"{socket.gethostname()}:{_dead_pid()}")
    Job.objects.filter(pk=elsewhere.pk).update(runner="another-host:1")

    failed = jobs_fail_stale()  # heartbeats are fresh: only a dead process fails a job now

    assert failed == [dead.pk]
    dead.refresh_from_db()
    assert dead.status == JobStatus.FAILED and dead.finished_at is not None
    assert "its process ended" in dead.message
    assert Job.objects.get(pk=alive.pk).status == JobStatus.RUNNING
    assert Job.objects.get(pk=elsewhere.pk).status == JobStatus.RUNNING


def test_a_release_build_whose_process_died_is_failed_at_once(
    project, annotator_1, annotator_2, lead
):
    from pairdiff.release.splits import SplitPlan
    from releases.building import release_create
    from releases.failing import releases_fail_stale
    from releases.models import ReleaseStatus
    from tests.factories import answer, make_accepted

    make_accepted(project, [annotator_1, annotator_2], [answer() for _ in range(3)])
    release = release_create(project=project, name="v1", plan=SplitPlan(seed=1), user=lead)
    job = release.job
    assert job is not None and job_claim(job)  # the build started, then its worker was killed
    Job.objects.filter(pk=job.pk).update(runner=f"{socket.gethostname()}:{_dead_pid()}")

    assert releases_fail_stale() == [release.pk]

    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    assert Job.objects.get(pk=job.pk).status == JobStatus.FAILED
    assert "its process ended" in Job.objects.get(pk=job.pk).message
