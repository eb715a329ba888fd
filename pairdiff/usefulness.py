"""How useful it is to have people annotate a pair next (the prioritised lease order).

Useful: pairs where the pre-annotators disagree with each other or are unsure (easy pairs the
models already agree on teach little), and pairs of categories that are rare among accepted
pairs (a benchmark needs every category). Pure: the caller reads predictions and counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import cast

from pairdiff.geometry import Box, BoxError, iou

UNKNOWN = 0.5  # a pair nobody predicted: neither easy nor known to be hard
_SIGNAL_WEIGHT = 0.65  # the rest is category rarity


@dataclass(frozen=True)
class Guess:
    """One pre-annotator's answer: its changes (submit-body shape) and its confidence."""

    changes: Sequence[Mapping[str, object]]
    confidence: float | None = None


def _side(changes: Sequence[Mapping[str, object]], side: str) -> Box | None:
    """The bounding box of every box on one side; None when the side is empty everywhere."""
    # Stored boxes are lists of four numbers; a malformed one is caught below.
    boxes = [b for c in changes for b in cast("list[list[float]]", c.get(f"boxes_{side}") or [])]
    if not boxes:
        return None
    try:
        return Box(
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
    except (BoxError, TypeError, IndexError):
        return None  # a malformed stored box counts as no box, never as an error


def _categories(changes: Sequence[Mapping[str, object]]) -> set[str]:
    return {str(c.get("category") or "") for c in changes}


def agreement(a: Guess, b: Guess) -> float:
    """0 (nothing in common) to 1 (same region on both sides, same categories)."""
    if not a.changes or not b.changes:
        return 1.0 if not a.changes and not b.changes else 0.0
    sides = []
    for side in ("a", "b"):
        box_a, box_b = _side(a.changes, side), _side(b.changes, side)
        if box_a is None or box_b is None:
            sides.append(1.0 if box_a is box_b else 0.0)
        else:
            sides.append(iou(box_a, box_b))
    same = _categories(a.changes) == _categories(b.changes)
    return (sides[0] + sides[1]) / 2 * (1.0 if same else 0.5)


def doubt(guesses: Sequence[Guess]) -> float:
    """0..1: how much the pre-annotators disagree or how unsure they are."""
    if not guesses:
        return UNKNOWN
    confidences = [g.confidence for g in guesses if g.confidence is not None]
    unsure = 1.0 - sum(confidences) / len(confidences) if confidences else UNKNOWN
    if len(guesses) == 1:
        return unsure
    pairs = list(combinations(guesses, 2))
    disagree = 1.0 - sum(agreement(a, b) for a, b in pairs) / len(pairs)
    return 0.7 * disagree + 0.3 * unsure


def rarity(category: str, accepted: Mapping[str, int]) -> float:
    """0 for the best-covered category, 1 for one with no accepted pair yet (when others have
    some); 0 when nothing is accepted yet or the category is unknown."""
    most = max(accepted.values(), default=0)
    if not category or most == 0:
        return 0.0
    return 1.0 - accepted.get(category, 0) / most


def usefulness(guesses: Sequence[Guess], category: str, accepted: Mapping[str, int]) -> float:
    """0..1; the prioritised queue serves higher first."""
    return _SIGNAL_WEIGHT * doubt(guesses) + (1 - _SIGNAL_WEIGHT) * rarity(category, accepted)


def likely_category(category_hint: str, guesses: Sequence[Guess]) -> str:
    """The import's hint, or the category most pre-annotators name."""
    if category_hint:
        return category_hint
    votes: dict[str, int] = {}
    for g in guesses:
        for c in _categories(g.changes) - {""}:
            votes[c] = votes.get(c, 0) + 1
    return max(sorted(votes), key=lambda c: votes[c], default="")
