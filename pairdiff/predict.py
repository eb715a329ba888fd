"""The predictor interface: a model proposes changes for a pair (no Django, no I/O of its own
beyond what a predictor needs, e.g. an HTTP call)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pairdiff.geometry import Box

# Automatic screening flags, in the spirit of MinCU's automatic filter.
NO_VISIBLE_CHANGE = "no_visible_change"
SCATTERED_CHANGES = "scattered_changes"  # changes outside the main region: unrelated edits
CHANGE_TOO_LARGE = "change_too_large"
FLAGS = (NO_VISIBLE_CHANGE, SCATTERED_CHANGES, CHANGE_TOO_LARGE)


@dataclass(frozen=True)
class PredictedChange:
    """One proposed change, shaped like an annotator's; boxes in each side's own pixels.

    Not an ``answers.ChangeAnswer``: a proposal carries the model's confidence, and its JSON
    has its (fractional, from ``[0, 1000]``) boxes rounded to whole pixels."""

    category: str
    description: str
    entity_a: str
    entity_b: str
    boxes_a: tuple[Box, ...]
    boxes_b: tuple[Box, ...]
    confidence: float | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "category": self.category,
            "description": self.description,
            "entity_a": self.entity_a,
            "entity_b": self.entity_b,
            "boxes_a": [[round(v) for v in b.as_list()] for b in self.boxes_a],
            "boxes_b": [[round(v) for v in b.as_list()] for b in self.boxes_b],
        }


@dataclass(frozen=True)
class PredictionResult:
    """A predictor's answer for one pair. `error` is a reason when it could not answer (a
    malformed or failed model reply): recorded, never raised."""

    changes: tuple[PredictedChange, ...] = ()
    flags: tuple[str, ...] = ()
    confidence: float | None = None
    error: str = ""
    raw: str = field(default="", repr=False)  # the model's reply as received, for debugging
    reasons: dict[str, str] = field(default_factory=dict)  # flag → why, in words (a judge's)


class Predictor(Protocol):
    name: str
    version: str

    def predict(
        self,
        image_a: bytes,
        image_b: bytes,
        *,
        categories: Sequence[str],
        instruction: str = "",
    ) -> PredictionResult:
        """Propose the changes between A and B (original bytes); categories are the project's
        slugs, any suggested category must be one of them or ""."""
        ...
