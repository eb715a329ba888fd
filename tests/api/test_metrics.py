"""GET /api/v1/projects/{slug}/agreement/: the dashboard's figures over REST, leads only."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tests.conftest import PASSWORD
from tests.review.test_dashboard import seed

URL = "/api/v1/projects/cars/agreement/"


def _client(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_a_lead_gets_the_figures_of_the_dashboard(
    project, lead, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    seed(project, annotator_1, annotator_2, django_capture_on_commit_callbacks)

    response = _client(lead).get(URL)

    assert response.status_code == 200
    body = response.json()
    figures = {k: body.pop(k) for k in ("kappa", "alpha", "mean_iou", "agreement_rate")}
    assert figures == pytest.approx(
        {"kappa": 28 / 33, "alpha": 11 / 15, "mean_iou": 219 / 238, "agreement_rate": 0.2}
    )
    people = body.pop("annotators")
    assert body == {
        "project": "cars",
        "pairs": 6,
        "gold_pairs": 1,
        "status_counts": {
            "imported": 1,
            "pre_annotated": 0,
            "in_annotation": 0,
            "accepted": 1,
            "disputed": 3,
            "rejected": 1,
            "screened_out": 0,
        },
        "cross_checked": 5,
        "verdicts": {"accepted": 1, "disputed": 3, "rejected": 1},
        "reasons": {"category": 2, "tiers": 2, "missing change": 1},
        "tiers": {
            "keys": ["excellent", "good", "fair", "poor"],
            "labels": ["Excellent", "Good", "Fair", "Poor"],
            "counts": [[3, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]],
        },
        "categories": {
            "keys": ["attribute", "object", "counting", "relation"],
            "labels": ["Attribute", "Object", "Counting", "Relation"],
            "counts": [[2, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
        },
        "unmatched_changes": 1,
        "difficulty": {"easy": 0, "medium": 0, "hard": 1},
        "without_boxes": 0,
    }
    first, second = people
    assert first == {
        "id": annotator_1.pk,
        "username": "annotator_1",
        "pairs": 5,
        "timed": 5,
        "median_time_ms": 30000.0,
        "mean_time_ms": 32000.0,
        "cross_checked": 5,
        "accepted": 1,
        "agreement_rate": 0.2,
        "gold_answered": 1,
        "gold_passed": 0,
        "gold_accuracy": 0.0,
        "gold_mean_score": pytest.approx(2 / 3),
    }
    assert (second["username"], second["timed"], second["median_time_ms"]) == (
        "annotator_2",
        4,
        10000.0,
    )
    assert (second["gold_accuracy"], second["gold_mean_score"]) == (
        1.0,
        pytest.approx((81 / 119 + 2) / 3),
    )


def test_a_new_project_answers_with_empty_figures(project, lead):
    body = _client(lead).get(URL).json()

    assert (body["pairs"], body["cross_checked"], body["annotators"]) == (0, 0, [])
    assert [body[k] for k in ("agreement_rate", "kappa", "alpha", "mean_iou")] == [None] * 4
    assert body["tiers"]["counts"] == [[0] * 4] * 4


def test_the_query_count_is_pinned(
    project,
    lead,
    annotator_1,
    annotator_2,
    django_capture_on_commit_callbacks,
    django_assert_num_queries,
):
    seed(project, annotator_1, annotator_2, django_capture_on_commit_callbacks)
    client = _client(lead)

    # project with the role, eight figures (drafts kept), stored pair counts (none: small)
    with django_assert_num_queries(10):
        response = client.get(URL)

    assert response.status_code == 200


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        ("annotator_1", 403, "permission_denied"),
        ("researcher", 403, "permission_denied"),
        ("outsider", 404, "not_found"),
    ],
)
def test_only_leads_get_agreement_metrics(project, request, who, status, code):
    response = _client(request.getfixturevalue(who)).get(URL)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]


def test_anonymous_callers_must_authenticate(project):
    response = _client().get(URL)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_an_unknown_project_is_not_found(lead):
    response = _client(lead).get("/api/v1/projects/nope/agreement/")

    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_an_admin_gets_any_project(project):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)

    response = _client(admin).get(URL)

    assert response.status_code == 200 and response.json()["project"] == "cars"


def test_a_token_works_too(project, lead):
    token = _client().post(
        "/api/v1/auth/token/", {"username": "lead", "password": PASSWORD}, format="json"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")

    assert client.get(URL).status_code == 200


def test_the_schema_describes_the_response(project, lead):
    schema = _client(lead).get("/api/v1/schema/?format=json").json()

    operation = schema["paths"]["/api/v1/projects/{slug}/agreement/"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    fields = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
    assert {"kappa", "alpha", "mean_iou", "agreement_rate", "annotators"} <= set(fields)
