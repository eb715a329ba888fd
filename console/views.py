"""Leads' pages for running a project: settings, members, uploads and background jobs.

Every page is for the project's leads (admins act as leads): a non-member gets 404, so a
project's existence does not leak, and a member with another role gets 403.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotator import selectors
from annotator.intake.importing import ImportUnusable
from annotator.intake.labelstudio.upload import (
    labelstudio_queue,
    labelstudio_stage,
    labelstudio_stage_mapping,
    labelstudio_staged_mapping,
    labelstudio_staged_preview,
)
from annotator.intake.synthesis import SynthesisUnusable, synthesis_queue
from annotator.intake.upload_limits import ImageSizeLimit, image_size_errors, image_size_limit
from annotator.intake.uploads import ImportFormat, import_queue
from annotator.preannotation import BACKENDS, UnknownBackend, preannotate_queue
from annotator.priorities import queue_priorities_refresh
from annotator.screening import project_screen
from annotator.services import PairRejected, pair_create
from annotator.textformats import guidelines_html
from config.htmx import HtmxHttpRequest
from console.forms import ProjectForm
from console.forms_members import MemberForm, RoleForm
from console.forms_synthesis import SynthesisForm
from console.forms_uploads import ImportForm, PairForm
from jobs.lifecycle import job_cancel
from jobs.models import Job, JobKind, JobStatus
from projects import access
from projects.models import Membership, Project, Role
from review.figures import figures_of
from review.services import agreements_recompute_queue

MAX_REPORT_ROWS = 1000
_RUNNING = (JobStatus.QUEUED, JobStatus.RUNNING)


class MemberRefused(ValueError):
    """A membership change that would leave the project without a lead."""


def _lead_project(request: HttpRequest, slug: str) -> Project:
    return access.project_for(request.user, slug, access.Action.MANAGE)[0]


def _posted(request: HttpRequest) -> QueryDict | None:
    return request.POST if request.method == "POST" else None


# --- projects --------------------------------------------------------------------------------


@login_required
def project_new(request: HttpRequest) -> HttpResponse:
    """Start a project (staff and leads of any project); its creator becomes its first lead."""
    if not access.project_may_create(request.user):
        raise PermissionDenied("only staff and project leads start projects")
    form = ProjectForm(_posted(request))
    if form.is_valid():
        project = form.save_new(user=request.user)
        messages.success(request, f"Project {project.name} created; you are its lead.")
        return redirect("console:project", project.slug)
    return render(request, "console/project_form.html", {"form": form})


@login_required
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """Edit a project; a changed agreement policy queues a recompute of every verdict."""
    project = _lead_project(request, slug)
    form = ProjectForm(_posted(request), instance=project)
    if form.is_valid():
        with transaction.atomic():  # the job starts once the new policy is committed
            job = None
            if form.save_changes():
                job = agreements_recompute_queue(project=project, user=request.user)
            screening_changed, order_changed = form.queue_changed()
            if screening_changed:
                project_screen(project=project)
            if order_changed:
                queue_priorities_refresh(project=project)
        messages.success(request, _saved_message(job))
        return redirect("console:project_settings", project.slug)
    guidelines = guidelines_html(project.guidelines)
    context = {"form": form, "project": project, "tab": "settings", "guidelines": guidelines}
    return render(request, "console/project_form.html", context)


def _saved_message(job: Job | None) -> str:
    if job is None:
        return "Settings saved."
    return format_html(
        "Settings saved. The agreement policy changed, so every verdict is being recomputed: "
        '<a href="{}">job #{}</a>.',
        reverse("console:job", args=[job.pk]),
        job.pk,
    )


# --- members ---------------------------------------------------------------------------------


@login_required
def members(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's members with their roles, and the form to add one."""
    project = _lead_project(request, slug)
    form = MemberForm(_posted(request), project=project)
    if form.is_valid():
        membership = form.save()
        messages.success(
            request, f"{membership.user} is now {_with_article(membership.role)} of the project."
        )
        return redirect("console:members", project.slug)
    figures = figures_of(project)  # annotations counted by the periodic job on a large project
    context = {
        "project": project,
        "tab": "members",
        "form": form,
        "members": selectors.project_members(
            project, submitted=figures.submitted if figures is not None else None
        ),
        "figures_at": figures.computed_at if figures is not None else None,
        "roles": Role.choices,
    }
    return render(request, "console/members.html", context)


@require_POST
@login_required
def member_role(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    project = _lead_project(request, slug)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick one of the roles.")
        return redirect("console:members", project.slug)
    return _member_change(request, project, user_id, Role(form.cleaned_data["role"]))


@require_POST
@login_required
def member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    project = _lead_project(request, slug)
    return _member_change(request, project, user_id, None)


def _member_change(
    request: HttpRequest, project: Project, user_id: int, role: Role | None
) -> HttpResponse:
    try:
        membership = _membership_change(project=project, user_id=user_id, role=role)
    except MemberRefused as exc:
        messages.error(request, str(exc))
        return redirect("console:members", project.slug)
    done = f"is now {_with_article(role)}" if role else "was removed from the project"
    messages.success(request, f"{membership.user} {done}.")
    if not access.role_may(access.project_role(request.user, project), access.Action.MANAGE):
        return redirect("annotator:home")  # a lead who stepped down has no business here
    return redirect("console:members", project.slug)


def _with_article(role: str) -> str:
    """ "an annotator", "a lead"."""
    return f"{'an' if role[:1] in 'aeiou' else 'a'} {role}"


@transaction.atomic
def _membership_change(*, project: Project, user_id: int, role: Role | None) -> Membership:
    """Give a member another role, or remove them (role None); never the project's last lead.

    The lead memberships are row-locked, so two leads demoting each other at the same moment
    cannot both succeed.
    """
    leads = set(
        Membership.objects.select_for_update()
        .filter(project=project, role=Role.LEAD)
        .values_list("user_id", flat=True)
    )
    membership = get_object_or_404(
        Membership.objects.select_related("user"), project=project, user_id=user_id
    )
    if leads == {user_id} and role != Role.LEAD:
        raise MemberRefused(f"{membership.user} is the project's only lead; add another first.")
    if role is None:
        membership.delete()
    else:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


# --- uploads ---------------------------------------------------------------------------------


@login_required
def upload(request: HttpRequest, slug: str) -> HttpResponse:
    """Bulk upload: a zip with its manifest becomes an import job; its page shows progress."""
    project = _lead_project(request, slug)
    if request.method == "POST" and request.POST.get("staged"):
        return _labelstudio_staged(request, project)
    form = ImportForm(_posted(request), request.FILES or None)
    if form.is_valid() and form.cleaned_data["source_format"] == ImportFormat.LABEL_STUDIO:
        return _labelstudio_first(request, project, form)
    if form.is_valid():
        try:
            job = import_queue(
                project=project,
                manifest=form.cleaned_data["manifest"],
                images=form.cleaned_data["images"],
                user=request.user,
                source_format=form.cleaned_data["source_format"],
            )
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("console:job", job.pk)
    return _upload_page(request, project, import_form=form)


def _labelstudio_first(request: HttpRequest, project: Project, form: ImportForm) -> HttpResponse:
    """Stage the export, images and config, then show what the import will do."""
    data = form.cleaned_data
    try:
        token = labelstudio_stage(
            project=project,
            export=data["manifest"],
            images=data["images"],
            config=data["config"],
            mapping=data["mapping"].encode() or None,
        )
    except ValueError as exc:  # ImportUnusable names the file at fault
        field = getattr(exc, "field", "")
        form.add_error(field if field in ("images", "config") else "manifest", str(exc))
        return _upload_page(request, project, import_form=form)
    request.session.setdefault("labelstudio_staged", []).append(token)
    request.session.modified = True
    return _labelstudio_preview(request, project, token)


def _labelstudio_staged(request: HttpRequest, project: Project) -> HttpResponse:
    """The preview's buttons: preview again with an edited mapping, or start the import."""
    token = request.POST["staged"]
    if token not in request.session.get("labelstudio_staged", []):
        raise Http404("no such upload")
    try:
        if request.POST.get("action") == "import":
            job = labelstudio_queue(project=project, token=token, user=request.user)
            return redirect("console:job", job.pk)
        mapping = request.POST.get("mapping", "").encode()
        labelstudio_stage_mapping(project=project, token=token, mapping=mapping or None)
    except ValueError as exc:
        messages.error(request, str(exc))
    return _labelstudio_preview(request, project, token)


def _labelstudio_preview(request: HttpRequest, project: Project, token: str) -> HttpResponse:
    context = {"project": project, "tab": "upload", "token": token, "preview": None}
    context["mapping"] = labelstudio_staged_mapping(project=project, token=token)
    try:
        context["preview"] = labelstudio_staged_preview(project=project, token=token)
    except (ImportUnusable, ValueError) as exc:
        context["unusable"] = str(exc)
    status = 200 if context["preview"] else 400
    return render(request, "console/labelstudio_preview.html", context, status=status)


@csrf_exempt  # the CSRF check reads the body: it runs below, once the size limit is in place
@require_POST
@login_required
def upload_pair(request: HttpRequest, slug: str) -> HttpResponse:
    """One pair from two image files, checked and stored at once; an image over the size limit
    is refused while it streams in."""
    limit = image_size_limit(request)
    return _upload_pair(request, slug, limit)


@csrf_protect
def _upload_pair(request: HttpRequest, slug: str, limit: ImageSizeLimit) -> HttpResponse:
    project = _lead_project(request, slug)
    form = PairForm(request.POST, request.FILES, project=project)
    too_large = image_size_errors(limit, request.FILES)
    for field, message in too_large.items():  # instead of "required" for a file skipped
        form.errors[field] = form.error_class([message])
    if not too_large and form.is_valid():
        try:
            pair = pair_create(project=project, pair_input=form.pair_input(), actor=request.user)
        except PairRejected as exc:
            form.add_error(exc.field or None, str(exc))
        else:
            messages.success(request, f"Pair {pair} uploaded.")
            return redirect("console:pair", pair.pk)
    return _upload_page(request, project, pair_form=form)


@require_POST
@login_required
def upload_synthesize(request: HttpRequest, slug: str) -> HttpResponse:
    """Single photos become pairs with known answers, as a job whose page shows progress."""
    project = _lead_project(request, slug)
    form = SynthesisForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            job = synthesis_queue(
                project=project,
                images=form.cleaned_data["images"],
                options=form.options(),
                user=request.user,
            )
        except (SynthesisUnusable, ValidationError) as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("console:job", job.pk)
    return _upload_page(request, project, synthesis_form=form)


def _upload_page(
    request: HttpRequest,
    project: Project,
    *,
    import_form: ImportForm | None = None,
    pair_form: PairForm | None = None,
    synthesis_form: SynthesisForm | None = None,
) -> HttpResponse:
    context = {
        "project": project,
        "tab": "upload",
        "import_form": import_form or ImportForm(),
        "pair_form": pair_form or PairForm(project=project),
        "synthesis_form": synthesis_form or SynthesisForm(),
        "recent": selectors.project_jobs(project).filter(
            kind__in=[JobKind.IMPORT, JobKind.SYNTHESIZE]
        )[:5],
    }
    forms_sent = (import_form, pair_form, synthesis_form)
    failed = any(form is not None and form.errors for form in forms_sent)
    return render(request, "console/upload.html", context, status=400 if failed else 200)


# --- jobs ------------------------------------------------------------------------------------


@login_required
def jobs(request: HttpRequest, slug: str) -> HttpResponse:
    """Every import, pre-annotation, recompute and release job of the project."""
    project = _lead_project(request, slug)
    page = Paginator(selectors.project_jobs(project), 50).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "tab": "jobs",
        "page": page,
        "running": any(job.status in _RUNNING for job in page.object_list),
        "backends": BACKENDS,
        "vlm_ready": bool(settings.DIFFMARK_VLM_URL),
    }
    return render(request, "console/jobs.html", context)


@login_required
def job_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One job; htmx polls its progress fragment every second until the job ends."""
    job = get_object_or_404(Job.objects.select_related("project", "created_by"), pk=pk)
    if job.project is not None:
        access.project_check(request.user, job.project, access.Action.MANAGE)
    elif not access.job_may_view(request.user, job):
        raise Http404("no such job")
    context = {
        "job": job,
        "title": f"{job.get_kind_display()} job #{job.pk}",
        "project": job.project,
        "tab": "jobs",
        "running": job.status in _RUNNING,
        "report": job.errors[:MAX_REPORT_ROWS],
        "duration": _duration(job),
    }
    template = "_job_progress.html" if request.htmx else "job.html"
    return render(request, f"console/{template}", context)


def _duration(job: Job) -> str:
    """How long the job ran, as people say it: "0.4 s", "3 min 12 s"."""
    if job.started_at is None or job.finished_at is None:
        return ""
    seconds = (job.finished_at - job.started_at).total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s"


@require_POST
@login_required
def preannotate(request: HttpRequest, slug: str) -> HttpResponse:
    """Start a pre-annotation job over the project's open pairs and watch it."""
    project = _lead_project(request, slug)
    try:
        job = preannotate_queue(
            project=project, backend=request.POST.get("backend", ""), user=request.user
        )
    except UnknownBackend as exc:
        messages.error(request, str(exc))
        return redirect("console:jobs", project.slug)
    return redirect("console:job", job.pk)


@require_POST
@login_required
def job_stop(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel a queued or running job; it stops between batches."""
    job = get_object_or_404(Job.objects.select_related("project"), pk=pk)
    if job.project is None:
        raise Http404("no such job")
    access.project_check(request.user, job.project, access.Action.MANAGE)
    if job_cancel(job=job):
        messages.info(request, f"Job #{job.pk} will stop after its current batch.")
    return redirect("console:job", job.pk)
