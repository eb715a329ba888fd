"""A lead's webhook actions: register an endpoint, delete it, send it a test, redeliver."""

from __future__ import annotations

import secrets

from django.db import transaction

from projects.models import Project
from webhooks.addresses import AddressRefused, target_check
from webhooks.delivery import allowed_networks
from webhooks.models import SUBSCRIBABLE, Delivery, Endpoint, Event, EventKind, ObjectKind
from webhooks.outbox import deliveries_queue

MAX_ENDPOINTS = 20  # per project
MAX_SECRET = 200


class EndpointRefused(ValueError):
    """The endpoint cannot be registered; ``field`` names the input at fault."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


def endpoint_create(
    *, project: Project, url: str, events: list[str], secret: str = "", user=None
) -> Endpoint:
    """Register ``url`` for ``events``; a secret is made when none is given. Raises
    EndpointRefused: an unknown event, a URL that is not http(s) or does not reach a public
    address (webhooks.addresses), too many endpoints."""
    unknown = sorted(set(events) - set(SUBSCRIBABLE))
    if unknown or not events:
        raise EndpointRefused(
            f"unknown event: {', '.join(unknown)}" if unknown else "pick at least one event",
            field="events",
        )
    if len(secret) > MAX_SECRET:
        raise EndpointRefused(f"at most {MAX_SECRET} characters", field="secret")
    try:
        target_check(url, allowed_networks())
    except AddressRefused as exc:
        raise EndpointRefused(str(exc), field="url") from exc
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        if project.webhook_endpoints.count() >= MAX_ENDPOINTS:
            raise EndpointRefused(
                f"a project has at most {MAX_ENDPOINTS} webhook endpoints", field="url"
            )
        endpoint = Endpoint.objects.create(
            project=project,
            url=url,
            events=[kind for kind in SUBSCRIBABLE if kind in events],  # known order, once each
            secret=secret or secrets.token_hex(32),
            created_by=user,
        )
        _listened_save(project)
    return endpoint


def endpoint_delete(*, endpoint: Endpoint) -> None:
    """Remove the endpoint with its deliveries and their attempts."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=endpoint.project_id)
        endpoint.delete()
        _listened_save(project)


def _listened_save(project: Project) -> None:
    """Project.webhook_events: what the emitting services check before writing anything."""
    listened = {kind for e in project.webhook_endpoints.all() for kind in e.events}
    project.webhook_events = [kind for kind in SUBSCRIBABLE if kind in listened]
    project.save(update_fields=["webhook_events"])


def endpoint_test(*, endpoint: Endpoint) -> Delivery:
    """Queue a ``webhook.test`` delivery to the endpoint (its object: the endpoint)."""
    with transaction.atomic():
        event = Event.objects.create(
            project=endpoint.project,
            kind=EventKind.TEST,
            object_kind=ObjectKind.ENDPOINT,
            object_id=endpoint.pk,
        )
        (delivery,) = deliveries_queue(event, [endpoint])
    return delivery
