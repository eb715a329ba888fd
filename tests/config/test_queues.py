"""Every task has a queue, and docker-compose.yml runs a worker pool for every queue
(docs/scaling.md). The tests themselves run on one queue (config/settings_test.py)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from config import settings as production
from config.celery import app

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def _our_tasks() -> set[str]:
    app.loader.import_default_modules()
    return {name for name in app.tasks if not name.startswith("celery.")}


def test_every_route_names_a_task_and_a_queue():
    routes = production.CELERY_TASK_ROUTES
    assert set(routes) <= _our_tasks()
    assert {route["queue"] for route in routes.values()} <= set(production.DIFFMARK_QUEUES)


def test_a_worker_without_q_listens_to_every_queue():
    assert [queue.name for queue in production.CELERY_TASK_QUEUES] == list(
        production.DIFFMARK_QUEUES
    )


def test_only_the_beat_s_sweeps_go_to_the_default_queue():
    swept = {entry["task"] for entry in production.CELERY_BEAT_SCHEDULE.values()}
    unrouted = _our_tasks() - set(production.CELERY_TASK_ROUTES)
    assert unrouted == swept
    assert production.CELERY_TASK_DEFAULT_QUEUE == "celery" in production.DIFFMARK_QUEUES


def test_compose_runs_one_worker_pool_per_queue():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    listened = []
    for service in services.values():
        command = " ".join(str(service.get("command", "")).split())
        if " worker " in f" {command} ":
            (queues,) = re.findall(r"-Q (\S+)", command)
            assert re.search(r"-n \w+@%h", command), command  # scaled copies get their own name
            listened += queues.split(",")
    assert sorted(listened) == sorted(production.DIFFMARK_QUEUES)
