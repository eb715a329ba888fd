"""Faults with real processes: workers killed mid-job, a duplicate submit racing itself, a dead
broker, a PostgreSQL restart under a running annotation loop.

Workers are real Celery processes on PostgreSQL and Redis. A killed worker's message would come
back only after the broker's visibility timeout (an hour by default); recovery in time comes
from the sweeps (jobs/sweeps.py, releases/failing.py), which these tests send to a fresh
worker started with small thresholds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from pathlib import Path

import psycopg
import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from rest_framework.test import APIClient

from annotator.intake.uploads import import_queue
from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Pair, PairStatus
from annotator.submitting import annotation_submit
from annotator.tasks import fail_stale_jobs, import_pairs_job
from config.celery import app as celery_app
from jobs.models import Job, JobStatus
from pairdiff.release.splits import SplitPlan
from releases.building import release_create, release_retry
from releases.models import Release, ReleaseStatus
from releases.tasks import build_release, fail_stale_releases
from review.models import Agreement
from review.tasks import resend_review_work
from tests.conftest import reset_broker_pool
from tests.factories import answer, make_accepted, make_pair
from tests.images import edited_pair

pytestmark = [
    pytest.mark.integration,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
LIVE_BROKER = os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/0"


def _wait(condition, what: str, timeout: float = 60, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(every)
    return value


class Workers:
    """Real worker processes sharing one queue of their own; kill one as a crashed host would."""

    def __init__(self, tmp_path: Path, media_root: str):
        self.tmp_path, self.media_root = tmp_path, media_root
        self.queue = f"faults-{uuid.uuid4().hex[:8]}"
        self.procs: list[subprocess.Popen] = []
        self.logs: list = []

    def start(self, settings_module: str = "config.settings_test", **env: str):
        n = len(self.procs)
        db = connection.settings_dict
        password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
        database = (
            f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
        )
        environ = os.environ | {
            "DJANGO_SETTINGS_MODULE": settings_module,
            "DATABASE_URL": database,
            "CELERY_BROKER_URL": LIVE_BROKER,
            "MEDIA_ROOT": self.media_root,
            "DIFFMARK_TEST_QUEUE": self.queue,  # what the worker itself sends comes back to it
            **env,
        }
        name = f"{self.queue}-{n}"
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo"]
        command += ["-Q", self.queue, "-n", f"{name}@%h", "--loglevel=WARNING", "--without-gossip"]
        log = (self.tmp_path / f"worker-{n}.log").open("w")
        self.logs.append(log)
        proc = subprocess.Popen(
            command, cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT
        )
        self.procs.append(proc)
        destination = [f"{name}@{socket.gethostname()}"]
        _wait(
            lambda: (
                proc.poll() is not None
                or celery_app.control.ping(timeout=1, destination=destination)
            ),
            f"worker {n} answering",
        )
        assert proc.poll() is None, self.log(n)
        return proc

    def kill(self, proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGKILL)  # no warm shutdown, no ack: a crashed host
        proc.wait(timeout=10)

    def log(self, n: int) -> str:
        return (self.tmp_path / f"worker-{n}.log").read_text()[-3000:]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
        for log in self.logs:
            log.close()


@pytest.fixture
def workers(tmp_path, settings, monkeypatch):
    monkeypatch.setenv("CELERY_BROKER_URL", LIVE_BROKER)  # Celery reads it before its conf
    pool = Workers(tmp_path, str(settings.MEDIA_ROOT))
    saved = {key: celery_app.conf[key] for key in ("broker_url", "task_always_eager")}
    saved["task_default_queue"] = celery_app.conf.task_default_queue
    celery_app.conf.update(
        broker_url=LIVE_BROKER, task_always_eager=False, task_default_queue=pool.queue
    )
    reset_broker_pool()
    try:
        yield pool
    finally:
        pool.stop()
        celery_app.conf.update(saved)
        reset_broker_pool()


def _files(prefix: str) -> list[str]:
    found: list[str] = []
    try:
        folders, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return found
    found += [f"{prefix}/{name}" for name in files]
    for folder in folders:
        found += _files(f"{prefix}/{folder}")
    return found


# --- (a) a worker killed in the middle of a release build -------------------------------------


def test_a_release_whose_worker_is_killed_mid_build_is_never_half_visible_and_can_be_retried(
    project, annotator_1, annotator_2, lead, researcher, workers
):
    bodies = [answer(description=f"The patch changed colour ({i}).") for i in range(8)]
    accepted = make_accepted(project, [annotator_1, annotator_2], bodies)
    slow = workers.start("tests.integration.settings_slow", DIFFMARK_TEST_SAVE_DELAY="0.4")
    release = release_create(project=project, name="v1", plan=SplitPlan(seed=3), user=lead)

    _wait(lambda: len(_files(f"{release.prefix}/images")) >= 3, "the build copying images")
    workers.kill(slow)

    release.refresh_from_db()
    assert (release.status, release.records.count(), release.manifest) == ("building", 0, None)
    assert release.job.status == JobStatus.RUNNING
    api = APIClient()
    api.force_authenticate(researcher)
    assert (
        api.get(f"/api/v1/releases/{release.pk}/").status_code == 404
    )  # researchers see ready ones
    assert api.get(f"/api/v1/releases/{release.pk}/records/").status_code == 404

    # A fresh worker; its sweep treats a build silent for 0 minutes as stale.
    workers.start(DIFFMARK_STALE_JOB_MINUTES="0")
    build_release.delay(release.pk)  # a redelivered message finds the job taken: nothing
    fail_stale_releases.delay()
    _wait(lambda: Release.objects.get(pk=release.pk).status != "building", "the stale sweep")

    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    # The sweep runs on the killed worker's host: it sees the process gone (Job.runner) before
    # the silence rule; on another host the silence rule says it.
    assert release.message.startswith(
        ("stopped: its process ended", "the build stopped: no progress for 0 minutes")
    )
    assert release.job.status == JobStatus.FAILED
    assert release.records.count() == 0 and _files(release.prefix) == []

    release_retry(release=release, user=lead)
    _wait(lambda: Release.objects.get(pk=release.pk).status != "building", "the rebuild", 90)

    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY, release.message
    assert release.records.count() == len(accepted)
    on_disk = {name.removeprefix(f"{release.prefix}/") for name in _files(release.prefix)}
    assert on_disk == set(release.manifest["files"]) | {"manifest.json"}
    for name, entry in release.manifest["files"].items():
        with default_storage.open(f"{release.prefix}/{name}", "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == entry["sha256"], name


# --- (b) a worker killed in the middle of an import -------------------------------------------


def _import_upload(n: int) -> tuple[SimpleUploadedFile, SimpleUploadedFile]:
    rows, buffer = [], io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(n):
            a, b = edited_pair(i)
            archive.writestr(f"{i}_a.png", a)
            archive.writestr(f"{i}_b.png", b)
            rows.append({"id": f"p{i}", "image_a": f"{i}_a.png", "image_b": f"{i}_b.png"})
    manifest = "\n".join(json.dumps(row) for row in rows).encode()
    return (
        SimpleUploadedFile("manifest.jsonl", manifest),
        SimpleUploadedFile("images.zip", buffer.getvalue()),
    )


def test_an_import_whose_worker_is_killed_keeps_whole_pairs_once_and_fails_retriably(
    project, lead, workers
):
    slow = workers.start("tests.integration.settings_slow", DIFFMARK_TEST_SAVE_DELAY="0.05")
    manifest, images = _import_upload(30)  # batches of 25 rows are committed one by one
    job = import_queue(project=project, manifest=manifest, images=images, user=lead)

    # The batch's rows commit a moment before its progress is written: wait for the progress,
    # so the kill falls in the second batch, not between the first one's two writes.
    _wait(lambda: Job.objects.get(pk=job.pk).done >= 25, "the first batch", 90)
    workers.kill(slow)  # during the second batch: its files are being written

    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.done == 25
    assert Pair.objects.filter(project=project).count() == 25  # whole batches only
    for pair in Pair.objects.filter(project=project):
        for field in (pair.image_a, pair.image_b):
            assert default_storage.exists(field.name), field.name

    workers.start(DIFFMARK_STALE_JOB_MINUTES="0")
    import_pairs_job.delay(job.pk)  # a redelivered message: the job is taken, nothing runs
    fail_stale_jobs.delay()
    _wait(lambda: Job.objects.get(pk=job.pk).status != JobStatus.RUNNING, "the stale sweep")

    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert "after 25 of 30; the pairs imported so far are kept" in job.message

    manifest, images = _import_upload(30)  # the lead imports the same files again
    again = import_queue(project=project, manifest=manifest, images=images, user=lead)
    _wait(
        lambda: Job.objects.get(pk=again.pk).status in (JobStatus.SUCCEEDED, JobStatus.FAILED),
        "the second import",
        90,
    )
    again.refresh_from_db()
    assert again.status == JobStatus.SUCCEEDED, again.message
    assert again.result == {"rows": 30, "imported": 5, "rejected": 25}
    pairs = Pair.objects.filter(project=project)
    assert sorted(pairs.values_list("external_id", flat=True)) == sorted(f"p{i}" for i in range(30))
    assert len(set(pairs.values_list("sha256_a", "sha256_b"))) == 30
    for pair in pairs:
        for field in (pair.image_a, pair.image_b):
            with default_storage.open(field.name, "rb") as handle:
                data = handle.read()
            expected = pair.sha256_a if field is pair.image_a else pair.sha256_b
            assert hashlib.sha256(data).hexdigest() == expected, field.name


# --- (c) the same annotation submitted twice at once ------------------------------------------


def _submit_twice_at_once(user, url: str, key: str) -> list[tuple[int, dict]]:
    """Two HTTP clients send the same submit with the same Idempotency-Key at the same moment."""
    barrier, responses = threading.Barrier(2), []

    def submit():
        client = APIClient()
        client.force_authenticate(user)
        barrier.wait()
        try:
            response = client.post(url, answer(), format="json", HTTP_IDEMPOTENCY_KEY=key)
            responses.append((response.status_code, response.json()))
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return responses


def test_a_submit_sent_twice_at_once_is_stored_once_and_both_get_the_same_answer(
    project, annotator_1, annotator_2, workers
):
    workers.start()
    pairs = [make_pair(project) for _ in range(4)]
    for _ in pairs:  # the first annotator answers each pair as usual
        assignment = assignment_lease_next(project=project, user=annotator_1)
        annotation_submit(assignment_id=assignment.pk, user=annotator_1, body=answer())
    api = APIClient()
    api.force_authenticate(annotator_2)

    for round_ in range(len(pairs)):
        lease = api.post("/api/v1/projects/cars/next/").json()["assignment"]
        url = f"/api/v1/assignments/{lease['id']}/submit/"

        responses = _submit_twice_at_once(annotator_2, url, key=f"k-{round_}")

        assert sorted(code for code, _ in responses) == [200, 201]
        assert responses[0][1] == responses[1][1]
        pair_id = lease["pair"]["id"]
        assert Annotation.objects.filter(pair_id=pair_id, annotator=annotator_2).count() == 1

    for pair in pairs:  # the worker cross-checked each pair once, when both answers were in
        _wait(lambda p=pair: Agreement.objects.filter(pair=p).exists(), "the cross-check")
        pair.refresh_from_db()
        assert (pair.status, pair.n_submitted) == (PairStatus.ACCEPTED, 2)


# --- (d) the broker is down while annotators submit -------------------------------------------


def test_with_the_broker_down_a_submit_is_quick_and_the_sweep_cross_checks_it_later(
    project, annotator_1, annotator_2, workers, monkeypatch
):
    with socket.socket() as probe:  # a port where nothing listens: Redis is down
        probe.bind(("127.0.0.1", 0))
        dead = f"redis://127.0.0.1:{probe.getsockname()[1]}/0"
    monkeypatch.setenv("CELERY_BROKER_URL", dead)
    celery_app.conf.broker_url = dead
    reset_broker_pool()
    pair = make_pair(project)
    timings = []
    for user in (annotator_1, annotator_2):
        api = APIClient()
        api.force_authenticate(user)
        lease = api.post("/api/v1/projects/cars/next/").json()["assignment"]
        started = time.monotonic()
        response = api.post(
            f"/api/v1/assignments/{lease['id']}/submit/",
            answer(),
            format="json",
            HTTP_IDEMPOTENCY_KEY=f"{user.username}-1",
        )
        timings.append(time.monotonic() - started)
        assert response.status_code == 201, response.json()

    assert timings[-1] < 1.0, f"the last submit (which enqueues the cross-check) took {timings}"
    pair.refresh_from_db()
    assert pair.status == PairStatus.IN_ANNOTATION and pair.n_submitted == 2
    assert not Agreement.objects.filter(pair=pair).exists()

    # Redis is back: a worker, and the sweep (sent by beat in production) with no grace period.
    monkeypatch.setenv("CELERY_BROKER_URL", LIVE_BROKER)
    celery_app.conf.broker_url = LIVE_BROKER
    reset_broker_pool()
    workers.start(DIFFMARK_RESEND_AFTER_MINUTES="0")
    resend_review_work.delay()

    _wait(lambda: Agreement.objects.filter(pair=pair).exists(), "the cross-check")
    pair.refresh_from_db()
    assert pair.status == PairStatus.ACCEPTED


# --- (e) PostgreSQL restarts under a running annotation loop ----------------------------------

SETUP = """
from accounts.services import token_create
from projects.models import Preset, Role
from projects.members import membership_set, user_ensure
from projects.creating import project_create
from tests.factories import make_pair

project = project_create(slug="cars", name="Cars", preset=Preset.MINCU)
user = user_ensure(username="annotator_1", password="correct horse battery staple")
membership_set(project=project, user=user, role=Role.ANNOTATOR)
for _ in range({pairs}):
    make_pair(project)
print(token_create(user=user)[1])
"""


class OwnPostgres:
    """A throwaway PostgreSQL cluster on a port of its own, so a test may stop and start it."""

    def __init__(self, bin_dir: Path):
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="diffmark-pg-"))
        self.port = _free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/diffmark_faults"

    def _run(self, *command: str) -> None:
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*as_postgres, *command], check=True, capture_output=True, timeout=60)

    def init(self) -> None:
        if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
            shutil.chown(self.dir, "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.dir / "data"),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        )
        self.start()
        self._run(
            str(self.bin / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "diffmark_faults",
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.dir / "data"),
            "-o",
            options,
            "-l",
            str(self.dir / "log"),
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@pytest.fixture
def own_postgres():
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries here to start a throwaway cluster")
    cluster = OwnPostgres(bin_dir)
    try:
        cluster.init()
        yield cluster
    finally:
        cluster.remove()


def _call(method: str, url: str, token: str, body: dict | None = None, key: str = ""):
    """(status, headers, parsed body or text) of one HTTP request; never raises for a status."""
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    if key:
        headers["Idempotency-Key"] = key
    data = json.dumps(body).encode() if body is not None else b""
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, got, text = response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        status, got, text = error.code, error.headers, error.read().decode()
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = text
    return status, got, parsed


def _annotate_all(base: str, token: str, n: int, log: list, leased: list, submitted: list):
    """An annotator's client: lease, submit with an Idempotency-Key, and on 503 wait and repeat
    the same request, as the API's error asks."""
    for i in range(n):
        while True:
            status, headers, body = _call("POST", f"{base}/api/v1/projects/cars/next/", token)
            log.append(
                ("next", status, headers.get("Content-Type"), headers.get("Retry-After"), body)
            )
            if status != 503:
                break
            time.sleep(0.2)  # a real client sleeps Retry-After seconds; kept short here
        assert status == 200, (status, body)
        url = f"{base}/api/v1/assignments/{body['assignment']['id']}/submit/"
        leased.append(i)
        time.sleep(0.5)  # the annotator works on the pair
        while True:
            status, headers, body = _call("POST", url, token, answer(), key=f"submit-{i}")
            log.append(
                ("submit", status, headers.get("Content-Type"), headers.get("Retry-After"), body)
            )
            if status != 503:
                break
            time.sleep(0.2)
        assert status in (200, 201), (status, body)
        submitted.append(i)


def test_a_postgresql_restart_gives_clients_a_retryable_503_and_loses_nothing(
    own_postgres, tmp_path
):
    pairs = 12
    env = os.environ | {
        "DATABASE_URL": own_postgres.url,
        "MEDIA_ROOT": str(tmp_path / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=180,
    )
    setup = subprocess.run(
        [*manage, "shell", "-c", SETUP.format(pairs=pairs)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    token = setup.stdout.strip().splitlines()[-1]

    # The web server as deployed: production settings, a broker that is down (the cross-checks
    # wait for the sweep; nothing else to set up), persistent connections with health checks.
    port = _free_port()
    web_env = env | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "fault-test-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{_free_port()}/0",
    }
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        "--timeout",
        "30",
    ]
    log_file = (tmp_path / "web.log").open("w")
    web = subprocess.Popen(
        command, cwd=ROOT, env=web_env, stdout=log_file, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(lambda: _up(f"{base}/api/v1/projects/", token), "the web server", 30, 0.2)
        log, leased, submitted = [], [], []
        client = threading.Thread(
            target=_annotate_all, args=(base, token, pairs, log, leased, submitted)
        )
        client.start()
        _wait(lambda: len(leased) >= 4, "three submissions and a fourth lease")
        own_postgres.stop("fast")  # cut while the annotator works on a leased pair
        _wait(lambda: any(entry[1] == 503 for entry in log), "a 503 while PostgreSQL is down")
        time.sleep(1)
        own_postgres.start()
        client.join(timeout=60)
        assert not client.is_alive() and len(submitted) == pairs, (log[-1:], _tail(tmp_path))
    finally:
        web.terminate()
        web.wait(timeout=30)
        log_file.close()

    statuses = {entry[1] for entry in log}
    assert statuses <= {200, 201, 503}, statuses  # never a 500
    unavailable = [entry for entry in log if entry[1] == 503]
    assert "submit" in {entry[0] for entry in unavailable}  # repeated with its key, stored once
    for _, _, content_type, retry_after, body in unavailable:
        assert content_type == "application/json" and retry_after == "5"
        assert body["error"]["code"] == "unavailable"
    with psycopg.connect(own_postgres.url) as db:
        stored = db.execute(
            "select count(*), count(distinct idempotency_key), count(distinct pair_id) "
            "from annotator_annotation"
        ).fetchone()
    assert stored == (pairs, pairs, pairs)  # every submission once, none lost


def _tail(tmp_path: Path) -> str:
    return (tmp_path / "web.log").read_text()[-3000:]


def _up(url: str, token: str) -> bool:
    try:
        return _call("GET", url, token)[0] == 200
    except OSError:
        return False
