"""The text-only attack on demo releases: train a classifier on the questions of releases of
*other* seeds, answer the val and test questions of one release from their text alone, and
report per-question accuracy (inside and outside twin groups) and Winoground's group accuracy,
each with a 95 % Wilson interval.

    python bench/text_only_attack.py RELEASE_DIR [RELEASE_DIR ...]

Each RELEASE_DIR holds a built release (questions.jsonl). Every release is attacked with a
model trained on all the others. The model is a logistic regression (numpy, full-batch
gradient descent) over each option's word unigrams and bigrams, its category, its length and
whether it is "no difference"; a question's answer is its highest-scoring option — the
conditional-logit reading of a per-option classifier.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from pairdiff.release.baselines import credit, length_scores, similarity_scores, words
from pairdiff.release.questions import NO_DIFFERENCE

HELD = ("val", "test")


def load(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]


def features(text: str, category: str) -> list[str]:
    tokens = words(text)
    return [
        *tokens,
        *(f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)),
        f"cat={category}",
        *(f"cat={category}:{t}" for t in tokens),
        f"len={min(len(text) // 10, 9)}",
    ]


class Model:
    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def _rows(self, texts: list[tuple[str, str]], grow: bool) -> list[list[int]]:
        rows = []
        for text, category in texts:
            row = []
            for f in features(text, category):
                if f not in self.index and grow:
                    self.index[f] = len(self.index)
                if f in self.index:
                    row.append(self.index[f])
            rows.append(row)
        return rows

    def fit(self, questions: list[dict], *, steps: int = 300, rate: float = 0.5, l2: float = 1e-3):
        texts, labels = [], []
        for q in questions:
            for letter, text in q["options"].items():
                texts.append((text, q["category"]))
                labels.append(1.0 if letter == q["answer"] else 0.0)
        rows = self._rows(texts, grow=True)
        x = np.zeros((len(rows), len(self.index) + 1), np.float32)
        for i, row in enumerate(rows):
            x[i, row] = 1.0
            x[i, -1] = 1.0
        y = np.array(labels, np.float32)
        self.w = np.zeros(x.shape[1], np.float32)
        for _ in range(steps):
            p = 1 / (1 + np.exp(-(x @ self.w)))
            self.w -= rate * (x.T @ (p - y) / len(y) + l2 * self.w)
        return self

    def answer(self, q: dict) -> str:
        letters = sorted(q["options"])
        rows = self._rows([(q["options"][k], q["category"]) for k in letters], grow=False)
        scores = [float(self.w[row].sum()) for row in rows]
        return letters[int(np.argmax(scores))]


def wilson(k: float, n: int) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p, z = k / n, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def share_credit(credits: list[float]) -> dict:
    total = sum(credits)
    low, high = wilson(total, len(credits))
    return {
        "credit": round(total, 3),
        "of": len(credits),
        "accuracy": round(total / len(credits), 3) if credits else None,
        "ci95": [round(low, 3), round(high, 3)],
    }


def attack(target: list[dict], others: list[list[dict]]) -> dict:
    model = Model().fit([q for release in others for q in release])
    held = [q for q in target if q["split"] in HELD]
    right = {q["id"]: model.answer(q) == q["answer"] for q in held}
    groups: dict[str, list[bool]] = defaultdict(list)
    for q in held:
        if q.get("twin_group"):
            groups[q["twin_group"]].append(right[q["id"]])
    inside = [right[q["id"]] for q in held if q.get("twin_group")]
    outside = [right[q["id"]] for q in held if not q.get("twin_group")]
    whole = [all(g) for g in groups.values() if len(g) >= 2]

    def share(values: list[bool]) -> dict:
        k = sum(values)
        low, high = wilson(k, len(values))
        return {
            "right": k,
            "of": len(values),
            "accuracy": k / len(values) if values else None,
            "ci95": [round(low, 3), round(high, 3)],
        }

    # The release's own heuristics on the same held-out questions, among the change options
    # (a control's truth is "no difference": no credit): expected accuracy, ties shared.
    heuristics = {}
    for name, scorer in (("similarity", similarity_scores), ("longest", length_scores)):
        credits = []
        for q in held:
            if q.get("twin_group"):
                continue
            texts = [t for t in q["options"].values() if t != NO_DIFFERENCE]
            truth = q["options"][q["answer"]]
            credits.append(credit(scorer(texts), texts.index(truth)) if truth in texts else 0.0)
        heuristics[name] = share_credit(credits)
    return {
        "outside_twin_groups_heuristics": heuristics,
        "questions": share(list(right.values())),
        "in_twin_groups": share(inside),
        "outside_twin_groups": share(outside),
        "twin_groups_wholly_right": share(whole),
        "share_in_groups": round(len(inside) / len(held), 3) if held else None,
    }


def main(argv: list[str]) -> None:
    folders = [Path(a) for a in argv]
    releases = [load(f) for f in folders]
    for i, folder in enumerate(folders):
        others = [r for j, r in enumerate(releases) if j != i]
        print(json.dumps({"release": str(folder), **attack(releases[i], others)}))


if __name__ == "__main__":
    main(sys.argv[1:])
