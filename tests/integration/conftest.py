"""A real Celery worker process for the integration tests (PostgreSQL + Redis)."""

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from config.celery import app as celery_app
from tests.conftest import reset_broker_pool

ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


KEYS = ("broker_url", "task_always_eager", "task_default_queue")


@pytest.fixture
def celery_worker(tmp_path, settings):
    """A worker process on a queue of its own, fed through the configured Redis broker."""
    broker = os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/0"
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": broker,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),  # the worker reads the files the test wrote
        "DIFFMARK_TEST_QUEUE": queue,  # what the worker itself sends comes back to it
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo"]
    command += ["-Q", queue, "-n", f"{queue}@%h", "--loglevel=WARNING", "--without-gossip"]
    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    saved = {key: celery_app.conf[key] for key in KEYS}
    celery_app.conf.update(broker_url=broker, task_always_eager=False, task_default_queue=queue)
    reset_broker_pool()  # an earlier test's pools would ping the tests' memory:// broker
    try:
        deadline = time.monotonic() + 60
        name = f"{queue}@{socket.gethostname()}"
        while not celery_app.control.ping(timeout=1, destination=[name]):
            assert worker.poll() is None, _log("the worker exited at start", tmp_path)
            assert time.monotonic() < deadline, _log("no worker within 60 s", tmp_path)
        yield worker
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        celery_app.conf.update(saved)
        reset_broker_pool()
        log.close()


def _log(message: str, tmp_path: Path) -> str:
    return f"{message}; its log:\n{(tmp_path / 'worker.log').read_text()[-3000:]}"
