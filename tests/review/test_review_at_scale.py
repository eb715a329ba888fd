"""Review pages of a large project (issue 28): the disputes queue filtered by category or
reason counts up to a cap ("1,000+") and still serves every page, in the queue's order; the
spot check draws from the right pairs by probing random ids; the flags the pairs browser
offers are those of the project's own predictions."""

from __future__ import annotations

import random

import pytest
from rest_framework.test import APIClient

from annotator.leasing import assignment_lease_next
from annotator.models import Pair, PairStatus, Prediction
from annotator.submitting import annotation_submit
from config import paging
from console.pairs import pairs_filter_choices
from projects.creating import project_create
from projects.models import Preset
from review import selectors, views
from review.agreement import agreement_compute
from review.selectors import disputes_queue, spot_check_sample
from tests.factories import answer, make_accepted, make_pair


def _disputed(project, annotators, category: str) -> Pair:
    pair = make_pair(project)
    bodies = (answer(category=category), answer(category=category, boxes_b=[[30, 20, 50, 40]]))
    for user, body in zip(annotators, bodies, strict=True):
        assignment = assignment_lease_next(project=project, user=user)
        assert assignment is not None
        annotation_submit(assignment_id=assignment.pk, user=user, body=body)
    agreement_compute(pair_id=pair.pk)
    pair.refresh_from_db()
    assert pair.status == PairStatus.DISPUTED
    return pair


@pytest.fixture
def queue(project, annotator_1, annotator_2):
    """Seven disputed pairs: five by "attribute" changes, two by "object"."""
    categories = ["attribute", "object", "attribute", "attribute", "object", "attribute"]
    return [_disputed(project, [annotator_1, annotator_2], c) for c in [*categories, "attribute"]]


def _page(client, query: str) -> tuple[list[int], str]:
    response = client.get(f"/review/cars/disputes/?{query}")
    assert response.status_code == 200
    page = response.context["page"]
    text = response.content.decode()
    return [p.pk for p in page.object_list], text


@pytest.mark.parametrize("cap", [3, 1000])
def test_a_category_walks_every_page_in_order_whatever_the_cap(
    client, project, queue, lead, monkeypatch, cap
):
    monkeypatch.setattr(views, "DISPUTES_PER_PAGE", 2)
    monkeypatch.setattr(views, "DISPUTES_COUNT_CAP", cap)
    client.force_login(lead)
    expected = list(disputes_queue(project, category="attribute").values_list("pk", flat=True))
    assert len(expected) == 5

    seen, number = [], 1
    while True:
        ids, text = _page(client, f"category=attribute&page={number}")
        seen += ids
        if f"page={number + 1}" not in text:
            break
        number += 1

    assert seen == expected
    assert number == 3
    capped = cap < len(expected)
    assert ("Page 3 · over 3 disputes" in text) is capped
    assert ("Page 3 of 3" in text) is not capped


def test_the_capped_count_says_so(client, project, queue, lead, monkeypatch):
    monkeypatch.setattr(views, "DISPUTES_COUNT_CAP", 3)
    client.force_login(lead)

    response = client.get("/review/cars/disputes/?category=attribute")

    assert response.context["page"].paginator.capped
    assert ">3+<" in response.content.decode()
    uncapped = client.get("/review/cars/disputes/?category=object")
    assert not uncapped.context["page"].paginator.capped
    assert ">2<" in uncapped.content.decode()


def test_a_page_past_the_end_of_a_capped_list_shows_the_first(
    client, project, queue, lead, monkeypatch
):
    monkeypatch.setattr(views, "DISPUTES_PER_PAGE", 2)
    monkeypatch.setattr(views, "DISPUTES_COUNT_CAP", 3)
    client.force_login(lead)
    expected = list(disputes_queue(project, category="attribute").values_list("pk", flat=True))

    ids, _ = _page(client, "category=attribute&page=9")

    assert ids == expected[:2]


def test_the_next_dispute_is_the_longest_waiting_other_one(client, project, queue, lead):
    client.force_login(lead)
    first, second = disputes_queue(project)[:2]

    response = client.get(f"/review/pairs/{first.pk}/")

    assert response.context["urls"]["next"] == f"/review/pairs/{second.pk}/"


def test_the_flags_offered_are_the_projects_own(project):
    other_project = project_create(slug="boats", name="Boats", preset=Preset.MINCU)
    mine, theirs = make_pair(project), make_pair(other_project)
    Prediction.objects.create(pair=mine, model_name="m", flags=["blur", "tiny"])
    Prediction.objects.create(pair=mine, model_name="n", flags=["blur"])
    Prediction.objects.create(pair=mine, model_name="o", flags=[])
    Prediction.objects.create(pair=theirs, model_name="m", flags=["watermark"])

    assert pairs_filter_choices(project)["flags"] == ["blur", "tiny"]
    assert pairs_filter_choices(other_project)["flags"] == ["watermark"]


@pytest.mark.parametrize("by_probes", [True, False])
def test_the_spot_check_draws_distinct_auto_accepted_pairs(
    project, annotator_1, annotator_2, monkeypatch, by_probes
):
    accepted = make_accepted(project, [annotator_1, annotator_2], [answer()] * 6)
    other = [make_pair(project) for _ in range(6)]  # imported: never drawn
    if by_probes:
        monkeypatch.setattr(selectors, "SAMPLE_BY_PROBES", 0)
    auto = {p.pk for p in accepted}

    for seed in range(5):
        drawn = [p.pk for p in spot_check_sample(project, n=3, seed=seed)]
        assert len(set(drawn)) == 3 and set(drawn) <= auto
        assert drawn == [p.pk for p in spot_check_sample(project, n=3, seed=seed)]
    every = {p.pk for p in spot_check_sample(project, n=20, seed=1)}  # more than there are
    assert every == auto
    assert not every & {p.pk for p in other}


def test_probing_gives_up_on_a_sparse_set(project, annotator_1, annotator_2, monkeypatch):
    """Too few hits in the rounds: every candidate is read, as on a small project."""
    make_accepted(project, [annotator_1, annotator_2], [answer()])
    for _ in range(30):
        make_pair(project)
    monkeypatch.setattr(selectors, "SAMPLE_BY_PROBES", 0)
    monkeypatch.setattr(selectors, "PROBE_ROUNDS", 1)
    assert selectors._probed(Pair.objects.none(), random.Random(0), range(5), 1) is None
    assert len(spot_check_sample(project, n=1, seed=3)) == 1


def test_the_api_walks_a_capped_category_by_its_next_links(project, queue, lead, monkeypatch):
    monkeypatch.setattr(paging, "COUNT_CAP", 3)
    monkeypatch.setattr(paging.FlaggedCountPagination, "page_size", 2)
    api = APIClient()
    api.force_authenticate(lead)
    expected = list(disputes_queue(project, category="attribute").values_list("pk", flat=True))

    first = api.get("/api/v1/projects/cars/disputes/?category=attribute").json()
    seen, body = [], first
    while True:
        seen += [row["id"] for row in body["results"]]
        if not body["next"]:
            break
        body = api.get(body["next"]).json()

    assert (first["count"], first["count_capped"]) == (3, True)
    assert seen == expected and len(expected) == 5
    exact = api.get("/api/v1/projects/cars/disputes/?category=object").json()
    assert (exact["count"], exact["count_capped"]) == (2, False)
    whole = api.get("/api/v1/projects/cars/disputes/").json()
    assert (whole["count"], whole["count_capped"]) == (7, False)
