"""MinCU's Grounded F1, mIoU and hallucination rate over records (pure).

A predicted change is a true positive for a truth change when, together:

- every side the truth marks present has boxes matched one-to-one (``match_boxes``) with
  IoU ≥ 0.5 and none left over (``side_agrees``), and every side the truth marks absent is
  absent in the prediction too;
- the entity of every present side agrees after the project's label normalisation;
- the description similarity (the pluggable scorer) reaches its threshold.

Truth and predicted changes of a record are paired one-to-one by optimal assignment (most true
positives first, then the best geometry), so a record with two changes cannot count one
prediction twice. Precision = TP / predicted changes, recall = TP / truth changes, F1 their
harmonic mean, summed over records (micro). mIoU is the mean IoU of every present truth side
with its assigned prediction (0 when none). A predicted change *hallucinates* when no truth
change is left for it, when it boxes a side the truth marks absent (added ↔ removed swapped),
or when none of its boxes overlaps its truth change's; the rate is per predicted change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pairdiff.hungarian import best_assignment
from pairdiff.matching import match_boxes, side_agrees
from pairdiff.scoring.change import Change

if TYPE_CHECKING:
    from pairdiff.scoring.text import TextScorer

IOU_THRESHOLD = 0.5


@dataclass
class Tally:
    truths: int = 0
    predicted: int = 0
    true_positives: int = 0
    hallucinated: int = 0
    iou_sum: float = 0.0
    iou_sides: int = 0

    def add(self, other: Tally) -> None:
        self.truths += other.truths
        self.predicted += other.predicted
        self.true_positives += other.true_positives
        self.hallucinated += other.hallucinated
        self.iou_sum += other.iou_sum
        self.iou_sides += other.iou_sides

    def as_json(self) -> dict:
        precision = _ratio(self.true_positives, self.predicted)
        recall = _ratio(self.true_positives, self.truths)
        f1 = 0.0 if not precision or not recall else 2 * precision * recall / (precision + recall)
        return {
            "grounded_f1": _round(f1 if self.truths or self.predicted else None),
            "precision": _round(precision),
            "recall": _round(recall),
            "miou": _round(_ratio(self.iou_sum, self.iou_sides)),
            "hallucination_rate": _round(_ratio(self.hallucinated, self.predicted) or 0.0),
            "truth_changes": self.truths,
            "predicted_changes": self.predicted,
            "true_positives": self.true_positives,
            "hallucinated_changes": self.hallucinated,
        }


@dataclass(frozen=True)
class _Pairing:
    positive: bool
    quality: float  # mean side score, for assignment ties
    side_ious: tuple[float, ...]  # IoU of each present truth side
    hallucinates: bool


def record_tally(
    truths: Sequence[Change],
    predicted: Sequence[Change],
    *,
    similarity: Callable[[int, int], float],
    threshold: float,
    normalise: Callable[[str], str],
) -> Tally:
    """The tally of one record; ``similarity(i, j)`` scores truth i's description against
    prediction j's (precomputed in one batch by the caller)."""
    tally = Tally(truths=len(truths), predicted=len(predicted))
    present = [(bool(t.boxes_a), bool(t.boxes_b)) for t in truths]
    tally.iou_sides = sum(a + b for a, b in present)
    if not truths or not predicted:
        tally.hallucinated = len(predicted)
        return tally
    grid = [
        [_pair(t, p, similarity(i, j) >= threshold, normalise) for j, p in enumerate(predicted)]
        for i, t in enumerate(truths)
    ]
    scores = np.array([[4.0 * g.positive + g.quality for g in row] for row in grid])
    rows, cols = best_assignment(scores)
    matched = set()
    for i, j in zip(rows, cols, strict=True):
        pairing = grid[i][j]
        matched.add(int(j))
        tally.true_positives += pairing.positive
        tally.hallucinated += pairing.hallucinates
        tally.iou_sum += sum(pairing.side_ious)
    tally.hallucinated += len(predicted) - len(matched)
    return tally


def _pair(
    truth: Change, pred: Change, described: bool, normalise: Callable[[str], str]
) -> _Pairing:
    sides_ok, qualities, ious = [], [], []
    wrong_side = False
    overlaps = False
    for t_boxes, p_boxes, t_entity, p_entity in (
        (truth.boxes_a, pred.boxes_a, truth.entity_a, pred.entity_a),
        (truth.boxes_b, pred.boxes_b, truth.entity_b, pred.entity_b),
    ):
        if not t_boxes:
            sides_ok.append(not p_boxes)
            qualities.append(0.0 if p_boxes else 1.0)
            wrong_side |= bool(p_boxes)
            continue
        matching = match_boxes(t_boxes, p_boxes) if p_boxes else None
        iou = (
            sum(score for _, _, score in matching.pairs) / max(len(t_boxes), len(p_boxes))
            if matching
            else 0.0
        )
        overlaps |= iou > 0
        ious.append(iou)
        qualities.append(iou)
        sides_ok.append(
            matching is not None
            and side_agrees(matching, IOU_THRESHOLD)
            and normalise(t_entity) == normalise(p_entity)
        )
    return _Pairing(
        positive=all(sides_ok) and described,
        quality=sum(qualities) / 2,
        side_ious=tuple(ious),
        hallucinates=wrong_side or (not overlaps and bool(pred.boxes_a or pred.boxes_b)),
    )


def grounded_scores(
    items: Sequence[tuple[Mapping, Sequence[Change], Sequence[Change]]],
    *,
    scorer: TextScorer,
    normalise: Callable[[str], str],
) -> dict:
    """Overall figures and breakdowns by category and difficulty, for ``(record, truths,
    predicted)`` items; descriptions are scored in one batch (one BERTScore model load)."""
    pairs: list[tuple[str, str]] = []
    offsets: list[int] = []
    for _, truths, predicted in items:
        offsets.append(len(pairs))
        pairs += [(t.description, p.description) for t in truths for p in predicted]
    sims = scorer.similarities(pairs)
    total = Tally()
    by_category: dict[str, Tally] = {}
    by_difficulty: dict[str, Tally] = {}
    for (record, truths, predicted), offset in zip(items, offsets, strict=True):
        width = len(predicted)
        tally = record_tally(
            truths,
            predicted,
            similarity=_row_major(sims, offset, width),
            threshold=scorer.threshold,
            normalise=normalise,
        )
        total.add(tally)
        by_category.setdefault(record["category"], Tally()).add(tally)
        by_difficulty.setdefault(record["difficulty"] or "none", Tally()).add(tally)
    return {
        **total.as_json(),
        "by_category": {k: v.as_json() for k, v in sorted(by_category.items())},
        "by_difficulty": {k: v.as_json() for k, v in sorted(by_difficulty.items())},
    }


def _row_major(sims: Sequence[float], offset: int, width: int) -> Callable[[int, int], float]:
    """similarity(i, j) of one record, read from the batch's flat list of similarities."""
    return lambda i, j: sims[offset + i * width + j]


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
