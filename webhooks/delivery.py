"""Sending a delivery: claim it, render its body once, POST it signed, log the attempt, and
schedule the next one with exponential backoff when the receiver did not answer 2xx."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cache

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from webhooks.addresses import Network, networks_parse
from webhooks.models import Attempt, Delivery, DeliveryStatus, Event
from webhooks.outbox import delivery_send_later, delivery_send_on_commit
from webhooks.sending import Outcome, webhook_post

Render = Callable[[Event], object]  # the event's object as the API shows it (None: gone)
BATCH = 500
EARLY = timedelta(seconds=1)  # a retry's message may arrive this much before its due time
# With a broker each retry has its message (a countdown); the sweep leaves it this long first.
SWEEP_GRACE = timedelta(seconds=30)


@cache
def _allowed(raw: str) -> tuple[Network, ...]:
    return networks_parse(raw)


def allowed_networks() -> tuple[Network, ...]:
    """DIFFMARK_WEBHOOK_ALLOWED_NETWORKS, parsed (a system check refuses a bad value)."""
    return _allowed(settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS or "")


def retry_delay(attempts: int) -> float:
    """Seconds before the attempt after ``attempts`` failed ones: base × 2^(attempts-1)."""
    return float(settings.DIFFMARK_WEBHOOK_RETRY_SECONDS) * 2 ** max(attempts - 1, 0)


def delivery_body(event: Event, render: Render) -> str:
    """The JSON body: the event's id, kind and time, its project, and the object as the API
    shows it at the first attempt."""
    return json.dumps(
        {
            "id": str(event.uuid),
            "event": event.kind,
            "time": event.created_at.isoformat(),
            "project": event.project.slug,
            "object": render(event),
        },
        separators=(",", ":"),
        default=str,
    )


def delivery_attempt(delivery_id: int, *, render: Render, manual: bool = False) -> Attempt | None:
    """Send a pending delivery whose attempt is due; None when it is not (delivered, failed,
    not due yet, or another copy of the message is sending it now)."""
    now = timezone.now()
    timeout = settings.DIFFMARK_WEBHOOK_TIMEOUT
    # The claim pushes the due time past this attempt's longest run: a second copy of the
    # message, or the sweep, finds it not due and leaves it alone.
    claimed = Delivery.objects.filter(
        pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now + EARLY
    ).update(next_attempt_at=now + timedelta(seconds=2 * timeout + 30))
    if not claimed:
        return None
    delivery = Delivery.objects.select_related("event__project", "endpoint").get(pk=delivery_id)
    if not delivery.body:
        delivery.body = delivery_body(delivery.event, render)
        Delivery.objects.filter(pk=delivery.pk).update(body=delivery.body)
    outcome = webhook_post(
        url=delivery.endpoint.url,
        body=delivery.body.encode(),
        headers={
            "X-Diffmark-Event": delivery.event.kind,
            "X-Diffmark-Delivery": str(delivery.uuid),
        },
        secret=delivery.endpoint.secret,
        timeout=timeout,
        allowed=allowed_networks(),
    )
    return _record(delivery, outcome, started=now, manual=manual)


def _record(delivery: Delivery, outcome: Outcome, *, started, manual: bool) -> Attempt:
    attempts = delivery.attempts + 1
    retry = not outcome.ok and not manual and attempts < settings.DIFFMARK_WEBHOOK_ATTEMPTS
    delay = retry_delay(attempts)
    with transaction.atomic():
        attempt = Attempt.objects.create(
            delivery=delivery,
            number=attempts,
            manual=manual,
            started_at=started,
            duration_ms=outcome.duration_ms,
            status_code=outcome.status_code,
            error=outcome.error,
            response=outcome.response,
        )
        now = timezone.now()
        Delivery.objects.filter(pk=delivery.pk).update(
            attempts=attempts,
            status=(
                DeliveryStatus.DELIVERED
                if outcome.ok
                else DeliveryStatus.PENDING
                if retry
                else DeliveryStatus.FAILED
            ),
            delivered_at=now if outcome.ok else None,
            next_attempt_at=now + timedelta(seconds=delay) if retry else None,
        )
        if retry:
            transaction.on_commit(lambda: delivery_send_later(delivery.pk, countdown=delay))
    return attempt


def delivery_redeliver(delivery: Delivery) -> None:
    """A lead's "redeliver": one more attempt now, with the same body and delivery id."""
    with transaction.atomic():
        Delivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.PENDING, next_attempt_at=timezone.now()
        )
        delivery_send_on_commit(delivery.pk, manual=True)


def events_prune(*, now: datetime | None = None) -> int:
    """Delete the events older than DIFFMARK_WEBHOOK_KEEP_DAYS with their deliveries and
    attempts (a project that listens to pair.accepted makes one per accepted pair); an event
    with a delivery still pending is kept until it is not."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.DIFFMARK_WEBHOOK_KEEP_DAYS)
    old = list(
        Event.objects.filter(created_at__lt=cutoff)
        .exclude(deliveries__status=DeliveryStatus.PENDING)
        .values_list("pk", flat=True)[:BATCH]
    )
    Event.objects.filter(pk__in=old).delete()
    return len(old)


def deliveries_resend() -> list[int]:
    """Send again the pending deliveries that are overdue: their message was lost (a broker
    down at commit, a worker killed), or, without a broker, their retry is due."""
    overdue = timezone.now() - (timedelta() if settings.CELERY_TASK_ALWAYS_EAGER else SWEEP_GRACE)
    due = list(
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=overdue)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:BATCH]
    )
    for pk in due:
        delivery_send_on_commit(pk)
    return due
