"""Hostile values of every JSON type at every field of every JSON endpoint and form: never a 5xx,
and a refused request stores nothing.

Each example takes one endpoint's valid body, puts one hostile value at one place in it (a field,
a list item, a nested field, the whole body, an unknown key) and sends it as raw JSON text, so
what json.dumps would never write (NaN, 1e309, a lone surrogate, 100,000 levels) is sent too.
Every example runs in a savepoint rolled back after it, so each starts from the same state.

A bounded, seeded budget keeps the run short (1,000 + 500 examples, about 30 s on two cores);
to search harder (unseeded):
DIFFMARK_FUZZ_EXAMPLES=2000 pytest tests/security/test_fuzz.py.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from typing import cast

import pytest
from django.apps import apps
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.services import token_create
from annotator.leasing import assignment_lease_next
from annotator.models import Assignment, Pair
from jobs.models import Job, JobStatus
from tests.conftest import PASSWORD
from tests.factories import answer, make_accepted, make_pair
from tests.images import edited_pair

EXAMPLES = int(os.environ.get("DIFFMARK_FUZZ_EXAMPLES", "0"))
HOLE = "\u2063HOSTILE\u2063"  # a placeholder json.dumps writes as-is, replaced by raw JSON text
DEEP = 100_000

# Raw JSON text: what an attacker or a broken client can send, one value of every JSON type.
HOSTILE = [
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "1e309",
    "-1e309",
    "NaN",
    "Infinity",
    "-Infinity",
    "9" * 4000,
    "-" + "9" * 25,
    "18446744073709551616",
    "9223372036854775807",
    '""',
    '"\\ud800"',
    '"a\\udfffb"',
    '"\\u0000"',
    '"x\\u0000y"',
    json.dumps("é" * 20_000),
    '"excellent"',
    '"attribute"',
    '"<script>alert(1)</script>"',
    "[]",
    "{}",
    '["excellent"]',
    '{"tier": "excellent"}',
    "[[1, 2, 3, 4]]",
    '[{"x": 1}]',
    '{"\\ud800": 1}',
    '{"\\u0000": []}',
    "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP,
    '[{"a":' * 10_000 + "1" + "}]" * 10_000,
    "[" * 50_000,
    '{"a":' * 70 + "1" + "}" * 70,
    "[" * 63 + "]" * 63,
]
# What json.dumps writes for generated values of every type (NaN and Infinity included).
GENERATED = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
).map(json.dumps)
VALUES = st.one_of(st.sampled_from(HOSTILE), GENERATED)


def paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value a hostile value can go, the whole value first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, (*prefix, key))
        found.append((*prefix, "unexpected_field"))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths(child, (*prefix, index))
    return found


def with_hole(value: object, path: tuple) -> object:
    if not path:
        return HOLE
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: with_hole(value.get(head), rest)}
    return [with_hole(v, rest) if i == head else v for i, v in enumerate(cast(list, value))]


def hostile_body(base: object, path: tuple, raw: str) -> str:
    return json.dumps(with_hole(base, path), ensure_ascii=False).replace(json.dumps(HOLE), raw, 1)


def fingerprint() -> dict:
    """What the apps store: every row count, and the assignments' and pairs' state."""
    counted = {
        model._meta.label: model._default_manager.count()
        for app in ("annotator", "review", "accounts", "auth")
        for model in apps.get_app_config(app).get_models()
    }
    assignments = list(
        Assignment.objects.order_by("pk").values_list("pk", "state", "draft", "expires_at")
    )
    pairs = list(Pair.objects.order_by("pk").values_list("pk", "status", "metadata"))
    return {"counts": counted, "assignments": assignments, "pairs": pairs}


class _Rollback(Exception):
    pass


def exchange(send) -> tuple[object, dict, dict]:
    """Send in a savepoint rolled back afterwards; the response and the state before and after."""
    result = {}
    try:
        with transaction.atomic():
            result["before"] = fingerprint()
            result["response"] = send()
            result["after"] = fingerprint()
            raise _Rollback
    except _Rollback:
        pass
    cache.clear()  # rate limits: every example starts with a fresh budget
    return result["response"], result["before"], result["after"]


def assert_refused_cleanly(response, before: dict, after: dict, *, json_api: bool) -> None:
    assert response.status_code < 500, response.content[:300]
    if 400 <= response.status_code < 500:
        assert after == before, "a refused request stored something"
        if json_api and response.status_code != 404:
            error = response.json()["error"]
            assert set(error) == {"code", "message", "fields"}
            assert isinstance(error["message"], str) and error["message"]


@dataclass(frozen=True)
class Endpoint:
    method: str
    url: str
    user: str  # persona whose session sends it ("" = anonymous)
    body: object


@pytest.fixture
def world(project, annotator_1, annotator_2, lead, researcher, disputed):
    """A project with a lease, an accepted pair, a disputed pair and a ready release."""
    from pairdiff.release.splits import SplitPlan
    from releases.building import release_create

    make_accepted(project, [annotator_1, annotator_2], [answer() for _ in range(3)])
    make_pair(project)
    lease = assignment_lease_next(project=project, user=annotator_1)
    release = release_create(project=project, name="v1", plan=SplitPlan(seed=1), user=lead)
    token_create(user=lead, name="existing")
    users = {"annotator": annotator_1, "lead": lead, "researcher": researcher}
    return {"project": project, "lease": lease, "disputed": disputed, "release": release} | {
        "users": users
    }


def json_endpoints(world) -> list[Endpoint]:
    slug, lease = world["project"].slug, world["lease"].pk
    disputed, release = world["disputed"].pk, world["release"].pk
    body = answer()
    return [
        Endpoint("POST", "/api/v1/auth/token/", "", {"username": "lead", "password": PASSWORD}),
        Endpoint("PUT", f"/api/v1/assignments/{lease}/draft/", "annotator", body),
        Endpoint("POST", f"/api/v1/assignments/{lease}/submit/", "annotator", body),
        Endpoint("POST", f"/api/v1/assignments/{lease}/skip/", "annotator", {"reason": "blurry"}),
        Endpoint("POST", f"/api/v1/projects/{slug}/next/", "annotator", {}),
        Endpoint(
            "POST",
            f"/api/v1/pairs/{disputed}/resolution/",
            "lead",
            {"decision": "merge", "answer": {"changes": body["changes"]}, "comment": "ok"},
        ),
        Endpoint(
            "POST",
            f"/api/v1/projects/{slug}/releases/",
            "lead",
            {"name": "v2", "seed": 3, "val_fraction": 0.2, "test_ratio": [1, 2, 2]},
        ),
        Endpoint(
            "POST",
            f"/api/v1/projects/{slug}/predictions/",
            "lead",
            {
                "predictions": [
                    {
                        "pair": disputed,
                        "model": "m",
                        "version": "1",
                        "confidence": 0.5,
                        "flags": [],
                        "changes": body["changes"],
                    }
                ]
            },
        ),
        Endpoint(
            "POST",
            f"/api/v1/projects/{slug}/preannotate/",
            "lead",
            {"backend": "pixeldiff", "pairs": [disputed]},
        ),
        Endpoint("GET", f"/api/v1/releases/{release}/records/", "researcher", None),
    ]


def _client(world, persona: str) -> Client:
    client = Client()
    if persona:
        client.force_login(world["users"][persona])
    return client


@pytest.mark.django_db
def test_json_endpoints_refuse_hostile_values_cleanly(world):
    endpoints = [e for e in json_endpoints(world) if e.body is not None]
    cases = [(e, path) for e in endpoints for path in paths(e.body)]
    clients = {persona: _client(world, persona) for persona in ("", *world["users"])}
    sent: list[str] = []

    @settings(
        max_examples=EXAMPLES or 1000,
        deadline=None,
        derandomize=not EXAMPLES,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(case=st.sampled_from(cases), raw=VALUES)
    def run(case, raw):
        sent.append(raw)
        endpoint, path = case
        text = hostile_body(endpoint.body, path, raw)
        client = clients[endpoint.user]
        response, before, after = exchange(
            lambda: client.generic(
                endpoint.method,
                endpoint.url,
                text.encode("utf-8", "surrogatepass"),
                content_type="application/json",
            )
        )
        assert_refused_cleanly(response, before, after, json_api=True)

    run()
    assert len(sent) >= (EXAMPLES or 1000) * 0.9 and len(set(sent)) > 100  # it did search


# Query strings: the filters of every list endpoint and page.
QUERY_VALUES = ["%00", "a%00b", "%ED%A0%80", "%FF", "-1", "1e309", "NaN", "9" * 400, "x" * 5000]


@pytest.mark.django_db
@pytest.mark.parametrize("value", QUERY_VALUES)
def test_filters_refuse_hostile_query_values_cleanly(world, value):
    slug, release = world["project"].slug, world["release"].pk
    urls = {
        "lead": [
            f"/api/v1/projects/{slug}/pairs/?status={{v}}&category={{v}}&gold={{v}}&page={{v}}",
            f"/api/v1/projects/{slug}/disputes/?category={{v}}&annotator={{v}}&reason={{v}}",
            f"/api/v1/projects/{slug}/releases/?page={{v}}",
            f"/api/v1/projects/{slug}/agreement/?annotator={{v}}",
            f"/p/{slug}/?status={{v}}&category={{v}}&difficulty={{v}}&flag={{v}}&page={{v}}",
            f"/review/{slug}/disputes/?category={{v}}&annotator={{v}}&reason={{v}}&page={{v}}",
            f"/review/{slug}/spot-check/?n={{v}}",
            f"/review/{slug}/questions/?edited={{v}}&page={{v}}",
            f"/review/{slug}/dashboard/?annotator={{v}}",
            f"/p/{slug}/jobs/?page={{v}}",
        ],
        "researcher": [
            f"/api/v1/releases/{release}/records/?split={{v}}&category={{v}}&difficulty={{v}}",
        ],
    }
    for persona, templates in urls.items():
        client = _client(world, persona)
        for template in templates:
            url = template.replace("{v}", value)
            response, before, after = exchange(lambda url=url, client=client: client.get(url))
            assert_refused_cleanly(response, before, after, json_api=url.startswith("/api/"))
            if "%00" in value:
                assert response.status_code == 400, url


# Forms: every field a text box, a choice or a file name can send, as a hostile string.
FORM_VALUES = [
    "\x00",
    "a\x00b",
    "1e309",
    "NaN",
    "-Infinity",
    "9" * 4000,
    "-1",
    "0",
    "x" * 20_000,
    "[" * 10_000 + "]" * 10_000,
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"a": NaN}',
    '{"a": "\\ud800"}',
    '{"a": 1e309}',
    '{"\\u0000": 1}',
    "[]",
    '{"source": "' + "9" * 4000 + '"}',
    "<script>alert(1)</script>",
    "‮evil",
]


def form_endpoints(world) -> list[Endpoint]:
    project = world["project"]
    slug = project.slug
    annotator = world["users"]["annotator"]
    question_pair = Pair.objects.filter(project=project, status="accepted").first()
    assert question_pair is not None
    settings_form = {
        "name": "Cars",
        "description": "d",
        "guidelines": "g",
        "overlap": "2",
        "tier_rule": "excellent",
        "iou_threshold": "0.5",
        "vocabulary_text": "car",
        "synonyms_text": "car: auto",
    }
    return [
        Endpoint("POST", "/login/", "", {"username": "lead", "password": PASSWORD}),
        Endpoint(
            "POST", "/projects/new/", "lead", settings_form | {"slug": "new", "preset": "mincu"}
        ),
        Endpoint("POST", f"/p/{slug}/settings/", "lead", settings_form),
        Endpoint(
            "POST",
            f"/p/{slug}/members/",
            "lead",
            {"username": "newbie", "role": "annotator", "password": PASSWORD},
        ),
        Endpoint("POST", f"/p/{slug}/members/{annotator.pk}/role/", "lead", {"role": "researcher"}),
        Endpoint("POST", f"/p/{slug}/preannotate/", "lead", {"backend": "pixeldiff"}),
        Endpoint(
            "POST",
            f"/review/{slug}/releases/",
            "lead",
            {"name": "v2", "seed": "1", "val_fraction": "0.1", "test_fraction": "0.1"},
        ),
        Endpoint(
            "POST",
            f"/review/pairs/{question_pair.pk}/question/",
            "lead",
            {"action": "save", "page": "1", "edited": "", "negative_1": "a", "negative_2": "b"},
        ),
        Endpoint("POST", "/account/tokens/", "lead", {"name": "laptop"}),
        Endpoint(  # the API takes forms too: JSON fields arrive as text
            "POST",
            f"/api/v1/pairs/{world['disputed'].pk}/resolution/",
            "lead",
            {
                "decision": "merge",
                "answer": json.dumps({"changes": answer()["changes"]}),
                "comment": "ok",
            },
        ),
        Endpoint(  # the API's multipart upload: the same fields as the page's form
            "POST",
            f"/api/v1/projects/{slug}/pairs/",
            "lead",
            {"external_id": "x2", "instruction": "i", "category": "object", "metadata": "{}"},
        ),
        Endpoint(  # scoring a model: multipart with a predictions file (below)
            "POST",
            f"/api/v1/releases/{world['release'].pk}/evaluations/",
            "researcher",
            {"model": "qwen", "coords": "1000", "text_metric": "words"},
        ),
        Endpoint(  # synthesis from a zip of photos (below)
            "POST",
            f"/api/v1/projects/{slug}/synthesize/",
            "lead",
            {"per_image": "1", "categories": "lighting", "gold": "false", "seed": "1"},
        ),
        Endpoint(
            "POST",
            f"/p/{slug}/upload/pair/",
            "lead",
            {
                "external_id": "x1",
                "instruction": "make it blue",
                "category": "attribute",
                "metadata": '{"source": "coco"}',
            },
        ),
    ]


def _files(endpoint: Endpoint) -> dict:
    if endpoint.url.endswith("/evaluations/"):
        line = json.dumps({"id": "nope", "answer": "A"}).encode()
        return {"file": SimpleUploadedFile("p.jsonl", line, "application/jsonl")}
    if endpoint.url.endswith("/synthesize/"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("photo.png", edited_pair(3)[0])
        return {"images": SimpleUploadedFile("photos.zip", buffer.getvalue(), "application/zip")}
    if not endpoint.url.endswith(("/upload/pair/", "/pairs/")):
        return {}
    a, b = edited_pair(7)
    return {
        "image_a": SimpleUploadedFile("a.png", a, "image/png"),
        "image_b": SimpleUploadedFile("b.png", b, "image/png"),
    }


@pytest.mark.django_db
def test_forms_refuse_hostile_values_cleanly(world):
    endpoints = form_endpoints(world)
    cases = [(e, name) for e in endpoints for name in [*e.body, "unexpected_field"]]
    clients = {persona: _client(world, persona) for persona in ("", *world["users"])}

    @settings(
        max_examples=EXAMPLES or 500,
        deadline=None,
        derandomize=not EXAMPLES,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(case=st.sampled_from(cases), value=st.sampled_from(FORM_VALUES), many=st.booleans())
    def run(case, value, many):
        endpoint, name = case
        data = dict(endpoint.body) | {name: [value, value] if many else value}
        client = clients[endpoint.user]
        files = _files(endpoint)
        response, before, after = exchange(
            lambda: (
                client.post(endpoint.url, data | files)
                if files
                else client.post(endpoint.url, data)
            )
        )
        assert_refused_cleanly(response, before, after, json_api=False)
        if response.status_code == 200 and b"field-error" in response.content:  # errors shown
            assert after == before, f"{endpoint.url} {name}: a refused form stored something"

    run()


# Structured inputs (issue 24): documents that cost more than they should, on every structured
# input a lead sends. Nesting 10,000 to 100,000 deep (JSON, YAML flow style, XML), YAML alias
# bombs, references of up to 200,000 characters, each placed as the whole document or at one
# field of a valid one. Every answer is a 4xx or a 2xx with per-row errors: never a 5xx, never
# over 64 KB, never seconds of CPU; a job that runs them ends (never "running").
STRUCTURED_EXAMPLES = int(os.environ.get("DIFFMARK_FUZZ_EXAMPLES", "0")) or 150
MAX_ANSWER_BYTES = 64 * 1024
MAX_CPU_SECONDS = 5.0


def _deep(kind: str, depth: int) -> str:
    return {
        "list": "[" * depth + "]" * depth,
        "object": '{"a":' * depth + "1" + "}" * depth,
        "mixed": '[{"a":' * (depth // 2) + "1" + "}]" * (depth // 2),
        "unclosed": "[" * depth,
        "yaml-flow": "{a: " * depth + "1" + "}" * depth,
        "xml": "<View>" + "<a>" * depth + "</a>" * depth + "</View>",
    }[kind]


def _bomb(levels: int) -> str:
    anchors = ["&l0 [x, x, x, x, x, x, x, x, x]"] + [
        f"&l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)
    ]
    return "[" + ", ".join(anchors) + "]"


COSTLY = st.one_of(
    st.tuples(
        st.sampled_from(["list", "object", "mixed", "unclosed", "yaml-flow", "xml"]),
        st.integers(min_value=10_000, max_value=100_000),
    ).map(lambda t: _deep(*t)),
    st.integers(min_value=3, max_value=9).map(_bomb),
    st.integers(min_value=1_000, max_value=100_000).map(lambda n: json.dumps("a/" * n + "x.png")),
)


def _ls_export(doc: str, where: str) -> str:
    task = '{"id": 1, "data": {"image_a": "a.png", "image_b": "b.png"}, "annotations": []}'
    return {
        "whole": doc,
        "data": task.replace('"a.png"', doc, 1),
        "annotations": task.replace("[]", f"[{doc}]", 1),
    }[where]


def _structured_cases(world) -> dict:
    """Input name → send(client, doc, where) → (response, job or None)."""
    slug = world["project"].slug
    pair = world["disputed"]

    def images() -> SimpleUploadedFile:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("a.png", edited_pair(2)[0])
        return SimpleUploadedFile("images.zip", buffer.getvalue())

    def ls(field: str, doc: str, where: str, *, dry_run: bool = True):
        export = _ls_export(doc, where) if field == "manifest" else _ls_export("1", "whole")
        if field == "manifest" or where == "whole":
            body = doc if field != "manifest" else export
        else:
            body = f"tier: {{x: {doc}}}" if field == "mapping" else f"<View>{doc}</View>"
        files = {
            "format": "label-studio",
            "manifest": SimpleUploadedFile(
                "export.json", (export if field == "manifest" else "[1]").encode()
            ),
            "images": images(),
        }
        if field != "manifest":
            files[field] = SimpleUploadedFile(f"{field}.txt", body.encode())
        if dry_run:
            files["dry_run"] = "true"
        return files

    def api_post(client, url: str, data: dict):
        return client.post(url, data)

    def run_job(response):
        if response.status_code != 202:
            return None
        from annotator.tasks import import_pairs_job

        job_id = response.json()["job"]["id"]
        import_pairs_job(job_id)
        return Job.objects.get(pk=job_id)

    url = f"/api/v1/projects/{slug}"
    return {
        "ls-export-dry-run": lambda c, d, w: (
            api_post(c, f"{url}/imports/", ls("manifest", d, w)),
            None,
        ),
        "ls-mapping": lambda c, d, w: (api_post(c, f"{url}/imports/", ls("mapping", d, w)), None),
        "ls-config": lambda c, d, w: (api_post(c, f"{url}/imports/", ls("config", d, w)), None),
        "ls-import-job": lambda c, d, w: _with_job(
            api_post(c, f"{url}/imports/", ls("manifest", d, w, dry_run=False)), run_job
        ),
        "manifest-import-job": lambda c, d, w: _with_job(
            api_post(
                c,
                f"{url}/imports/",
                {
                    "manifest": SimpleUploadedFile(
                        "m.jsonl",
                        (
                            d
                            if w == "whole"
                            else json.dumps(
                                {"id": "x", "image_a": "a.png", "image_b": "a.png"}
                            ).replace('"a.png"', d, 1)
                        ).encode(),
                    ),
                    "images": images(),
                },
            ),
            run_job,
        ),
        "predictions-file": lambda c, d, w: (
            api_post(
                c,
                f"{url}/predictions/",
                {
                    "file": SimpleUploadedFile(
                        "p.jsonl",
                        (
                            d
                            if w == "whole"
                            else json.dumps({"pair": pair.pk, "model": "m", "changes": []}).replace(
                                "[]", d, 1
                            )
                        ).encode(),
                    )
                },
            ),
            None,
        ),
        "predictions-body": lambda c, d, w: (
            c.generic(
                "POST",
                f"{url}/predictions/",
                (
                    '{"predictions": ' + d + "}"
                    if w == "whole"
                    else f'{{"predictions": [{{"pair": {pair.pk}, "model": "m", "changes": {d}}}]}}'
                ).encode(),
                content_type="application/json",
            ),
            None,
        ),
        "pair-metadata-form": lambda c, d, w: (
            c.post(
                f"{url}/pairs/",
                {
                    "external_id": "deep",
                    "metadata": d if w == "whole" else '{"source": ' + d + "}",
                    "image_a": SimpleUploadedFile("a.png", edited_pair(9)[0], "image/png"),
                    "image_b": SimpleUploadedFile("b.png", edited_pair(9)[1], "image/png"),
                },
            ),
            None,
        ),
    }


def _with_job(response, run_job):
    return response, run_job(response)


@pytest.mark.django_db
def test_structured_inputs_answer_costly_documents_briefly(world):
    import time

    cases = _structured_cases(world)
    client = _client(world, "lead")
    seen: set[str] = set()

    @settings(
        max_examples=STRUCTURED_EXAMPLES,
        deadline=None,
        derandomize=not EXAMPLES,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(
        name=st.sampled_from(sorted(cases)),
        doc=COSTLY,
        where=st.sampled_from(["whole", "data", "annotations"]),
    )
    def run(name, doc, where):
        seen.add(name)
        started = time.process_time()
        job_seen: dict = {}

        def send():
            response, job = cases[name](client, doc, where)
            if job is not None:
                job_seen.update(status=job.status, message=job.message, errors=job.errors)
            return response

        response, before, after = exchange(send)
        spent = time.process_time() - started

        assert_refused_cleanly(response, before, after, json_api=True)
        assert len(response.content) < MAX_ANSWER_BYTES, (name, len(response.content))
        assert spent < MAX_CPU_SECONDS, (name, where, len(doc), spent)
        if job_seen:
            assert job_seen["status"] not in (JobStatus.QUEUED, JobStatus.RUNNING), job_seen
            assert len(json.dumps(job_seen)) < MAX_ANSWER_BYTES, name

    run()
    assert seen == set(cases)  # every input was tried
