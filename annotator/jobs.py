"""Job bookkeeping shared by every kind of background work."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from annotator.models import Job, JobKind, JobStatus, Project


def job_create(
    *, kind: JobKind, project: Project | None, user=None, params: dict | None = None
) -> Job:
    return Job.objects.create(
        kind=kind, project=project, created_by=user, params=params or {}, status=JobStatus.QUEUED
    )


def job_start(job: Job, *, total: int) -> None:
    """Mark the job running; a job cancelled while it waited stays cancelled."""
    job.total = total
    job.done = 0
    job.started_at = timezone.now()
    Job.objects.filter(pk=job.pk).update(total=total, done=0, started_at=job.started_at)
    Job.objects.filter(pk=job.pk, status=JobStatus.QUEUED).update(status=JobStatus.RUNNING)
    job.status = Job.objects.values_list("status", flat=True).get(pk=job.pk)


def job_progress(job: Job, *, done: int) -> None:
    """Record progress in its own short write, so pollers see it while the work goes on."""
    job.done = min(done, job.total) if job.total else done
    Job.objects.filter(pk=job.pk).update(done=job.done)


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
