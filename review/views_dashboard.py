"""The leads' quality dashboard page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotator.screening import screening_counts
from projects import access
from review.figures import quality_counted_read


@require_GET
@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    """Progress, agreement and annotator figures of one project; its leads only."""
    project = access.project_for(request.user, slug, access.Action.MANAGE)[0]
    quality, computed_at, counted_at = quality_counted_read(project)
    context = {
        "project": project,
        "quality": quality,
        "computed_at": computed_at,  # None: computed for this request
        "counted_at": counted_at,  # the pairs per status; None: counted for this request
        "screening": screening_counts(project, status_counts=quality.status_counts),
    }
    return render(request, "review/dashboard.html", context)
