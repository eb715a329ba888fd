"""Description similarity for Grounded F1: a pluggable scorer that names itself in every result.

The default, ``words``, is ``pairdiff.text.description_similarity`` (word-set Dice averaged with
a word-sequence ratio): deterministic, instant and free of downloads, unlike BERTScore, whose
1.4 GB model download fails offline. ``bertscore`` is used only when the ``bert-score`` package
is installed *and* a local model path is configured; otherwise asking for it is a clear error,
never a silent fall-back to another scorer (a result must say what it measured).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pairdiff.text import description_similarity, description_words

DEFAULT = "words"
# MinCU counts a description when BERTScore ≥ 0.85. The word scorer gives 1.0 for the same
# words in the same order and about 0.5 when half the words and their order are shared.
THRESHOLDS = {"words": 0.5, "exact": 1.0, "bertscore": 0.85}


class TextScorerUnavailable(ValueError):
    """The scorer asked for cannot run here; the message says what is missing."""


class TextScorer(Protocol):
    # Read-only: the scorers are frozen dataclasses.
    @property
    def name(self) -> str: ...

    @property
    def threshold(self) -> float: ...

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Similarity in [0, 1] of each (reference, candidate) pair, in order."""
        ...


@dataclass(frozen=True)
class WordScorer:
    name: str = "words"
    threshold: float = THRESHOLDS["words"]

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [description_similarity(a, b) for a, b in pairs]


@dataclass(frozen=True)
class ExactScorer:
    """1.0 when the words (case, punctuation and plurals aside) are the same, else 0.0."""

    name: str = "exact"
    threshold: float = THRESHOLDS["exact"]

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [float(description_words(a) == description_words(b)) for a, b in pairs]


@dataclass(frozen=True)
class BertScoreScorer:
    """BERTScore F1 of each pair with a model read from a local folder (no download)."""

    model_path: str
    num_layers: int
    name: str = "bertscore"
    threshold: float = THRESHOLDS["bertscore"]

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        from bert_score import BERTScorer  # checked importable by text_scorer

        scorer = BERTScorer(model_type=self.model_path, num_layers=self.num_layers)
        _, _, f1 = scorer.score([b for _, b in pairs], [a for a, _ in pairs])
        return [float(v) for v in f1]


def text_scorer(
    name: str = DEFAULT,
    *,
    threshold: float | None = None,
    bertscore_model: str = "",
    bertscore_layers: int = 9,
    has_module=importlib.util.find_spec,
) -> TextScorer:
    """The scorer called ``name`` with its default threshold (or ``threshold``).

    TextScorerUnavailable for an unknown name, a threshold outside [0, 1], or ``bertscore``
    without the ``bert-score`` package or without a local model path: the caller reports it
    (the ``evaluate`` command exits 2) instead of scoring with something else.
    """
    if name not in THRESHOLDS:
        raise TextScorerUnavailable(
            f"unknown text metric {name!r}; choose one of {', '.join(THRESHOLDS)}"
        )
    value = THRESHOLDS[name] if threshold is None else threshold
    if not 0.0 <= value <= 1.0:
        raise TextScorerUnavailable(f"the text threshold {value!r} must lie between 0 and 1")
    if name == "words":
        return WordScorer(threshold=value)
    if name == "exact":
        return ExactScorer(threshold=value)
    if has_module("bert_score") is None:
        raise TextScorerUnavailable(
            "the bertscore text metric needs the bert-score package (pip install bert-score), "
            "which Diffmark does not install; use --text-metric words, the default"
        )
    if not bertscore_model:
        raise TextScorerUnavailable(
            "the bertscore text metric needs a local model folder in DIFFMARK_BERTSCORE_MODEL "
            "(e.g. a downloaded roberta-large); Diffmark never downloads one at run time"
        )
    return BertScoreScorer(model_path=bertscore_model, num_layers=bertscore_layers, threshold=value)


def scorer_json(scorer: TextScorer) -> dict:
    """How a result names its description scorer."""
    about = {
        "words": "word-set Dice averaged with a word-sequence ratio (deterministic, no download)",
        "exact": "the same words after case folding and singulars (deterministic, no download)",
        "bertscore": "BERTScore F1 with a local model",
    }
    return {"name": scorer.name, "threshold": scorer.threshold, "about": about[scorer.name]}
