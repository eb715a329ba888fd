"""Text-only baselines of a question set: how often the truth can be picked without the images.

Each baseline picks among the options other than "no difference" (the truth is never that one),
so chance is one in three. A baseline that finds several options equally good picks one of them
at random; its credit for the question is then 1/k when the truth is among the k tied — the
expected accuracy, without drawing random numbers.

- ``similarity``: the option most similar to the others (word-set Jaccard) — a negative made
  by changing one thing of the truth makes the truth the centre;
- ``longest``: the longest option (characters) — careful writers' truths run long;
- ``instruction_overlap``: the option sharing the most content words with the pair's edit
  instruction (questions of pairs without one: a tie of all three). Reported, not gated: the
  question file does not carry the instruction, which states the edit;
- ``classifier``: naive Bayes on the words and word pairs of the train split's options (true
  vs false), scored on the val and test questions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "from",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "it",
        "its",
        "this",
        "that",
        "there",
        "now",
        "image",
        "images",
        "b",
        "make",
        "made",
    ]
)
NAMES = ("similarity", "longest", "instruction_overlap", "classifier")
# Baselines that read only what a question carries. The edit instruction is not in a question:
# it states the edit, so overlap with it measures how well the instruction describes the change
# (reported), not whether the question can be answered from its own text (gated).
GATED = ("similarity", "longest", "classifier")
# Below this many questions an accuracy says little (3 of 5 is 60 %): reported, not gated.
MIN_QUESTIONS = 10


def words(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def credit(scores: Sequence[float], truth: int) -> float:
    """1/k when the truth is among the k best scores (within rounding), else 0."""
    best = max(scores)
    top = [i for i, s in enumerate(scores) if math.isclose(s, best, rel_tol=1e-9, abs_tol=1e-12)]
    return 1 / len(top) if truth in top else 0.0


def word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


def set_jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    shared = len(x & y)
    union = len(x) + len(y) - shared
    return shared / union if union else 1.0


def similarity_scores(options: Sequence[str]) -> list[float]:
    sets = [word_set(o) for o in options]
    return [
        sum(set_jaccard(x, other) for j, other in enumerate(sets) if j != i)
        for i, x in enumerate(sets)
    ]


def length_scores(options: Sequence[str]) -> list[float]:
    return [float(len(o.strip())) for o in options]


def overlap_scores(options: Sequence[str], instruction: str) -> list[float]:
    wanted = {w for w in words(instruction) if w not in STOPWORDS}
    return [float(len({w for w in words(o) if w not in STOPWORDS} & wanted)) for o in options]


Scorer = Callable[[Sequence[str], Mapping], list[float]]
HEURISTICS: dict[str, Scorer] = {
    "similarity": lambda options, q: similarity_scores(options),
    "longest": lambda options, q: length_scores(options),
    "instruction_overlap": lambda options, q: overlap_scores(options, q.get("instruction", "")),
}


def choices(
    question: Mapping, no_difference: str, *, with_no_difference: bool = False
) -> tuple[list[str], int]:
    """The options a baseline picks from and the truth's index: all but "no difference",
    unless the release has control questions (``with_no_difference``), where it can be the
    truth. The truth's index is -1 when it is not among them."""
    letters = [
        k
        for k in sorted(question["options"])
        if with_no_difference or question["options"][k] != no_difference
    ]
    answer = question["answer"]
    return [question["options"][k] for k in letters], (
        letters.index(answer) if answer in letters else -1
    )


class NaiveBayes:
    """True vs false options from their words and word pairs, Laplace-smoothed."""

    def __init__(self) -> None:
        self.counts: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
        self._totals: dict[bool, int] | None = None

    @staticmethod
    def features(text: str) -> list[str]:
        tokens = words(text)
        return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]

    def fit(self, examples: Sequence[tuple[str, bool]]) -> NaiveBayes:
        for text, label in examples:
            self.counts[label].update(self.features(text))
        self._totals = None
        return self

    def score(self, text: str) -> float:
        totals = self.totals()
        return math.fsum(
            math.log((self.counts[True][f] + 1) / totals[True])
            - math.log((self.counts[False][f] + 1) / totals[False])
            for f in self.features(text)
        )

    def totals(self) -> dict[bool, int]:
        """Each class's word count plus the vocabulary (Laplace), counted once per fit: a
        release scores thousands of options against the same counts."""
        if self._totals is None:
            vocab = len(set(self.counts[True]) | set(self.counts[False])) or 1
            self._totals = {k: sum(c.values()) + vocab for k, c in self.counts.items()}
        return self._totals


def text_baselines(questions: Sequence[Mapping], *, no_difference: str) -> dict[str, object]:
    """Accuracy of every baseline, the best one, and per question which baselines pick the
    truth outright or between two (credit ≥ 1/2) — the questions to fix first. ``questions``
    carry ``split``, ``options``, ``answer``, ``id`` and (optionally) the pair's
    ``instruction``."""
    results: dict[str, dict] = {}
    telling: dict[str, list[str]] = {}
    controls = any(q["options"].get(q["answer"]) == no_difference for q in questions)
    chosen = {
        id(q): choices(q, no_difference, with_no_difference=controls) for q in questions
    }  # once, not per baseline
    for name, scorer in HEURISTICS.items():
        credits = []
        for q in questions:
            options, truth = chosen[id(q)]
            c = credit(scorer(options, q), truth)
            credits.append(c)
            if c >= 0.5:
                telling.setdefault(str(q["id"]), []).append(name)
        results[name] = {**_accuracy(credits), **group_scores(questions, credits)}
    train = [q for q in questions if q.get("split") == "train"]
    held = [q for q in questions if q.get("split") != "train"]
    if train and held:
        model = NaiveBayes().fit(
            [
                (o, i == t)
                for q in train
                for (opts, t) in [chosen[id(q)]]
                for i, o in enumerate(opts)
            ]
        )
        credits = []
        for q in held:
            options, truth = chosen[id(q)]
            c = credit([model.score(o) for o in options], truth)
            credits.append(c)
            if c >= 0.5:
                telling.setdefault(str(q["id"]), []).append("classifier")
        results["classifier"] = {
            **_accuracy(credits),
            **group_scores(held, credits),
            "trained_on": len(train),
        }
    else:
        results["classifier"] = {
            "accuracy": None,
            "questions": 0,
            "trained_on": len(train),
            "note": "needs train questions and val or test questions",
        }
    for name, result in results.items():
        result["gated"] = name in GATED and result["questions"] >= MIN_QUESTIONS
        if name in GATED and not result["gated"]:
            result["note"] = f"fewer than {MIN_QUESTIONS} questions: not held to the limit"
    results["instruction_overlap"]["note"] = (
        "not in the questions: the edit instruction states the edit, so this only shows how "
        "closely instructions match descriptions; not gated"
    )
    measured = {
        k: v["accuracy"] for k, v in results.items() if v["accuracy"] is not None and v["gated"]
    }
    best = max(measured, key=lambda k: (measured[k], k)) if measured else None
    return {
        "chance": round(1 / 4 if controls else 1 / 3, 4),
        "baselines": results,
        "best": best,
        "best_accuracy": measured.get(best) if best else None,
        "telling": {k: telling[k] for k in sorted(telling)},
        "gated_names": list(GATED),
    }


def group_scores(questions: Sequence[Mapping], credits: Sequence[float]) -> dict:
    """Winoground's group score beside the per-question one: the share of twin groups whose
    every question the baseline answers (expected: the product of the questions' credits),
    and the per-question accuracy inside and outside twin groups."""
    groups: dict[str, list[float]] = {}
    shared: dict[str, set[str]] = {}  # each group's option sets, as text
    inside: list[float] = []
    outside: list[float] = []
    for q, c in zip(questions, credits, strict=True):
        group = q.get("twin_group")
        if group:
            groups.setdefault(str(group), []).append(c)
            shared.setdefault(str(group), set()).add(repr(sorted(q["options"].values())))
            inside.append(c)
        else:
            outside.append(c)
    # Questions of one option set get one answer from anything that reads only text (ties
    # broken alike): with different truths, it wholly answers no such group. Otherwise the
    # questions' credits are independent chances.
    whole = [
        0.0 if len(shared[g]) == 1 else math.prod(cs) for g, cs in groups.items() if len(cs) >= 2
    ]
    return {
        "groups": len(whole),
        "group_accuracy": round(math.fsum(whole) / len(whole), 4) if whole else None,
        "in_groups": _accuracy(inside),
        "outside_groups": _accuracy(outside),
    }


def _accuracy(credits: Sequence[float]) -> dict:
    return {
        "accuracy": round(math.fsum(credits) / len(credits), 4) if credits else None,
        "questions": len(credits),
    }
