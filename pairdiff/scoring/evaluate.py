"""A predictions file scored against a release's records and questions (pure).

Grounding and questions are scored on the splits the file answers, the normal order only; the
swapped-order copy (split ``test_swapped``, each item naming its normal-order twin in
``swap_of``) is scored apart, beside the same items in normal order, and the drop reported
(MinCU's Table 13). Grounded F1 is given under the description rule asked for (``slots`` by
default) and, when a local BERTScore model is configured, under MinCU's own rule as well
(``mincu``); when it is not, ``mincu`` says why it could not be computed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import BinaryIO

from pairdiff.labels import Synonyms, label_normaliser
from pairdiff.scoring.change import space_of, truth_changes
from pairdiff.scoring.cocomap import side_map
from pairdiff.scoring.grounded import grounded_scores
from pairdiff.scoring.mcq import question_scores
from pairdiff.scoring.predictions import (
    MAX_LINE_REASONS,
    TOLERANCE,
    Predictions,
    read_predictions,
)
from pairdiff.scoring.space import space_warning
from pairdiff.scoring.text import TextScorer, for_records, scorer_json

SCORING_VERSION = 2
SWAPPED = "test_swapped"  # the A/B-swapped copy of the test split
_HEADLINE = ("grounded_f1", "precision", "recall", "miou", "hallucination_rate")


def evaluate(
    *,
    records: Sequence[Mapping],
    questions: Sequence[Mapping],
    data: bytes | BinaryIO,
    coords: str,
    scorer: TextScorer,
    synonyms: Synonyms | None = None,
    rotations: Sequence[Mapping] = (),
    mincu: TextScorer | None = None,
    mincu_unavailable: str = "",
) -> dict:
    """Every metric of a predictions file (its bytes or a binary file, read line by line);
    PredictionsRefused when it cannot be scored. ``rotations``: the release's rotated
    questions; ``mincu``: the BERTScore ≥ 0.85 scorer when one is configured, else
    ``mincu_unavailable`` says why not."""
    predictions = read_predictions(data, records=records, questions=[*questions, *rotations],
                                   coords=coords)  # fmt: skip
    scorer = for_records(scorer, records)
    normalise = label_normaliser(synonyms)
    items = _items([r for r in records if r["split"] != SWAPPED], predictions, coords)
    grounding = None
    warnings = []
    if items is not None:
        grounding = _grounding(items, scorer, normalise)
        grounding["mincu"] = _mincu(items, mincu, mincu_unavailable, normalise)
        if warning := space_warning(items, coords):
            warnings.append(warning["message"])
            grounding["space_check"] = warning
    return {
        "scoring_version": SCORING_VERSION,
        "coords": coords,
        "space": space_of(coords),
        "text_metric": scorer_json(scorer),
        "lines": predictions.lines,
        "unparseable": _unparseable(predictions),
        "refused": _refused(predictions),
        "clipped_boxes": predictions.clipped_boxes,
        "tolerance": TOLERANCE,
        "warnings": warnings,
        "grounding": grounding,
        "questions": _questions(records, questions, rotations, predictions),
        "order_swap": _order_swap(records, questions, predictions, coords, scorer, normalise),
    }


def _unparseable(predictions: Predictions) -> dict:
    count = predictions.unparseable_count
    return {
        "count": count,
        "rate": round(count / predictions.lines, 4) if predictions.lines else 0.0,
        "lines": [
            {"line": n, "reason": why} for n, why in predictions.unparseable[:MAX_LINE_REASONS]
        ],
    }


def _refused(predictions: Predictions) -> dict:
    """Lines refused for a box outside the frame (counted among the unparseable too)."""
    count = predictions.refused_count
    return {
        "count": count,
        "rate": round(count / predictions.lines, 4) if predictions.lines else 0.0,
        "lines": [{"line": n, "reason": why} for n, why in predictions.refused],
    }


Items = list[tuple[Mapping, list, list]]
_NONE: list = []  # a record the file has no line for (one answered "no change" has its own [])


def _items(records: Sequence[Mapping], predictions: Predictions, coords: str) -> Items | None:
    """``(record, truths, predicted)`` of every record of the splits the file answers; None
    when it answers no record."""
    named = predictions.changes.keys() | predictions.mentioned_records
    if not named & {str(r["id"]) for r in records}:
        return None
    splits = {r["split"] for r in records if str(r["id"]) in named}
    return _listed([r for r in records if r["split"] in splits], predictions, coords)


def _grounding(items: Items, scorer: TextScorer, normalise: Callable[[str], str]) -> dict:
    scores = grounded_scores(items, scorer=scorer, normalise=normalise)
    maps = {
        side: side_map(
            [[b for t in truths for b in getattr(t, f"boxes_{side}")] for _, truths, _ in items],
            [
                [(b, p.confidence) for p in predicted for b in getattr(p, f"boxes_{side}")]
                for _, _, predicted in items
            ],
        )
        for side in ("a", "b")
    }
    defined = [v for v in maps.values() if v is not None]
    return {
        "splits": sorted({r["split"] for r, _, _ in items}),
        "records": len(items),
        "answered": _answered(items),
        "missing": len(items) - _answered(items),
        **scores,
        "map": {
            "a": maps["a"],
            "b": maps["b"],
            "mean": round(sum(defined) / len(defined), 4) if defined else None,
            "how": "COCO AP@[.50:.95] per side, class-agnostic (pycocotools)",
        },
    }


def _answered(items: Items) -> int:
    return sum(1 for _, _, predicted in items if predicted is not _NONE)


def _mincu(
    items: Items, mincu: TextScorer | None, unavailable: str, normalise: Callable[[str], str]
) -> dict:
    """Grounded F1 under MinCU's rule (IoU ≥ 0.5, labels, BERTScore ≥ 0.85), or why not."""
    if mincu is None:
        return {
            "computable": False,
            "why": unavailable or "no BERTScore model is configured",
            "rule": "IoU ≥ 0.5, entity label, BERTScore F1 ≥ 0.85 (MinCU)",
        }
    scores = grounded_scores(items, scorer=mincu, normalise=normalise)
    return {
        "computable": True,
        "rule": "IoU ≥ 0.5, entity label, BERTScore F1 ≥ 0.85 (MinCU)",
        "text_metric": scorer_json(mincu),
        **{k: scores[k] for k in (*_HEADLINE, "true_positives")},
        "by_category": {k: v["grounded_f1"] for k, v in scores["by_category"].items()},
    }


def _questions(
    records: Sequence[Mapping],
    questions: Sequence[Mapping],
    rotations: Sequence[Mapping],
    predictions: Predictions,
) -> dict | None:
    normal = [q for q in questions if q.get("split", "") != SWAPPED]
    named = predictions.answers.keys() | predictions.mentioned_questions
    splits = sorted({q.get("split", "") for q in normal if str(q["id"]) in named})
    if not splits:
        return None
    scored = [q for q in normal if q.get("split", "") in splits]
    difficulty = {r["pair_id"]: r["difficulty"] for r in records}
    difficulty_of = {str(q["id"]): difficulty.get(q.get("pair_id")) or "none" for q in scored}
    return {
        "splits": splits,
        **question_scores(
            scored, predictions.answers, difficulty_of=difficulty_of, rotations=rotations
        ),
    }


def _order_swap(
    records: Sequence[Mapping],
    questions: Sequence[Mapping],
    predictions: Predictions,
    coords: str,
    scorer: TextScorer,
    normalise: Callable[[str], str],
) -> dict:
    """The swapped-order copy scored beside its normal-order twins, and the drop."""
    out: dict = {"split": SWAPPED}
    swapped = [r for r in records if r["split"] == SWAPPED]
    if not swapped and not any(q.get("split") == SWAPPED for q in questions):
        return {**out, "available": False, "why": f"the release has no {SWAPPED} split"}
    out["available"] = True
    by_id = {str(r["id"]): r for r in records}
    twins = [by_id[str(r["swap_of"])] for r in swapped if str(r.get("swap_of")) in by_id]
    named = predictions.changes.keys() | predictions.mentioned_records
    if swapped and any(str(r["id"]) in named for r in swapped):
        normal = _grounding(_listed(twins, predictions, coords), scorer, normalise)
        turned = _grounding(_listed(swapped, predictions, coords), scorer, normalise)
        out["grounding"] = {
            "records": len(swapped),
            "normal": {k: normal[k] for k in _HEADLINE},
            "swapped": {k: turned[k] for k in _HEADLINE},
            "drop": _drop(normal["grounded_f1"], turned["grounded_f1"]),
        }
    q_swapped = [q for q in questions if q.get("split") == SWAPPED]
    q_by_id = {str(q["id"]): q for q in questions}
    q_twins = [q_by_id[str(q["swap_of"])] for q in q_swapped if str(q.get("swap_of")) in q_by_id]
    q_named = predictions.answers.keys() | predictions.mentioned_questions
    if q_swapped and any(str(q["id"]) in q_named for q in q_swapped):
        normal_acc = question_scores(q_twins, predictions.answers, difficulty_of={})["accuracy"]
        turned_acc = question_scores(q_swapped, predictions.answers, difficulty_of={})["accuracy"]
        out["questions"] = {
            "questions": len(q_swapped),
            "normal": normal_acc,
            "swapped": turned_acc,
            "drop": _drop(normal_acc, turned_acc),
        }
    if "grounding" not in out and "questions" not in out:
        out["why"] = f"the file answers no item of the {SWAPPED} split"
    return out


def _listed(records: Sequence[Mapping], predictions: Predictions, coords: str) -> Items:
    return [
        (r, truth_changes(r, coords), predictions.changes.get(str(r["id"]), _NONE)) for r in records
    ]


def _drop(normal: float | None, swapped: float | None) -> float | None:
    return None if normal is None or swapped is None else round(normal - swapped, 4)
