"""Releases as Label Studio tasks, and the labelling config that matches them.

A project that came from Label Studio keeps its import profile (its config, the mapping read
from it and the lead's value mapping); its releases are then written with *that* config's tag
names, data keys and choice values, so Label Studio → Diffmark → Label Studio keeps every box
and field. Other projects get Diffmark's own config (``LABEL_CONFIG``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from pairdiff.coords import to_label_studio
from pairdiff.geometry import Box, Frame
from pairdiff.labelstudio.config import LSMapping, Role, parse_config
from pairdiff.labelstudio.mapping import TIERS, ValueMap, parse_value_map
from pairdiff.taxonomy import MINCU


@dataclass(frozen=True)
class ExportProfile:
    """Names to write tasks with: the mapping, the values and the config they came from."""

    mapping: LSMapping
    values: ValueMap
    config: str

    def as_json(self) -> dict:
        return {"config": self.config, "mapping": self.mapping.as_json(), "values": self.values.raw}

    @classmethod
    def from_json(cls, data: Mapping) -> ExportProfile:
        return cls(
            mapping=LSMapping.from_json(data["mapping"]),
            values=parse_value_map(json.dumps(dict(data.get("values") or {}))),
            config=str(data["config"]),
        )


def label_config(categories: Sequence[str]) -> str:
    """The labelling config for tasks from ``release_tasks``, the categories as box labels."""
    labels = "\n".join(f"    <Label value={quoteattr(c)}/>" for c in categories)
    tiers = "\n".join(f"    <Choice value={quoteattr(t)}/>" for t in TIERS)
    return _CONFIG.replace("{labels}", labels).replace("{tiers}", tiers)


_CONFIG = """<View>
  <Header value="A"/>
  <Image name="image_a" value="$image_a" zoom="true" zoomControl="true"/>
  <RectangleLabels name="box_a" toName="image_a" canRotate="false">
{labels}
  </RectangleLabels>
  <TextArea name="entity_a" toName="image_a" maxSubmissions="1" editable="true"
            placeholder="What the box on A shows (empty when absent on A)"/>
  <Header value="B"/>
  <Image name="image_b" value="$image_b" zoom="true" zoomControl="true"/>
  <RectangleLabels name="box_b" toName="image_b" canRotate="false">
{labels}
  </RectangleLabels>
  <TextArea name="entity_b" toName="image_b" maxSubmissions="1" editable="true"
            placeholder="What the box on B shows (empty when absent on B)"/>
  <Header value="What changed from A to B"/>
  <TextArea name="description" toName="image_a" maxSubmissions="1" editable="true"
            required="true" placeholder="One sentence"/>
  <Header value="Quality of the pair"/>
  <Choices name="tier" toName="image_a" choice="single" showInline="true">
{tiers}
  </Choices>
</View>
"""

LABEL_CONFIG = label_config([c.slug for c in MINCU])


def default_profile(categories: Sequence[str]) -> ExportProfile:
    config = label_config(categories)
    return ExportProfile(parse_config(config), ValueMap(), config)


def labelstudio_files(
    records: Sequence[Mapping], *, categories: Sequence[str], profile: Mapping | None = None
) -> dict[str, bytes]:
    """``label_studio.json`` and the ``label_config.xml`` that reads it, in the importing
    project's names when ``profile`` (the project's stored import profile) is given."""
    chosen = ExportProfile.from_json(profile) if profile else default_profile(categories)
    tasks = release_tasks(records, chosen)
    text = ",\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True) for t in tasks)
    return {
        "label_studio.json": f"[\n{text}\n]\n".encode() if tasks else b"[]\n",
        "label_config.xml": chosen.config.encode(),
    }


def release_tasks(records: Sequence[Mapping], profile: ExportProfile | None = None) -> list[dict]:
    """A release's benchmark records as Label Studio tasks with one annotation each.

    Every change becomes rectangles (one per box) and the texts and choices the profile's
    config has. Each rectangle has its own id, because Label Studio merges results sharing an
    id into one region; the change's first rectangle names the change and the other results
    point at it (``parentID``, or the same id for the texts).
    """
    profile = profile or default_profile([c.slug for c in MINCU])
    return [_release_task(n, record, profile) for n, record in enumerate(records, start=1)]


def _release_task(number: int, record: Mapping, profile: ExportProfile) -> dict:
    frames = {"a": Frame(*record["size_a"]), "b": Frame(*record["size_b"])}
    changes = record.get("changes") or [_record_change(record)]
    result = []
    for position, change in enumerate(changes, start=1):
        result += _change_results(f"change-{position}", change, frames, profile)
    tier_field = profile.mapping.field_of(Role.TIER)
    if tier_field:
        tier = _worst(record.get("agreement", {}).get("tiers") or [])
        result.append(_choice("tier", tier_field, profile, Role.TIER, tier))
    key_a, key_b = profile.mapping.data_keys
    return {
        "id": number,
        "data": {
            key_a: record["image_a"],
            key_b: record["image_b"],
            "pair_id": record.get("pair_id"),
            "split": record.get("split"),
            "record_id": record.get("id"),
        },
        "annotations": [{"result": result}],
    }


def _worst(tiers: Sequence[str]) -> str:
    known = [t for t in tiers if t in TIERS]
    return max(known, key=TIERS.index) if known else TIERS[0]


def _record_change(record: Mapping) -> dict:
    """A record without a ``changes`` list holds its one change at the top level."""
    entity_a, entity_b = record.get("entities") or ("", "")
    return {
        "category": record["category"],
        "description": record.get("description", ""),
        "entity_a": entity_a,
        "entity_b": entity_b,
        "boxes_a_px": record.get("boxes_a_px", []),
        "boxes_b_px": record.get("boxes_b_px", []),
    }


def _change_results(
    change_id: str, change: Mapping, frames: Mapping[str, Frame], profile: ExportProfile
) -> list[dict]:
    mapping = profile.mapping
    category_field = mapping.field_of(Role.CATEGORY)
    results: list[dict] = []
    for side in "ab":
        frame = frames[side]
        control = next(name for name, s in mapping.boxes.items() if s == side)
        labels = mapping.box_labels.get(control, ())
        value: dict[str, object] = {"rotation": 0}
        if labels or not mapping.from_config:
            label = (
                labels[0]
                if category_field and labels
                else profile.values.back("category", change["category"], labels)
            )
            value["rectanglelabels"] = [label]
        for index, values in enumerate(change.get(f"boxes_{side}_px", [])):
            box = Box.parse(values, frame)
            region = {
                "id": change_id if not results else f"{change_id}-{side}{index + 1}",
                "from_name": control,
                "to_name": mapping.images["ab".index(side)][0],
                "type": "rectanglelabels" if "rectanglelabels" in value else "rectangle",
                "original_width": frame.width,
                "original_height": frame.height,
                "image_rotation": 0,
                "value": {**to_label_studio(box, frame), **value},
            }
            if results:
                region["parentID"] = change_id
            results.append(region)
    for role, text in _texts(change, mapping, profile.values):
        results.append(
            {
                "id": change_id,
                "from_name": mapping.field_of(role),
                "to_name": mapping.images[0][0],
                "type": "textarea",
                "value": {"text": [text]},
            }
        )
    if category_field:
        results.append(
            _choice(change_id, category_field, profile, Role.CATEGORY, change["category"])
        )
    absent_field = mapping.field_of(Role.ABSENT_SIDE)
    if absent_field:
        side = "a" if not change.get("boxes_a_px") else "b" if not change.get("boxes_b_px") else ""
        choice = _choice(change_id, absent_field, profile, Role.ABSENT_SIDE, side or "none")
        if side or choice["value"]["choices"] != ["none"]:
            results.append(choice)
    return results


def _texts(change: Mapping, mapping: LSMapping, values: ValueMap) -> list[tuple[str, str]]:
    texts = [(Role.DESCRIPTION, change.get("description", ""))]
    entity_a, entity_b = change.get("entity_a", ""), change.get("entity_b", "")
    if mapping.field_of(Role.ENTITY_A) or mapping.field_of(Role.ENTITY_B):
        texts += [(Role.ENTITY_A, entity_a), (Role.ENTITY_B, entity_b)]
    elif mapping.field_of(Role.ENTITIES):
        # One label when both sides name the same thing or one side is absent, as people write.
        if entity_a and entity_b and entity_a != entity_b:
            joined = f"{entity_a} {values.separators[0]} {entity_b}"
        else:
            joined = entity_a or entity_b
        texts.append((Role.ENTITIES, joined))
    return [(role, text) for role, text in texts if text and mapping.field_of(role)]


def _choice(result_id: str, name: str, profile: ExportProfile, role: str, ours: str) -> dict:
    offered = profile.mapping.choice_values.get(name, ())
    return {
        "id": result_id,
        "from_name": name,
        "to_name": profile.mapping.images[0][0],
        "type": "choices",
        "value": {"choices": [profile.values.back(role, ours, offered)]},
    }
