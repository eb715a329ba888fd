import pytest

from pairdiff.answers import AnswerInvalid, AnswerRules, parse_answer
from pairdiff.geometry import Frame

RULES = AnswerRules(
    frame_a=Frame(640, 480),
    frame_b=Frame(320, 240),
    categories=frozenset({"attribute", "object"}),
    defects=frozenset({"artefacts", "no_visible_change"}),
)


def _body(**change):
    base = {
        "category": "attribute",
        "description": "The car changed from white to dark blue.",
        "entity_a": "car",
        "entity_b": "car",
        "boxes_a": [[125, 130, 228, 183]],
        "boxes_b": [[62, 65, 114, 91]],
    }
    return {"tier": "excellent", "defects": [], "time_spent_ms": 41200, "changes": [base | change]}


def _fields(body) -> dict:
    with pytest.raises(AnswerInvalid) as exc:
        parse_answer(body, RULES)
    return exc.value.fields


def test_a_valid_answer_round_trips_to_json():
    answer = parse_answer(_body(), RULES)
    assert answer.as_json() == _body()


@pytest.mark.parametrize(
    ("change", "path", "fragment"),
    [
        ({"category": "weather"}, "changes.0.category", "taxonomy"),
        ({"description": "   "}, "changes.0.description", "one sentence"),
        ({"entity_a": ""}, "changes.0.entity_a", "name what"),
        ({"boxes_a": [[0, 0, 641, 10]]}, "changes.0.boxes_a.0", "640×480"),
        ({"boxes_b": [[0, 0, 321, 10]]}, "changes.0.boxes_b.0", "320×240"),
        ({"boxes_a": [[10, 10, 5, 20]]}, "changes.0.boxes_a.0", "x1 must be less than x2"),
        ({"boxes_a": [[1.5, 1, 5, 20]]}, "changes.0.boxes_a.0", "whole pixels"),
        ({"boxes_a": [[1, 1, 5]]}, "changes.0.boxes_a.0", "4 numbers"),
        ({"boxes_a": "[1,2,3,4]"}, "changes.0.boxes_a", "list of boxes"),
        ({"boxes_a": [], "boxes_b": []}, "changes.0.boxes_a", "at least one side"),
        ({"entity_b": "x" * 201}, "changes.0.entity_b", "200 characters"),
    ],
)
def test_a_bad_change_is_reported_at_its_path(change, path, fragment):
    fields = _fields(_body(**change))
    assert list(fields) == [path]
    assert fragment in fields[path][0]


@pytest.mark.parametrize(
    ("top", "path"),
    [
        ({"tier": "superb"}, "tier"),
        ({"tier": None}, "tier"),
        ({"defects": ["smudge"]}, "defects"),
        ({"defects": "artefacts"}, "defects"),
        ({"time_spent_ms": -1}, "time_spent_ms"),
        ({"time_spent_ms": True}, "time_spent_ms"),
        ({"changes": {}}, "changes"),
        ({"changes": [{}] * 21}, "changes"),
        ({"changes": []}, "changes"),
    ],
)
def test_a_bad_top_level_field_is_reported(top, path):
    assert path in _fields(_body() | top)


def test_every_problem_is_reported_at_once():
    fields = _fields(_body(category="x", description="") | {"tier": "y"})
    assert set(fields) == {"tier", "changes.0.category", "changes.0.description"}


def test_an_absent_side_needs_no_entity():
    answer = parse_answer(_body(boxes_b=[], entity_b=""), RULES)
    assert answer.changes[0].boxes_b == ()


def test_a_fair_pair_may_have_no_change():
    answer = parse_answer({"tier": "fair", "defects": ["no_visible_change"], "changes": []}, RULES)
    assert answer.changes == () and answer.defects == ("no_visible_change",)


def test_whitespace_in_text_is_folded():
    answer = parse_answer(_body(description="  The car\n turned   blue. "), RULES)
    assert answer.changes[0].description == "The car turned blue."


def test_a_body_that_is_not_an_object_is_refused():
    assert _fields(["tier"]) == {"": ["the answer must be a JSON object"]}
