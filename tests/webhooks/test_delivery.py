"""Deliveries reach a real receiver on 127.0.0.1: one for every event, signed, retried after a
500 and a timeout, and sent again by hand. Without a broker, as the tests run (eager)."""

from __future__ import annotations

import io
import socket
import time
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotator.intake.importing import pairs_import
from annotator.leasing import assignment_lease_next
from annotator.submitting import annotation_submit
from jobs.lifecycle import job_claim, job_create
from jobs.models import Job, JobKind
from jobs.sweeps import jobs_fail_stale
from pairdiff.release.splits import SplitPlan
from releases.building import release_build, release_register
from releases.evaluations import evaluation_create
from releases.failing import releases_fail_stale
from releases.models import ReleaseStatus
from review.agreement import agreement_compute
from review.models import Decision
from review.resolutions import resolution_record
from tests.factories import answer, make_accepted, make_pair
from tests.images import edited_pair
from tests.releases.test_evaluations import _perfect
from tests.releases.test_releases import _bodies
from tests.webhooks.conftest import api_client
from webhooks.delivery import deliveries_resend, delivery_redeliver, events_prune
from webhooks.models import SUBSCRIBABLE, Attempt, Delivery, DeliveryStatus, Endpoint, Event
from webhooks.services import endpoint_create, endpoint_test

SECRET = "correct horse battery staple"


@pytest.fixture
def endpoint(project, lead, receiver) -> Endpoint:
    response = api_client(lead).post(
        f"/api/v1/projects/{project.slug}/webhooks/",
        {"url": receiver.url, "events": [str(k) for k in SUBSCRIBABLE], "secret": SECRET},
        format="json",
    )
    assert response.status_code == 201, response.json()
    project.refresh_from_db()  # as every request and task reads it: with what it listens to
    return Endpoint.objects.get(pk=response.json()["id"])


def _import_one(project, tmp_path) -> Job:
    a, b = edited_pair(150)
    (tmp_path / "a.png").write_bytes(a)
    (tmp_path / "b.png").write_bytes(b)
    job = job_create(kind=JobKind.IMPORT, project=project)
    manifest = b'{"id": "imported-1", "image_a": "a.png", "image_b": "b.png"}\n'
    pairs_import(
        project=project, manifest=manifest, manifest_name="m.jsonl", images=tmp_path, job=job
    )
    return job


def _stale_build(project):
    release = release_register(project=project, name="v2", plan=SplitPlan(seed=3))
    job_claim(release.job)
    Job.objects.filter(pk=release.job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=2))
    return release


def test_a_receiver_gets_a_signed_delivery_for_every_event(
    project,
    lead,
    annotator_1,
    annotator_2,
    researcher,
    endpoint,
    receiver,
    signature_valid,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        (accepted, *_) = make_accepted(project, [annotator_1, annotator_2], _bodies(6))
    with django_capture_on_commit_callbacks(execute=True):
        disputed = make_pair(project)
        for user, body in ((annotator_1, answer()), (annotator_2, answer(boxes_b=[[0, 0, 9, 9]]))):
            _submit(project, user, body)
        agreement_compute(pair_id=disputed.pk)
    with django_capture_on_commit_callbacks(execute=True):
        resolution_record(pair_id=disputed.pk, lead=lead, decision=Decision.ACCEPT_1)
    with django_capture_on_commit_callbacks(execute=True):
        job = _import_one(project, tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        release = release_build(
            release_register(project=project, name="v1", plan=SplitPlan(seed=3)).pk
        )
    assert release.status == ReleaseStatus.READY
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = evaluation_create(
            release=release, model_name="m", coords="1000", text_metric="words",
            data=_perfect(release), user=researcher,
        )  # fmt: skip
    failing = _stale_build(project)
    with django_capture_on_commit_callbacks(execute=True):
        assert releases_fail_stale() == [failing.pk]

    received = receiver.wait_for(7 + 5)  # five more pairs were accepted with the first
    assert time.monotonic() - started < 60
    by_event: dict[str, list] = {}
    for hit in received:
        assert signature_valid(SECRET, hit.body, hit.headers["X-Diffmark-Signature"])
        assert hit.headers["X-Diffmark-Event"] == hit.json["event"]
        delivery = Delivery.objects.get(uuid=hit.headers["X-Diffmark-Delivery"])
        assert delivery.status == DeliveryStatus.DELIVERED and delivery.body.encode() == hit.body
        assert hit.json["project"] == project.slug
        by_event.setdefault(hit.json["event"], []).append(hit.json)
    assert sorted(by_event) == sorted(SUBSCRIBABLE)

    client = api_client(lead)
    # The object as the API shows it (at send time: the pair was still disputed then).
    pair_body = by_event["pair.accepted"][0]["object"]
    assert pair_body == client.get(f"/api/v1/pairs/{accepted.pk}/").json()
    assert by_event["pair.disputed"][0]["object"]["status"] == "disputed"
    (resolved,) = by_event["pair.resolved"]
    assert resolved["object"] == client.get(f"/api/v1/pairs/{disputed.pk}/").json()
    assert resolved["object"]["status"] == "accepted"
    (imported,) = by_event["import.finished"]
    assert imported["object"] == client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert imported["object"]["status"] == "succeeded"
    (ready,) = by_event["release.ready"]
    listed = client.get(f"/api/v1/projects/{project.slug}/releases/").json()["results"]
    assert ready["object"] == next(r for r in listed if r["id"] == release.pk)
    (failed,) = by_event["release.failed"]
    assert failed["object"]["id"] == failing.pk and failed["object"]["status"] == "failed"
    (scored,) = by_event["evaluation.finished"]
    assert scored["object"]["id"] == evaluation.pk and scored["object"]["status"] == "ready"
    # One event id per event; every delivery its own id.
    assert len({hit.json["id"] for hit in received}) == len(received)


def _submit(project, user, body):
    assignment = assignment_lease_next(project=project, user=user)
    annotation_submit(assignment_id=assignment.pk, user=user, body=body)


def test_a_bad_signature_is_caught_by_the_documented_check(
    endpoint, receiver, signature_valid, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_test(endpoint=endpoint)
    (hit,) = receiver.wait_for(1)
    header = hit.headers["X-Diffmark-Signature"]
    assert header.startswith("sha256=") and signature_valid(SECRET, hit.body, header)
    assert not signature_valid("another secret", hit.body, header)
    assert not signature_valid(SECRET, hit.body.replace(b"webhook.test", b"webhook.tesT"), header)
    assert not signature_valid(SECRET, hit.body, header[:-1] + ("0" if header[-1] != "0" else "1"))
    assert not signature_valid(SECRET, hit.body, None)
    assert hit.json["object"] == {
        "id": endpoint.pk,
        "url": endpoint.url,
        "events": endpoint.events,
        "created_at": hit.json["object"]["created_at"],
    }


def test_a_500_and_a_timeout_are_retried_with_the_same_body(
    settings, endpoint, receiver, django_capture_on_commit_callbacks
):
    settings.DIFFMARK_WEBHOOK_TIMEOUT = 1
    settings.DIFFMARK_WEBHOOK_RETRY_SECONDS = 0  # due at once: the sweep sends it
    receiver.hang_seconds = 2.5
    receiver.script.extend([500, "hang", 200])
    with django_capture_on_commit_callbacks(execute=True):
        delivery = endpoint_test(endpoint=endpoint)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 1

    with django_capture_on_commit_callbacks(execute=True):
        assert deliveries_resend() == [delivery.pk]  # the timeout
    with django_capture_on_commit_callbacks(execute=True):
        assert deliveries_resend() == [delivery.pk]  # then 200
    with django_capture_on_commit_callbacks(execute=True):
        assert deliveries_resend() == []

    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 3
    log = list(delivery.attempt_log.values_list("number", "status_code", "error"))
    assert log == [
        (1, 500, "Internal Server Error"),
        (2, None, "timed out after 1 s"),
        (3, 200, ""),
    ]
    hits = receiver.wait_for(3)
    assert len({(h.body, h.headers["X-Diffmark-Delivery"]) for h in hits}) == 1


def test_the_wait_doubles_and_the_last_failure_fails_the_delivery(
    settings, endpoint, receiver, django_capture_on_commit_callbacks
):
    settings.DIFFMARK_WEBHOOK_ATTEMPTS = 3
    receiver.script.extend([503, 503, 503, 200])
    with django_capture_on_commit_callbacks(execute=True):
        delivery = endpoint_test(endpoint=endpoint)
    waits = []
    for _ in range(2):
        delivery.refresh_from_db()
        assert delivery.status == DeliveryStatus.PENDING
        waits.append((delivery.next_attempt_at - timezone.now()).total_seconds())
        Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        with django_capture_on_commit_callbacks(execute=True):
            deliveries_resend()
    assert 8 < waits[0] <= 10 and 18 < waits[1] <= 20  # 10 s, then 20 s
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED and delivery.next_attempt_at is None
    assert deliveries_resend() == []

    with django_capture_on_commit_callbacks(execute=True):
        delivery_redeliver(delivery)  # by hand: one more attempt, now
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert list(delivery.attempt_log.values_list("manual", "status_code")) == [
        (False, 503),
        (False, 503),
        (False, 503),
        (True, 200),
    ]


def test_a_name_that_rebinds_to_loopback_is_refused_at_send_time(
    settings, project, lead, receiver, monkeypatch, django_capture_on_commit_callbacks
):
    """Registered while the name resolved to a public address; at send time it resolves to the
    receiver's 127.0.0.1, which is listening: nothing may reach it."""
    settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = ""
    answers = iter(["93.184.215.14", "127.0.0.1"])
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, port, *a, **kw: (
            [(2, 1, 6, "", (next(answers), port))]
            if host == "hooks.example.test"
            else real(host, port, *a, **kw)
        ),
    )
    port = receiver.server.server_address[1]
    endpoint = endpoint_create(
        project=project, url=f"http://hooks.example.test:{port}/hook", events=["pair.accepted"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        delivery = endpoint_test(endpoint=endpoint)
    (attempt,) = delivery.attempt_log.all()
    assert attempt.status_code is None
    assert attempt.error.startswith("refused: hooks.example.test resolves to 127.0.0.1 is a loop")
    time.sleep(0.2)
    assert receiver.received == []


def test_a_rolled_back_change_sends_nothing(project, endpoint, receiver, lead):
    pair = make_pair(project)
    with pytest.raises(RuntimeError), transaction.atomic():
        resolution_record(pair_id=pair.pk, lead=lead, decision=Decision.REJECT, reason="blurry")
        raise RuntimeError("the request failed after the decision")
    assert not Delivery.objects.exists()
    assert receiver.received == []

    resolution_record(pair_id=pair.pk, lead=lead, decision=Decision.REJECT, reason="blurry")
    assert Delivery.objects.get().event.kind == "pair.resolved"  # the same, committed


def test_no_endpoint_listening_writes_nothing(project, lead, receiver, annotator_1, annotator_2):
    endpoint_create(project=project, url=receiver.url, events=["release.ready"])
    make_accepted(project, [annotator_1, annotator_2], [answer()])
    assert not Delivery.objects.exists()


def test_an_import_failed_by_the_sweep_is_finished_too(project, endpoint, receiver):
    job = job_create(kind=JobKind.IMPORT, project=project)
    job.params = {"manifest": default_storage.save("imports/x/m.jsonl", io.BytesIO(b"{}"))}
    job.save(update_fields=["params"])
    job_claim(job)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=2))
    assert jobs_fail_stale() == [job.pk]
    (delivery,) = Delivery.objects.select_related("event")
    assert delivery.event.kind == "import.finished" and delivery.event.object_id == job.pk


def test_old_events_are_pruned_unless_a_delivery_is_still_pending(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        delivered = endpoint_test(endpoint=endpoint)
    pending = endpoint_test(endpoint=endpoint)  # never sent: inside the test's transaction
    recent = endpoint_test(endpoint=endpoint)
    old = timezone.now() - timedelta(days=31)
    Event.objects.exclude(pk=recent.event_id).update(created_at=old)

    assert events_prune() == 1
    assert set(Delivery.objects.values_list("pk", flat=True)) == {pending.pk, recent.pk}
    assert not Attempt.objects.filter(delivery=delivered.pk).exists()
