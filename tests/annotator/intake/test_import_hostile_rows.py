"""One bad manifest row never sinks an import: every good row lands, every bad row is reported
with its reason (naming the field), and no database message reaches the report."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DataError
from rest_framework.test import APIClient

from annotator.intake import importing
from annotator.intake.importing import pairs_import
from annotator.models import Pair
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from tests.images import edited_pair

GOOD = 59
# Raw JSON lines, each bad in one way, and the words its error must hold.
BAD_LINES = [
    (
        '{"id": "inf", "image_a": "a1.png", "image_b": "b1.png", "metadata": {"x": 1e309}}',
        "metadata.x: the number 1e309 is too large",
    ),
    (
        '{"id": "nan", "image_a": "a1.png", "image_b": "b1.png", "score": NaN}',
        "score: NaN is not a JSON number",
    ),
    (
        '{"id": "sur", "image_a": "a1.png", "image_b": "b1.png", "instruction": "x\\ud800"}',
        "instruction: holds a lone UTF-16 surrogate",
    ),
    (
        '{"id": "sur-key", "image_a": "a1.png", "image_b": "b1.png", "metadata": {"\\udc00": 1}}',
        "the key holds a lone UTF-16 surrogate",
    ),
    (
        '{"id": "big", "image_a": "a1.png", "image_b": "b1.png", "n": ' + "9" * 4000 + "}",
        "n: an integer of 4000 digits is too large",
    ),
    (
        '{"id": "nul", "image_a": "a1.png", "image_b": "b1.png", "instruction": "a\\u0000"}',
        "instruction: may not contain NUL",
    ),
    (
        '{"id": "deep", "image_a": "a1.png", "image_b": "b1.png", "m": '
        + "[" * 80
        + "]" * 80
        + "}",
        "nested more than 64 levels",
    ),
    (
        '{"id": "meta-list", "image_a": "a1.png", "image_b": "b1.png", "metadata": [1]}',
        "metadata must be a JSON object",
    ),
    (
        '{"id": {"x": 1}, "image_a": "a1.png", "image_b": "b1.png"}',
        "id must be a string or an integer",
    ),
    ('{"id": "img-list", "image_a": ["a1.png"], "image_b": "b1.png"}', "image_a must be a string"),
    (
        '{"id": "cat-list", "image_a": "a1.png", "image_b": "b1.png", "category": ["x"]}',
        "category must be a string",
    ),
    (
        '{"id": "cat-unknown", "image_a": "a2.png", "image_b": "b2.png", "category": "nope"}',
        "not in the project's taxonomy",
    ),
    ('{"id": "missing", "image_a": "a1.png", "image_b": "nowhere.png"}', "nowhere.png"),
    ('{"id": "broken", "image_a": ', "invalid JSON"),
    ("[1, 2]", "not a JSON object"),
]
RAW_DB_WORDS = ("constraint", "sqlite", "psycopg", "violates", "DETAIL", "INSERT", "jsonb")


def _images() -> dict[str, bytes]:
    files = {}
    for i in range(1, GOOD + 1):
        a, b = edited_pair(i * 3)
        files[f"a{i}.png"], files[f"b{i}.png"] = a, b
    return files


def _manifest() -> tuple[bytes, dict[int, str]]:
    """GOOD good rows with the bad ones spread among them (one in every batch of 25, and
    several in one); the line of each bad row and the words its error must hold."""
    good = [
        json.dumps({"id": f"g{i}", "image_a": f"a{i}.png", "image_b": f"b{i}.png"})
        for i in range(1, GOOD + 1)
    ]
    lines: list[str] = []
    expected: dict[int, str] = {}
    bad = iter(BAD_LINES)
    for index, line in enumerate(good):
        lines.append(line)
        if index in (0, 3, 24, 25, 26, 30, 40, 45, 49, 50, 51, 55, 56, 57, 58):
            raw, words = next(bad)
            lines.append(raw)
            expected[len(lines)] = words
    return "\n".join(lines).encode(), expected


def _assert_report(job: Job, expected: dict[int, str]) -> None:
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert Pair.objects.count() == GOOD
    assert sorted(Pair.objects.values_list("external_id", flat=True)) == sorted(
        f"g{i}" for i in range(1, GOOD + 1)
    )
    reported = {error["line"]: error["message"] for error in job.errors}
    assert set(reported) == set(expected)
    for line, words in expected.items():
        assert words in reported[line], (line, reported[line])
        assert not any(w.lower() in reported[line].lower() for w in RAW_DB_WORDS)
    assert job.result == {"rows": GOOD + len(expected), "imported": GOOD, "rejected": len(expected)}


def test_every_kind_of_bad_row_is_reported_and_every_good_row_lands(project, tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    for name, data in _images().items():
        (folder / name).write_bytes(data)
    manifest, expected = _manifest()
    job = job_create(kind=JobKind.IMPORT, project=project)

    pairs_import(
        project=project, manifest=manifest, manifest_name="m.jsonl", images=folder, job=job
    )

    job.refresh_from_db()
    _assert_report(job, expected)


def test_over_the_api_the_import_answers_202_and_reports_each_bad_row(
    project, lead, django_capture_on_commit_callbacks, settings
):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in _images().items():
            zf.writestr(name, data)
    manifest, expected = _manifest()
    client = APIClient()
    client.force_authenticate(lead)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/v1/projects/{project.slug}/imports/",
            {
                "manifest": SimpleUploadedFile("m.jsonl", manifest),
                "images": SimpleUploadedFile("images.zip", archive.getvalue()),
            },
            format="multipart",
        )

    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"]["id"])
    _assert_report(job, expected)
    # The upload is read once and deleted: no 20 GB zip kept per import.
    stored = [p for p in Path(settings.MEDIA_ROOT).rglob("*") if "imports" in p.parts]
    assert [p for p in stored if p.is_file()] == []


def test_a_row_the_database_refuses_is_reported_without_its_message(project, tmp_path, monkeypatch):
    """Whatever slips past the checks and fails its INSERT (here: a DataError on one row) sinks
    neither its batch nor the job, and the database's words stay in the log."""
    folder = tmp_path / "images"
    folder.mkdir()
    rows = []
    for i in range(1, 6):
        a, b = edited_pair(i * 5)
        (folder / f"a{i}.png").write_bytes(a)
        (folder / f"b{i}.png").write_bytes(b)
        rows.append(json.dumps({"id": f"r{i}", "image_a": f"a{i}.png", "image_b": f"b{i}.png"}))
    store = importing.pairs_store

    def refusing(*, project, checked, **kwargs):
        if any(c.input.external_id == "r3" for c in checked):
            raise DataError('value too long for type character varying(200) DETAIL: "r3"')
        return store(project=project, checked=checked, **kwargs)

    monkeypatch.setattr(importing, "pairs_store", refusing)
    job = job_create(kind=JobKind.IMPORT, project=project)

    pairs_import(project=project, manifest="\n".join(rows).encode(), images=folder, job=job)

    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert sorted(Pair.objects.values_list("external_id", flat=True)) == ["r1", "r2", "r4", "r5"]
    assert [(e["line"], e["id"]) for e in job.errors] == [(3, "r3")]
    assert "the database refused a value of this row" in job.errors[0]["message"]
    assert "DETAIL" not in json.dumps(job.errors) + job.message


@pytest.mark.parametrize("metadata", ['{"k": "\\ud800"}', '{"k": 1e309}', '{"k": NaN}'])
def test_an_api_upload_with_unstorable_metadata_is_a_400_naming_the_field(project, lead, metadata):
    a, b = edited_pair(3)
    client = APIClient()
    client.force_authenticate(lead)
    body = {
        "image_a": SimpleUploadedFile("a.png", a),
        "image_b": SimpleUploadedFile("b.png", b),
        "metadata": metadata,
    }

    response = client.post(f"/api/v1/projects/{project.slug}/pairs/", body, format="multipart")

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["metadata"]
    assert not Pair.objects.exists()
