"""Small things a day of leading found, on the server's pages: the new-project form keeps what it
asks, messages read as English, and the API docs page has a way back to the app."""

from __future__ import annotations

from django.contrib.messages import get_messages
from django.urls import reverse

from projects.models import Project, Role
from tests.conftest import member


def _settings_data(**changes) -> dict:
    return {
        "name": "Bikes",
        "slug": "bikes",
        "description": "",
        "preset": "mincu",
        "categories_text": "",
        "overlap": "2",
        "iou_threshold": "0.5",
        "gold_percent": "0",
        "synonyms_text": "",
        "guidelines": "",
        "vocabulary_text": "",
        "licence": "",
    } | changes


def test_the_new_project_form_keeps_gold_feedback(client, project, lead):
    client.force_login(lead)
    response = client.post(reverse("annotator:project_new"), _settings_data(gold_feedback="on"))
    assert response.status_code == 302
    assert Project.objects.get(slug="bikes").gold_feedback is True


def test_a_role_change_reads_an_annotator(client, project, lead):
    other = member(project, "sam", Role.LEAD)
    client.force_login(lead)
    response = client.post(
        reverse("annotator:member_role", args=[project.slug, other.pk]), {"role": "annotator"}
    )
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["sam is now an annotator."]


def test_adding_a_member_reads_an_annotator(client, project, lead):
    member(project, "kim", Role.RESEARCHER).memberships.all().delete()
    client.force_login(lead)
    response = client.post(
        reverse("annotator:members", args=[project.slug]),
        {"username": "kim", "role": "annotator", "password": ""},
    )
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "kim is now an annotator of the project."
    ]


def test_the_api_docs_page_links_back_to_the_app(client, db):
    page = client.get(reverse("api:docs")).content.decode()
    assert f'<a href="{reverse("annotator:home")}"' in page and "Back to Diffmark" in page
