import contextlib
import io
import json

import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from pairdiff.anchors import parse_tokens
from pairdiff.coords import from_coco, from_thousand
from pairdiff.geometry import Box, Frame
from pairdiff.release.coco import coco_side
from pairdiff.release.records import ReleasePair, benchmark_record, training_record

CATEGORIES = [{"slug": "attribute", "name": "Attribute"}, {"slug": "object", "name": "Object"}]


FRAME_A, FRAME_B = Frame(1000, 500), Frame(800, 400)


def _pair(pair_id=7, *, changes=None):
    return ReleasePair(
        pair_id=pair_id,
        external_id=f"car-{pair_id}",
        image_a=f"images/{pair_id}_a.png",
        image_b=f"images/{pair_id}_b.jpg",
        frame_a=FRAME_A,
        frame_b=FRAME_B,
        changes=tuple(
            changes
            or [
                {
                    "category": "attribute",
                    "description": "The car changed from white to dark blue.",
                    "entity_a": "car",
                    "entity_b": "car",
                    "boxes_a": [[125, 365, 228, 391.5]],
                    "boxes_b": [[100, 292, 182.4, 313.2]],
                }
            ]
        ),
        agreement={"tiers": ["excellent", "excellent"], "mean_iou": 0.9, "decided_by": "agreement"},
        source={"external_id": f"car-{pair_id}", "instruction": "", "metadata": {}},
    )


def test_benchmark_record_has_both_frames_thousand_boxes_pixels_and_anchors():
    record = benchmark_record(_pair(), "test")
    assert record["id"] == "car-7"
    assert record["split"] == "test"
    assert record["size_a"] == [1000, 500] and record["size_b"] == [800, 400]
    assert record["boxes_a"] == [[125, 730, 228, 783]]
    assert record["boxes_b"] == [[125, 730, 228, 783]]  # B is smaller: its own frame
    assert record["boxes_a_px"] == [[125, 365, 228, 391.5]]
    assert record["anchors"] == "<loc_1><loc_7><loc_2><loc_7> <loc_1><loc_7><loc_2><loc_7>"
    assert record["entities"] == ["car", "car"]
    assert record["difficulty"] == "hard"
    assert record["category"] == "attribute"
    assert record["agreement"]["tiers"] == ["excellent", "excellent"]


def test_an_absent_side_is_an_empty_list_and_loc_null():
    pair = _pair(
        changes=[
            {
                "category": "object",
                "description": "A bicycle was added by the door.",
                "entity_a": "",
                "entity_b": "bicycle",
                "boxes_a": [],
                "boxes_b": [[0, 0, 400, 400]],
            }
        ]
    )
    record = benchmark_record(pair, "train")
    assert record["boxes_a"] == [] and record["boxes_a_px"] == []
    assert record["anchors"].startswith("<loc_null> ")
    assert record["difficulty"] == "easy"  # half of B's 800×400 frame


def test_pixel_to_thousand_to_pixel_round_trip_stays_within_a_thousandth():
    frame = Frame(1000, 500)
    record = benchmark_record(_pair(), "val")
    back = from_thousand(record["boxes_a"][0], frame)
    original = Box(125, 365, 228, 391.5)
    assert abs(back.y2 - original.y2) <= frame.height / 1000
    tokens = parse_tokens(record["anchors"].split(" ")[0])
    assert tokens == [(1, 7, 2, 7)]


def test_training_record_orders_entity_anchor_chains_description_fine_boxes():
    record = training_record(benchmark_record(_pair(), "train"))
    assert record["image_a"] == "images/7_a.png" and record["image_b"] == "images/7_b.jpg"
    assert record["target"] == (
        "car <src_start><loc_1><loc_7><loc_2><loc_7><src_end> "
        "<edit_start><loc_1><loc_7><loc_2><loc_7><edit_end> "
        "The car changed from white to dark blue. [[125,730,228,783]] [[125,730,228,783]]"
    )


def _coco(records, side, tmp_path):
    path = tmp_path / f"coco_{side}.json"
    data = coco_side(records, side, categories=CATEGORIES, info={"description": "t"})
    path.write_text(json.dumps(data))
    with contextlib.redirect_stdout(io.StringIO()):
        return COCO(str(path)), data


def test_coco_files_load_and_ground_truth_as_detections_scores_ap_one(tmp_path):
    records = [
        benchmark_record(_pair(1), "test"),
        benchmark_record(
            _pair(
                2,
                changes=[
                    {
                        "category": "object",
                        "description": "Two cups were added.",
                        "entity_a": "",
                        "entity_b": "cup",
                        "boxes_a": [],
                        "boxes_b": [[10, 10, 110, 90], [300, 200, 420, 330]],
                    }
                ],
            ),
            "train",
        ),
    ]
    for side, expected in (("a", 1), ("b", 3)):
        gt, data = _coco(records, side, tmp_path)
        assert len(data["annotations"]) == expected
        assert [a["id"] for a in data["annotations"]] == list(range(1, expected + 1))
        assert {i["id"] for i in data["images"]} == {1, 2}  # pair ids on both sides
        detections = [
            {
                "image_id": a["image_id"],
                "category_id": a["category_id"],
                "bbox": a["bbox"],
                "score": 1.0,
            }
            for a in data["annotations"]
        ]
        with contextlib.redirect_stdout(io.StringIO()):
            evaluation = COCOeval(gt, gt.loadRes(detections), "bbox")
            evaluation.evaluate()
            evaluation.accumulate()
            evaluation.summarize()
        assert evaluation.stats[0] == pytest.approx(1.0)


def test_coco_box_converts_back_to_the_pixel_box(tmp_path):
    records = [benchmark_record(_pair(), "test")]
    _, data = _coco(records, "a", tmp_path)
    annotation = data["annotations"][0]
    assert from_coco(annotation["bbox"], Frame(1000, 500)) == Box(125, 365, 228, 391.5)
    assert annotation["area"] == pytest.approx(103 * 26.5)
    assert annotation["iscrowd"] == 0


def test_entity_pool_does_not_depend_on_the_order_of_the_changes():
    from pairdiff.release.build import entity_pool

    changes = [
        {"entity_a": "cup", "entity_b": "Cup"},
        {"entity_a": "", "entity_b": "bicycle"},
        {"entity_a": "Cups", "entity_b": "apple"},
    ]
    assert entity_pool(changes) == entity_pool(reversed(changes)) == ["Cup", "apple", "bicycle"]
