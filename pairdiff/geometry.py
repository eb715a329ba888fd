"""Image frames and boxes in absolute pixels of the displayed image, IoU, and MinCU difficulty."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, fields
from enum import StrEnum
from numbers import Integral, Real


class BoxError(ValueError):
    """A box or frame that cannot be used; the message is a sentence meant for people."""


def _show(value: object) -> str:
    """One value as people would write it: 10 rather than 10.0, repr for non-numbers."""
    if isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value):
        number = float(value)
        return str(int(number)) if number.is_integer() else str(round(number, 2))
    return repr(value)


def show_values(values: Iterable[object]) -> str:
    """A list of values for an error message, e.g. ``[10, 5, 8.5, 20]``."""
    return "[" + ", ".join(_show(v) for v in values) + "]"


def real_numbers(values: object, count: int, label: str) -> list[float]:
    """``values`` as ``count`` finite floats; BoxError naming ``label`` otherwise.

    Rejects bool (a JSON ``true`` is never a coordinate), strings, NaN and infinities.
    """
    if type(values) is list or type(values) is tuple:  # the common case, without the ABCs
        items = list(values)
    elif isinstance(values, str | bytes | Mapping | Set) or not isinstance(values, Iterable):
        raise BoxError(f"{label} {values!r}: expected a list of {count} numbers")
    else:
        items = list(values)
    if len(items) != count:
        raise BoxError(f"{label} {show_values(items)}: expected {count} numbers, got {len(items)}")
    for item in items:  # the common case first: plain ints and finite floats
        if type(item) is not int and (type(item) is not float or not math.isfinite(item)):
            break
    else:
        return [float(item) for item in items]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, Real):
            raise BoxError(f"{label} {show_values(items)}: {item!r} is not a number")
        if not math.isfinite(item):
            raise BoxError(f"{label} {show_values(items)}: {item!r} is not a finite number")
    return [float(item) for item in items]


@dataclass(frozen=True, slots=True)
class Frame:
    """The size in pixels of one image as displayed (EXIF orientation applied)."""

    width: int
    height: int

    def __post_init__(self) -> None:
        if type(self.width) is int and type(self.height) is int and self.width > 0 < self.height:
            return
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Integral) or value <= 0:
                raise BoxError(
                    f"image size {self.width!r}×{self.height!r}: "
                    f"{name} must be a positive whole number of pixels"
                )
            object.__setattr__(self, name, int(value))

    @property
    def area(self) -> int:
        return self.width * self.height

    def __str__(self) -> str:
        return f"{self.width}×{self.height}"


@dataclass(frozen=True, slots=True)
class Box:
    """A box ``x1, y1, x2, y2`` in absolute pixels; always non-empty (x1 < x2, y1 < y2).

    Constructing a Box checks only the box itself; ``Box.parse`` also checks it fits its frame.
    """

    x1: float
    y1: float
    x2: float
    y2: float

    def __post_init__(self) -> None:
        raw = [self.x1, self.y1, self.x2, self.y2]
        for name, value in zip(_BOX_FIELDS, real_numbers(raw, 4, "box"), strict=True):
            object.__setattr__(self, name, value)
        if not self.x1 < self.x2:
            raise BoxError(f"box {show_values(raw)}: x1 must be less than x2")
        if not self.y1 < self.y2:
            raise BoxError(f"box {show_values(raw)}: y1 must be less than y2")

    @classmethod
    def parse(cls, values: object, frame: Frame) -> Box:
        """Validate untrusted ``[x1, y1, x2, y2]`` against ``frame``; BoxError otherwise."""
        x1, y1, x2, y2 = real_numbers(values, 4, "box")
        box = cls(x1, y1, x2, y2)
        for name, value, limit in (
            ("x1", x1, frame.width),
            ("y1", y1, frame.height),
            ("x2", x2, frame.width),
            ("y2", y2, frame.height),
        ):
            if value < 0 or value > limit:
                bound = "at least 0" if value < 0 else f"at most {limit}"
                raise BoxError(f"box {box} lies outside the {frame} image ({name} must be {bound})")
        return box

    @classmethod
    def whole(cls, frame: Frame) -> Box:
        """The box covering the whole image, for global changes (lighting, noise)."""
        return cls(0, 0, frame.width, frame.height)

    @property
    def width(self) -> float:
        return self.x2 - self.x1

    @property
    def height(self) -> float:
        return self.y2 - self.y1

    @property
    def area(self) -> float:
        return self.width * self.height

    def as_list(self) -> list[int | float]:
        """Coordinates for JSON: ints where integral after rounding to 2 decimals."""
        rounded = [round(v, 2) for v in (self.x1, self.y1, self.x2, self.y2)]
        return [int(v) if v.is_integer() else v for v in rounded]

    def __str__(self) -> str:
        return show_values((self.x1, self.y1, self.x2, self.y2))


_BOX_FIELDS = tuple(f.name for f in fields(Box))


def intersection_area(a: Box, b: Box) -> float:
    """Area shared by ``a`` and ``b``; 0.0 when they are disjoint or only touch."""
    w = min(a.x2, b.x2) - max(a.x1, b.x1)
    h = min(a.y2, b.y2) - max(a.y1, b.y1)
    return w * h if w > 0 and h > 0 else 0.0


def iou(a: Box, b: Box) -> float:
    """Intersection over union, in [0, 1] and symmetric; exactly 1.0 for identical boxes."""
    inter = intersection_area(a, b)
    # Clamped because float rounding can push a near-containment a hair past 1.
    return min(1.0, inter / (a.area + b.area - inter))


def mean_box(boxes: Sequence[Box]) -> Box:
    """Coordinate-wise mean of ``boxes`` (the consensus box); ValueError when empty."""
    if not boxes:
        raise ValueError("mean_box needs at least one box")
    n = len(boxes)
    return Box(
        math.fsum(b.x1 for b in boxes) / n,
        math.fsum(b.y1 for b in boxes) / n,
        math.fsum(b.x2 for b in boxes) / n,
        math.fsum(b.y2 for b in boxes) / n,
    )


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


def difficulty_of_ratio(r: float) -> Difficulty:
    """MinCU difficulty of a box-area / image-area ratio: > 25% easy, > 10% medium, else hard."""
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"area ratio {r!r} must lie between 0 and 1")
    if r > 0.25:
        return Difficulty.EASY
    if r > 0.10:
        return Difficulty.MEDIUM
    return Difficulty.HARD


def difficulty(sides: Iterable[tuple[Sequence[Box], Frame]]) -> Difficulty | None:
    """Difficulty from the largest box relative to its own image; None when there is no box.

    ``sides`` holds ``(boxes, frame)`` for each side (and change); A and B may differ in size.
    """
    ratios = [box.area / frame.area for boxes, frame in sides for box in boxes]
    return difficulty_of_ratio(max(ratios)) if ratios else None


def answer_difficulty(
    changes: Iterable[Mapping], frame_a: Frame, frame_b: Frame
) -> Difficulty | None:
    """Difficulty of an answer (changes with ``boxes_a``/``boxes_b`` in pixels): its largest
    box over its own image, across every change and both sides; None without a box.
    BoxError or ValueError for a malformed box."""
    return difficulty(
        ([Box(*b) for b in change.get(f"boxes_{side}", [])], frame)
        for change in changes
        for side, frame in (("a", frame_a), ("b", frame_b))
    )
