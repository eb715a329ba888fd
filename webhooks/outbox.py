"""Emitting an event: the services call ``webhook_emit`` in the transaction that made it happen.

The event and one delivery per listening endpoint are rows written in that transaction (the
outbox), and the deliveries are queued once it commits: a rolled-back change sends nothing, and
a committed one is sent even when the broker was down at commit (the resend sweep finds its
pending deliveries). A project nobody listens to costs nothing: the events its endpoints listen
to are on the project row the caller already holds (Project.webhook_events).

The delivery task lives in the api app, which renders the object with the API's own
serializers; it registers here (``webhook_sender_register``), so nothing low imports it.
"""

from __future__ import annotations

import logging
from typing import Protocol

from celery import Task
from django.db import transaction
from django.utils import timezone

from config.enqueue import enqueue_on_commit
from projects.models import Project
from webhooks.models import Delivery, Endpoint, Event, EventKind, ObjectKind

log = logging.getLogger(__name__)
_sender: list[Task] = []


class HasPk(Protocol):
    @property
    def pk(self) -> int | None: ...


class NoSender(LookupError):
    """The delivery task is not registered (the api app is not installed or not ready)."""


def webhook_sender_register(task: Task) -> None:
    """Make ``task`` (called with a delivery's id) the one that sends deliveries."""
    _sender[:] = [task]


def webhook_sender() -> Task:
    if not _sender:
        raise NoSender("no webhook delivery task is registered")
    return _sender[0]


def webhook_emit(project: Project, kind: EventKind, object_kind: ObjectKind, obj: HasPk) -> None:
    """Record that ``kind`` happened to ``obj`` and queue its deliveries at commit. No query
    when no endpoint of the project listens to ``kind``."""
    if kind not in (project.webhook_events or ()):
        return
    assert obj.pk is not None
    with transaction.atomic():
        endpoints = [e for e in project.webhook_endpoints.all() if kind in e.events]
        if not endpoints:
            return
        event = Event.objects.create(
            project=project, kind=kind, object_kind=object_kind, object_id=obj.pk
        )
        deliveries_queue(event, endpoints)


def deliveries_queue(event: Event, endpoints: list[Endpoint]) -> list[Delivery]:
    """One pending delivery per endpoint, each sent once the transaction commits."""
    deliveries = Delivery.objects.bulk_create(
        [Delivery(event=event, endpoint=e, next_attempt_at=timezone.now()) for e in endpoints]
    )
    for delivery in deliveries:
        delivery_send_on_commit(delivery.pk)
    return deliveries


def delivery_send_on_commit(delivery_id: int, *, manual: bool = False) -> None:
    # Nobody waits for a delivery in the response: without a broker it goes after it is sent,
    # and a slow receiver does not hold the client's connection (detach).
    enqueue_on_commit(webhook_sender(), delivery_id, manual, after_response=True, detach=True)


def delivery_send_later(delivery_id: int, *, countdown: float) -> bool:
    """Queue the next attempt ``countdown`` seconds from now (with a broker). False when no
    broker takes it: the resend sweep sends it once it is due."""
    task = webhook_sender()
    if task.app.conf.task_always_eager:
        return False  # an eager apply ignores the countdown: the sweep sends it when due
    try:
        task.apply_async((delivery_id, False), countdown=countdown)
    except Exception as exc:  # the row is the truth: the sweep sends it when it is due
        log.warning("could not queue the retry of delivery %s: %s", delivery_id, exc)
        return False
    return True
