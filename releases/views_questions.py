"""The leads' question editor: each accepted pair's multiple-choice question as the next release
will write it, with its two hard negatives editable in place."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from annotator.models import Pair, PairStatus
from config.htmx import HtmxHttpRequest
from config.paging import IdsFirstPaginator
from projects import access
from projects.models import Project
from releases.questions import (
    NegativesInvalid,
    QuestionPreview,
    question_edit_reset,
    question_edit_save,
    question_previews,
    question_unverify,
    question_verify,
)

PER_PAGE = 25
FIELDS = ("negative_1", "negative_2")
ACTIONS = ("save", "reset", "verify", "unverify")
DONE = {
    "save": "saved",
    "reset": "back to the derived negatives",
    "verify": "verified; its negatives are frozen for every later release",
    "unverify": "no longer verified",
}


@login_required
def questions(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_object_or_404(Project, slug=slug)
    access.project_check(request.user, project, access.Action.MANAGE)
    edited_only = request.GET.get("edited") == "1"
    pairs = Pair.objects.filter(project=project, status=PairStatus.ACCEPTED).order_by("pk")
    if edited_only:
        pairs = pairs.filter(question_edit__isnull=False)
    page = IdsFirstPaginator(pairs, PER_PAGE).get_page(request.GET.get("page"))
    on_page = [pair.pk for pair in page.object_list]
    previews = {p.pair.pk: p for p in question_previews(project, pairs.filter(pk__in=on_page))}
    back = {"page": page.number, "edited": "1" if edited_only else ""}
    rows = [
        _row(project, previews[pk], back=back) if pk in previews else {"pair": pair, "back": back}
        for pk, pair in zip(on_page, page.object_list, strict=True)
    ]
    context = {"project": project, "tab": "questions", "page": page, "rows": rows}
    context["edited_only"] = edited_only
    return render(request, "releases/questions.html", context)


@require_POST
@login_required
def question(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Save the two negatives (or, with action=reset, go back to the derived ones). htmx gets
    the row back, errors in place; a plain form goes back to its page, or shows the row alone."""
    pair = get_object_or_404(Pair.objects.select_related("project"), pk=pk)
    project = pair.project
    access.project_check(request.user, project, access.Action.MANAGE)
    if pair.status != PairStatus.ACCEPTED:
        raise Http404("only accepted pairs have a question")
    action = request.POST.get("action")
    action = action if action in ACTIONS else "save"
    values, errors = {name: request.POST.get(name, "") for name in FIELDS}, {}
    try:
        if action == "reset":
            question_edit_reset(pair=pair)
        elif action == "verify":
            question_verify(pair=pair, user=request.user)
        elif action == "unverify":
            question_unverify(pair=pair)
        else:
            question_edit_save(pair=pair, negatives=list(values.values()), user=request.user)
    except NegativesInvalid as exc:
        errors = exc.fields
    preview = next(iter(question_previews(project, Pair.objects.filter(pk=pair.pk))), None)
    if preview is None:
        raise Http404("this pair's answer has no change to ask about")
    back = _back(request)
    if errors:
        row = _row(project, preview, back=back, values=values, errors=errors)
    else:
        row = _row(project, preview, back=back, saved=action)
    return _answer(request, project, row)


def _back(request: HttpRequest) -> dict:
    """Where the plain form returns to; anything but a page number and the edited flag is
    dropped (20,000 characters of "page" made a redirect Django refuses after the save)."""
    page, edited = request.POST.get("page", ""), request.POST.get("edited", "")
    return {
        "page": page if page.isdigit() and len(page) <= 9 else "",
        "edited": "1" if edited == "1" else "",
    }


def _answer(request: HtmxHttpRequest, project: Project, row: dict) -> HttpResponse:
    """htmx gets the row; a plain form goes back to its page, or sees the row alone (400)."""
    if request.htmx:
        return render(request, "releases/_question_row.html", {"row": row, "project": project})
    back_url = _questions_url(project, row["back"])
    if not row["errors"]:
        messages.success(request, f"Question of {row['pair']}: {DONE[row['saved']]}.")
        return redirect(f"{back_url}#q-{row['pair'].pk}")
    context = {"row": row, "project": project, "tab": "questions", "back_url": back_url}
    return render(request, "releases/question_edit.html", context, status=400)


def _row(project: Project, preview: QuestionPreview, *, back: dict, **extra) -> dict:
    values = extra.pop("values", None) or dict(zip(FIELDS, preview.negatives, strict=False))
    return {
        "pair": preview.pair,
        "preview": preview,
        "category": project.category_name(preview.category),
        "values": values,
        "errors": extra.pop("errors", {}),
        "back": back,
        **extra,
    }


def _questions_url(project: Project, back: dict) -> str:
    query = {k: v for k, v in back.items() if v}
    url = reverse("releases:questions", args=[project.slug])
    return f"{url}?{urlencode(query)}" if query else url
