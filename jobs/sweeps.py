"""Periodic repairs of jobs, run by Celery beat: work that a dead broker or a killed worker left
behind (stale, unstarted and lost jobs; the annotator's own sweeps are in annotator/sweeps.py).

Each sweep is safe to run concurrently with the work it repairs and with itself: every write is
conditional on the state the sweep saw, and every task it sends claims its job before working.
"""

from __future__ import annotations

import logging
import socket
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from config.enqueue import enqueue
from jobs.lifecycle import job_ended_emit
from jobs.models import Job, JobKind, JobStatus
from jobs.processes import pid_alive
from jobs.registry import job_cleanup, job_task

log = logging.getLogger(__name__)

BATCH = 500  # jobs looked at per sweep; the next sweep takes the rest

STALE_ADVICE: dict[str, str] = {
    JobKind.IMPORT: "the pairs imported so far are kept; import the manifest again to add the "
    "rest (rows already in are reported as duplicates)",
    JobKind.PREANNOTATE: "the predictions made so far are kept; start the pre-annotation again "
    "(it replaces this model's predictions)",
    JobKind.RECOMPUTE: "start the recompute again",
    JobKind.EVALUATE: "nothing was scored; send the predictions again",
    JobKind.SYNTHESIZE: "the pairs made so far are kept; start the synthesis again with the "
    "same seed (pairs already made are reported as duplicates)",
}


def jobs_stale(*, now: datetime | None = None) -> QuerySet[Job]:
    """Running jobs without a heartbeat (start or progress) for DIFFMARK_STALE_JOB_MINUTES."""
    cutoff = (now or timezone.now()) - timedelta(minutes=settings.DIFFMARK_STALE_JOB_MINUTES)
    return (
        Job.objects.filter(status=JobStatus.RUNNING)
        .alias(seen=Coalesce("heartbeat_at", "started_at", "created_at"))
        .filter(seen__lt=cutoff)
    )


def process_gone(runner: str) -> bool:
    """Whether the process a job's ``runner`` ("host:pid") names has ended; False when it runs
    on another host or says nothing (only its heartbeat tells then)."""
    host, _, pid = runner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return not pid_alive(int(pid))


def jobs_orphaned(*, release: bool = False) -> list[Job]:
    """The running jobs whose process on this host has ended (a kill -9, a web worker killed
    by gunicorn's timeout while it ran a job after the response): release builds with
    ``release``, the other kinds without."""
    running = Job.objects.filter(status=JobStatus.RUNNING).exclude(runner="")
    running = (
        running.filter(kind=JobKind.RELEASE) if release else running.exclude(kind=JobKind.RELEASE)
    )
    return [job for job in running.order_by("pk")[:BATCH] if process_gone(job.runner)]


def orphan_message(job: Job, advice: str) -> str:
    return (
        f"stopped: its process ended (killed, or it crashed) after {job.done} of {job.total}; "
        f"{advice}"
    )


def jobs_fail_orphaned(*, now: datetime | None = None) -> list[int]:
    """Fail at once the running jobs (release builds aside) whose process on this host has
    ended, and tidy their files."""
    now = now or timezone.now()
    failed = []
    for job in jobs_orphaned():
        message = orphan_message(job, STALE_ADVICE[job.kind])
        if Job.objects.filter(pk=job.pk, status=JobStatus.RUNNING, runner=job.runner).update(
            status=JobStatus.FAILED, message=message, finished_at=now
        ):
            log.warning("job %s failed, its process %s ended", job.pk, job.runner)
            job_cleanup(job)
            failed.append(job.pk)
    return failed


def jobs_fail_stale(*, now: datetime | None = None) -> list[int]:
    """Fail the running jobs whose worker stopped (killed, or cut off from the database), with a
    message saying what is kept and what to do: at once when its process on this host is gone
    (``jobs_fail_orphaned``), else once its heartbeat is DIFFMARK_STALE_JOB_MINUTES old. Release
    jobs are left to ``releases.failing.releases_fail_stale``, which also fails the release."""
    now = now or timezone.now()
    minutes = settings.DIFFMARK_STALE_JOB_MINUTES
    failed = jobs_fail_orphaned(now=now)
    for job in jobs_stale(now=now).exclude(kind=JobKind.RELEASE).order_by("pk")[:BATCH]:
        message = (
            f"stopped: no progress for {minutes} minutes (its worker was killed or lost its "
            f"connection) after {job.done} of {job.total}; {STALE_ADVICE[job.kind]}"
        )
        # Only if it is still the job we saw: a heartbeat meanwhile means it is alive after all.
        if Job.objects.filter(
            pk=job.pk, status=JobStatus.RUNNING, heartbeat_at=job.heartbeat_at
        ).update(status=JobStatus.FAILED, message=message, finished_at=now):
            log.warning("job %s failed as stale: %s", job.pk, message)
            job_cleanup(job)  # e.g. an import's uploaded files
            job_ended_emit(job)
            failed.append(job.pk)
    return failed


def jobs_fail_unstarted(*, now: datetime | None = None) -> list[int]:
    """Without a broker: fail the jobs still queued DIFFMARK_STALE_JOB_MINUTES after they were
    made. Their work was to run in the request that made them, which died first; sending them
    again would run an import inside whatever request runs the sweep. Release builds are left
    to their page's "build again"."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.DIFFMARK_STALE_JOB_MINUTES)
    message = (
        "stopped: the process that was to run it ended before it started (no background "
        "worker is configured); start it again"
    )
    waiting = Job.objects.filter(status=JobStatus.QUEUED, created_at__lt=cutoff).exclude(
        kind=JobKind.RELEASE
    )
    failed = []
    for job in waiting.order_by("pk")[:BATCH]:
        if Job.objects.filter(pk=job.pk, status=JobStatus.QUEUED).update(
            status=JobStatus.FAILED, message=message, finished_at=now
        ):
            job_cleanup(job)  # e.g. an import's uploaded files
            job_ended_emit(job)
            failed.append(job.pk)
    return failed


def jobs_resend_queued(*, now: datetime | None = None) -> list[int]:
    """Send again the jobs still queued DIFFMARK_RESEND_AFTER_MINUTES after they were last sent
    (the broker was down when they were created, or lost the message). At most once per that
    period per job; a duplicate message is harmless, the task claims the job first."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.DIFFMARK_RESEND_AFTER_MINUTES)
    waiting = (
        Job.objects.filter(status=JobStatus.QUEUED)
        .alias(seen=Coalesce("heartbeat_at", "created_at"))
        .filter(seen__lt=cutoff)
        .order_by("pk")
    )
    sent = []
    for job in waiting[:BATCH]:
        found = job_task(job)
        if found is None:
            continue
        if not Job.objects.filter(
            pk=job.pk, status=JobStatus.QUEUED, heartbeat_at=job.heartbeat_at
        ).update(heartbeat_at=now):
            continue  # claimed (or re-sent by another sweep) meanwhile
        task, args = found
        if enqueue(task, *args):
            sent.append(job.pk)
    return sent
