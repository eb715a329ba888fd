"""Storage hygiene (issue 24 item 10): media files are not world-readable, and what a job no
longer needs is deleted: a synthesis zip once its job ended, a Label Studio import's staged
files once imported, and staged previews nobody imported by the sweep."""

from __future__ import annotations

import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.test import APIClient

from annotator.sweeps import staged_uploads_delete
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from jobs.sweeps import jobs_fail_unstarted
from pairdiff.release.splits import SplitPlan
from releases.building import release_create
from tests.factories import answer, make_accepted, zip_of
from tests.images import edited_pair

MINCU = Path(__file__).resolve().parents[1] / "fixtures" / "labelstudio" / "mincu"


def _modes(root: Path) -> dict[str, int]:
    return {
        str(path.relative_to(root)): stat.S_IMODE(path.stat().st_mode)
        for path in [root, *root.rglob("*")]
    }


def test_no_media_file_or_folder_is_world_readable(
    project, annotator_1, annotator_2, lead, settings, client, django_capture_on_commit_callbacks
):
    pairs = make_accepted(project, [annotator_1, annotator_2], [answer() for _ in range(3)])
    with django_capture_on_commit_callbacks(execute=True):
        release_create(project=project, name="v1", plan=SplitPlan(seed=1), user=lead)
    client.force_login(lead)
    assert client.get(f"/pairs/{pairs[0].pk}/thumb/a/").status_code == 200

    modes = _modes(Path(settings.MEDIA_ROOT))

    assert any(name.startswith("releases/") for name in modes)
    assert any(name.startswith("thumbs/") for name in modes)
    world = {name: oct(mode) for name, mode in modes.items() if mode & 0o007}
    assert world == {}
    files = [Path(settings.MEDIA_ROOT) / name for name in modes]
    assert {modes[str(p.relative_to(settings.MEDIA_ROOT))] for p in files if p.is_file()} == {0o640}


def _files_under(prefix: str) -> list[str]:
    found: list[str] = []

    def walk(folder: str) -> None:
        try:
            folders, files = default_storage.listdir(folder)
        except FileNotFoundError:
            return
        found.extend(f"{folder}/{name}" for name in files)
        for sub in folders:
            walk(f"{folder}/{sub}")

    walk(prefix)
    return found


@pytest.fixture
def api(lead):
    client = APIClient()
    client.force_authenticate(lead)
    return client


def test_a_synthesis_zip_is_deleted_once_its_job_ended(
    api, project, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/v1/projects/{project.slug}/synthesize/",
            {
                "images": SimpleUploadedFile("p.zip", zip_of({"a.png": edited_pair(3)[0]})),
                "per_image": 1,
                "categories": "lighting",
            },
            format="multipart",
        )

    assert response.status_code == 202
    assert Job.objects.get().status == JobStatus.SUCCEEDED
    assert _files_under(f"synth/{project.slug}") == []


def test_a_synthesis_job_failed_by_the_sweep_leaves_no_zip(project, settings):
    from annotator.intake.synthesis import SynthesisOptions, synthesis_queue

    settings.DIFFMARK_STALE_JOB_MINUTES = 0
    upload = SimpleUploadedFile("p.zip", zip_of({"a.png": edited_pair(3)[0]}))
    job = synthesis_queue(project=project, images=upload, options=SynthesisOptions())
    assert _files_under(f"synth/{project.slug}")  # queued, never run (its process died)

    assert jobs_fail_unstarted(now=timezone.now() + timedelta(seconds=1)) == [job.pk]

    assert _files_under(f"synth/{project.slug}") == []


def _ls_upload(**more) -> dict:
    a, b = edited_pair(5)
    export = b'[{"id": 1, "data": {"image_a": "a.png", "image_b": "b.png"}}]'
    return {
        "format": "label-studio",
        "manifest": SimpleUploadedFile("export.json", export),
        "images": SimpleUploadedFile("images.zip", zip_of({"a.png": a, "b.png": b})),
        "config": SimpleUploadedFile("config.xml", (MINCU / "label_config.xml").read_bytes()),
        "mapping": SimpleUploadedFile("mapping.yaml", (MINCU / "mapping.yaml").read_bytes()),
        **more,
    }


def test_a_labelstudio_import_leaves_none_of_its_staged_files(
    api, project, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/v1/projects/{project.slug}/imports/", _ls_upload(), format="multipart"
        )

    assert response.status_code == 202, response.content[:300]
    assert Job.objects.get().status == JobStatus.SUCCEEDED
    assert _files_under(f"imports/{project.slug}") == []


def test_the_sweep_deletes_staged_previews_nobody_imported(project, settings):
    from annotator.intake.labelstudio.upload import labelstudio_stage

    settings.DIFFMARK_STAGED_UPLOAD_HOURS = 24
    upload = _ls_upload()
    old = labelstudio_stage(project=project, export=upload["manifest"], images=upload["images"])
    recent_upload = _ls_upload()
    recent = labelstudio_stage(
        project=project, export=recent_upload["manifest"], images=recent_upload["images"]
    )
    day_ago = (timezone.now() - timedelta(hours=25)).timestamp()
    for name in _files_under(f"imports/{project.slug}/label-studio-{old}"):
        os.utime(default_storage.path(name), (day_ago, day_ago))
    job = job_create(kind=JobKind.IMPORT, project=project)  # a queued import's files stay
    default_storage.save(f"imports/{project.slug}/{job.pk}/images.zip", ContentFile(b"zip"))

    deleted = staged_uploads_delete()

    assert deleted == 2
    assert _files_under(f"imports/{project.slug}/label-studio-{old}") == []
    assert len(_files_under(f"imports/{project.slug}/label-studio-{recent}")) == 2
    assert _files_under(f"imports/{project.slug}/{job.pk}")
