"""The training file of a release: MinCU-vocabulary targets for the train split, optionally with
MinCU's A/B order-swap augmentation, and the records that cannot be targets, named."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.anchors import MINCU_VOCABULARY
from pairdiff.release.records import target_problem, training_record, training_target

# Words whose meaning turns around when A and B trade places ("appeared" seen from B is
# "disappeared" seen from A). Positions ("on the left") stay: they describe where, not what.
_INVERSE = {
    "appeared": "disappeared",
    "added": "removed",
    "larger": "smaller",
    "brighter": "darker",
    "increased": "decreased",
    "higher": "lower",
    "more": "fewer",
    "wider": "narrower",
    "taller": "shorter",
    "warmer": "cooler",
}
_INVERSE |= {v: k for k, v in list(_INVERSE.items()) if v not in _INVERSE}
_WORDS = re.compile(r"\b(" + "|".join(sorted(_INVERSE, key=len, reverse=True)) + r")\b", re.I)
_FROM_TO = re.compile(r"\bfrom\s+(?P<x>.+?)\s+to\s+(?P<y>[^.,;]+)", re.I)
_INSTEAD = re.compile(r"\b(?P<x>[\w'’×-]+)(?:\s+[a-z]+)?\s+instead\s+of\s+(?P<y>[\w'’×-]+)", re.I)
_CHANGED_TO = re.compile(r"'(?P<x>[^']+)'\s+changed\s+to\s+'(?P<y>[^']+)'", re.I)
_MOVED = re.compile(r"\b(moved|turned|slid|shifted)\s+(up|down|to the left|to the right)\b", re.I)
_HEADING = {
    "up": "down",
    "down": "up",
    "to the left": "to the right",
    "to the right": "to the left",
}
VOCABULARY_FILE = "vocabulary.json"


@dataclass
class TrainingSet:
    rows: list[dict] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)
    swapped: int = 0
    not_swappable: int = 0


def vocabulary() -> dict:
    return {
        "tokens": list(MINCU_VOCABULARY),
        "count": len(MINCU_VOCABULARY),
        "format": (
            "one line per change: ENTITY (A's -> B's when they differ) "
            "<src_start>A's regions<src_end> <edit_start>B's regions<edit_end> DESCRIPTION "
            "[A's fine boxes] [B's fine boxes]; a region is four <loc_i> tokens (i = "
            "min(floor(c/100), 9) of x1, y1, x2, y2 in [0, 1000]), regions are separated by "
            "<box_sep>, an absent side is <loc_null>; fine boxes in [0, 1000]"
        ),
    }


def training_set(records: Sequence[Mapping], *, seed: int, swap_ab: bool) -> TrainingSet:
    """Targets of the train records. With ``swap_ab``, half of them (chosen by a hash of the
    seed and the pair's content) also come with A and B exchanged — boxes, labels and the
    description's direction words turned around; a description with nothing to turn around
    that is not symmetric is not swapped (counted)."""
    result = TrainingSet()
    for record in records:
        if record["split"] != "train":
            continue
        problem = target_problem(record)
        if problem:
            result.left_out.append(
                {"id": record["id"], "pair_id": record["pair_id"], "reason": problem}
            )
            continue
        result.rows.append(training_record(record))
        if swap_ab and _half(seed, record):
            swapped = swapped_record(record)
            if swapped is None:
                result.not_swappable += 1
            else:
                result.rows.append({**training_record(swapped), "swapped": True})
                result.swapped += 1
    return result


def swapped_record(record: Mapping) -> dict | None:
    """The record seen with B first: sides exchanged, every description turned around; None
    when a description cannot be turned around."""
    changes = []
    for change in record["changes"]:
        description = swap_description(change["description"])
        if description is None:
            return None
        changes.append(
            {
                **change,
                "description": description,
                "entity_a": change["entity_b"],
                "entity_b": change["entity_a"],
                "boxes_a": change["boxes_b"],
                "boxes_b": change["boxes_a"],
            }
        )
    return {
        **record,
        "image_a": record["image_b"],
        "image_b": record["image_a"],
        "changes": changes,
    }


def swap_description(text: str) -> str | None:
    """``text`` as said from B to A, or None: "changed from blue to red" → "from red to blue",
    "appeared" → "disappeared", "23 coins instead of 24" → "24 coins instead of 23"."""
    for pattern in (_CHANGED_TO, _FROM_TO, _INSTEAD):
        m = pattern.search(text)
        if m:
            x, y = m.group("x"), m.group("y")
            head = text[: m.start("x")]
            middle = text[m.end("x") : m.start("y")]
            turned = head + y + middle + x + text[m.end("y") :]
            if pattern is _INSTEAD:  # "a lower resolution: 512x512 instead of 307x307" → higher
                turned = _WORDS.sub(
                    lambda w: _case(w.group(0), _INVERSE[w.group(0).lower()]), turned
                )
            return turned
    if _MOVED.search(text):
        return _MOVED.sub(lambda m: f"{m.group(1)} {_HEADING[m.group(2).lower()]}", text)
    if _WORDS.search(text):
        return _WORDS.sub(lambda m: _case(m.group(0), _INVERSE[m.group(0).lower()]), text)
    return None


def targets_read_back(records: Sequence[Mapping], parse) -> list[str]:
    """Ids of records whose target ``parse`` (pairdiff.vlm.parse.parse_answer in [0, 1000]
    frames) does not read back exactly — for tests and checks."""
    bad = []
    for record in records:
        if target_problem(record):
            continue
        got = parse(training_target(record))
        want = [
            (
                c["description"],
                c["entity_a"] if c["boxes_a"] else "",
                c["entity_b"] if c["boxes_b"] else "",
                [list(map(float, b)) for b in c["boxes_a"]],
                [list(map(float, b)) for b in c["boxes_b"]],
            )
            for c in record["changes"]
        ]
        have = [
            (
                c.description,
                c.entity_a,
                c.entity_b,
                [b.as_list() for b in c.boxes_a],
                [b.as_list() for b in c.boxes_b],
            )
            for c in got.changes
        ]
        if got.error or have != want:
            bad.append(record["id"])
    return bad


def _half(seed: int, record: Mapping) -> bool:
    key = record.get("content_key") or record["id"]
    return hashlib.sha256(f"{seed}:swap:{key}".encode()).digest()[0] < 128


def _case(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new
