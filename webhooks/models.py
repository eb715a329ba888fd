"""Webhooks: the endpoints a project's leads register, the events the services emit (the
outbox), one delivery per event and endpoint, and every attempt to send it."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from config.constraints import choices_check
from projects.models import Project

User = settings.AUTH_USER_MODEL


class EventKind(models.TextChoices):
    PAIR_ACCEPTED = "pair.accepted", "A pair was accepted by the cross-check"
    PAIR_DISPUTED = "pair.disputed", "A pair was disputed by the cross-check"
    PAIR_RESOLVED = "pair.resolved", "A lead decided a pair"
    IMPORT_FINISHED = "import.finished", "An import job ended (succeeded or failed)"
    RELEASE_READY = "release.ready", "A release was built"
    RELEASE_FAILED = "release.failed", "A release build failed"
    EVALUATION_FINISHED = "evaluation.finished", "An evaluation was scored (or failed)"
    # Sent by the "send test" action only; nobody subscribes to it.
    TEST = "webhook.test", "A test delivery"


SUBSCRIBABLE = [kind for kind in EventKind if kind != EventKind.TEST]


class ObjectKind(models.TextChoices):
    """What the event is about: rendered at send time as the API shows it (api.webhook_render)."""

    PAIR = "pair", "Pair"
    JOB = "job", "Job"
    RELEASE = "release", "Release"
    EVALUATION = "evaluation", "Evaluation"
    ENDPOINT = "endpoint", "Webhook endpoint"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # not tried yet, or waiting for its next attempt
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"  # every attempt failed; a lead may redeliver by hand


class Endpoint(models.Model):
    """A URL of a project's that gets the events it listens to, signed with its secret."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    secret = models.CharField(max_length=200)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.url} ({', '.join(self.events)})"


class Event(models.Model):
    """Something that happened in a project, written in the transaction that did it."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="webhook_events_log"
    )
    kind = models.CharField(max_length=32, choices=EventKind.choices)
    object_kind = models.CharField(max_length=16, choices=ObjectKind.choices)
    object_id = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)  # pruned by age

    class Meta:
        constraints = [
            choices_check("kind", EventKind, "webhook_event_kind_valid"),
            choices_check("object_kind", ObjectKind, "webhook_object_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_kind} {self.object_id}"


class Delivery(models.Model):
    """One event for one endpoint: its body is rendered once, at the first attempt, so every
    retry and redelivery sends the same bytes under the same X-Diffmark-Delivery id."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    # When the next attempt is due (pending); the resend sweep sends those overdue.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    body = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-pk"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due"),
        ]
        constraints = [choices_check("status", DeliveryStatus, "webhook_delivery_status_valid")]

    def __str__(self) -> str:
        return f"{self.uuid} → {self.endpoint_id} ({self.status})"

    @property
    def last_attempt(self) -> Attempt | None:
        attempts = list(self.attempt_log.all())  # the pages prefetch them
        return attempts[-1] if attempts else None


class Attempt(models.Model):
    """One try at sending a delivery: what the receiver answered, or why nothing came back."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    manual = models.BooleanField(default=False)  # a lead's redelivery
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    response = models.CharField(max_length=1000, blank=True)  # the body's start

    class Meta:
        ordering = ["delivery", "number"]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.status_code or self.error}"

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
