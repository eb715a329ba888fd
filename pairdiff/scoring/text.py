"""Description matching for Grounded F1: a pluggable rule that names itself in every result.

The default, ``slots``, knows what a description claims (``slotmatch``): a prediction that
contradicts the truth in any slot the release knows (colour, direction, count, quoted text,
added ↔ removed, size, effect, entity) never matches, whatever its word overlap; one keeping
every slot matches. ``words`` is word overlap alone (``pairdiff.text.description_similarity``,
≥ 0.5), ``exact`` the same words. ``bertscore`` is MinCU's own rule (BERTScore F1 ≥ 0.85), used
only when the ``bert-score`` package is installed *and* a local model folder is configured
(``DIFFMARK_BERTSCORE_MODEL``; nothing is ever downloaded); otherwise asking for it is a clear
error, never a silent fall-back to another rule (a result must say what it measured).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Protocol

from pairdiff.scoring.slotmatch import release_labels, slot_similarity
from pairdiff.text import description_similarity, description_words

DEFAULT = "slots"
MINCU = "bertscore"  # the paper's rule
# MinCU counts a description when BERTScore ≥ 0.85. The word scorer gives 1.0 for the same
# words in the same order and about 0.5 when half the words and their order are shared; the
# slot rule gives 0 or 1 where the truth has slots, the word similarity where it has none.
THRESHOLDS = {"slots": 0.5, "words": 0.5, "exact": 1.0, "bertscore": 0.85}


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
class SlotScorer:
    """``slotmatch.slot_similarity`` with the release's entity labels (``for_records``)."""

    name: str = "slots"
    threshold: float = THRESHOLDS["slots"]
    labels: frozenset[str] = field(default_factory=frozenset)

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [slot_similarity(a, b, labels=self.labels) for a, b in pairs]


def for_records(scorer: TextScorer, records: Sequence[Mapping]) -> TextScorer:
    """The scorer ready for a release's records (the slot rule learns their entity labels)."""
    if isinstance(scorer, SlotScorer):
        return replace(scorer, labels=release_labels(records))
    return scorer


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
        # Never a download: a model folder that is incomplete fails here, it is not fetched.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
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
    has_module: Callable[[str], object] = importlib.util.find_spec,
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
    if name == "slots":
        return SlotScorer(threshold=value)
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
            "(e.g. a copy of roberta-large, MinCU's reference model, or any BERT-style folder); "
            "Diffmark never downloads one at run time"
        )
    return BertScoreScorer(model_path=bertscore_model, num_layers=bertscore_layers, threshold=value)


def scorer_json(scorer: TextScorer) -> dict:
    """How a result names its description rule (and the model, for BERTScore)."""
    about = {
        "slots": "no slot of the truth contradicted or left out (colour, direction, count, "
        "quoted text, added/removed, size, effect, entity); word overlap where it has none",
        "words": "word-set Dice averaged with a word-sequence ratio (deterministic, no download)",
        "exact": "the same words after case folding and singulars (deterministic, no download)",
        "bertscore": "BERTScore F1 with a local model (MinCU's rule)",
    }
    out = {"name": scorer.name, "threshold": scorer.threshold, "about": about[scorer.name]}
    if isinstance(scorer, BertScoreScorer):
        out["model"] = PurePath(scorer.model_path).name or scorer.model_path
        out["layers"] = scorer.num_layers
    return out


def rule_label(text_metric: Mapping) -> str:
    """A rule as the leaderboard names it: "slots ≥ 0.5", "bertscore (roberta-large) ≥ 0.85"."""
    model = f" ({text_metric['model']})" if text_metric.get("model") else ""
    return f"{text_metric['name']}{model} ≥ {text_metric['threshold']}"
