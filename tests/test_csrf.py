"""Every form that posts carries a CSRF token, and a post without one is refused.

The pages come from the permission matrix, so a new page is checked as soon as it is there.
"""

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import token_create
from annotator.leasing import assignment_lease_next
from tests.conftest import PASSWORD
from tests.factories import make_pair
from tests.test_permissions import MATRIX, objects  # noqa: F401  (objects: the fixture)

MUTATING = ("hx-post", "hx-put", "hx-patch", "hx-delete")
PAGES = [
    (name, target)
    for name, method, target, expected in MATRIX
    if method == "get" and expected["lead"] == 200 and not name.startswith("api:")
]


class _Forms(HTMLParser):
    """Each post form with its CSRF token value, and the htmx requests made outside forms."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self.loose_htmx: list[str] = []
        self.csrf_headers: list[str] = []
        self._form: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = {key: value or "" for key, value in attrs}
        if "X-CSRFToken" in attrs.get("hx-headers", ""):
            self.csrf_headers.append(attrs["hx-headers"])
        if tag == "form":
            method = attrs.get("method", "get").lower()
            posts = method == "post" or any(attrs.get(a) for a in MUTATING)
            where = attrs.get("action") or next((attrs[a] for a in MUTATING if a in attrs), "")
            self._form = {"action": where, "posts": posts, "token": ""}
            self.forms.append(self._form)
        elif tag == "input" and self._form is not None:
            if attrs.get("name") == "csrfmiddlewaretoken":
                self._form["token"] = attrs.get("value", "")
        elif self._form is None and any(a in attrs for a in MUTATING):
            self.loose_htmx.append(f"<{tag} {next(attrs[a] for a in MUTATING if a in attrs)}>")

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None


def _parse(html: str) -> _Forms:
    parser = _Forms()
    parser.feed(html)
    return parser


def _assert_protected(html: str, where: str) -> int:
    parsed = _parse(html)
    posting = [form for form in parsed.forms if form["posts"]]
    for form in posting:
        # A masked token is 64 characters; an empty or missing one is a form that 403s.
        assert len(form["token"]) == 64, f"{where}: form to {form['action']!r} has no CSRF token"
    if parsed.loose_htmx:
        assert parsed.csrf_headers, f"{where}: {parsed.loose_htmx} post without a CSRF header"
    return len(posting)


@pytest.fixture
def lead_client(lead):
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    return client


@pytest.mark.parametrize(("name", "target"), PAGES, ids=[name for name, _ in PAGES])
def test_every_post_form_on_every_page_carries_a_csrf_token(lead_client, objects, name, target):  # noqa: F811
    url = reverse(name, kwargs=objects[target])
    response = lead_client.get(url)

    assert response.status_code == 200, url
    if response["Content-Type"].startswith("text/html"):
        # Every page has at least the log-out form of the top bar.
        assert _assert_protected(response.content.decode(), url) >= 1


def test_the_login_form_and_the_workspace_carry_csrf_tokens(project, lead, lead_client):
    make_pair(project)
    assignment = assignment_lease_next(project=project, user=lead)
    login = Client(enforce_csrf_checks=True).get(reverse("login")).content.decode()
    workspace = lead_client.get(reverse("annotator:workspace", args=[assignment.pk]))

    assert _assert_protected(login, "/login/") == 1
    assert workspace.status_code == 200
    assert _assert_protected(workspace.content.decode(), "workspace") >= 1
    assert 'data-csrf="' in workspace.content.decode()  # what the ES modules send as X-CSRFToken


def test_a_form_without_a_token_is_caught():
    assert _parse('<form method="POST" action="/x/"><input name="q"></form>').forms[0] == {
        "action": "/x/",
        "posts": True,
        "token": "",
    }
    with pytest.raises(AssertionError, match="has no CSRF token"):
        _assert_protected('<form method="post" action="/x/"></form>', "page")
    with pytest.raises(AssertionError, match="without a CSRF header"):
        _assert_protected('<button hx-post="/x/">go</button>', "page")
    assert _assert_protected('<form action="/search/"><input name="q"></form>', "page") == 0


def _posts(project, researcher, lead):
    """(url, body) of state-changing browser endpoints, one of each kind."""
    return [
        (reverse("logout"), {}),
        (reverse("annotator:lease_next", args=[project.slug]), {}),
        (reverse("console:member_role", args=[project.slug, researcher.pk]), {"role": "lead"}),
        (reverse("console:member_remove", args=[project.slug, researcher.pk]), {}),
        (reverse("console:project_new"), {"slug": "new", "name": "New", "preset": "mincu"}),
        (reverse("accounts:tokens"), {"name": "laptop"}),
    ]


def test_a_post_without_the_token_is_refused(project, lead, researcher, lead_client):
    for url, body in _posts(project, researcher, lead):
        response = lead_client.post(url, body)
        assert response.status_code == 403, url

    researcher.refresh_from_db()
    assert project.memberships.get(user=researcher).role == "researcher"
    assert not lead.api_tokens.exists()
    assert lead_client.get(reverse("annotator:home")).status_code == 200  # still logged in


def test_a_post_with_the_token_of_the_page_is_accepted(lead, lead_client):
    url = reverse("accounts:tokens")
    forms = _parse(lead_client.get(url).content.decode()).forms
    [token] = [form["token"] for form in forms if form["action"] == url]

    response = lead_client.post(url, {"name": "laptop", "csrfmiddlewaretoken": token})

    assert response.status_code == 200 and lead.api_tokens.count() == 1


def test_the_login_post_needs_the_token(lead):
    client = Client(enforce_csrf_checks=True)

    response = client.post(reverse("login"), {"username": "lead", "password": PASSWORD})

    assert response.status_code == 403 and "_auth_user_id" not in client.session


def test_the_api_needs_the_token_with_a_session_but_not_with_an_api_token(project, lead):
    url = reverse("api:lease-next", args=[project.slug])
    session = APIClient(enforce_csrf_checks=True)
    session.force_login(lead)
    _, secret = token_create(user=lead)
    tokened = APIClient(enforce_csrf_checks=True)
    tokened.credentials(HTTP_AUTHORIZATION=f"Token {secret}")

    refused = session.post(url)

    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]["message"]
    assert tokened.post(url).status_code == 204  # no pairs: nothing to lease
