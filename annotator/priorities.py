"""The queue's order among pairs nobody has started: `Pair.queue_priority`, higher first.

Leasing always orders by (started first, priority, id) on one partial index, so every lease
order is the same cheap query; this module only rewrites the priorities when the order's
inputs change (settings saved, predictions or pairs added, and periodically as accepted
categories drift). Rewriting is a plain UPDATE of a column leasing never writes, so it cannot
break a leasing invariant; at worst a caller sees the old order for one lease.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from django.db.models import Count

from annotator.models import (
    OPEN_STATUSES,
    Change,
    LeaseOrder,
    Pair,
    PairStatus,
    Prediction,
    Project,
)
from pairdiff.usefulness import Guess, likely_category, usefulness

SCALE = 1000  # usefulness 0..1 → integer priority
_NOT_PRE_ANNOTATORS = ("vlm-judge",)  # screeners answer other questions; no boxes to compare


def queue_priorities_refresh(*, project: Project) -> int:
    """Rewrite the priorities of the project's open pairs for its lease order; how many
    changed."""
    pairs = list(
        Pair.objects.filter(project=project, status__in=OPEN_STATUSES).only(
            "pk", "category_hint", "queue_priority"
        )
    )
    if project.lease_order == LeaseOrder.RANDOM:
        wanted = {p.pk: _shuffled(project.pk, p.pk) for p in pairs}
    elif project.lease_order == LeaseOrder.PRIORITISED:
        wanted = _useful(project, pairs)
    else:
        wanted = {p.pk: 0 for p in pairs}
    changed = [p for p in pairs if p.queue_priority != wanted[p.pk]]
    for p in changed:
        p.queue_priority = wanted[p.pk]
    Pair.objects.bulk_update(changed, ["queue_priority"], batch_size=1000)
    return len(changed)


def _shuffled(project_id: int, pair_id: int) -> int:
    """A random-looking but stable place: the same pairs keep their order between refreshes."""
    digest = hashlib.sha256(f"{project_id}:{pair_id}".encode()).digest()
    return int.from_bytes(digest[:3], "big") % (SCALE * SCALE)


def _useful(project: Project, pairs: list[Pair]) -> dict[int, int]:
    guesses: dict[int, list[Guess]] = defaultdict(list)
    rows = (
        Prediction.objects.filter(pair__in=[p.pk for p in pairs], error="")
        .exclude(model_name__in=_NOT_PRE_ANNOTATORS)
        .values_list("pair_id", "changes", "confidence")
    )
    for pair_id, changes, confidence in rows.iterator(chunk_size=2000):
        guesses[pair_id].append(Guess(changes=changes or [], confidence=confidence))
    accepted = accepted_by_category(project)
    return {
        p.pk: round(
            SCALE
            * usefulness(guesses[p.pk], likely_category(p.category_hint, guesses[p.pk]), accepted)
        )
        for p in pairs
    }


def accepted_by_category(project: Project) -> dict[str, int]:
    """Accepted pairs per category, from the categories their annotations name."""
    rows = (
        Change.objects.filter(
            annotation__pair__project=project, annotation__pair__status=PairStatus.ACCEPTED
        )
        .values("category")
        .annotate(n=Count("annotation__pair", distinct=True))
    )
    return {row["category"]: row["n"] for row in rows}


def queue_priorities_refresh_all() -> int:
    """Beat: refresh every project whose order depends on data (accepted categories drift)."""
    total = 0
    for project in Project.objects.exclude(lease_order=LeaseOrder.IMPORT):
        total += queue_priorities_refresh(project=project)
    return total
