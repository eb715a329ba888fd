"""A job's life, shared by every kind of background work: created, claimed, started,
progressing, finished (or failed, or cancelled)."""

from __future__ import annotations

import os
import socket
from typing import Any

from django.utils import timezone

from jobs.models import Job, JobKind, JobStatus
from projects.models import Project
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit


def job_create(
    *, kind: JobKind, project: Project | None, user=None, params: dict | None = None
) -> Job:
    return Job.objects.create(
        kind=kind, project=project, created_by=user, params=params or {}, status=JobStatus.QUEUED
    )


def job_claim(job: Job) -> bool:
    """Take a queued job for this worker (queued → running); False when another delivery of the
    same message got it first, or it was cancelled, failed or done meanwhile.

    Every task claims its job before any work, so a message sent twice (re-sent by the sweep,
    redelivered by the broker) runs once.
    """
    now = timezone.now()
    claimed = Job.objects.filter(pk=job.pk, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, started_at=now, heartbeat_at=now, runner=this_process()
    )
    if claimed:
        job.status, job.started_at, job.heartbeat_at = JobStatus.RUNNING, now, now
        job.runner = this_process()
    return bool(claimed)


def this_process() -> str:
    """ "host:pid" of this process, as a job's ``runner``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def job_start(job: Job, *, total: int) -> None:
    """Mark the job running; a job cancelled while it waited stays cancelled."""
    job.total = total
    job.done = 0
    job.started_at = job.heartbeat_at = timezone.now()
    Job.objects.filter(pk=job.pk).update(
        total=total, done=0, started_at=job.started_at, heartbeat_at=job.heartbeat_at
    )
    Job.objects.filter(pk=job.pk, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, runner=this_process()
    )
    job.status = Job.objects.values_list("status", flat=True).get(pk=job.pk)


def job_progress(job: Job, *, done: int) -> None:
    """Record progress in its own short write, so pollers see it while the work goes on; it is
    also the job's heartbeat (a running job without one for DIFFMARK_STALE_JOB_MINUTES fails)."""
    job.done = min(done, job.total) if job.total else done
    job.heartbeat_at = timezone.now()
    Job.objects.filter(pk=job.pk).update(done=job.done, heartbeat_at=job.heartbeat_at)


def job_finish(
    job: Job,
    *,
    status: JobStatus,
    result: dict[str, Any] | None = None,
    errors: list[dict[str, Any]] | None = None,
    message: str = "",
) -> None:
    job.status = status
    job.result = result or {}
    job.errors = errors or []
    job.message = message
    job.finished_at = timezone.now()
    if status == JobStatus.SUCCEEDED:
        job.done = job.total
    job.save(update_fields=["status", "result", "errors", "message", "finished_at", "done"])
    job_ended_emit(job)


def job_ended_emit(job: Job) -> None:
    """import.finished, for an import job that ended (succeeded, failed or cancelled)."""
    if job.kind == JobKind.IMPORT and job.project is not None:
        webhook_emit(job.project, EventKind.IMPORT_FINISHED, ObjectKind.JOB, job)


def job_fail_if_running(job: Job, message: str) -> bool:
    """Fail the job unless it already ended (its own code failed it with a better message)."""
    failed = Job.objects.filter(pk=job.pk, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED, message=message, finished_at=timezone.now()
    )
    if failed:
        job_ended_emit(job)
    return bool(failed)


def job_cancel(*, job: Job) -> bool:
    """Ask a queued or running job to stop; it stops between batches. False when it ended."""
    return bool(
        Job.objects.filter(pk=job.pk, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
            status=JobStatus.CANCELLED
        )
    )
