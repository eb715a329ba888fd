"""A probable coordinate-space mistake, seen from the boxes themselves (pure).

Pixel boxes of images under 1000 pixels fit [0, 1000] too: declared ``1000`` they are scored,
badly, and nothing is out of range. Here each predicted box is compared with the truth's boxes
of its side in both readings — as declared, and in the other space (pixels for ``1000``,
[0, 1000] for ``pixel``) — and when the other reading fits far better, the result says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairdiff.geometry import Box, iou
from pairdiff.scoring.change import Change, truth_changes

OTHER = {"1000": "pixel", "pixel": "1000"}
MIN_BOXES = 5  # fewer boxes say too little
CLEAR_IOU = 0.3  # the other reading's mean best IoU at least this …
FACTOR = 2.0  # … and this many times the declared reading's


def space_warning(
    items: Sequence[tuple[Mapping, Sequence[Change], Sequence[Change]]], coords: str
) -> dict | None:
    """``{"declared", "probable", "miou_declared", "miou_probable", "message"}`` when the
    boxes of ``(record, truths, predicted)`` items fit the other space clearly better."""
    other = OTHER.get(coords)
    if other is None:
        return None
    declared: list[float] = []
    probable: list[float] = []
    for record, truths, predicted in items:
        if not predicted:
            continue
        others = truth_changes(record, other)
        for side in ("a", "b"):
            mine = [b for t in truths for b in getattr(t, f"boxes_{side}")]
            theirs = [b for t in others for b in getattr(t, f"boxes_{side}")]
            for p in (b for c in predicted for b in getattr(c, f"boxes_{side}")):
                declared.append(_best(p, mine))
                probable.append(_best(p, theirs))
    if len(declared) < MIN_BOXES:
        return None
    as_declared = sum(declared) / len(declared)
    as_other = sum(probable) / len(probable)
    if as_other < CLEAR_IOU or as_other < FACTOR * as_declared:
        return None
    names = {"1000": "[0, 1000]", "pixel": "pixel"}
    return {
        "declared": coords,
        "probable": other,
        "miou_declared": round(as_declared, 4),
        "miou_probable": round(as_other, 4),
        "message": (
            f"probable coordinate-space mistake: the boxes were declared {names[coords]} "
            f"(mean best IoU {as_declared:.2f}) but fit the truth as {names[other]} "
            f"coordinates (mean best IoU {as_other:.2f}); score them again with "
            f"--coords {other}"
        ),
    }


def _best(box: Box, truths: Sequence[Box]) -> float:
    return max((iou(box, t) for t in truths), default=0.0)
