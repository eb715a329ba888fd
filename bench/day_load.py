"""A realistic day under load: annotators, leads and a release build at once, on PostgreSQL.

    .venv/bin/python bench/day_load.py [--pairs 100000] [--annotators 32] [--leads 2]
        [--seconds 120] [--released 2000] [--workers 4]

Seeds a project of N pairs (all sharing two images) and a second project of accepted pairs with
their own original files; starts gunicorn and a real Celery worker (with beat) on Redis (db 7
unless BENCH_BROKER_URL says otherwise). Then, for the given time: each annotator loops next → two
draft saves → submit (one annotator in five draws the box elsewhere, so disputes arise); each
lead loops over the disputes list, the agreement metrics and resolving the oldest dispute;
after 5 s a lead builds a release of the second project over REST and polls its job. Prints
latency percentiles and errors per call, the release's build time, whether the worker kept up,
and checks the invariants at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.annotate_load import (  # noqa: E402
    HOST,
    PORT,
    Client,
    _check_invariants,
    _environment,
    _percentiles,
)
from bench.common import LOCAL_POSTGRES, gunicorn_start, recreate_database  # noqa: E402


def _answer(elsewhere: bool) -> dict:
    box_b = [[50, 30, 70, 50]] if elsewhere else [[20, 10, 40, 30]]
    change = {
        "category": "attribute",
        "description": "The patch changed colour.",
        "entity_a": "patch",
        "entity_b": "patch",
        "boxes_a": [[20, 10, 40, 30]],
        "boxes_b": box_b,
    }
    return {"tier": "excellent", "defects": [], "time_spent_ms": 9000, "changes": [change]}


def _seed(args, media: Path) -> tuple[list[str], list[str]]:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from accounts.services import token_create
    from bench.annotate_load import _seed as seed_pairs
    from bench.build_release import _seed as seed_accepted
    from projects.members import membership_set, user_ensure
    from projects.models import Project, Role

    started = time.perf_counter()
    _, annotator_tokens, _ = seed_pairs(args.pairs, args.annotators)
    seed_accepted(args.released, (640, 480), media)
    lead_tokens = []
    for i in range(args.leads):
        lead = user_ensure(username=f"lead{i}", password="load-test-password")
        for project in Project.objects.all():
            membership_set(project=project, user=lead, role=Role.LEAD)
        lead_tokens.append(token_create(user=lead, name="load")[1])
    print(
        f"seeded {args.pairs} pairs and {args.released} accepted pairs in "
        f"{time.perf_counter() - started:.0f} s"
    )
    return annotator_tokens, lead_tokens


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: list[tuple] = []

    def add(self, name: str, status: int, elapsed: float, ok: tuple[int, ...], data: bytes):
        with self.lock:
            self.times[name].append(elapsed)
            if status not in ok:
                self.errors.append((name, status, data[:160]))


def _annotator(token: str, index: int, deadline: float, tally: Tally) -> None:
    client = Client(token)
    body = _answer(elsewhere=index % 5 == 0)
    while time.monotonic() < deadline:
        status, data, elapsed = client.call("POST", "/api/v1/projects/load/next/")
        tally.add("next", status, elapsed, (200, 204), data)
        if status != 200:
            if status == 204:
                return
            continue
        assignment = json.loads(data)["assignment"]["id"]
        for _ in range(2):
            status, data, elapsed = client.call(
                "PUT", f"/api/v1/assignments/{assignment}/draft/", body
            )
            tally.add("draft", status, elapsed, (200,), data)
        status, data, elapsed = client.call(
            "POST",
            f"/api/v1/assignments/{assignment}/submit/",
            body,
            **{"Idempotency-Key": f"day-{assignment}"},
        )
        tally.add("submit", status, elapsed, (200, 201), data)


def _lead(token: str, deadline: float, tally: Tally) -> None:
    client = Client(token)
    while time.monotonic() < deadline:
        status, data, elapsed = client.call("GET", "/api/v1/projects/load/disputes/")
        tally.add("disputes", status, elapsed, (200,), data)
        status, _, elapsed = client.call("GET", "/api/v1/projects/load/agreement/")
        tally.add("agreement", status, elapsed, (200,), b"")
        disputes = json.loads(data).get("results", []) if status == 200 else []
        if disputes:
            status, data, elapsed = client.call(
                "POST",
                f"/api/v1/pairs/{disputes[0]['id']}/resolution/",
                {"decision": "accept_1", "comment": "load bench"},
            )
            # 409/400: another lead resolved it first — expected between two leads.
            tally.add("resolution", status, elapsed, (201, 400, 409), data)
        time.sleep(1.0)  # a person reads before the next click


def _release(token: str, tally: Tally, result: dict) -> None:
    time.sleep(5)
    client = Client(token)
    status, data, elapsed = client.call(
        "POST",
        "/api/v1/projects/bench/releases/",
        {"name": "day", "seed": 1, "test_per_category": 200, "test_ratio": [1, 2, 2]},
    )
    tally.add("release create", status, elapsed, (202,), data)
    if status != 202:
        return
    started = time.monotonic()
    job = json.loads(data)["job"]["id"]
    while time.monotonic() - started < 1800:
        status, data, elapsed = client.call("GET", f"/api/v1/jobs/{job}/")
        tally.add("job poll", status, elapsed, (200,), data)
        state = json.loads(data)["status"] if status == 200 else ""
        if state in ("succeeded", "failed"):
            result.update(status=state, seconds=time.monotonic() - started)
            return
        time.sleep(1)


def _start(args, env: dict, log) -> list[subprocess.Popen]:
    gunicorn = gunicorn_start(ROOT, env, host=HOST, port=PORT, workers=args.workers)
    worker = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/celery"),
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            "--concurrency=1",
            "--loglevel=WARNING",
            "--without-gossip",
            "-Q",
            "celery",
            "--beat",
            "--schedule",
            str(Path(log.name).with_name("beat-schedule")),
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return [gunicorn, worker]


def _backlog() -> tuple[int, int]:
    """Pairs fully annotated, and those of them still without an agreement."""
    from django.db.models import F

    from annotator.models import Pair

    full = Pair.objects.filter(project__slug="load", n_submitted__gte=F("project__overlap"))
    return full.count(), full.filter(agreement__isnull=True).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=32)
    parser.add_argument("--leads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--released", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    database_url = os.environ.get("BENCH_DATABASE_URL", LOCAL_POSTGRES + "diffmark_bench_day")
    broker = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/7")
    with tempfile.TemporaryDirectory(prefix="diffmark-day-") as tmp:
        env = _environment(Path(tmp), database_url) | {"CELERY_BROKER_URL": broker}
        os.environ.update(env)
        recreate_database(database_url)
        subprocess.run(["redis-cli", "-u", broker, "flushdb"], check=True, capture_output=True)
        annotators, leads = _seed(args, Path(tmp) / "media")
        log = (Path(tmp) / "worker.log").open("w")
        processes = _start(args, env, log)
        tally = Tally()
        release: dict[str, Any] = {}
        try:
            deadline = time.monotonic() + args.seconds
            threads = [
                threading.Thread(target=_annotator, args=(t, i, deadline, tally))
                for i, t in enumerate(annotators)
            ]
            threads += [threading.Thread(target=_lead, args=(t, deadline, tally)) for t in leads]
            threads.append(threading.Thread(target=_release, args=(leads[0], tally, release)))
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads[:-1]:
                thread.join()
            elapsed = time.perf_counter() - started
            full, waiting = _backlog()
            drain = time.perf_counter()
            while waiting and time.perf_counter() - drain < 120:
                time.sleep(1)
                full, waiting = _backlog()
            threads[-1].join()
            print(
                f"{args.annotators} annotators + {args.leads} leads for {elapsed:.0f} s; "
                f"gunicorn {args.workers} sync workers + 1 Celery worker with beat; "
                f"{os.cpu_count()} cores shared with the load generator"
            )
            for name, times in tally.times.items():
                shown = _percentiles(times) if len(times) > 1 else f"{times[0] * 1000:.1f} ms"
                print(f"  {name:15} {len(times):6} calls  {shown}")
            print(f"  annotations/s: {len(tally.times['submit']) / elapsed:.1f}")
            print(f"  errors: {len(tally.errors)} {tally.errors[:3]}")
            print(f"  release of {args.released} pairs under load: {release or 'did not finish'}")
            print(
                f"  agreements: {full} pairs fully annotated, {waiting} still waiting "
                f"{time.perf_counter() - drain:.0f} s after the load stopped"
            )
            _check_invariants("load")
        finally:
            for process in processes:
                os.killpg(process.pid, signal.SIGTERM)
            for process in processes:
                process.wait(timeout=60)


if __name__ == "__main__":
    main()
