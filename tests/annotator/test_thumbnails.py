"""List thumbnails are made from the original on the first request, then served as stored."""

import io

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse
from PIL import Image

from annotator import thumbnails
from annotator.models import Pair
from annotator.services import PairInput, pair_create
from tests.images import encode, photo


@pytest.fixture
def tall_pair(project):
    """A is 400×600 (shrinks to 213×320), B is 96×64 (kept at its size)."""
    a = encode(photo(size=(400, 600)))
    b = encode(photo(size=(96, 64), offset=7), "JPEG")
    return pair_create(project=project, pair_input=PairInput(a, b, external_id="tall"))


def _get(client, pair, side):
    return client.get(reverse("annotator:pair_thumb", args=[pair.pk, side]))


def _image(response) -> Image.Image:
    return Image.open(io.BytesIO(b"".join(response.streaming_content)))


def test_a_stored_pair_has_no_thumbnail_until_one_is_asked_for(tall_pair):
    assert (tall_pair.thumb_a.name, tall_pair.thumb_b.name) == ("", "")
    assert not default_storage.exists(thumbnails.thumbnail_name(tall_pair, "a"))


def test_the_first_request_makes_stores_and_records_the_thumbnail(client, lead, tall_pair):
    client.force_login(lead)

    response = _get(client, tall_pair, "a")

    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    with _image(response) as thumb:
        assert (thumb.format, thumb.size) == ("JPEG", (213, 320))
    tall_pair.refresh_from_db()
    sha = tall_pair.sha256_a
    assert tall_pair.thumb_a.name == f"thumbs/{tall_pair.project.slug}/{sha[:2]}/{sha}.jpg"
    assert default_storage.exists(tall_pair.thumb_a.name)
    assert tall_pair.thumb_b.name == ""  # only the side asked for


def test_later_requests_serve_the_stored_thumbnail_without_decoding(
    client, lead, tall_pair, monkeypatch
):
    client.force_login(lead)
    first = b"".join(_get(client, tall_pair, "b").streaming_content)

    def never(*args, **kwargs):
        raise AssertionError("made a thumbnail again")

    monkeypatch.setattr(thumbnails, "make_thumbnail", never)
    second = _get(client, tall_pair, "b")

    assert second.status_code == 200
    assert b"".join(second.streaming_content) == first
    with _image(_get(client, tall_pair, "b")) as thumb:
        assert thumb.size == (96, 64)  # never enlarged


def test_pairs_sharing_an_image_share_its_thumbnail(client, lead, project, tall_pair):
    other = pair_create(
        project=project,
        pair_input=PairInput(
            tall_pair.image_a.read(), encode(photo(offset=30)), external_id="same-a"
        ),
    )
    client.force_login(lead)

    _get(client, tall_pair, "a")
    _get(client, other, "a")

    names = set(Pair.objects.values_list("thumb_a", flat=True))
    assert len(names) == 1 and default_storage.exists(names.pop())


def test_a_lost_original_is_a_404_not_a_500(client, lead, tall_pair):
    default_storage.delete(tall_pair.image_a.name)
    client.force_login(lead)

    assert _get(client, tall_pair, "a").status_code == 404
    tall_pair.refresh_from_db()
    assert tall_pair.thumb_a.name == ""


def test_a_lost_thumbnail_is_made_again(client, lead, tall_pair):
    client.force_login(lead)
    first = b"".join(_get(client, tall_pair, "a").streaming_content)
    tall_pair.refresh_from_db()
    default_storage.delete(tall_pair.thumb_a.name)

    again = _get(client, tall_pair, "a")

    assert again.status_code == 200
    assert b"".join(again.streaming_content) == first
    assert default_storage.exists(tall_pair.thumb_a.name)
