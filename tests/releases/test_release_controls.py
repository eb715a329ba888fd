"""Made no-difference controls in a built release (issue 25): a pair of files of their own,
named and numbered as a pair of the project, in every file that carries images or rows."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from django.core.files.storage import default_storage
from PIL import Image

from pairdiff.release.splits import SplitPlan
from releases import building as releases_module
from releases.building import release_create
from releases.models import ReleaseStatus
from tests.factories import answer, make_accepted, make_pair


@pytest.fixture
def with_controls(project, annotator_1, annotator_2):
    project.question_control_rate = 0.3
    project.save(update_fields=["question_control_rate"])
    bodies = [
        answer(description=f"The patch changed from red to {colour}.")
        for colour in ("blue", "green", "yellow", "purple", "orange", "white", "black", "grey")
        for _ in range(2)
    ]
    accepted = make_accepted(project, [annotator_1, annotator_2], bodies)
    spare = [make_pair(project, external_id=f"spare-{i}") for i in range(12)]  # never released
    return accepted, spare


def _build(project, name, capture, lead):
    with capture(execute=True):
        release = release_create(project=project, name=name, plan=SplitPlan(seed=1), user=lead)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY, release.message
    return release


def _read(release, name: str) -> bytes:
    with default_storage.open(f"{release.prefix}/{name}", "rb") as handle:
        return handle.read()


def _rows(release) -> list[dict]:
    return [json.loads(line) for line in _read(release, "questions.jsonl").splitlines()]


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_a_control_is_two_files_of_a_spare_pair_named_as_every_pair_is(
    project, with_controls, lead, django_capture_on_commit_callbacks
):
    accepted, spare = with_controls
    release = _build(project, "v1", django_capture_on_commit_callbacks, lead)
    rows = [r for r in _rows(release) if r["split"] != "test_swapped"]
    controls = [r for r in rows if r["control"]]
    assert controls
    by_pk = {p.pk: p for p in accepted}
    spare_ids = {p.pk: p.external_id for p in spare}
    for control in controls:
        pid = control["pair_id"]
        assert spare_ids.get(pid) == control["id"]  # a pair of the project the release lacks
        assert control["image_a"] == f"images/{pid}_a.png"
        assert control["image_b"] == f"images/{pid}_b.png"
        a, b = _read(release, control["image_a"]), _read(release, control["image_b"])
        with by_pk[control["control_of"]].image_a.open("rb") as handle:
            source = handle.read()
        # Each pair here has a photo of its own: a copy of A would be the one A two questions
        # share, so A is re-encoded too; B another encoding: other bytes, the same pixels.
        assert len({a, b, source}) == 3
        assert (_pixels(a) == _pixels(source)).all() and (_pixels(b) == _pixels(source)).all()
        assert 0.9 < len(b) / len(a) < 1.1
        for name in (control["image_a"], control["image_b"]):
            assert name in release.manifest["files"]
    # Rows are in pair order within each split: a control's place says nothing.
    order = {"train": 0, "val": 1, "test": 2}
    assert rows == sorted(rows, key=lambda r: (order[r["split"]], r["pair_id"]))
    assert not any(str(r["id"]).endswith("-same") for r in rows)
    # Which questions a text-only baseline answers is not published.
    assert "telling" not in release.manifest["text_baselines"]


def test_every_file_with_images_carries_the_controls_b(
    project, with_controls, lead, django_capture_on_commit_callbacks
):
    release = _build(project, "v1", django_capture_on_commit_callbacks, lead)
    controls = [r for r in _rows(release) if r["control"] and r["split"] in ("val", "test")]
    assert controls
    names = release.manifest["files"]
    shards = [n for n in names if n.startswith("data/questions/")]
    in_parquet = {}
    for name in shards:
        table = pq.read_table(io.BytesIO(_read(release, name))).to_pylist()
        in_parquet.update({row["image_b_path"]: row["image_b"]["bytes"] for row in table})
    tsvs = b"".join(_read(release, n) for n in names if n.startswith("vlmevalkit/"))
    for control in controls:
        b = _read(release, control["image_b"])
        assert in_parquet[control["image_b"]] == b
        assert base64.b64encode(b) in tsvs


def test_threads_and_processes_write_the_same_controls_and_v2_keeps_them(
    project, with_controls, lead, monkeypatch, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    forked = _build(project, "v1", capture, lead)
    monkeypatch.setattr(releases_module, "workers_usable", lambda *args: False)
    threaded = _build(project, "v2", capture, lead)
    before = {r["control_of"]: r for r in _rows(forked) if r.get("control_of")}
    after = {r["control_of"]: r for r in _rows(threaded) if r.get("control_of")}
    assert before and set(before) <= set(after)
    for source, row in before.items():
        again = after[source]
        assert again == row  # question, identity and files as published
        assert _read(threaded, again["image_b"]) == _read(forked, row["image_b"])
