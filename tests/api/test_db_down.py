"""A database that is down answers 503 with Retry-After: JSON for the API, a page for people.

The connection is made to fail in-process; tests/integration/test_faults.py restarts a real
PostgreSQL under a running client.
"""

from __future__ import annotations

import sys
from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError, connections
from django.test import RequestFactory
from rest_framework.test import APIClient

from accounts.services import token_create
from api.errors import server_error
from config.middleware import MESSAGE

API_ERROR = {"error": {"code": "unavailable", "message": MESSAGE, "fields": {}}}


@pytest.fixture
def database_down(db):
    """From the call on, every query fails the way a refused or dropped connection does; the
    connection is given back before the test database rolls back."""
    patches = []

    def down(error: type[Exception] = OperationalError) -> None:
        failure = error('connection to server at "127.0.0.1", port 5432 failed')
        patches.append(mock.patch.object(connections["default"], "ensure_connection"))
        patches[-1].start().side_effect = failure

    yield down
    for patch in patches:
        patch.stop()


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_the_api_answers_503_json_with_retry_after(annotator_1, project, database_down, error):
    _, secret = token_create(user=annotator_1)
    client = APIClient(HTTP_AUTHORIZATION=f"Token {secret}")
    database_down(error)

    response = client.post("/api/v1/projects/cars/next/")  # the token lookup hits the database

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == API_ERROR


def test_a_submit_that_loses_the_database_is_503_and_can_be_repeated(
    annotator_1, project, database_down
):
    client = APIClient()
    client.force_authenticate(annotator_1)
    database_down()

    response = client.post(
        "/api/v1/assignments/1/submit/", {}, format="json", HTTP_IDEMPOTENCY_KEY="k1"
    )

    assert (response.status_code, response.json()) == (503, API_ERROR)


def test_a_browser_page_answers_a_plain_503_page(client, annotator_1, database_down):
    client.force_login(annotator_1)
    database_down()

    response = client.get("/")  # the session and the user are read from the database

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response["Content-Type"].startswith("text/html")
    assert b"Back in a moment" in response.content


def test_a_failure_outside_any_view_is_503_too():
    request = RequestFactory().get("/api/v1/projects/")
    try:
        raise OperationalError("the server closed the connection unexpectedly")
    except OperationalError:
        assert sys.exc_info()[0] is OperationalError
        response = server_error(request)  # Django calls handler500 inside its except block
    assert response.status_code == 503 and response["Retry-After"] == "5"


def test_other_server_errors_stay_500():
    request = RequestFactory().get("/api/v1/projects/")
    try:
        raise ValueError("a bug")
    except ValueError:
        response = server_error(request)
    assert response.status_code == 500
