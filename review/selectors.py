"""Reads of the review side: the standing decision, disputes, spot-checks."""

from __future__ import annotations

import random

from django.db import connection
from django.db.models import Exists, Max, Min, OuterRef, QuerySet

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


def disputes_count_capped(*, category: str = "", reason: str = "", **_: str) -> bool:
    """Whether a disputes list's count stops at a cap: filtered by category or reason every
    disputed pair is probed (no index holds either); by annotator the person's annotations
    are a small set, counted whole."""
    return bool(category or reason)


# Above this many ids in the project's span, the sample is drawn by probing random ids rather
# than by reading every candidate's id (450,000 at 1M pairs: 230 ms and more).
SAMPLE_BY_PROBES = 20_000
PROBE_ROUNDS = 8


def spot_check_sample(project: Project, *, n: int, seed: int | None = None) -> list[Pair]:
    """N pairs the cross-check accepted on its own (no lead decision), drawn at random
    (uniformly: on a large project random ids of the project's span, kept when they are such a
    pair; when too few are, every candidate's id is read as on a small project)."""
    auto = (
        Pair.objects.filter(project=project, status=PairStatus.ACCEPTED)
        .annotate(decided=Exists(Resolution.objects.filter(pair=OuterRef("pk"))))
        .filter(decided=False)
    )
    rng = random.Random(seed)
    span = Pair.objects.filter(project=project).aggregate(low=Min("id"), high=Max("id"))
    chosen: list[int] | None = None
    if span["low"] is not None and span["high"] - span["low"] + 1 > SAMPLE_BY_PROBES:
        chosen = _probed(auto, rng, range(span["low"], span["high"] + 1), n)
    if chosen is None:
        ids = list(auto.values_list("pk", flat=True))
        chosen = rng.sample(ids, min(n, len(ids)))
    return list(Pair.objects.filter(pk__in=chosen).order_by("id"))


def _probed(auto: QuerySet[Pair], rng: random.Random, ids: range, n: int) -> list[int] | None:
    """``n`` ids of ``auto`` drawn uniformly by rejection: random ids of ``ids``, kept when in
    ``auto`` (one query a round); None when ``PROBE_ROUNDS`` rounds found too few."""
    chosen: list[int] = []
    for _ in range(PROBE_ROUNDS):
        candidates = rng.sample(ids, min(len(ids), 8 * n))
        found = set(auto.filter(pk__in=candidates).values_list("pk", flat=True))
        chosen += [pk for pk in candidates if pk in found and pk not in chosen]
        if len(chosen) >= n:
            return chosen[:n]
    return None
