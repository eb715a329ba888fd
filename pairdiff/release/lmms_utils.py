"""lmms-eval task helpers of a Diffmark release (copied into the release as
``lmms_eval/<task>/utils.py``; the task YAMLs name these functions with ``!function``).

Scoring calls the same code as ``manage.py evaluate``: ``pairdiff.scoring`` (Diffmark's pure-Python
package; put the Diffmark checkout on PYTHONPATH). Answers are read strictly: an answer naming no
single option is wrong, never replaced by a random option.
"""

from __future__ import annotations

import json

PROMPT = (
    "Image A and image B are nearly identical. Find the change and answer with JSON: "
    '{"changes": [{"category": ..., "description": one sentence, "entity_a": ..., '
    '"entity_b": ..., "boxes_a": [[x1, y1, x2, y2]], "boxes_b": [[x1, y1, x2, y2]]}]}. '
    "Boxes in [0, 1000] coordinates of each image; [] for a side where the object is absent."
)


def doc_to_visual(doc: dict) -> list:
    """Both images, from the release's ``images/`` folder: the shards name them by path (run
    lmms-eval from the release folder)."""
    from PIL import Image

    return [Image.open(doc[f"{side}_path"]).convert("RGB") for side in ("image_a", "image_b")]


def doc_to_text_question(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    options = "\n".join(f"{letter}. {doc[letter]}" for letter in "ABCD")
    return (
        f"The first image is image A, the second image B.\n{doc['question']}\n{options}\n"
        "Answer with the option's letter only."
    )


def doc_to_text_grounding(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    return PROMPT


def process_question(doc: dict, results: list) -> dict:
    from pairdiff.scoring.letters import read_letter

    letter = read_letter(results[0] if results else "", {k: doc[k] for k in "ABCD"})
    return {
        "accuracy": {"id": doc["id"], "category": doc["category"], "right": letter == doc["answer"]}
    }


def aggregate_accuracy(items: list) -> float:
    return sum(item["right"] for item in items) / len(items) if items else 0.0


def process_grounding(doc: dict, results: list) -> dict:
    record = {
        "id": doc["id"],
        "pair_id": doc["pair_id"],
        "split": doc["split"],
        "category": doc["category"],
        "difficulty": doc["difficulty"],
        "size_a": [int(v) for v in doc["size_a"]],
        "size_b": [int(v) for v in doc["size_b"]],
        "changes": json.loads(doc["changes"]),
    }
    return {"grounded_f1": {"record": record, "text": results[0] if results else ""}}


def aggregate_grounded_f1(items: list) -> float:
    """Grounded F1 of all answers, scored by ``pairdiff.scoring.evaluate`` (default text metric,
    coordinates [0, 1000], the raw answers read by Diffmark's answer parser)."""
    from pairdiff.scoring.evaluate import evaluate
    from pairdiff.scoring.text import text_scorer

    records = [item["record"] for item in items]
    lines = [json.dumps({"id": r["id"], "text": item["text"], "task": "changes"}) for r, item in
             zip(records, items, strict=True)]  # fmt: skip
    try:
        result = evaluate(
            records=records,
            questions=[],
            data=("\n".join(lines) + "\n").encode(),
            coords="1000",
            scorer=text_scorer(),
        )
    except ValueError:  # no answer could be read at all
        return 0.0
    return (result["grounding"] or {}).get("grounded_f1") or 0.0
