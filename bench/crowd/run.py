"""The day-long crowd: Locust against gunicorn, real Celery workers (and beat), PostgreSQL and
a Redis broker of the run's own, with a worker and the broker restarted mid-run; then the
invariants, figures and plots.

    .venv/bin/python bench/crowd/run.py --minutes 60            # the hour
    .venv/bin/python bench/crowd/run.py --minutes 480           # the working day
    .venv/bin/python bench/crowd/run.py --minutes 8 --think 25  # a short proof

Seeds BENCH_DATABASE_URL (default `dm_scale28_bench_crowd`, recreated) with bench/scale_seed.py
(``--pairs``, a realistic mix whose imported share is the crowd's queue), starts redis-server on
``--redis-port`` (its own process, so restarting it touches nobody else's Redis), gunicorn on
``--port``, ``--celery-workers`` Celery workers and beat, samples each process's RSS every 5 s,
and runs Locust headless (bench/crowd/locustfile.py: ``--annotators`` at human pace, 2 leads,
1 researcher). At 40 % of the run it stops one worker (SIGTERM, then a new one), at 60 % it
shuts the broker down for ``--outage`` seconds and starts it again (the queue's content is
lost, as in a real outage; the sweeps send the lost work again).

Checks, printed and written to OUT/summary.json: submits acknowledged to the client vs
annotations in the database (0 lost, 0 doubled), 0 × 5xx, RSS per process not growing (the
median of the last fifth of the run within 10 % + 8 MB of the median of the second fifth),
p95 of next ≤ 50 ms after the first minute (gunicorn's workers start cold as 100 users arrive;
the whole run's figure is printed too; client-side time, network included), and that every pair
with two submissions got its cross-check once the sweeps ran. Plots (matplotlib):
OUT/latency.png (p50/p95 of next and submit over time) and OUT/rss.png.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402
    LOCAL_POSTGRES,
    gunicorn_start,
    recreate_database,
    server_env,
)

VENV = Path(sys.executable).parent
HOST = "127.0.0.1"


def _seed(args, database_url: str, out: Path) -> dict:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from accounts.services import token_create
    from bench.scale_seed import seed_project

    seeded = seed_project(
        slug="crowd", n_pairs=args.pairs, database_url=database_url,
        n_annotators=args.annotators,
    )  # fmt: skip
    from review.figures import figures_refresh

    figures_refresh(project_id=seeded.project_id)  # as beat would have for a project this size
    User = get_user_model()

    def tokens(names: list[str]) -> list[str]:
        return [token_create(user=User.objects.get(username=n), name="crowd")[1] for n in names]

    found = {
        "annotators": tokens(seeded.annotators),
        "leads": tokens(seeded.leads),
        "researchers": tokens([seeded.researcher]),
    }
    (out / "tokens.json").write_text(json.dumps(found))
    print(f"seeded {args.pairs:,} pairs in {seeded.seconds:.0f} s: {seeded.rows}")
    return {"project_id": seeded.project_id}


class Processes:
    """The run's own processes by role, restartable, with RSS sampling."""

    def __init__(self, env: dict, out: Path, args) -> None:
        self.env, self.out, self.args = env, out, args
        self.procs: dict[str, subprocess.Popen] = {}
        self.samples: list[tuple[float, str, float]] = []  # (t, role, RSS MB)
        self.events: list[tuple[float, str]] = []
        self.started = time.monotonic()
        self._stop = threading.Event()

    def t(self) -> float:
        return time.monotonic() - self.started

    def redis(self) -> None:
        self.procs["redis"] = subprocess.Popen(
            ["redis-server", "--port", str(self.args.redis_port), "--bind", HOST, "--save", "",
             "--appendonly", "no", "--dir", str(self.out)],
            stdout=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        time.sleep(0.5)

    def worker(self, n: int) -> None:
        self.procs[f"worker{n}"] = subprocess.Popen(
            [str(VENV / "celery"), "-A", "config", "worker", "-c", "1", "-n", f"crowd{n}@%h",
             "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=self.env, start_new_session=True,
            stdout=(self.out / f"worker{n}.log").open("a"), stderr=subprocess.STDOUT,
        )  # fmt: skip

    def beat(self) -> None:
        self.procs["beat"] = subprocess.Popen(
            [str(VENV / "celery"), "-A", "config", "beat", "--loglevel", "WARNING",
             "-s", str(self.out / "beat-schedule")],
            cwd=ROOT, env=self.env, start_new_session=True,
            stdout=(self.out / "beat.log").open("a"), stderr=subprocess.STDOUT,
        )  # fmt: skip

    def web(self) -> None:
        self.procs["gunicorn"] = gunicorn_start(
            ROOT, self.env, host=HOST, port=self.args.port, workers=self.args.web_workers
        )

    def stop(self, role: str, sig: int = signal.SIGTERM) -> None:
        proc = self.procs.pop(role)
        os.killpg(proc.pid, sig)
        proc.wait(timeout=60)

    def sample_forever(self) -> None:
        import psutil  # type: ignore[import-untyped]

        while not self._stop.wait(5):
            t = self.t()
            for role, proc in list(self.procs.items()):
                try:
                    parent = psutil.Process(proc.pid)
                    family = [parent, *parent.children(recursive=True)]
                except psutil.NoSuchProcess:
                    continue
                for k, p in enumerate(family):
                    try:
                        rss = p.memory_info().rss / 2**20
                    except psutil.NoSuchProcess:
                        continue
                    name = role if k == 0 else f"{role}.{k}"
                    self.samples.append((t, name, rss))

    def stop_all(self) -> None:
        self._stop.set()
        for role in list(self.procs):
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                self.stop(role)


def _disrupt(procs: Processes, seconds: float, outage: float) -> None:
    """One worker restarted at 40 %, the broker down for ``outage`` s at 60 %."""
    time.sleep(seconds * 0.4)
    procs.events.append((procs.t(), "worker1 stopped (SIGTERM) and started again"))
    procs.stop("worker1")
    procs.worker(1)
    time.sleep(seconds * 0.2)
    procs.events.append((procs.t(), f"broker shut down for {outage:.0f} s"))
    procs.stop("redis")
    time.sleep(outage)
    procs.redis()
    procs.events.append((procs.t(), "broker back"))


def _log(out: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in (out / "log").glob("submits-*.jsonl")
        for line in path.read_text().splitlines()
    ]


def _submits(out: Path) -> tuple[dict[int, str], list[dict]]:
    acknowledged: dict[int, str] = {}
    other: list[dict] = []
    for entry in _log(out):
        if entry["kind"] == "submit":
            acknowledged[entry["assignment"]] = entry["key"]
        elif entry["kind"] != "next":
            other.append(entry)
    return acknowledged, other


def _next_percentiles(out: Path, warm_up: float) -> dict:
    """p50/p95 of next over the whole run and after the first ``warm_up`` seconds."""
    samples = sorted((e["at"], e["ms"]) for e in _log(out) if e["kind"] == "next")
    if len(samples) < 20:
        return {}
    start = samples[0][0]

    def cut(values: list[float]) -> dict:
        q = statistics.quantiles(values, n=100)
        return {"n": len(values), "p50_ms": round(q[49], 1), "p95_ms": round(q[94], 1)}

    warm = [ms for at, ms in samples if at - start >= warm_up]
    return {"whole run": cut([ms for _, ms in samples]), f"after {warm_up:.0f} s": cut(warm)}


def _invariants(out: Path, project_id: int, since) -> dict:
    from django.db.models import Count

    from annotator.models import Annotation, Pair
    from annotator.submitting import key_digest
    from review.models import Agreement

    acknowledged, other = _submits(out)
    made = dict(
        Annotation.objects.filter(pair__project_id=project_id, created_at__gte=since).values_list(
            "assignment_id", "idempotency_key"
        )
    )
    lost = [a for a in acknowledged if a not in made]
    wrong_key = [a for a, k in acknowledged.items() if a in made and made[a] != key_digest(k)]
    unacknowledged = [a for a in made if a not in acknowledged]
    doubled = (
        Annotation.objects.filter(pair__project_id=project_id)
        .values("pair_id", "annotator_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    finished = Pair.objects.filter(project_id=project_id, n_submitted__gte=2)
    unchecked = finished.exclude(pk__in=Agreement.objects.values("pair_id")).count()
    return {
        "submits_acknowledged": len(acknowledged),
        "annotations_made": len(made),
        "lost": len(lost),
        "doubled": doubled,
        "acknowledged_with_another_key": len(wrong_key),
        "made_but_not_acknowledged": len(unacknowledged),
        "server_errors": sum(1 for e in other if e["kind"] == "error" and e["status"] >= 500),
        "no_answer": sum(1 for e in other if e["kind"] == "error" and not e["status"]),
        "gave_up": sum(1 for e in other if e["kind"] == "gave_up"),
        "refused": sum(1 for e in other if e["kind"] == "refused"),
        "finished_pairs_without_cross_check": unchecked,
    }


def _latency(out: Path) -> tuple[dict, dict]:
    """Locust's totals per request name, and the history rows (time → name → p50, p95)."""
    totals = {}
    with (out / "crowd_stats.csv").open() as f:
        for row in csv.DictReader(f):
            totals[row["Name"]] = {
                "requests": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "p50_ms": float(row["50%"] or 0),
                "p95_ms": float(row["95%"] or 0),
                "p99_ms": float(row["99%"] or 0),
            }
    history: dict = defaultdict(dict)
    with (out / "crowd_stats_history.csv").open() as f:
        for row in csv.DictReader(f):
            if row["Name"] in ("next", "submit") and row["95%"] not in ("", "N/A"):
                history[int(row["Timestamp"])][row["Name"]] = (float(row["50%"]), float(row["95%"]))
    return totals, history


def _memory(samples: list[tuple[float, str, float]], seconds: float) -> dict:
    """Per process: median RSS of the second fifth of the run and of the last fifth."""
    by_role: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for t, role, rss in samples:
        by_role[role].append((t, rss))
    found = {}
    for role, series in sorted(by_role.items()):
        early = [r for t, r in series if seconds * 0.2 <= t < seconds * 0.4]
        late = [r for t, r in series if t >= seconds * 0.8]
        if not early or not late:
            continue
        a, b = statistics.median(early), statistics.median(late)
        found[role] = {"early_mb": round(a, 1), "late_mb": round(b, 1), "grew": b > a * 1.1 + 8}
    return found


def _plots(out: Path, history: dict, samples, events, started_at: int) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    fig, ax = plt.subplots(figsize=(10, 4))
    for name, style in (("next", "-"), ("submit", "--")):
        times = sorted(t for t in history if name in history[t])
        xs = [(t - started_at) / 60 for t in times]
        ax.plot(xs, [history[t][name][1] for t in times], style, label=f"{name} p95")
        ax.plot(xs, [history[t][name][0] for t in times], style, alpha=0.5, label=f"{name} p50")
    ax.set_ylim(0, 400)  # the steady tens of ms readable; the cold start's seconds go off the top
    for t, label in events:
        ax.axvline(t / 60, color="grey", linestyle=":")
        ax.text(t / 60, 390, label[:24], fontsize=7, rotation=90, va="top")
    ax.axhline(50, color="red", linewidth=0.6, label="50 ms")
    ax.set(xlabel="minutes", ylabel="ms (Locust, rolling window)", title="Latency over time")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    fig, ax = plt.subplots(figsize=(10, 4))
    by_role: dict[str, list] = defaultdict(list)
    for t, role, rss in samples:
        by_role[role].append((t / 60, rss))
    for role, series in sorted(by_role.items()):
        ax.plot(*zip(*series, strict=True), label=role, linewidth=1)
    for t, _ in events:
        ax.axvline(t / 60, color="grey", linestyle=":")
    ax.set(xlabel="minutes", ylabel="RSS (MB)", title="Memory per process over time")
    ax.legend(fontsize=6, ncol=4)
    fig.tight_layout()
    fig.savefig(out / "rss.png", dpi=110)
    return [str(out / "latency.png"), str(out / "rss.png")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--pairs", type=int, default=40_000)
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--think", type=float, default=25, help="seconds per pair, about")
    parser.add_argument("--port", type=int, default=8161)
    parser.add_argument("--redis-port", type=int, default=8162)
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--outage", type=float, default=20)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "crowd28")
    args = parser.parse_args()
    out = args.out
    (out / "log").mkdir(parents=True, exist_ok=True)
    for old in (out / "log").glob("*.jsonl"):
        old.unlink()
    database_url = os.environ.get("BENCH_DATABASE_URL", LOCAL_POSTGRES + "dm_scale28_bench_crowd")
    broker = f"redis://{HOST}:{args.redis_port}/0"
    env = server_env(os.environ, out, database_url=database_url, hosts=HOST) | {
        "CELERY_BROKER_URL": broker,
        "DIFFMARK_TOKEN_RATE": "100000/minute",
        "DIFFMARK_RESEND_AFTER_MINUTES": "1",
        "DIFFMARK_SWEEP_SECONDS": "30",
        "CROWD_SLUG": "crowd",
        "CROWD_TOKENS": str(out / "tokens.json"),
        "CROWD_LOG_DIR": str(out / "log"),
        "CROWD_THINK": str(args.think),
    }
    os.environ.update(env)
    recreate_database(database_url)
    seeded = _seed(args, database_url, out)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, check=True
    )
    from django.utils import timezone

    since = timezone.now()
    seconds = args.minutes * 60
    procs = Processes(env, out, args)
    try:
        procs.redis()
        for n in range(1, args.celery_workers + 1):
            procs.worker(n)
        procs.beat()
        procs.web()
    except BaseException:
        procs.stop_all()
        raise
    sampler = threading.Thread(target=procs.sample_forever, daemon=True)
    sampler.start()
    disruptor = threading.Thread(target=_disrupt, args=(procs, seconds, args.outage), daemon=True)
    started_at = int(time.time())
    disruptor.start()
    users = args.annotators + 3
    try:
        subprocess.run(
            [str(VENV / "locust"), "-f", str(ROOT / "bench/crowd/locustfile.py"), "--headless",
             "-u", str(users), "-r", "10", "-t", f"{int(seconds)}s", "--host",
             f"http://{HOST}:{args.port}", "--csv", str(out / "crowd"), "--csv-full-history",
             "--only-summary", "--stop-timeout", "60", "--loglevel", "WARNING"],
            cwd=ROOT, env=env, check=False,
        )  # fmt: skip
        time.sleep(max(60, 2 * int(env["DIFFMARK_SWEEP_SECONDS"])))  # the sweeps catch up
    finally:
        procs.stop_all()
    found = _invariants(out, seeded["project_id"], since)
    totals, history = _latency(out)
    memory = _memory(procs.samples, seconds)
    with (out / "rss.csv").open("w", newline="") as f:
        csv.writer(f).writerows([("seconds", "process", "rss_mb"), *procs.samples])
    plots = _plots(out, history, procs.samples, procs.events, started_at)
    next_times = _next_percentiles(out, 60)
    next_p95 = next_times.get("after 60 s", {}).get("p95_ms")
    summary = {
        "minutes": args.minutes,
        "users": users,
        "pairs": args.pairs,
        "events": procs.events,
        "invariants": found,
        "next": next_times,
        "latency": totals,
        "memory": memory,
        "plots": plots,
        "checks": {
            "no lost submits": found["lost"] == 0,
            "no doubled submits": found["doubled"] == 0
            and found["acknowledged_with_another_key"] == 0,
            "no 5xx": found["server_errors"] == 0,
            "memory not growing": not any(m["grew"] for m in memory.values()),
            "next p95 <= 50 ms (after the first minute)": next_p95 is not None and next_p95 <= 50,
            "every finished pair cross-checked": found["finished_pairs_without_cross_check"] == 0,
        },
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    print(json.dumps(summary, indent=2, default=str))


if __name__ == "__main__":
    main()
