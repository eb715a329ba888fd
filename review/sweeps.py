"""Periodic repair of the review side: cross-checks and gold scores whose message was lost."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, OuterRef, Q, Subquery, Value
from django.db.models.functions import Least
from django.utils import timezone

from annotator.models import Annotation, Pair
from config.enqueue import enqueue
from jobs.registry import Work, task_for

BATCH = 500  # per kind and sweep; the next sweep takes the rest


def review_work_resend(*, now: datetime | None = None) -> dict[str, int]:
    """Send again the review work that never ran, once its last annotation is older than
    DIFFMARK_RESEND_AFTER_MINUTES (younger ones may still be in the queue): pairs with enough
    submissions and no agreement, or one older than their latest annotation; annotations of gold
    pairs without a score. Both tasks are safe to run twice. Returns how many were sent."""
    cutoff = (now or timezone.now()) - timedelta(minutes=settings.DIFFMARK_RESEND_AFTER_MINUTES)
    latest = Annotation.objects.filter(pair=OuterRef("pk")).order_by("-created_at")
    pairs = (
        Pair.objects.alias(
            needed=Least(F("project__overlap"), Value(2)),
            last=Subquery(latest.values("created_at")[:1]),
        )
        .filter(n_submitted__gte=F("needed"), last__lt=cutoff)
        .filter(Q(agreement__isnull=True) | Q(agreement__computed_at__lt=F("last")))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    gold = (
        Annotation.objects.filter(
            pair__is_gold=True,
            pair__gold__isnull=False,
            gold_score__isnull=True,
            created_at__lt=cutoff,
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return {
        "agreements": sum(enqueue(task_for(Work.CROSS_CHECK), pk) for pk in pairs[:BATCH]),
        "gold_scores": sum(enqueue(task_for(Work.GOLD_SCORE), pk) for pk in gold[:BATCH]),
    }
