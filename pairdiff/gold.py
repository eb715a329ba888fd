"""Scoring an annotator's answer on a gold pair against the pair's known answer."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pairdiff.agreement import AgreementPolicy, SideAgreement, compare_changes
from pairdiff.answers import Answer, ChangeAnswer
from pairdiff.geometry import Box, real_numbers


@dataclass(frozen=True)
class GoldChangeScore:
    """One answered change against the gold change it was paired with."""

    index: int  # in the answer
    gold_index: int
    iou_a: float | None  # SideAgreement.score; None when both sides are absent
    iou_b: float | None
    category_correct: bool
    absent_a_correct: bool
    absent_b_correct: bool
    score: float
    passed: bool


@dataclass(frozen=True)
class GoldScore:
    changes: list[GoldChangeScore]
    missed: list[int]  # gold changes the answer has no counterpart for
    extra: list[int]  # answered changes with no gold counterpart
    score: float
    passed: bool


def score_against_gold(answer: Answer, gold: Answer, policy: AgreementPolicy) -> GoldScore:
    """Pair the changes as cross-validation does (answer first, gold second), then score.

    Per change: ``iou_x`` is the matched IoU summed over the larger box count of side x
    (missing or extra boxes count 0; an absent side answered absent counts 1, a wrong absent
    side 0); ``score`` is the mean of those two side scores and the category (1 or 0);
    ``passed`` when both sides agree by the policy's IoU threshold
    (which covers absent sides) and the category is right. Entity labels, descriptions and
    tiers are not scored. Overall ``score`` sums the change scores over the larger change
    count (1.0 when both have none); ``passed`` when every change pairs up and passes.
    """
    compared = compare_changes(answer.changes, gold.changes, policy)
    scored = [
        _score_change(c.index_1, c.index_2, c.side_a, c.side_b, c.category_agrees)
        for c in compared
        if c.index_1 is not None and c.index_2 is not None
    ]
    missed = [c.index_2 for c in compared if c.index_1 is None and c.index_2 is not None]
    extra = [c.index_1 for c in compared if c.index_2 is None and c.index_1 is not None]
    count = max(len(answer.changes), len(gold.changes))
    total = math.fsum(s.score for s in scored) / count if count else 1.0
    return GoldScore(
        changes=scored,
        missed=missed,
        extra=extra,
        score=total,
        passed=not missed and not extra and all(s.passed for s in scored),
    )


def _score_change(
    index: int, gold_index: int, side_a: SideAgreement, side_b: SideAgreement, category: bool
) -> GoldChangeScore:
    return GoldChangeScore(
        index=index,
        gold_index=gold_index,
        iou_a=_side_iou(side_a),
        iou_b=_side_iou(side_b),
        category_correct=category,
        absent_a_correct=side_a.null_consistent,
        absent_b_correct=side_b.null_consistent,
        score=(side_a.score + side_b.score + category) / 3,
        passed=side_a.agrees and side_b.agrees and category,
    )


def _side_iou(side: SideAgreement) -> float | None:
    empty = not (side.matched or side.unmatched_1 or side.unmatched_2)
    return None if empty else side.score


def answer_from_changes(changes: Iterable[Mapping[str, object]], tier: str = "excellent") -> Answer:
    """An Answer from trusted JSON changes (a gold answer as stored); BoxError on a bad box.

    Unlike ``parse_answer`` it checks no frame, taxonomy or limits: gold answers are written
    by the project itself, e.g. the demo's programmatic edits.
    """
    return Answer(
        tier=tier,
        defects=(),
        time_spent_ms=0,
        changes=tuple(
            ChangeAnswer(
                category=str(raw.get("category", "")),
                description=str(raw.get("description", "")),
                entity_a=str(raw.get("entity_a", "")),
                entity_b=str(raw.get("entity_b", "")),
                boxes_a=_boxes(raw.get("boxes_a", [])),
                boxes_b=_boxes(raw.get("boxes_b", [])),
            )
            for raw in changes
        ),
    )


def _boxes(raw: object) -> tuple[Box, ...]:
    if not isinstance(raw, list | tuple):
        raise ValueError(f"boxes {raw!r}: expected a list of [x1, y1, x2, y2]")
    return tuple(Box(*real_numbers(values, 4, "box")) for values in raw)
