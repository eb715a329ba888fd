from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotator.models import Pair
from config.paging import CappedCountPaginator, IdsFirstPaginator
from projects import access
from projects.models import Project
from review.adjudication import adjudication_context
from review.gold_feedback import gold_feedback_for
from review.selectors import disputes_count_capped, disputes_queue, spot_check_sample

DISPUTES_PER_PAGE = 50
DISPUTES_COUNT_CAP = 1000  # filtered by category or reason: "1,000+"


@login_required
def disputes(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_object_or_404(Project, slug=slug)
    access.project_check(request.user, project, access.Action.MANAGE)
    filters = {k: request.GET.get(k, "").strip() for k in ("category", "annotator", "reason")}
    queue = disputes_queue(project, **filters)
    paginator = (  # "1,000+" when capped, as the pairs browser says
        CappedCountPaginator(queue, DISPUTES_PER_PAGE, cap=DISPUTES_COUNT_CAP)
        if disputes_count_capped(**filters)
        else IdsFirstPaginator(queue, DISPUTES_PER_PAGE)
    )
    page = paginator.get_page(request.GET.get("page"))
    context = {"project": project, "page": page, "filters": filters}
    return render(request, "review/disputes.html", context)


@login_required
def spot_check(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_object_or_404(Project, slug=slug)
    access.project_check(request.user, project, access.Action.MANAGE)
    try:
        n = max(1, min(int(request.GET.get("n", 20)), 200))
    except ValueError:
        n = 20
    pairs = spot_check_sample(project, n=n)
    return render(request, "review/spot_check.html", {"project": project, "pairs": pairs, "n": n})


@login_required
@require_GET
@login_required
def gold_feedback(request: HttpRequest, pk: int) -> JsonResponse:
    """The caller's boxes against the known answer, right after they submitted a gold pair."""
    feedback = gold_feedback_for(assignment_id=pk, user=request.user)
    if feedback is None:
        raise Http404("no feedback for this assignment")
    images = {s: reverse("annotator:pair_image", args=[feedback["pair"], s]) for s in ("a", "b")}
    return JsonResponse({**feedback, "images": images})


@login_required
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    pair = get_object_or_404(Pair.objects.select_related("project"), pk=pk)
    access.project_check(request.user, pair.project, access.Action.MANAGE)
    return render(request, "review/adjudicate.html", adjudication_context(pair))
