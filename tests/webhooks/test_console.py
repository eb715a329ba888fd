"""The Webhooks page: a lead registers, tests, reads the attempts, redelivers and deletes;
nobody else gets in."""

from __future__ import annotations

import pytest

from tests.conftest import member
from webhooks.models import Delivery, DeliveryStatus, Endpoint

PAGE = "/p/cars/webhooks/"


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


def test_a_refused_url_is_said_next_to_the_field(lead_client, project):
    response = lead_client.post(
        PAGE, {"url": "http://169.254.169.254/latest/meta-data/", "events": ["release.ready"]}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "169.254.169.254 is a link-local address (cloud metadata lives there)" in page
    assert not Endpoint.objects.exists()


def test_a_lead_registers_tests_reads_attempts_and_redelivers(
    lead_client, project, receiver, signature_valid, django_capture_on_commit_callbacks
):
    receiver.script.append(500)
    response = lead_client.post(
        PAGE, {"url": receiver.url, "events": ["pair.accepted", "release.ready"]}, follow=True
    )
    endpoint = Endpoint.objects.get()
    page = response.content.decode()
    assert f'<code class="secret">{endpoint.secret}</code>' in page  # shown once, as made
    assert endpoint.events == ["pair.accepted", "release.ready"]
    assert endpoint.secret not in str(lead_client.cookies)  # not in a messages cookie

    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(f"{PAGE}{endpoint.pk}/test/")
    (first,) = receiver.wait_for(1)
    assert signature_valid(endpoint.secret, first.body, first.headers["X-Diffmark-Signature"])
    page = lead_client.get(PAGE).content.decode()
    assert "HTTP 500" in page and "receiver says no" in page
    assert endpoint.secret not in page

    delivery = Delivery.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(f"{PAGE}{endpoint.pk}/deliveries/{delivery.uuid}/redeliver/")
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    page = lead_client.get(PAGE).content.decode()
    assert "(by hand)" in page and "HTTP 200" in page

    lead_client.post(f"{PAGE}{endpoint.pk}/delete/")
    assert not Endpoint.objects.exists() and not Delivery.objects.exists()


@pytest.mark.parametrize(("who", "code"), [("researcher", 403), ("annotator", 403), (None, 404)])
def test_only_leads_open_the_page(client, project, outsider, who, code, settings):
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = "127.0.0.1/32"
    lead = member(project, "lead", "lead")
    client.force_login(lead)
    client.post(PAGE, {"url": "http://127.0.0.1:8159/", "events": ["release.ready"]})
    endpoint = Endpoint.objects.get()
    client.force_login(member(project, f"a_{who}", who) if who else outsider)
    answers = [
        client.get(PAGE),
        client.post(PAGE, {"url": "http://127.0.0.1:8159/", "events": ["release.ready"]}),
        client.post(f"{PAGE}{endpoint.pk}/test/"),
        client.post(f"{PAGE}{endpoint.pk}/delete/"),
    ]
    assert [a.status_code for a in answers] == [code] * 4
    assert Endpoint.objects.count() == 1 and not Delivery.objects.exists()
