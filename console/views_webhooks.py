"""The project's Webhooks page (leads): register endpoints, send a test, read the latest
deliveries with every attempt, redeliver, delete. The REST twin is api/webhooks.py."""

from __future__ import annotations

from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.forms_webhooks import EndpointForm
from projects import access
from projects.models import Project
from webhooks.delivery import delivery_redeliver
from webhooks.models import Delivery, Endpoint
from webhooks.services import EndpointRefused, endpoint_create, endpoint_delete, endpoint_test

RECENT = 25  # deliveries shown; the API lists them all
NEW_SECRET = "diffmark-webhook-secret"


def _lead_project(request: HttpRequest, slug: str) -> Project:
    return access.project_for(request.user, slug, access.Action.MANAGE)[0]


@login_required
def webhooks(request: HttpRequest, slug: str) -> HttpResponse:
    project = _lead_project(request, slug)
    form = EndpointForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            endpoint = endpoint_create(project=project, user=request.user, **form.cleaned_data)
        except EndpointRefused as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, f"Webhook to {endpoint.url} registered.")
            if not form.cleaned_data["secret"]:
                # Shown once, on the next page: kept in the (server-side) session, never in
                # the messages, whose storage may be a cookie.
                request.session[NEW_SECRET] = {"url": endpoint.url, "secret": endpoint.secret}
            return redirect("console:webhooks", project.slug)
    deliveries = (
        Delivery.objects.filter(endpoint__project=project)
        .select_related("event", "endpoint")
        .prefetch_related("attempt_log")
        .order_by("-pk")[:RECENT]
    )
    context = {
        "project": project,
        "tab": "webhooks",
        "form": form,
        "endpoints": project.webhook_endpoints.order_by("pk"),
        "deliveries": deliveries,
        "attempts_max": settings.DIFFMARK_WEBHOOK_ATTEMPTS,
        "new_secret": request.session.pop(NEW_SECRET, None),
    }
    return render(request, "console/webhooks.html", context)


def _endpoint(request: HttpRequest, slug: str, pk: int) -> Endpoint:
    project = _lead_project(request, slug)
    return get_object_or_404(Endpoint.objects.select_related("project"), project=project, pk=pk)


@require_POST
@login_required
def webhook_test(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    endpoint = _endpoint(request, slug, pk)
    endpoint_test(endpoint=endpoint)
    messages.success(request, f"Test delivery to {endpoint.url} queued; its attempts show below.")
    return redirect("console:webhooks", slug)


@require_POST
@login_required
def webhook_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    endpoint = _endpoint(request, slug, pk)
    endpoint_delete(endpoint=endpoint)
    messages.success(request, f"Webhook to {endpoint.url} deleted, with its deliveries.")
    return redirect("console:webhooks", slug)


@require_POST
@login_required
def webhook_redeliver(request: HttpRequest, slug: str, pk: int, delivery: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, pk)
    found = get_object_or_404(Delivery, endpoint=endpoint, uuid=delivery)
    delivery_redeliver(found)
    messages.success(request, f"Delivery {found.uuid} sent again.")
    return redirect("console:webhooks", slug)
