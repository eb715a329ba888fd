"""Deep pages read ids first, and the pairs API walks by cursor: the same rows as before."""

from __future__ import annotations

import pytest
from django.core.paginator import Paginator
from rest_framework.test import APIClient

from annotator.models import Pair
from config import paging
from config.paging import CappedCountPaginator, IdsFirstPaginator
from tests.factories import make_pairs


@pytest.fixture
def pairs(project):
    return make_pairs(project, 7)


@pytest.fixture
def always_deep(monkeypatch):
    monkeypatch.setattr(paging, "DEEP", 0)


@pytest.mark.parametrize("order", ["id", "-id", "external_id"])
def test_ids_first_pages_hold_the_rows_plain_pages_hold(project, pairs, always_deep, order):
    rows = Pair.objects.filter(project=project).order_by(order)

    for number in (1, 2, 3):
        plain = Paginator(rows, 3).page(number)
        ids_first = IdsFirstPaginator(rows, 3).page(number)
        assert list(ids_first.object_list) == list(plain.object_list)
        assert (ids_first.has_next(), ids_first.number) == (plain.has_next(), plain.number)


def test_shallow_pages_are_read_in_one_query(project, pairs, django_assert_num_queries):
    rows = Pair.objects.filter(project=project).order_by("id")
    paginator = IdsFirstPaginator(rows, 3)
    paginator.count  # noqa: B018  (counted once, as Paginator does)

    with django_assert_num_queries(1):
        list(paginator.page(2).object_list)


def test_the_pairs_api_walks_every_pair_by_cursor(project, pairs, lead, monkeypatch):
    monkeypatch.setattr(paging.IdCursorPagination, "page_size", 3)
    client = APIClient()
    client.force_authenticate(lead)
    seen, url, pages = [], f"/api/v1/projects/{project.slug}/pairs/?cursor=&status=imported", 0
    while url:
        body = client.get(url).json()
        seen += [p["id"] for p in body["results"]]
        url, pages = body["next"], pages + 1
    assert seen == sorted(p.pk for p in pairs)
    assert pages == 3


def test_the_pairs_api_keeps_its_page_numbers(project, pairs, lead):
    client = APIClient()
    client.force_authenticate(lead)

    body = client.get(f"/api/v1/projects/{project.slug}/pairs/?page=1").json()

    assert body["count"] == 7
    assert [p["id"] for p in body["results"]] == sorted(p.pk for p in pairs)


@pytest.mark.parametrize("cap", [2, 4, 7, 100])
def test_capped_pages_hold_the_rows_plain_pages_hold(project, pairs, cap):
    rows = Pair.objects.filter(project=project).order_by("-id")
    paginator = CappedCountPaginator(rows, 3, cap=cap)

    assert (paginator.count, paginator.capped) == (min(7, cap), cap < 7)
    for number in (1, 2, 3):
        plain = Paginator(rows, 3).page(number)
        capped = paginator.page(number)
        assert list(capped.object_list) == list(plain.object_list)
        assert capped.has_next() == plain.has_next()
        assert capped.has_previous() == plain.has_previous()


def test_a_capped_list_counts_no_further_than_the_cap(project, pairs, django_assert_num_queries):
    rows = Pair.objects.filter(project=project).order_by("id")
    paginator = CappedCountPaginator(rows, 3, cap=2)

    with django_assert_num_queries(1) as counted:
        assert paginator.count == 2
    assert "LIMIT 3" in counted.captured_queries[0]["sql"].upper()
    assert paginator.get_page(9).number == 1  # past the rows: the first page
    assert paginator.get_page("x").number == 1
