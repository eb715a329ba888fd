"""VDiff-Bench multiple-choice accuracy per category and overall, and circular accuracy (pure).

A question without a readable answer is wrong, never filled in with a random option. Circular
accuracy (MMBench's CircularEval) applies when a release ships rotated variants of a question
(``questions_circular.jsonl``: the same options in the other orders, each naming its original
in ``rotation_of``): a question counts only when it and every variant of it are answered right,
which no fixed-letter bias survives. Plain accuracy is over the original questions only; the
circular figure is given once the file answers some variant (else None, with the count of
variants the release has, so a reader knows it could have been).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def question_scores(
    questions: Sequence[Mapping],
    answers: Mapping[str, str | None],
    *,
    difficulty_of: Mapping[str, str],
    rotations: Sequence[Mapping] = (),
) -> dict:
    """Accuracy over ``questions`` (the ones scored), with ``answers`` by question id;
    ``difficulty_of`` maps a question id to its pair's difficulty for the breakdown;
    ``rotations`` are the rotated variants (rows with ``rotation_of``), here or among
    ``questions``."""
    originals = [q for q in questions if not q.get("rotation_of")]
    variants = [*(q for q in questions if q.get("rotation_of")), *rotations]
    right = {str(q["id"]): answers.get(str(q["id"])) == q["answer"] for q in originals}
    by_category: dict[str, list[bool]] = {}
    by_difficulty: dict[str, list[bool]] = {}
    for q in originals:
        key = str(q["id"])
        by_category.setdefault(q["category"], []).append(right[key])
        by_difficulty.setdefault(difficulty_of.get(key) or "none", []).append(right[key])
    answered = sum(1 for q in originals if answers.get(str(q["id"])) is not None)
    return {
        "accuracy": _accuracy(list(right.values())),
        **_circular(right, variants, answers),
        "questions": len(originals),
        "answered": answered,
        "missing": len(originals) - answered,
        "correct": sum(right.values()),
        "by_category": {k: _cell(v) for k, v in sorted(by_category.items())},
        "by_difficulty": {k: _cell(v) for k, v in sorted(by_difficulty.items())},
    }


def _circular(
    right: Mapping[str, bool], variants: Sequence[Mapping], answers: Mapping[str, str | None]
) -> dict:
    """Circular accuracy over the originals scored whose variants the release has."""
    groups: dict[str, list[bool]] = {}
    answered = 0
    for q in variants:
        base = str(q["rotation_of"])
        if base not in right:
            continue
        answered += str(q["id"]) in answers
        groups.setdefault(base, [right[base]]).append(answers.get(str(q["id"])) == q["answer"])
    variant_count = sum(len(g) - 1 for g in groups.values())
    return {
        "circular_accuracy": (
            _accuracy([all(group) for group in groups.values()]) if answered else None
        ),
        "circular": {
            "questions": len(groups),
            "variants": variant_count,
            "variants_answered": answered,
            "how": "a question counts when it and each rotation of its options are right",
        },
    }


def _cell(values: list[bool]) -> dict:
    return {"accuracy": _accuracy(values), "questions": len(values), "correct": sum(values)}


def _accuracy(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
