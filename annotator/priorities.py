"""The queue's order among pairs nobody has started: `Pair.queue_priority`, higher first.

Leasing always orders by (started first, priority, id) on one partial index, so every lease
order is the same cheap query; this module only rewrites the priorities when the order's
inputs change (settings saved, predictions or pairs added, and periodically as accepted
categories drift). Rewriting is a plain UPDATE of a column leasing never writes, so it cannot
break a leasing invariant; at worst a caller sees the old order for one lease.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, F

from annotator.models import OPEN_STATUSES, Change, Pair, PairStatus, Prediction
from pairdiff.usefulness import Guess, likely_category, usefulness
from projects.models import LeaseOrder, Project

SCALE = 1000  # usefulness 0..1 → integer priority
_NOT_PRE_ANNOTATORS = ("vlm-judge",)  # screeners answer other questions; no boxes to compare


def queue_priorities_refresh(*, project: Project) -> int:
    """Rewrite the priorities of the project's open pairs for its lease order; how many
    changed. A few set-based UPDATEs, never one per pair: 100,000 pairs take seconds."""
    open_pairs = Pair.objects.filter(project=project, status__in=OPEN_STATUSES)
    if project.lease_order == LeaseOrder.RANDOM:
        # A multiplicative hash of the id: a stable shuffle, computed by the database.
        shuffled = (F("id") * _KNUTH + project.pk) % (SCALE * SCALE)
        return open_pairs.exclude(queue_priority=shuffled).update(queue_priority=shuffled)
    if project.lease_order != LeaseOrder.PRIORITISED:
        return open_pairs.exclude(queue_priority=0).update(queue_priority=0)
    pairs = list(open_pairs.values_list("pk", "category_hint", "queue_priority"))
    wanted = _useful(project, pairs)
    groups: dict[int, list[int]] = defaultdict(list)
    for pk, _, current in pairs:
        if current != wanted[pk]:
            groups[wanted[pk]].append(pk)
    # One UPDATE per distinct priority (at most SCALE + 1 of them), in bounded id lists.
    for value, pks in groups.items():
        for start in range(0, len(pks), 5000):
            Pair.objects.filter(pk__in=pks[start : start + 5000]).update(queue_priority=value)
    return sum(len(pks) for pks in groups.values())


_KNUTH = 2654435761  # Knuth's multiplicative hash constant; id * it stays within 64 bits


def _useful(project: Project, pairs: list[tuple[int, str, int]]) -> dict[int, int]:
    guesses: dict[int, list[Guess]] = defaultdict(list)
    rows = (
        Prediction.objects.filter(pair__project=project, pair__status__in=OPEN_STATUSES, error="")
        .exclude(model_name__in=_NOT_PRE_ANNOTATORS)
        .values_list("pair_id", "changes", "confidence")
    )
    for pair_id, changes, confidence in rows.iterator(chunk_size=2000):
        guesses[pair_id].append(Guess(changes=changes or [], confidence=confidence))
    accepted = accepted_by_category(project)
    return {
        pk: round(SCALE * usefulness(guesses[pk], likely_category(hint, guesses[pk]), accepted))
        for pk, hint, _ in pairs
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
