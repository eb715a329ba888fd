"""On PostgreSQL the hot path's own statements are prepared once per connection (config.rows):
the server parses and plans a token lookup or a submit's INSERT once, not on every request. The
lease is the exception: its best plan depends on the project and the state of its queue."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.services import token_create
from config import rows
from tests.factories import answer, make_pair

pytestmark = pytest.mark.postgres  # deselected on SQLite


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='p')[1]}")
    return client


def test_next_and_submit_prepare_their_statements_but_not_the_lease(project, annotator_1):
    make_pair(project)
    client = _client(annotator_1)

    lease = client.post(f"/api/v1/projects/{project.slug}/next/")
    assignment = lease.json()["assignment"]["id"]
    submitted = client.post(f"/api/v1/assignments/{assignment}/submit/", answer(), format="json")

    assert lease.status_code == 200 and submitted.status_code == 201
    prepared = _prepared()
    assert any('FROM "accounts_apitoken"' in s for s in prepared)  # token → user
    assert any(s.startswith('INSERT INTO "annotator_annotation"') for s in prepared)
    assert not any('WITH "taken"' in s for s in prepared)  # the lease, planned for its values


def _round(client, slug: str) -> None:
    lease = client.post(f"/api/v1/projects/{slug}/next/")
    assignment = lease.json()["assignment"]["id"]
    submitted = client.post(f"/api/v1/assignments/{assignment}/submit/", answer(), format="json")
    assert submitted.status_code == 201


def test_a_prepared_statement_is_reused_not_prepared_again(project, annotator_1):
    for _ in range(3):
        make_pair(project)
    client = _client(annotator_1)
    _round(client, project.slug)
    after_one = _prepared()

    _round(client, project.slug)
    _round(client, project.slug)

    assert sorted(_prepared()) == sorted(after_one)


def test_the_query_log_shows_prepared_statements_with_their_values(project, annotator_1):
    with CaptureQueriesContext(connection) as queries:
        rows.fetchone("SELECT %s::int + 1, %s::text", [41, "it's"])

    assert queries.captured_queries[-1]["sql"] == "SELECT 41::int + 1, 'it''s'::text"


def test_switched_off_nothing_is_prepared(project, annotator_1, settings):
    settings.DATABASE_PREPARED_STATEMENTS = False
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")  # none left from earlier tests on this connection
    make_pair(project)

    lease = _client(annotator_1).post(f"/api/v1/projects/{project.slug}/next/")

    assert lease.status_code == 200
    assert _prepared() == []
