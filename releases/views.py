"""Release pages: leads build (and rebuild) releases; researchers read and download them.

A non-member gets 404 so a project's existence does not leak; an annotator gets 403 on the
list and 404 on a release (a release holds the agreed answers annotators must not see).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotator.intake.upload_limits import ImageSizeLimit, upload_size_limit
from pairdiff.scoring.text import DEFAULT
from projects import access
from projects.models import Project
from releases import display as release_display
from releases.building import ReleaseRefused, release_create, release_retry
from releases.evaluations import (
    MAX_PREDICTIONS_BYTES,
    EvaluationRefused,
    evaluation_create,
    evaluations_of,
    too_large_message,
)
from releases.forms import EvaluationForm, ReleaseForm
from releases.leaderboard import leaderboard
from releases.models import EvaluationStatus, Release, ReleaseStatus
from releases.selectors import release_visible, releases_visible


@login_required
def releases(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's releases, newest first; leads also get the form that builds a new one."""
    project, role = access.project_for(request.user, slug, access.Action.READ_RELEASES)
    may_build = access.role_may(role, access.Action.MANAGE)
    if request.method == "POST" and not may_build:
        raise PermissionDenied("only leads build releases")
    rows = list(releases_visible(request.user, project, role=role))
    form = None
    if may_build:
        next_name = f"v{rows[0].version + 1}" if rows else "v1"
        posted = request.POST if request.method == "POST" else None
        form = ReleaseForm(posted, initial={"name": next_name})
        if form.is_bound and form.is_valid():
            release = _build(request, project, form)
            if release is not None:
                return redirect("releases:releases", project.slug)
    for release in rows:  # attributes for the template only, not model fields
        release.split_counts = release_display.split_counts(release)  # type: ignore[attr-defined]
        release.warnings = release_display.warnings(release)  # type: ignore[attr-defined]
        release.to_fix = release_display.pairs_to_fix(release)  # type: ignore[attr-defined]
    context = {
        "project": project,
        "tab": "releases",
        "role": role,
        "releases": rows,
        "building": any(r.status == ReleaseStatus.BUILDING for r in rows),
        "form": form,
    }
    status = 400 if form is not None and form.errors else 200
    return render(request, "releases/releases.html", context, status=status)


def _build(request: HttpRequest, project: Project, form: ReleaseForm) -> Release | None:
    """Queue the build; a refusal goes next to the name, where it is usually the name's fault."""
    try:
        release = release_create(
            project=project,
            name=form.cleaned_data["name"],
            plan=form.plan,
            user=request.user,
            options=form.options,
        )
    except ReleaseRefused as exc:
        form.add_error("name", str(exc))
        return None
    _tell_status(request, release)
    return release


def _tell_status(request: HttpRequest, release: Release) -> None:
    release.refresh_from_db()  # without a broker the build has run already
    if release.status == ReleaseStatus.FAILED:
        messages.error(request, f"Release {release.name} failed: {release.message}")
    elif release.status == ReleaseStatus.READY and release_display.warnings(release):
        n = len(release_display.warnings(release))
        messages.warning(
            request,
            f"Release {release.name} is ready, with {n} warning{'s' if n > 1 else ''}: "
            "see where it differs from its plan below.",
        )
    elif release.status == ReleaseStatus.READY:
        messages.success(request, f"Release {release.name} is ready.")
    else:
        messages.success(request, f"Release {release.name} is building; it is listed below.")


@require_POST
@login_required
def release_rebuild(request: HttpRequest, pk: int) -> HttpResponse:
    """Build a failed release again, under a new job."""
    release = get_object_or_404(Release.objects.select_related("project"), pk=pk)
    access.project_check(request.user, release.project, access.Action.MANAGE)
    try:
        release_retry(release=release, user=request.user)
    except ReleaseRefused as exc:
        messages.error(request, f"Release {release.name}: {exc}.")
    else:
        _tell_status(request, release)
    return redirect("releases:releases", release.project.slug)


@login_required
def release(request: HttpRequest, pk: int) -> HttpResponse:
    """One release: its dataset card, counts, agreement, notes and files, and how to fetch it."""
    found = release_visible(request.user, pk)
    if found is None:
        raise Http404("no such release")
    manifest = found.manifest or {}
    levels, splits = release_display.counts_table(manifest, found.project.categories)
    records = reverse("api:release-records", args=[found.pk])
    context = {
        "release": found,
        "project": found.project,
        "tab": "releases",
        "role": access.project_role(request.user, found.project),
        "manifest": manifest,
        "card": release_display.card_html(found) if found.status == ReleaseStatus.READY else None,
        "levels": levels,
        "splits": splits,
        "files": release_display.file_listing(found),
        "warnings": release_display.warnings(found),
        "baselines": release_display.baselines(found),
        "records_url": request.build_absolute_uri(f"{records}?split=test"),
        "api_base": request.build_absolute_uri(f"/api/v1/releases/{found.pk}/"),
        "board": leaderboard(evaluations_of(found), found.project.categories),
        "evaluation_form": EvaluationForm(),
    }
    return render(request, "releases/release.html", context)


def _tell_scored(request: HttpRequest, evaluation) -> None:
    evaluation.refresh_from_db()  # without a broker it has been scored already
    name = evaluation.model_name
    if evaluation.status == EvaluationStatus.FAILED:
        messages.error(request, f"{name} was not scored: {evaluation.message}")
    elif evaluation.status == EvaluationStatus.READY:
        messages.success(request, f"{name} is scored; it is on the leaderboard.")
    else:
        messages.success(request, f"{name} is being scored; it joins the leaderboard when done.")


@csrf_exempt  # the CSRF check reads the body: it runs below, once the size limit is in place
@require_POST
@login_required
def release_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    """Score uploaded predictions against the release (researchers and leads); the result
    joins the leaderboard when its job is done. The file streams to disk, its size checked
    as it arrives."""
    limit = upload_size_limit(request, max_bytes=MAX_PREDICTIONS_BYTES, fields=("file",))
    return _release_evaluate(request, pk, limit)


@csrf_protect
def _release_evaluate(request: HttpRequest, pk: int, limit: ImageSizeLimit) -> HttpResponse:
    found = release_visible(request.user, pk)
    if found is None:
        raise Http404("no such release")
    form = EvaluationForm(request.POST, request.FILES)
    if "file" in limit.refused:
        too_large = too_large_message(limit.refused["file"], at_least=True)
        messages.error(request, f"Not scored: {too_large}.")
        return redirect(f"{reverse('releases:release', args=[found.pk])}#leaderboard-h")
    if not form.is_valid():
        messages.error(request, "Give the model a name and choose a predictions file.")
        return redirect(f"{reverse('releases:release', args=[found.pk])}#leaderboard-h")
    try:
        evaluation = evaluation_create(
            release=found,
            model_name=form.cleaned_data["model"],
            coords=form.cleaned_data["coords"],
            text_metric=DEFAULT,
            data=form.cleaned_data["file"],
            user=request.user,
        )
    except EvaluationRefused as exc:
        messages.error(request, f"Not scored: {exc}.")
    else:
        _tell_scored(request, evaluation)
    return redirect(f"{reverse('releases:release', args=[found.pk])}#leaderboard-h")
