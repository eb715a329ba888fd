"""One-to-one matching of two annotators' boxes on one side, and the per-side agreement rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairdiff.geometry import Box
from pairdiff.hungarian import best_assignment


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


def match_boxes(a: Sequence[Box], b: Sequence[Box], *, prefer_iou: float | None = None) -> Matching:
    """Assign boxes of ``a`` to boxes of ``b`` one-to-one, maximising the total IoU.

    Optimal rather than greedy: taking the best pair first can strand another box.
    An assigned pair that does not overlap at all is not a match; both boxes stay unmatched.
    Several matchings can share the maximum total (2/3 + 2/3 and 1 + 1/3); with
    ``prefer_iou``, the one with the most pairs at or above it is taken.
    """
    pairs: list[tuple[int, int, float]] = []
    if a and b:
        scores = iou_matrix(a, b)
        objective = scores
        if prefer_iou is not None:
            # Far below any IoU difference that means something, far above float noise.
            objective = scores + _TIE_BREAK * (scores >= prefer_iou)
        rows, cols = best_assignment(objective)
        pairs = [
            (i, j, float(scores[i, j])) for i, j in zip(rows, cols, strict=True) if scores[i, j] > 0
        ]
        pairs.sort()
    matched_a = {i for i, _, _ in pairs}
    matched_b = {j for _, j, _ in pairs}
    return Matching(
        pairs=pairs,
        unmatched_a=[i for i in range(len(a)) if i not in matched_a],
        unmatched_b=[j for j in range(len(b)) if j not in matched_b],
    )


_TIE_BREAK = 1e-9


def iou_matrix(a: Sequence[Box], b: Sequence[Box]) -> np.ndarray:
    """IoU of every box of ``a`` with every box of ``b``, vectorised; the same arithmetic as
    ``geometry.iou``, so thresholds decide alike in both."""
    ca = np.array([[x.x1, x.y1, x.x2, x.y2] for x in a], dtype=float).reshape(-1, 1, 4)
    cb = np.array([[x.x1, x.y1, x.x2, x.y2] for x in b], dtype=float).reshape(1, -1, 4)
    w = np.minimum(ca[..., 2], cb[..., 2]) - np.maximum(ca[..., 0], cb[..., 0])
    h = np.minimum(ca[..., 3], cb[..., 3]) - np.maximum(ca[..., 1], cb[..., 1])
    inter = np.where((w > 0) & (h > 0), w * h, 0.0)
    area_a = (ca[..., 2] - ca[..., 0]) * (ca[..., 3] - ca[..., 1])
    area_b = (cb[..., 2] - cb[..., 0]) * (cb[..., 3] - cb[..., 1])
    return np.minimum(1.0, inter / (area_a + area_b - inter))


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
