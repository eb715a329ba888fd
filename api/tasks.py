"""The webhook delivery task: here, at the top, because a delivery shows its object as the API
does, with the API's own serializers (a pair as GET /pairs/{id}/, a release as
/releases/{id}/, …). The outbox and the sending live in webhooks/."""

from __future__ import annotations

from celery import shared_task
from rest_framework import serializers

from annotator.models import Pair
from api.evaluations import EvaluationSerializer
from api.pairs import JobSerializer, PairSerializer
from api.releases import ReleaseSerializer
from api.webhooks import EndpointSerializer
from jobs.models import Job
from releases.models import Evaluation, Release
from webhooks.delivery import deliveries_resend, delivery_attempt, events_prune
from webhooks.models import Endpoint, Event, ObjectKind
from webhooks.outbox import webhook_sender_register

RENDERERS: dict[str, tuple[type[serializers.ModelSerializer], object]] = {
    ObjectKind.PAIR: (PairSerializer, Pair.objects.select_related("agreement")),
    ObjectKind.JOB: (JobSerializer, Job.objects.all()),
    ObjectKind.RELEASE: (ReleaseSerializer, Release.objects.all()),
    ObjectKind.EVALUATION: (EvaluationSerializer, Evaluation.objects.all()),
    ObjectKind.ENDPOINT: (EndpointSerializer, Endpoint.objects.all()),
}


def webhook_render(event: Event) -> dict | None:
    """The event's object as the API shows it now; None when it was deleted since."""
    serializer, queryset = RENDERERS[event.object_kind]
    found = queryset.filter(pk=event.object_id).first()  # type: ignore[attr-defined]
    return None if found is None else dict(serializer(found).data)


@shared_task(acks_late=True)
def deliver_webhook(delivery_id: int, manual: bool = False) -> int | None:
    """One attempt at a delivery; the status code the receiver answered (None: no answer, or
    nothing was due)."""
    attempt = delivery_attempt(delivery_id, render=webhook_render, manual=manual)
    return None if attempt is None else attempt.status_code


@shared_task
def resend_webhooks() -> list[int]:
    return deliveries_resend()


@shared_task
def prune_webhooks() -> int:
    return events_prune()


webhook_sender_register(deliver_webhook)
