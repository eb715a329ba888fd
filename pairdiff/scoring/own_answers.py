"""A release's own answers as a predictions file: what a perfect model would send. Tests pin
that it scores 1.0 on every metric; the benchmark script times it; researchers copy its shape."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence


def own_answer_lines(
    records: Sequence[Mapping], questions: Sequence[Mapping], *, coords: str = "1000"
) -> list[dict]:
    """One ``changes`` line per record (boxes in ``coords``) and one ``answer`` per question."""
    lines = []
    for record in records:
        lines.append(
            {
                "id": record["id"],
                "changes": [_change(c, record, coords) for c in record["changes"]],
            }
        )
    lines += [{"id": q["id"], "answer": q["answer"]} for q in questions]
    return lines


def jsonl(lines: Sequence[Mapping]) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()


def _change(change: Mapping, record: Mapping, coords: str) -> dict:
    sides = {}
    for side in ("a", "b"):
        if coords == "1000":
            boxes = change[f"boxes_{side}"]
        elif coords == "pixel":
            boxes = change[f"boxes_{side}_px"]
        else:
            width, height = record[f"size_{side}"]
            boxes = [
                [x1 / width, y1 / height, x2 / width, y2 / height]
                for x1, y1, x2, y2 in change[f"boxes_{side}_px"]
            ]
        sides[f"boxes_{side}"] = boxes
    return {
        **sides,
        "description": change["description"],
        "entity_a": change["entity_a"],
        "entity_b": change["entity_b"],
        "category": change["category"],
    }
