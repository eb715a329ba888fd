"""The leads' quality dashboard page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotator.models import Project, Role
from annotator.screening import screening_counts
from annotator.selectors import project_role
from review.dashboard import project_quality


@require_GET
@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    """Progress, agreement and annotator figures of one project; its leads only."""
    project = get_object_or_404(Project, slug=slug)
    role = project_role(request.user, project)
    if role is None:
        raise Http404("no such project")
    if role != Role.LEAD:
        raise PermissionDenied("only leads see the quality dashboard")
    quality = project_quality(project=project)
    context = {
        "project": project,
        "quality": quality,
        "screening": screening_counts(project, status_counts=quality.status_counts),
    }
    return render(request, "review/dashboard.html", context)
