"""Cheap non-visual routes to the answers of a built release, read from its folder only.

    python -m bench.leak_attacks RELEASE_DIR [RELEASE_DIR ...]

Each attack answers the val and test questions of ``questions.jsonl`` from what a model (or a
cheat) could read besides the pictures' content: the question's visible fields (id, pair_id,
category, question, options, twin group, image paths), its row's place in the file, the image
files' names, sizes and bytes, and the other files of the folder (benchmark.json's ids, the
swapped and rotated copies). The answer fields (``answer``, ``control``, ``negatives``, and
the record's changes) are read only to score, and from the train split to fit an attack's one
threshold. Accuracy is printed with a 95 % Wilson interval, beside chance (1/4: "no difference"
is the truth of the controls). "Control routes" predict "no difference" when a signal fires
and otherwise the option an answerer that never says it would pick (the first other letter):
they are scored as multiple choice, and the rate of "no difference" truths among the questions
the signal fires on is printed beside the base rate.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

HELD = ("val", "test")
NO_DIFFERENCE = "There is no difference between the two images."


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def share(right: int, n: int) -> str:
    low, high = wilson(right, n)
    return f"{right}/{n} = {right / max(1, n):.1%} [{low:.1%}, {high:.1%}]"


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9']+", text.lower()))


class Release:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        lines = (folder / "questions.jsonl").read_text().splitlines()
        self.all = [json.loads(line) for line in lines]
        for index, row in enumerate(self.all):
            row["_row"] = index
        self.rows = [q for q in self.all if q["split"] != "test_swapped"]
        self.swapped = {q.get("swap_of"): q for q in self.all if q["split"] == "test_swapped"}
        self.held = [q for q in self.rows if q["split"] in HELD]
        self.train = [q for q in self.rows if q["split"] == "train"]
        self.record_ids = {r["id"] for r in json.loads((folder / "benchmark.json").read_text())}
        self._files: dict[str, tuple[int, str]] = {}
        by_split: dict[str, list[dict]] = defaultdict(list)
        for q in self.rows:
            by_split[q["split"]].append(q)
        for rows in by_split.values():
            for i, q in enumerate(rows):
                q["_place"] = i / max(1, len(rows) - 1)
        groups = Counter((q["split"], q.get("twin_group")) for q in self.rows)
        for q in self.rows:
            q["_group_size"] = groups[(q["split"], q["twin_group"])] if q.get("twin_group") else 1
        shapes = Counter(re.sub(r"\d+", "9", str(q["id"])) for q in self.rows)
        common = shapes.most_common(1)[0][0] if shapes else ""
        for q in self.rows:
            q["_id_shape_rare"] = re.sub(r"\d+", "9", str(q["id"])) != common
        texts = Counter(v for q in self.rows for v in q["options"].values())
        self.option_count = texts
        same_options = Counter(
            (q["split"], json.dumps(sorted(q["options"].values()))) for q in self.rows
        )
        for q in self.rows:
            key = (q["split"], json.dumps(sorted(q["options"].values())))
            q["_options_shared"] = same_options[key] > 1
        a_in_group = Counter(
            (q.get("twin_group"), self.file(q["image_a"])[1]) for q in self.rows if q["twin_group"]
        )
        a_rows = Counter(self.file(q["image_a"])[1] for q in self.rows)
        for q in self.rows:
            q["_a_pairs"] = a_rows[self.file(q["image_a"])[1]]
        for q in self.rows:
            key = (q.get("twin_group"), self.file(q["image_a"])[1])
            q["_a_shared_in_group"] = bool(q["twin_group"]) and a_in_group[key] > 1

    def file(self, path: str) -> tuple[int, str]:
        if path not in self._files:
            data = (self.folder / path).read_bytes()
            self._files[path] = (len(data), hashlib.sha256(data).hexdigest())
        return self._files[path]


def nd_letter(q: dict) -> str:
    return next(k for k, v in q["options"].items() if v == NO_DIFFERENCE)


def first_other(q: dict) -> str:
    return next(k for k, v in q["options"].items() if v != NO_DIFFERENCE)


def is_nd(q: dict) -> bool:
    return q["options"][q["answer"]] == NO_DIFFERENCE


def number(path: str) -> int | None:
    found = re.match(r"(\d+)_[ab]\.", Path(path).name)
    return int(found.group(1)) if found else None


def option_attacks(rel: Release) -> dict[str, Callable[[dict], str]]:
    """Answer-picking rules over the option texts and the answers' letters in train."""
    letters = Counter(q["answer"] for q in rel.train)
    top = letters.most_common(1)[0][0] if letters else "A"

    def pick(score: Callable[[str, dict], float], *, high: bool) -> Callable[[dict], str]:
        def answer(q: dict) -> str:
            items = sorted(q["options"].items())
            best = (max if high else min)(items, key=lambda kv: score(kv[1], q))
            return best[0]

        return answer

    def overlap(text: str, q: dict) -> float:
        mine = words(text)
        others = [words(v) for v in q["options"].values() if v != text]
        return sum(len(mine & o) / max(1, len(mine | o)) for o in others)

    def change_only(rule: Callable[[dict], str]) -> Callable[[dict], str]:
        """The rule among the change options only ("no difference" never picked)."""

        def answer(q: dict) -> str:
            trimmed = {
                **q,
                "options": {k: v for k, v in q["options"].items() if v != NO_DIFFERENCE},
            }
            return rule(trimmed)

        return answer

    count = rel.option_count
    return {
        "first change option (the control routes' answer when silent)": first_other,
        "most common answer letter in train": lambda q: top,
        "longest option": pick(lambda t, q: len(t), high=True),
        "shortest option": pick(lambda t, q: len(t), high=False),
        "longest change option": change_only(pick(lambda t, q: len(t), high=True)),
        "shortest change option": change_only(pick(lambda t, q: len(t), high=False)),
        "option most frequent in the release": change_only(pick(lambda t, q: count[t], high=True)),
        "option least frequent in the release": change_only(
            pick(lambda t, q: count[t], high=False)
        ),
        "most word overlap with the others": change_only(pick(overlap, high=True)),
        "least word overlap with the others": change_only(pick(overlap, high=False)),
        "option turned by the B-first copy (test)": lambda q: swapped_tell(rel, q),
        "manifest's list of questions each baseline answers": telling_rule(rel),
    }


def telling_rule(rel: Release) -> Callable[[dict], str]:
    """The manifest once listed, per question, the text-only baselines that pick its truth
    (``telling``): with the baselines' rules (pairdiff.release.baselines) that is the answer
    when "longest" or "similarity" is named, and not their pick when neither is."""
    from pairdiff.release.baselines import length_scores, similarity_scores

    manifest = json.loads((rel.folder / "manifest.json").read_text())
    telling = (manifest.get("text_baselines") or {}).get("telling") or {}
    rules = {"longest": length_scores, "similarity": similarity_scores}

    def answer(q: dict) -> str:
        letters = sorted(q["options"])
        texts = [q["options"][k] for k in letters]
        named = telling.get(str(q["id"]), [])
        picks = {name: letters[max(range(4), key=rule(texts).__getitem__)]
                 for name, rule in rules.items()}  # fmt: skip
        for name in rules:
            if name in named:
                return picks[name]
        if not telling:
            return first_other(q)
        left = [k for k in letters if k not in picks.values() and q["options"][k] != NO_DIFFERENCE]
        return left[0] if left else first_other(q)

    return answer


def swapped_tell(rel: Release, q: dict) -> str:
    """The one option whose text the B-first copy changed, if only one did; else the first."""
    turned = rel.swapped.get(q["id"])
    if turned is None:
        return first_other(q)
    changed = [k for k, v in q["options"].items() if turned["options"].get(k) != v]
    return changed[0] if len(changed) == 1 else first_other(q)


def control_signals(rel: Release) -> dict[str, Callable[[dict], bool]]:
    """Signals that "no difference" is the truth, from anything but the pixels."""

    def ratio(q: dict) -> float:
        return rel.file(q["image_b"])[0] / max(1, rel.file(q["image_a"])[0])

    signals: dict[str, Callable[[dict], bool]] = {
        "one path named twice": lambda q: q["image_a"] == q["image_b"],
        "A and B byte-identical": lambda q: rel.file(q["image_a"])[1] == rel.file(q["image_b"])[1],
        "A and B of equal size": lambda q: rel.file(q["image_a"])[0] == rel.file(q["image_b"])[0],
        "id of another shape than most (e.g. a suffix)": lambda q: q["_id_shape_rare"],
        "id not a benchmark.json record": lambda q: q["id"] not in rel.record_ids,
        "file number is not the pair id": lambda q: (
            number(q["image_a"]) != q["pair_id"] or number(q["image_b"]) != q["pair_id"]
        ),
        "A's bytes shared with a row of its twin group": lambda q: q["_a_shared_in_group"],
        "A's bytes shown by exactly one other row": lambda q: q["_a_pairs"] == 2,
        "twin group of two": lambda q: q["_group_size"] == 2,
        "options equal to another row's outside groups": lambda q: (
            q["_options_shared"] and not q.get("twin_group")
        ),
        "no B-first copy (test)": lambda q: q["split"] == "test" and q["id"] not in rel.swapped,
        "B-first copy keeps every option (test)": lambda q: (
            q["id"] in rel.swapped and rel.swapped[q["id"]]["options"] == q["options"]
        ),
    }
    for name, feature in (
        ("B/A size ratio", ratio),
        ("|log B/A size ratio|", lambda q: abs(math.log(max(ratio(q), 1e-9)))),
        ("pair id", lambda q: q["pair_id"]),
        ("place of the row in its split", lambda q: q["_place"]),
        ("size of image B", lambda q: rel.file(q["image_b"])[0]),
    ):
        signals[f"{name} past a threshold fitted on train"] = fitted(rel.train, feature)
    return signals


def fitted(train: list[dict], feature: Callable[[dict], float]) -> Callable[[dict], bool]:
    """The one threshold (either side) on ``feature`` that best tells train's "no difference"
    truths (balanced accuracy); never fires when train has no control."""
    values = sorted((feature(q), is_nd(q)) for q in train)
    positives = sum(1 for _, y in values if y)
    negatives = len(values) - positives
    if not positives or not negatives:
        return lambda q: False
    best = (0.5, math.inf, True)
    seen_pos = seen_neg = 0
    for i, (value, y) in enumerate(values):
        seen_pos += y
        seen_neg += not y
        if i + 1 < len(values) and values[i + 1][0] == value:
            continue
        below = (seen_pos / positives + (negatives - seen_neg) / negatives) / 2  # fires ≤ value
        above = 1 - below
        for score, fires_below in ((below, True), (above, False)):
            if score > best[0]:
                best = (score, value, fires_below)
    _, cut, fires_below = best
    return lambda q: (feature(q) <= cut) if fires_below else (feature(q) > cut)


def report(rel: Release) -> dict:
    held = rel.held
    out: dict = {
        "release": str(rel.folder),
        "held_questions": len(held),
        "held_no_difference": sum(is_nd(q) for q in held),
        "answer_letters_held": dict(sorted(Counter(q["answer"] for q in held).items())),
        "answer_letters_train": dict(sorted(Counter(q["answer"] for q in rel.train).items())),
        "chance": 0.25,
        "multiple_choice": {},
        "control_routes": {},
    }
    for name, rule in option_attacks(rel).items():
        right = sum(rule(q) == q["answer"] for q in held)
        out["multiple_choice"][name] = share(right, len(held))
    base = sum(is_nd(q) for q in held) / max(1, len(held))
    for name, signal in control_signals(rel).items():
        fired = [q for q in held if signal(q)]
        right = sum((nd_letter(q) if signal(q) else first_other(q)) == q["answer"] for q in held)
        nd = sum(is_nd(q) for q in fired)
        out["control_routes"][name] = (
            f"fires on {len(fired)}, {nd} of them 'no difference' (base rate {base:.1%}); "
            f"accuracy {share(right, len(held))}"
        )
    return out


def card_check(folder: Path) -> dict:
    """Whether the dataset card or manifest names a val/test question's answer text next to
    its id (a card that quotes questions with their answers gives them away)."""
    text = (folder / "README.md").read_text()
    manifest = (folder / "manifest.json").read_text()
    rel = Release(folder)
    named = sum(1 for q in rel.held if f'"{q["id"]}"' in manifest or f"{q['id']}" in text)
    truths = sum(
        1
        for q in rel.held
        if not is_nd(q)
        and q["options"][q["answer"]] in text
        and rel.option_count[q["options"][q["answer"]]] == 1
    )
    return {
        "held_ids_named_in_card_or_manifest": named,
        "held_unique_truths_quoted_in_card": truths,
    }


def main(argv: list[str]) -> None:
    for folder in map(Path, argv):
        rel = Release(folder)
        print(json.dumps({**report(rel), **card_check(folder)}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
