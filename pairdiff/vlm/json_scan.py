"""Finding the JSON answer in a model's free text, and salvaging the complete changes of a
cut-off one (pure; ``pairdiff.vlm.parse`` decides what to do with either)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from pairdiff.vlm.result import excerpt

# Accepted spellings of a change's keys (compared lower-cased).
ALIASES: dict[str, tuple[str, ...]] = {
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
CHANGE_KEYS = frozenset(k for names in ALIASES.values() for k in names) | {"entity", "entities"}
LIST_KEYS = ("changes", "differences")
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_MAX_JSON_STARTS = 200  # bracket positions tried per candidate text: bounds work on garbage


def find_json(body: str) -> object | None:
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
        return bool(keys & (CHANGE_KEYS | set(LIST_KEYS)))
    return isinstance(value, list) and any(isinstance(v, Mapping) for v in value)


def salvage_json(body: str) -> tuple[list[object], str, bool] | None:
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


def count_changes(items: Sequence[object]) -> str:
    return f"{len(items)} complete change{'' if len(items) == 1 else 's'}"
