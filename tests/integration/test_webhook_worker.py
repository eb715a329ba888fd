"""Webhooks the real way: a commit → Redis → a Celery worker process → a receiver on
127.0.0.1, with the retries a 500 and a timeout cause sent by the worker (countdown messages),
not by a sweep."""

import time

import pytest

from annotator.leasing import assignment_lease_next
from annotator.submitting import annotation_submit
from tests.factories import answer, make_pair
from tests.webhooks.receiver import documented_check, receiver_start, receiver_stop
from webhooks.models import Delivery, DeliveryStatus
from webhooks.services import endpoint_create

pytestmark = [
    pytest.mark.integration,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]
SECRET = "worker-secret"


@pytest.fixture
def worker_env(monkeypatch, settings):
    """What the worker process reads from its environment: 127.0.0.1 allowed, short waits."""
    for name, value in {
        "DIFFMARK_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32",
        "DIFFMARK_WEBHOOK_TIMEOUT": "1",
        "DIFFMARK_WEBHOOK_RETRY_SECONDS": "1",
    }.items():
        monkeypatch.setenv(name, value)
        setattr(settings, name, value if name.endswith("NETWORKS") else int(value))


@pytest.fixture
def receiver(worker_env):
    found = receiver_start()
    yield found
    receiver_stop(found)


def test_a_worker_delivers_within_seconds_and_retries_after_a_500_and_a_timeout(
    receiver, project, annotator_1, annotator_2, celery_worker
):
    receiver.script.extend([500, "hang"])
    receiver.hang_seconds = 2.5
    endpoint_create(project=project, url=receiver.url, events=["pair.accepted"], secret=SECRET)
    pair = make_pair(project)
    for user in (annotator_1, annotator_2):
        assignment = assignment_lease_next(project=project, user=user)
        annotation_submit(assignment_id=assignment.pk, user=user, body=answer())
    committed = time.monotonic()

    first, second, third = receiver.wait_for(3, timeout=60)

    # Attempt 1 at once (500), attempt 2 a second later (timed out after 1 s), attempt 3
    # two seconds after that (200): the doubling waits, sent by the worker itself.
    assert first.at - committed < 10
    assert 0.9 < second.at - first.at < 5 and 2.9 < third.at - second.at < 8
    assert len({(h.body, h.headers["X-Diffmark-Delivery"]) for h in (first, second, third)}) == 1
    assert documented_check()(SECRET, third.body, third.headers["X-Diffmark-Signature"])
    assert third.json["event"] == "pair.accepted" and third.json["object"]["id"] == pair.pk
    deadline = time.monotonic() + 10
    while Delivery.objects.get().status != DeliveryStatus.DELIVERED:
        assert time.monotonic() < deadline, "the third attempt was not recorded"
        time.sleep(0.1)
    delivery = Delivery.objects.get()
    assert list(delivery.attempt_log.values_list("status_code", "error")) == [
        (500, "Internal Server Error"),
        (None, "timed out after 1 s"),
        (200, ""),
    ]
