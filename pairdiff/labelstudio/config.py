"""Which Label Studio tag means what: the mapping from a project's labelling config (or, without
one, from the shapes of the results) to Diffmark's sides and fields.

In Label Studio a result names its control (``from_name``) and the object it is on
(``to_name``) by *tag names* users choose freely; the task's data keys appear only in the
config (``<Image name="a" value="$image_a"/>``). So the config is read first: Image tags give
tag name → data key → side, RectangleLabels their side through ``toName``, TextArea and
Choices their role by name (or as the lead's mapping file says).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from pairdiff.labelstudio.refs import looks_like_image

MAX_CONFIG_BYTES = 256 * 1024


class Role:
    """What a TextArea or Choices control holds."""

    DESCRIPTION = "description"
    ENTITY_A = "entity_a"
    ENTITY_B = "entity_b"
    ENTITIES = "entities"  # both labels in one text, split on the separator
    CATEGORY = "category"
    TIER = "tier"
    ABSENT_SIDE = "absent_side"
    IGNORE = "ignore"


ROLES = (
    Role.DESCRIPTION,
    Role.ENTITY_A,
    Role.ENTITY_B,
    Role.ENTITIES,
    Role.CATEGORY,
    Role.TIER,
    Role.ABSENT_SIDE,
    Role.IGNORE,
)
_TEXT_ROLES = frozenset({Role.DESCRIPTION, Role.ENTITY_A, Role.ENTITY_B, Role.ENTITIES})
_CHOICE_ROLES = frozenset({Role.CATEGORY, Role.TIER, Role.ABSENT_SIDE})
_RECTANGLES = frozenset({"rectanglelabels", "rectangle"})

# Names people give these controls, normalised (lower case, runs of other characters as "_").
_NAMES = {
    Role.DESCRIPTION: {"desc", "description", "caption", "change", "what_changed", "sentence"},
    Role.ENTITIES: {"entities", "entity", "objects", "entity_labels"},
    Role.CATEGORY: {"category", "categories", "change_type", "change_category", "type", "kind"},
    Role.TIER: {"tier", "quality", "rating", "score", "grade", "pair_quality"},
    Role.ABSENT_SIDE: {"empty_side", "absent_side", "absent", "null_side", "missing_side"},
}
_SIDE_WORDS = {"a": "a", "1": "a", "before": "a", "b": "b", "2": "b", "after": "b"}
_ENTITY_SIDE = re.compile(r"^(?:entity|object|label|entities)_?(a|b|1|2|before|after)$")
DEFAULT_SEPARATORS = ("|", "→", "->", ";")


class ConfigUnusable(ValueError):
    """The labelling config (or the results, without one) gives no usable mapping."""


@dataclass(frozen=True)
class LSMapping:
    """Tag names → sides and roles. ``images`` holds (tag name, data key) for A, then B."""

    images: tuple[tuple[str, str], tuple[str, str]]
    boxes: Mapping[str, str]  # rectangle control name → side "a" / "b"
    fields: Mapping[str, str]  # TextArea / Choices name → Role
    box_labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    choice_values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    from_config: bool = False
    notes: tuple[str, ...] = ()
    # How the config says an "entities" text is split ("," for "entity on A, entity on B");
    # "" when it does not say. A separator in the lead's mapping file comes first.
    entities_separator: str = ""

    @property
    def data_keys(self) -> tuple[str, str]:
        return self.images[0][1], self.images[1][1]

    def side_of_object(self, to_name: object) -> str | None:
        for side, (tag, _) in zip("ab", self.images, strict=True):
            if to_name == tag:
                return side
        return None

    def field_of(self, role: str) -> str:
        """The name of the first control with this role, "" when none."""
        return next((name for name, r in self.fields.items() if r == role), "")

    def describe(self) -> list[str]:
        """The mapping in words, for the dry run and the preview."""
        source = "the labelling config" if self.from_config else "the export (no config given)"
        lines = [f"Mapping read from {source}:"]
        for side, (tag, key) in zip("AB", self.images, strict=True):
            lines.append(f"  image {side}: Image tag {tag!r}, data key {key!r}")
        for name, side in self.boxes.items():
            lines.append(f"  boxes on {side.upper()}: {name!r}")
        for name, role in self.fields.items():
            what = "ignored" if role == Role.IGNORE else role.replace("_", " ")
            lines.append(f"  {name!r} → {what}")
        if self.entities_separator:
            lines.append(
                f"  entities split on {self.entities_separator!r}, as the config's "
                f"{self.field_of(Role.ENTITIES)!r} says"
            )
        lines += [f"  note: {note}" for note in self.notes]
        return lines

    def as_json(self) -> dict:
        return {
            "images": [list(pair) for pair in self.images],
            "boxes": dict(self.boxes),
            "fields": dict(self.fields),
            "box_labels": {k: list(v) for k, v in self.box_labels.items()},
            "choice_values": {k: list(v) for k, v in self.choice_values.items()},
            "from_config": self.from_config,
            "entities_separator": self.entities_separator,
        }

    @classmethod
    def from_json(cls, data: Mapping) -> LSMapping:
        a, b = data["images"]
        return cls(
            images=((a[0], a[1]), (b[0], b[1])),
            boxes=dict(data["boxes"]),
            fields=dict(data["fields"]),
            box_labels={k: tuple(v) for k, v in data.get("box_labels", {}).items()},
            choice_values={k: tuple(v) for k, v in data.get("choice_values", {}).items()},
            from_config=bool(data.get("from_config")),
            entities_separator=str(data.get("entities_separator") or ""),
        )


def parse_config(xml: bytes | str, *, roles: Mapping[str, str] | None = None) -> LSMapping:
    """The mapping a Label Studio labelling config gives; ``roles`` (name → Role, from the
    lead's mapping file) overrides the roles read from control names."""
    root = _xml(xml)
    images = [
        (el.get("name", ""), el.get("value", "").strip().lstrip("$"))
        for el in root.iter()
        if el.tag == "Image"
    ]
    if len(images) != 2 or not all(name and key for name, key in images):
        found = ", ".join(repr(n) for n, _ in images) or "none"
        raise ConfigUnusable(
            f'the config needs exactly two <Image name=… value="$…"/> tags (found: {found})'
        )
    ordered, note = _order_sides(images)
    tags = {name: side for side, (name, _) in zip("ab", ordered, strict=True)}
    boxes, labels, fields, values = {}, {}, {}, {}
    for el in root.iter():
        name, kind = el.get("name", ""), el.tag.lower()
        if kind in _RECTANGLES:
            side = tags.get(el.get("toName", ""))
            if side is None:
                raise ConfigUnusable(
                    f"<{el.tag} name={name!r}> is on {el.get('toName')!r}, which is no Image tag"
                )
            boxes[name] = side
            labels[name] = tuple(x.get("value", "") for x in el if x.tag == "Label")
        elif kind in ("textarea", "choices") and name:
            fields[name] = _role(name, kind, el.get("toName", ""), tags, roles)
            if kind == "choices":
                values[name] = tuple(x.get("value", "") for x in el.iter("Choice"))
    if not boxes:
        raise ConfigUnusable("the config has no RectangleLabels (or Rectangle) on either image")
    return LSMapping(
        images=(ordered[0], ordered[1]),
        boxes=boxes,
        fields=fields,
        box_labels=labels,
        choice_values=values,
        from_config=True,
        notes=(note,) if note else (),
        entities_separator=_entities_separator(root, fields),
    )


# A config that says so in words ("comma-separated", "separated by commas")…
_COMMA_WORDS = re.compile(r"comma[- ]separated|separated by (?:a )?commas?", re.IGNORECASE)
# …or shows it: a placeholder "entity on A, entity on B" holds the separator once.
_SHOWN_SEPARATORS = (*DEFAULT_SEPARATORS, ",")


def _entities_separator(root: ET.Element, fields: Mapping[str, str]) -> str:
    """The separator of the "entities" control, from its placeholder, hint or title, or a
    Header about entities; "" when the config does not say."""
    names = {name for name, role in fields.items() if role == Role.ENTITIES}
    said = []
    for el in root.iter():
        if el.get("name") in names:
            said += [el.get(attr, "") for attr in ("placeholder", "hint", "title")]
        elif el.tag == "Header" and re.search(r"entit", el.get("value", ""), re.IGNORECASE):
            said.append(el.get("value", ""))
    if any(_COMMA_WORDS.search(text) for text in said):
        return ","
    for text in said:
        shown = [sep for sep in _SHOWN_SEPARATORS if text.count(sep) == 1]
        if shown:
            return shown[0]
    return ""


def infer_mapping(tasks: Iterable[Mapping], *, roles: Mapping[str, str] | None = None) -> LSMapping:
    """The mapping read from the export alone, when it is unambiguous: the tasks' two image
    data keys, and the objects the rectangles are drawn on matched to them by name. Each
    inference is said in ``notes``; ConfigUnusable (asking for the config) otherwise."""
    keys: list[str] = []
    objects: list[str] = []
    boxes: dict[str, str] = {}
    controls: dict[str, str] = {}
    for task in tasks:
        data = task.get("data") if isinstance(task, Mapping) else None
        if isinstance(data, Mapping) and len(keys) < 2:
            keys = _image_keys(data) or keys
        for result in _results(task):
            kind, to_name = str(result.get("type", "")), result.get("to_name")
            if kind in _RECTANGLES and isinstance(to_name, str):
                if to_name not in objects:
                    objects.append(to_name)
                boxes.setdefault(str(result.get("from_name", "")), to_name)
            elif kind in ("textarea", "choices") and isinstance(result.get("from_name"), str):
                controls.setdefault(result["from_name"], kind)
    if len(keys) != 2:
        raise ConfigUnusable("the tasks do not hold two images; give the labelling config")
    sides = _match_objects(objects, keys)
    images = tuple((tag, key) for key in keys for tag, k in sides.items() if k == key)
    tags = {tag: "ab"[keys.index(key)] for tag, key in sides.items()}
    notes = [
        f"boxes on {tag!r} are taken as image {tags[tag].upper()} ({key!r}): "
        + ("same name" if tag == key else "matched by name")
        for tag, key in sides.items()
    ]
    fields = {name: _role(name, kind, "", tags, roles) for name, kind in controls.items()}
    notes += [f"{name!r} taken as {role} by its name" for name, role in fields.items()]
    return LSMapping(
        images=(images[0], images[1]),
        boxes={name: tags[obj] for name, obj in boxes.items()},
        fields=fields,
        notes=tuple(notes),
    )


def with_roles(mapping: LSMapping, roles: Mapping[str, str]) -> LSMapping:
    """The mapping with the lead's roles for the named controls."""
    return replace(mapping, fields={**mapping.fields, **dict(roles)})


def _xml(xml: bytes | str) -> ET.Element:
    text = xml.decode("utf-8-sig", errors="replace") if isinstance(xml, bytes) else xml
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigUnusable(f"the config is over {MAX_CONFIG_BYTES // 1024} KB")
    # Label Studio configs have no DTD; refusing one rules out entity expansion attacks.
    if re.search(r"<!\s*(DOCTYPE|ENTITY)", text, re.IGNORECASE):
        raise ConfigUnusable("the config may not declare a DOCTYPE or entities")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ConfigUnusable(f"the config is not XML ({exc})") from exc
    if root.tag != "View":
        raise ConfigUnusable(f"a labelling config starts with <View>, not <{root.tag}>")
    return root


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _side_word(name: str) -> str | None:
    norm = _norm(name)
    last = norm.rsplit("_", 1)[-1]
    return _SIDE_WORDS.get(norm) or (_SIDE_WORDS.get(last) if "_" in norm else None)


def _order_sides(images: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """Document order is A, B — unless both tags (or data keys) say the opposite by name."""
    for index in (0, 1):
        words = [_side_word(img[index]) for img in images]
        if words == ["b", "a"]:
            what = "tag names" if index == 0 else "data keys"
            return [images[1], images[0]], f"A and B taken from the {what}, not the order"
    return images, ""


def _role(
    name: str,
    kind: str,
    to_name: str,
    tags: Mapping[str, str],
    roles: Mapping[str, str] | None,
) -> str:
    if roles and name in roles:
        return roles[name]
    norm = _norm(name)
    side = _ENTITY_SIDE.match(norm)
    if kind == "textarea":
        if side:
            return f"entity_{_SIDE_WORDS[side.group(1)]}"
        for role in (Role.DESCRIPTION, Role.ENTITIES):
            if norm in _NAMES[role]:
                # An entity text on one image only names what that image shows.
                if role == Role.ENTITIES and to_name in tags and norm != "entities":
                    return f"entity_{tags[to_name]}"
                return role
    else:
        for role in (Role.CATEGORY, Role.TIER, Role.ABSENT_SIDE):
            if norm in _NAMES[role]:
                return role
    return Role.IGNORE


def _image_keys(data: Mapping[str, object]) -> list[str] | None:
    if all(isinstance(v, str) and v.strip() for v in (data.get("image_a"), data.get("image_b"))):
        return ["image_a", "image_b"]
    found = [k for k, v in data.items() if isinstance(v, str) and looks_like_image(v)]
    return found[:2] if len(found) >= 2 else None


def _results(task: object) -> Iterable[Mapping]:
    if not isinstance(task, Mapping):
        return
    for group in ("annotations", "completions", "predictions"):
        items = task.get(group)
        for item in items if isinstance(items, list) else []:
            result = item.get("result") if isinstance(item, Mapping) else None
            for r in result if isinstance(result, list) else []:
                if isinstance(r, Mapping):
                    yield r


def _match_objects(objects: list[str], keys: list[str]) -> dict[str, str]:
    """Each object name the boxes are on → the data key it shows, when only one fits."""
    if not objects:  # nothing drawn: the tags' names do not matter
        return {keys[0]: keys[0], keys[1]: keys[1]}
    if len(objects) > 2:
        raise ConfigUnusable(
            f"boxes are on {len(objects)} objects ({', '.join(objects)}); give the config"
        )
    matched: dict[str, str] = {}
    for obj in objects:
        fits = [k for k in keys if _fits(obj, k)]
        if len(fits) != 1:
            raise ConfigUnusable(
                f"boxes are on {obj!r}, which names neither {keys[0]} nor {keys[1]} "
                "unambiguously; give the labelling config (it says which Image shows which key)"
            )
        matched[obj] = fits[0]
    if len(set(matched.values())) != len(matched):
        raise ConfigUnusable(f"{' and '.join(objects)} both look like {keys[0]}; give the config")
    if len(matched) == 1:  # boxes on one image only: the other keeps its data key as name
        other = next(k for k in keys if k not in matched.values())
        matched[other] = other
    return matched


def _fits(obj: str, key: str) -> bool:
    if obj == key:
        return True
    word_obj, word_key = _side_word(obj), _side_word(key)
    return word_obj is not None and word_obj == word_key


def role_names() -> str:
    return ", ".join(ROLES)


def check_roles(roles: Mapping[str, object]) -> dict[str, str]:
    """The ``fields`` section of a mapping file, checked: control name → Role."""
    checked = {}
    for name, role in roles.items():
        if role not in ROLES:
            raise ConfigUnusable(f"fields: {name!r} → {role!r} is no role ({role_names()})")
        checked[str(name)] = str(role)
    return checked


TEXT_ROLES, CHOICE_ROLES = _TEXT_ROLES, _CHOICE_ROLES
