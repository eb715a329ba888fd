from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
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
    assignment_lease_next,
)
from annotator.models import Assignment, AssignmentState, Pair, PairStatus, Project, Role
from annotator.revising import annotation_reopen
from annotator.submitting import SubmitConflict
from annotator.textformats import guidelines_html
from annotator.workspace import workspace_context

_MIME = {
    "JPEG": "image/jpeg",
    "PNG": "image/png",
    "WEBP": "image/webp",
    "TIFF": "image/tiff",
    "BMP": "image/bmp",
}


@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects = list(selectors.projects_for_user(request.user))
    roles = selectors.roles_by_project(request.user)
    for project in projects:
        project.role = roles.get(project.pk)
        project.status_counts = [
            (value, label, getattr(project, f"n_{value}")) for value, label in PairStatus.choices
        ]
        if project.role in (Role.ANNOTATOR, Role.LEAD):
            project.progress = selectors.annotator_progress(request.user, project)
            project.live = selectors.assignment_live(request.user, project)
    context = {"projects": projects, "may_create": selectors.project_may_create(request.user)}
    return render(request, "annotator/home.html", context)


@require_POST
@login_required
def lease_next(request: HttpRequest, slug: str) -> HttpResponse:
    """Start or resume: the caller's next pair, as a page or (htmx) as the workspace fragment."""
    project = _project_for_annotation(request, slug)
    assignment = assignment_lease_next(project=project, user=request.user)
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
    project = _project_for_annotation(request, slug)
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
    assignment = get_object_or_404(
        Assignment.objects.select_related("pair__project"), pk=pk, annotator=request.user
    )
    assignment_check_member(assignment=assignment, user=request.user)
    if assignment.state not in (AssignmentState.LEASED, AssignmentState.EXPIRED):
        messages.info(request, "That pair is done; here is your next one.")
        return redirect("annotator:home")
    return render(request, "annotator/workspace.html", workspace_context(assignment))


def _project_for_annotation(request: HttpRequest, slug: str) -> Project:
    project = get_object_or_404(Project, slug=slug)
    role = selectors.project_role(request.user, project)
    if role is None:
        raise Http404("no such project")
    if role not in (Role.ANNOTATOR, Role.LEAD):
        raise PermissionDenied("only annotators and leads take pairs")
    return project


@login_required
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_object_or_404(Project, slug=slug)
    role = selectors.project_role(request.user, project)
    if role is None:
        raise Http404("no such project")
    counts = selectors.pair_counts(project)
    context = {
        "project": project,
        "role": role,
        "total": sum(counts.values()),
        # Annotators are blind to verdicts, also counted over the project.
        "status_counts": []
        if role == Role.ANNOTATOR
        else [(v, label, counts[v]) for v, label in PairStatus.choices],
        "guidelines": guidelines_html(project.guidelines),
    }
    if role == Role.LEAD:
        context |= _pairs_browser(request, project)
    if role in (Role.ANNOTATOR, Role.LEAD):
        context["submitted"] = selectors.annotator_submitted(request.user, project)
    return render(request, "annotator/project.html", context)


def _pairs_browser(request: HttpRequest, project: Project) -> dict:
    """The leads' pairs grid: a page of filtered pairs with their difficulty, and the choices
    the filters offer."""
    choices = selectors.pairs_filter_choices(project)
    filters = _pair_filters(request, choices)
    pairs = selectors.pairs_browse(project, filters).select_related("agreement")
    page = Paginator(pairs, 48).get_page(request.GET.get("page"))
    levels = selectors.pair_difficulties(list(page.object_list))
    for pair in page.object_list:
        pair.difficulty = levels.get(pair.pk)
        pair.category_label = project.category_name(pair.category_hint)
    return {
        "page": page,
        "filters": filters,
        "query": filters.query(),
        "statuses": PairStatus.choices,
        "choices": choices,
    }


def _pair_filters(request: HttpRequest, choices: dict[str, list]) -> selectors.PairFilters:
    """The filters from the query string; a value the choices do not offer is ignored."""
    allowed = {
        "status": PairStatus.values,
        "category": [slug for slug, _ in choices["categories"]],
        "difficulty": [level for level, _ in choices["difficulties"]],
        "flag": choices["flags"],
        "annotator": choices["annotators"],
    }
    given = {name: request.GET.get(name, "") for name in allowed}
    return selectors.PairFilters(
        **{name: value if value in allowed[name] else "" for name, value in given.items()},
        q=request.GET.get("q", "").strip()[:200],
    )


@login_required
def pair_detail(request: HttpRequest, pk: int) -> HttpResponse:
    pair = _viewable_pair(request, pk)
    role = selectors.project_role(request.user, pair.project)
    is_lead = role == Role.LEAD
    gold = getattr(pair, "gold", None) if is_lead else None
    changes = gold.changes if gold else []
    context = {
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
        "history": selectors.pair_history(pair) if is_lead else None,
    }
    for side in context["sides"] if is_lead else []:
        side["marks"] = context["history"]["marks"][side["key"]]
    return render(request, "annotator/pair.html", context)


@require_GET
@login_required
def pair_image(request: HttpRequest, pk: int, side: str) -> FileResponse:
    """The original bytes, never re-encoded, to members allowed to see the pair."""
    pair = _viewable_pair(request, pk)
    _check_side(side)
    file = pair.image(side)
    fmt = pair.format_a if side == "a" else pair.format_b
    return _private_file(file, _MIME.get(fmt, "application/octet-stream"))


@require_GET
@login_required
def pair_thumb(request: HttpRequest, pk: int, side: str) -> FileResponse:
    pair = _viewable_pair(request, pk)
    _check_side(side)
    thumb = pair.thumb_a if side == "a" else pair.thumb_b
    if not thumb:
        raise Http404("no thumbnail")
    return _private_file(thumb, "image/jpeg")


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


def _viewable_pair(request: HttpRequest, pk: int) -> Pair:
    pair = get_object_or_404(Pair.objects.select_related("project"), pk=pk)
    if not selectors.pair_may_view(request.user, pair):
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
