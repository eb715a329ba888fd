from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from annotator import selectors
from annotator.leasing import (
    assignment_check_member,
    assignment_lease_ahead,
    assignment_lease_next_in,
    assignment_live,
)
from annotator.models import Assignment, AssignmentState, Pair, PairStatus
from annotator.pair_counts import pair_counts_read
from annotator.revising import annotation_reopen
from annotator.submitting import SubmitConflict
from annotator.thumbnails import ThumbnailMissing, pair_thumbnail
from annotator.workspace import workspace_context
from config.htmx import HtmxHttpRequest
from projects import access

_MIME = {
    "JPEG": "image/jpeg",
    "PNG": "image/png",
    "WEBP": "image/webp",
    "TIFF": "image/tiff",
    "BMP": "image/bmp",
}


@login_required
def home(request: HttpRequest) -> HttpResponse:
    assert request.user.is_authenticated  # @login_required; tells the type checker too
    projects = list(selectors.projects_for_user(request.user))
    roles = selectors.roles_by_project(request.user)
    counted = pair_counts_read(projects)  # stored on large projects, with their time
    # The attributes set here are for the template only (not model fields): hence the ignores.
    for project in projects:
        role = roles.get(project.pk)
        project.role = role  # type: ignore[attr-defined]
        project.n_pairs = counted[project.pk].total  # type: ignore[attr-defined]
        project.counted_at = counted[project.pk].counted_at  # type: ignore[attr-defined]
        project.status_counts = [  # type: ignore[attr-defined]
            (value, label, counted[project.pk].counts[value]) for value, label in PairStatus.choices
        ]
        if access.role_may(role, access.Action.ANNOTATE):
            project.progress = selectors.annotator_progress(request.user, project)  # type: ignore[attr-defined]
            project.live = assignment_live(request.user, project)  # type: ignore[attr-defined]
    context = {"projects": projects, "may_create": access.project_may_create(request.user)}
    return render(request, "annotator/home.html", context)


@require_POST
@login_required
def lease_next(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Start or resume: the caller's next pair, as a page or (htmx) as the workspace fragment."""
    project, assignment = assignment_lease_next_in(slug=slug, user=request.user)
    if assignment is None:
        if request.htmx:
            response = render(request, "annotator/_queue_empty.html", {"project": project})
            return push_url(response, reverse("annotator:home"))
        messages.info(request, f"Nothing left for you in {project.name} — thank you!")
        return redirect("annotator:home")
    url = reverse("annotator:workspace", args=[assignment.pk])
    if request.htmx:
        response = render(request, "annotator/_workspace.html", workspace_context(assignment))
        return push_url(response, url)
    return redirect(url)


@require_POST
@login_required
def lease_ahead(request: HttpRequest, slug: str) -> JsonResponse:
    """Lease the pair after the current one, for the workspace to preload: its images' URLs and
    its workspace fragment, swapped in right after submit without another request."""
    assert request.user.is_authenticated  # @login_required; tells the type checker too
    project, _ = access.project_for(request.user, slug, access.Action.ANNOTATE)
    assignment = assignment_lease_ahead(project=project, user=request.user)
    if assignment is None:
        return JsonResponse({"assignment": None, "images": []})
    images = [reverse("annotator:pair_image", args=[assignment.pair_id, s]) for s in ("a", "b")]
    html = render_to_string(
        "annotator/_workspace.html", workspace_context(assignment), request=request
    )
    return JsonResponse(
        {
            "assignment": assignment.pk,
            "images": images,
            "url": reverse("annotator:workspace", args=[assignment.pk]),
            "expires_at": assignment.expires_at.isoformat(),
            "html": html,
        }
    )


@require_POST
@login_required
def annotation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Take a submitted answer back to edit it (while the pair is not cross-checked)."""
    try:
        assignment = annotation_reopen(assignment_id=pk, user=request.user)
    except Assignment.DoesNotExist as exc:
        raise Http404("no such assignment") from exc
    except SubmitConflict as exc:
        messages.info(request, f"That pair cannot be edited any more: {exc}.")
        return redirect("annotator:home")
    return redirect("annotator:workspace", assignment.pk)


@login_required
def workspace(request: HttpRequest, pk: int) -> HttpResponse:
    assert request.user.is_authenticated  # @login_required; tells the type checker too
    assignment = get_object_or_404(
        Assignment.objects.select_related("pair__project"), pk=pk, annotator=request.user
    )
    assignment_check_member(assignment=assignment, user=request.user)
    if assignment.state not in (AssignmentState.LEASED, AssignmentState.EXPIRED):
        messages.info(request, "That pair is done; here is your next one.")
        return redirect("annotator:home")
    return render(request, "annotator/workspace.html", workspace_context(assignment))


@require_GET
@login_required
def pair_image(request: HttpRequest, pk: int, side: str) -> FileResponse:
    """The original bytes, never re-encoded, to members allowed to see the pair."""
    pair = viewable_pair(request, pk)
    _check_side(side)
    file = pair.image(side)
    fmt = pair.format_a if side == "a" else pair.format_b
    return _private_file(file, _MIME.get(fmt, "application/octet-stream"))


@require_GET
@login_required
def pair_thumb(request: HttpRequest, pk: int, side: str) -> FileResponse:
    pair = viewable_pair(request, pk)
    _check_side(side)
    try:
        thumb = pair_thumbnail(pair, side)
    except ThumbnailMissing as exc:
        raise Http404("no thumbnail") from exc
    return _private_file(thumb, "image/jpeg")


def viewable_pair(request: HttpRequest, pk: int) -> Pair:
    """The pair, when this user may see it; 404 otherwise (not 403: its id stays private)."""
    pair = get_object_or_404(Pair.objects.select_related("project"), pk=pk)
    if not access.pair_may_view(request.user, pair):
        raise Http404("no such pair")
    return pair


def _check_side(side: str) -> None:
    if side not in ("a", "b"):
        raise Http404("side is a or b")


def _private_file(file, content_type: str) -> FileResponse:
    """Stream a stored file through this view, from the filesystem or S3 alike.

    Never a redirect to a presigned bucket URL: the difference heatmap reads pixels with
    getImageData, which a cross-origin image taints, and a signed URL is a bearer link that
    outlives the permission check.
    """
    try:
        handle = file.open("rb")
    except OSError as exc:  # lost from storage: say so, never a 500
        raise Http404("the image file is missing from storage") from exc
    response = FileResponse(handle, content_type=content_type)
    # Content-addressed names never change content, so a browser may keep them, privately.
    response["Cache-Control"] = "private, max-age=86400, immutable"
    response["X-Content-Type-Options"] = "nosniff"
    # Only raster images are shown in place; anything else (a row edited by hand) downloads.
    raster = content_type in _MIME.values()
    response["Content-Disposition"] = "inline" if raster else "attachment"
    return response
