"""Speed of scoring: a predictions file of 10,000 records (boxes + descriptions) and 10,000
questions against a release of 10,000 generated records, with the default text scorer.

    .venv/bin/python bench/evaluate.py [--records 10000] [--seed 0]

Records have one change each (a few with two, some with an absent side) on 640×480 frames;
predictions shift boxes, reword or swap descriptions, rename entities, drop or add changes,
answer three questions in four right, and 1% of lines are garbage. Timed: ``evaluate()`` from
the bytes of the file to the finished result (reading, Grounded F1, mIoU, COCO mAP per side,
hallucination rate, MCQ accuracy), in one thread.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pairdiff.geometry import Frame  # noqa: E402
from pairdiff.release.questions import question_item  # noqa: E402
from pairdiff.release.records import ReleasePair, benchmark_record  # noqa: E402
from pairdiff.scoring.evaluate import evaluate  # noqa: E402
from pairdiff.scoring.text import text_scorer  # noqa: E402

CATEGORIES = ["object", "attribute", "count", "relation"]
ENTITIES = ["car", "dog", "cup", "hat", "ring", "sofa", "lamp", "bottle", "chair", "plant"]
COLOURS = ["red", "blue", "white", "green", "black", "brown"]
FRAME = Frame(640, 480)


def _box(rng: random.Random) -> list[int]:
    w, h = rng.randint(20, 300), rng.randint(20, 240)
    x, y = rng.randint(0, FRAME.width - w), rng.randint(0, FRAME.height - h)
    return [x, y, x + w, y + h]


def _change(rng: random.Random) -> dict:
    entity = rng.choice(ENTITIES)
    kind = rng.random()
    box_a, box_b = _box(rng), _box(rng)
    if kind < 0.15:
        return {
            "category": "object",
            "description": f"A {entity} was added on the right.",
            "entity_a": "",
            "entity_b": entity,
            "boxes_a": [],
            "boxes_b": [box_b],
        }
    if kind < 0.3:
        return {
            "category": "object",
            "description": f"The {entity} was removed.",
            "entity_a": entity,
            "entity_b": "",
            "boxes_a": [box_a],
            "boxes_b": [],
        }
    a, b = rng.sample(COLOURS, 2)
    return {"category": rng.choice(CATEGORIES),
            "description": f"The {entity} changed from {a} to {b} near the window.",
            "entity_a": entity, "entity_b": entity,
            "boxes_a": [box_a], "boxes_b": [box_a]}  # fmt: skip


def release(n: int, seed: int) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    records, questions = [], []
    for i in range(n):
        changes = [_change(rng) for _ in range(2 if rng.random() < 0.05 else 1)]
        pair = ReleasePair(
            pair_id=i + 1, external_id=f"p{i}", image_a=f"images/{i}_a.jpg",
            image_b=f"images/{i}_b.jpg", frame_a=FRAME, frame_b=FRAME, changes=tuple(changes),
        )  # fmt: skip
        record = benchmark_record(pair, "test")
        records.append(record)
        item = question_item(
            description=record["description"],
            negatives=[f"The {changes[0]['entity_b'] or 'cup'} moved left.", "A lamp appeared."],
            answer_position=i % 4,
            seed=i,
        )
        questions.append({"id": record["id"], "pair_id": i + 1, "split": "test",
                          "category": record["category"], **item})  # fmt: skip
    return records, questions


def predictions(records, questions, seed: int) -> bytes:
    rng = random.Random(seed + 1)
    lines = []
    for record in records:
        if rng.random() < 0.01:
            lines.append("{garbage")
            continue
        changes = []
        for change in record["changes"]:
            if rng.random() < 0.05:
                continue  # missed
            shift = rng.choice([0, 5, 20, 80])
            out: dict[str, Any] = {
                key: [[min(1000, max(0, c + rng.randint(-shift, shift))) for c in box]
                      for box in change[key]]
                for key in ("boxes_a", "boxes_b")
            }  # fmt: skip
            for key in ("boxes_a", "boxes_b"):
                out[key] = [b for b in out[key] if b[0] < b[2] and b[1] < b[3]]
            words = change["description"].split()
            if rng.random() < 0.3:
                rng.shuffle(words)
            out |= {"description": " ".join(words), "category": change["category"],
                    "entity_a": change["entity_a"],
                    "entity_b": change["entity_b"] if rng.random() < 0.9 else "thing"}  # fmt: skip
            changes.append(out)
        if rng.random() < 0.1:
            changes.append({"boxes_a": [[0, 0, 100, 100]], "boxes_b": [[0, 0, 100, 100]],
                            "description": "Something changed.", "entity_a": "x",
                            "entity_b": "x", "category": "object"})  # fmt: skip
        lines.append(json.dumps({"id": record["id"], "changes": changes}))
    for q in questions:
        answer = q["answer"] if rng.random() < 0.75 else rng.choice("ABCD")
        lines.append(json.dumps({"id": q["id"], "answer": answer}))
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    records, questions = release(args.records, args.seed)
    data = predictions(records, questions, args.seed)
    scorer = text_scorer()
    start, cpu = time.perf_counter(), time.process_time()
    result = evaluate(records=records, questions=questions, data=data, coords="1000", scorer=scorer)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    g, q = result["grounding"], result["questions"]
    print(f"{args.records} records + {len(questions)} questions, {len(data) / 2**20:.1f} MB "
          f"of predictions, text metric {scorer.name} ≥ {scorer.threshold}")  # fmt: skip
    lines = args.records + len(questions)
    print(f"scored in {seconds:.1f} s wall, {cpu:.1f} s CPU ({lines / seconds:,.0f} lines/s)")
    print(f"grounded F1 {g['grounded_f1']}, mIoU {g['miou']}, mAP {g['map']['mean']}, "
          f"hallucination {g['hallucination_rate']}, accuracy {q['accuracy']}, "
          f"unparseable {result['unparseable']['count']}")  # fmt: skip


if __name__ == "__main__":
    main()
