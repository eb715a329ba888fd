"""The training file of a release: MinCU-vocabulary targets for the train split, optionally with
MinCU's A/B order-swap augmentation, and the records that cannot be targets, named."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
_MOVED = re.compile(
    r"\b(moved|slid|shifted)\s+((?:up|down)(?:\s+and\s+to\s+the\s+(?:left|right))?"
    r"|to\s+the\s+(?:left|right))\b",
    re.I,
)
_HEADING_WORD = {"up": "down", "down": "up", "left": "right", "right": "left"}
_HEADING_PART = re.compile(r"\b(up|down|left|right)\b", re.I)
_PLACE = re.compile(
    r"\b(?:at the (?:top|bottom)(?: (?:left|right))?|on the (?:left|right)|in the centre)\b",
    re.I,
)
_TURNED = re.compile(r"\b(anticlockwise|clockwise|counterclockwise)\b", re.I)
_ROTATION = {"clockwise": "anticlockwise", "anticlockwise": "clockwise"}
_ROTATION["counterclockwise"] = "clockwise"
_FALLS = re.compile(r"\bnow\s+falls\s+on\b", re.I)
_TINTED = re.compile(r"\bwas\s+tinted\s+(?P<c>[\w -]+?)(?=[.,;]|$)", re.I)
_BECAME = re.compile(r"\bbecame\s+(noisy|grainy|pixelated|blurred|sharper)\b", re.I)

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


def end_place(change: Mapping, size_b: Sequence[int] | None) -> str | None:
    """Where the change's B side is, in the words descriptions use ("at the top left")."""
    boxes = change.get("boxes_b_px") or []
    if not boxes or not size_b:
        return None
    x1, y1, x2, y2 = boxes[0]
    cx, cy = (x1 + x2) / 2 / size_b[0], (y1 + y2) / 2 / size_b[1]
    col = "left" if cx < 0.36 else "right" if cx > 0.64 else ""
    row = "top" if cy < 0.36 else "bottom" if cy > 0.64 else ""
    if row:
        return f"at the {row} {col}".strip()
    return f"on the {col}" if col else "in the centre"


def swapped_record(record: Mapping) -> dict | None:
    """The record seen with B first: sides exchanged, every description turned around; None
    when a description cannot be turned around."""
    changes = []
    for change in record["changes"]:
        description = swap_description(
            change["description"], end=end_place(change, record.get("size_b"))
        )
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


def swap_description(text: str, *, end: str | None = None, start: str | None = None) -> str | None:
    """``text`` as said from B to A, or None: "changed from blue to red" → "from red to blue",
    "appeared" → "disappeared", "23 coins instead of 24" → "24 coins instead of 23", "moved up
    and to the left" → "moved down and to the right" from the end place ``end`` (where B shows
    it; without it a move that names its start place cannot be turned around), "turned
    clockwise" → "anticlockwise". An effect ("became noisy") has no inverse: None. ``start``,
    when given, is the start place of the true description: only an option naming that place
    is moved to ``end`` (an option naming another start place stays false from the other side
    too)."""
    moved = _MOVED.search(text)
    if moved is not None:
        place = _PLACE.search(text[: moved.start()])
        if place is not None:
            if end is None:
                return None
            if start is None or place.group(0).lower() == start.lower():
                text = text[: place.start()] + end + text[place.end() :]
        m = _MOVED.search(text)
        assert m is not None
        heading = _HEADING_PART.sub(
            lambda w: _case(w.group(0), _HEADING_WORD[w.group(0).lower()]), m.group(2)
        )
        return text[: m.start(2)] + heading + text[m.end(2) :]
    if _TURNED.search(text):
        return _TURNED.sub(lambda m: _case(m.group(0), _ROTATION[m.group(0).lower()]), text)
    if _FALLS.search(text):
        return _FALLS.sub("no longer falls on", text)
    if _TINTED.search(text):
        return _TINTED.sub(lambda m: f"lost its {m.group('c')} tint", text)
    if _BECAME.search(text):  # "became less pixelated" says less than the change: no inverse
        return None
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
    if _WORDS.search(text):
        return _WORDS.sub(lambda m: _case(m.group(0), _INVERSE[m.group(0).lower()]), text)
    return None


def targets_read_back(records: Sequence[Mapping], parse: Callable[[str], Any]) -> list[str]:
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
