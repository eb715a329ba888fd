"""Periodic repairs of the annotator's own: overdue leases, and the files an import leaves.

(The job sweeps, stale and unstarted and lost, are in jobs/sweeps.py.)
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.files.storage import default_storage
from django.utils import timezone

from annotator.leasing import assignments_expire
from jobs.models import Job, JobKind, JobStatus

log = logging.getLogger(__name__)


def leases_expire(*, now: datetime | None = None) -> int:
    """Return every overdue lease of every project to the pool (leasing also does it lazily,
    but only when someone asks for work in the same project)."""
    total = 0
    while True:
        expired = assignments_expire(now=now)  # at most 1000 at a time
        total += expired
        if expired < 1000:
            return total


# The stored uploads each kind of job reads (its params' keys): read once, then deleted.
JOB_FILES = {
    JobKind.IMPORT: ("manifest", "images", "config", "mapping_file"),
    JobKind.SYNTHESIZE: ("images",),
}
STAGED_PREFIX = "label-studio-"  # imports/<project>/label-studio-<token>/: a staged preview


def job_files_delete(job: Job) -> None:
    """Delete the files a job was uploaded with (an import's manifest, zip, config and mapping;
    a synthesis's zip of photos): they are read once, and a 20 GB zip kept for every job fills
    the disk. Safe to call twice, and for any job."""
    for key in JOB_FILES.get(JobKind(job.kind), ()):
        name = job.params.get(key)
        if not name:
            continue
        try:
            default_storage.delete(name)
        except Exception:  # the job's outcome stands either way; the file is only space
            log.warning("could not delete %s of job %s", name, job.pk, exc_info=True)


def staged_uploads_delete(*, now: datetime | None = None) -> int:
    """Delete the Label Studio uploads staged for a preview and never imported (or whose
    import never started), DIFFMARK_STAGED_UPLOAD_HOURS after their last change; the number of
    files deleted. An import's own folder (imports/<project>/<job>/) is its job's to delete."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.DIFFMARK_STAGED_UPLOAD_HOURS)
    deleted = 0
    for project in _listdir("imports")[0]:
        for folder in _listdir(f"imports/{project}")[0]:
            if not folder.startswith(STAGED_PREFIX):
                continue
            prefix = f"imports/{project}/{folder}"
            names = [f"{prefix}/{name}" for name in _listdir(prefix)[1]]
            if not names or any(default_storage.get_modified_time(n) > cutoff for n in names):
                continue  # still in use: a preview being edited, an import about to start
            if _queued_import_reads(prefix):
                continue
            for name in names:
                default_storage.delete(name)
                deleted += 1
    return deleted


def _listdir(prefix: str) -> tuple[list[str], list[str]]:
    try:
        return default_storage.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return [], []


def _queued_import_reads(prefix: str) -> bool:
    """Whether a queued or running import job reads files under ``prefix``."""
    return (
        Job.objects.filter(kind=JobKind.IMPORT, status__in=[JobStatus.QUEUED, JobStatus.RUNNING])
        .filter(params__manifest__startswith=f"{prefix}/")
        .exists()
    )
