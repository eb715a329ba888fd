"""Draft sentences and entity suggestions from what the pixels say about one change."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pairdiff.pixeldiff.words import place

Xyxy = tuple[float, float, float, float]


@dataclass(frozen=True)
class Evidence:
    """What is known of one change: its kind and detail (pixeldiff's words), its boxes in A's
    frame (None for an absent side), the colour names before and after, A's size, and the
    sentence pixeldiff itself wrote (used for whole-image changes)."""

    kind: str
    detail: str
    box_a: Xyxy | None
    box_b_on_a: Xyxy | None
    colour_a: str
    colour_b: str
    size_a: tuple[int, int]
    sentence: str
    count: int = 1


def suggest_entity(kind: str, vocabulary: Sequence[str], instruction: str) -> str:
    """The project word the pair's instruction names (the longest when several do); "image"
    for a whole-image change when the project has it; "" when nothing says."""
    words = [w for w in vocabulary if w.strip()]
    if kind.startswith("global:"):
        return "image" if "image" in words or not words else ""
    text = instruction.lower()
    found = [
        w for w in words if re.search(rf"\b{re.escape(w.lower())}(e?s)?\b", text) and w != "image"
    ]
    return max(found, key=len) if found else ""


def draft_sentence(e: Evidence, entity: str) -> str:
    """One sentence in the project's description style ("The mug changed colour from white
    to red.")."""
    if e.kind.startswith("global:"):
        return e.sentence
    shape = (e.size_a[1], e.size_a[0])
    where = place(_int(e.box_a or e.box_b_on_a), shape)
    thing = f"the {entity}" if entity else "the object"
    subject = thing[0].upper() + thing[1:]
    if e.kind == "appear":
        article = "An" if entity[:1].lower() in "aeiou" and entity else "A"
        noun = f"{article} {entity}" if entity else "Something"
        more = f" ({e.count} in all)" if e.count > 1 else ""
        return f"{noun} appeared at {where}{more}."
    if e.kind == "disappear":
        more = f" ({e.count} in all)" if e.count > 1 else ""
        return f"{subject} at {where} disappeared{more}."
    if e.kind == "move" and e.box_a and e.box_b_on_a:
        return f"{subject} moved {_direction(e.box_a, e.box_b_on_a)}."
    if e.kind == "resize" and e.box_a and e.box_b_on_a:
        return f"{subject} at {where} became {_size_kind(e.box_a, e.box_b_on_a)}."
    if e.kind == "colour":
        if e.colour_a != e.colour_b:
            return f"{subject} at {where} changed colour from {e.colour_a} to {e.colour_b}."
        return f"{subject} at {where} changed colour."
    if e.kind in ("lighting", "noise", "blur"):
        word = {"noise": "noisier", "blur": "blurred"}.get(e.kind, e.detail or "brighter")
        return f"{subject} at {where} became {word}."
    if e.kind == "text":
        return f"The text at {where} changed."
    if e.kind == "count":
        return f"{e.count} similar objects {e.detail}.".strip()
    return f"{subject} at {where} changed."


def _int(box: Xyxy | None) -> tuple[int, int, int, int]:
    assert box is not None
    return (round(box[0]), round(box[1]), round(box[2]), round(box[3]))


def _direction(a: Xyxy, b: Xyxy) -> str:
    """ "to the left by about 220 px", "up and to the right by about 40 px"."""
    dx = (b[0] + b[2] - a[0] - a[2]) / 2
    dy = (b[1] + b[3] - a[1] - a[3]) / 2
    parts = []
    if abs(dy) >= 0.4 * abs(dx):
        parts.append("up" if dy < 0 else "down")
    if abs(dx) >= 0.4 * abs(dy):
        parts.append("to the left" if dx < 0 else "to the right")
    return f"{' and '.join(parts)} by about {round((dx * dx + dy * dy) ** 0.5)} px"


def _size_kind(a: Xyxy, b: Xyxy) -> str:
    """ "smaller (0.7×)", "wider (1.5× as wide)", "taller (…)"; uniform when both ratios agree."""
    rw = (b[2] - b[0]) / max(1e-6, a[2] - a[0])
    rh = (b[3] - b[1]) / max(1e-6, a[3] - a[1])
    if abs(rw - rh) <= 0.15 * max(rw, rh):
        ratio = (rw * rh) ** 0.5
        return f"{'larger' if ratio > 1 else 'smaller'} ({ratio:.1f}×)"
    if rw > rh:
        return f"wider ({rw:.1f}× as wide)"
    return f"taller ({rh:.1f}× as tall)"
