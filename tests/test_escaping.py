"""Text people type is shown as text: markup in any field never reaches a page unescaped.

Every free-text field gets its own payload, tagged with the field's name, so a failure says which
field leaked, and a page that shows the field proves it was rendered (escaped), not skipped.
"""

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from annotator.leasing import assignment_lease_next
from annotator.models import PairStatus
from annotator.submitting import annotation_submit
from annotator.textformats import guidelines_html
from jobs.models import Job, JobStatus
from pairdiff.release.splits import SplitPlan
from projects.creating import project_create
from projects.models import Preset, Role
from releases.building import release_create
from review.agreement import agreement_compute
from review.models import Decision
from review.resolutions import resolution_record
from tests.conftest import member
from tests.factories import answer, make_accepted, make_pair


def payload(field: str) -> str:
    return f'<script>alert({field})</script>"><img src=x onerror=alert({field})>'


FIELDS = (
    "project_name",
    "project_description",
    "guidelines",
    "licence",
    "category_name",
    "category_hint",
    "external_id",
    "instruction",
    "entity_a",
    "entity_b",
    "description",
    "comment",
    "job_message",
    "job_error",
    "release_name",
)


def _answer(**change):
    return answer(
        category="attribute",
        description=payload("description"),
        entity_a=payload("entity_a"),
        entity_b=payload("entity_b"),
        **change,
    )


@pytest.fixture
def hostile(db, django_capture_on_commit_callbacks):
    project = project_create(
        slug="xss",
        name=payload("project_name"),
        preset=Preset.CUSTOM,
        categories=[
            {
                "slug": "attribute",
                "name": payload("category_name"),
                "hint": payload("category_hint"),
            },
            {"slug": "object", "name": "Object", "hint": ""},
        ],
    )
    project.description = payload("project_description")
    project.guidelines = f"# Rules\n\n{payload('guidelines')}\n\n- [x]({payload('guidelines')})"
    project.licence = payload("licence")
    project.save()
    lead = member(project, "lead", Role.LEAD)
    annotators = [member(project, f"annotator_{i}", Role.ANNOTATOR) for i in (1, 2)]

    disputed, resolved = (
        make_pair(
            project, external_id=payload("external_id") + str(i), instruction=payload("instruction")
        )
        for i in range(2)
    )
    for pair in (disputed, resolved):
        for user, body in zip(
            annotators, (_answer(), _answer(boxes_b=[[30, 20, 50, 40]])), strict=True
        ):
            assignment = assignment_lease_next(project=project, user=user)
            assert assignment.pair_id == pair.pk
            annotation_submit(assignment_id=assignment.pk, user=user, body=body)
        agreement_compute(pair_id=pair.pk)
        pair.refresh_from_db()
        assert pair.status == PairStatus.DISPUTED
    resolution_record(
        pair_id=resolved.pk, lead=lead, decision=Decision.ACCEPT_1, comment=payload("comment")
    )
    make_accepted(project, annotators, [_answer(), _answer()])
    open_pair = make_pair(project, instruction=payload("instruction"))
    lease = assignment_lease_next(project=project, user=annotators[0])
    assert lease.pair_id == open_pair.pk
    job = Job.objects.create(
        kind="import",
        project=project,
        created_by=lead,
        status=JobStatus.SUCCEEDED,
        message=payload("job_message"),
        errors=[{"line": 2, "id": payload("job_error"), "message": payload("job_error")}],
    )
    with django_capture_on_commit_callbacks(execute=True):
        release = release_create(
            project=project, name=payload("release_name")[:100], plan=SplitPlan(), user=lead
        )
    return {
        "project": project,
        "lead": lead,
        "annotator": annotators[0],
        "lease": lease,
        "disputed": disputed,
        "resolved": resolved,
        "job": job,
        "release": release,
    }


# (who looks, url name, kwargs from the objects, the fields the page must show)
PAGES = [
    ("lead", "annotator:home", None, ["project_name"]),
    ("lead", "console:project", "slug", ["project_name", "project_description", "guidelines"]),
    ("annotator", "console:project", "slug", ["project_name", "guidelines"]),
    ("annotator", "annotator:workspace", "lease", ["instruction", "guidelines", "category_name"]),
    ("lead", "console:pair", "disputed", ["description", "entity_a", "entity_b"]),
    ("lead", "console:pair", "resolved", ["description", "comment"]),
    ("lead", "review:adjudicate", "disputed", ["description", "entity_a", "category_name"]),
    ("lead", "review:disputes", "slug", ["external_id"]),
    ("lead", "review:spot_check", "slug", []),
    ("lead", "review:dashboard", "slug", ["category_name"]),
    ("lead", "console:jobs", "slug", ["job_message"]),
    ("lead", "console:job", "job", ["job_message", "job_error"]),
    ("lead", "console:project_settings", "slug", ["project_name", "guidelines", "licence"]),
    ("lead", "console:members", "slug", ["project_name"]),
    ("lead", "releases:releases", "slug", ["release_name"]),
    ("lead", "releases:release", "release", ["release_name", "project_description"]),
    ("lead", "console:upload", "slug", ["project_name"]),
    ("lead", "console:screening", "slug", ["project_name"]),
    ("lead", "releases:questions", "slug", []),
]


def _kwargs(objects, target):
    if target is None:
        return {}
    if target == "slug":
        return {"slug": objects["project"].slug}
    return {"pk": objects[target].pk}


def _assert_escaped(body: str, url: str) -> None:
    assert "<script>alert" not in body, url
    assert "<img src=x" not in body, url
    for field in FIELDS:
        assert f"<script>alert({field})" not in body, f"{field} unescaped on {url}"
        assert f'"><img src=x onerror=alert({field})>' not in body, f"{field} unescaped on {url}"


@pytest.mark.parametrize(
    ("who", "name", "target", "shown"), PAGES, ids=[f"{p[1]}:{p[2]}" for p in PAGES]
)
def test_pages_show_hostile_text_escaped(client, hostile, who, name, target, shown):
    client.force_login(hostile[who])
    url = reverse(name, kwargs=_kwargs(hostile, target))

    response = client.get(url)

    assert response.status_code == 200, url
    body = response.content.decode()
    _assert_escaped(body, url)
    missing = [field for field in shown if f"alert({field})" not in body]
    assert not missing, f"{url} no longer shows {missing}: the test would prove nothing there"


def test_htmx_fragments_are_escaped_too(client, hostile):
    client.force_login(hostile["lead"])
    url = reverse("console:job", args=[hostile["job"].pk])

    body = client.get(url, HTTP_HX_REQUEST="true").content.decode()

    _assert_escaped(body, url)
    assert "alert(job_message)" in body


def test_a_quote_in_a_guidelines_link_cannot_leave_the_href():
    """The rest of the markdown subset is pinned in tests/annotator/test_textformats.py."""
    html = str(guidelines_html('[a](https://x.test/"onmouseover=x>y)'))

    assert html == (
        '<p><a href="https://x.test/&quot;onmouseover=x&gt;y" '
        'rel="nofollow noopener noreferrer">a</a></p>'
    )


class _InlineCode(HTMLParser):
    """Script the Content-Security-Policy would block: an inline <script> (a JSON data block is
    not script) or an on… event-handler attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag == "script" and "src" not in names and names.get("type") != "application/json":
            self.found.append(f"inline <script> at line {self.getpos()[0]}")
        self.found += [f"{name}= on <{tag}>" for name, _ in attrs if name.startswith("on")]


def inline_code(body: str) -> list[str]:
    parser = _InlineCode()
    parser.feed(body)
    return parser.found


@pytest.mark.parametrize(
    ("who", "name", "target", "shown"), PAGES, ids=[f"{p[1]}:{p[2]}" for p in PAGES]
)
def test_pages_run_under_the_content_security_policy(client, hostile, who, name, target, shown):
    """Every page is served with the CSP and holds no script it would block (the browser tests
    in tests/browser run the workspace and adjudication screens under it)."""
    client.force_login(hostile[who])
    url = reverse(name, kwargs=_kwargs(hostile, target))

    response = client.get(url)

    assert "script-src 'self';" in response["Content-Security-Policy"]
    assert "camera=()" in response["Permissions-Policy"]
    assert inline_code(response.content.decode()) == [], url


@pytest.mark.parametrize(
    "url", ["/login/", "/account/tokens/", "/api/v1/docs/", "/admin/login/", "/api/v1/projects/"]
)
def test_other_pages_carry_the_policy_and_no_inline_script(client, hostile, url):
    if url != "/login/":
        client.force_login(hostile["lead"])

    response = client.get(url)

    assert response.status_code == 200, url
    assert response["Content-Security-Policy"].startswith("default-src 'self'")
    if response["Content-Type"].startswith("text/html"):
        assert inline_code(response.content.decode()) == [], url
    else:  # the API answers JSON only: DRF's browsable pages run inline script
        assert response["Content-Type"] == "application/json"
