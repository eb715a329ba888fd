"""The "Done when" checks of issue 25 on built releases, read from their files only.

    python -m bench.release_checks RELEASE_DIR [EARLIER_RELEASE_DIR]

- **sources**: no val or test pair shares its source photo with a train pair — by image A's
  sha256 over the released file, and by a 64-bit difference hash (dHash) within six bits;
- **questions**: how many val+test questions are in twin groups, twin groups and controls;
  every control shows two distinct files (different names; the bytes are reported);
- with an earlier release of the same project: every pair released in both keeps its split,
  and its question (options, letters, answer, negatives) byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from PIL import Image

HELD = ("val", "test")
NEAR_BITS = 6


def records(folder: Path) -> list[dict]:
    return [
        r
        for r in json.loads((folder / "benchmark.json").read_text())
        if r["split"] != "test_swapped"
    ]


def questions(folder: Path) -> list[dict]:
    rows = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]
    return [q for q in rows if q["split"] != "test_swapped"]


def dhash(path: Path) -> int:
    with Image.open(path) as image:
        small = image.convert("L").resize((9, 8))
        pixels = small.tobytes()
    bits = 0
    for row in range(8):
        for col in range(8):
            bits = (bits << 1) | (pixels[row * 9 + col] > pixels[row * 9 + col + 1])
    return bits


def source_check(folder: Path) -> dict:
    sides: dict[str, list[tuple[str, int]]] = {"train": [], "held": []}
    for record in records(folder):
        path = folder / record["image_a"]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        side = "held" if record["split"] in HELD else "train"
        sides[side].append((digest, dhash(path)))
    train_sha = {s for s, _ in sides["train"]}
    same = sum(1 for s, _ in sides["held"] if s in train_sha)
    near = sum(
        1
        for _, h in sides["held"]
        if any(bin(h ^ t).count("1") <= NEAR_BITS for _, t in sides["train"])
    )
    return {
        "held_pairs": len(sides["held"]),
        "train_pairs": len(sides["train"]),
        "held_sharing_image_a_sha256_with_train": same,
        "held_within_6_bits_dhash_of_train": near,
    }


def question_check(folder: Path) -> dict:
    rows = questions(folder)
    held = [q for q in rows if q["split"] in HELD]
    controls = [q for q in rows if q.get("control")]
    return {
        "questions": len(rows),
        "held_questions": len(held),
        "held_in_twin_groups": sum(1 for q in held if q.get("twin_group")),
        "held_twin_groups": len({q["twin_group"] for q in held if q.get("twin_group")}),
        "controls": len(controls),
        "controls_with_one_file_twice": sum(1 for q in controls if q["image_a"] == q["image_b"]),
    }


def stability(folder: Path, earlier: Path) -> dict:
    before = {r["pair_id"]: r["split"] for r in records(earlier)}
    after = {r["pair_id"]: r["split"] for r in records(folder)}
    both = set(before) & set(after)
    moved = sorted(p for p in both if before[p] != after[p])
    keys = ("options", "answer", "negatives", "twin_group", "question")
    old_rows = {(q["pair_id"], bool(q.get("control"))): q for q in questions(earlier)}
    new_rows = {(q["pair_id"], bool(q.get("control"))): q for q in questions(folder)}
    kept = [k for k in old_rows if k in new_rows]
    changed = [k for k in kept if any(old_rows[k].get(x) != new_rows[k].get(x) for x in keys)]
    return {
        "pairs_in_both": len(both),
        "pairs_moved_between_splits": len(moved),
        "questions_in_both": len(kept),
        "questions_changed": len(changed),
        "questions_of_earlier_missing": len(old_rows) - len(kept),
    }


def main(argv: list[str]) -> None:
    folder = Path(argv[0])
    out = {"release": str(folder), **source_check(folder), **question_check(folder)}
    if len(argv) > 1:
        out["against"] = argv[1]
        out.update(stability(folder, Path(argv[1])))
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
