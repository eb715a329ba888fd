"""One-to-one matching of two annotators' boxes on one side, and the per-side agreement rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from pairdiff.geometry import Box, iou


@dataclass(frozen=True)
class Matching:
    """Result of ``match_boxes``: matched index pairs with their IoU, and the leftovers."""

    pairs: list[tuple[int, int, float]]  # (index in a, index in b, iou), sorted by index in a
    unmatched_a: list[int]
    unmatched_b: list[int]

    @property
    def mean_iou(self) -> float:
        """Mean IoU of the matched pairs; 0.0 when nothing matched.

        Two empty sides also give 0.0, so a project-wide mean IoU should skip matchings
        without pairs rather than average these zeros in.
        """
        if not self.pairs:
            return 0.0
        return sum(p[2] for p in self.pairs) / len(self.pairs)

    @property
    def is_empty(self) -> bool:
        """True when neither side had any box (an absent side on both annotations)."""
        return not (self.pairs or self.unmatched_a or self.unmatched_b)


def match_boxes(a: Sequence[Box], b: Sequence[Box]) -> Matching:
    """Assign boxes of ``a`` to boxes of ``b`` one-to-one, maximising the total IoU.

    Optimal rather than greedy: taking the best pair first can strand another box.
    An assigned pair that does not overlap at all is not a match; both boxes stay unmatched.
    """
    pairs: list[tuple[int, int, float]] = []
    if a and b:
        scores = np.array([[iou(box_a, box_b) for box_b in b] for box_a in a])
        rows, cols = linear_sum_assignment(scores, maximize=True)
        pairs = [
            (int(i), int(j), float(scores[i, j]))
            for i, j in zip(rows, cols, strict=True)
            if scores[i, j] > 0
        ]
        pairs.sort()
    matched_a = {i for i, _, _ in pairs}
    matched_b = {j for _, j, _ in pairs}
    return Matching(
        pairs=pairs,
        unmatched_a=[i for i in range(len(a)) if i not in matched_a],
        unmatched_b=[j for j in range(len(b)) if j not in matched_b],
    )


def side_agrees(m: Matching, threshold: float = 0.5) -> bool:
    """True when every box is matched with IoU ≥ ``threshold``.

    Two empty sides (the same absent object) agree: pass ``match_boxes([], [])``, whose
    matching is empty. One empty side against boxes disagrees, as those boxes are unmatched.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"IoU threshold {threshold!r} must lie between 0 and 1")
    if m.unmatched_a or m.unmatched_b:
        return False
    return all(score >= threshold for _, _, score in m.pairs)
