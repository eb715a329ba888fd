"""A change as scoring compares it, and a benchmark record's truths in the comparison space
(pure: no I/O, numpy-free; shipped with the release's lmms-eval task)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pairdiff.geometry import Box, Frame


@dataclass(frozen=True)
class Change:
    """One change in the comparison space (see ``space_of``); an empty side is absent.

    Not an ``answers.ChangeAnswer``: boxes may be in ``[0, 1000]`` rather than pixels, a
    prediction may leave any text out, it has a confidence, and this module ships in the
    release's lmms-eval bundle (``release.harness.BUNDLE``), which holds no ``answers``."""

    boxes_a: tuple[Box, ...]
    boxes_b: tuple[Box, ...]
    description: str = ""
    entity_a: str = ""
    entity_b: str = ""
    category: str = ""
    confidence: float = 1.0


def space_of(coords: str) -> str:
    """Where boxes are compared: [0, 1000] for ``1000`` (the release's own integers, so its
    answers score IoU 1 exactly), else each side's pixels."""
    return "thousand" if coords == "1000" else "pixel"


def truth_changes(record: Mapping, coords: str) -> list[Change]:
    """A benchmark record's changes in the comparison space of ``coords``."""
    out = []
    for change in record["changes"]:
        sides = []
        for side, size in (("a", record["size_a"]), ("b", record["size_b"])):
            if space_of(coords) == "thousand":
                frame = Frame(*size)
                boxes = tuple(
                    _thousand_box(box, px, frame)
                    for box, px in zip(
                        change[f"boxes_{side}"], change[f"boxes_{side}_px"], strict=True
                    )
                )
            else:
                boxes = tuple(Box(*px) for px in change[f"boxes_{side}_px"])
            sides.append(boxes)
        out.append(
            Change(
                boxes_a=sides[0],
                boxes_b=sides[1],
                description=change["description"],
                entity_a=change.get("entity_a", ""),
                entity_b=change.get("entity_b", ""),
                category=change["category"],
            )
        )
    return out


def _thousand_box(box: Sequence[int], px: Sequence[float], frame: Frame) -> Box:
    """The record's [0, 1000] integers; a box under 1/1000 of the image collapses when
    rounded, and is then taken unrounded from its pixels."""
    if box[0] < box[2] and box[1] < box[3]:
        return Box(*box)
    x1, y1, x2, y2 = px
    w, h = frame.width, frame.height
    return Box(1000 * x1 / w, 1000 * y1 / h, 1000 * x2 / w, 1000 * y2 / h)
