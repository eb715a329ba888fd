"""COCO mAP (IoU 0.50:0.95) of one side's boxes, by pycocotools (pure, no files).

Class-agnostic: every box is a "change", since a prediction's category is scored elsewhere
(Grounded F1 needs the entity) and MinCU-token answers carry no category. A predicted box's
score is its change's confidence (1.0 when not given). Records without a truth box on the side
(an absent side) still take part: a prediction boxing them is a false positive.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence

from pairdiff.geometry import Box


def side_map(
    truth: Sequence[Sequence[Box]], predicted: Sequence[Sequence[tuple[Box, float]]]
) -> float | None:
    """mAP over images ``0..n-1`` (truth[i] and predicted[i] belong together); None when the
    side has no truth box at all (COCO's AP is undefined), 0.0 when nothing was predicted."""
    if not any(truth):
        return None
    if not any(predicted):
        return 0.0
    # Imported here: only a scoring run needs pycocotools, and every web process that loads the
    # evaluation modules would otherwise carry it (issue #17's memory goal).
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    annotations: list[dict] = []
    detections: list[dict] = []
    for image, boxes in enumerate(truth):
        for box in boxes:
            annotations.append(_ann(len(annotations) + 1, image, box) | {"iscrowd": 0})
    for image, scored in enumerate(predicted):
        for box, score in scored:
            detections.append(_ann(len(detections) + 1, image, box) | {"score": float(score)})
    gt = COCO()
    # pycocotools 2.0.x: "info" must exist and annotation ids start at 1 (id 0 reads unmatched).
    gt.dataset = {
        "info": {},
        "images": [{"id": i} for i in range(len(truth))],
        "categories": [{"id": 1, "name": "change"}],
        "annotations": annotations,
    }
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
        gt.createIndex()
        dt = gt.loadRes(detections)
        run = COCOeval(gt, dt, "bbox")
        # Only what AP@[.50:.95] needs (all areas, 100 detections): a quarter of the default
        # work, the same figure as summarize()'s stats[0], computed as it does.
        run.params.areaRng, run.params.areaRngLbl, run.params.maxDets = [[0, 1e10]], ["all"], [100]
        run.evaluate()
        run.accumulate()
    precision = run.eval["precision"][:, :, :, 0, 0]
    defined = precision[precision > -1]
    return round(float(defined.mean()), 4) if defined.size else None


def _ann(ann_id: int, image: int, box: Box) -> dict:
    return {
        "id": ann_id,
        "image_id": image,
        "category_id": 1,
        "bbox": [box.x1, box.y1, box.width, box.height],
        "area": box.area,
    }
