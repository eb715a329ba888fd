"""One accepted pair as a release sees it, and the records written for it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.anchors import chain_tokens, side_tokens
from pairdiff.coords import to_thousand
from pairdiff.geometry import Box, Frame, answer_difficulty

PROMPT = (
    "Image A and image B are nearly identical. For each change write one line: the changed "
    "entity (A's -> B's when they differ), the anchor chain of image A between <src_start> and "
    "<src_end> and of image B between <edit_start> and <edit_end> (<loc_null> for an absent "
    "side, <box_sep> between regions), one sentence describing the change, then the exact "
    "boxes of A and of B in [0, 1000] coordinates."
)


@dataclass(frozen=True, slots=True)
class ReleasePair:
    """An accepted pair with the answer that stands (changes in the submit body's shape, pixel
    boxes of each side's own frame) and the figures of how it was agreed."""

    pair_id: int
    external_id: str
    image_a: str  # path inside the release, e.g. images/12_a.png
    image_b: str
    frame_a: Frame
    frame_b: Frame
    changes: tuple[Mapping, ...]
    agreement: Mapping = field(default_factory=dict)
    source: Mapping = field(default_factory=dict)
    content_key: str = ""  # sha256 of both images: seeds splits and questions, never the pk

    @property
    def record_id(self) -> str:
        return self.external_id or f"pair-{self.pair_id}"

    @property
    def category(self) -> str:
        """The category of the pair's first change; pairs are stratified by it."""
        return self.changes[0]["category"] if self.changes else ""

    @property
    def difficulty(self) -> str | None:
        """MinCU difficulty: the largest box over its own image's area, across every change."""
        level = answer_difficulty(self.changes, self.frame_a, self.frame_b)
        return str(level) if level else None


def anchors(boxes_a: Sequence[Sequence[int]], boxes_b: Sequence[Sequence[int]]) -> str:
    """The MinCU loc-token string of one change: side A, then side B, ``<loc_null>`` if absent."""
    return f"{side_tokens(boxes_a)} {side_tokens(boxes_b)}"


def change_record(change: Mapping, frame_a: Frame, frame_b: Frame) -> dict:
    thousand_a = [list(to_thousand(Box(*b), frame_a)) for b in change["boxes_a"]]
    thousand_b = [list(to_thousand(Box(*b), frame_b)) for b in change["boxes_b"]]
    return {
        "category": change["category"],
        "description": change["description"],
        "entity_a": change.get("entity_a", ""),
        "entity_b": change.get("entity_b", ""),
        "boxes_a": thousand_a,
        "boxes_b": thousand_b,
        "boxes_a_px": [_pixels(b) for b in change["boxes_a"]],
        "boxes_b_px": [_pixels(b) for b in change["boxes_b"]],
        "anchors": anchors(thousand_a, thousand_b),
    }


def benchmark_record(pair: ReleasePair, split: str) -> dict:
    """The benchmark record: the first change's fields at the top, every change in ``changes``."""
    changes = [change_record(c, pair.frame_a, pair.frame_b) for c in pair.changes]
    first = changes[0]
    return {
        "id": pair.record_id,
        "pair_id": pair.pair_id,
        "content_key": pair.content_key or pair.record_id,
        "split": split,
        "image_a": pair.image_a,
        "image_b": pair.image_b,
        "size_a": [pair.frame_a.width, pair.frame_a.height],
        "size_b": [pair.frame_b.width, pair.frame_b.height],
        "category": first["category"],
        "difficulty": pair.difficulty,
        "description": first["description"],
        "entities": [first["entity_a"], first["entity_b"]],
        "boxes_a": first["boxes_a"],
        "boxes_b": first["boxes_b"],
        "boxes_a_px": first["boxes_a_px"],
        "boxes_b_px": first["boxes_b_px"],
        "anchors": first["anchors"],
        "changes": changes,
        "agreement": dict(pair.agreement),
        "source": dict(pair.source),
    }


def training_target(record: Mapping) -> str:
    """The target of one pair in MinCU's vocabulary, one line per change: entity → anchor
    chains of A and B → description → fine boxes of A and B, e.g.
    ``car <src_start><loc_1><loc_7><loc_2><loc_7><src_end> <edit_start>…<edit_end> The car
    turned blue. [[125,730,228,783]] [[125,730,228,783]]``. ``pairdiff.vlm.parse`` reads it."""
    return "\n".join(_target_line(change) for change in record["changes"])


def target_problem(record: Mapping) -> str:
    """Why the record cannot be a training target, or "" (a change with no box on either side
    says nowhere what changed; a line break would split a change in two)."""
    for i, change in enumerate(record["changes"], start=1):
        if not change["boxes_a"] and not change["boxes_b"]:
            return f"change {i} has no box on either image"
        if "\n" in change["description"] or "\r" in change["description"]:
            return f"change {i}'s description spans several lines"
    return "" if record["changes"] else "the answer has no change"


def _target_line(change: Mapping) -> str:
    # An absent side shows nothing to name: only the boxed sides' labels are written, "a -> b"
    # when both are boxed and differ (or one is blank), else the one label.
    a = change["entity_a"] if change["boxes_a"] else ""
    b = change["entity_b"] if change["boxes_b"] else ""
    both = bool(change["boxes_a"]) and bool(change["boxes_b"])
    entity = f"{a} -> {b}".strip() if both and a != b else (a or b)
    return (
        f"{entity} {chain_tokens(change['boxes_a'], 'a')} {chain_tokens(change['boxes_b'], 'b')} "
        f"{change['description']} {_fine(change['boxes_a'])} {_fine(change['boxes_b'])}"
    ).strip()


def _fine(boxes: Sequence[Sequence[int]]) -> str:
    return json.dumps([list(b) for b in boxes], separators=(",", ":"))


def training_record(record: Mapping) -> dict:
    """A supervised fine-tuning example with both image paths and the structured target."""
    return {
        "id": record["id"],
        "image_a": record["image_a"],
        "image_b": record["image_b"],
        "prompt": PROMPT,
        "target": training_target(record),
        "category": record["category"],
        "swapped": False,
    }


def _pixels(box: Sequence[float]) -> list[float | int]:
    return [int(c) if float(c).is_integer() else float(c) for c in box]
