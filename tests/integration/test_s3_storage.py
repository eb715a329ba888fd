"""Pairs on S3 through django-storages, against a real S3-compatible server over HTTP.

`.ci/run` starts one and sets DIFFMARK_TEST_S3_ENDPOINT; without it these tests are deselected.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import urllib.error
import urllib.request
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image
from storages.backends.s3 import S3Storage

from annotator.intake.importing import pairs_import
from annotator.models import Pair, PairEvent
from annotator.services import PairInput, pair_create
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from projects.creating import project_create
from tests.images import edited_pair, encode, photo

pytestmark = [pytest.mark.s3, pytest.mark.django_db]

SETTINGS_FILE = Path(__file__).resolve().parents[2] / "config" / "settings.py"
EXPIRE = 120  # AWS_QUERYSTRING_EXPIRE for these tests, unlike the default of 300


@dataclass
class Bucket:
    client: Any  # a boto3 client (boto3 ships no types)
    name: str
    endpoint: str

    def object_keys(self) -> set[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name)
        return {item["Key"] for page in pages for item in page.get("Contents", [])}

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=key)["Body"].read()

    def content_type(self, key: str) -> str:
        return self.client.head_object(Bucket=self.name, Key=key)["ContentType"]


def _production_s3_settings(monkeypatch, env: dict[str, str]) -> tuple[dict, dict]:
    """config/settings.py's S3 block as production reads it from `env`: the test runs the real
    configuration instead of a copy that could drift from it. Settings import has no side
    effects, so reading the file again is safe."""
    with monkeypatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        spec = importlib.util.spec_from_file_location("_diffmark_s3_settings", SETTINGS_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    aws = {name: getattr(module, name) for name in dir(module) if name.startswith("AWS_")}
    return aws, module.STORAGES["default"]


@pytest.fixture
def bucket(settings, monkeypatch):
    """A fresh bucket, wired in as `default_storage` exactly as production wires it."""
    endpoint = os.environ["DIFFMARK_TEST_S3_ENDPOINT"]
    credentials = {"aws_access_key_id": "diffmark-test", "aws_secret_access_key": "not-a-secret"}
    name = f"diffmark-test-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **credentials)
    client.create_bucket(Bucket=name)
    aws, storage = _production_s3_settings(
        monkeypatch,
        {
            "AWS_STORAGE_BUCKET_NAME": name,
            "AWS_S3_ENDPOINT_URL": endpoint,
            "AWS_S3_REGION_NAME": "us-east-1",
            "AWS_ACCESS_KEY_ID": credentials["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": credentials["aws_secret_access_key"],
            "AWS_QUERYSTRING_EXPIRE": str(EXPIRE),
        },
    )
    for key, value in aws.items():
        setattr(settings, key, value)
    # Django drops its cached storages when STORAGES changes (and again when the test ends).
    settings.STORAGES = {**settings.STORAGES, "default": storage}
    assert isinstance(default_storage, S3Storage)
    assert default_storage.bucket_name == name
    assert Pair._meta.get_field("image_a").storage.bucket_name == name
    found = Bucket(client, name, endpoint)
    try:
        yield found
    finally:
        for key in found.object_keys():
            client.delete_object(Bucket=name, Key=key)
        client.delete_bucket(Bucket=name)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stored_keys() -> set[str]:
    keys = set()
    for pair in Pair.objects.all():
        keys |= {pair.image_a.name, pair.image_b.name, pair.thumb_a.name, pair.thumb_b.name}
    return keys - {""}  # no thumbnail until a page asks for one


def _local_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.fixture
def upload(tmp_path):
    """A folder to import: a PNG pair and a JPEG pair of real photos, and their manifest."""
    folder = tmp_path / "upload"
    folder.mkdir()
    a, b = edited_pair(0)
    (folder / "a1.png").write_bytes(a)
    (folder / "b1.png").write_bytes(b)
    (folder / "a2.jpg").write_bytes(encode(photo("coffee", offset=5), "JPEG", quality=91))
    (folder / "b2.jpg").write_bytes(encode(photo("coffee", offset=9), "JPEG", quality=91))
    rows = [
        {"id": "png", "image_a": "a1.png", "image_b": "b1.png"},
        {"id": "jpeg", "image_a": "a2.jpg", "image_b": "b2.jpg"},
    ]
    manifest = "\n".join(json.dumps(row) for row in rows).encode()
    return folder, manifest


def _import(project, folder: Path, manifest: bytes):
    job = job_create(kind=JobKind.IMPORT, project=project)
    report = pairs_import(
        project=project, manifest=manifest, manifest_name="manifest.jsonl", images=folder, job=job
    )
    job.refresh_from_db()
    return report, job


def test_import_stores_originals_byte_for_byte_in_the_bucket(project, upload, bucket, settings):
    folder, manifest = upload

    report, job = _import(project, folder, manifest)

    assert report.complete and job.status == JobStatus.SUCCEEDED
    assert bucket.object_keys() == _stored_keys()
    assert len(bucket.object_keys()) == 4  # thumbnails are made when first shown
    assert _local_files(settings) == []
    for pair in Pair.objects.all():
        names = pair.metadata["source_files"]
        for side, source in zip("ab", names, strict=True):
            key = pair.image(side).name
            stored = bucket.read(key)
            assert _sha256(stored) == _sha256((folder / source).read_bytes())
            assert _sha256(stored) == getattr(pair, f"sha256_{side}")
            expected_type = "image/png" if source.endswith(".png") else "image/jpeg"
            assert bucket.content_type(key) == expected_type


def test_failed_import_batch_leaves_no_objects_in_the_bucket(project, upload, bucket, monkeypatch):
    folder, manifest = upload
    calls = {"objects_before_failure": 0}

    def failing_bulk_create(events, **kwargs):
        # Both pairs' images are in the bucket by now, their rows inserted.
        calls["objects_before_failure"] = len(bucket.object_keys())
        raise RuntimeError("disk full")

    monkeypatch.setattr(PairEvent.objects, "bulk_create", failing_bulk_create)

    with pytest.raises(RuntimeError):
        _import(project, folder, manifest)

    assert calls["objects_before_failure"] == 4
    assert Pair.objects.count() == 0
    assert bucket.object_keys() == set()
    assert Job.objects.get().status == JobStatus.FAILED


@pytest.fixture
def mixed_pair(project, bucket):
    """A pair stored through the real service: A is a PNG, B a JPEG."""
    a = encode(photo(offset=3))
    b = encode(photo(offset=7), "JPEG", quality=93)
    pair = pair_create(project=project, pair_input=PairInput(a, b, external_id="mixed"))
    return pair, {"a": a, "b": b}


@pytest.mark.parametrize(("side", "content_type"), [("a", "image/png"), ("b", "image/jpeg")])
def test_member_gets_the_original_image_streamed_from_the_bucket(
    client, lead, mixed_pair, side, content_type
):
    pair, originals = mixed_pair
    client.force_login(lead)

    response = client.get(reverse("annotator:pair_image", args=[pair.pk, side]))

    assert response.status_code == 200  # served here, never a redirect to the bucket
    assert response["Content-Type"] == content_type
    assert response["Content-Length"] == str(len(originals[side]))
    assert response["Cache-Control"] == "private, max-age=86400, immutable"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"] == "inline"
    assert b"".join(response.streaming_content) == originals[side]


def test_member_gets_the_thumbnail_made_into_the_bucket(client, lead, mixed_pair, bucket):
    pair, _ = mixed_pair
    client.force_login(lead)

    response = client.get(reverse("annotator:pair_thumb", args=[pair.pk, "b"]))

    assert response.status_code == 200
    assert response["Content-Type"] == "image/jpeg"
    assert response["Cache-Control"] == "private, max-age=86400, immutable"
    assert response["X-Content-Type-Options"] == "nosniff"
    pair.refresh_from_db()
    assert b"".join(response.streaming_content) == bucket.read(pair.thumb_b.name)
    assert bucket.content_type(pair.thumb_b.name) == "image/jpeg"
    with Image.open(io.BytesIO(bucket.read(pair.thumb_b.name))) as thumb:
        assert (thumb.format, thumb.size) == ("JPEG", (pair.width_b, pair.height_b))


@pytest.mark.parametrize("who", ["outsider", "researcher", None])
def test_others_get_no_image_from_the_bucket(client, mixed_pair, request, who):
    pair, _ = mixed_pair
    if who:
        client.force_login(request.getfixturevalue(who))

    for name in ("annotator:pair_image", "annotator:pair_thumb"):
        response = client.get(reverse(name, args=[pair.pk, "a"]))

        assert response.status_code == (404 if who else 302)
        if not who:
            assert response["Location"].startswith(reverse("login"))


def test_bucket_objects_refuse_unsigned_reads(mixed_pair, bucket):
    pair, _ = mixed_pair

    for key in _stored_keys():
        acl = bucket.client.get_object_acl(Bucket=bucket.name, Key=key)
        grantees = {grant["Grantee"].get("URI", "") for grant in acl["Grants"]}
        assert not any(uri.endswith(("/AllUsers", "/AuthenticatedUsers")) for uri in grantees)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{bucket.endpoint}/{bucket.name}/{key}", timeout=10)
        assert refused.value.code == 403


def test_storage_urls_are_signed_and_expire_per_setting(mixed_pair, bucket):
    """What the admin links to: a signed URL valid for AWS_QUERYSTRING_EXPIRE seconds. The
    test server does not enforce expiry, so the URL's own expiry is what is checked."""
    pair, originals = mixed_pair

    url = pair.image_a.url

    query = parse_qs(urlsplit(url).query)
    assert query["X-Amz-Expires"] == [str(EXPIRE)]
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert "X-Amz-Signature" in query
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.read() == originals["a"]


def test_a_release_on_s3_is_downloaded_with_a_token_and_matches_its_manifest(
    bucket, project, annotator_1, annotator_2, researcher
):
    from rest_framework.test import APIClient

    from accounts.services import token_create
    from pairdiff.release.splits import SplitPlan
    from releases.building import release_build, release_register
    from releases.models import ReleaseStatus
    from tests.factories import answer, make_accepted

    pairs = make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])
    release = release_build(release_register(project=project, name="v1", plan=SplitPlan(seed=2)).pk)
    assert release.status == ReleaseStatus.READY, release.message
    files = release.manifest["files"]
    assert {f"{release.prefix}/{name}" for name in files} | {
        f"{release.prefix}/manifest.json"
    } <= bucket.object_keys()
    with pairs[0].image_a.open("rb") as original:
        assert bucket.read(f"{release.prefix}/images/{pairs[0].pk}_a.png") == original.read()

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=researcher)[1]}")
    for name, entry in files.items():
        response = client.get(f"/api/v1/releases/{release.pk}/files/{name}")
        assert response.status_code == 200, name
        assert _sha256(b"".join(response.streaming_content)) == entry["sha256"], name


def test_a_failed_release_build_leaves_no_objects_on_s3(
    bucket, project, annotator_1, annotator_2, monkeypatch
):
    from pairdiff.release.splits import SplitPlan
    from releases import building as releases
    from releases.models import ReleaseStatus
    from tests.factories import answer, make_accepted

    make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])
    before = bucket.object_keys()
    copy, copied = releases._copy_image, []

    def copy_then_fail(*args, **kwargs):
        if len(copied) == 3:
            raise OSError("the network went away")
        copied.append(copy(*args, **kwargs))
        return copied[-1]

    monkeypatch.setattr(releases, "_copy_image", copy_then_fail)
    release = releases.release_build(
        releases.release_register(project=project, name="v1", plan=SplitPlan()).pk
    )
    assert release.status == ReleaseStatus.FAILED and "network" in release.message
    assert len(copied) == 3  # objects were written before the failure ...
    assert bucket.object_keys() == before  # ... and removed again
    assert release.records.count() == 0


def _ls_upload(references: list[tuple[str, str]]) -> dict:
    """A Label Studio import's form: tasks with these (image_a, image_b), a zip without them."""
    export = [
        {"id": n, "data": {"image_a": a, "image_b": b}, "annotations": []}
        for n, (a, b) in enumerate(references, start=1)
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "no images here")
    return {
        "format": "label-studio",
        "manifest": SimpleUploadedFile("export.json", json.dumps(export).encode()),
        "images": SimpleUploadedFile("images.zip", buffer.getvalue()),
    }


def _ls_dry_run(client, project, references: list[tuple[str, str]]) -> list[str]:
    """The problems a Label Studio dry run reports for tasks with these (image_a, image_b)."""
    response = client.post(
        f"/api/v1/projects/{project.slug}/imports/", _ls_upload(references) | {"dry_run": "true"}
    )
    assert response.status_code == 200, response.content[:300]
    return [p["message"] for p in response.json()["preview"]["problems"]]


def test_labelstudio_import_reads_no_other_projects_key_and_answers_as_for_a_missing_one(
    client, project, lead, bucket, django_capture_on_commit_callbacks
):
    """Item 1 of issue 24: an s3:// reference to another project's release image in Diffmark's
    own bucket reads nothing, and the dry run answers exactly as for a key that does not exist."""
    other = project_create(slug="other", name="Other")
    a, b = edited_pair(4)
    taken = f"releases/{other.slug}/1/images/1_a.png"
    bucket.client.put_object(Bucket=bucket.name, Key=taken, Body=a)
    own_a = f"pairs/{project.slug}/ls/own_a.png"
    own_b = f"pairs/{project.slug}/ls/own_b.png"
    bucket.client.put_object(Bucket=bucket.name, Key=own_a, Body=a)
    bucket.client.put_object(Bucket=bucket.name, Key=own_b, Body=b)
    client.force_login(lead)
    s3 = f"s3://{bucket.name}/"

    problems = _ls_dry_run(client, project, [(s3 + taken, s3 + own_b), (s3 + own_a, s3 + own_b)])
    bucket.client.delete_object(Bucket=bucket.name, Key=taken)
    problems_missing = _ls_dry_run(
        client, project, [(s3 + taken, s3 + own_b), (s3 + own_a, s3 + own_b)]
    )

    assert problems == problems_missing  # no existence oracle
    assert len(problems) == 1 and problems[0].startswith("image_a: no file named 1_a.png")
    # The project's own objects are read (the second task is importable: no problem for it).
    bucket.client.put_object(Bucket=bucket.name, Key=taken, Body=a)
    with django_capture_on_commit_callbacks(execute=True):
        job_id = _ls_import(client, project, [(s3 + taken, s3 + own_b)])
    job_problems = [error["message"] for error in Job.objects.get(pk=job_id).errors]
    assert job_problems == problems
    assert not Pair.objects.filter(project=project).exists()
    assert set(bucket.object_keys()) >= {taken}


def _ls_import(client, project, references: list[tuple[str, str]]) -> int:
    """Start a real (not dry) Label Studio import; its job's id."""
    response = client.post(f"/api/v1/projects/{project.slug}/imports/", _ls_upload(references))
    assert response.status_code in (200, 201, 202), response.content[:300]
    return response.json()["job"]["id"]


def test_finished_jobs_and_old_staged_previews_leave_no_objects_in_the_bucket(
    client, project, lead, bucket, django_capture_on_commit_callbacks
):
    """Issue 24 item 10 on S3: a synthesis zip is deleted when its job ends, and a staged
    Label Studio preview nobody imported is deleted by the sweep."""
    from datetime import timedelta

    from django.utils import timezone

    from annotator.intake.labelstudio.upload import labelstudio_stage
    from annotator.sweeps import staged_uploads_delete

    client.force_login(lead)
    photos = io.BytesIO()
    with zipfile.ZipFile(photos, "w") as archive:
        archive.writestr("a.png", edited_pair(3)[0])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/v1/projects/{project.slug}/synthesize/",
            {
                "images": SimpleUploadedFile("p.zip", photos.getvalue()),
                "per_image": "1",
                "categories": "lighting",
            },
        )
    assert response.status_code == 202
    assert not [k for k in bucket.object_keys() if k.startswith("synth/")]

    upload = _ls_upload([("a.png", "b.png")])
    token = labelstudio_stage(project=project, export=upload["manifest"], images=upload["images"])
    staged = f"imports/{project.slug}/label-studio-{token}/"
    assert [k for k in bucket.object_keys() if k.startswith(staged)]

    assert staged_uploads_delete() == 0  # fresh: a lead may be looking at its preview
    assert staged_uploads_delete(now=timezone.now() + timedelta(hours=25)) == 2

    assert not [k for k in bucket.object_keys() if k.startswith("imports/")]
