"""A vision-language model's answer → predicted changes, in each side's own pixels (pure).

Two answer formats are read; the package docstring (``pairdiff.vlm``) spells both out. Whatever
the model writes, ``parse_answer`` returns a result: problems become ``error`` (no usable change,
or a cut-off answer), ``flags`` (a fixed vocabulary leads can filter on) and ``notes`` (the
reasons, one sentence each), never an exception.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real

from pairdiff.anchors import parse_tokens
from pairdiff.coords import from_thousand
from pairdiff.geometry import Box, BoxError, Frame, show_values
from pairdiff.predict import NO_VISIBLE_CHANGE, PredictedChange, PredictionResult

# Limits as for an annotator's answer (pairdiff.answers.AnswerRules), so a prediction fits the
# same storage and forms.
MAX_CHANGES = 20
MAX_BOXES = 50
MAX_DESCRIPTION = 1000
MAX_LABEL = 200
RAW_LIMIT = 20_000
# Far beyond any max_tokens a pre-annotation needs; bounds the work on a runaway reply.
MAX_ANSWER = 200_000
# A coordinate this far outside [0, 1000] is rounding slop and is clamped; further out the model
# used another coordinate system (pixels, most likely) and the box is dropped.
CLAMP_SLACK = 10.0

FLAG_UNKNOWN_CATEGORY = "vlm_unknown_category"
FLAG_BOX_ADJUSTED = "vlm_box_adjusted"  # clamped into [0, 1000] or corners reordered
FLAG_BOX_DROPPED = "vlm_box_dropped"
FLAG_CHANGE_DROPPED = "vlm_change_dropped"
NOTE_FLAGS = (FLAG_UNKNOWN_CATEGORY, FLAG_BOX_ADJUSTED, FLAG_BOX_DROPPED, FLAG_CHANGE_DROPPED)


@dataclass(frozen=True)
class VlmResult(PredictionResult):
    """A PredictionResult that also keeps the reasons behind its flags, for debugging."""

    notes: tuple[str, ...] = ()


# Accepted spellings of a change's keys (compared lower-cased).
_ALIASES: dict[str, tuple[str, ...]] = {
    "category": ("category", "type", "change_type", "change_category"),
    "description": ("description", "desc", "caption", "sentence"),
    "entity_a": ("entity_a", "label_a", "object_a"),
    "entity_b": ("entity_b", "label_b", "object_b"),
    "boxes_a": ("boxes_a", "bbox_a", "bboxes_a", "box_a", "bbox_2d_a"),
    "boxes_b": ("boxes_b", "bbox_b", "bboxes_b", "box_b", "bbox_2d_b"),
    "anchors_a": ("anchors_a", "loc_a"),
    "anchors_b": ("anchors_b", "loc_b"),
    "confidence": ("confidence", "score"),
}
_CHANGE_KEYS = frozenset(k for names in _ALIASES.values() for k in names) | {"entity", "entities"}
_LIST_KEYS = ("changes", "differences")
_BOX_KEYS = ("bbox_2d", "bbox", "box")
_ENTITY_SPLIT = re.compile(r"\s*(?:->|→|\|)\s*")

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_LOC = re.compile(r"<loc_[^<>\s]*>")
_ANCHOR = re.compile(r"<loc_(?:[0-9]|null)>")
_ANCHOR_RUN = re.compile(r"(?:<loc_[^<>\s]*>\s*)+")
# MinCU's spatial chains: A's anchors between <src_start> and <src_end>, B's between
# <edit_start> and <edit_end>, regions separated by <box_sep> (the release's training targets).
_CHAINS = re.compile(
    r"<src_start>(?P<a>(?:\s*<(?:loc_[^<>\s]*|box_sep)>)*)\s*<src_end>\s*"
    r"<edit_start>(?P<b>(?:\s*<(?:loc_[^<>\s]*|box_sep)>)*)\s*<edit_end>"
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# A fine-box group: [] , [x1, y1, x2, y2] or [[...], [...]] (one level of nesting).
_GROUP = r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
_TWO_GROUPS = re.compile(rf"({_GROUP})\s*[,;]?\s*({_GROUP})\s*\.?\s*$")
_ONE_GROUP = re.compile(rf"({_GROUP})\s*\.?\s*$")
_MAX_JSON_STARTS = 200  # bracket positions tried per candidate text: bounds work on garbage


def truncate_raw(text: str, limit: int = RAW_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left off."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit} more characters]"


def excerpt(text: str, limit: int = 200) -> str:
    """A short one-line quote of ``text`` for a reason."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def parse_answer(text: str, frame_a: Frame, frame_b: Frame, categories: Sequence[str]) -> VlmResult:
    """Changes from a model's answer (JSON or MinCU tokens); boxes in each side's own frame."""
    if not isinstance(text, str):
        return VlmResult(error=f"the model's answer is not text: {type(text).__name__}")
    raw = truncate_raw(text)
    body, thinking_error = _without_thinking(text)
    if thinking_error:
        return VlmResult(error=thinking_error, raw=raw)
    if not body.strip():
        return VlmResult(error="the model's answer is empty", raw=raw)
    reader = _Reader(frame_a, frame_b, categories)
    if len(body) > MAX_ANSWER:
        reader.note(f"the answer has {len(body)} characters; only the first {MAX_ANSWER} are read")
        body = body[:MAX_ANSWER]
    found = _find_json(body)
    if found is not None:
        return reader.from_json(found, raw)
    salvaged = _salvage_json(body)
    if salvaged is not None:
        items, reason, fatal = salvaged
        if fatal:
            return reader.from_items(items, raw, cut_reason=reason)
        reader.note(reason)
        return reader.from_items(items, raw)
    if _LOC.search(body):
        return reader.from_tokens(body, raw)
    return VlmResult(
        error=f"the answer holds neither JSON nor <loc_i> tokens: {excerpt(body)!r}", raw=raw
    )


def _without_thinking(text: str) -> tuple[str, str]:
    """The answer without reasoning blocks (Qwen3 "thinking" models), or an error."""
    body = _THINK.sub("", text)
    if "</think>" in body:
        # Some chat templates open the block themselves, so only its end is in the reply.
        body = body.rsplit("</think>", 1)[1]
    if "<think>" in body:
        return "", "the answer was cut off while the model was still reasoning (<think>)"
    return body, ""


# JSON ------------------------------------------------------------------------------------------


def _find_json(body: str) -> object | None:
    """The first complete JSON value shaped like an answer, in a ``` fence or in the prose."""
    decoder = json.JSONDecoder()
    candidates = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    for candidate in candidates:
        start = _next_bracket(candidate, 0)
        for _ in range(_MAX_JSON_STARTS):
            if start < 0:
                break
            try:
                value, end = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                closing = _closing(candidate, start)
                if closing is None:
                    # Cut off: every later bracket lies inside this value, and a complete
                    # change inside it must not pass for the whole answer (salvage decides).
                    break
                start = _next_bracket(candidate, closing)
                continue
            # A bare [] is "no change" only when it is the whole answer: inside prose or a
            # MinCU line it is an absent side's fine boxes.
            whole = not candidate[:start].strip() and not candidate[end:].strip()
            if _answer_shaped(value) or (value == [] and whole):
                return value
            start = _next_bracket(candidate, end)  # values nested in it are not answers
    return None


def _next_bracket(text: str, pos: int) -> int:
    hits = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
    return min(hits, default=-1)


def _answer_shaped(value: object) -> bool:
    if isinstance(value, Mapping):
        keys = {str(k).lower() for k in value}
        return bool(keys & (_CHANGE_KEYS | set(_LIST_KEYS)))
    return isinstance(value, list) and any(isinstance(v, Mapping) for v in value)


def _salvage_json(body: str) -> tuple[list[object], str, bool] | None:
    """The complete changes of a cut-off or broken JSON answer, why the rest was lost, and
    whether that loss is fatal (changes are missing) or only trailing text after the list.

    A change object is kept only when it is complete: salvaging the fields of a half-written
    change could make a side look absent (an empty side means added or removed) when the model
    simply had not written its boxes yet. None when the answer does not start any JSON answer.
    """
    listed = re.search(r'"(?:changes|differences)"\s*:\s*\[', body)
    array = re.search(r"\[\s*\{", body)
    obj = re.search(r'\{\s*"', body)
    if listed:
        start = listed.end() - 1
    elif array and (obj is None or array.start() < obj.start()):
        start = array.start()
    elif obj:
        return [], _object_reason(body, obj.start()), True
    else:
        return None
    decoder = json.JSONDecoder()
    items: list[object] = []
    pos = start + 1
    while True:
        pos = _skip_space(body, pos)
        if pos >= len(body):
            return items, f"the answer was cut off after change {len(items)}", True
        if body[pos] == "]":
            return items, "the JSON after the list of changes is cut off or malformed", False
        try:
            value, pos = decoder.raw_decode(body, pos)
        except json.JSONDecodeError:
            return items, _broken_reason(body, pos, f"in change {len(items) + 1}"), True
        items.append(value)
        pos = _skip_space(body, pos)
        if pos < len(body) and body[pos] == ",":
            pos += 1
        elif pos < len(body) and body[pos] == "]":
            return items, "the JSON after the list of changes is cut off or malformed", False
        elif pos >= len(body):
            return items, f"the answer was cut off after change {len(items)}", True
        else:
            return (
                items,
                f"the JSON is malformed at character {pos}, after change {len(items)}",
                True,
            )


def _object_reason(body: str, pos: int) -> str:
    end = _closing(body, pos)
    if end is None:
        return "the answer was cut off mid-JSON in change 1"
    try:
        value = json.loads(body[pos:end])
    except json.JSONDecodeError as exc:
        return f"the JSON is malformed: {exc.msg} at character {pos + exc.pos}"
    expected = "changes, category, description, entity_a/_b, boxes_a/_b"
    return f"the JSON has none of the expected keys ({expected}): {excerpt(repr(value), 120)}"


def _broken_reason(body: str, pos: int, where: str) -> str:
    if _closing(body, pos) is None:
        return f"the answer was cut off mid-JSON {where}"
    return f"the JSON is malformed at character {pos} {where}"


def _closing(text: str, pos: int) -> int | None:
    """Index after the bracket closing the one at ``pos`` (strings respected); None when the
    text ends first, i.e. the value was cut off."""
    depth, in_string, escaped = 0, False, False
    for i in range(pos, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth <= 0:
                return i + 1
    return None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _count(items: Sequence[object]) -> str:
    return f"{len(items)} complete change{'' if len(items) == 1 else 's'}"


# Reading changes -------------------------------------------------------------------------------


@dataclass
class _Reader:
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
            listed = next((lowered[k] for k in _LIST_KEYS if k in lowered), _MISSING)
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
            kept = f"kept {_count(changes)}" if changes else "no change could be kept"
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
            return next((fields[k] for k in _ALIASES[name] if k in fields), None)

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

    def change(self, where: str, lost: Sequence[str], **values) -> PredictedChange | None:
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
            if _LOC.search(value):
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
        lines = [line for line in body.splitlines() if _LOC.search(line)]
        if len(lines) > MAX_CHANGES:
            self.note(f"{len(lines)} changes; kept the first {MAX_CHANGES}")
            lines = lines[:MAX_CHANGES]
        changes = [c for i, line in enumerate(lines) if (c := self.token_change(line, i))]
        return self.result(changes, raw, offered=len(lines))

    def token_change(self, line: str, index: int) -> PredictedChange | None:
        where = f"change {index + 1}"
        line = _unchain(_BULLET.sub("", line, count=1))
        run = _ANCHOR_RUN.search(line)
        assert run is not None  # only lines with a token get here
        rest = line[run.end() :]
        if _LOC.search(rest):
            self.note(
                f"{where}: anchors must come together, A's then B's, right after the entity; "
                "dropped",
                FLAG_CHANGE_DROPPED,
            )
            return None
        sides = _split_sides(run.group(0))
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
        entity_a, entity_b = _token_entities(line[: run.start()])
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
        two = _TWO_GROUPS.search(rest)
        if two:
            try:
                fine = (json.loads(two.group(1)), json.loads(two.group(2)))
            except json.JSONDecodeError:
                self.note(f"{where}: fine boxes {excerpt(two.group(0), 60)!r} are not JSON")
                return rest[: two.start()], None
            return rest[: two.start()], fine
        one = _ONE_GROUP.search(rest)
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


def anchor_cell_box(region: Iterable[int]) -> list[int] | None:
    """The ``[0, 1000]`` box covering anchor cells ``(i1, j1, i2, j2)``; None when reversed.

    Cell ``i`` spans ``[100 i, 100 (i + 1)]``: the coordinates that map to ``<loc_i>``.
    """
    i1, j1, i2, j2 = region
    if i1 > i2 or j1 > j2:
        return None
    return [100 * i1, 100 * j1, 100 * (i2 + 1), 100 * (j2 + 1)]


def _split_sides(anchors: str) -> tuple[str, str] | str:
    """A's and B's anchor strings from the run of tokens after the entity, or a reason."""
    tokens = _LOC.findall(anchors)
    bad = [t for t in tokens if not _ANCHOR.fullmatch(t)]
    if bad:
        return f"{bad[0]} is not one of <loc_0>..<loc_9> or <loc_null>"
    runs = anchors.split()
    if len(runs) == 2 and not any(map(_anchor_problem, runs)):
        return runs[0], runs[1]
    nulls = [i for i, t in enumerate(tokens) if t == "<loc_null>"]
    if len(tokens) > 1 and nulls == [len(tokens) - 1]:
        split = len(tokens) - 1
    elif len(tokens) > 1 and nulls == [0]:
        split = 1
    elif not nulls and len(tokens) == 8:
        split = 4  # spaced-out tokens: one region per side is the only reading
    else:
        split = 0
    a, b = "".join(tokens[:split]), "".join(tokens[split:])
    if split and not _anchor_problem(a) and not _anchor_problem(b):
        return a, b
    return (
        f"cannot tell A's anchors from B's in {excerpt(anchors, 80)!r} "
        "(write A's tokens, a space, then B's tokens or <loc_null>)"
    )


def _anchor_problem(tokens: str) -> str:
    """Why ``tokens`` is not one side's anchors, or ""."""
    try:
        parse_tokens(tokens)
    except ValueError as exc:
        return str(exc)
    return ""


def _unchain(line: str) -> str:
    """A line with MinCU chain markers as the plain token format: A's tokens, a space, B's."""
    m = _CHAINS.search(line)
    if m is None:
        return line
    a, b = ("".join(_LOC.findall(m.group(side))) for side in ("a", "b"))
    return f"{line[: m.start()]}{a} {b}{line[m.end() :]}"


def _token_entities(text: str) -> tuple[str, str]:
    entity = text.strip().rstrip(":").strip()
    parts = _ENTITY_SPLIT.split(entity, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (entity, entity)
