"""Categories and one-sentence descriptions for what pixeldiff found."""

from __future__ import annotations

from collections.abc import Sequence

from pairdiff.pixeldiff.decode import Xyxy
from pairdiff.pixeldiff.local import Local
from pairdiff.pixeldiff.whole import GlobalChange

# Preferred category slugs per finding, VDiff-Bench's first and MinCU's as the fallback (the
# demo generator files them the same way); the first one the project has wins.
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "global:lighting": ("lighting", "attribute"),
    "global:global_colour": ("global_colour", "attribute"),
    "global:noise": ("noise_resolution", "attribute"),
    "global:blur": ("texture", "attribute"),
    "global:resolution": ("noise_resolution", "attribute"),
    "lighting": ("lighting", "attribute"),
    "colour": ("regional_colour", "attribute"),
    "noise": ("noise_resolution", "attribute"),
    "blur": ("texture", "attribute"),
    "appear": ("appear_disappear", "object"),
    "disappear": ("appear_disappear", "object"),
    "move": ("position", "relation"),
    "count": ("counting", "appear_disappear"),
    "resize": ("replacement_size", "object"),
    "text": ("ocr_text", "attribute"),
    "other": (),
}


def category(finding: str, categories: Sequence[str]) -> str:
    """The first preferred slug the project offers, else "" (pixeldiff cannot tell)."""
    return next((c for c in _CATEGORIES[finding] if c in categories), "")


def place(box: Xyxy, shape: tuple[int, int]) -> str:
    """Where a box sits in a 3×3 reading of the frame, e.g. "the top left"."""
    h, w = shape
    cx, cy = (box[0] + box[2]) / 2 / w, (box[1] + box[3]) / 2 / h
    row = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else ""
    col = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else ""
    return "the " + (" ".join(p for p in (row, col) if p) or "centre")


def global_sentence(g: GlobalChange, size_a: tuple[int, int], size_b: tuple[int, int]) -> str:
    if g.kind == "lighting":
        return f"The whole image became {g.detail}."
    if g.kind == "global_colour":
        return f"The whole image took on a {g.detail} tint."
    if g.kind == "resolution":
        return (
            f"Image B has a {g.detail} resolution: {size_b[0]}x{size_b[1]} "
            f"instead of {size_a[0]}x{size_a[1]} pixels."
        )
    if g.kind == "noise":
        return "The whole image became noisier (grain or compression artefacts)."
    return f"The whole image became {g.detail}."


def local_sentence(c: Local, shape: tuple[int, int]) -> str:
    where_a = place(c.boxes_a[0], shape) if c.boxes_a else ""
    where_b = place(c.boxes_b[0], shape) if c.boxes_b else ""
    where = where_a or where_b
    if c.kind == "appear":
        return f"Something appeared at {where}."
    if c.kind == "disappear":
        return f"Something disappeared from {where}."
    if c.kind == "move":
        if where_a == where_b:
            return f"Something moved within {where_a}."
        return f"Something moved from {where_a} to {where_b}."
    if c.kind == "count":
        return f"{len(c.boxes_a or c.boxes_b)} similar objects {c.detail}."
    if c.kind == "resize":
        return f"Something at {where} became {c.detail}."
    if c.kind in ("lighting", "noise", "blur"):
        return f"The area at {where} became {c.detail}."
    if c.kind == "colour":
        return f"The colour changed at {where}."
    if c.kind == "text":
        return f"The text at {where} changed."
    return f"Something changed at {where}."
