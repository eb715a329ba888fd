"""Reading one Label Studio annotation's ``result`` through the mapping: which results make one
change, which side each box is on, and what the texts and choices say (``read`` turns
the boxes into pixels)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pairdiff.geometry import BoxError, Frame
from pairdiff.labelstudio.config import LSMapping, Role
from pairdiff.labelstudio.mapping import ValueMap

DEFAULT_TIER = "excellent"
_RECTANGLES = frozenset({"rectanglelabels", "rectangle"})
_SHAPES = frozenset({"polygon", "ellipse", "keypoint", "brush", "polyline", "vector"})


class Rotated:
    """What to do with a rotated box (a project setting)."""

    BOUND = "bound"  # its axis-aligned bounding box, with a note
    REFUSE = "refuse"  # the annotation is reported


class Invalid(ValueError):
    """One annotation that cannot be read; the message is for people."""


@dataclass(frozen=True)
class ReadOptions:
    """How to read an export: the mapping (from the config, or inferred), the lead's values,
    the project's categories (normalised slug or name → slug; empty: labels taken as they are)
    and what to do with rotated boxes."""

    mapping: LSMapping | None = None
    values: ValueMap = field(default_factory=ValueMap)
    categories: Mapping[str, str] = field(default_factory=dict)
    rotated: str = Rotated.BOUND


@dataclass(frozen=True)
class Region:
    side: str  # "a" or "b"
    value: Mapping[str, object]
    declared: Frame | None  # original_width × original_height, when the export gives them


@dataclass(frozen=True)
class DraftChange:
    category: str
    description: str
    entity_a: str
    entity_b: str
    regions: tuple[Region, ...]


def read_result(result: object, options: ReadOptions) -> tuple[str, tuple[DraftChange, ...]]:
    if not isinstance(result, list) or not all(isinstance(r, dict) for r in result):
        raise Invalid('"result" must be a list of JSON objects')
    for r in result:
        kind = str(r.get("type", ""))
        if kind not in _RECTANGLES and (kind.endswith("labels") or kind in _SHAPES):
            raise Invalid(f"{kind} regions cannot be imported, only rectangles")
    mapping = options.mapping
    assert mapping is not None
    tier = DEFAULT_TIER
    tier_field = mapping.field_of(Role.TIER)
    for r in result:
        if r.get("type") == "choices" and r.get("from_name") == tier_field:
            picked = _values(r, "choices")
            if picked:
                tier = options.values.tier(picked[0], tier_field)
                break
    groups = _groups(result)
    grouped = {id(r) for group in groups for r in group}
    shared = [r for r in result if id(r) not in grouped]
    changes = tuple(_draft_change(group, shared, options) for group in groups)
    return tier, changes


def _groups(result: list[dict]) -> list[list[dict]]:
    """Results of each change, in order of their first rectangle.

    Results are linked by a shared id, a ``parentID`` or a relation; without any link every
    rectangle of the annotation belongs to one change.
    """
    rectangles = [r for r in result if r.get("type") in _RECTANGLES]
    ids = [r["id"] for r in result if isinstance(r.get("id"), str | int)]
    linked = (
        len(ids) != len(set(ids))
        or any(r.get("parentID") for r in result)
        or any(r.get("type") == "relation" for r in result)
    )
    if not linked:
        return [rectangles] if rectangles else []
    parent: dict[object, object] = {}

    def root(key: object) -> object:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for r in result:
        for one, other in ((r.get("id"), r.get("parentID")), (r.get("from_id"), r.get("to_id"))):
            if one not in (None, "") and other not in (None, ""):
                parent[root(one)] = root(other)
    groups: dict[object, list[dict]] = {root(_key(r)): [] for r in rectangles}
    for r in result:
        key = root(_key(r))
        if key in groups:
            groups[key].append(r)
    return list(groups.values())


def _key(r: Mapping) -> object:
    """The result's id; one of its own when it has none, so id-less results never link."""
    return r["id"] if r.get("id") not in (None, "") else ("no id", id(r))


def _draft_change(group: list[dict], shared: list[dict], options: ReadOptions) -> DraftChange:
    mapping = options.mapping
    assert mapping is not None
    regions, labels, meta = [], [], {"a": "", "b": ""}
    for r in group:
        if r.get("type") not in _RECTANGLES:
            continue
        name = r.get("from_name")
        side = (mapping.boxes.get(name) if isinstance(name, str) else None) or (
            mapping.side_of_object(r.get("to_name"))
        )
        if side is None:
            (tag_a, key_a), (tag_b, key_b) = mapping.images
            raise Invalid(
                f"a box is on {r.get('to_name')!r}, neither image A ({tag_a!r}, {key_a}) nor "
                f"image B ({tag_b!r}, {key_b})"
            )
        regions.append(_region(r, side, options))
        labels += [label for label in _values(r, "rectanglelabels") if label not in labels]
        meta_text = r.get("meta", {}).get("text") if isinstance(r.get("meta"), dict) else None
        meta[side] = meta[side] or _first_text(meta_text)
    texts = {role: _text(group, shared, mapping, role) for role in _TEXT_FIELDS}
    entity_a = texts[Role.ENTITY_A] or meta["a"]
    entity_b = texts[Role.ENTITY_B] or meta["b"]
    absent = _choice(group, shared, mapping, Role.ABSENT_SIDE)
    absent_side = options.values.absent_side(*absent) if absent else "none"
    sides_drawn = {region.side for region in regions}
    if absent and absent_side in sides_drawn:
        raise Invalid(
            f"{absent[1]} says {absent_side.upper()} is empty, but there is a box on "
            f"{absent_side.upper()}"
        )
    if texts[Role.ENTITIES]:
        entity_a, entity_b = _split_entities(
            texts[Role.ENTITIES], _separators(options), absent_side, entity_a, entity_b
        )
    return DraftChange(
        category=_category(group, shared, labels, options),
        description=texts[Role.DESCRIPTION],
        entity_a="" if absent_side == "a" else entity_a,
        entity_b="" if absent_side == "b" else entity_b,
        regions=tuple(regions),
    )


_TEXT_FIELDS = (Role.DESCRIPTION, Role.ENTITY_A, Role.ENTITY_B, Role.ENTITIES)


def _category(
    group: list[dict], shared: list[dict], labels: list[str], options: ReadOptions
) -> str:
    mapping = options.mapping
    assert mapping is not None
    picked = _choice(group, shared, mapping, Role.CATEGORY)
    if picked:
        return options.values.category(*picked, _known(options))
    if len(labels) > 1:
        raise Invalid(f"the boxes of one change have different labels: {', '.join(labels)}")
    if not labels:
        return ""
    return options.values.category(labels[0], "box label", _known(options))


def _known(options: ReadOptions) -> Mapping[str, str] | None:
    """The project's categories; None (pure reading without a project): labels as they are."""
    return options.categories or None


def _separators(options: ReadOptions) -> tuple[str, ...]:
    """The lead's separator when the mapping file names one; else the config's (if it says
    one) before the usual ones."""
    values, mapping = options.values, options.mapping
    if "entities_separator" in values.raw or mapping is None or not mapping.entities_separator:
        return values.separators
    return (mapping.entities_separator, *values.separators)


def _split_entities(
    text: str, separators: tuple[str, ...], absent: str, entity_a: str, entity_b: str
) -> tuple[str, str]:
    """One "entities" text as the two labels: "cup | mug" → cup on A, mug on B; one label names
    the entity on each side that has it."""
    for separator in separators:
        if separator in text:
            parts = [p.strip() for p in text.split(separator)]
            if len(parts) != 2:
                raise Invalid(f"entities {text!r}: expected two labels split by {separator!r}")
            return entity_a or parts[0], entity_b or parts[1]
    return entity_a or (text if absent != "a" else ""), entity_b or (text if absent != "b" else "")


def _region(r: Mapping, side: str, options: ReadOptions) -> Region:
    image = f"image {side.upper()}"
    value = r.get("value")
    if not isinstance(value, Mapping):
        raise Invalid(f'a box on {image} has no "value" object')
    if r.get("image_rotation", 0) not in (0, 0.0, None):
        raise Invalid(
            f"{image} was rotated in Label Studio ({r.get('image_rotation')}°); "
            "boxes on a rotated view cannot be imported"
        )
    angle = value.get("rotation", 0)
    if angle not in (0, 0.0, None) and options.rotated == Rotated.REFUSE:
        raise Invalid(
            f"the box on {image} is rotated ({angle}°); this project takes only upright boxes"
        )
    width, height = r.get("original_width"), r.get("original_height")
    if width is None and height is None:
        return Region(side, value, None)
    try:
        declared = Frame(_integral(width), _integral(height))
    except BoxError as exc:
        raise Invalid(f"{image}: original {exc}") from exc
    return Region(side, value, declared)


def _integral(value: object) -> Any:
    """640.0 as 640: JSON writers differ on whole floats; anything else goes to Frame as is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _text(group: list[dict], shared: list[dict], mapping: LSMapping, role: str) -> str:
    """The text of the control with this role: the change's own first, else the annotation's."""
    for results in (group, shared):
        for r in results:
            name = r.get("from_name")
            if (
                r.get("type") == "textarea"
                and isinstance(name, str)
                and mapping.fields.get(name) == role
            ):
                text = _first_text(r.get("value", {}).get("text"))
                if text:
                    return text
    return ""


def _choice(
    group: list[dict], shared: list[dict], mapping: LSMapping, role: str
) -> tuple[str, str] | None:
    """(value, control name) of the choice with this role, the change's own first."""
    for r in (*group, *shared):
        name = r.get("from_name")
        if (
            r.get("type") == "choices"
            and isinstance(name, str)
            and mapping.fields.get(name) == role
        ):
            picked = _values(r, "choices")
            if picked:
                return picked[0], str(name)
    return None


def _values(r: Mapping, key: str) -> list[str]:
    value = r.get("value")
    items = value.get(key) if isinstance(value, Mapping) else None
    return [v for v in items if isinstance(v, str)] if isinstance(items, list) else []


def _first_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0].strip()
    return ""
