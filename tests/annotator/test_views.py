import pytest
from django.urls import reverse

from annotator.models import Assignment, Pair
from annotator.services import PairInput, pair_create
from review.services import gold_answer_set
from tests.conftest import PASSWORD
from tests.images import edited_pair


@pytest.fixture
def pair(project):
    a, b = edited_pair()
    pair = pair_create(project=project, pair_input=PairInput(a, b, external_id="car-1"))
    gold_answer_set(
        pair=pair,
        changes=[
            {
                "category": "attribute",
                "description": "The patch turned blue.",
                "entity_a": "patch",
                "entity_b": "patch",
                "boxes_a": [[20, 10, 40, 30]],
                "boxes_b": [[20, 10, 40, 30]],
            }
        ],
    )
    return pair


def _client(client, user):
    client.force_login(user)
    return client


def test_login_page_logs_a_member_in(client, lead):
    page = client.get(reverse("login"))
    assert page.status_code == 200 and b"Log in" in page.content

    response = client.post(reverse("login"), {"username": "lead", "password": PASSWORD})

    assert response.status_code == 302 and response["Location"] == reverse("annotator:home")


def test_home_requires_login(client, db):
    response = client.get(reverse("annotator:home"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_home_lists_only_the_members_projects(client, project, annotator_1, outsider):
    assert project.name in _client(client, annotator_1).get("/").content.decode()
    client.logout()
    body = _client(client, outsider).get("/").content.decode()
    assert project.name not in body and "not a member" in body


def test_project_page_shows_pairs_to_leads_only(client, project, pair, lead, annotator_1):
    url = reverse("annotator:project", args=[project.slug])
    lead_body = _client(client, lead).get(url).content.decode()
    assert reverse("annotator:pair", args=[pair.pk]) in lead_body
    client.logout()
    annotator_body = _client(client, annotator_1).get(url).content.decode()
    assert reverse("annotator:pair", args=[pair.pk]) not in annotator_body


def test_project_page_is_not_found_for_outsiders(client, project, outsider):
    response = _client(client, outsider).get(reverse("annotator:project", args=[project.slug]))
    assert response.status_code == 404


def test_pair_page_shows_both_images_and_the_known_answer_to_leads(client, pair, lead):
    body = _client(client, lead).get(reverse("annotator:pair", args=[pair.pk])).content.decode()

    assert reverse("annotator:pair_image", args=[pair.pk, "a"]) in body
    assert reverse("annotator:pair_image", args=[pair.pk, "b"]) in body
    assert 'viewBox="0 0 96 64"' in body
    assert '<rect x="20" y="10" width="20" height="20"' in body
    assert "The patch turned blue." in body


@pytest.mark.parametrize("who", ["annotator_1", "researcher", "outsider"])
def test_pair_page_and_images_are_hidden_from_others(client, pair, request, who):
    user = request.getfixturevalue(who)
    _client(client, user)
    for url in (
        reverse("annotator:pair", args=[pair.pk]),
        reverse("annotator:pair_image", args=[pair.pk, "a"]),
        reverse("annotator:pair_thumb", args=[pair.pk, "b"]),
    ):
        assert client.get(url).status_code == 404


def test_annotator_with_a_lease_sees_the_images_but_not_the_answer(client, pair, annotator_1):
    Assignment.objects.create(pair=pair, annotator=annotator_1, expires_at="2999-01-01T00:00Z")
    _client(client, annotator_1)

    body = client.get(reverse("annotator:pair", args=[pair.pk])).content.decode()

    assert "The patch turned blue." not in body and "<rect" not in body
    assert client.get(reverse("annotator:pair_image", args=[pair.pk, "a"])).status_code == 200


def test_image_view_serves_the_original_bytes(client, pair, lead):
    response = _client(client, lead).get(reverse("annotator:pair_image", args=[pair.pk, "b"]))

    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "private" in response["Cache-Control"]
    assert b"".join(response.streaming_content) == Pair.objects.get().image_b.read()


def test_image_view_rejects_an_unknown_side(client, pair, lead):
    response = _client(client, lead).get(reverse("annotator:pair_image", args=[pair.pk, "c"]))
    assert response.status_code == 404
