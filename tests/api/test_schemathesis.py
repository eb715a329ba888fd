"""Schemathesis against the OpenAPI schema, in-process over WSGI: no operation answers 500,
and every answer matches what the schema promises (status, media type, body).

CI runs a small, seeded budget (the suite runs twice); to search harder locally:
DIFFMARK_FUZZ_EXAMPLES=300 pytest tests/api/test_schemathesis.py (then unseeded).
"""

import os
from typing import Any

import pytest
import schemathesis
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.services import token_create
from annotator.leasing import assignment_lease_next
from annotator.models import Pair
from config.wsgi import application
from jobs.models import Job
from pairdiff.release.splits import SplitPlan
from releases.building import release_create
from tests.factories import answer, make_accepted, make_pair
from tests.images import edited_pair
from webhooks.services import endpoint_create, endpoint_test

schema = schemathesis.pytest.from_fixture("api_schema")
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
KNOWN: dict[str, list[Any]] = {}
EXAMPLES = int(os.environ.get("DIFFMARK_FUZZ_EXAMPLES", "0"))


@pytest.fixture
def api_schema(project, disputed, annotator_1, annotator_2, lead, settings):
    """A project with pairs in every state the API shows, a lease, a ready release, a job and a
    webhook endpoint (to a closed port of this branch's, which the setting allows) with a
    delivery."""
    pairs = make_accepted(project, [annotator_1, annotator_2], [answer() for _ in range(4)])
    make_pair(project)
    assignment = assignment_lease_next(project=project, user=lead)
    release = release_create(project=project, name="v1", plan=SplitPlan(seed=1), user=lead)
    release.refresh_from_db()
    job = Job.objects.create(kind="import", project=project, created_by=lead)
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    hook = endpoint_create(project=project, url="http://127.0.0.1:8159/", events=["release.ready"])
    delivery = endpoint_test(endpoint=hook)
    KNOWN.update(
        slug=project.slug,
        pair=[disputed.pk, assignment.pair_id, *(p.pk for p in pairs)],
        assignment=assignment.pk,
        release=release.pk,
        job=job.pk,
        files=sorted(release.manifest["files"]),
        webhook=hook.pk,
        delivery=str(delivery.uuid),
    )
    loaded = schemathesis.openapi.from_wsgi("/api/v1/schema/", application)
    loaded.hook(flatmap_path_parameters)
    return loaded


def _known(operation_path: str) -> st.SearchStrategy[dict]:
    """Path parameters naming objects that exist, so the deep code runs, not only the 404s."""
    ids = {
        "/api/v1/pairs/": st.sampled_from(KNOWN["pair"]),
        "/api/v1/jobs/": st.just(KNOWN["job"]),
        "/api/v1/releases/": st.just(KNOWN["release"]),
        "/api/v1/assignments/": st.just(KNOWN["assignment"]),
        "/api/v1/projects/{slug}/webhooks/": st.just(KNOWN["webhook"]),
    }
    fields: dict[str, st.SearchStrategy] = {}
    if "{slug}" in operation_path:
        fields["slug"] = st.just(KNOWN["slug"])
    for prefix, strategy in ids.items():
        if operation_path.startswith(prefix) and "{id}" in operation_path:
            fields["id"] = strategy
    if "{delivery}" in operation_path:
        fields["delivery"] = st.just(KNOWN["delivery"])
    if "{name}" in operation_path:
        fields["name"] = st.sampled_from(KNOWN["files"])
    return st.fixed_dictionaries(fields)


def flatmap_path_parameters(context, path_parameters):
    """Half the time, the generated parameters with some replaced by existing objects."""
    if not isinstance(path_parameters, dict):
        return st.just(path_parameters)
    known = _known(context.operation.path).map(lambda found: path_parameters | found)
    return st.one_of(st.just(path_parameters), known)


@pytest.fixture
def lead_token(lead):
    return token_create(user=lead, name="schemathesis")[1]


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(
    max_examples=EXAMPLES or 25,
    deadline=None,
    derandomize=not EXAMPLES,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_api_never_fails_and_keeps_its_schema(case, lead_token):
    case.call_and_validate(headers={"Authorization": f"Token {lead_token}"}, checks=CHECKS)


# Regressions: what the run above found, pinned one by one.


@pytest.fixture
def lead_api(lead):
    client = APIClient()
    client.force_authenticate(lead)
    return client


@pytest.mark.parametrize("ids", [[2**63], [0], list(range(1, 10_002))])
def test_preannotate_refuses_pair_ids_the_database_cannot_hold(lead_api, project, ids):
    """An id past 64 bits reached the job's query: OverflowError, a 500 with eager tasks."""
    body = {"backend": "pixeldiff", "pairs": ids}

    response = lead_api.post(f"/api/v1/projects/{project.slug}/preannotate/", body, format="json")

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == (["pairs"] if len(ids) > 1 else ["pairs.0"])
    assert not Job.objects.exists()


def test_an_api_url_that_matches_no_route_answers_json(lead_api, client, db):
    response = lead_api.get("/api/v1/pairs/not-a-number/")

    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "no such API endpoint or object", "fields": {}}
    }
    assert client.get("/no-such-page/")["Content-Type"].startswith("text/html")


def test_a_request_django_refuses_before_the_view_answers_json(lead_api, project, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    fields = {f"f{i}": "x" for i in range(11)}

    response = lead_api.post(f"/api/v1/projects/{project.slug}/preannotate/", fields)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


def test_an_unexpected_api_failure_answers_json(lead_api, project, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("api.metrics.quality_read", broken)
    lead_api.raise_request_exception = False

    response = lead_api.get(f"/api/v1/projects/{project.slug}/agreement/")

    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"
    assert "boom" not in response.content.decode()


def test_the_schema_documents_pages_and_job_envelopes(client, db):
    paths = client.get("/api/v1/schema/?format=json").json()["paths"]

    def body(path, method, code):
        content = paths[path][method]["responses"][code]["content"]
        return content["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]

    assert body("/api/v1/projects/{slug}/pairs/", "get", "200") == "PaginatedPairList"
    assert body("/api/v1/projects/{slug}/disputes/", "get", "200") == "PaginatedDisputeList"
    assert body("/api/v1/projects/{slug}/releases/", "get", "200") == "PaginatedReleaseList"
    assert body("/api/v1/projects/{slug}/imports/", "post", "202") == "JobStarted"
    assert body("/api/v1/projects/{slug}/preannotate/", "post", "202") == "JobStarted"
    assert body("/api/v1/projects/{slug}/releases/", "post", "202") == "ReleaseStarted"
    assert "429" in paths["/api/v1/auth/token/"]["post"]["responses"]
    assert "401" in paths["/api/v1/projects/"]["get"]["responses"]
    assert "415" in paths["/api/v1/projects/{slug}/imports/"]["post"]["responses"]
    assert "401" not in paths["/api/v1/auth/token/"]["post"]["responses"]


@pytest.fixture
def lease(project, lead):
    make_pair(project)
    return assignment_lease_next(project=project, user=lead)


def test_nul_characters_in_a_json_body_are_refused_before_they_reach_the_database(lead_api, lease):
    """PostgreSQL stores no NUL in text or jsonb: a draft or a description holding one was a
    DataError, a 500, on PostgreSQL only."""
    draft = lead_api.put(
        f"/api/v1/assignments/{lease.pk}/draft/", {"notes": "a\x00b"}, format="json"
    )
    submit = lead_api.post(
        f"/api/v1/assignments/{lease.pk}/submit/", answer(description="x\x00"), format="json"
    )

    message = "may not contain NUL (\\u0000) characters"
    for response, field in ((draft, "notes"), (submit, "changes.0.description")):
        assert response.status_code == 400
        assert response.json()["error"] == {
            "code": "invalid",
            "message": message,
            "fields": {field: [message]},
        }
    lease.refresh_from_db()
    assert lease.draft in (None, {}) and lease.state == "leased"


def test_nul_characters_in_form_fields_and_metadata_are_refused(lead_api, project, lease):
    skip = lead_api.post(f"/api/v1/assignments/{lease.pk}/skip/", {"reason": "a\x00"})
    a, b = edited_pair()
    upload = lead_api.post(
        f"/api/v1/projects/{project.slug}/pairs/",
        {
            "image_a": SimpleUploadedFile("a.png", a),
            "image_b": SimpleUploadedFile("b.png", b),
            "metadata": '{"camera": "left\\u0000"}',
        },
        format="multipart",
    )

    assert skip.status_code == 400 and skip.json()["error"]["code"] == "parse_error"
    assert upload.status_code == 400
    assert upload.json()["error"]["fields"] == {
        "metadata": ["camera: may not contain NUL (\\u0000) characters"]
    }
    lease.refresh_from_db()
    assert lease.state == "leased" and Pair.objects.count() == 1


def _nul_filter(client, url: str, parameter: str) -> None:
    response = client.get(f"{url}?{parameter}=a%00b")

    assert response.status_code == 400, url
    assert response.json()["error"]["fields"] == {
        parameter: ["text may not contain NUL (\\u0000) characters"]
    }


@pytest.mark.parametrize(
    ("path", "parameter"),
    [("pairs", "category"), ("pairs", "status"), ("disputes", "annotator"), ("disputes", "reason")],
)
def test_nul_characters_in_filters_are_a_400_naming_the_filter(lead_api, project, path, parameter):
    _nul_filter(lead_api, f"/api/v1/projects/{project.slug}/{path}/", parameter)


def test_nul_characters_in_release_record_filters_are_a_400(
    lead_api, project, annotator_1, annotator_2, lead
):
    make_accepted(project, [annotator_1, annotator_2], [answer()])
    # Never built (on_commit does not run in this test's transaction); a lead sees it anyway.
    release = release_create(project=project, name="v1", plan=SplitPlan(), user=lead)

    _nul_filter(lead_api, f"/api/v1/releases/{release.pk}/records/", "category")
