"""lmms-eval task helpers of a Diffmark release (copied into the release as
``lmms_eval/<task>/utils.py``; the task YAMLs name these functions with ``!function``).

Self-contained: scoring needs nothing but lmms-eval and numpy. It calls ``diffmark_scoring``,
the folder beside this file: a copy of the pure modules of Diffmark's own scorer (Grounded F1,
the slot-aware description rule, the option-letter reader), so the task's numbers are the ones
``manage.py evaluate`` gives for the same answers (JSON answers; MinCU's token format needs
Diffmark's full answer parser). Answers are read strictly: an answer naming no single option is
wrong, never replaced by a random option.

Coordinates: the prompt asks for [0, 1000] boxes. A model that writes pixels (Qwen2.5-VL's
absolute coordinates) is scored in pixels when its task options say so::

    lmms_eval_specific_kwargs:
      default: {coords: "1000"}
      qwen2_5_vl: {coords: "pixel"}

(or ``DIFFMARK_COORDS=pixel`` in the environment). When every box of a run lies outside the
[0, 1000] frame, aggregation warns: those are pixel coordinates scored as [0, 1000].
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from diffmark_scoring.geometry import Box, BoxError  # noqa: E402 (after the path above)
from diffmark_scoring.labels import label_normaliser  # noqa: E402
from diffmark_scoring.scoring.change import Change, space_of, truth_changes  # noqa: E402
from diffmark_scoring.scoring.grounded import grounded_scores  # noqa: E402
from diffmark_scoring.scoring.letters import read_letter  # noqa: E402
from diffmark_scoring.scoring.text import SlotScorer, for_records  # noqa: E402

PROMPT = (
    "Image A and image B are nearly identical. Find the change and answer with JSON: "
    '{"changes": [{"category": ..., "description": one sentence, "entity_a": ..., '
    '"entity_b": ..., "boxes_a": [[x1, y1, x2, y2]], "boxes_b": [[x1, y1, x2, y2]]}]}. '
    "Boxes in {space} of each image; [] for a side where the object is absent."
)
SPACES = {"1000": "[0, 1000] coordinates", "pixel": "pixel coordinates"}
TOLERANCE = 0.01  # as Diffmark's reader: a coordinate this far outside the frame is clipped
_coords_of: dict[str, str] = {}  # doc id → the coords its prompt asked for


def doc_to_visual(doc: dict) -> list:
    """Both images: the rows carry them (``image_a``/``image_b``, decoded by ``datasets``);
    read from ``images/`` by path when a row holds none."""
    from PIL import Image

    out = []
    for side in ("image_a", "image_b"):
        image = doc.get(side)
        if image is None or isinstance(image, dict | str):
            image = Image.open(doc[f"{side}_path"])
        out.append(image.convert("RGB"))
    return out


def doc_to_text_question(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    options = "\n".join(f"{letter}. {doc[letter]}" for letter in "ABCD")
    return (
        f"The first image is image A, the second image B.\n{doc['question']}\n{options}\n"
        "Answer with the option's letter only."
    )


def doc_to_text_grounding(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    coords = _coords(lmms_eval_specific_kwargs)
    _coords_of[str(doc["id"])] = coords
    return PROMPT.replace("{space}", SPACES[coords])


def _coords(kwargs: dict | None) -> str:
    coords = os.environ.get("DIFFMARK_COORDS") or (kwargs or {}).get("coords") or "1000"
    if coords not in SPACES:
        raise ValueError(f"coords must be one of {', '.join(SPACES)}, not {coords!r}")
    return coords


def process_question(doc: dict, results: list) -> dict:
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
        "changes": json.loads(doc["changes"])
        if isinstance(doc["changes"], str)
        else doc["changes"],
    }
    coords = _coords_of.get(str(doc["id"])) or _coords(None)
    text = results[0] if results else ""
    return {"grounded_f1": {"record": record, "text": text, "coords": coords}}


def aggregate_grounded_f1(items: list) -> float:
    """Grounded F1 of all answers (the slot-aware description rule, IoU ≥ 0.5, entities)."""
    return grounding_scores(items)["grounded_f1"] or 0.0


def grounding_scores(items: list) -> dict:
    """Every figure of Diffmark's Grounded F1 for ``process_grounding`` items."""
    records = [item["record"] for item in items]
    scorer = for_records(SlotScorer(), records)
    scored, outside, boxes = [], 0, 0
    for item in items:
        record, coords = item["record"], item["coords"]
        predicted, out, seen = _changes(item["text"], record, coords)
        outside, boxes = outside + out, boxes + seen
        scored.append((record, truth_changes(record, coords), predicted))
    if boxes and outside == boxes:
        warnings.warn(
            f"every one of the {boxes} boxes lies outside the frame of coords "
            f"{items[0]['coords']}: the model writes another space (pixels?); set its coords "
            "in lmms_eval_specific_kwargs",
            stacklevel=2,
        )
    return grounded_scores(scored, scorer=scorer, normalise=label_normaliser())


def _changes(text: str, record: dict, coords: str) -> tuple[list[Change], int, int]:
    """The answer's changes in the comparison space (none when it holds no readable JSON),
    with the count of boxes outside the frame and of boxes."""
    found = _json_changes(text)
    out, outside, boxes = [], 0, 0
    for item in found:
        if not isinstance(item, dict):
            continue
        sides = []
        for side in ("a", "b"):
            width, height = record[f"size_{side}"]
            limit = (1000, 1000) if space_of(coords) == "thousand" else (width, height)
            kept = []
            value = item.get(f"boxes_{side}") or []
            if value and all(_number(v) for v in value):
                value = [value]
            for box in value:
                if not (isinstance(box, list) and len(box) == 4 and all(map(_number, box))):
                    continue
                boxes += 1
                if not _inside(box, limit):
                    outside += 1
                    continue
                clipped = [min(max(v, 0), limit[i % 2]) for i, v in enumerate(box)]
                try:
                    kept.append(Box(*clipped))
                except BoxError:
                    continue
            sides.append(tuple(kept))
        out.append(
            Change(
                boxes_a=sides[0],
                boxes_b=sides[1],
                description=str(item.get("description") or ""),
                entity_a=str(item.get("entity_a") or ""),
                entity_b=str(item.get("entity_b") or ""),
                category=str(item.get("category") or ""),
            )
        )
    return out, outside, boxes


def _inside(box: list, limit: tuple[int, int]) -> bool:
    return all(
        -TOLERANCE * limit[i % 2] <= v <= limit[i % 2] * (1 + TOLERANCE) for i, v in enumerate(box)
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _json_changes(text: str) -> list:
    """The ``changes`` list of the first JSON object in ``text`` (code fences allowed)."""
    fenced = _FENCE.search(text or "")
    body = fenced.group(1) if fenced else (text or "")
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return []
    try:
        value = json.loads(body[start : end + 1])
    except (ValueError, RecursionError):
        return []
    if isinstance(value, dict) and isinstance(value.get("changes"), list):
        return value["changes"]
    return []
