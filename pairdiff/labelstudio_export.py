"""Releases as Label Studio tasks, and the labelling config that matches them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from xml.sax.saxutils import quoteattr

from pairdiff.coords import to_label_studio
from pairdiff.geometry import Box, Frame
from pairdiff.labelstudio import TIERS
from pairdiff.taxonomy import MINCU


def release_tasks(records: Sequence[Mapping]) -> list[dict]:
    """A release's benchmark records as Label Studio tasks with one annotation each.

    Every change becomes rectangles (one per box, ``rectanglelabels`` = the category) and text
    areas for the description and entity labels. Each rectangle has its own id, because Label
    Studio merges results sharing an id into one region; the change's first rectangle names the
    change and the other results point at it (``parentID``, or the same id for the texts).
    """
    return [_release_task(number, record) for number, record in enumerate(records, start=1)]


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


def _release_task(number: int, record: Mapping) -> dict:
    frames = {"a": Frame(*record["size_a"]), "b": Frame(*record["size_b"])}
    changes = record.get("changes") or [_record_change(record)]
    result = []
    for position, change in enumerate(changes, start=1):
        result += _change_results(f"change-{position}", change, frames)
    return {
        "id": number,
        "data": {
            "image_a": record["image_a"],
            "image_b": record["image_b"],
            "pair_id": record.get("pair_id"),
            "split": record.get("split"),
            "record_id": record.get("id"),
        },
        "annotations": [{"result": result}],
    }


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


def _change_results(change_id: str, change: Mapping, frames: Mapping[str, Frame]) -> list[dict]:
    results: list[dict] = []
    for side in "ab":
        frame = frames[side]
        for index, values in enumerate(change.get(f"boxes_{side}_px", [])):
            box = Box.parse(values, frame)
            region = {
                "id": change_id if not results else f"{change_id}-{side}{index + 1}",
                "from_name": f"box_{side}",
                "to_name": f"image_{side}",
                "type": "rectanglelabels",
                "original_width": frame.width,
                "original_height": frame.height,
                "image_rotation": 0,
                "value": {
                    **to_label_studio(box, frame),
                    "rotation": 0,
                    "rectanglelabels": [change["category"]],
                },
            }
            if results:
                region["parentID"] = change_id
            results.append(region)
    for name, image in (("description", "a"), ("entity_a", "a"), ("entity_b", "b")):
        if change.get(name):
            results.append(
                {
                    "id": change_id,
                    "from_name": name,
                    "to_name": f"image_{image}",
                    "type": "textarea",
                    "value": {"text": [change[name]]},
                }
            )
    return results
