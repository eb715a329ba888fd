"""The project page with its pairs browser and a pair's history (console/views_pairs.py,
console/pairs.py)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotator.leasing import assignment_lease_next
from annotator.models import Assignment, Prediction
from review.agreement import agreement_compute
from review.models import Decision
from review.resolutions import resolution_record
from tests.console.helpers import _accepted_pair, _annotate, _login
from tests.factories import answer, make_gold_car_pair, make_pair


@pytest.fixture
def pair(project):
    return make_gold_car_pair(project)


def _client(client, user):
    client.force_login(user)
    return client


def test_project_page_shows_leads_the_manage_links_and_annotators_none(
    client, project, lead, annotator_1
):
    manage = [
        reverse("console:project_settings", args=["cars"]),
        reverse("console:members", args=["cars"]),
        reverse("console:upload", args=["cars"]),
        reverse("console:jobs", args=["cars"]),
        reverse("review:disputes", args=["cars"]),
        reverse("review:spot_check", args=["cars"]),
        "/review/cars/dashboard/",
    ]
    body = _login(client, lead).get("/p/cars/").content.decode()
    assert all(f'href="{url}"' in body for url in manage)
    client.logout()
    body = _login(client, annotator_1).get("/p/cars/").content.decode()
    assert not any(f'href="{url}"' in body for url in manage)


# --- the pairs browser -----------------------------------------------------------------------


def _pair_links(body: str) -> set[int]:
    return {int(pk) for pk in re.findall(r'class="pair-tile" href="/pairs/(\d+)/"', body)}


def test_pairs_browser_filters(client, project, lead, annotator_1, annotator_2):
    easy = _accepted_pair(project, [annotator_1, annotator_2], [0, 0, 96, 64])
    hard = _accepted_pair(project, [annotator_1, annotator_2], [20, 10, 40, 30])
    hinted = make_pair(project, category="counting")
    flagged = make_pair(project)
    Prediction.objects.create(pair=flagged, model_name="diff", flags=["tiny_change", "blur"])
    Prediction.objects.create(pair=hinted, model_name="diff", flags=["tiny"])
    leased = make_pair(project)
    Assignment.objects.create(pair=leased, annotator=lead, expires_at="2999-01-01T00:00Z")
    _login(client, lead)

    def shown(query: str) -> set[int]:
        response = client.get(f"/p/cars/?{query}")
        assert response.status_code == 200
        return _pair_links(response.content.decode())

    everything = {easy.pk, hard.pk, hinted.pk, flagged.pk, leased.pk}
    assert shown("") == everything
    assert shown("status=accepted") == {easy.pk, hard.pk}
    assert shown("difficulty=easy") == {easy.pk}
    assert shown("difficulty=hard&status=accepted") == {hard.pk}
    assert shown("difficulty=medium") == set()
    assert shown("category=counting") == {hinted.pk}
    assert shown("category=attribute") == {easy.pk, hard.pk}  # from the annotations' changes
    assert shown("flag=tiny") == {hinted.pk}
    assert shown("flag=tiny_change") == {flagged.pk}
    assert shown("annotator=annotator_2") == {easy.pk, hard.pk}
    assert shown("annotator=lead") == {leased.pk}
    assert shown("status=bogus&difficulty=impossible") == everything  # unknown values: ignored


def test_pairs_browser_keeps_filters_across_pages(client, project, lead):
    for _ in range(49):
        make_pair(project)
    body = _login(client, lead).get("/p/cars/?status=imported").content.decode()
    assert "Page 1 of 2" in body
    assert 'href="?status=imported&amp;page=2"' in body
    second = client.get("/p/cars/?status=imported&page=2").content.decode()
    assert len(_pair_links(second)) == 1


def test_tiles_show_the_difficulty_of_accepted_pairs(
    client, project, lead, annotator_1, annotator_2
):
    _accepted_pair(project, [annotator_1, annotator_2], [0, 0, 96, 64])
    body = _login(client, lead).get("/p/cars/").content.decode()
    assert '<span class="badge diff-easy"' in body


# --- a pair's history ------------------------------------------------------------------------


def test_pair_history_shows_leads_everything_that_happened(
    client, project, lead, annotator_1, annotator_2
):
    pair = make_pair(project)
    _annotate(project, annotator_1, answer(entity_a="red patch"))
    _annotate(project, annotator_2, answer(tier="good", entity_a="patch"))
    agreement_compute(pair_id=pair.pk)
    resolution_record(
        pair_id=pair.pk, lead=lead, decision=Decision.ACCEPT_1, comment="Box 1 is tighter."
    )

    body = _login(client, lead).get(f"/pairs/{pair.pk}/").content.decode()

    for text in (
        "annotator_1",
        "annotator_2",
        "Excellent",
        "Good",
        "red patch",  # annotation 1's entity
        "tier:one_good",  # the agreement's reason
        "Accept annotation 1</strong> by lead",
        "disputed → accepted",
        "Box 1 is tighter.",
        '<span class="event-kind">leased</span>',
        '<span class="event-kind">resolution:accept_1</span>',
        '<rect class="mark-1" x="20" y="10" width="20" height="20"',
    ):
        assert text in body, text
    assert body.count('<span class="badge lease-submitted">') == 2


def test_an_annotator_with_a_lease_sees_no_other_annotation(
    client, project, lead, annotator_1, annotator_2
):
    pair = make_pair(project)
    _annotate(project, annotator_1, answer(description="Only annotator one wrote this."))
    assignment_lease_next(project=project, user=annotator_2)

    body = _login(client, annotator_2).get(f"/pairs/{pair.pk}/").content.decode()

    assert "Only annotator one wrote this." not in body
    assert "annotator_1" not in body
    assert "History" not in body and "mark-1" not in body


def test_pairs_browser_searches_id_instruction_and_entity(
    client, project, lead, annotator_1, annotator_2
):
    boxed = _accepted_pair(project, [annotator_1, annotator_2], [20, 10, 40, 30])  # entity "patch"
    told = make_pair(project, instruction="Make the sky purple")
    named = make_pair(project, external_id="street-0042")
    _login(client, lead)

    def shown(query: str) -> set[int]:
        return _pair_links(client.get(f"/p/cars/?{query}").content.decode())

    assert shown("q=PURPLE") == {told.pk}
    assert shown("q=patch") == {boxed.pk}
    assert shown("q=street-00") == {named.pk}
    assert shown(f"q={told.pk}") >= {told.pk}
    assert shown("q=nothing-like-this") == set()
    assert shown("q=patch&status=imported") == set()  # with the other filters
    body = client.get("/p/cars/?q=purple").content.decode()
    assert 'value="purple"' in body and "Clear filters" in body  # kept in the box


def test_project_page_shows_pairs_to_leads_only(client, project, pair, lead, annotator_1):
    url = reverse("console:project", args=[project.slug])
    lead_body = _client(client, lead).get(url).content.decode()
    assert reverse("console:pair", args=[pair.pk]) in lead_body
    client.logout()
    annotator_body = _client(client, annotator_1).get(url).content.decode()
    assert reverse("console:pair", args=[pair.pk]) not in annotator_body


def test_project_page_is_not_found_for_outsiders(client, project, outsider):
    response = _client(client, outsider).get(reverse("console:project", args=[project.slug]))
    assert response.status_code == 404


def test_pair_page_shows_both_images_and_the_known_answer_to_leads(client, pair, lead):
    body = _client(client, lead).get(reverse("console:pair", args=[pair.pk])).content.decode()

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
        reverse("console:pair", args=[pair.pk]),
        reverse("annotator:pair_image", args=[pair.pk, "a"]),
        reverse("annotator:pair_thumb", args=[pair.pk, "b"]),
    ):
        assert client.get(url).status_code == 404


def test_annotator_with_a_lease_sees_the_images_but_not_the_answer(client, pair, annotator_1):
    Assignment.objects.create(pair=pair, annotator=annotator_1, expires_at="2999-01-01T00:00Z")
    _client(client, annotator_1)

    body = client.get(reverse("console:pair", args=[pair.pk])).content.decode()

    assert "The patch turned blue." not in body and "<rect" not in body
    assert client.get(reverse("annotator:pair_image", args=[pair.pk, "a"])).status_code == 200
