"""A build that failed or stopped: its folder cleared, release and job failed with the reason,
the pairs to fix named; the sweep that finds builds whose worker stopped."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.core.files.storage import Storage, default_storage
from django.db import transaction
from django.db.models import Q

from annotator.models import Pair
from jobs.lifecycle import job_finish
from jobs.models import Job, JobStatus
from jobs.sweeps import jobs_orphaned, jobs_stale, orphan_message
from releases.models import Release, ReleaseStatus
from releases.storage import folder_clear
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit

log = logging.getLogger("releases.building")


def build_owned(release: Release, job, *, lock: bool = False) -> bool:
    """Whether this build (of ``job``) is still the release's build in progress."""
    current = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING, job=job)
    return (current.select_for_update() if lock else current).exists()


def releases_fail_stale(
    *, now: datetime | None = None, storage: Storage | None = None
) -> list[int]:
    """Fail the builds whose worker stopped (its process on this host ended, or no heartbeat
    for DIFFMARK_STALE_JOB_MINUTES): the folder is cleared, release and job are failed with a
    message, and ``release_retry`` builds it again. A build that comes back to life afterwards
    finds it is no longer its release's build and publishes nothing."""
    storage = storage or default_storage
    message = (
        f"the build stopped: no progress for {settings.DIFFMARK_STALE_JOB_MINUTES} minutes "
        "(its worker was killed or lost its connection); nothing was published, build it again"
    )
    orphaned = {job.pk: job for job in jobs_orphaned(release=True)}
    failed = []
    stale = (
        Release.objects.filter(status=ReleaseStatus.BUILDING)
        .filter(Q(job__in=jobs_stale(now=now)) | Q(job__in=list(orphaned)))
        .select_related("project", "job")
        .order_by("pk")
    )
    for release in stale:
        job = release.job
        assert job is not None  # picked by its job
        said = message
        if job.pk in orphaned:
            said = orphan_message(job, "nothing was published, build it again")
        # Only if the build showed no sign of life since we looked.
        if not Job.objects.filter(
            pk=job.pk, status=JobStatus.RUNNING, heartbeat_at=job.heartbeat_at
        ).update(status=JobStatus.FAILED, message=said):
            continue
        release_fail(release, storage, said)
        failed.append(release.pk)
    return failed


def release_fail(
    release: Release, storage: Storage, message: str, *, pairs: Sequence[int] = ()
) -> None:
    """Fail the build; the pairs to fix (if any) become the job's errors, one row per pair,
    which the releases page links to their questions."""
    if not build_owned(release, release.job):
        log.warning("release %s is no longer this build's: left as it is", release.pk)
        return
    try:
        folder_clear(storage, release.prefix)
    except Exception:  # the release is failed either way; a retry clears the folder again
        log.exception("could not clear the folder of failed release %s", release.pk)
    with transaction.atomic():
        failed = Release.objects.filter(
            pk=release.pk, status=ReleaseStatus.BUILDING, job=release.job
        ).update(status=ReleaseStatus.FAILED, message=message)
        release.status, release.message = ReleaseStatus.FAILED, message
        if release.job:
            found = Pair.objects.filter(pk__in=pairs).in_bulk()
            errors = [
                {
                    "pair": pk,
                    "id": found[pk].name,
                    "message": "a text-only baseline answers its question: edit or verify it",
                }
                for pk in pairs
                if pk in found
            ]
            job_finish(release.job, status=JobStatus.FAILED, message=message, errors=errors)
        if failed:
            webhook_emit(release.project, EventKind.RELEASE_FAILED, ObjectKind.RELEASE, release)
