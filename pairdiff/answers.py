"""An annotator's answer (the submit body) checked against the pair and the project's rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.geometry import Box, BoxError, Frame

Fields = dict[str, list[str]]


class AnswerInvalid(ValueError):
    """The answer breaks the rules; `fields` maps a path ("changes.0.boxes_b.1") to messages."""

    def __init__(self, fields: Fields) -> None:
        self.fields = fields
        first = next(iter(fields.items()))
        super().__init__(f"{first[0]}: {first[1][0]}" if first[0] else first[1][0])


@dataclass(frozen=True)
class AnswerRules:
    frame_a: Frame
    frame_b: Frame
    categories: frozenset[str]
    tiers: tuple[str, ...] = ("excellent", "good", "fair", "poor")
    defects: frozenset[str] = frozenset()
    # Tiers that claim a clean change, so at least one change must say what it is.
    tiers_needing_change: frozenset[str] = frozenset({"excellent", "good"})
    max_changes: int = 20
    max_boxes_per_side: int = 50
    max_description: int = 1000
    max_label: int = 200
    max_time_ms: int = 24 * 3600 * 1000


@dataclass(frozen=True)
class ChangeAnswer:
    """One change as an annotator answers it (the submit body's shape), boxes in each side's own
    pixels; pairdiff's change type: also the consensus of two agreeing annotations
    (``agreement.Verdict.consensus``) and a gold pair's known answer (``gold``)."""

    category: str
    description: str
    entity_a: str
    entity_b: str
    boxes_a: tuple[Box, ...]
    boxes_b: tuple[Box, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "category": self.category,
            "description": self.description,
            "entity_a": self.entity_a,
            "entity_b": self.entity_b,
            "boxes_a": [b.as_list() for b in self.boxes_a],
            "boxes_b": [b.as_list() for b in self.boxes_b],
        }


@dataclass(frozen=True)
class Answer:
    tier: str
    defects: tuple[str, ...]
    time_spent_ms: int
    changes: tuple[ChangeAnswer, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, object]:
        return {
            "tier": self.tier,
            "defects": list(self.defects),
            "time_spent_ms": self.time_spent_ms,
            "changes": [c.as_json() for c in self.changes],
        }


def parse_answer(body: object, rules: AnswerRules) -> Answer:
    """Check every field and report every problem at once (AnswerInvalid), or return the answer."""
    errors: Fields = {}
    if not isinstance(body, Mapping):
        raise AnswerInvalid({"": ["the answer must be a JSON object"]})
    tier = body.get("tier")
    if not isinstance(tier, str) or tier not in rules.tiers:
        errors["tier"] = [f"choose one of {', '.join(rules.tiers)}"]
    defects = _defects(body.get("defects", []), rules, errors)
    time_spent = _time_spent(body.get("time_spent_ms", 0), rules, errors)
    raw_changes = body.get("changes", [])
    changes: list[ChangeAnswer] = []
    if not isinstance(raw_changes, list):
        errors["changes"] = ["must be a list of changes"]
    elif len(raw_changes) > rules.max_changes:
        errors["changes"] = [f"at most {rules.max_changes} changes per pair"]
    else:
        for index, raw in enumerate(raw_changes):
            change = _change(raw, f"changes.{index}", rules, errors)
            if change is not None:
                changes.append(change)
        if not raw_changes and isinstance(tier, str) and tier in rules.tiers_needing_change:
            errors["changes"] = [f"a pair scored {tier} needs at least one change"]
    if errors:
        raise AnswerInvalid(errors)
    return Answer(str(tier), tuple(defects), time_spent, tuple(changes))


def _defects(raw: object, rules: AnswerRules, errors: Fields) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(d, str) for d in raw):
        errors["defects"] = ["must be a list of defect names"]
        return []
    unknown = sorted(set(raw) - rules.defects)
    if unknown:
        errors["defects"] = [f"unknown defect {', '.join(unknown)}"]
    return sorted(set(raw))


def _time_spent(raw: object, rules: AnswerRules, errors: Fields) -> int:
    if (
        isinstance(raw, bool)
        or not isinstance(raw, int | float)
        or not 0 <= raw <= rules.max_time_ms
    ):
        errors["time_spent_ms"] = [f"must be a number of milliseconds up to {rules.max_time_ms}"]
        return 0
    return int(raw)


def _text(raw: Mapping, key: str, limit: int, path: str, errors: Fields) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        errors[f"{path}.{key}"] = ["must be text"]
        return ""
    value = " ".join(value.split())
    if len(value) > limit:
        errors[f"{path}.{key}"] = [f"at most {limit} characters"]
    return value


def _change(raw: object, path: str, rules: AnswerRules, errors: Fields) -> ChangeAnswer | None:
    if not isinstance(raw, Mapping):
        errors[path] = ["must be an object"]
        return None
    category = raw.get("category")
    if not isinstance(category, str) or category not in rules.categories:
        errors[f"{path}.category"] = ["choose a category of the project's taxonomy"]
    description = _text(raw, "description", rules.max_description, path, errors)
    if not description:
        errors.setdefault(f"{path}.description", ["describe the change in one sentence"])
    sides = {}
    for side, frame in (("a", rules.frame_a), ("b", rules.frame_b)):
        entity = _text(raw, f"entity_{side}", rules.max_label, path, errors)
        boxes = _boxes(raw.get(f"boxes_{side}", []), frame, f"{path}.boxes_{side}", rules, errors)
        if boxes and not entity:
            errors.setdefault(f"{path}.entity_{side}", ["name what the box on this side shows"])
        sides[side] = (entity, boxes)
    if not sides["a"][1] and not sides["b"][1] and f"{path}.boxes_a" not in errors:
        errors[f"{path}.boxes_a"] = [
            "draw the change on at least one side (the other may be absent)"
        ]
    return ChangeAnswer(
        category=str(category),
        description=description,
        entity_a=sides["a"][0],
        entity_b=sides["b"][0],
        boxes_a=sides["a"][1],
        boxes_b=sides["b"][1],
    )


def _boxes(
    raw: object, frame: Frame, path: str, rules: AnswerRules, errors: Fields
) -> tuple[Box, ...]:
    if not isinstance(raw, list):
        errors[path] = ["must be a list of boxes [x1, y1, x2, y2] (empty when absent)"]
        return ()
    if len(raw) > rules.max_boxes_per_side:
        errors[path] = [f"at most {rules.max_boxes_per_side} boxes per side"]
        return ()
    boxes = []
    for index, values in enumerate(raw):
        try:
            box = Box.parse(values, frame)
        except BoxError as exc:
            errors[f"{path}.{index}"] = [str(exc)]
            continue
        if not _whole_pixels(values):
            errors[f"{path}.{index}"] = ["coordinates are whole pixels"]
            continue
        boxes.append(box)
    return tuple(boxes)


def _whole_pixels(values: Sequence[float]) -> bool:
    return all(float(v).is_integer() for v in values)
