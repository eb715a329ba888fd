"""An image over the size limit is refused while it streams in, before anything reads it."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.services import token_create
from annotator.models import Pair
from tests.images import edited_pair, photo_bytes

LIMIT = 20_000


@pytest.fixture
def big(settings):
    settings.DIFFMARK_MAX_IMAGE_BYTES = LIMIT
    data = photo_bytes(size=(400, 300))
    assert len(data) > LIMIT
    return data


def _files(big: bytes) -> dict:
    _, b = edited_pair(1)
    return {
        "image_a": SimpleUploadedFile("a.png", big, "image/png"),
        "image_b": SimpleUploadedFile("b.png", b, "image/png"),
    }


def test_with_a_token_the_api_skips_the_file_as_it_streams(project, lead, big):
    _, secret = token_create(user=lead, name="t")
    client = Client(HTTP_AUTHORIZATION=f"Token {secret}")

    response = client.post(f"/api/v1/projects/{project.slug}/pairs/", _files(big))

    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["image_a"]
    # "at least": the handler stopped counting at the limit; the rest was never kept.
    assert error["message"].startswith("image_a: file is at least ")
    assert "over the limit of 19.5 KB" in error["message"]
    assert not Pair.objects.exists()


def test_with_a_session_the_size_is_checked_before_the_file_is_read(
    project, lead, big, monkeypatch
):
    """Session requests are parsed by the CSRF check before the view: then the size decides."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    client.get(f"/p/{project.slug}/upload/")
    token = client.cookies["csrftoken"].value
    monkeypatch.setattr("api.pairs.PairInput", lambda **kw: pytest.fail("the file was read"))

    response = client.post(
        f"/api/v1/projects/{project.slug}/pairs/", _files(big), HTTP_X_CSRFTOKEN=token
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["image_a"]
    assert (
        error["message"] == f"image_a: file is {len(big) / 1024:.1f} KB, over the limit of 19.5 KB"
    )


def test_the_upload_page_refuses_an_oversized_image_by_name(project, lead, big):
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    client.get(f"/p/{project.slug}/upload/")
    token = client.cookies["csrftoken"].value

    response = client.post(
        f"/p/{project.slug}/upload/pair/", {**_files(big), "csrfmiddlewaretoken": token}
    )

    assert response.status_code == 400
    assert "image_a: file is at least" in response.content.decode()
    assert "This field is required" not in response.content.decode()
    assert not Pair.objects.exists()


def test_the_upload_page_still_checks_csrf(project, lead, big):
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)

    response = client.post(f"/p/{project.slug}/upload/pair/", _files(big))

    assert response.status_code == 403


def test_images_within_the_limit_are_uploaded(project, lead, settings):
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    client.get(f"/p/{project.slug}/upload/")
    token = client.cookies["csrftoken"].value
    a, b = edited_pair(2)
    files = {"image_a": SimpleUploadedFile("a.png", a), "image_b": SimpleUploadedFile("b.png", b)}

    response = client.post(
        f"/p/{project.slug}/upload/pair/", {**files, "csrfmiddlewaretoken": token}
    )

    assert response.status_code == 302 and Pair.objects.count() == 1
