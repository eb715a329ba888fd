"""Where a `next` and a `submit` spend their time, inside one process.

    .venv/bin/python bench/profile_hot.py [--rounds 100] [--overlap 1]

Uses the database in DATABASE_URL (default: a throwaway SQLite file), migrates it, seeds one
project, and runs next → submit through Django's test client with an API token (the whole stack:
middleware, DRF, token auth, view, serializer, JSON). Prints, per request kind: the queries with
their SQL, the wall time per request (until the response is ready, as a server would start
writing it, and with the response's close(), where work run after the response goes), the CPU
per request (close() included), and the cumulative time spent in the named stages below,
measured with cProfile over all rounds (profiling inflates absolute times; compare the shares).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import bench_answer, stamping_handler  # noqa: E402

# (label, file suffix, function name): the stages of a request worth naming.
STAGES = [
    ("whole request (test client)", "django/test/client.py", "request"),
    ("middleware chain + view", "django/core/handlers/base.py", "get_response"),
    ("DRF dispatch (auth + view + render)", "rest_framework/views.py", "dispatch"),
    ("token auth (api.authentication)", "api/authentication.py", "authenticate"),
    ("session middleware", "django/contrib/sessions/middleware.py", "process_response"),
    ("CSRF middleware", "django/middleware/csrf.py", "process_view"),
    ("project lookup + role (view)", "projects/access.py", "project_role"),
    ("lease: assignment_lease_next_in", "annotator/leasing.py", "assignment_lease_next_in"),
    ("lease: assignments_expire", "annotator/leasing.py", "assignments_expire"),
    ("lease: _lease_from", "annotator/leasing.py", "_lease_from"),
    ("lease body + LeaseSerializer", "api/annotate.py", "_lease_body"),
    ("submit: annotation_submit", "annotator/submitting.py", "annotation_submit"),
    ("submit: _by_key (idempotency)", "annotator/submitting.py", "_by_key"),
    ("submit: parse_answer", "pairdiff/answers.py", "parse_answer"),
    ("submit: assignment_renew", "annotator/leasing.py", "assignment_renew"),
    ("submit: agreement, eager in-request", "review/tasks.py", "compute_agreement"),
    ("submit: gold scoring, eager", "review/tasks.py", "score_gold_annotation"),
    ("serializer .data", "rest_framework/serializers.py", "data"),
    ("JSON render", "rest_framework/renderers.py", "render"),
    ("transaction commit", "django/db/backends/base/base.py", "commit"),
    ("SQL execute (all queries)", "django/db/backends/utils.py", "_execute"),
]


def _env() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "profile-only-secret-key-0123456789-abcdefghijklmnopqrst")
    os.environ["DEBUG"] = "0"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ["SECURE_SSL_REDIRECT"] = "0"  # the test client speaks plain HTTP
    os.environ.setdefault("STATIC_ROOT", tempfile.mkdtemp(prefix="diffmark-profile-static-"))
    os.environ.pop("CELERY_BROKER_URL", None)  # as `make run`: no broker, tasks run in-request
    os.environ.setdefault("MEDIA_ROOT", tempfile.mkdtemp(prefix="diffmark-profile-media-"))
    if "DATABASE_URL" not in os.environ:
        path = Path(tempfile.mkdtemp(prefix="diffmark-profile-")) / "db.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"


def _seed(n_pairs: int, overlap: int) -> tuple[str, str]:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from accounts.services import token_create
    from annotator.models import Pair
    from annotator.services import PairInput, pair_create
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import Role
    from tests.images import edited_pair

    project = project_create(slug="profile", name="Profile", overlap=overlap)
    a, b = edited_pair(size=(640, 480))
    template = pair_create(project=project, pair_input=PairInput(a, b, external_id="p0"))
    names = ("image_a", "image_b", "thumb_a", "thumb_b", "width_a", "height_a", "width_b")
    shared = {f: getattr(template, f) for f in (*names, "height_b", "format_a", "format_b")}
    Pair.objects.bulk_create(
        Pair(
            project=project,
            number=i + 1,
            external_id=f"p{i}",
            sha256_a=f"{i:064x}",
            sha256_b=f"{i:064x}",
            **shared,
        )
        for i in range(1, n_pairs)
    )
    user = user_ensure(username="profiler", password="profile-only-password-1")
    membership_set(project=project, user=user, role=Role.ANNOTATOR)
    return project.slug, token_create(user=user, name="profile")[1]


def _backend_cpu(connection) -> float | None:
    """CPU seconds the PostgreSQL backend serving `connection` has used so far, when that server
    runs on this machine (read from /proc); None on SQLite or a remote server."""
    if connection.vendor != "postgresql":
        return None
    pid = getattr(connection.connection, "info", None) and connection.connection.info.backend_pid
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.95)] * 1000


def _stage_times(profile: cProfile.Profile, rounds: int) -> list[str]:
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    lines = []
    for label, suffix, name in STAGES:
        total, calls = 0.0, 0
        for (filename, _, func), (_, ncalls, _, cumtime, _) in stats.items():
            if func == name and filename.endswith(suffix):
                total += cumtime
                calls += ncalls
        if calls:
            lines.append(
                f"    {label:<40} {total / rounds * 1000:8.2f} ms/request  ({calls} calls)"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--overlap", type=int, default=1)
    parser.add_argument(
        "--plain", action="store_true", help="no cProfile: wall times as served (p50 and p95)"
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="cProfile counts this process's CPU time, not wall time (steadier on a busy machine)",
    )
    args = parser.parse_args()
    _env()
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    slug, token = _seed(args.rounds * 2 + 20, args.overlap)
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    handler = client.handler = stamping_handler()

    def profile() -> cProfile.Profile:
        return cProfile.Profile(time.process_time) if args.cpu else cProfile.Profile()

    profiles = {"next": profile(), "submit": profile()}
    walls: dict[str, list[float]] = {"next": [], "submit": []}  # until the response is ready
    closed: dict[str, list[float]] = {"next": [], "submit": []}  # and its close()
    cpus: dict[str, list[float]] = {"next": [], "submit": []}  # this process only
    db_cpus: dict[str, list[float]] = {"next": [], "submit": []}  # its PostgreSQL backend
    sql: dict[str, list[str]] = {}

    def call(kind: str, path: str, **extra):
        connection.queries_log.clear()  # past its 9,000 entries the capture comes back empty
        with CaptureQueriesContext(connection) as queries:
            db_cpu = _backend_cpu(connection)
            started, cpu = time.perf_counter(), time.process_time()
            if not args.plain:
                profiles[kind].enable()
            response = client.post(path, **extra)
            if not args.plain:
                profiles[kind].disable()
            closed[kind].append(time.perf_counter() - started)
            walls[kind].append(handler.answered - started)
            cpus[kind].append(time.process_time() - cpu)
            if db_cpu is not None:
                db_cpus[kind].append((_backend_cpu(connection) or db_cpu) - db_cpu)
        sql[kind] = [q["sql"] for q in queries.captured_queries]
        assert response.status_code in (200, 201), (kind, response.status_code, response.content)
        return response

    for i in range(args.rounds + 5):
        if i == 5:  # the first rounds import modules and warm caches; measure after them
            for kind in profiles:
                profiles[kind] = profile()
                walls[kind] = []
                closed[kind] = []
                cpus[kind] = []
                db_cpus[kind] = []
        lease = call("next", f"/api/v1/projects/{slug}/next/")
        assignment = lease.json()["assignment"]["id"]
        call(
            "submit",
            f"/api/v1/assignments/{assignment}/submit/",
            data=bench_answer(),
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY=f"p-{i}",
        )
    print(f"database: {connection.vendor}; overlap {args.overlap}; {args.rounds} rounds measured")
    for kind in ("next", "submit"):
        p50, p95 = _percentiles(walls[kind])
        c50, c95 = _percentiles(closed[kind])
        cpu = mean(cpus[kind]) * 1000
        print(
            f"\n== {kind}: {len(sql[kind])} queries; wall p50 {p50:.2f} ms, p95 {p95:.2f} ms "
            f"(with close(): {c50:.2f} / {c95:.2f}); "
            f"CPU per request (mean): this process {cpu:.2f} ms"
            + (
                f", its PostgreSQL backend {mean(db_cpus[kind]) * 1000:.2f} ms"
                if db_cpus[kind]
                else ""
            )
        )
        for number, statement in enumerate(sql[kind], 1):
            print(f"  {number:2}. {statement[:400]}")
        if args.plain:
            continue
        print("  cumulative time under cProfile, per request:")
        print("\n".join(_stage_times(profiles[kind], args.rounds)))
        pstats.Stats(profiles[kind]).sort_stats("tottime").print_stats(12)
        if os.environ.get("PROFILE_DUMP"):
            profiles[kind].dump_stats(f"{os.environ['PROFILE_DUMP']}.{kind}")


if __name__ == "__main__":
    main()
