import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pairdiff.geometry import Frame
from pairdiff.labelstudio.read import (
    LSAnnotation,
    LSUnusable,
    ReadOptions,
    Rotated,
    parse_export,
    read_export,
    task_in_frames,
)
from pairdiff.labelstudio.refs import ImageFinder, ImageNotFound
from pairdiff.labelstudio.write import LABEL_CONFIG, label_config, release_tasks


def _box(side: str, x, y, w, h, *, label="attribute", size=(640, 480), **extra) -> dict:
    """A rectangle result as Label Studio 1.x exports it."""
    result = {
        "original_width": size[0],
        "original_height": size[1],
        "image_rotation": 0,
        "value": {"x": x, "y": y, "width": w, "height": h, "rotation": 0},
        "id": f"r{side}{x}",
        "from_name": f"box_{side}",
        "to_name": f"image_{side}",
        "type": "rectanglelabels",
        "origin": "manual",
    }
    if label is not None:
        result["value"]["rectanglelabels"] = [label]
    result["value"].update(extra.pop("value", {}))
    return result | extra


def _text(name: str, text: str, **extra) -> dict:
    return {
        "value": {"text": [text]},
        "id": f"t{name}",
        "from_name": name,
        "to_name": "image_a",
        "type": "textarea",
        "origin": "manual",
    } | extra


def _choice(name: str, choice: str) -> dict:
    return {
        "value": {"choices": [choice]},
        "id": f"c{name}",
        "from_name": name,
        "to_name": "image_a",
        "type": "choices",
        "origin": "manual",
    }


def _annotation(result: list[dict], *, by=7, cancelled=False, annotation_id=1001) -> dict:
    return {
        "id": annotation_id,
        "completed_by": by,
        "result": result,
        "was_cancelled": cancelled,
        "ground_truth": False,
        "created_at": "2024-05-02T09:14:03.112871Z",
        "updated_at": "2024-05-02T09:14:03.112890Z",
        "draft_created_at": None,
        "lead_time": 41.2,
        "prediction": {},
        "result_count": 0,
        "unique_id": "a5b1c2d3-0000-4000-8000-000000000000",
        "import_id": None,
        "last_action": None,
        "task": 12,
        "project": 3,
        "updated_by": by if isinstance(by, int) else None,
        "parent_prediction": None,
        "parent_annotation": None,
        "last_created_by": None,
    }


def _task(annotations: list[dict], *, task_id=12, data=None) -> dict:
    return {
        "id": task_id,
        "annotations": annotations,
        "file_upload": "1a2b3c4d-car_a.png",
        "drafts": [],
        "predictions": [],
        "data": data
        or {
            "image_a": "/data/upload/3/1a2b3c4d-car_a.png",
            "image_b": "/data/upload/3/5e6f7a8b-car_b.png",
        },
        "meta": {},
        "created_at": "2024-05-02T09:10:00.000000Z",
        "updated_at": "2024-05-02T09:14:03.200000Z",
        "inner_id": 1,
        "total_annotations": len(annotations),
        "cancelled_annotations": 0,
        "total_predictions": 0,
        "comment_count": 0,
        "unresolved_comment_count": 0,
        "last_comment_updated_at": None,
        "project": 3,
        "updated_by": 7,
        "comment_authors": [],
    }


def _export(*tasks: dict) -> bytes:
    return json.dumps(list(tasks)).encode()


CAR_RESULT = [
    _box("a", 12.5, 25, 25, 10),
    _box("b", 50, 50, 12.5, 20, size=(800, 600)),
    _text("description", "The car changed from white to dark blue."),
    _text("entity_a", "car"),
    _text("entity_b", "car", to_name="image_b"),
    _choice("tier", "good"),
]


def test_parse_converts_percent_to_pixels_of_each_image():
    tasks, errors = parse_export(_export(_task([_annotation(CAR_RESULT)])))

    assert errors == []
    [task] = tasks
    assert (task.task_id, task.image_a, task.image_b, task.line) == (
        12,
        "/data/upload/3/1a2b3c4d-car_a.png",
        "/data/upload/3/5e6f7a8b-car_b.png",
        1,
    )
    # A is 640×480: 12.5% → 80, 25% → 120, +25% → 240, +10% → 168.
    # B is 800×600: 50% → 400, 50% → 300, +12.5% → 500, +20% → 420.
    assert task.annotations == [
        LSAnnotation(
            annotator="7",
            tier="good",
            changes=[
                {
                    "category": "attribute",
                    "description": "The car changed from white to dark blue.",
                    "entity_a": "car",
                    "entity_b": "car",
                    "boxes_a": [[80.0, 120.0, 240.0, 168.0]],
                    "boxes_b": [[400.0, 300.0, 500.0, 420.0]],
                }
            ],
            annotation_id=1001,
            time_spent_ms=41_200,
        )
    ]


@pytest.mark.parametrize(
    ("completed_by", "key"),
    [
        (7, "7"),
        (
            {"id": 7, "email": "Ann@Example.com", "first_name": "Ann", "last_name": ""},
            "ann@example.com",
        ),
        ({"id": 9, "first_name": "", "last_name": ""}, "9"),
    ],
)
def test_annotator_key_from_completed_by_as_id_or_user_object(completed_by, key):
    tasks, errors = parse_export(_export(_task([_annotation(CAR_RESULT, by=completed_by)])))

    assert errors == [] and tasks[0].annotations[0].annotator == key


def test_cancelled_annotations_are_skipped():
    annotations = [
        _annotation([], by=3, cancelled=True, annotation_id=1),
        _annotation(CAR_RESULT, by=4, annotation_id=2),
    ]

    tasks, errors = parse_export(_export(_task(annotations)))

    assert errors == []
    assert [a.annotator for a in tasks[0].annotations] == ["4"]


def test_tier_defaults_to_excellent_and_category_may_come_from_choices():
    result = [
        _box("a", 10, 10, 20, 20, label=None, type="rectangle"),
        _text("description", "A mug appeared."),
        _choice("category", "object"),
    ]

    tasks, errors = parse_export(_export(_task([_annotation(result)])))

    assert errors == []
    [annotation] = tasks[0].annotations
    assert annotation.tier == "excellent"
    assert annotation.changes[0]["category"] == "object"
    assert annotation.changes[0]["boxes_b"] == []


def test_rotated_box_is_refused_per_project_setting_for_that_annotation_only():
    rotated = [_box("a", 10, 10, 20, 20, value={"rotation": 15}), _text("description", "x")]
    annotations = [_annotation(rotated, by=3, annotation_id=5), _annotation(CAR_RESULT, by=4)]

    options = ReadOptions(rotated=Rotated.REFUSE)
    tasks, errors = parse_export(_export(_task(annotations)), options)

    assert [a.annotator for a in tasks[0].annotations] == ["4"]
    [error] = errors
    assert (error.line, error.external_id) == (1, "12")
    assert error.message.startswith("annotation 5 by Label Studio user 3:")
    assert "rotated (15°)" in error.message


def test_polygons_cannot_be_imported():
    polygon = {"type": "polygonlabels", "to_name": "image_a", "value": {"points": [[1, 2]]}}

    _, errors = parse_export(_export(_task([_annotation([polygon])])))

    assert "polygonlabels regions cannot be imported" in errors[0].message


def test_task_without_two_images_is_a_row_error_and_the_rest_is_read():
    bad = _task([], task_id=13, data={"image": "/data/upload/3/1a2b3c4d-car_a.png"})

    tasks, errors = parse_export(_export(_task([]), bad))

    assert [t.task_id for t in tasks] == [12]
    [error] = errors
    assert (error.line, error.external_id) == (2, "13")
    assert "needs two images" in error.message and "image" in error.message


def test_other_image_keys_are_taken_in_order():
    data = {
        "title": "street",
        "before": "s3://bucket/pairs/street_before.jpg",
        "after": "https://cdn.example.com/street_after.jpg?X-Amz-Signature=ab12",
        "thumbnail": "https://cdn.example.com/thumb.png",
    }

    tasks, _ = parse_export(_export(_task([], data=data)))

    assert (tasks[0].image_a, tasks[0].image_b) == (data["before"], data["after"])
    assert tasks[0].metadata["title"] == "street"


def test_linked_results_make_one_change_each():
    result = [
        _box("a", 10, 10, 10, 10, id="c1"),
        _box("b", 10, 10, 10, 10, id="c1-b", parentID="c1"),
        _text("description", "The cup turned red.", id="c1"),
        _box("a", 50, 50, 10, 10, label="object", id="c2"),
        _text("description", "The lamp was removed.", id="c2"),
        _text("entity_a", "lamp", id="c2"),
    ]

    tasks, errors = parse_export(_export(_task([_annotation(result)])))

    assert errors == []
    changes = tasks[0].annotations[0].changes
    assert [(c["category"], c["description"], c["entity_a"]) for c in changes] == [
        ("attribute", "The cup turned red.", ""),
        ("object", "The lamp was removed.", "lamp"),
    ]
    assert [(len(c["boxes_a"]), len(c["boxes_b"])) for c in changes] == [(1, 1), (1, 0)]


def test_unlinked_rectangles_make_one_change_with_entities_from_region_meta():
    result = [
        _box("a", 10, 10, 10, 10, meta={"text": ["mug"]}),
        _box("a", 30, 10, 10, 10),
        _box("b", 10, 10, 10, 10, meta={"text": ["cup"]}),
        _text("description", "The mugs became a cup."),
    ]

    tasks, errors = parse_export(_export(_task([_annotation(result)])))

    assert errors == []
    [change] = tasks[0].annotations[0].changes
    assert (change["entity_a"], change["entity_b"]) == ("mug", "cup")
    assert (len(change["boxes_a"]), len(change["boxes_b"])) == (2, 1)


def test_boxes_of_one_change_with_different_labels_are_an_error():
    result = [_box("a", 10, 10, 10, 10), _box("b", 10, 10, 10, 10, label="object")]

    _, errors = parse_export(_export(_task([_annotation(result)])))

    assert "different labels: attribute, object" in errors[0].message


def test_two_annotations_by_the_same_user_keep_the_first():
    annotations = [
        _annotation(CAR_RESULT, annotation_id=1),
        _annotation(CAR_RESULT, annotation_id=2),
    ]

    tasks, errors = parse_export(_export(_task(annotations)))

    assert [a.annotation_id for a in tasks[0].annotations] == [1]
    assert "second annotation by the same user" in errors[0].message


def test_real_sizes_convert_boxes_when_the_export_gives_none():
    result = [_box("a", 25, 50, 50, 25, size=(None, None)), _text("description", "x")]
    export = _export(_task([_annotation(result)]))

    _, parse_errors = parse_export(export)
    [task], read_errors = read_export(export)
    task, errors = task_in_frames(task, Frame(96, 64), Frame(96, 64))

    assert "does not give the size of image A" in parse_errors[0].message
    assert read_errors == [] and errors == []
    assert task.annotations[0].changes[0]["boxes_a"] == [[24.0, 32.0, 72.0, 48.0]]


def test_real_size_other_than_the_declared_one_is_an_error():
    [task], _ = read_export(_export(_task([_annotation(CAR_RESULT)])))

    task, errors = task_in_frames(task, Frame(320, 240), Frame(800, 600))

    assert task.annotations == []
    assert "image A is 320×240, but the box was drawn on a 640×480 image" in errors[0].message


def test_box_outside_the_image_is_an_error():
    result = [_box("a", 90, 10, 20, 10), _text("description", "x")]

    _, errors = parse_export(_export(_task([_annotation(result)])))

    assert "box on image A" in errors[0].message and "outside" in errors[0].message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe[", "not UTF-8"),
        (b"image_a,image_b\na.png,b.png\n", "not JSON"),
        (b'{"data": {}}', "list of tasks"),
        (b"[]", "no tasks"),
        (b'[{"image_a": "a.png", "image_b": "b.png", "box_a": []}]', "JSON-MIN"),
    ],
)
def test_input_that_is_no_label_studio_export_is_unusable(data, message):
    with pytest.raises(LSUnusable, match=message):
        parse_export(data)


def test_as_answer_rounds_boxes_half_up_to_whole_pixels():
    change = {
        "category": "attribute",
        "description": "d",
        "entity_a": "a",
        "entity_b": "",
        "boxes_a": [[10.5, 0.4999, 20.499999999999996, 30.0000001]],
        "boxes_b": [],
    }

    body = LSAnnotation("7", "good", [change], time_spent_ms=5).as_answer()

    assert body == {
        "tier": "good",
        "defects": [],
        "time_spent_ms": 5,
        "changes": [{**change, "boxes_a": [[11, 0, 21, 30]]}],
    }


# Finding images ------------------------------------------------------------------------------


NAMES = ["images/12_a.png", "uploads/car_a.png", "car_b.png", "x/dup.png", "y/dup.png"]


@pytest.mark.parametrize(
    ("reference", "found"),
    [
        ("images/12_a.png", "images/12_a.png"),
        ("/data/upload/3/1a2b3c4d-car_a.png", "uploads/car_a.png"),
        ("s3://bucket/some/prefix/car_b.png", "car_b.png"),
        ("http://localhost:8080/data/upload/3/car_b.png?token=x&y=z", "car_b.png"),
        ("/data/local-files/?d=photos/car_a.png", "uploads/car_a.png"),
        ("/data/upload/3/car%5Fb.png", "car_b.png"),
    ],
)
def test_image_finder_matches_label_studio_references(reference, found):
    assert ImageFinder(NAMES).find(reference) == found


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("/data/upload/3/1a2b3c4d-bus.png", "no file named 1a2b3c4d-bus.png or bus.png"),
        ("https://example.com/dup.png", "several files match dup.png"),
        ("/data/upload/3/../../etc/passwd", "no file named passwd"),
    ],
)
def test_image_finder_names_what_it_could_not_find(reference, message):
    with pytest.raises(ImageNotFound, match=message):
        ImageFinder(NAMES).find(reference)


# Export and round trip -----------------------------------------------------------------------


def _record(changes: list[dict], size_a=(640, 480), size_b=(800, 600)) -> dict:
    first = changes[0]
    return {
        "id": "cars-000012",
        "pair_id": 12,
        "split": "test",
        "image_a": "images/12_a.png",
        "image_b": "images/12_b.jpg",
        "size_a": list(size_a),
        "size_b": list(size_b),
        "category": first["category"],
        "difficulty": "hard",
        "description": first["description"],
        "entities": [first["entity_a"], first["entity_b"]],
        "boxes_a": [],
        "boxes_b": [],
        "boxes_a_px": first["boxes_a_px"],
        "boxes_b_px": first["boxes_b_px"],
        "anchors": "",
        "changes": changes,
        "agreement": {},
        "source": {},
    }


def _change(boxes_a, boxes_b, category="attribute", entity_a="car", entity_b="car") -> dict:
    return {
        "category": category,
        "description": f"Something about the {entity_a or entity_b}.",
        "entity_a": entity_a,
        "entity_b": entity_b,
        "boxes_a": [],
        "boxes_b": [],
        "boxes_a_px": boxes_a,
        "boxes_b_px": boxes_b,
        "anchors": "",
    }


def _submitted(change: dict) -> dict:
    keys = ("category", "description", "entity_a", "entity_b")
    return {k: change[k] for k in keys} | {
        "boxes_a": change["boxes_a_px"],
        "boxes_b": change["boxes_b_px"],
    }


def _assert_same_change(got: dict, want: dict) -> None:
    texts = ("category", "description", "entity_a", "entity_b")
    assert {k: got[k] for k in texts} == {k: want[k] for k in texts}
    for side in ("boxes_a", "boxes_b"):
        assert len(got[side]) == len(want[side])
        for box, expected in zip(got[side], want[side], strict=True):
            assert box == pytest.approx(expected, abs=1e-6)


def test_release_task_has_label_studio_shape():
    record = _record([_change([[64, 48, 128, 96]], [[0, 0, 800, 600]])])

    [task] = release_tasks([record])

    assert task["id"] == 1
    assert task["data"] == {
        "image_a": "images/12_a.png",
        "image_b": "images/12_b.jpg",
        "pair_id": 12,
        "split": "test",
        "record_id": "cars-000012",
    }
    [annotation] = task["annotations"]
    box_a, box_b, *texts, tier = annotation["result"]
    assert box_a == {
        "id": "change-1",
        "from_name": "box_a",
        "to_name": "image_a",
        "type": "rectanglelabels",
        "original_width": 640,
        "original_height": 480,
        "image_rotation": 0,
        "value": {
            "x": 10.0,
            "y": 10.0,
            "width": 10.0,
            "height": 10.0,
            "rotation": 0,
            "rectanglelabels": ["attribute"],
        },
    }
    assert (box_b["id"], box_b["parentID"], box_b["to_name"]) == (
        "change-1-b1",
        "change-1",
        "image_b",
    )
    assert box_b["value"] == {
        "x": 0.0,
        "y": 0.0,
        "width": 100.0,
        "height": 100.0,
        "rotation": 0,
        "rectanglelabels": ["attribute"],
    }
    assert [(t["from_name"], t["id"], t["value"]["text"]) for t in texts] == [
        ("description", "change-1", ["Something about the car."]),
        ("entity_a", "change-1", ["car"]),
        ("entity_b", "change-1", ["car"]),
    ]
    assert (tier["from_name"], tier["type"], tier["value"]) == (
        "tier",
        "choices",
        {"choices": ["excellent"]},
    )


def test_release_round_trip_keeps_every_change_and_box():
    changes = [
        _change([[64, 48, 128, 96], [0, 0, 10, 10]], [[65.5, 47.5, 130, 97]]),
        _change([], [[700, 500, 800, 600]], category="object", entity_a=""),
        _change([[1, 2, 3, 4]], [], category="object", entity_a="lamp", entity_b=""),
    ]

    tasks, errors = parse_export(json.dumps(release_tasks([_record(changes)])).encode())

    assert errors == []
    [annotation] = tasks[0].annotations
    assert (annotation.tier, annotation.annotator) == ("excellent", "")
    assert len(annotation.changes) == len(changes)
    for got, change in zip(annotation.changes, changes, strict=True):
        _assert_same_change(got, _submitted(change))


def test_label_config_is_xml_naming_what_the_export_writes():
    root = ET.fromstring(label_config(["attribute", 'a "quoted" <one>']))

    names = {tag.get("name"): tag for tag in root.iter() if tag.get("name")}
    assert {
        "image_a",
        "image_b",
        "box_a",
        "box_b",
        "description",
        "entity_a",
        "entity_b",
        "tier",
    } <= set(names)
    assert [label.get("value") for label in names["box_b"]] == ["attribute", 'a "quoted" <one>']
    assert [c.get("value") for c in names["tier"]] == ["excellent", "good", "fair", "poor"]
    assert names["box_a"].get("toName") == "image_a" and names["box_b"].get("toName") == "image_b"
    mincu = {label.get("value") for label in ET.fromstring(LABEL_CONFIG).iter("Label")}
    assert mincu == {"attribute", "object", "counting", "relation"}


@st.composite
def sides(draw: st.DrawFn) -> tuple[Frame, list[list[float]]]:
    """A frame and 0–3 boxes in it, coordinates often on the image edge.

    Boxes are at least 1/1000 pixel wide: thinner ones vanish in the percent conversion.
    """
    frame = Frame(draw(st.integers(1, 4000)), draw(st.integers(1, 4000)))
    boxes = []
    for _ in range(draw(st.integers(0, 3))):
        coords = []
        for limit in (frame.width, frame.height):
            edge = st.sampled_from([0.0, float(limit)])
            inner = st.floats(0, limit, allow_nan=False)
            pair = draw(st.lists(st.one_of(edge, inner), min_size=2, max_size=2, unique=True))
            coords.append(sorted(pair))
        (x1, x2), (y1, y2) = coords
        assume(x2 - x1 >= 1e-3 and y2 - y1 >= 1e-3)
        boxes.append([x1, y1, x2, y2])
    return frame, boxes


@given(side_a=sides(), side_b=sides())
def test_release_round_trip_gives_back_pixel_boxes(side_a, side_b):
    (frame_a, boxes_a), (frame_b, boxes_b) = side_a, side_b
    assume(boxes_a or boxes_b)
    record = _record(
        [_change(boxes_a, boxes_b)],
        size_a=(frame_a.width, frame_a.height),
        size_b=(frame_b.width, frame_b.height),
    )

    tasks, errors = parse_export(json.dumps(release_tasks([record])).encode())

    assert errors == []
    [change] = tasks[0].annotations[0].changes
    _assert_same_change(change, _submitted(record["changes"][0]))
