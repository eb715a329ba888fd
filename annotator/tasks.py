"""Celery tasks of the annotator side: ids in, one service call, safe to run twice."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from celery import shared_task
from django.core.files.storage import default_storage
from django.db import OperationalError

from annotator.assists import precompute_assists  # noqa: F401  (the worker registers it)
from annotator.intake.importing import ImportUnusable, pairs_import
from annotator.intake.labelstudio.importing import labelstudio_import
from annotator.intake.labelstudio.plan import LSInput
from annotator.intake.synthesis import SynthesisUnusable, synthesis_options, synthesis_run
from annotator.preannotation import preannotate_run
from annotator.priorities import queue_priorities_refresh_all
from annotator.sweeps import job_files_delete, leases_expire, staged_uploads_delete
from jobs.lifecycle import job_claim, job_fail_if_running
from jobs.models import Job, JobKind, JobStatus
from jobs.registry import task_register
from jobs.sweeps import STALE_ADVICE, jobs_fail_stale, jobs_resend_queued
from jobs.tempdirs import job_tempdir, local_copy, temp_folders_delete

log = logging.getLogger(__name__)


@shared_task(acks_late=True)
def import_pairs_job(job_id: int) -> dict | None:
    """Run a queued import job whose manifest (and zip) were stored under the job's folder."""
    job = Job.objects.select_related("project", "created_by").get(pk=job_id)
    if not job_claim(job):
        return job.result  # another delivery has it, or it ran (a redelivered or re-sent message)
    try:
        _import(job)
    except Exception:
        # The job says what happened (import_batches failed it); with no broker this runs in
        # the web request, which must still answer with the job rather than a 500.
        log.exception("import job %s stopped", job.pk)
        job_fail_if_running(job, "stopped: an unexpected error (logged); import the manifest again")
    finally:
        job_files_delete(job)  # the upload is not kept once it was read, whatever happened
    job.refresh_from_db()
    return job.result


def _import(job: Job) -> None:
    assert job.project is not None  # an import job always has its project
    manifest_name = job.params["manifest"]
    with default_storage.open(manifest_name, "rb") as handle:
        manifest = handle.read()
    with job_tempdir("import") as tmp:
        # open_source needs a local path, and the storage may be S3.
        images = local_copy(job.params["images"], tmp / "images.zip")
        # An unusable input fails the job with its reason; nothing to retry.
        with contextlib.suppress(ImportUnusable):
            if job.params.get("format") == "label-studio":
                labelstudio_import(
                    project=job.project,
                    given=LSInput(
                        export=manifest,
                        config=_stored(job.params.get("config")),
                        mapping=_stored(job.params.get("mapping_file")),
                    ),
                    images=images,
                    job=job,
                    actor=job.created_by,
                )
            else:
                pairs_import(
                    project=job.project,
                    manifest=manifest,
                    manifest_name=Path(manifest_name).name,
                    images=images,
                    job=job,
                    actor=job.created_by,
                )


def _stored(name: str | None) -> bytes | None:
    """A file stored with the job (a Label Studio config or mapping), None when not given."""
    if not name:
        return None
    with default_storage.open(name, "rb") as handle:
        return handle.read()


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def preannotate_job(job_id: int) -> dict | None:
    """Run a queued pre-annotation job; a redelivered message finds it started and stops."""
    job = Job.objects.select_related("project").get(pk=job_id)
    if not job_claim(job):
        return job.result
    try:
        preannotate_run(job=job)
    except OperationalError:
        # The database went away: hand the job back so the automatic retry claims it again (a
        # rerun replaces this model's predictions). If even that fails, the stale sweep fails it.
        with contextlib.suppress(OperationalError):
            Job.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(status=JobStatus.QUEUED)
        raise
    job.refresh_from_db()
    return job.result


# The name it has always had (it lived in review.tasks for a while): queued messages and the
# route in config/settings.py find it by that name.
@shared_task(acks_late=True, name="annotator.tasks.synthesize_pairs_job")
def synthesize_pairs_job(job_id: int) -> dict | None:
    """Run a queued synthesis job over the zip of photos stored under the job's folder."""
    job = Job.objects.select_related("project", "created_by").get(pk=job_id)
    if not job_claim(job):
        return job.result
    options = synthesis_options(
        **{k: job.params[k] for k in ("per_image", "categories", "gold", "seed")}
    )
    try:
        with job_tempdir("synth") as tmp:
            images = local_copy(job.params["images"], tmp / "images.zip")
            # An unusable zip fails the job with its reason; nothing to retry.
            with contextlib.suppress(SynthesisUnusable):
                assert job.project is not None  # a synthesis job always has its project
                synthesis_run(
                    project=job.project,
                    images=images,
                    options=options,
                    job=job,
                    actor=job.created_by,
                )
    except BaseException as exc:
        # Whatever stopped it (a bug, memory, a time limit), the job ends failed with the
        # reason, never "running"; the error goes on to the worker's log.
        job_fail_if_running(
            job, f"stopped: {type(exc).__name__} (logged); {STALE_ADVICE[JobKind.SYNTHESIZE]}"
        )
        raise
    finally:
        job_files_delete(job)  # the photos are not kept once the job ended, whatever happened
    job.refresh_from_db()
    return job.result


@shared_task
def refresh_queue_priorities() -> int:
    """Beat: re-rank unstarted pairs of random and prioritised projects (accepted categories
    drift as work is accepted)."""
    return queue_priorities_refresh_all()


@shared_task
def expire_leases() -> int:
    """Beat: return overdue leases of every project to the pool."""
    return leases_expire()


@shared_task
def resend_queued_jobs() -> list[int]:
    """Beat: send again the jobs whose message never reached a worker."""
    return jobs_resend_queued()


@shared_task
def sweep_files() -> dict[str, int]:
    """Beat: delete staged uploads nobody imported, and the temporary folders of this host's
    ended processes (every worker host's /tmp gets one now and then: beat's task runs on any)."""
    return {"staged": staged_uploads_delete(), "temp_folders": temp_folders_delete()}


@shared_task
def fail_stale_jobs() -> list[int]:
    """Beat: fail the running jobs whose worker stopped (releases: releases.tasks)."""
    return jobs_fail_stale()


task_register(kind=JobKind.IMPORT, task=import_pairs_job, cleanup=job_files_delete)
task_register(kind=JobKind.PREANNOTATE, task=preannotate_job)
task_register(kind=JobKind.SYNTHESIZE, task=synthesize_pairs_job, cleanup=job_files_delete)
