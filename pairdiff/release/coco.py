"""COCO detection files, one per side, sharing pair ids as image ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairdiff.coords import to_coco
from pairdiff.geometry import Box

COCO_LICENCE_ID = 1


def coco_side(
    records: Sequence[Mapping],
    side: str,
    *,
    categories: Sequence[Mapping],
    info: Mapping,
    licence: str = "",
) -> dict:
    """COCO detection JSON for side ``"a"`` or ``"b"``. Every box of every change is one
    annotation (ids from 1: pycocotools treats id 0 as unmatched); an absent side has none.
    Image ids are pair ids, so ``coco_a.json`` and ``coco_b.json`` line up."""
    category_ids = {c["slug"]: i for i, c in enumerate(categories, start=1)}
    images: list[dict] = []
    annotations: list[dict] = []
    for record in records:
        width, height = record[f"size_{side}"]
        images.append(
            {
                "id": record["pair_id"],
                "file_name": record[f"image_{side}"],
                "width": width,
                "height": height,
                "license": COCO_LICENCE_ID,
                "split": record["split"],
                "record_id": record["id"],
            }
        )
        for change_index, change in enumerate(record["changes"]):
            for pixels in change[f"boxes_{side}_px"]:
                bbox = to_coco(Box(*pixels))
                w, h = bbox[2], bbox[3]
                annotations.append(
                    {
                        "id": len(annotations) + 1,
                        "image_id": record["pair_id"],
                        "category_id": category_ids[change["category"]],
                        "bbox": bbox,
                        "area": w * h,
                        "iscrowd": 0,
                        "change": change_index,
                        "entity": change[f"entity_{side}"],
                    }
                )
    return {
        "info": dict(info),
        "licenses": [{"id": COCO_LICENCE_ID, "name": licence or "unspecified", "url": ""}],
        "images": images,
        "annotations": annotations,
        "categories": [
            {"id": category_ids[c["slug"]], "name": c["slug"], "supercategory": "change"}
            for c in categories
        ],
    }
