"""How two boxes of one change relate: scaled about a centre (resized) or shifted (moved)."""

from __future__ import annotations

import numpy as np

from pairdiff.pixeldiff.decode import Xyxy


def _dims(box: Xyxy) -> tuple[int, int]:
    return box[2] - box[0], box[3] - box[1]


def _sizes(box_a: Xyxy, box_b: Xyxy) -> tuple[float, float, float, float, float]:
    """Log width and height ratios B/A, the centre shift, and the larger side of each box."""
    (wa, ha), (wb, hb) = _dims(box_a), _dims(box_b)
    dx = (box_b[0] + box_b[2] - box_a[0] - box_a[2]) / 2
    dy = (box_b[1] + box_b[3] - box_a[1] - box_a[3]) / 2
    return (
        float(np.log(wb / wa)),
        float(np.log(hb / ha)),
        float(np.hypot(dx, dy)),
        max(wa, ha),
        max(wb, hb),
    )


def scaled(box_a: Xyxy, box_b: Xyxy) -> str:
    """'larger' or 'smaller' when B's box is A's scaled about the same centre, else ''."""
    rw, rh, shift, size_a, size_b = _sizes(box_a, box_b)
    # Both sides grew or shrank by a similar factor (a word swapped for a longer one keeps its
    # height), by more than the few pixels a soft edge moves, and the centre stayed within a
    # quarter of the size.
    grew = [abs(b - a) for a, b in zip(_dims(box_a), _dims(box_b), strict=True)]
    if min(abs(rw), abs(rh)) < np.log(1.1) or abs(rw - rh) > 0.2 or rw * rh < 0:
        return ""
    if min(grew) < 4:
        return ""
    if shift > 0.25 * max(size_a, size_b):
        return ""
    return "larger" if rw > 0 else "smaller"


def moved(box_a: Xyxy, box_b: Xyxy) -> bool:
    """B's box is A's, about the same size, shifted by a good part of its size."""
    rw, rh, shift, size_a, size_b = _sizes(box_a, box_b)
    return max(abs(rw), abs(rh)) < np.log(1.5) and shift > 0.3 * max(size_a, size_b)
