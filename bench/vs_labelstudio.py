"""Diffmark against Label Studio, side by side on one machine, in one run.

    .venv/bin/python bench/vs_labelstudio.py            # the full run (about 15 minutes)
    .venv/bin/python bench/vs_labelstudio.py --quick    # small loops, to check the bench works

Servers, all on 127.0.0.1, each against a PostgreSQL database of its own that the bench
recreates (local server at 127.0.0.1:5432, user postgres):

- Label Studio 1.23.2 as `label-studio start` runs it (Django's runserver, one process), installed
  into its own virtualenv outside the project when missing (--ls-venv, default
  $DIFFMARK_BENCH_LS_VENV or /tmp/ls-bench-venv); database `diffmark_bench_ls`.
- Diffmark as `make run` serves it (`manage.py runserver`, DEBUG=1) and under gunicorn with 4
  sync workers (DEBUG=0); database `diffmark_bench_vs` (--db), recreated for each.

Each is seeded with the same number of image-pair tasks (one real 640×480 PNG pair, overlap 1)
and runs the same loops over its REST API: one client next → submit ×300, then 8 distinct users
×40 started together from a barrier. The table reports client-side latency, submits/s, and the
peak resident memory of the largest serving process while the loops run (VmRSS sampled every
0.25 s). Diffmark's "server-side" figures: under gunicorn, its own request time for the 1-client
loop (read from its access log); in-process, the WSGI application called as a server calls it
(the whole middleware and DRF stack), Django's test client, and the bare service call.
Every server runs in its own process group and is stopped on exit, Ctrl-C or failure.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench import labelstudio  # noqa: E402
from bench.common import (  # noqa: E402
    LOCAL_POSTGRES,
    bench_answer,
    recreate_database,
    server_env,
    stamping_handler,
)
from bench.loops import (  # noqa: E402
    RssSampler,
    expect,
    http_call,
    many_users,
    one_client,
    port_is_free,
    start_group,
    stop_group,
    wait_until_answers,
)
from bench.vs_labelstudio_report import (  # noqa: E402
    InProcess,
    Result,
    machine,
    samples_line,
    table,
)

HOST = "127.0.0.1"
SIZE = (640, 480)
# Recreated by each run: parallel runs on one machine give each its own (--db).
DIFFMARK_DB = LOCAL_POSTGRES + os.environ.get("DIFFMARK_BENCH_DB", "diffmark_bench_vs")
LS_DB = "diffmark_bench_ls"
BASE_ENV = dict(os.environ)  # before the Diffmark settings below are added to it


# --- Diffmark ----------------------------------------------------------------------------------


def _diffmark_env(workdir: Path, *, debug: bool) -> dict[str, str]:
    env = {k: v for k, v in BASE_ENV.items() if not k.startswith("CELERY_")}
    return server_env(
        env, workdir, database_url=DIFFMARK_DB, hosts=f"{HOST},testserver", debug=debug
    )


def diffmark_seed(n_pairs: int, usernames: list[str]) -> tuple[str, dict[str, str]]:
    """A fresh database with one overlap-1 project of `n_pairs` pairs (all sharing one real image
    pair, as imports of the same files would) and an API token per user."""
    import django
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    connections.close_all()
    recreate_database(DIFFMARK_DB)
    call_command("migrate", verbosity=0)
    from accounts.services import token_create
    from annotator.models import Pair
    from annotator.services import PairInput, pair_create
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import Role
    from tests.images import edited_pair

    project = project_create(slug="vs", name="Speed against Label Studio", overlap=1)
    a, b = edited_pair(size=SIZE)
    template = pair_create(project=project, pair_input=PairInput(a, b, external_id="p0"))
    shared = {
        f: getattr(template, f)
        for f in ("image_a", "image_b", "thumb_a", "thumb_b", "width_a", "height_a")
        + ("width_b", "height_b", "format_a", "format_b")
    }
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
    tokens = {}
    for name in usernames:
        user = user_ensure(username=name, password="bench-only-password-1")
        membership_set(project=project, user=user, role=Role.ANNOTATOR)
        tokens[name] = token_create(user=user, name="bench")[1]
    connections.close_all()  # the servers must be the only clients while they are measured
    return project.slug, tokens


class DiffmarkDriver:
    """next → submit over Diffmark's public REST API (DESIGN.md), one token per user."""

    def __init__(self, port: int, slug: str, tokens: dict[str, str]) -> None:
        self.port, self.slug, self.tokens = port, slug, tokens

    def _headers(self, user: str) -> dict:
        return {"Authorization": f"Token {self.tokens[user]}", "Content-Type": "application/json"}

    def lease(self, user: str) -> tuple[int | None, float]:
        path = f"/api/v1/projects/{self.slug}/next/"
        status, data, elapsed = http_call(HOST, self.port, "POST", path, self._headers(user))
        if status == 204:
            return None, elapsed
        expect(status, data, (200,), "Diffmark next")
        return json.loads(data)["assignment"]["id"], elapsed

    def submit(self, user: str, item: int) -> float:
        path = f"/api/v1/assignments/{item}/submit/"
        headers = self._headers(user) | {"Idempotency-Key": f"vs-{item}"}
        status, data, elapsed = http_call(HOST, self.port, "POST", path, headers, bench_answer())
        expect(status, data, (201,), "Diffmark submit")
        return elapsed


def served_times(access_log: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds gunicorn itself took for the 1-client loop's nexts and submits, read from its
    access log (one line per request, in the order the sole client sent them; the warm-up round
    left out)."""
    lines = access_log.read_text().splitlines()[2 : 2 + 2 * rounds]
    served: dict[str, list[float]] = {"next": [], "submit": []}
    for line in lines:
        _method, path, _status, micros = line.split()
        served["next" if path.endswith("/next/") else "submit"].append(int(micros) / 1e6)
    return served["next"], served["submit"]


def diffmark_check(slug: str, submits: int) -> list[str]:
    """What the database holds after the loops: one annotation per submit, none over overlap."""
    from django.db import connections
    from django.db.models import Count

    from annotator.models import Annotation

    stored = Annotation.objects.filter(pair__project__slug=slug)
    over = stored.values("pair_id").annotate(n=Count("id")).filter(n__gt=1).count()
    note = f"{stored.count()} annotations stored for {submits} submits; pairs over overlap: {over}"
    connections.close_all()
    return [note]


def run_diffmark(args, stack: contextlib.ExitStack, workdir: Path, *, gunicorn: bool) -> Result:
    name = f"Diffmark, gunicorn ×{args.workers}" if gunicorn else "Diffmark, runserver"
    print(f"\n== {name}", flush=True)
    env = _diffmark_env(workdir, debug=not gunicorn)
    os.environ.update(_diffmark_env(workdir, debug=False))
    (workdir / "static").mkdir(exist_ok=True)
    slug, tokens = diffmark_seed(args.pairs, _usernames(args))
    if gunicorn:
        argv = [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application"]
        argv += ["--bind", f"{HOST}:{args.port}", "--workers", str(args.workers)]
        argv += ["--log-level", "warning"]
        # %(D)s: gunicorn's request time in µs, from the parsed request until the response is
        # written (before its close(), where the work after the response runs).
        argv += ["--access-logfile", str(workdir / "access.log")]
        argv += ["--access-logformat", "%(m)s %(U)s %(s)s %(D)s"]
    else:  # exactly what `make run` starts (DEBUG=1, the autoreloader watching the files)
        argv = [sys.executable, "manage.py", "runserver", f"{HOST}:{args.port}"]
    server = start_group(argv, env=env, cwd=str(ROOT), log_path=str(workdir / "diffmark.log"))
    stack.callback(stop_group, server)
    wait_until_answers(HOST, args.port, "/login/", seconds=120, process=server)
    driver = DiffmarkDriver(args.port, slug, tokens)
    result = _loops("gunicorn" if gunicorn else "runserver", name, driver, args, server.pid)
    stop_group(server)
    if gunicorn:
        result.served_next, result.served_submit = served_times(workdir / "access.log", args.single)
    submits = 1 + len(result.single.submit) + len(result.crowd.submit)  # 1: the warm-up
    result.notes += diffmark_check(slug, submits)
    return result


class WsgiCaller:
    """Diffmark's WSGI application called as a server calls it: an environ in, the response's
    body out (timed until it is complete), then its close(), where the work after it runs."""

    def __init__(self, token: str) -> None:
        from django.core.handlers.wsgi import WSGIHandler

        self.app, self.token = WSGIHandler(), token
        self.status = ""

    def _start_response(self, status: str, headers: list, exc_info=None, /) -> Callable:
        self.status = status
        return lambda data: None  # the body comes back as the iterable, never written here

    def post(self, path: str, body: bytes = b"", **headers: str) -> tuple[str, bytes, float]:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": "",
            "SERVER_NAME": HOST,
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": HOST,
            "HTTP_HOST": HOST,
            "HTTP_AUTHORIZATION": f"Token {self.token}",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            **headers,
        }
        if body:
            environ["CONTENT_TYPE"] = "application/json"
        started = time.perf_counter()
        response = self.app(environ, self._start_response)
        data = b"".join(response)
        elapsed = time.perf_counter() - started
        response.close()
        return self.status, data, elapsed


def run_in_process(args, workdir: Path) -> InProcess:
    """Diffmark's next and submit timed inside one process, through the whole stack (middleware,
    URL routing, DRF, token auth, view, serializer, JSON): the WSGI application called as a
    server calls it — what a server spends on a request, without the network, the client or the
    server's own HTTP parsing — and through Django's test client, which also builds each request;
    then the bare service call."""
    print("\n== Diffmark in-process (server-side time)", flush=True)
    os.environ.update(_diffmark_env(workdir, debug=False))
    slug, tokens = diffmark_seed(args.single * 3 + 10, ["inproc"])  # warm-ups, counted: +3
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotator.leasing import assignment_lease_next
    from annotator.submitting import annotation_submit
    from projects.models import Project

    # Celery logs every eager task at INFO whatever LOG_LEVEL says; the servers write that to
    # their log files, here it would bury the table on the terminal.
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    client = Client(HTTP_AUTHORIZATION=f"Token {tokens['inproc']}")
    # Timed until the response is ready (a server writes it then); the work run after it, in
    # the response's close(), is not the client's wait.
    handler = client.handler = stamping_handler()
    next_ms: list[float] = []
    submit_ms: list[float] = []

    def next_then_submit(key: str, timed: bool) -> None:
        started = time.perf_counter()
        response = client.post(f"/api/v1/projects/{slug}/next/")
        if timed:
            next_ms.append(handler.answered - started)
        expect(response.status_code, response.content, (200,), "in-process next")
        path = f"/api/v1/assignments/{response.json()['assignment']['id']}/submit/"
        started = time.perf_counter()
        response = client.post(
            path, bench_answer(), content_type="application/json", HTTP_IDEMPOTENCY_KEY=key
        )
        if timed:
            submit_ms.append(handler.answered - started)
        expect(response.status_code, response.content, (201,), "in-process submit")

    next_then_submit("warm-up", timed=False)  # first-request imports and caches
    for i in range(args.single):
        next_then_submit(f"in-{i}", timed=True)
    # Counted apart: capturing the SQL of every statement would slow the timed rounds.
    with CaptureQueriesContext(connection) as queries:
        response = client.post(f"/api/v1/projects/{slug}/next/")
    n_next = len(queries)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/api/v1/assignments/{response.json()['assignment']['id']}/submit/",
            bench_answer(),
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY="counted",
        )
    n_submit = len(queries)
    expect(response.status_code, response.content, (201,), "in-process counted submit")
    wsgi = WsgiCaller(tokens["inproc"])
    wsgi_next: list[float] = []
    wsgi_submit: list[float] = []
    body = json.dumps(bench_answer()).encode()
    for i in range(args.single + 1):  # the first: a warm-up, not counted
        status, data, elapsed = wsgi.post(f"/api/v1/projects/{slug}/next/")
        expect(int(status[:3]), data, (200,), "WSGI next")
        path = f"/api/v1/assignments/{json.loads(data)['assignment']['id']}/submit/"
        status, data, submit_elapsed = wsgi.post(path, body, HTTP_IDEMPOTENCY_KEY=f"wsgi-{i}")
        expect(int(status[:3]), data, (201,), "WSGI submit")
        if i:
            wsgi_next.append(elapsed)
            wsgi_submit.append(submit_elapsed)
    project = Project.objects.get(slug=slug)
    user = get_user_model().objects.get(username="inproc")
    service_next = []
    for i in range(args.single):
        started = time.perf_counter()
        assignment = assignment_lease_next(project=project, user=user)
        service_next.append(time.perf_counter() - started)
        assert assignment is not None  # the project has a pair for every submit
        annotation_submit(
            assignment_id=assignment.pk, user=user, body=bench_answer(), idempotency_key=f"svc-{i}"
        )
    connection.close()
    return InProcess(next_ms, submit_ms, wsgi_next, wsgi_submit, service_next, n_next, n_submit)


# --- Label Studio ------------------------------------------------------------------------------


def run_labelstudio(args, stack: contextlib.ExitStack, workdir: Path) -> Result:
    name = f"Label Studio {labelstudio.VERSION}"
    print(f"\n== {name}", flush=True)
    executable = labelstudio.ensure_installed(Path(args.ls_venv))
    files = workdir / "ls-files"
    files.mkdir()
    from tests.images import edited_pair

    a, b = edited_pair(size=SIZE)
    (files / "a.png").write_bytes(a)
    (files / "b.png").write_bytes(b)
    recreate_database(LOCAL_POSTGRES + LS_DB)
    env = labelstudio.environment(
        base=BASE_ENV, data_dir=workdir / "ls-data", files_root=files, database=LS_DB
    )
    started = time.perf_counter()
    labelstudio.init(executable, env, workdir=workdir)
    print(f"initialised (migrations) in {time.perf_counter() - started:.0f} s", flush=True)
    emails = {f"{u}@bench.local": u for u in _usernames(args)}
    tokens = {emails[e]: t for e, t in labelstudio.users_create(executable, env, [*emails]).items()}
    server = labelstudio.start(executable, env, host=HOST, port=args.ls_port, workdir=workdir)
    stack.callback(stop_group, server)
    project = labelstudio.project_seed(HOST, args.ls_port, n_tasks=args.pairs, size=SIZE)
    driver = labelstudio.LabelStudioDriver(HOST, args.ls_port, project, tokens, SIZE)
    result = _loops("labelstudio", name, driver, args, server.pid)
    stored = driver.annotations()
    submits = 1 + len(result.single.submit) + len(result.crowd.submit)  # 1: the warm-up
    result.notes.append(f"{stored} annotations stored for {submits} submits")
    stop_group(server)
    return result


# --- the loops and the table -------------------------------------------------------------------


def _usernames(args) -> list[str]:
    return ["solo"] + [f"user{i}" for i in range(args.users)]


def _loops(key: str, name: str, driver, args, pgid: int) -> Result:
    # One request each way first, so neither side's first-request imports count as latency.
    item, _ = driver.lease("solo")
    if item is None:
        raise SystemExit(f"{name}: nothing to lease after seeding")
    driver.submit("solo", item)
    with RssSampler(pgid) as rss:
        single = one_client(driver, "solo", args.single)
        print(samples_line("1 client", single), flush=True)
        crowd = many_users(driver, _usernames(args)[1:], args.rounds)
        print(samples_line(f"{args.users} users", crowd), flush=True)
    result = Result(key, name, single, crowd, rss.peak)
    for samples in (single, crowd):
        if samples.errors:
            result.notes.append(f"{len(samples.errors)} errors, first: {samples.errors[0]}")
    return result


def _stop_on_sigterm() -> None:
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    # SIGINT too: a shell starting the bench in the background leaves Ctrl-C's signal ignored.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
        signal.signal(signum, handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 client ×30, 8 users ×5, 150 pairs")
    parser.add_argument("--single", type=int, default=300, help="1-client next → submit rounds")
    parser.add_argument("--users", type=int, default=8, help="distinct users released together")
    parser.add_argument("--rounds", type=int, default=40, help="next → submit rounds per user")
    parser.add_argument("--pairs", type=int, default=1000, help="pairs/tasks seeded in each")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--port", type=int, default=8392, help="Diffmark's port")
    parser.add_argument("--ls-port", type=int, default=8391, help="Label Studio's port")
    parser.add_argument(
        "--ls-venv",
        default=os.environ.get("DIFFMARK_BENCH_LS_VENV", "/tmp/ls-bench-venv"),
        help="Label Studio's virtualenv (created and installed into when missing)",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=60,
        help="stop everything and give up after this long (default 60)",
    )
    parser.add_argument(
        "--db",
        help="Diffmark's database, recreated (default $DIFFMARK_BENCH_DB or diffmark_bench_vs; "
        "a name with 'bench' in it)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=["labelstudio", "runserver", "gunicorn", "inprocess"],
        help="run only these (repeatable); default: all four",
    )
    args = parser.parse_args()
    if args.db:
        global DIFFMARK_DB
        DIFFMARK_DB = LOCAL_POSTGRES + args.db
    if args.quick:
        args.single, args.rounds, args.pairs = 30, 5, 150
    needed = 1 + args.single + args.users * args.rounds
    if args.pairs < needed:
        sys.exit(f"--pairs {args.pairs} is fewer than the {needed} the loops submit (overlap 1)")
    for port in (args.port, args.ls_port):
        if not port_is_free(HOST, port):
            sys.exit(f"port {port} is taken; choose another with --port / --ls-port")
    parts = args.only or ["labelstudio", "runserver", "gunicorn", "inprocess"]
    _stop_on_sigterm()
    signal.alarm(int(args.max_minutes * 60))  # SIGALRM → the same clean stop as Ctrl-C
    print(f"machine: {machine()}", flush=True)
    started = time.perf_counter()
    results: list[Result] = []
    inproc = None
    tmp = tempfile.TemporaryDirectory(prefix="diffmark-vs-ls-")
    with tmp, contextlib.ExitStack() as stack:
        workdir = Path(tmp.name)
        if "labelstudio" in parts:
            results.append(run_labelstudio(args, stack, workdir))
        if "runserver" in parts:
            results.append(run_diffmark(args, stack, workdir, gunicorn=False))
        if "gunicorn" in parts:
            results.append(run_diffmark(args, stack, workdir, gunicorn=True))
        if "inprocess" in parts:
            inproc = run_in_process(args, workdir)
    print(f"\nmachine: {machine()}")
    print(
        f"loops: 1 client next → submit ×{args.single}; {args.users} distinct users ×{args.rounds} "
        f"from a barrier; overlap 1; {args.pairs} pairs each; PostgreSQL for all; "
        f"{time.perf_counter() - started:.0f} s in all\n"
    )
    print(table(results, inproc, args))
    for result in results:
        for note in result.notes:
            print(f"{result.name}: {note}")
    if any(r.single.errors or r.crowd.errors for r in results):
        sys.exit("some requests failed; the figures above are not comparable")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as exc:
        sys.exit(f"interrupted ({exc or 'Ctrl-C'}); every server the bench started is stopped")
