"""VDiff-Bench multiple-choice accuracy per category and overall, and circular accuracy (pure).

A question without a readable answer is wrong, never filled in with a random option. Circular
accuracy applies when a release ships rotated variants of a question (the same options in
other orders, each record naming its original in ``rotation_of``): a question counts only when
every variant of it is answered right, which no fixed-letter bias survives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def question_scores(
    questions: Sequence[Mapping],
    answers: Mapping[str, str | None],
    *,
    difficulty_of: Mapping[str, str],
) -> dict:
    """Accuracy over ``questions`` (the ones scored), with ``answers`` by question id;
    ``difficulty_of`` maps a question id to its pair's difficulty for the breakdown."""
    right: dict[str, bool] = {}
    for q in questions:
        right[str(q["id"])] = answers.get(str(q["id"])) == q["answer"]
    by_category: dict[str, list[bool]] = {}
    by_difficulty: dict[str, list[bool]] = {}
    groups: dict[str, list[bool]] = {}
    rotated = False
    for q in questions:
        key = str(q["id"])
        by_category.setdefault(q["category"], []).append(right[key])
        by_difficulty.setdefault(difficulty_of.get(key) or "none", []).append(right[key])
        base = q.get("rotation_of")
        rotated |= bool(base)
        groups.setdefault(str(base or key), []).append(right[key])
    answered = sum(1 for q in questions if answers.get(str(q["id"])) is not None)
    return {
        "accuracy": _accuracy(list(right.values())),
        "circular_accuracy": (
            _accuracy([all(group) for group in groups.values()]) if rotated else None
        ),
        "questions": len(questions),
        "answered": answered,
        "missing": len(questions) - answered,
        "correct": sum(right.values()),
        "by_category": {k: _cell(v) for k, v in sorted(by_category.items())},
        "by_difficulty": {k: _cell(v) for k, v in sorted(by_difficulty.items())},
    }


def _cell(values: list[bool]) -> dict:
    return {"accuracy": _accuracy(values), "questions": len(values), "correct": sum(values)}


def _accuracy(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
