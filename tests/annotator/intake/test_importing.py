import json
import zipfile
from pathlib import Path

import pytest

from annotator.intake.importing import ImportUnusable, pairs_import
from annotator.models import Pair, PairEvent
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from tests.images import edited_pair, photo_bytes


def _write_jsonl(path: Path, rows: list[dict]) -> bytes:
    data = "\n".join(json.dumps(row) for row in rows).encode()
    path.write_bytes(data)
    return data


def _files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _stored_files(settings) -> set[str]:
    return _files_under(Path(settings.MEDIA_ROOT)) if Path(settings.MEDIA_ROOT).exists() else set()


def _referenced_files() -> set[str]:
    names = set()
    for pair in Pair.objects.all():
        names |= {pair.image_a.name, pair.image_b.name, pair.thumb_a.name, pair.thumb_b.name}
    return names - {""}  # no thumbnail until a page asks for one


def _run(project, folder: Path, manifest: bytes, name: str = "manifest.jsonl"):
    job = job_create(kind=JobKind.IMPORT, project=project)
    report = pairs_import(
        project=project, manifest=manifest, manifest_name=name, images=folder, job=job
    )
    job.refresh_from_db()
    return report, job


@pytest.fixture
def mixed_folder(tmp_path, settings):
    """Good rows mixed with every kind of bad row the importer must name."""
    settings.DIFFMARK_MAX_IMAGE_PIXELS = 10_000  # the good 96×64 images pass, 200×100 does not
    folder = tmp_path / "upload"
    folder.mkdir()
    for i, offset in enumerate((0, 10, 20), start=1):
        a, b = edited_pair(offset)
        (folder / f"a{i}.png").write_bytes(a)
        (folder / f"b{i}.png").write_bytes(b)
    (folder / "corrupt.jpg").write_bytes(photo_bytes(fmt="JPEG")[:400])
    (folder / "notes.png").write_text("this is a text file, not a picture\n")
    (folder / "huge.png").write_bytes(photo_bytes(size=(200, 100)))
    rows = [
        {"id": "p1", "image_a": "a1.png", "image_b": "b1.png", "instruction": "recolour the patch"},
        {"id": "p2", "image_a": "a2.png", "image_b": "b2.png", "category": "attribute"},
        {"id": "corrupt", "image_a": "a1.png", "image_b": "corrupt.jpg"},
        {"id": "text", "image_a": "notes.png", "image_b": "b1.png"},
        {"id": "big", "image_a": "huge.png", "image_b": "b2.png"},
        {"id": "missing", "image_a": "a3.png", "image_b": "nowhere.png"},
        {"id": "p1-again", "image_a": "a1.png", "image_b": "b1.png"},
        {"id": "p3", "image_a": "a3.png", "image_b": "b3.png", "source": "camera 3"},
    ]
    return folder, _write_jsonl(folder / "manifest.jsonl", rows)


def test_mixed_manifest_imports_exactly_the_good_rows(project, mixed_folder, settings):
    folder, manifest = mixed_folder

    report, job = _run(project, folder, manifest)

    assert sorted(Pair.objects.values_list("external_id", flat=True)) == ["p1", "p2", "p3"]
    reasons = {error.external_id: error.message.lower() for error in report.errors}
    assert set(reasons) == {"corrupt", "text", "big", "missing", "p1-again"}
    assert "image_b" in reasons["corrupt"] and "corrupt" in reasons["corrupt"]
    assert "image_a" in reasons["text"] and "not an image" in reasons["text"]
    assert "image_a" in reasons["big"] and "limit" in reasons["big"]
    assert "image_b" in reasons["missing"] and "not found" in reasons["missing"]
    assert "duplicate" in reasons["p1-again"] and "line 1" in reasons["p1-again"]
    assert [e.line for e in report.errors] == [3, 4, 5, 6, 7]
    assert job.status == JobStatus.SUCCEEDED
    assert job.result == {"rows": 8, "imported": 3, "rejected": 5}
    assert [e["id"] for e in job.errors] == ["corrupt", "text", "big", "missing", "p1-again"]


def test_mixed_manifest_changes_nothing_else(project, mixed_folder, settings):
    folder, manifest = mixed_folder

    _run(project, folder, manifest)

    assert _stored_files(settings) == _referenced_files()
    assert PairEvent.objects.filter(kind="imported").count() == 3
    assert Job.objects.count() == 1


def test_imported_pair_keeps_sizes_hashes_and_original_bytes(project, mixed_folder):
    folder, manifest = mixed_folder

    _run(project, folder, manifest)

    pair = Pair.objects.get(external_id="p1")
    original = (folder / "a1.png").read_bytes()
    assert pair.image_a.read() == original
    assert (pair.width_a, pair.height_a, pair.format_a) == (96, 64, "PNG")
    assert pair.instruction == "recolour the patch"
    assert Pair.objects.get(external_id="p2").category_hint == "attribute"
    assert Pair.objects.get(external_id="p3").metadata["source"] == "camera 3"


def test_reimport_reports_every_row_as_duplicate_and_stores_nothing_twice(project, mixed_folder):
    folder, manifest = mixed_folder
    _run(project, folder, manifest)

    report, _ = _run(project, folder, manifest)

    assert report.imported == []
    assert Pair.objects.count() == 3
    assert all(
        "duplicate" in e.message
        or "limit" in e.message
        or "not" in e.message
        or "corrupt" in e.message
        for e in report.errors
    )


def test_unknown_category_is_a_row_error(project, tmp_path):
    a, b = edited_pair()
    (tmp_path / "a.png").write_bytes(a)
    (tmp_path / "b.png").write_bytes(b)
    manifest = _write_jsonl(
        tmp_path / "m.jsonl", [{"image_a": "a.png", "image_b": "b.png", "category": "weather"}]
    )

    report, _ = _run(project, tmp_path, manifest)

    assert Pair.objects.count() == 0
    assert "weather" in report.errors[0].message


def test_batch_is_atomic_when_a_write_fails(project, mixed_folder, settings, monkeypatch):
    folder, manifest = mixed_folder
    rows_before_failure = []

    def failing_bulk_create(events, **kwargs):
        # The batch's pairs are inserted and their files written by now; its events fail.
        rows_before_failure.append(Pair.objects.count())
        raise RuntimeError("disk full")

    monkeypatch.setattr(PairEvent.objects, "bulk_create", failing_bulk_create)

    with pytest.raises(RuntimeError):
        _run(project, folder, manifest)

    assert rows_before_failure[0] > 0
    assert Pair.objects.count() == 0
    assert _stored_files(settings) == set()
    job = Job.objects.get()
    assert job.status == JobStatus.FAILED
    assert "disk full" in job.message


def test_zip_entry_escaping_the_folder_is_rejected(project, tmp_path):
    a, b = edited_pair()
    archive = tmp_path / "images.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pairs/a.png", a)
        zf.writestr("pairs/b.png", b)
        zf.writestr("../evil.png", b)
    rows = [
        {"id": "ok", "image_a": "pairs/a.png", "image_b": "pairs/b.png"},
        {"id": "evil", "image_a": "pairs/a.png", "image_b": "../evil.png"},
    ]
    manifest = _write_jsonl(tmp_path / "m.jsonl", rows)

    report, _ = _run(project, archive, manifest)

    assert list(Pair.objects.values_list("external_id", flat=True)) == ["ok"]
    assert [e.external_id for e in report.errors] == ["evil"]


def test_csv_manifest_is_imported(project, tmp_path):
    a, b = edited_pair()
    (tmp_path / "a.png").write_bytes(a)
    (tmp_path / "b.png").write_bytes(b)
    manifest = b"id,image_a,image_b,instruction,camera\nc1,a.png,b.png,make it blue,left\n"

    report, _ = _run(project, tmp_path, manifest, name="pairs.csv")

    pair = Pair.objects.get()
    assert report.complete
    assert (pair.external_id, pair.instruction, pair.metadata["camera"]) == (
        "c1",
        "make it blue",
        "left",
    )


@pytest.mark.parametrize(
    ("name", "manifest", "images"),
    [
        ("junk.jsonl", b"\x00\x01\x02\xff not a manifest", "folder"),
        ("no-columns.csv", b"id,first,second\n1,a.png,b.png\n", "folder"),
        ("good.jsonl", b'{"image_a": "a.png", "image_b": "b.png"}\n', "missing-folder"),
    ],
)
def test_unusable_input_fails_the_job_and_writes_nothing(project, tmp_path, name, manifest, images):
    (tmp_path / "folder").mkdir()

    with pytest.raises(ImportUnusable):
        _run(project, tmp_path / images, manifest, name=name)

    assert Pair.objects.count() == 0
    assert Job.objects.get().status == JobStatus.FAILED


def test_the_images_source_reads_files_up_to_the_configured_limit(
    project, tmp_path, settings, monkeypatch
):
    from annotator.intake import importing

    limits = []
    real_open = importing.open_source
    monkeypatch.setattr(
        importing,
        "open_source",
        lambda path, **kw: limits.append(kw.get("max_entry_bytes")) or real_open(path, **kw),
    )
    settings.DIFFMARK_MAX_IMAGE_BYTES = 80 * 1024 * 1024  # above the source's own default
    folder = tmp_path / "up"
    folder.mkdir()
    a, b = edited_pair(3)
    (folder / "a.png").write_bytes(a)
    (folder / "b.png").write_bytes(b)
    _, job = _run(project, folder, b'{"image_a": "a.png", "image_b": "b.png"}')
    assert job.status == JobStatus.SUCCEEDED
    assert limits == [80 * 1024 * 1024]  # was the source's fixed 50 MiB


def test_a_job_never_says_less_than_the_rows_it_has_stored(project, mixed_folder, monkeypatch):
    # What a process killed right after a batch's commit leaves behind is what the database
    # holds at that moment: the batch's pairs, and (written in the same transaction) the
    # progress that counts them. Seen here from the first thing pairs_store does after commit.
    folder, manifest = mixed_folder
    monkeypatch.setattr("annotator.intake.importing.BATCH_SIZE", 3)
    seen_after_commit = []

    def look(pairs):
        job = Job.objects.get()
        stored = Pair.objects.filter(import_job=job).count()
        seen_after_commit.append((stored, job.done))

    monkeypatch.setattr("annotator.services.assists_enqueue", look)

    report, job = _run(project, folder, manifest)

    assert len(seen_after_commit) >= 2  # more than one batch stored rows
    assert all(done >= stored > 0 for stored, done in seen_after_commit), seen_after_commit
    assert job.status == JobStatus.SUCCEEDED
    assert len(report.imported) == 3
