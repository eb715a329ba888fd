"""Reads of the review side: the standing decision, disputes, spot-checks."""

from __future__ import annotations

import random

from django.db import connection
from django.db.models import Exists, OuterRef, QuerySet

from annotator.models import Annotation, Change, Pair, PairStatus
from config import rows
from projects.models import Project
from review import sql
from review.models import Decision, Resolution


def pair_is_resolved(pair: Pair) -> bool:
    """A lead's decision stands (the latest resolution is not a reopen)."""
    latest = rows.fetchone(sql.latest_decision(connection.vendor), [pair.pk])
    return latest is not None and latest[0] != Decision.REOPEN


def disputes_queue(
    project: Project, *, category: str = "", annotator: str = "", reason: str = ""
) -> QuerySet[Pair]:
    """Disputed pairs, oldest first; filters: category (of either annotation's changes),
    annotator (username of either), reason (a code prefix such as "tier" or "change[0].side_b")."""
    pairs = Pair.objects.filter(project=project, status=PairStatus.DISPUTED).select_related(
        "agreement__annotation_1__annotator", "agreement__annotation_2__annotator"
    )
    # Exists rather than joins: a join needs DISTINCT, which sorts every disputed pair.
    if category:
        by_change = Change.objects.filter(annotation__pair=OuterRef("pk"), category=category)
        pairs = pairs.filter(Exists(by_change))
    if annotator:
        by_person = Annotation.objects.filter(pair=OuterRef("pk"), annotator__username=annotator)
        pairs = pairs.filter(Exists(by_person))
    if reason:
        pairs = pairs.filter(agreement__reasons__icontains=f'"code": "{reason}')
    return pairs.order_by("updated_at", "id")


def spot_check_sample(project: Project, *, n: int, seed: int | None = None) -> list[Pair]:
    """N pairs the cross-check accepted on its own (no lead decision), drawn at random."""
    auto = (
        Pair.objects.filter(project=project, status=PairStatus.ACCEPTED)
        .annotate(decided=Exists(Resolution.objects.filter(pair=OuterRef("pk"))))
        .filter(decided=False)
    )
    ids = list(auto.values_list("pk", flat=True))
    chosen = random.Random(seed).sample(ids, min(n, len(ids)))
    return list(Pair.objects.filter(pk__in=chosen).order_by("id"))
