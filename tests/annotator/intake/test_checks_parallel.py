"""Big imports check their rows in worker processes: the outcome is the serial one, exactly."""

import os
from pathlib import Path

import pytest

from annotator.intake import checks as import_checks
from annotator.intake import importing
from annotator.intake.checks import RowChecker
from annotator.intake.importing import pairs_import
from annotator.models import Pair, PairEvent
from jobs.lifecycle import job_create
from jobs.models import JobKind, JobStatus
from pairdiff.images import ImageLimits
from pairdiff.manifest import ManifestRow
from projects.creating import project_create
from tests.annotator.intake.test_importing import _write_jsonl
from tests.images import edited_pair, photo_bytes


class CountingPool(import_checks.ProcessPoolExecutor):
    """Counts the rows handed to the workers (a task holds a worker's share of a batch)."""

    submitted = 0
    tasks = 0

    def submit(self, fn, rows, *args, **kwargs):
        CountingPool.submitted += len(rows)
        CountingPool.tasks += 1
        return super().submit(fn, rows, *args, **kwargs)


@pytest.fixture
def processes(monkeypatch):
    """Two worker processes for any import of 2 rows or more, in batches of 3 (so several
    batches are in flight), counted."""
    CountingPool.submitted = CountingPool.tasks = 0
    monkeypatch.setattr(import_checks, "ProcessPoolExecutor", CountingPool)
    monkeypatch.setattr(import_checks, "worker_count", lambda: 2)
    monkeypatch.setattr(import_checks, "PROCESS_MIN_ROWS", 2)
    monkeypatch.setattr(import_checks, "ROWS_PER_WORKER", 1)
    monkeypatch.setattr(importing, "BATCH_SIZE", 3)
    return CountingPool


@pytest.fixture
def folder(tmp_path, settings, db):
    """Good pairs, a bad row of each kind, a duplicate of an earlier row and of an existing pair."""
    settings.DIFFMARK_MAX_IMAGE_PIXELS = 10_000
    folder = tmp_path / "upload"
    folder.mkdir()
    for i in range(1, 8):
        a, b = edited_pair(5 * i)
        (folder / f"a{i}.png").write_bytes(a)
        (folder / f"b{i}.png").write_bytes(b)
    (folder / "corrupt.jpg").write_bytes(photo_bytes(fmt="JPEG")[:400])
    (folder / "huge.png").write_bytes(photo_bytes(size=(200, 100)))
    rows = [{"id": f"p{i}", "image_a": f"a{i}.png", "image_b": f"b{i}.png"} for i in range(1, 8)]
    rows[1:1] = [{"id": "corrupt", "image_a": "a1.png", "image_b": "corrupt.jpg"}]
    rows[4:4] = [
        {"id": "p2-again", "image_a": "a2.png", "image_b": "b2.png"},
        {"id": "big", "image_a": "huge.png", "image_b": "b3.png"},
        {"id": "missing", "image_a": "a3.png", "image_b": "nowhere.png"},
        {"id": "escape", "image_a": "../a1.png", "image_b": "b1.png"},
        {"id": "colour", "image_a": "a4.png", "image_b": "b4.png", "category": "weather"},
    ]
    return folder, _write_jsonl(folder / "manifest.jsonl", rows)


def _import(slug: str, folder: Path, manifest: bytes, progress=None):
    """Import into a new project that already holds p7; the outcome with that pair's id
    written as <existing>, so imports into two projects compare."""
    project = project_create(slug=slug)
    a, b = (folder / "a7.png").read_bytes(), (folder / "b7.png").read_bytes()
    earlier = folder.parent / f"earlier-{slug}"
    earlier.mkdir()
    (earlier / "a.png").write_bytes(a)
    (earlier / "b.png").write_bytes(b)
    pairs_import(
        project=project,
        manifest=b'{"id": "p7", "image_a": "a.png", "image_b": "b.png"}',
        images=earlier,
        job=job_create(kind=JobKind.IMPORT, project=project),
    )
    existing = Pair.objects.get(project=project)
    job = job_create(kind=JobKind.IMPORT, project=project)
    report = pairs_import(
        project=project, manifest=manifest, images=folder, job=job, progress=progress
    )
    job.refresh_from_db()
    errors = [
        (e.line, e.external_id, e.message.replace(f"pair {existing.pk} ", "pair <existing> "))
        for e in report.errors
    ]
    imported = [(line, Pair.objects.get(pk=pk).external_id) for line, pk in report.imported]
    stored = list(
        Pair.objects.filter(import_job=job).values_list(
            "external_id", "sha256_a", "sha256_b", "width_a", "height_b", "image_a", "thumb_b"
        )
    )
    stored = [
        (row[0], *row[1:5], row[5].replace(slug, "<slug>"), row[6].replace(slug, "<slug>"))
        for row in stored
    ]
    return errors, imported, stored, job


def test_worker_processes_import_exactly_what_the_serial_path_does(folder, monkeypatch):
    images, manifest = folder
    monkeypatch.setattr(importing, "BATCH_SIZE", 3)
    serial = _import("serial", images, manifest)

    monkeypatch.setattr(import_checks, "ProcessPoolExecutor", CountingPool)
    monkeypatch.setattr(import_checks, "worker_count", lambda: 2)
    monkeypatch.setattr(import_checks, "PROCESS_MIN_ROWS", 2)
    monkeypatch.setattr(import_checks, "ROWS_PER_WORKER", 1)
    CountingPool.submitted = CountingPool.tasks = 0
    parallel = _import("parallel", images, manifest)

    assert CountingPool.submitted == 12  # every row but the one the manifest refused (escape)
    assert CountingPool.tasks == 8  # 4 batches of 3, each split between the 2 workers
    assert parallel[:3] == serial[:3]
    errors, imported, _, job = parallel
    assert [external_id for _, external_id in imported] == ["p1", "p2", "p3", "p4", "p5", "p6"]
    reasons = {external_id: message for _, external_id, message in errors}
    assert reasons["p2-again"] == "duplicate of line 3 (same images)"
    assert reasons["p7"] == "duplicate of existing pair <existing> (p7)"
    assert "corrupt" in reasons["corrupt"]
    assert "over the limit" in reasons["big"]
    assert "not found" in reasons["missing"]
    assert "outside the images folder" in reasons["escape"]
    assert "weather" in reasons["colour"]
    assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 13, 13)


def test_progress_is_written_once_a_batch_with_worker_processes(folder, processes):
    images, manifest = folder
    seen = []

    _import("progress", images, manifest, progress=lambda done, total: seen.append((done, total)))

    # The manifest refused one row (escape) before any check: counted done from the start.
    assert seen == [(4, 13), (7, 13), (10, 13), (13, 13)]
    assert processes.submitted == 12


def test_every_imported_pair_has_its_event(folder, processes):
    images, manifest = folder

    _, imported, _, job = _import("events", images, manifest)

    events = PairEvent.objects.filter(kind="imported", pair__import_job=job)
    assert sorted(events.values_list("pair__external_id", "detail")) == [
        (external_id, {"job": job.pk}) for _, external_id in sorted(imported, key=lambda i: i[1])
    ]


def test_an_import_goes_on_in_process_when_a_worker_process_dies(folder, processes, monkeypatch):
    images, manifest = folder
    parent = os.getpid()
    real_check = import_checks.row_check

    def dying_in_a_worker(*args):
        if os.getpid() != parent:
            os._exit(1)  # as if killed for its memory
        return real_check(*args)

    monkeypatch.setattr(import_checks, "row_check", dying_in_a_worker)

    _, imported, _, job = _import("broken", images, manifest)

    assert processes.submitted > 0
    assert [external_id for _, external_id in imported] == ["p1", "p2", "p3", "p4", "p5", "p6"]
    assert job.status == JobStatus.SUCCEEDED


def test_small_imports_are_checked_in_process(folder, monkeypatch):
    images, manifest = folder
    monkeypatch.setattr(import_checks, "ProcessPoolExecutor", CountingPool)
    CountingPool.submitted = 0

    _, imported, _, _ = _import("small", images, manifest)  # 13 rows, under PROCESS_MIN_ROWS

    assert len(imported) == 6
    assert CountingPool.submitted == 0


def test_a_zip_is_read_by_every_worker_process_through_its_own_handle(tmp_path, processes, project):
    import zipfile

    archive = tmp_path / "images.zip"
    rows = []
    with zipfile.ZipFile(archive, "w") as zf:
        for i in range(8):
            a, b = edited_pair(3 * i)
            zf.writestr(f"set/a{i}.png", a)
            zf.writestr(f"set/b{i}.png", b)
            rows.append({"id": f"z{i}", "image_a": f"set/a{i}.png", "image_b": f"set/b{i}.png"})
    manifest = _write_jsonl(tmp_path / "m.jsonl", rows)

    report = pairs_import(
        project=project,
        manifest=manifest,
        images=archive,
        job=job_create(kind=JobKind.IMPORT, project=project),
    )

    assert report.complete
    assert processes.submitted == 8
    assert Pair.objects.filter(project=project).count() == 8


def test_a_worker_process_is_forked_per_50_rows_at_most(monkeypatch):
    monkeypatch.setattr(import_checks, "worker_count", lambda: 64)
    rows = [ManifestRow(i, "a.png", "b.png", "", "", "", {}) for i in range(120)]

    with RowChecker([rows], images=".", source=None, limits=ImageLimits(), categories=()) as c:
        assert c.workers == 3
