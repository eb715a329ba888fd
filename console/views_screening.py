"""The leads' screening page: pairs the screening gate held back, decided in bulk."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotator.pair_counts import pair_counts_of
from annotator.screening import (
    FLAG_LABELS,
    screened_decide,
    screened_pairs,
    screening_counts,
    screening_reasons,
)
from projects import access

PAGE_SIZE = 60


@login_required
def screening(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the held pairs with their flags and reasons. POST: accept the ticked pairs back
    into the queue, or reject them."""
    project = access.project_for(request.user, slug, access.Action.MANAGE)[0]
    if request.method == "POST":
        return _decide(request, project)
    page = Paginator(screened_pairs(project), PAGE_SIZE).get_page(request.GET.get("page"))
    reasons = screening_reasons(list(page.object_list))
    rows = [(pair, reasons.get(pair.pk, [])) for pair in page.object_list]
    context = {
        "project": project,
        "tab": "screening",
        "page": page,
        "rows": rows,
        # Pairs per status: stored on a large project (annotator.pair_counts).
        "counts": screening_counts(project, status_counts=pair_counts_of(project).counts),
        "chosen": [FLAG_LABELS.get(f, f) for f in project.screening_flags],
    }
    return render(request, "console/screening.html", context)


def _decide(request: HttpRequest, project) -> HttpResponse:
    action = request.POST.get("action")
    ids = [int(v) for v in request.POST.getlist("pairs") if v.isdigit() and len(v) < 19]
    if action not in ("accept", "reject") or not ids:
        messages.error(request, "Tick at least one pair, then accept or reject.")
        return redirect("console:screening", project.slug)
    n = screened_decide(project=project, pair_ids=ids, accept=action == "accept", user=request.user)
    done = "accepted back into the queue" if action == "accept" else "rejected"
    messages.success(request, f"{n} pair{'s' if n != 1 else ''} {done}.")
    return redirect("console:screening", project.slug)
