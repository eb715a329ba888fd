"""Without a broker, the cross-check a submit triggers runs after the response is made, before
the server closes it: the annotator is answered first, the verdict is there all the same."""

from __future__ import annotations

import pytest
from django.test.client import ClientHandler
from rest_framework.test import APIClient

from accounts.services import token_create
from review.models import Agreement
from tests.conftest import member
from tests.factories import answer, make_pair

# Real commits: the on-commit work fires inside the request, as it does when served.
pytestmark = pytest.mark.django_db(transaction=True)


class NotingHandler(ClientHandler):
    """Notes whether the pair had its agreement when the response was ready to be written."""

    agreed_when_answered: bool | None = None

    def get_response(self, request):
        response = super().get_response(request)
        self.agreed_when_answered = Agreement.objects.exists()
        return response


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")
    client.handler = NotingHandler()
    return client


def _lease_and_submit(client, key: str):
    assignment = client.post("/api/v1/projects/cars/next/").json()["assignment"]["id"]
    return client.post(
        f"/api/v1/assignments/{assignment}/submit/",
        answer(),
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def test_the_cross_check_runs_after_the_response_and_before_the_client_returns(project):
    pair = make_pair(project)  # overlap 2: the second submit completes the pair
    first = _client(member(project, "annotator_1", "annotator"))
    second = _client(member(project, "annotator_2", "annotator"))
    assert _lease_and_submit(first, "one").status_code == 201

    response = _lease_and_submit(second, "two")

    assert response.status_code == 201
    assert second.handler.agreed_when_answered is False
    assert Agreement.objects.get(pair=pair).status == "accepted"  # done in the response's close()
    pair.refresh_from_db()
    assert pair.status == "accepted"
