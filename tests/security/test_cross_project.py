"""A Label Studio import reads its own images only: the files staged with it, or objects under
the importing project's own prefixes of Diffmark's bucket; never another project's keys, and a
forbidden key is answered exactly as a missing one (no existence oracle). References are
bounded in length and parts, so one reference costs microseconds, not half a minute."""

from __future__ import annotations

import io
import time

import pytest
from django.core.files.storage import default_storage

from annotator.intake.labelstudio.plan import read_image
from pairdiff.labelstudio.refs import (
    MAX_REFERENCE_CHARS,
    ImageFinder,
    ImageNotFound,
)
from pairdiff.sources import open_source
from projects.creating import project_create
from tests.images import edited_pair

BUCKET = "our-bucket"


@pytest.fixture
def other(db):
    return project_create(slug="other", name="Other")


@pytest.fixture
def empty_source(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    with open_source(folder, max_entry_bytes=10**7) as source:
        yield source, ImageFinder(source.names())


def _answer(reference: str, project, empty_source) -> str:
    source, finder = empty_source
    with pytest.raises(ImageNotFound) as refused:
        read_image(reference, source, finder, project=project)
    return str(refused.value)


@pytest.mark.parametrize(
    "key",
    [
        "releases/other/1/images/1_a.png",
        "pairs/other/ab/abcdef.png",
        "imports/other/label-studio-0123/images.zip",
        "ls-objects/coffee_a.png",  # nobody's prefix at all
    ],
)
def test_another_projects_key_is_answered_as_a_missing_one(
    project, other, settings, empty_source, key
):
    settings.AWS_STORAGE_BUCKET_NAME = BUCKET
    stored = default_storage.save(key, io.BytesIO(edited_pair(1)[0]))
    reference = f"s3://{BUCKET}/{stored}"

    present = _answer(reference, project, empty_source)
    default_storage.delete(stored)
    missing = _answer(reference, project, empty_source)

    assert present == missing
    assert present.startswith("no file named") and "in bucket" not in present


@pytest.mark.parametrize(
    "path",
    [
        "pairs/cars/../../releases/other/1/images/1_a.png",
        "pairs/cars/./../other/ab/x.png",
        "pairs/cars//../other/ab/x.png",
        "/pairs/cars/../other/ab/x.png",
    ],
)
def test_no_walk_out_of_the_projects_prefix(project, other, settings, empty_source, path):
    settings.AWS_STORAGE_BUCKET_NAME = BUCKET
    default_storage.save("releases/other/1/images/1_a.png", io.BytesIO(edited_pair(1)[0]))
    default_storage.save("pairs/other/ab/x.png", io.BytesIO(edited_pair(1)[0]))

    answer = _answer(f"s3://{BUCKET}/{path}", project, empty_source)

    assert answer.startswith("no file named")


def test_the_projects_own_objects_are_read(project, settings, empty_source):
    settings.AWS_STORAGE_BUCKET_NAME = BUCKET
    data = edited_pair(2)[0]
    key = default_storage.save("pairs/cars/ab/own.png", io.BytesIO(data))
    source, finder = empty_source

    assert read_image(f"s3://{BUCKET}/{key}", source, finder, project=project) == (
        f"s3://{BUCKET}/{key}",
        data,
    )


def test_a_huge_reference_costs_microseconds_and_says_why(project, settings, empty_source):
    settings.AWS_STORAGE_BUCKET_NAME = BUCKET
    source, finder = empty_source
    reference = "a/" * 50_000 + "x.png"  # 100 KB, 50,001 parts

    started = time.process_time()
    with pytest.raises(ImageNotFound) as refused:
        finder.find(reference)
    with pytest.raises(ImageNotFound):
        read_image(f"s3://{BUCKET}/pairs/cars/" + reference, source, finder, project=project)
    spent = time.process_time() - started

    assert spent < 0.2
    assert f"over {MAX_REFERENCE_CHARS} characters" in str(refused.value)
    assert len(str(refused.value)) < 300  # the reference is not echoed whole


def test_a_reference_of_too_many_parts_is_refused(empty_source):
    _, finder = empty_source
    with pytest.raises(ImageNotFound) as refused:
        finder.find("/".join(["d"] * 200) + "/x.png")
    assert "folders" in str(refused.value)
