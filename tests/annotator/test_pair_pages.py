"""The pairs browser of a large project: pages by key in each order, counts that stop early,
and pairs per status read from the stored counts with their time (issue 28)."""

from __future__ import annotations

import re

import pytest

from annotator.models import Pair, PairCounts, PairStatus, Prediction
from annotator.pair_counts import pair_counts_of, pair_counts_refresh
from console import pair_pages
from console.pair_pages import END, pairs_page
from console.pairs import SORT_ORDERS, PairFilters, pairs_browse
from tests.factories import answer, make_accepted, make_pair

STATUSES = [
    PairStatus.IMPORTED,
    PairStatus.ACCEPTED,
    PairStatus.DISPUTED,
    PairStatus.IMPORTED,
    PairStatus.REJECTED,
    PairStatus.IN_ANNOTATION,
    PairStatus.DISPUTED,
    PairStatus.IMPORTED,
    PairStatus.SCREENED_OUT,
    PairStatus.ACCEPTED,
]


@pytest.fixture
def pairs(project, annotator_1, annotator_2, settings, monkeypatch):
    """Ten pairs in mixed statuses, hints, words and flags, two annotated (category
    "attribute", entity "patch"); the project counts as large; windows of 2 ids."""
    settings.DIFFMARK_FIGURES_LIVE_PAIRS = 4
    monkeypatch.setattr(pair_pages, "WINDOW", 2)
    made = make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])
    made += [
        make_pair(
            project,
            category="counting" if i % 3 == 0 else "",
            instruction="Paint the umbrella" if i % 2 else "Move the cup",
        )
        for i in range(len(STATUSES))
    ]
    for pair, status in zip(made[2:], STATUSES, strict=True):
        Pair.objects.filter(pk=pair.pk).update(status=status)
    Prediction.objects.create(pair=made[6], model_name="m", flags=["blur"])
    Prediction.objects.create(pair=made[9], model_name="m", flags=["blur", "tiny"])
    return made


def _walk(project, filters: PairFilters, sort: str, *, backward: bool = False) -> list[int]:
    """Every pair of the view, page by page (3 a page), by the pages' own links."""
    seen: list[list[int]] = []
    cursor: dict[str, str] = {"before": END} if backward else {}
    for _ in range(20):
        page = pairs_page(
            project,
            filters,
            sort=sort,
            per_page=3,
            after=cursor.get("after", ""),
            before=cursor.get("before", ""),
        )
        seen.append([p.pk for p in page.object_list])
        following = page.previous_before if backward else page.next_after
        if following is None:
            break
        cursor = {"before": following} if backward else {"after": following}
    if backward:
        seen.reverse()
    return [pk for ids in seen for pk in ids]


def _expected(project, filters: PairFilters, sort: str) -> list[int]:
    """The same view as a small project reads it (one query, in the same order)."""
    return list(
        pairs_browse(project, filters).order_by(*SORT_ORDERS[sort]).values_list("pk", flat=True)
    )


FILTERS = [
    PairFilters(),
    PairFilters(status="imported"),
    PairFilters(category="counting"),
    PairFilters(category="attribute"),  # the annotations' changes
    PairFilters(q="umbrella"),
    PairFilters(q="patch"),  # an entity label
    PairFilters(flag="blur"),
    PairFilters(status="imported", q="umbrella", category="counting"),
    PairFilters(q="nothing-like-this"),
]


@pytest.mark.parametrize("sort", ["oldest", "newest", "status"])
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f.query() or "none")
def test_pages_by_key_hold_the_same_pairs_in_the_same_order(project, pairs, filters, sort):
    expected = _expected(project, filters, sort)

    assert _walk(project, filters, sort) == expected
    assert _walk(project, filters, sort, backward=True) == expected


def test_previous_goes_back_to_the_page_before(project, pairs):
    first = pairs_page(project, PairFilters(), sort="oldest", per_page=3)
    second = pairs_page(project, PairFilters(), sort="oldest", per_page=3, after=first.next_after)
    assert second.previous_before is not None
    back = pairs_page(
        project, PairFilters(), sort="oldest", per_page=3, before=second.previous_before
    )
    assert [p.pk for p in back.object_list] == [p.pk for p in first.object_list]
    assert back.previous_before is None  # nothing before the first page


def test_a_bad_cursor_starts_at_the_beginning(project, pairs):
    for cursor in ("x", "accepted.12", ".99999999999999999999", "-4"):
        page = pairs_page(project, PairFilters(), sort="oldest", per_page=3, after=cursor)
        assert [p.pk for p in page.object_list] == _expected(project, PairFilters(), "oldest")[:3]


def test_filtered_views_count_up_to_the_cap(project, pairs, monkeypatch):
    umbrella = PairFilters(q="umbrella")
    page = pairs_page(project, umbrella, sort="oldest", per_page=3)
    assert (page.count, page.count_capped) == (5, False)

    monkeypatch.setattr(pair_pages, "COUNT_CAP", 3)
    page = pairs_page(project, umbrella, sort="oldest", per_page=3)
    assert (page.count, page.count_capped) == (3, True)


def test_filtered_views_count_no_further_than_the_windows(project, pairs, monkeypatch):
    monkeypatch.setattr(pair_pages, "COUNT_WINDOWS", 2)  # windows of 2 then 8 ids
    umbrella = PairFilters(q="umbrella")
    low = min(p.pk for p in pairs)
    in_windows = pairs_browse(project, umbrella, window=(low, low + 9)).count()
    assert 0 < in_windows < pairs_browse(project, umbrella).count()

    page = pairs_page(project, umbrella, sort="oldest", per_page=3)

    assert (page.count, page.count_capped) == (in_windows, True)
    assert [p.pk for p in page.object_list] == _expected(project, umbrella, "oldest")[:3]


def test_unfiltered_views_show_the_stored_counts(project, pairs):
    pair_counts_refresh(project.pk)
    make_pair(project)  # after the count

    assert pairs_page(project, PairFilters(), sort="oldest", per_page=3).count == 12
    page = pairs_page(project, PairFilters(status="imported"), sort="oldest", per_page=3)
    assert page.count == 3


def test_the_page_of_a_large_project_links_pages_by_key(client, project, pairs, lead):
    client.force_login(lead)

    body = client.get("/p/cars/?sort=newest&q=umbrella").content.decode()

    shown = [int(pk) for pk in re.findall(r'class="pair-tile" href="/pairs/(\d+)/"', body)]
    assert shown == _expected(project, PairFilters(q="umbrella"), "newest")
    assert '<option value="newest" selected>' in body
    assert "data-counted-at=" in body
    assert "Page 1 of" not in body


def test_the_page_walks_on_by_its_next_link(client, project, pairs, lead, monkeypatch):
    from console import views_pairs

    monkeypatch.setattr(views_pairs, "PER_PAGE", 4)
    client.force_login(lead)

    body = client.get("/p/cars/?sort=status").content.decode()
    after = re.search(r'href="\?sort=status&amp;after=([^"]+)">Next', body)
    assert after is not None and 'before=end">Last' in body
    second = client.get(f"/p/cars/?sort=status&after={after.group(1)}").content.decode()

    first_ids = re.findall(r'class="pair-tile" href="/pairs/(\d+)/"', body)
    second_ids = re.findall(r'class="pair-tile" href="/pairs/(\d+)/"', second)
    expected = [str(pk) for pk in _expected(project, PairFilters(), "status")]
    assert first_ids + second_ids == expected[:8]
    assert "← Previous" in second


def test_a_small_project_sorts_its_numbered_pages(client, project, lead):
    made = [make_pair(project) for _ in range(3)]
    client.force_login(lead)

    body = client.get("/p/cars/?sort=newest").content.decode()

    shown = [int(pk) for pk in re.findall(r'class="pair-tile" href="/pairs/(\d+)/"', body)]
    assert shown == [p.pk for p in reversed(made)]
    assert "data-counted-at=" not in body


def test_a_large_project_is_counted_once_then_read_back(project, pairs):
    PairCounts.objects.all().delete()

    counted = pair_counts_of(project)  # counted now and stored: a large project

    assert counted.total == 12 and counted.counted_at is not None
    make_pair(project)
    assert pair_counts_of(project) == counted  # the stored counts, until the job counts again


def test_the_project_api_says_when_a_large_project_was_counted(client, project, pairs, lead):
    from review.figures import figures_refresh

    figures_refresh(project_id=project.pk)  # the periodic job: figures and counts
    client.force_login(lead)

    body = client.get(f"/api/v1/projects/{project.slug}/").json()

    assert body["counts"]["pairs"] == 12
    assert body["counts"]["accepted"] == 4
    stored = PairCounts.objects.get(project=project)
    assert body["counts"]["counted_at"] == stored.counted_at.isoformat()
    listed = client.get("/api/v1/projects/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert rows[0]["counts"]["counted_at"] == stored.counted_at.isoformat()


def test_home_says_when_a_large_project_was_counted(client, project, pairs, lead):
    pair_counts_refresh(project.pk)
    client.force_login(lead)

    body = client.get("/").content.decode()

    assert "data-counted-at=" in body
    assert "12 pairs" in body
