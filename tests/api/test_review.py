import pytest
from rest_framework.test import APIClient


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_disputes_list_says_why(disputed, lead):
    response = _client(lead).get("/api/v1/projects/cars/disputes/")

    assert response.status_code == 200
    [row] = response.json()["results"]
    assert row["id"] == disputed.pk and row["annotators"] == ["annotator_1", "annotator_2"]
    assert "change[0].side_b.iou_below_threshold" in [r["code"] for r in row["reasons"]]


def test_a_lead_resolves_a_dispute_over_rest(disputed, lead):
    response = _client(lead).post(
        f"/api/v1/pairs/{disputed.pk}/resolution/",
        {"decision": "reject", "reason": "two changes in one", "comment": "see guidelines"},
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    assert body["pair"] == {"id": disputed.pk, "status": "rejected"}
    assert body["resolution"]["lead"] == "lead" and body["resolution"]["reason"]


def test_resolution_errors_name_the_fields(disputed, lead):
    response = _client(lead).post(
        f"/api/v1/pairs/{disputed.pk}/resolution/", {"decision": "reject"}, format="json"
    )
    assert response.status_code == 400 and "reason" in response.json()["error"]["fields"]


@pytest.mark.parametrize("who", ["annotator_1", "researcher"])
def test_only_leads_see_disputes_and_decide(disputed, request, who):
    client = _client(request.getfixturevalue(who))
    assert client.get("/api/v1/projects/cars/disputes/").status_code == 403
    response = client.post(
        f"/api/v1/pairs/{disputed.pk}/resolution/", {"decision": "accept_1"}, format="json"
    )
    assert response.status_code == 403
