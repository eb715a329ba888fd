"""A predictions file scored against a release's records and questions (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairdiff.labels import Synonyms, label_normaliser
from pairdiff.scoring.cocomap import side_map
from pairdiff.scoring.grounded import grounded_scores
from pairdiff.scoring.mcq import question_scores
from pairdiff.scoring.predictions import (
    MAX_LINE_REASONS,
    Predictions,
    read_predictions,
    space_of,
    truth_changes,
)
from pairdiff.scoring.text import TextScorer, scorer_json

SCORING_VERSION = 1


def evaluate(
    *,
    records: Sequence[Mapping],
    questions: Sequence[Mapping],
    data: bytes,
    coords: str,
    scorer: TextScorer,
    synonyms: Synonyms | None = None,
) -> dict:
    """Every metric of a predictions file; PredictionsRefused when it cannot be scored.

    The splits scored are the ones the file answers (a file of test-split predictions is scored
    on the whole test split: a record or question it leaves out counts as unanswered); grounding
    and questions are scored separately, each only when the file has lines for it.
    """
    predictions = read_predictions(data, records=records, questions=questions, coords=coords)
    return {
        "scoring_version": SCORING_VERSION,
        "coords": coords,
        "space": space_of(coords),
        "text_metric": scorer_json(scorer),
        "lines": predictions.lines,
        "unparseable": _unparseable(predictions),
        "grounding": _grounding(records, predictions, coords, scorer, synonyms),
        "questions": _questions(records, questions, predictions),
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


def _grounding(records, predictions: Predictions, coords, scorer, synonyms) -> dict | None:
    if not predictions.changes:
        return None
    named = predictions.changes.keys() | predictions.mentioned_records
    splits = sorted({r["split"] for r in records if str(r["id"]) in named})
    scored = [r for r in records if r["split"] in splits]
    items = [
        (r, truth_changes(r, coords), predictions.changes.get(str(r["id"]), [])) for r in scored
    ]
    scores = grounded_scores(items, scorer=scorer, normalise=label_normaliser(synonyms))
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
    answered = sum(1 for r in scored if str(r["id"]) in predictions.changes)
    return {
        "splits": splits,
        "records": len(scored),
        "answered": answered,
        "missing": len(scored) - answered,
        **scores,
        "map": {
            "a": maps["a"],
            "b": maps["b"],
            "mean": round(sum(defined) / len(defined), 4) if defined else None,
            "how": "COCO AP@[.50:.95] per side, class-agnostic (pycocotools)",
        },
    }


def _questions(records, questions, predictions: Predictions) -> dict | None:
    if not predictions.answers:
        return None
    named = predictions.answers.keys() | predictions.mentioned_questions
    splits = sorted({q.get("split", "") for q in questions if str(q["id"]) in named})
    scored = [q for q in questions if q.get("split", "") in splits]
    difficulty = {r["pair_id"]: r["difficulty"] for r in records}
    difficulty_of = {str(q["id"]): difficulty.get(q.get("pair_id")) or "none" for q in scored}
    return {
        "splits": splits,
        **question_scores(scored, predictions.answers, difficulty_of=difficulty_of),
    }
