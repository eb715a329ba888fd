"""One change on its way to a ``Component`` (boxes of both sides in A's frame), and the box
arithmetic the refinements share: extents, whole pixels, crops, pieces joined along a row."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from pairdiff.geometry import Box
from pairdiff.pixeldiff.maps import to_lab

Xyxy = tuple[float, float, float, float]
# Pieces of one change that run together along a row (the words of a written line, the parts
# of a thing pixeldiff split): their vertical spans overlap by at least this share of the
# shorter one and the gap between them is at most this share of its height.
_ROW_OVERLAP = 0.6
_ROW_GAP = 0.8


@dataclass
class Found:
    """One change on its way to a Component: boxes of both sides in A's frame."""

    kind: str
    detail: str
    category: str
    sentence: str
    confidence: float
    boxes_a: list[Xyxy]
    boxes_b: list[Xyxy]
    whole: bool


def rows_joined(f: Found) -> Found:
    """f with the boxes of each side that run together along a row joined into one."""
    if f.whole:
        return f
    a, b = join_rows(f.boxes_a), join_rows(f.boxes_b)
    return f if (a, b) == (f.boxes_a, f.boxes_b) else replace(f, boxes_a=a, boxes_b=b)


def join_rows(boxes: list[Xyxy]) -> list[Xyxy]:
    out = sorted(boxes)
    joined = True
    while joined and len(out) > 1:
        joined = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                if _same_row(out[i], out[j]):
                    merged = extent_of([out[i], out[j]])
                    assert merged is not None
                    out = sorted([*out[:i], *out[i + 1 : j], *out[j + 1 :], merged])
                    joined = True
                    break
            if joined:
                break
    return out


def _same_row(p: Xyxy, q: Xyxy) -> bool:
    shorter = min(p[3] - p[1], q[3] - q[1])
    shared = min(p[3], q[3]) - max(p[1], q[1])
    gap = max(p[0], q[0]) - min(p[2], q[2])
    return shorter > 0 and shared >= _ROW_OVERLAP * shorter and gap <= _ROW_GAP * shorter


def whole_pixels(box: Xyxy) -> tuple[int, int, int, int]:
    return int(box[0]), int(box[1]), math.ceil(box[2]), math.ceil(box[3])


def crop_box(rgb: np.ndarray, box: Xyxy) -> np.ndarray:
    x1, y1, x2, y2 = int(box[0]), int(box[1]), math.ceil(box[2]), math.ceil(box[3])
    return np.ascontiguousarray(rgb[y1:y2, x1:x2, :3])


def median_lab(rgb: np.ndarray, box: Xyxy) -> np.ndarray:
    return np.median(to_lab(crop_box(rgb, box)).reshape(-1, 3), axis=0)


def as_xyxy(box: Box) -> Xyxy:
    return (float(box.x1), float(box.y1), float(box.x2), float(box.y2))


def extent_of(boxes: Sequence[Xyxy]) -> Xyxy | None:
    """The box around all of them, None for none."""
    if not boxes:
        return None
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def to_pixels(box: Xyxy, size: tuple[int, int]) -> list[int]:
    """Whole pixels, outward, inside the frame."""
    w, h = size
    x1 = min(max(0, math.floor(box[0] + 1e-6)), w - 1)
    y1 = min(max(0, math.floor(box[1] + 1e-6)), h - 1)
    x2 = max(min(w, math.ceil(box[2] - 1e-6)), x1 + 1)
    y2 = max(min(h, math.ceil(box[3] - 1e-6)), y1 + 1)
    return [x1, y1, x2, y2]


def boxes_overlap(p: Xyxy, q: Xyxy) -> bool:
    return min(p[2], q[2]) > max(p[0], q[0]) and min(p[3], q[3]) > max(p[1], q[1])
