"""Synthesis as a command, a job from the Upload page, and over REST."""

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from PIL import Image
from rest_framework.test import APIClient
from skimage import data

from annotator.models import GoldAnswer, Pair
from jobs.models import Job, JobKind, JobStatus
from pairdiff.synth.custom import CATEGORIES
from projects.creating import project_create
from projects.models import Preset
from tests.conftest import PASSWORD


def _encode(pixels: np.ndarray, fmt: str) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format=fmt)
    return out.getvalue()


PHOTOS = {
    "motorcycle.jpg": lambda: _encode(data.stereo_motorcycle()[0][::2, ::2], "JPEG"),
    "clock.png": lambda: _encode(data.clock()[::2, ::2], "PNG"),
    "retina.jpg": lambda: _encode(data.retina()[::6, ::6], "JPEG"),
}


@pytest.fixture
def photos(tmp_path) -> Path:
    folder = tmp_path / "photos"
    folder.mkdir()
    for name, make in PHOTOS.items():
        (folder / name).write_bytes(make())
    return folder


@pytest.fixture
def vdiff(db):
    return project_create(slug="bench", name="Bench", preset=Preset.VDIFF)


def _zip(folder: Path, extra: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for path in sorted(folder.iterdir()):
            z.write(path, path.name)
        for name, content in (extra or {}).items():
            z.writestr(name, content)
    return out.getvalue()


def _run(*args) -> int | str | None:
    try:
        call_command("synthesize", *args)
    except SystemExit as exc:
        return exc.code
    return 0


def _pixels(field) -> np.ndarray:
    with field.open("rb") as f:
        return np.asarray(Image.open(f).convert("RGB"))


def test_one_command_makes_pairs_in_all_ten_categories_with_exact_answers(vdiff, photos):
    code = _run("--project", "bench", "--images", str(photos), "--per-image", "4", "--seed", "1")

    pairs = list(Pair.objects.filter(project=vdiff).select_related("gold"))
    assert code == 0
    assert len(pairs) == 12
    assert {p.gold.changes[0]["category"] for p in pairs} == set(CATEGORIES)
    for pair in pairs:
        a, b = _pixels(pair.image_a), _pixels(pair.image_b)
        inside = np.zeros(a.shape[:2], bool)
        for change in pair.gold.changes:
            for x1, y1, x2, y2 in change["boxes_a"] + change["boxes_b"]:
                inside[y1:y2, x1:x2] = True
            assert change["description"]
            assert bool(change["boxes_a"]) == bool(change["entity_a"])
        changed = np.any(a != b, axis=-1)
        assert changed.any() and not (changed & ~inside).any(), pair.external_id
        assert not pair.is_gold  # a benchmark, not honeypots, without --gold
        assert pair.format_a == pair.format_b == "PNG"
    job = Job.objects.get(kind=JobKind.SYNTHESIZE)
    assert (job.status, job.done, job.total, job.result["created"]) == (
        JobStatus.SUCCEEDED,
        12,
        12,
        12,
    )


def test_running_again_stores_no_duplicate(vdiff, photos):
    _run("--project", "bench", "--images", str(photos), "--per-image", "2")
    again = _run("--project", "bench", "--images", str(photos), "--per-image", "2")

    assert again == 0
    assert Pair.objects.filter(project=vdiff).count() == 6
    assert Job.objects.filter(kind=JobKind.SYNTHESIZE).first().result["duplicates"] == 6


def test_gold_pairs_and_a_mincu_project_get_its_own_categories(project, photos):
    categories = ["position", "ocr_text", "lighting"]
    _run("--project", project.slug, "--images", str(photos), "--per-image", "1", "--gold")
    _run(
        "--project",
        project.slug,
        "--images",
        str(photos),
        "--per-image",
        "1",
        "--seed",
        "5",
        "--categories",
        *categories,
    )

    gold = GoldAnswer.objects.filter(pair__project=project)
    assert gold.count() == 6
    # annotators see the id: a honeypot must not announce itself
    assert not any("synth" in p.external_id for p in Pair.objects.filter(project=project))
    assert Pair.objects.filter(project=project, is_gold=True).count() == 3
    mincu = {"attribute", "object", "counting", "relation"}
    assert {g.changes[0]["category"] for g in gold} <= mincu
    last = Job.objects.filter(kind=JobKind.SYNTHESIZE).first()
    assert last.params["categories"] == categories


def test_a_file_that_is_not_an_image_is_reported_and_the_rest_made(vdiff, photos, capsys):
    (photos / "notes.jpg").write_bytes(b"not really a jpeg")

    code = _run("--project", "bench", "--images", str(photos), "--per-image", "1")

    assert code == 1
    assert Pair.objects.filter(project=vdiff).count() == 3
    assert "skipped notes.jpg" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--project", "nope", "--images", "/tmp"], "no project"),
        (["--project", "bench", "--images", "/nonexistent"], "not found"),
        (["--project", "bench", "--images", "/tmp", "--categories", "teleport"], "categories"),
        (["--project", "bench", "--images", "/tmp", "--per-image", "0"], "per_image"),
    ],
)
def test_unusable_input_exits_2_with_the_reason(vdiff, args, message, capsys):
    assert _run(*args) == 2
    assert message in capsys.readouterr().err
    assert not Pair.objects.exists()


def test_the_upload_page_starts_a_job_and_shows_its_progress(
    client, vdiff, photos, django_capture_on_commit_callbacks
):
    from tests.conftest import member

    member(vdiff, "boss", "lead")
    client.login(username="boss", password=PASSWORD)
    upload = SimpleUploadedFile("mine.zip", _zip(photos), content_type="application/zip")

    page = client.get(reverse("console:upload", args=["bench"]))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("console:upload_synthesize", args=["bench"]),
            {"images": upload, "per_image": 1, "categories": ["texture", "motion"], "seed": 2},
        )

    assert b"Start synthesis" in page.content
    job = Job.objects.get(kind=JobKind.SYNTHESIZE)
    assert response.status_code == 302 and response.url == reverse("console:job", args=[job.pk])
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.result["created"] == 3
    assert b"Synthesis job" in client.get(response.url).content


def test_the_upload_page_refuses_a_file_that_is_not_a_zip(client, vdiff):
    from tests.conftest import member

    member(vdiff, "boss", "lead")
    client.login(username="boss", password=PASSWORD)
    upload = SimpleUploadedFile("photo.jpg", b"x", content_type="image/jpeg")

    response = client.post(
        reverse("console:upload_synthesize", args=["bench"]),
        {"images": upload, "per_image": 1, "categories": ["texture"], "seed": 0},
    )

    assert response.status_code == 400
    assert b"Send the photos as one .zip file." in response.content
    assert not Job.objects.exists()


def test_rest_synthesize_answers_202_with_the_job(
    vdiff, photos, django_capture_on_commit_callbacks
):
    from tests.conftest import member

    api = APIClient()
    api.force_authenticate(member(vdiff, "boss", "lead"))
    upload = SimpleUploadedFile("mine.zip", _zip(photos), content_type="application/zip")

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/projects/bench/synthesize/",
            {"images": upload, "per_image": 1, "categories": ["lighting"], "gold": "true"},
            format="multipart",
        )

    assert response.status_code == 202
    assert response.json()["job"]["status"] == "queued"
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.kind == JobKind.SYNTHESIZE and job.status == JobStatus.SUCCEEDED
    assert Pair.objects.filter(project=vdiff, is_gold=True).count() == 3


def test_rest_synthesize_names_the_bad_field(vdiff, photos):
    from tests.conftest import member

    api = APIClient()
    api.force_authenticate(member(vdiff, "boss", "lead"))
    upload = SimpleUploadedFile("mine.zip", _zip(photos), content_type="application/zip")

    response = api.post(
        "/api/v1/projects/bench/synthesize/",
        {"images": upload, "per_image": 500},
        format="multipart",
    )
    not_zip = api.post(
        "/api/v1/projects/bench/synthesize/",
        {"images": SimpleUploadedFile("a.jpg", b"x")},
        format="multipart",
    )

    assert response.status_code == 400 and "per_image" in response.json()["error"]["fields"]
    assert not_zip.status_code == 400 and "images" in not_zip.json()["error"]["fields"]
    assert not Job.objects.exists()
