"""The hostile requests of issue 12, one by one: each a 400 with the usual error shape naming
the field (or the body, when the body as a whole is the problem), and nothing stored."""

import json

import pytest
from django.test import Client

from accounts.models import ApiToken
from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Prediction
from tests.conftest import PASSWORD
from tests.factories import answer, make_pair

DEEP = "[" * 100_000 + "]" * 100_000


def _answer_with(raw: str, path: str) -> str:
    """The valid answer with the value at ``path`` (dotted) replaced by raw JSON text."""
    body = answer()
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = body
    for key in parents:
        target = target[key]
    target[last] = "\u2063HOLE\u2063"
    return json.dumps(body, ensure_ascii=False).replace('"\u2063HOLE\u2063"', raw)


SUBMIT_CASES = [
    ('["excellent"]', "tier", "tier"),
    ('{"x": 1}', "tier", "tier"),
    ('["attribute"]', "changes.0.category", "changes.0.category"),
    ('{"a": 1}', "changes.0.category", "changes.0.category"),
    ('"x\\ud800"', "changes.0.description", "changes.0.description"),
    ("1e309", "time_spent_ms", "time_spent_ms"),
    ("NaN", "time_spent_ms", "time_spent_ms"),
    ("Infinity", "changes.0.boxes_a.0.0", "changes.0.boxes_a.0.0"),
    ("9" * 4000, "changes.0.boxes_a.0.2", "changes.0.boxes_a.0.2"),
    (DEEP, "changes.0.entity_a", ""),
]


@pytest.fixture
def annotator_client(annotator_1):
    client = Client()
    client.force_login(annotator_1)
    return client


@pytest.fixture
def lease(project, annotator_1):
    make_pair(project)
    return assignment_lease_next(project=project, user=annotator_1)


def _assert_400(response, field: str) -> None:
    assert response.status_code == 400, response.content[:200]
    error = response.json()["error"]
    assert set(error) == {"code", "message", "fields"} and error["message"]
    if field:  # named: the field, or (nested too deep) the path into it
        assert any(name.startswith(field) for name in error["fields"]), error
    else:
        assert error["fields"] == {} and "nested" in error["message"]


@pytest.mark.parametrize(("raw", "path", "field"), SUBMIT_CASES)
def test_hostile_answers_are_a_400_naming_the_field(annotator_client, lease, raw, path, field):
    body = _answer_with(raw, path)

    submit = annotator_client.post(
        f"/api/v1/assignments/{lease.pk}/submit/", body, "application/json"
    )
    draft = annotator_client.put(f"/api/v1/assignments/{lease.pk}/draft/", body, "application/json")

    _assert_400(submit, field)
    lease.refresh_from_db()
    assert not Annotation.objects.exists() and lease.state == "leased"
    if field.startswith(("tier", "changes.0.category")):  # a draft keeps any JSON as sent
        assert draft.status_code == 200
    else:
        _assert_400(draft, field)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('["blurry"]', "non_field_errors"),
        ('"blurry"', "non_field_errors"),
        ('{"reason": ["x"]}', "reason"),
    ],
)
def test_a_skip_body_that_is_not_an_object_is_a_400(annotator_client, lease, body, field):
    response = annotator_client.post(
        f"/api/v1/assignments/{lease.pk}/skip/", body, "application/json"
    )

    _assert_400(response, field)
    lease.refresh_from_db()
    assert lease.state == "leased"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (DEEP, ""),
        ('{"username": "lead", "password": "\\ud800"}', "password"),
        ('{"username": ' + "[" * 100 + "]" * 100 + ', "password": "x"}', "username"),
    ],
)
def test_the_anonymous_token_endpoint_refuses_hostile_json(client, lead, body, field):
    response = client.post("/api/v1/auth/token/", body, "application/json")

    _assert_400(response, field)
    assert not ApiToken.objects.exists()
    good = json.dumps({"username": "lead", "password": PASSWORD})
    assert client.post("/api/v1/auth/token/", good, "application/json").status_code == 201


def test_prediction_flags_holding_objects_are_a_row_error(client, project, lead):
    pair = make_pair(project)
    client.force_login(lead)
    row = {"pair": pair.pk, "model": "m", "flags": [{"a": 1}], "changes": answer()["changes"]}

    response = client.post(
        f"/api/v1/projects/{project.slug}/predictions/",
        json.dumps({"predictions": [row]}),
        "application/json",
    )

    assert response.status_code == 200
    [error] = response.json()["errors"]
    assert response.json()["imported"] == 0 and error["line"] == 1
    assert error["message"].startswith("flags: a list of ")
    assert not Prediction.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "/review/cars/disputes/?category=%00",
        "/review/cars/disputes/?annotator=a%00&reason=x",
        "/p/cars/?status=%00",
        "/api/v1/projects/cars/disputes/?reason=%00",
    ],
)
def test_nul_in_a_filter_is_a_400_naming_it(client, project, lead, url):
    client.force_login(lead)

    response = client.get(url)

    assert response.status_code == 400
    if url.startswith("/api/"):
        assert list(response.json()["error"]["fields"]) == ["reason"]
    else:
        assert "may not contain NUL" in response.content.decode()
