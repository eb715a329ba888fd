"""Conversions between pixel boxes and export coordinate systems; each side uses its own frame."""

from __future__ import annotations

from collections.abc import Mapping

from pairdiff.geometry import Box, BoxError, Frame, real_numbers, show_values

# Percent and COCO sums such as x + w can overshoot the image edge by a rounding error;
# rejecting those would make a box touching the edge fail its own round trip.
_EDGE_SLACK = 1e-6


def _snap(value: float, limit: int) -> float:
    if -_EDGE_SLACK < value < 0:
        return 0.0
    if limit < value < limit + _EDGE_SLACK:
        return float(limit)
    return value


def to_thousand(box: Box, frame: Frame) -> tuple[int, int, int, int]:
    """MinCU / Qwen-VL ``[0, 1000]`` integers; a box under 1/1000 of the image may collapse."""
    return (
        round(1000 * box.x1 / frame.width),
        round(1000 * box.y1 / frame.height),
        round(1000 * box.x2 / frame.width),
        round(1000 * box.y2 / frame.height),
    )


def from_thousand(values: object, frame: Frame) -> Box:
    """Pixel box from ``[0, 1000]`` coordinates; BoxError unless 0 ≤ c ≤ 1000 and x1<x2, y1<y2."""
    c = real_numbers(values, 4, "box")
    if any(not 0 <= v <= 1000 for v in c):
        raise BoxError(f"box {show_values(c)}: coordinates must lie between 0 and 1000")
    x1, y1, x2, y2 = c
    return Box.parse(
        [
            x1 * frame.width / 1000,
            y1 * frame.height / 1000,
            x2 * frame.width / 1000,
            y2 * frame.height / 1000,
        ],
        frame,
    )


def to_coco(box: Box) -> list[float]:
    """COCO ``[x, y, w, h]`` in absolute pixels. A whole-pixel corner is an int (JSON ``10``,
    not ``10.0``), so width and height are ints when both their corners are."""
    x1, y1, x2, y2 = (int(v) if v.is_integer() else v for v in (box.x1, box.y1, box.x2, box.y2))
    return [x1, y1, x2 - x1, y2 - y1]


def from_coco(values: object, frame: Frame) -> Box:
    """Pixel box from COCO ``[x, y, w, h]``; BoxError unless w, h > 0 and it fits ``frame``."""
    x, y, w, h = real_numbers(values, 4, "COCO box")
    if w <= 0 or h <= 0:
        raise BoxError(f"COCO box {show_values([x, y, w, h])}: width and height must be positive")
    return Box.parse(
        [
            _snap(x, frame.width),
            _snap(y, frame.height),
            _snap(x + w, frame.width),
            _snap(y + h, frame.height),
        ],
        frame,
    )


def to_label_studio(box: Box, frame: Frame) -> dict[str, float]:
    """Label Studio rectangle value: ``x, y, width, height`` in percent of the image."""
    return {
        "x": 100 * box.x1 / frame.width,
        "y": 100 * box.y1 / frame.height,
        "width": 100 * box.width / frame.width,
        "height": 100 * box.height / frame.height,
    }


def from_label_studio(d: Mapping[str, object], frame: Frame) -> Box:
    """Pixel box from a Label Studio rectangle value; BoxError for a rotated or invalid one."""
    if not isinstance(d, Mapping):
        raise BoxError(f"Label Studio box {d!r}: expected an object with x, y, width, height")
    missing = [k for k in ("x", "y", "width", "height") if k not in d]
    if missing:
        raise BoxError(f"Label Studio box {d!r}: missing {', '.join(missing)}")
    x, y, w, h = real_numbers([d["x"], d["y"], d["width"], d["height"]], 4, "Label Studio box")
    # A rotated rectangle has no axis-aligned equivalent; silently dropping the angle would
    # store a box over the wrong pixels.
    if d.get("rotation", 0) not in (0, 0.0):
        raise BoxError(f"Label Studio box {d!r}: rotated boxes are not supported")
    if w <= 0 or h <= 0:
        raise BoxError(f"Label Studio box {d!r}: width and height must be positive")
    return Box.parse(
        [
            _snap(x * frame.width / 100, frame.width),
            _snap(y * frame.height / 100, frame.height),
            _snap((x + w) * frame.width / 100, frame.width),
            _snap((y + h) * frame.height / 100, frame.height),
        ],
        frame,
    )
