"""The answer that stands for each accepted pair, and how it came to stand."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import QuerySet

from annotator.models import Pair, PairStatus, Project
from pairdiff.geometry import Box, Frame, difficulty
from review.models import Resolution


@dataclass(frozen=True, slots=True)
class Standing:
    pair: Pair
    changes: list[dict]  # as in the submit body, pixel boxes
    decided_by: str  # "agreement" or "lead"
    tiers: list[str]
    mean_iou: float | None
    ious: list[float]


def standing_answers(pairs: QuerySet[Pair], *, chunk: int = 500) -> Iterator[Standing]:
    """Accepted pairs of ``pairs`` with their standing answer: the latest lead decision that
    carries one (accept 1, accept 2, merge), else the agreement's consensus. Pairs with
    neither are left out. Reads in chunks so a large project never sits in memory at once."""
    accepted = (
        pairs.filter(status=PairStatus.ACCEPTED)
        .select_related("agreement__annotation_1", "agreement__annotation_2")
        .order_by("pk")
    )
    last_pk = 0
    while True:
        batch = list(accepted.filter(pk__gt=last_pk)[:chunk])
        if not batch:
            return
        last_pk = batch[-1].pk
        decided: dict[int, dict | None] = dict(
            Resolution.objects.filter(pair__in=batch)
            .order_by("created_at", "id")
            .values_list("pair_id", "answer")
        )  # the last row per pair wins: the standing decision (a reopen has no answer)
        for pair in batch:
            standing = _standing(pair, decided.get(pair.pk))
            if standing is not None:
                yield standing


def standing_changes(pairs: QuerySet[Pair]) -> Iterator[list[dict]]:
    """The standing answer's changes of every accepted pair in ``pairs``, read as plain JSON —
    no model objects — for project-wide scans; the same rule as ``standing_answers``."""
    accepted = pairs.filter(status=PairStatus.ACCEPTED)
    resolved = dict(
        Resolution.objects.filter(pair__in=accepted)
        .order_by("created_at", "id")
        .values_list("pair_id", "answer")
    )  # the last row per pair wins
    for pk, consensus in accepted.values_list("pk", "agreement__consensus").iterator(2000):
        answer = resolved.get(pk)
        if isinstance(answer, dict) and answer.get("changes") is not None:
            yield answer["changes"]
        elif consensus is not None:
            yield consensus


def _standing(pair: Pair, resolved: dict | None) -> Standing | None:
    agreement = getattr(pair, "agreement", None)
    tiers = []
    ious: list[float] = []
    mean_iou = None
    if agreement is not None:
        tiers = [agreement.annotation_1.tier, agreement.annotation_2.tier]
        mean_iou = agreement.mean_iou
        ious = [
            round(score, 4)
            for change in agreement.changes
            for side in ("side_a", "side_b")
            for _, _, score in change.get(side, {}).get("matched", [])
        ]
    if isinstance(resolved, dict) and resolved.get("changes") is not None:
        changes, by = resolved["changes"], "lead"
    elif agreement is not None and agreement.consensus is not None:
        changes, by = agreement.consensus, "agreement"
    else:
        return None
    return Standing(pair, changes, by, tiers, mean_iou, ious)


def accepted_breakdown(project: Project) -> dict[str, dict[str, int]]:
    """Accepted pairs by the category of their first change and by MinCU difficulty
    (``"none"`` where no box can be measured)."""
    by_category: Counter[str] = Counter()
    by_difficulty: Counter[str] = Counter()
    for s in standing_answers(Pair.objects.filter(project=project)):
        by_category[s.changes[0]["category"] if s.changes else ""] += 1
        by_difficulty[_difficulty(s)] += 1
    return {
        "by_category": dict(sorted(by_category.items())),
        "by_difficulty": dict(sorted(by_difficulty.items())),
    }


def _difficulty(s: Standing) -> str:
    frames = {
        "a": Frame(s.pair.width_a, s.pair.height_a),
        "b": Frame(s.pair.width_b, s.pair.height_b),
    }
    try:
        level = difficulty(
            ([Box(*b) for b in change.get(f"boxes_{side}", [])], frame)
            for change in s.changes
            for side, frame in frames.items()
        )
    except (TypeError, ValueError):  # a stored answer that no longer fits the rules
        return "none"
    return str(level) if level else "none"
