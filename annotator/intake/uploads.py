"""Accepting an import from the browser or the API: store the files, queue the job."""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import models, transaction

from annotator.tasks import import_pairs_job
from config.enqueue import enqueue_on_commit
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind
from projects.models import Project

MAX_MANIFEST_BYTES = 64 * 1024 * 1024


class ImportFormat(models.TextChoices):
    MANIFEST = "manifest", "Diffmark manifest (JSONL or CSV)"
    LABEL_STUDIO = "label-studio", "Label Studio JSON export"


MAX_ZIP_BYTES = 20 * 1024**3


def import_queue(
    *,
    project: Project,
    manifest: UploadedFile,
    images: UploadedFile,
    user,
    source_format: str = ImportFormat.MANIFEST,
) -> Job:
    """Store the manifest (or a Label Studio export) and the zip of images and queue the
    import; ValueError for bad input."""
    # An upload always has a name and a size; the stubs allow None for files in general.
    if (manifest.size or 0) > MAX_MANIFEST_BYTES:
        raise ValueError(f"the manifest is over {MAX_MANIFEST_BYTES // 1024**2} MB")
    if source_format == ImportFormat.LABEL_STUDIO:
        if not (manifest.name or "").lower().endswith(".json"):
            raise ValueError("a Label Studio export is a .json file (Export → JSON)")
    elif not (manifest.name or "").lower().endswith((".jsonl", ".ndjson", ".csv", ".json")):
        raise ValueError("the manifest must be a .jsonl or .csv file")
    if (images.size or 0) > MAX_ZIP_BYTES:
        raise ValueError("the zip of images is over 20 GB")
    if not (images.name or "").lower().endswith(".zip"):
        raise ValueError("the images must come as a .zip file")
    with transaction.atomic():
        job = job_create(kind=JobKind.IMPORT, project=project, user=user)
        folder = f"imports/{project.slug}/{job.pk}"
        suffix = ".csv" if (manifest.name or "").lower().endswith(".csv") else ".jsonl"
        if source_format == ImportFormat.LABEL_STUDIO:
            suffix = ".json"
        job.params = {
            "format": str(ImportFormat(source_format)),
            "manifest": default_storage.save(f"{folder}/manifest{suffix}", manifest),
            "images": default_storage.save(f"{folder}/images.zip", images),
        }
        job.save(update_fields=["params"])
        enqueue_on_commit(import_pairs_job, job.pk)
    return job
