"""One accepted pair as a release sees it, and the records written for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.anchors import side_tokens
from pairdiff.coords import to_thousand
from pairdiff.geometry import Box, Frame, answer_difficulty

PROMPT = (
    "Image A and image B are nearly identical. Find the change: name the changed entity in "
    "each image, give its coarse location as anchor tokens, describe the change in one "
    "sentence, then give the exact boxes in [0, 1000] coordinates."
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
    """The target sequence of one pair: per change, entity → anchors → description → boxes."""
    parts = []
    for change in record["changes"]:
        parts.append(
            f"<entity>{_entity(change['entity_a'])} | {_entity(change['entity_b'])}</entity>"
            f"<anchors>{change['anchors']}</anchors>"
            f"<description>{change['description']}</description>"
            f"<boxes>{_boxes(change['boxes_a'])} | {_boxes(change['boxes_b'])}</boxes>"
        )
    return "\n".join(parts)


def training_record(record: Mapping) -> dict:
    """A supervised fine-tuning example with both image paths and the structured target."""
    return {
        "id": record["id"],
        "image_a": record["image_a"],
        "image_b": record["image_b"],
        "prompt": PROMPT,
        "target": training_target(record),
        "category": record["category"],
    }


def _entity(label: str) -> str:
    return label or "none"


def _boxes(boxes: Sequence[Sequence[int]]) -> str:
    if not boxes:
        return "null"
    return " ".join("[" + ",".join(str(c) for c in box) + "]" for box in boxes)


def _pixels(box: Sequence[float]) -> list[float | int]:
    return [int(c) if float(c).is_integer() else float(c) for c in box]
