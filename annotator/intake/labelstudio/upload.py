"""A Label Studio import from the browser or the API: the files staged in storage, a preview of
what the import will do, then the job. The page previews first; the API previews on
``dry_run``."""

from __future__ import annotations

import shutil
import uuid
from typing import IO

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from annotator.intake.importing import ImportUnusable
from annotator.intake.labelstudio.plan import LSInput, LSPreview, labelstudio_preview
from annotator.intake.uploads import MAX_MANIFEST_BYTES, MAX_ZIP_BYTES
from annotator.services import image_limits
from annotator.tasks import import_pairs_job
from config.enqueue import enqueue_on_commit
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind
from jobs.tempdirs import job_tempdir
from pairdiff.labelstudio.config import MAX_CONFIG_BYTES
from pairdiff.labelstudio.mapping import MAX_MAPPING_BYTES
from pairdiff.sources import SourceError, open_source
from projects.models import Project

_NAMES = {
    "export": "export.json",
    "images": "images.zip",
    "config": "label_config.xml",
    "mapping": "mapping.txt",
}


def labelstudio_check_files(
    *,
    export: UploadedFile,
    images: UploadedFile,
    config: UploadedFile | None = None,
    mapping: UploadedFile | None = None,
) -> None:
    """ImportUnusable naming the first file that cannot be taken (type or size)."""
    # An upload always has a name and a size; the stubs allow None for files in general.
    if not (export.name or "").lower().endswith(".json"):
        raise ImportUnusable(
            "manifest: a Label Studio export is a .json file (Export → JSON)", field="manifest"
        )
    if (export.size or 0) > MAX_MANIFEST_BYTES:
        raise ImportUnusable(
            f"manifest: the export is over {MAX_MANIFEST_BYTES // 1024**2} MB", field="manifest"
        )
    if not (images.name or "").lower().endswith(".zip") or (images.size or 0) > MAX_ZIP_BYTES:
        raise ImportUnusable("images: a .zip file of at most 20 GB", field="images")
    if config is not None and (config.size or 0) > MAX_CONFIG_BYTES:
        raise ImportUnusable(
            f"config: the labelling config is over {MAX_CONFIG_BYTES // 1024} KB", field="config"
        )
    if mapping is not None and (mapping.size or 0) > MAX_MAPPING_BYTES:
        raise ImportUnusable(
            f"mapping: the mapping is over {MAX_MAPPING_BYTES // 1024} KB", field="mapping"
        )


def labelstudio_stage(
    *,
    project: Project,
    export: UploadedFile,
    images: UploadedFile,
    config: UploadedFile | None = None,
    mapping: bytes | None = None,
) -> str:
    """Store the files under a new staging folder of the project; returns its token."""
    labelstudio_check_files(export=export, images=images, config=config)
    token = uuid.uuid4().hex
    folder = _folder(project, token)
    default_storage.save(f"{folder}/{_NAMES['export']}", export)
    default_storage.save(f"{folder}/{_NAMES['images']}", images)
    if config is not None:
        default_storage.save(f"{folder}/{_NAMES['config']}", config)
    labelstudio_stage_mapping(project=project, token=token, mapping=mapping)
    return token


def labelstudio_stage_mapping(*, project: Project, token: str, mapping: bytes | None) -> None:
    """Replace the staged mapping (the lead edited it on the preview page)."""
    name = f"{_folder(project, token)}/{_NAMES['mapping']}"
    if default_storage.exists(name):
        default_storage.delete(name)
    if mapping:
        if len(mapping) > MAX_MAPPING_BYTES:
            raise ImportUnusable(
                f"mapping: the mapping is over {MAX_MAPPING_BYTES // 1024} KB", field="mapping"
            )
        default_storage.save(name, ContentFile(mapping))


def labelstudio_staged_mapping(*, project: Project, token: str) -> str:
    return (_read(project, token, "mapping") or b"").decode("utf-8", errors="replace")


def labelstudio_staged_preview(*, project: Project, token: str) -> LSPreview:
    """The dry run over the staged files; ImportUnusable (ValueError once the files are gone)."""
    given = _given(project, token)
    with default_storage.open(f"{_folder(project, token)}/{_NAMES['images']}", "rb") as zipped:
        return labelstudio_preview_zip(project=project, given=given, images=zipped)


def labelstudio_preview_zip(*, project: Project, given: LSInput, images: IO[bytes]) -> LSPreview:
    """The dry run over a zip given as a file object (open_source needs a local path)."""
    with job_tempdir("ls-preview") as tmp:
        path = tmp / "images.zip"
        with path.open("wb") as out:
            shutil.copyfileobj(images, out, 1 << 20)
        try:
            source = open_source(path, max_entry_bytes=image_limits().max_bytes)
        except SourceError as exc:
            raise ImportUnusable(f"images: {exc}", field="images") from exc
        with source:
            return labelstudio_preview(project=project, given=given, source=source)


def labelstudio_queue(*, project: Project, token: str, user) -> Job:
    """Queue the import of the staged files; ValueError when the staging folder is gone."""
    folder = _folder(project, token)
    if not default_storage.exists(f"{folder}/{_NAMES['export']}"):
        raise ValueError("the uploaded files are gone; upload them again")
    with transaction.atomic():
        job = job_create(kind=JobKind.IMPORT, project=project, user=user)
        job.params = {
            "format": "label-studio",
            "manifest": f"{folder}/{_NAMES['export']}",
            "images": f"{folder}/{_NAMES['images']}",
            "config": _stored_name(folder, "config"),
            "mapping_file": _stored_name(folder, "mapping"),
        }
        job.save(update_fields=["params"])
        enqueue_on_commit(import_pairs_job, job.pk)
    return job


def _folder(project: Project, token: str) -> str:
    if len(token) != 32 or not all(c in "0123456789abcdef" for c in token):
        raise ValueError("no such upload")
    return f"imports/{project.slug}/label-studio-{token}"


def _stored_name(folder: str, what: str) -> str:
    name = f"{folder}/{_NAMES[what]}"
    return name if default_storage.exists(name) else ""


def _read(project: Project, token: str, what: str) -> bytes | None:
    name = f"{_folder(project, token)}/{_NAMES[what]}"
    if not default_storage.exists(name):
        return None
    with default_storage.open(name, "rb") as handle:
        return handle.read()


def _given(project: Project, token: str) -> LSInput:
    export = _read(project, token, "export")
    if export is None:
        raise ValueError("the uploaded files are gone; upload them again")
    return LSInput(
        export=export,
        config=_read(project, token, "config"),
        mapping=_read(project, token, "mapping"),
    )
