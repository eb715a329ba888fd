"""The answer that stands for each accepted pair, and how it came to stand."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from django.db.models import OuterRef, QuerySet, Subquery

from annotator.models import Pair, PairStatus
from pairdiff.geometry import Difficulty, Frame, answer_difficulty
from projects.models import Project
from review.models import Agreement, Resolution


@dataclass(frozen=True, slots=True)
class Standing:
    pair: Pair
    changes: list[dict]  # as in the submit body, pixel boxes
    decided_by: str  # "agreement" or "lead"
    tiers: list[str]
    mean_iou: float | None
    ious: list[float]
    defects: list[list[str]] = field(default_factory=list)  # per annotation compared
    annotators: int = 0  # distinct annotations compared: 1 when the overlap is 1


def standing_answers(pairs: QuerySet[Pair], *, chunk: int = 500) -> Iterator[Standing]:
    """Accepted pairs of ``pairs`` with their standing answer: the latest lead decision that
    carries one (accept 1, accept 2, merge), else the agreement's consensus. Pairs with
    neither are left out. Reads in chunks so a large project never sits in memory at once."""
    accepted = pairs.filter(status=PairStatus.ACCEPTED).order_by("pk")
    last_pk = 0
    while True:
        batch = list(accepted.filter(pk__gt=last_pk)[:chunk])
        if not batch:
            return
        last_pk = batch[-1].pk
        ids = [pair.pk for pair in batch]
        # The agreement and its annotations as plain values, the columns read only: model
        # objects of three more rows per pair were most of the time of reading a release.
        agreements = {
            row[0]: _Compared(*row[1:])
            for row in Agreement.objects.filter(pair_id__in=ids).values_list(
                "pair_id", *_Compared._fields
            )
        }
        decided: dict[int, dict | None] = dict(
            Resolution.objects.filter(pair_id__in=ids)
            .order_by("created_at", "id")
            .values_list("pair_id", "answer")
        )  # the last row per pair wins: the standing decision (a reopen has no answer)
        for pair in batch:
            standing = _standing(pair, agreements.get(pair.pk), decided.get(pair.pk))
            if standing is not None:
                yield standing


class _Compared(NamedTuple):
    """What a standing answer reads of a pair's agreement (field names as values_list's)."""

    annotation_1_id: int
    annotation_2_id: int
    mean_iou: float | None
    changes: list
    consensus: list | None
    annotation_1__tier: str
    annotation_1__defects: list | None
    annotation_2__tier: str
    annotation_2__defects: list | None


@dataclass(frozen=True, slots=True)
class StandingRow:
    """The standing answer of one accepted pair as plain JSON, with its frames."""

    pair_id: int
    frame_a: Frame
    frame_b: Frame
    changes: list[dict]

    @property
    def difficulty(self) -> Difficulty | None:
        """None without a box, or when a stored answer no longer fits the rules."""
        try:
            return answer_difficulty(self.changes, self.frame_a, self.frame_b)
        except (TypeError, ValueError):
            return None


def standing_rows(pairs: QuerySet[Pair]) -> Iterator[StandingRow]:
    """The standing answer of every accepted pair in ``pairs`` — the same rule as
    ``standing_answers`` — read as plain JSON without model objects, for project-wide scans."""
    latest = Resolution.objects.filter(pair=OuterRef("pk")).order_by("-created_at", "-id")
    rows = (
        pairs.filter(status=PairStatus.ACCEPTED)
        .annotate(resolved=Subquery(latest.values("answer")[:1]))
        .values_list(
            "pk", "width_a", "height_a", "width_b", "height_b", "agreement__consensus", "resolved"
        )
    )
    for pk, width_a, height_a, width_b, height_b, consensus, answer in rows.iterator(2000):
        if isinstance(answer, dict) and answer.get("changes") is not None:
            changes = answer["changes"]
        elif consensus is not None:
            changes = consensus
        else:
            continue
        yield StandingRow(pk, Frame(width_a, height_a), Frame(width_b, height_b), changes)


def _standing(pair: Pair, agreement: _Compared | None, resolved: dict | None) -> Standing | None:
    tiers = []
    ious: list[float] = []
    mean_iou = None
    defects: list[list[str]] = []
    annotators = 0
    if agreement is not None:
        compared = [(agreement.annotation_1__tier, agreement.annotation_1__defects)]
        if agreement.annotation_1_id != agreement.annotation_2_id:
            compared.append((agreement.annotation_2__tier, agreement.annotation_2__defects))
        tiers = [tier for tier, _ in compared]
        defects = [list(found or []) for _, found in compared]
        annotators = len(compared)
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
    return Standing(pair, changes, by, tiers, mean_iou, ious, defects, annotators)


def accepted_breakdown(project: Project) -> dict[str, dict[str, int]]:
    """Accepted pairs by the category of their first change and by MinCU difficulty
    (``"none"`` where no box can be measured)."""
    by_category: Counter[str] = Counter()
    by_difficulty: Counter[str] = Counter()
    for row in standing_rows(Pair.objects.filter(project=project)):
        by_category[row.changes[0]["category"] if row.changes else ""] += 1
        by_difficulty[str(row.difficulty or "none")] += 1
    return {
        "by_category": dict(sorted(by_category.items())),
        "by_difficulty": dict(sorted(by_difficulty.items())),
    }
