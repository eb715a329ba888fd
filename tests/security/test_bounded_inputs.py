"""Every structured input a lead sends is read by one bounded reader (pairdiff.strictjson,
pairdiff.strictyaml): a mapping with aliases or nested 10k deep, a Label Studio export nested
100k deep, a predictions line nested 100k deep each get a short answer, never a 5xx, never a
megabyte of error; a deep line is one unreadable line, the others are imported."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotator.models import Prediction
from pairdiff.labelstudio.config import ConfigUnusable
from pairdiff.labelstudio.mapping import parse_value_map
from tests.factories import make_pair
from tests.pairdiff.test_strictyaml import alias_bomb

DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "mapping",
    [
        alias_bomb(6),  # 9**6 items: small enough to be built by today's reader in a test
        "tier:\n  x: " + "[" * 10_000 + "]" * 10_000,
        '{"tier": ' + "[" * 50_000 + "]" * 50_000 + "}",
        "category: {" + ", ".join(f"k{i}: &a{i} [1]" for i in range(3)) + ", z: *a0}",
        "tier: {x: [" + "1, " * 2000 + "1]}",  # a container where a name belongs
        "x" * 5000 + ": 1",  # an unknown section with a long name
    ],
    ids=["alias-bomb", "yaml-10k-deep", "json-50k-deep", "merge-alias", "container", "long-key"],
)
def test_a_hostile_mapping_gets_a_short_answer(mapping):
    with pytest.raises(ConfigUnusable) as refused:
        parse_value_map(mapping.encode())
    assert len(str(refused.value)) < 300


@pytest.fixture
def api(lead):
    client = APIClient()
    client.force_authenticate(lead)
    return client


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "nothing")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("what", "body"),
    [
        ("manifest", DEEP_JSON.encode()),
        ("manifest", ('[{"data": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}]").encode()),
        ("mapping", alias_bomb(6).encode()),
        ("mapping", ("tier: " + "[" * 10_000 + "]" * 10_000).encode()),
    ],
    ids=["export-deep", "task-deep", "mapping-aliases", "mapping-deep"],
)
def test_a_hostile_labelstudio_upload_is_refused_in_a_short_answer(api, project, what, body):
    files = {
        "format": "label-studio",
        "dry_run": "true",
        "manifest": SimpleUploadedFile(
            "export.json", body if what == "manifest" else b'[{"data": {"a": "1.png"}}]'
        ),
        "images": SimpleUploadedFile("images.zip", _zip()),
    }
    if what == "mapping":
        files["mapping"] = SimpleUploadedFile("mapping.yaml", body)

    response = api.post(f"/api/v1/projects/{project.slug}/imports/", files, format="multipart")

    assert response.status_code == 400, response.content[:300]
    assert len(response.content) < 2000
    assert what in response.json()["error"]["fields"]


def test_a_deep_predictions_line_is_one_unreadable_line(api, project):
    pair = make_pair(project, external_id="p-1")
    good = {"pair": pair.pk, "model": "m", "changes": []}
    lines = [json.dumps(good), "[" * 100_000 + "]" * 100_000, '{"pair": ' + "[" * 100_000]
    upload = SimpleUploadedFile("p.jsonl", "\n".join(lines).encode())

    response = api.post(
        f"/api/v1/projects/{project.slug}/predictions/", {"file": upload}, format="multipart"
    )

    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert body["imported"] == 1 and Prediction.objects.count() == 1
    assert [e["line"] for e in body["errors"]] == [2, 3]
    assert all(len(e["message"]) < 200 for e in body["errors"])
