"""The webhook endpoints over REST: what a lead registers, lists, deletes, tests and
redelivers; who else is refused; which URLs are refused."""

from __future__ import annotations

import pytest

from projects.models import Project
from tests.conftest import member
from tests.webhooks.conftest import api_client
from webhooks.models import Delivery, DeliveryStatus, Endpoint


def _hooks(project) -> str:
    return f"/api/v1/projects/{project.slug}/webhooks/"


def _register(client, project, url, events=("release.ready",), **more):
    return client.post(_hooks(project), {"url": url, "events": list(events), **more}, format="json")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:8151/hook", "127.0.0.1 is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://[::1]/hook", "::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/hook", "127.0.0.1 is a loopback address"),
        ("http://10.1.2.3/hook", "10.1.2.3 is a private address"),
        ("http://192.168.0.10/hook", "192.168.0.10 is a private address"),
        ("http://[fd00:ec2::254]/hook", "fd00:ec2::254 is a private address"),
        ("http://100.100.100.200/hook", "100.100.100.200 is not a public address"),
        ("http://0.0.0.0/hook", "0.0.0.0 is a private address"),
        ("http://localhost:8151/hook", "localhost resolves to"),
        ("ftp://93.184.215.14/hook", "must start with http:// or https://"),
        ("http://user:pw@93.184.215.14/hook", "no user name or password"),
    ],
)
def test_urls_to_private_and_metadata_addresses_are_refused(project, lead, url, why):
    response = _register(api_client(lead), project, url)

    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "invalid"
    assert why in response.json()["error"]["fields"]["url"][0]
    assert not Endpoint.objects.exists()


def test_the_setting_allows_named_networks_only(project, lead, settings):
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32, 10.20.0.0/16"
    client = api_client(lead)

    assert _register(client, project, "http://127.0.0.1:8151/hook").status_code == 201
    assert _register(client, project, "http://10.20.3.4/hook").status_code == 201
    assert _register(client, project, "http://10.21.3.4/hook").status_code == 400
    assert _register(client, project, "http://169.254.169.254/").status_code == 400
    assert _register(client, project, "http://127.0.0.2/hook").status_code == 400


def test_a_lead_registers_lists_tests_and_deletes(project, lead, settings):
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    client = api_client(lead)

    created = _register(
        client, project, "http://127.0.0.1:8159/x", ["release.failed", "pair.accepted"]
    )
    assert created.status_code == 201
    body = created.json()
    assert body["events"] == ["pair.accepted", "release.failed"]  # the documented order
    assert len(body["secret"]) == 64  # made for the lead, answered once
    listed = client.get(_hooks(project)).json()
    assert listed["count"] == 1 and "secret" not in listed["results"][0]
    project.refresh_from_db()
    assert project.webhook_events == ["pair.accepted", "release.failed"]

    hook = f"{_hooks(project)}{body['id']}/"
    queued = client.post(f"{hook}test/")
    assert queued.status_code == 202
    delivery = Delivery.objects.get(uuid=queued.json()["delivery"])
    assert delivery.event.kind == "webhook.test"

    deliveries = client.get(f"{hook}deliveries/").json()["results"]
    assert [d["id"] for d in deliveries] == [str(delivery.uuid)]
    assert deliveries[0]["status"] == DeliveryStatus.PENDING  # inside the test's transaction

    redeliver = f"{hook}deliveries/{delivery.uuid}/redeliver/"
    assert client.post(redeliver).status_code == 202

    assert client.delete(hook).status_code == 204
    assert client.get(hook).status_code == 404
    assert not Delivery.objects.exists()
    project.refresh_from_db()
    assert project.webhook_events == []


def test_a_given_secret_is_kept(project, lead, settings):
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    response = _register(api_client(lead), project, "http://127.0.0.1/x", secret="s3cret")
    assert response.json()["secret"] == "s3cret"
    assert Endpoint.objects.get().secret == "s3cret"


@pytest.mark.parametrize(
    ("events", "message"),
    [([], "This list may not be empty."), (["pair.exploded"], '"pair.exploded" is not a valid')],
)
def test_unknown_or_no_events_are_refused(project, lead, events, message):
    response = _register(api_client(lead), project, "http://93.184.215.14/", events)
    assert response.status_code == 400
    assert message in str(response.json()["error"]["fields"]), response.json()


def test_the_test_event_cannot_be_subscribed(project, lead):
    response = _register(api_client(lead), project, "http://93.184.215.14/", ["webhook.test"])
    assert response.status_code == 400


@pytest.fixture
def endpoint(project, lead, settings) -> Endpoint:
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    response = _register(api_client(lead), project, "http://127.0.0.1:8159/x")
    return Endpoint.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize(("who", "code"), [("researcher", 403), ("annotator", 403), (None, 404)])
def test_only_the_project_s_leads_manage_its_webhooks(project, endpoint, outsider, who, code):
    user = member(project, f"a_{who}", who) if who else outsider
    client = api_client(user)
    hook = f"{_hooks(project)}{endpoint.pk}/"
    attempts = [
        client.get(_hooks(project)),
        _register(client, project, "http://93.184.215.14/"),
        client.get(hook),
        client.delete(hook),
        client.post(f"{hook}test/"),
        client.get(f"{hook}deliveries/"),
        client.post(f"{hook}deliveries/00000000-0000-0000-0000-000000000000/redeliver/"),
    ]
    assert [a.status_code for a in attempts] == [code] * len(attempts)
    assert Endpoint.objects.count() == 1 and not Delivery.objects.exists()


def test_another_project_s_endpoint_is_not_found(project, endpoint, lead):
    other = Project.objects.create(slug="other", name="Other")
    member(other, "lead", "lead")
    response = api_client(lead).get(f"/api/v1/projects/other/webhooks/{endpoint.pk}/")
    assert response.status_code == 404


def test_the_schema_documents_the_webhook_paths(client, db):
    paths = client.get("/api/v1/schema/?format=json").json()["paths"]
    base = "/api/v1/projects/{slug}/webhooks/"
    assert set(paths[base]) >= {"get", "post"}
    assert set(paths[base + "{id}/"]) >= {"get", "delete"}
    assert "post" in paths[base + "{id}/test/"]
    assert "get" in paths[base + "{id}/deliveries/"]
    assert "post" in paths[base + "{id}/deliveries/{delivery}/redeliver/"]
    created = paths[base]["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    assert created["$ref"].endswith("/EndpointCreated")


def test_the_design_path_deletes_by_id_and_hides_other_projects(project, lead, settings):
    """DESIGN.md's contract: `DELETE /api/v1/webhooks/{id}/`. A lead of another project gets
    the same 404 for an endpoint that is not theirs as for one that does not exist."""
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    hook = _register(api_client(lead), project, "http://127.0.0.1:8151/hook").json()["id"]
    other = Project.objects.create(slug="other", name="Other")
    stranger = api_client(member(other, "other_lead", "lead"))

    assert stranger.delete(f"/api/v1/webhooks/{hook}/").status_code == 404
    assert stranger.delete("/api/v1/webhooks/999999/").status_code == 404
    assert api_client(lead).get(f"/api/v1/webhooks/{hook}/").json()["id"] == hook
    assert api_client(lead).delete(f"/api/v1/webhooks/{hook}/").status_code == 204
    assert not Endpoint.objects.filter(pk=hook).exists()
