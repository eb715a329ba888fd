"""Exports made by a real Label Studio 1.23.2 (tests/fixtures/labelstudio/make_fixtures.py)."""

import json
from pathlib import Path

import pytest

from pairdiff.labelstudio.mapping import parse_value_map
from pairdiff.labelstudio.read import (
    LSUnusable,
    ReadOptions,
    load_export,
    parse_export,
    resolve_mapping,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
MAPPINGS = {"mincu": "mapping.yaml", "vdiff": "mapping.json"}


def _read(name: str, *, config: bool = True):
    folder = FIXTURES / name
    export = (folder / "export.json").read_bytes()
    values = parse_value_map((folder / MAPPINGS[name]).read_bytes())
    xml = (folder / "label_config.xml").read_bytes() if config else None
    mapping = resolve_mapping(load_export(export), xml, values)
    tasks, errors = parse_export(export, ReadOptions(mapping, values))
    expected = json.loads((folder / "expected.json").read_text())
    return mapping, tasks, errors, expected


def test_fixtures_were_made_by_label_studio_1_23_2():
    assert json.loads((FIXTURES / "VERSION.json").read_text()) == {"label-studio": "1.23.2"}


def test_issue_config_maps_tags_a_b_to_image_a_image_b_and_every_field():
    mapping, tasks, errors, expected = _read("mincu")

    assert errors == []
    assert mapping.images == (("a", "image_a"), ("b", "image_b"))
    assert dict(mapping.boxes) == {"box_a": "a", "box_b": "b"}
    assert dict(mapping.fields) == {
        "desc": "description",
        "entities": "entities",
        "category": "category",
        "quality": "tier",
        "empty_side": "absent_side",
    }
    by_task = {t.task_id: t for t in tasks}
    assert [len(by_task[e["task"]].annotations) for e in expected] == [2, 2, 2, 2]
    for want in expected:
        for annotation in by_task[want["task"]].annotations:
            [change] = annotation.as_answer()["changes"]
            # Every box on the side it was drawn on, at the pixels it was drawn at.
            assert (change["boxes_a"], change["boxes_b"]) == (want["boxes_a"], want["boxes_b"])
    coffee, cat, rocket, astronaut = (by_task[e["task"]].annotations[0] for e in expected)
    assert [a.tier for a in (coffee, cat, rocket, astronaut)] == [
        "excellent",
        "excellent",
        "good",
        "good",
    ]
    assert [a.changes[0]["category"] for a in (coffee, cat, rocket, astronaut)] == [
        "attribute",
        "object",
        "object",
        "attribute",
    ]
    # "A empty (added)": no entity on A; "suit | spacesuit" split on the separator.
    assert [(a.changes[0]["entity_a"], a.changes[0]["entity_b"]) for a in (cat, astronaut)] == [
        ("", "box"),
        ("suit", "spacesuit"),
    ]
    assert {a.annotator for t in tasks for a in t.annotations} == {
        str(a["completed_by"])
        for t in load_export((FIXTURES / "mincu/export.json").read_bytes())
        for a in t["annotations"]
    }


def test_prediction_becomes_a_prediction_named_by_its_model_version():
    _, tasks, _, expected = _read("mincu")

    first = next(t for t in tasks if t.task_id == expected[0]["task"])
    [prediction] = first.predictions
    assert (prediction.model, prediction.confidence) == ("diffnet-v2", 0.83)
    [change] = prediction.as_answer()["changes"]
    assert (change["boxes_a"], change["boxes_b"]) == ([[28, 20, 70, 52]], [[22, 16, 56, 42]])


def test_second_config_with_other_names_keys_and_reference_styles():
    mapping, tasks, errors, expected = _read("vdiff")

    assert errors == []
    assert mapping.images == (("img1", "before"), ("img2", "after"))
    assert mapping.fields["what"] == "description"  # from the lead's mapping file
    assert (mapping.fields["object_before"], mapping.fields["object_after"]) == (
        "entity_a",
        "entity_b",
    )
    by_task = {t.task_id: t for t in tasks}
    references = [by_task[e["task"]].image_a for e in expected]
    assert [r.split("?")[0].split("//")[0] for r in references] == [
        "/data/local-files/",
        "/data/local-files/",
        "s3:",
        "https:",
    ]
    assert "?X-Amz-Expires=" in references[3]
    for want in expected:
        first, second = by_task[want["task"]].annotations
        for annotation in (first, second):
            got = annotation.as_answer()["changes"]
            assert len(got) == len(want["changes"])
            for change, drawn in zip(got, want["changes"], strict=True):
                assert change["boxes_b"] == drawn["boxes_b"]
                if annotation is first or want is not expected[0]:
                    assert change["boxes_a"] == drawn["boxes_a"]
        assert first.tier == "excellent"


def test_rotated_box_becomes_its_upright_bounds_with_a_note():
    _, tasks, _, expected = _read("vdiff")

    task = next(t for t in tasks if t.task_id == expected[0]["task"])
    upright, rotated = task.annotations
    assert upright.notes == ()
    assert rotated.notes == ("the box on image A was rotated 15°: imported as its upright bounds",)
    # 40×30 px box at (20, 15) rotated 15° about its top-left corner: x from 20 − 30·sin15°
    # = 12.2 to 20 + 40·cos15° = 58.6, y from 15 to 15 + 40·sin15° + 30·cos15° = 54.3.
    assert rotated.as_answer()["changes"][0]["boxes_a"] == [[12, 15, 59, 54]]


def test_without_a_config_the_issue_export_is_inferred_and_says_so():
    mapping, tasks, errors, _ = _read("mincu", config=False)

    assert errors == []
    assert mapping.images == (("a", "image_a"), ("b", "image_b"))
    assert not mapping.from_config
    assert "boxes on 'a' are taken as image A ('image_a'): matched by name" in mapping.notes
    assert sum(len(t.annotations) for t in tasks) == 8


def test_without_a_config_tags_unrelated_to_the_keys_ask_for_it():
    with pytest.raises(LSUnusable, match="give the labelling config"):
        _read("vdiff", config=False)
