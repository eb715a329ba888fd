"""The database statements of the annotator's hot endpoints, pinned.

Each figure counts every statement the request sends, as a real client causes it: token
authentication (not force_authenticate), the view, the services, savepoints, and the review work
that runs in the request when no broker is configured (on-commit callbacks executed). Issue #17
lowered them (next 19 → 7, 5 on PostgreSQL; resume 7 → 3; submit 13 → 10 and 27 → 18;
bench/profile_hot.py lists the SQL): an optimisation must lower them here, and nothing may
raise them unnoticed.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import token_create
from annotator.models import Annotation, Assignment, AssignmentState, Pair
from review.models import Agreement
from tests.conftest import member
from tests.factories import answer, make_pair


def _client(user) -> APIClient:
    token, secret = token_create(user=user, name="hot")
    # A fresh token is touched (last_used_at) on first use; the steady state is not.
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


@pytest.fixture
def client_1(annotator_1):
    return _client(annotator_1)


# A new lease: UPDATE … RETURNING the pair, INSERT the assignment, INSERT the event; on
# PostgreSQL one statement does all three (annotator.leasing._lease_in_one_statement).
LEASE_STATEMENTS = 1 if connection.vendor == "postgresql" else 3


def _next(client, slug="cars"):
    return client.post(f"/api/v1/projects/{slug}/next/")


def _submit(client, assignment_id: int, key: str):
    return client.post(
        f"/api/v1/assignments/{assignment_id}/submit/",
        answer(),
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def test_next_leasing_a_new_pair(project, client_1, django_assert_num_queries):
    pair = make_pair(project)

    # token; project with the role, the live lease and anything to expire (EXISTS, no broker),
    # one statement; lease (savepoint, UPDATE … RETURNING the pair, INSERT the assignment, INSERT
    # the event, release). PostgreSQL sends the lease's three as one statement (CTEs); the
    # savepoint is there because the test runs in a transaction (a request in autocommit sends
    # neither).
    with django_assert_num_queries(LEASE_STATEMENTS + 4):
        response = _next(client_1)

    assert response.status_code == 200
    assert Assignment.objects.get().pair == pair


def test_next_with_a_broker_leaves_expiry_to_the_beat_sweep(
    project, client_1, django_assert_num_queries, settings
):
    make_pair(project)
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: beat runs expire_leases every minute

    # as above; the first statement leaves out the EXISTS: the request never looks for expired
    # leases
    with django_assert_num_queries(LEASE_STATEMENTS + 4):
        response = _next(client_1)

    assert response.status_code == 200


def test_next_resuming_the_live_lease(project, client_1, django_assert_num_queries):
    make_pair(project)
    first = _next(client_1).json()["assignment"]["id"]

    # token; project with the role and the live lease with its pair; renew
    with django_assert_num_queries(3):
        response = _next(client_1)

    assert response.json()["assignment"]["id"] == first


def test_next_with_nothing_left(project, client_1, django_assert_num_queries):
    # token; project with the role, live lease and anything to expire; savepoint, UPDATE (no
    # row), release
    with django_assert_num_queries(5):
        response = _next(client_1)

    assert response.status_code == 204


def test_draft_save(project, client_1, django_assert_num_queries):
    make_pair(project)
    assignment_id = _next(client_1).json()["assignment"]["id"]

    # token; savepoint; lock; draft update; renew (savepoint, update, release); release
    with django_assert_num_queries(8):
        response = client_1.put(
            f"/api/v1/assignments/{assignment_id}/draft/", {"tier": "good"}, format="json"
        )

    assert response.status_code == 200
    assert Assignment.objects.get(pk=assignment_id).draft["tier"] == "good"


def test_submit_first_of_two(
    project, client_1, django_assert_num_queries, django_capture_on_commit_callbacks
):
    make_pair(project)  # the project's overlap is 2: no agreement yet
    assignment_id = _next(client_1).json()["assignment"]["id"]

    # token; key lookup; savepoint; lock; annotation; changes; state; count (UPDATE …
    # RETURNING); event; release. The live lease is not renewed; the body shows the changes
    # just inserted without reading them back.
    with django_assert_num_queries(10), django_capture_on_commit_callbacks(execute=True):
        response = _submit(client_1, assignment_id, "first")

    assert response.status_code == 201
    assert Assignment.objects.get(pk=assignment_id).state == AssignmentState.SUBMITTED
    assert not Agreement.objects.exists()


def test_submit_completing_the_pair_runs_the_agreement_in_the_request(
    project, client_1, django_assert_num_queries, django_capture_on_commit_callbacks
):
    pair = make_pair(project)
    other = _client(member(project, "annotator_other", "annotator"))
    _submit(other, _next(other).json()["assignment"]["id"], "other")
    assignment_id = _next(client_1).json()["assignment"]["id"]

    # the 10 above + the agreement, eager without a broker (after the response when served):
    # pair, annotations joined to their changes, the agreement (one INSERT … ON CONFLICT),
    # resolution, pair status, event, and its own savepoint pair
    with django_assert_num_queries(18), django_capture_on_commit_callbacks(execute=True):
        response = _submit(client_1, assignment_id, "second")

    assert response.status_code == 201
    assert Agreement.objects.get(pair=pair).status == "accepted"
    pair.refresh_from_db()
    assert pair.status == "accepted"


def test_submit_repeated_with_its_key(project, client_1, django_assert_num_queries):
    make_pair(project)
    assignment_id = _next(client_1).json()["assignment"]["id"]
    _submit(client_1, assignment_id, "again")

    # token; key lookup; the changes for the response body
    with django_assert_num_queries(3):
        response = _submit(client_1, assignment_id, "again")

    assert response.status_code == 200
    assert Annotation.objects.count() == 1 and Pair.objects.get().n_submitted == 1
