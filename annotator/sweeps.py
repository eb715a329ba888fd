"""Periodic repairs of the annotator's own: overdue leases, and the files an import leaves.

(The job sweeps, stale and unstarted and lost, are in jobs/sweeps.py.)
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.core.files.storage import default_storage

from annotator.leasing import assignments_expire
from jobs.models import Job, JobKind

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


def import_files_delete(job: Job) -> None:
    """Delete the files an import was uploaded with (manifest and zip): they are read once, and
    a 20 GB zip kept for every import fills the disk. Safe to call twice, and for any job."""
    if job.kind != JobKind.IMPORT:
        return
    for key in ("manifest", "images"):
        name = job.params.get(key)
        if not name:
            continue
        try:
            default_storage.delete(name)
        except Exception:  # the job's outcome stands either way; the file is only space
            log.warning("could not delete %s of import job %s", name, job.pk, exc_info=True)
