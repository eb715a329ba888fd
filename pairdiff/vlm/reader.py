"""Reading a model's answer, JSON changes or MinCU token lines, into predicted changes in each
side's own pixels; every repair and drop is noted, with its flag (pure)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from pairdiff.anchors import parse_tokens
from pairdiff.coords import from_thousand
from pairdiff.geometry import Box, BoxError, Frame, show_values
from pairdiff.predict import NO_VISIBLE_CHANGE, PredictedChange
from pairdiff.vlm.json_scan import ALIASES, LIST_KEYS, count_changes
from pairdiff.vlm.result import (
    CLAMP_SLACK,
    FLAG_BOX_ADJUSTED,
    FLAG_BOX_DROPPED,
    FLAG_CHANGE_DROPPED,
    FLAG_UNKNOWN_CATEGORY,
    MAX_BOXES,
    MAX_CHANGES,
    MAX_DESCRIPTION,
    MAX_LABEL,
    VlmResult,
    excerpt,
)
from pairdiff.vlm.tokens import (
    ANCHOR_RUN,
    BULLET,
    LOC,
    ONE_GROUP,
    TWO_GROUPS,
    anchor_cell_box,
    split_sides,
    token_entities,
    unchain,
)

_BOX_KEYS = ("bbox_2d", "bbox", "box")


@dataclass
class Reader:
    """Changes of one answer for frames A and B and the project's categories, with the notes
    and flags of what was repaired or dropped on the way."""

    frame_a: Frame
    frame_b: Frame
    categories: Sequence[str]
    notes: list[str] = field(default_factory=list)
    flags: dict[str, None] = field(default_factory=dict)  # ordered set

    def note(self, message: str, flag: str = "") -> None:
        self.notes.append(message)
        if flag:
            self.flags[flag] = None

    def drop_box(self, reason: str) -> None:
        self.note(f"{reason}; dropped", FLAG_BOX_DROPPED)

    def frame(self, side: str) -> Frame:
        return self.frame_a if side == "a" else self.frame_b

    # -- results

    def result(
        self,
        changes: list[PredictedChange],
        raw: str,
        *,
        offered: int,
        error: str = "",
        confidence: float | None = None,
    ) -> VlmResult:
        """Assemble the result; ``offered`` is how many changes the model wrote."""
        flags = list(self.flags)
        if offered and not changes and not error:
            error = "no usable change in the answer: " + "; ".join(self.notes)
        if not offered and not error:
            flags.insert(0, NO_VISIBLE_CHANGE)  # the model says A and B do not differ
        if confidence is None and changes and all(c.confidence is not None for c in changes):
            confidence = math.fsum(c.confidence or 0.0 for c in changes) / len(changes)
        return VlmResult(
            changes=tuple(changes),
            flags=tuple(flags),
            confidence=confidence,
            error=error,
            raw=raw,
            notes=tuple(self.notes),
        )

    def from_json(self, value: object, raw: str) -> VlmResult:
        confidence = None
        if isinstance(value, Mapping):
            lowered = {str(k).lower(): v for k, v in value.items()}
            listed = next((lowered[k] for k in LIST_KEYS if k in lowered), _MISSING)
            if listed is not _MISSING:
                confidence = self.confidence(lowered.get("confidence"), "the answer")
                if listed is None:
                    listed = []
                if not isinstance(listed, list):
                    return self.result([], raw, offered=0, error=_not_a_list(listed))
                value = listed
            else:
                value = [value]
        assert isinstance(value, list)
        return self.from_items(value, raw, confidence=confidence)

    def from_items(
        self,
        items: list[object],
        raw: str,
        *,
        cut_reason: str = "",
        confidence: float | None = None,
    ) -> VlmResult:
        if len(items) > MAX_CHANGES:
            self.note(f"{len(items)} changes; kept the first {MAX_CHANGES}")
            items = items[:MAX_CHANGES]
        changes = [c for i, item in enumerate(items) if (c := self.json_change(item, i))]
        error = ""
        if cut_reason:
            kept = f"kept {count_changes(changes)}" if changes else "no change could be kept"
            error = f"{cut_reason}; {kept}"
        return self.result(changes, raw, offered=len(items), error=error, confidence=confidence)

    # -- JSON changes

    def json_change(self, item: object, index: int) -> PredictedChange | None:
        where = f"change {index + 1}"
        if not isinstance(item, Mapping):
            self.note(f"{where} is not an object: {excerpt(repr(item), 80)}", FLAG_CHANGE_DROPPED)
            return None
        fields = {str(k).strip().lower(): v for k, v in item.items()}

        def pick(name: str) -> object:
            return next((fields[k] for k in ALIASES[name] if k in fields), None)

        entity_a, entity_b = self.json_entities(fields, pick, where)
        boxes: dict[str, tuple[Box, ...]] = {}
        lost = []
        for side in ("a", "b"):
            value = pick(f"boxes_{side}")
            if value is None:
                value = pick(f"anchors_{side}")
            boxes[side] = self.side_boxes(value, side, f"{where}, side {side.upper()}")
            if not boxes[side] and not _declares_absent(value):
                lost.append(side)
        return self.change(
            where,
            lost,
            category=self.category(pick("category"), where),
            description=self.text(pick("description"), MAX_DESCRIPTION, f"{where} description"),
            entity_a=entity_a,
            entity_b=entity_b,
            boxes_a=boxes["a"],
            boxes_b=boxes["b"],
            confidence=self.confidence(pick("confidence"), where),
        )

    def json_entities(
        self, fields: Mapping[str, object], pick: Callable[[str], object], where: str
    ) -> tuple[str, str]:
        a, b = pick("entity_a"), pick("entity_b")
        both = fields.get("entities")
        if isinstance(both, list) and len(both) == 2:
            a, b = (both[0] if a is None else a), (both[1] if b is None else b)
        shared = fields.get("entity")
        if shared is not None:
            a, b = (shared if a is None else a), (shared if b is None else b)
        return (
            self.text(a, MAX_LABEL, f"{where} entity on A"),
            self.text(b, MAX_LABEL, f"{where} entity on B"),
        )

    def change(self, where: str, lost: Sequence[str], **values: Any) -> PredictedChange | None:
        """The change, unless a side lost every box it was given (it would read as absent,
        i.e. an added or removed object) or neither side has a box."""
        if lost:
            sides = " and ".join(side.upper() for side in lost)
            self.note(
                f"{where}: no usable box left on side {sides}, which would read as absent; dropped",
                FLAG_CHANGE_DROPPED,
            )
            return None
        if not values["boxes_a"] and not values["boxes_b"]:
            self.note(f"{where} has no box on either side; dropped", FLAG_CHANGE_DROPPED)
            return None
        # An absent side shows nothing to name.
        for side in ("a", "b"):
            if not values[f"boxes_{side}"]:
                values[f"entity_{side}"] = ""
        return PredictedChange(**values)

    def category(self, value: object, where: str) -> str:
        if value is None or value == "":
            return ""
        wanted = _category_key(str(value))
        for slug in self.categories:
            if _category_key(slug) == wanted:
                return slug
        self.note(
            f"{where}: category {excerpt(str(value), 60)!r} is not one of "
            f"{', '.join(self.categories) or '(no categories)'}; left empty",
            FLAG_UNKNOWN_CATEGORY,
        )
        return ""

    def text(self, value: object, limit: int, what: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            self.note(f"{what} is not text; left empty")
            return ""
        flat = " ".join(value.split())
        return flat[:limit]

    def confidence(self, value: object, where: str) -> float | None:
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            self.note(f"{where}: confidence {excerpt(repr(value), 40)} is not in [0, 1]; ignored")
            return None
        return float(value)

    # -- boxes

    def side_boxes(self, value: object, side: str, where: str) -> tuple[Box, ...]:
        """A side's boxes from ``[]``/null (absent), one box, a list of boxes, box objects
        (``{"bbox_2d": [...]}``), a JSON string of those, or MinCU anchors text."""
        if value is None:
            return ()
        if isinstance(value, str):
            if LOC.search(value):
                return self.anchor_boxes(value, side, where)
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                self.drop_box(f"{where}: {excerpt(str(value), 60)!r} is not a box")
                return ()
            if value is None or isinstance(value, str):
                return self.side_boxes(None, side, where)
        if isinstance(value, Mapping):
            value = [value]
        if not isinstance(value, list):
            self.drop_box(f"{where}: {excerpt(repr(value), 60)} is not a box")
            return ()
        if len(value) == 4 and not any(isinstance(v, list | Mapping) for v in value):
            value = [value]  # one flat box rather than a list of boxes
        if len(value) > MAX_BOXES:
            self.note(f"{where}: {len(value)} boxes; kept the first {MAX_BOXES}", FLAG_BOX_DROPPED)
            value = value[:MAX_BOXES]
        boxes = (self.box(v, side, f"{where} box {i + 1}") for i, v in enumerate(value))
        return tuple(b for b in boxes if b is not None)

    def box(self, value: object, side: str, where: str) -> Box | None:
        """One ``[0, 1000]`` xyxy box → pixels; slop clamped, corners reordered, else dropped."""
        if isinstance(value, Mapping):
            fields = {str(k).lower(): v for k, v in value.items()}
            inner = next((fields[k] for k in _BOX_KEYS if k in fields), None)
            if inner is None and all(k in fields for k in ("x1", "y1", "x2", "y2")):
                inner = [fields["x1"], fields["y1"], fields["x2"], fields["y2"]]
            value = inner
        numbers = _numbers(value)
        if numbers is None:
            self.drop_box(f"{where}: {excerpt(repr(value), 60)} is not 4 numbers")
            return None
        shown = show_values(numbers)
        if any(not -CLAMP_SLACK <= c <= 1000 + CLAMP_SLACK for c in numbers):
            self.note(f"{where}: {shown} lies outside [0, 1000]; dropped", FLAG_BOX_DROPPED)
            return None
        x1, y1, x2, y2 = (min(max(c, 0.0), 1000.0) for c in numbers)
        fixed = [min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)]
        try:
            box = from_thousand(fixed, self.frame(side))
        except BoxError as exc:
            self.note(f"{where}: {exc}; dropped", FLAG_BOX_DROPPED)
            return None
        if fixed != numbers:
            self.note(f"{where}: {shown} adjusted to {show_values(fixed)}", FLAG_BOX_ADJUSTED)
        return box

    def anchor_boxes(self, text: str, side: str, where: str) -> tuple[Box, ...]:
        """Each anchor region as its ``[0, 1000]`` cell box (``<loc_null>`` → absent)."""
        try:
            regions = parse_tokens(text)
        except ValueError as exc:
            self.note(f"{where}: {exc}; dropped", FLAG_BOX_DROPPED)
            return ()
        boxes = []
        for i, region in enumerate(regions or ()):
            cell = anchor_cell_box(region)
            if cell is None:
                self.note(
                    f"{where} region {i + 1}: anchors {list(region)} run backwards; dropped",
                    FLAG_BOX_DROPPED,
                )
                continue
            boxes.append(from_thousand(cell, self.frame(side)))
        return tuple(boxes)

    # -- MinCU tokens

    def from_tokens(self, body: str, raw: str) -> VlmResult:
        lines = [line for line in body.splitlines() if LOC.search(line)]
        if len(lines) > MAX_CHANGES:
            self.note(f"{len(lines)} changes; kept the first {MAX_CHANGES}")
            lines = lines[:MAX_CHANGES]
        changes = [c for i, line in enumerate(lines) if (c := self.token_change(line, i))]
        return self.result(changes, raw, offered=len(lines))

    def token_change(self, line: str, index: int) -> PredictedChange | None:
        where = f"change {index + 1}"
        line = unchain(BULLET.sub("", line, count=1))
        run = ANCHOR_RUN.search(line)
        assert run is not None  # only lines with a token get here
        rest = line[run.end() :]
        if LOC.search(rest):
            self.note(
                f"{where}: anchors must come together, A's then B's, right after the entity; "
                "dropped",
                FLAG_CHANGE_DROPPED,
            )
            return None
        sides = split_sides(run.group(0))
        if isinstance(sides, str):
            self.note(f"{where}: {sides}; dropped", FLAG_CHANGE_DROPPED)
            return None
        description, fine = self.fine_boxes(rest, where)
        boxes: dict[str, tuple[Box, ...]] = {}
        lost = []
        for side, tokens, fine_side in zip("ab", sides, fine or (None, None), strict=True):
            boxes[side] = self.token_side(tokens, fine_side, side, f"{where}, side {side.upper()}")
            if not boxes[side] and tokens != "<loc_null>":
                lost.append(side)
        entity_a, entity_b = token_entities(line[: run.start()])
        return self.change(
            where,
            lost,
            category="",  # the token format carries no category
            description=self.text(description, MAX_DESCRIPTION, f"{where} description"),
            entity_a=self.text(entity_a, MAX_LABEL, f"{where} entity"),
            entity_b=self.text(entity_b, MAX_LABEL, f"{where} entity"),
            boxes_a=boxes["a"],
            boxes_b=boxes["b"],
            confidence=None,
        )

    def fine_boxes(self, rest: str, where: str) -> tuple[str, tuple[object, object] | None]:
        """The description and the trailing fine boxes of A and B (decoded JSON), if any."""
        two = TWO_GROUPS.search(rest)
        if two:
            try:
                fine = (json.loads(two.group(1)), json.loads(two.group(2)))
            except json.JSONDecodeError:
                self.note(f"{where}: fine boxes {excerpt(two.group(0), 60)!r} are not JSON")
                return rest[: two.start()], None
            return rest[: two.start()], fine
        one = ONE_GROUP.search(rest)
        if one:
            self.note(
                f"{where}: one list of fine boxes where A's and B's were expected; "
                "the anchor cells are used",
                FLAG_BOX_DROPPED,
            )
            return rest[: one.start()], None
        return rest, None

    def token_side(self, tokens: str, fine: object, side: str, where: str) -> tuple[Box, ...]:
        cells = self.anchor_boxes(tokens, side, where)
        absent = tokens.strip() == "<loc_null>"
        if fine is None or fine == []:
            if fine == [] and not absent:
                self.note(f"{where}: no fine box for the anchors; the anchor cells are used")
            return cells
        if absent:
            self.note(f"{where}: fine boxes on a <loc_null> side; ignored", FLAG_BOX_DROPPED)
            return ()
        boxes = self.side_boxes(fine, side, where)
        if not boxes and cells:
            self.note(f"{where}: no usable fine box; the anchor cells are used")
            return cells
        return boxes


_MISSING = object()


def _not_a_list(value: object) -> str:
    return f'"changes" should be a list of changes, not {excerpt(repr(value), 60)}'


def _declares_absent(value: object) -> bool:
    """Whether a side's value says "absent" (as opposed to boxes that turned out unusable)."""
    if isinstance(value, str):
        return value.strip().lower() in ("", "[]", "null", "none", "<loc_null>")
    return value is None or value == []


def _category_key(text: str) -> str:
    # "Global colour", "global-color" and "global_colour" name the same slug; the VDiff slugs
    # are British, models mostly write American.
    key = re.sub(r"[\s\-/]+", "_", text.strip().lower())
    return key.replace("color", "colour")


def _numbers(value: object) -> list[float] | None:
    if not isinstance(value, list | tuple) or len(value) != 4:
        return None
    if any(isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v) for v in value):
        return None
    return [float(v) for v in value]
