import json
import re

import pytest
from django.urls import reverse

from annotator.models import Assignment, Pair, Prediction
from tests.conftest import PASSWORD
from tests.factories import answer, make_gold_car_pair, make_pair


@pytest.fixture
def pair(project):
    return make_gold_car_pair(project)


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


def test_home_shows_progress_and_a_start_button(client, project, annotator_1):
    make_pair(project)
    body = _client(client, annotator_1).get("/").content.decode()

    assert "Left for you" in body and "Start annotating" in body
    assert reverse("annotator:lease_next", args=[project.slug]) in body


def test_start_leases_a_pair_and_opens_the_workspace(client, project, annotator_1):
    pair = make_pair(project)
    _client(client, annotator_1)

    response = client.post(reverse("annotator:lease_next", args=[project.slug]))

    assignment = Assignment.objects.get(annotator=annotator_1)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotator:workspace", args=[assignment.pk])
    page = client.get(response["Location"]).content.decode()
    assert reverse("annotator:pair_image", args=[pair.pk, "a"]) in page
    assert 'id="ws-config"' in page


def test_htmx_start_swaps_in_the_workspace_and_pushes_its_url(client, project, annotator_1):
    make_pair(project)
    _client(client, annotator_1)

    response = client.post(
        reverse("annotator:lease_next", args=[project.slug]), HTTP_HX_REQUEST="true"
    )

    assignment = Assignment.objects.get()
    assert response.status_code == 200
    assert response["HX-Push-Url"] == reverse("annotator:workspace", args=[assignment.pk])
    assert b"<html" not in response.content and b"data-workspace" in response.content


def test_start_with_nothing_left_says_so(client, project, annotator_1):
    _client(client, annotator_1)
    response = client.post(reverse("annotator:lease_next", args=[project.slug]), follow=True)
    assert "Nothing left for you" in response.content.decode()


def test_researchers_cannot_take_pairs(client, project, researcher):
    make_pair(project)
    response = _client(client, researcher).post(
        reverse("annotator:lease_next", args=[project.slug])
    )
    assert response.status_code == 403


def test_workspace_of_someone_else_is_not_found(client, project, annotator_1, annotator_2):
    make_pair(project)
    _client(client, annotator_1).post(reverse("annotator:lease_next", args=[project.slug]))
    assignment = Assignment.objects.get()
    client.logout()

    response = _client(client, annotator_2).get(
        reverse("annotator:workspace", args=[assignment.pk])
    )
    assert response.status_code == 404


def test_workspace_keeps_the_draft_and_hides_predictions_when_the_project_says_so(
    client, project, annotator_1
):
    pair = make_pair(project)
    Prediction.objects.create(pair=pair, model_name="pixeldiff", changes=answer()["changes"])
    _client(client, annotator_1).post(reverse("annotator:lease_next", args=[project.slug]))
    assignment = Assignment.objects.get()
    assignment.draft = {"tier": "good", "changes": []}
    assignment.save()
    url = reverse("annotator:workspace", args=[assignment.pk])

    shown = _ws_config(client.get(url))
    project.show_predictions = False
    project.save()
    hidden = _ws_config(client.get(url))

    assert shown["draft"]["tier"] == "good"
    assert shown["predictions"][0]["changes"][0]["boxes_a"] == [[20, 10, 40, 30]]
    assert hidden["predictions"] == []


def _ws_config(response) -> dict:
    match = re.search(r'<script id="ws-config"[^>]*>(.*?)</script>', response.content.decode())
    assert match, "the workspace page has its config"
    return json.loads(match[1])


def test_an_image_lost_from_storage_is_a_404_not_a_500(client, project, lead):
    pair = make_pair(project)
    pair.image_a.storage.delete(pair.image_a.name)
    client.force_login(lead)
    response = client.get(reverse("annotator:pair_image", args=[pair.pk, "a"]))
    assert response.status_code == 404
