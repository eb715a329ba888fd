"""The project page (with the leads' pairs browser) and a pair's page (its history, for leads)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import prefetch_related_objects
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotator import selectors
from annotator.models import Pair, PairStatus
from annotator.pair_counts import pair_counts_of
from annotator.textformats import guidelines_html
from annotator.views import viewable_pair
from config.paging import IdsFirstPaginator
from console import pair_pages
from console import pairs as browser
from projects import access
from projects.models import Project

PER_PAGE = 48


@login_required
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = access.project_for(request.user, slug, access.Action.VIEW)
    counted = pair_counts_of(project)  # stored on a large project, with their time
    counts = counted.counts
    context = {
        "project": project,
        "role": role,
        "total": counted.total,
        "counted_at": counted.counted_at,
        # Annotators are blind to verdicts, also counted over the project.
        "status_counts": [(v, label, counts[v]) for v, label in PairStatus.choices]
        if access.role_may(role, access.Action.SEE_VERDICTS)
        else [],
        "guidelines": guidelines_html(project.guidelines),
    }
    if access.role_may(role, access.Action.MANAGE):
        context |= _pairs_browser(request, project, large=counted.counted_at is not None)
    if access.role_may(role, access.Action.ANNOTATE):
        context["submitted"] = selectors.annotator_submitted(request.user, project)
    return render(request, "console/project.html", context)


def _pairs_browser(request: HttpRequest, project: Project, *, large: bool) -> dict:
    """The leads' pairs grid: a page of filtered pairs in the chosen order with their
    difficulty, and the choices the filters offer. A large project's pages go by key
    (``?after=`` / ``?before=``, console.pair_pages); a small one's by number (``?page=``)."""
    choices = browser.pairs_filter_choices(project)
    filters = _pair_filters(request, choices)
    sort = request.GET.get("sort", "")
    sort = sort if sort in pair_pages.SORTS else "oldest"
    page: Any
    if large:
        page = pair_pages.pairs_page(
            project,
            filters,
            sort=sort,
            per_page=PER_PAGE,
            after=request.GET.get("after", ""),
            before=request.GET.get("before", ""),
        )
        # The page's agreements by key afterwards: joined into a read from a cursor deep in
        # the project, PostgreSQL merges along every agreement before it (270 ms at 1M).
        prefetch_related_objects(page.object_list, "agreement")
    else:
        pairs = browser.pairs_browse(project, filters).select_related("agreement")
        pairs = pairs.order_by(*browser.SORT_ORDERS[sort])
        page = IdsFirstPaginator(pairs, PER_PAGE).get_page(request.GET.get("page"))
    levels = browser.pair_difficulties(list(page.object_list))
    for pair in page.object_list:
        pair.difficulty = levels.get(pair.pk)
        pair.category_label = project.category_name(pair.category_hint)
    query = filters.query()
    return {
        "page": page,
        "keyset": large,
        "filters": filters,
        "sort": sort,
        "sorts": pair_pages.SORTS,
        "query": query,
        # What every page link keeps: the filters and the order.
        "keep": "&".join(q for q in (query, f"sort={sort}" if sort != "oldest" else "") if q),
        "statuses": PairStatus.choices,
        "choices": choices,
    }


def _pair_filters(request: HttpRequest, choices: dict[str, list]) -> browser.PairFilters:
    """The filters from the query string; a value the choices do not offer is ignored."""
    allowed = {
        "status": PairStatus.values,
        "category": [slug for slug, _ in choices["categories"]],
        "difficulty": [level for level, _ in choices["difficulties"]],
        "flag": choices["flags"],
        "annotator": choices["annotators"],
    }
    given = {name: request.GET.get(name, "") for name in allowed}
    return browser.PairFilters(
        **{name: value if value in allowed[name] else "" for name, value in given.items()},
        q=request.GET.get("q", "").strip()[:200],
    )


@login_required
def pair_detail(request: HttpRequest, pk: int) -> HttpResponse:
    pair = viewable_pair(request, pk)
    role = access.project_role(request.user, pair.project)
    is_lead = access.role_may(role, access.Action.MANAGE)
    gold = getattr(pair, "gold", None) if is_lead else None
    changes = gold.changes if gold else []
    context: dict[str, Any] = {
        "pair": pair,
        "project": pair.project,
        "role": role,
        # Annotators see the images and the instruction only: never the pair's verdict, its
        # category hint (on a gold pair: the answer) or the metadata of the edit that made B.
        "is_lead": is_lead,
        "gold": gold,
        "gold_changes": [
            c | {"category_name": pair.project.category_name(c.get("category", ""))}
            for c in changes
        ],
        "sides": [
            _side(pair, "a", pair.width_a, pair.height_a, changes),
            _side(pair, "b", pair.width_b, pair.height_b, changes),
        ],
        # Only leads see other people's work on a pair: an annotator sees the images alone.
        "history": browser.pair_history(pair) if is_lead else None,
    }
    for side in context["sides"] if is_lead else []:
        side["marks"] = context["history"]["marks"][side["key"]]
    return render(request, "console/pair.html", context)


def _side(pair: Pair, side: str, width: int, height: int, changes: list[dict]) -> dict:
    """What the template needs to paint one image with the known boxes over it."""
    boxes = [
        {"x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1, "label": change.get(f"entity_{side}", "")}
        for change in changes
        for x1, y1, x2, y2 in change.get(f"boxes_{side}", [])
    ]
    absent = [c.get("description", "") for c in changes if not c.get(f"boxes_{side}")]
    return {
        "key": side,
        "label": side.upper(),
        "width": width,
        "height": height,
        "format": getattr(pair, f"format_{side}"),
        "sha256": getattr(pair, f"sha256_{side}"),
        "boxes": boxes,
        "absent": absent,
    }
