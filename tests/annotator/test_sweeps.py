"""The enqueue helper and the periodic sweeps, without a worker (tasks run eagerly)."""

from __future__ import annotations

import logging
import socket
import time
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.models import Assignment, AssignmentState, PairStatus
from annotator.submitting import annotation_submit
from annotator.sweeps import leases_expire
from annotator.tasks import preannotate_job
from config.celery import app as celery_app
from config.enqueue import enqueue, enqueue_on_commit
from jobs import sweeps
from jobs.lifecycle import job_claim, job_create, job_progress, job_start
from jobs.models import Job, JobKind, JobStatus
from jobs.sweeps import jobs_fail_stale, jobs_resend_queued
from pairdiff.release.splits import SplitPlan
from projects.creating import project_create
from releases import building as releases_module
from releases.building import release_build, release_register, release_retry
from releases.failing import releases_fail_stale
from releases.models import ReleaseStatus
from releases.tasks import build_release
from review.models import Agreement, GoldScore
from review.sweeps import review_work_resend
from review.tasks import compute_agreement
from tests.conftest import member, reset_broker_pool
from tests.factories import answer, make_accepted, make_pair

LATER = timedelta(minutes=60)  # past every default threshold of the sweeps


@pytest.fixture
def dead_broker(monkeypatch):
    """A Redis URL on a port where nothing listens, with eager mode off. Celery reads
    CELERY_BROKER_URL from the environment before its configuration, so both are set."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    monkeypatch.setenv("CELERY_BROKER_URL", url)
    saved = {key: celery_app.conf[key] for key in ("broker_url", "task_always_eager")}
    celery_app.conf.update(broker_url=url, task_always_eager=False)
    reset_broker_pool()
    yield url
    celery_app.conf.update(saved)
    reset_broker_pool()


def _submit_both(project, users, pair=None):
    pair = pair or make_pair(project)
    for user in users:
        assignment = assignment_lease_next(project=project, user=user)
        assert assignment.pair_id == pair.pk
        annotation_submit(assignment_id=assignment.pk, user=user, body=answer())
    return pair


# --- enqueue ---------------------------------------------------------------------------------


def test_a_dead_broker_costs_a_warning_not_an_error_nor_seconds(
    db, dead_broker, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.WARNING, logger="config.enqueue")
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        enqueue_on_commit(compute_agreement, 41)
        enqueue_on_commit(compute_agreement, 42)
    elapsed = time.monotonic() - started

    assert len(callbacks) == 2
    assert elapsed < 1.0, f"sending with the broker down took {elapsed:.2f} s"
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "could not queue review.tasks.compute_agreement(41,), a sweep will send it again",
        "could not queue review.tasks.compute_agreement(42,), a sweep will send it again",
    ]


def test_enqueue_swallows_broker_errors_only(monkeypatch, dead_broker):
    def refused(*args):
        raise BrokerError("connection refused")

    monkeypatch.setattr(compute_agreement, "delay", refused)
    assert enqueue(compute_agreement, 1) is False

    def broken(*args):
        raise TypeError("a bug, not the broker")

    monkeypatch.setattr(compute_agreement, "delay", broken)
    with pytest.raises(TypeError):
        enqueue(compute_agreement, 1)


def test_in_eager_mode_a_failing_task_still_raises(monkeypatch):
    def failing(*args):
        raise OSError("disk full")  # would look like a broker error, but there is no broker

    monkeypatch.setattr(compute_agreement, "delay", failing)
    with pytest.raises(OSError, match="disk full"):
        enqueue(compute_agreement, 1)


def test_the_send_waits_for_the_commit(monkeypatch, db, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(compute_agreement, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit(compute_agreement, 7)
        assert sent == []
    assert sent == [7]


# --- jobs: claim and heartbeat -----------------------------------------------------------------


def test_a_job_is_claimed_once_and_progress_is_its_heartbeat(project):
    job = job_create(kind=JobKind.IMPORT, project=project)
    assert job_claim(job) is True
    assert job_claim(Job.objects.get(pk=job.pk)) is False  # the second delivery
    beat = Job.objects.get(pk=job.pk).heartbeat_at
    job_start(job, total=10)
    job_progress(job, done=3)
    job.refresh_from_db()
    assert (job.status, job.done) == (JobStatus.RUNNING, 3)
    assert job.heartbeat_at > beat


def test_a_preannotation_sent_twice_runs_once(project, monkeypatch):
    make_pair(project)
    runs = []
    monkeypatch.setattr("annotator.tasks.preannotate_run", lambda job: runs.append(job.pk))
    job = job_create(kind=JobKind.PREANNOTATE, project=project, params={"backend": "pixeldiff"})
    preannotate_job(job.pk)
    preannotate_job(job.pk)
    assert runs == [job.pk]


# --- sweeps: leases --------------------------------------------------------------------------


def test_overdue_leases_of_every_project_return_to_the_pool(project, annotator_1):
    other = project_create(slug="boats", name="Boats")
    member(other, "annotator_1", "annotator")
    for p in (project, other):
        make_pair(p)
        assignment_lease_next(project=p, user=annotator_1)

    assert leases_expire() == 0
    assert leases_expire(now=timezone.now() + LATER) == 2
    assert set(Assignment.objects.values_list("state", flat=True)) == {AssignmentState.EXPIRED}
    assert leases_expire(now=timezone.now() + LATER) == 0


# --- sweeps: stale jobs ----------------------------------------------------------------------


def test_a_running_job_without_heartbeat_fails_with_a_clear_message(project, settings):
    settings.DIFFMARK_STALE_JOB_MINUTES = 30
    stale = job_create(kind=JobKind.IMPORT, project=project)
    job_claim(stale)
    job_start(stale, total=40)
    job_progress(stale, done=25)
    alive = job_create(kind=JobKind.PREANNOTATE, project=project)
    job_claim(alive)
    queued = job_create(kind=JobKind.RECOMPUTE, project=project)
    Job.objects.filter(pk=alive.pk).update(heartbeat_at=timezone.now() + timedelta(minutes=45))

    assert jobs_fail_stale(now=timezone.now() + timedelta(minutes=31)) == [stale.pk]

    stale.refresh_from_db()
    assert stale.status == JobStatus.FAILED and stale.finished_at
    assert stale.message == (
        "stopped: no progress for 30 minutes (its worker was killed or lost its connection) "
        "after 25 of 40; the pairs imported so far are kept; import the manifest again to add "
        "the rest (rows already in are reported as duplicates)"
    )
    assert Job.objects.get(pk=alive.pk).status == JobStatus.RUNNING
    assert Job.objects.get(pk=queued.pk).status == JobStatus.QUEUED


def test_a_job_that_beats_while_the_sweep_looks_is_left_running(project, monkeypatch):
    job = job_create(kind=JobKind.IMPORT, project=project)
    job_claim(job)

    class BeatOnLookup(dict):
        """The sweep reads the advice between its read of the job and its write."""

        def __getitem__(self, kind):
            job_progress(job, done=1)  # the worker was alive after all
            return super().__getitem__(kind)

    monkeypatch.setattr(sweeps, "STALE_ADVICE", BeatOnLookup(sweeps.STALE_ADVICE))
    assert jobs_fail_stale(now=timezone.now() + LATER) == []
    assert Job.objects.get(pk=job.pk).status == JobStatus.RUNNING


# --- sweeps: queued jobs ---------------------------------------------------------------------


def test_queued_jobs_are_sent_again_by_kind_at_most_once_a_period(project, monkeypatch, settings):
    settings.DIFFMARK_RESEND_AFTER_MINUTES = 10
    sent = []
    monkeypatch.setattr(sweeps, "enqueue", lambda task, *args: sent.append((task.name, args)))
    jobs = {kind: job_create(kind=kind, project=project) for kind in JobKind}
    Job.objects.filter(pk=jobs[JobKind.RELEASE].pk).update(params={"release": 99})
    running = job_create(kind=JobKind.IMPORT, project=project)
    job_claim(running)
    now = timezone.now()

    assert jobs_resend_queued(now=now + timedelta(minutes=5)) == []
    jobs_resend_queued(now=now + timedelta(minutes=11))
    assert sorted(sent) == sorted(
        [
            ("annotator.tasks.import_pairs_job", (jobs[JobKind.IMPORT].pk,)),
            ("annotator.tasks.preannotate_job", (jobs[JobKind.PREANNOTATE].pk,)),
            ("review.tasks.recompute_agreements", (jobs[JobKind.RECOMPUTE].pk,)),
            ("review.tasks.build_release", (99,)),
            ("annotator.tasks.synthesize_pairs_job", (jobs[JobKind.SYNTHESIZE].pk,)),
        ]
    )
    sent.clear()
    jobs_resend_queued(now=now + timedelta(minutes=15))  # sent 4 minutes ago: not yet
    assert sent == []
    jobs_resend_queued(now=now + timedelta(minutes=22))
    assert len(sent) == 5


def test_a_queued_release_whose_message_was_lost_is_built_by_the_sweep(
    project, annotator_1, annotator_2
):
    make_accepted(project, [annotator_1, annotator_2], [answer()])
    release = release_register(project=project, name="v1", plan=SplitPlan())  # never sent

    jobs_resend_queued(now=timezone.now() + LATER)  # eager: the build runs here

    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY and release.records.count() == 1
    assert release.job.status == JobStatus.SUCCEEDED


# --- sweeps: review work ---------------------------------------------------------------------


def test_a_lost_cross_check_is_computed_by_the_sweep(
    project, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # the broker lost the messages
        pair = _submit_both(project, [annotator_1, annotator_2])
    with django_capture_on_commit_callbacks(execute=True):  # cross-checked as usual
        done = _submit_both(project, [annotator_1, annotator_2])
    assert not Agreement.objects.filter(pair=pair).exists()

    assert review_work_resend() == {"agreements": 0, "gold_scores": 0}  # may still be queued
    assert review_work_resend(now=timezone.now() + LATER) == {"agreements": 1, "gold_scores": 0}

    pair.refresh_from_db()
    assert pair.status == PairStatus.ACCEPTED
    assert Agreement.objects.filter(pair__in=[pair, done]).count() == 2
    assert review_work_resend(now=timezone.now() + LATER) == {"agreements": 0, "gold_scores": 0}


def test_a_cross_check_older_than_the_latest_annotation_is_computed_again(
    project, annotator_1, annotator_2
):
    pair = _submit_both(project, [annotator_1, annotator_2])
    Agreement.objects.filter(pair=pair).update(computed_at=timezone.now() - LATER)

    assert review_work_resend(now=timezone.now() + LATER)["agreements"] == 1
    latest = pair.annotations.order_by("-created_at")[0]
    assert Agreement.objects.get(pair=pair).computed_at > latest.created_at


def test_a_lost_gold_score_is_computed_by_the_sweep(
    project, annotator_1, django_capture_on_commit_callbacks
):
    pair = make_pair(project)
    gold_answer_set(pair=pair, changes=answer()["changes"])
    project.gold_rate = 1.0
    project.save(update_fields=["gold_rate"])
    with django_capture_on_commit_callbacks(execute=False):
        assignment = assignment_lease_next(project=project, user=annotator_1)
        annotation, _ = annotation_submit(
            assignment_id=assignment.pk, user=annotator_1, body=answer()
        )

    assert review_work_resend(now=timezone.now() + LATER)["gold_scores"] == 1
    assert GoldScore.objects.get(annotation=annotation).passed is True


# --- sweeps: stale releases ------------------------------------------------------------------


@pytest.fixture
def accepted(project, annotator_1, annotator_2):
    return make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])


def test_a_stale_build_fails_retriably_and_the_retry_builds_it(
    project, accepted, lead, django_capture_on_commit_callbacks
):
    release = release_register(project=project, name="v1", plan=SplitPlan())
    job_claim(release.job)  # a worker took it, wrote a file, and died
    default_storage.save(f"{release.prefix}/images/half.png", __import__("io").BytesIO(b"x"))

    assert releases_fail_stale() == []  # not stale yet
    assert releases_fail_stale(now=timezone.now() + LATER) == [release.pk]

    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and "build it again" in release.message
    assert release.job.status == JobStatus.FAILED
    assert release.records.count() == 0 and release.manifest is None
    assert not default_storage.exists(f"{release.prefix}/images/half.png")
    assert build_release(release.pk) == ReleaseStatus.FAILED  # a late redelivery: nothing

    with django_capture_on_commit_callbacks(execute=True):
        release_retry(release=release, user=lead)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY and release.records.count() == 2


def test_a_build_failed_as_stale_meanwhile_publishes_nothing(project, accepted, monkeypatch):
    release = release_register(project=project, name="v1", plan=SplitPlan())
    real_build = releases_module._build

    def build_then_swept(release, storage, job):
        built = real_build(release, storage, job)
        Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - LATER)
        assert releases_fail_stale() == [release.pk]  # the sweep thought the worker was dead
        return built

    monkeypatch.setattr(releases_module, "_build", build_then_swept)
    release_build(release.pk)

    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and release.records.count() == 0
    assert release.manifest is None


def test_a_release_message_sent_twice_builds_once(project, accepted, monkeypatch):
    release = release_register(project=project, name="v1", plan=SplitPlan())
    builds = []
    real_build = releases_module._build

    def counting(*args):
        builds.append(1)
        return real_build(*args)

    monkeypatch.setattr(releases_module, "_build", counting)
    assert build_release(release.pk) == ReleaseStatus.READY
    assert build_release(release.pk) == ReleaseStatus.READY
    assert builds == [1]
