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
    response = client.post(reverse("console:project_new"), _settings_data(gold_feedback="on"))
    assert response.status_code == 302
    assert Project.objects.get(slug="bikes").gold_feedback is True


def test_a_role_change_reads_an_annotator(client, project, lead):
    other = member(project, "sam", Role.LEAD)
    client.force_login(lead)
    response = client.post(
        reverse("console:member_role", args=[project.slug, other.pk]), {"role": "annotator"}
    )
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["sam is now an annotator."]


def test_adding_a_member_reads_an_annotator(client, project, lead):
    member(project, "kim", Role.RESEARCHER).memberships.all().delete()
    client.force_login(lead)
    response = client.post(
        reverse("console:members", args=[project.slug]),
        {"username": "kim", "role": "annotator", "password": ""},
    )
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "kim is now an annotator of the project."
    ]


def test_the_api_docs_page_links_back_to_the_app(client, db):
    page = client.get(reverse("api:docs")).content.decode()
    assert f'<a href="{reverse("annotator:home")}"' in page and "Back to Diffmark" in page


def test_an_edited_submitted_pair_is_labelled_as_such(client, project, annotator_1):
    from annotator.leasing import assignment_lease_next
    from annotator.submitting import annotation_submit
    from tests.factories import answer, make_pairs

    first, second = make_pairs(project, 2)
    for _ in range(2):
        assignment = assignment_lease_next(project=project, user=annotator_1)
        annotation_submit(assignment_id=assignment.pk, user=annotator_1, body=answer())
    edited = annotator_1.assignments.get(pair=first)
    client.force_login(annotator_1)

    response = client.post(reverse("annotator:annotation_edit", args=[edited.pk]))
    workspace = client.get(response["Location"]).content.decode()
    assert f"<h1>{first.name}</h1> <span" in workspace
    assert "editing your submitted answer" in workspace
    annotation_submit(assignment_id=edited.pk, user=annotator_1, body=answer())

    home = client.get(reverse("console:project", args=[project.slug])).content.decode()
    assert f'<span>{first.name} <span class="badge edited"' in home
    assert f"<span>{second.name}</span>" in home  # never taken back: no label
