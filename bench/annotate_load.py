"""The annotator loop under load: N pairs on PostgreSQL, C concurrent clients over HTTP.

    .venv/bin/python bench/annotate_load.py [--pairs 100000] [--clients 16] [--seconds 60]
                                            [--lease-order import|random|prioritised]

Starts gunicorn on 127.0.0.1 against BENCH_DATABASE_URL (default: `diffmark_bench_load` on the
local PostgreSQL, recreated), gives each client an annotator with an API token, loops
next → submit, prints latency percentiles and annotations/s, then checks the leasing
invariants in the database. Also measures the workspace page: bytes of HTML + JS + CSS
(images excluded) and server time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import HTTPCookieProcessor, Request, build_opener

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402
    LOCAL_POSTGRES,
    bench_answer,
    gunicorn_start,
    recreate_database,
    server_env,
)

HOST, PORT = "127.0.0.1", 8321


def _environment(workdir: Path, database_url: str) -> dict[str, str]:
    env = server_env(os.environ, workdir, database_url=database_url, hosts=HOST)
    return env | {"DIFFMARK_TOKEN_RATE": "10000/minute"}


def _order(slug: str, lease_order: str) -> None:
    """Switch the project's lease order and time the priority refresh it triggers."""
    from annotator.priorities import queue_priorities_refresh
    from projects.models import Project

    project = Project.objects.get(slug=slug)
    project.lease_order = lease_order
    project.save(update_fields=["lease_order"])
    started = time.perf_counter()
    changed = queue_priorities_refresh(project=project)
    print(
        f"lease order {lease_order}: {changed} priorities rewritten in "
        f"{time.perf_counter() - started:.1f} s"
    )


def _seed(n_pairs: int, n_clients: int) -> tuple[str, list[str], int]:
    """The project, one API token per client, and the pair size (all pairs share two images)."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("collectstatic", verbosity=0, interactive=False)
    from accounts.services import token_create
    from annotator.models import Pair
    from annotator.services import PairInput, pair_create
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import Role
    from tests.images import edited_pair

    project = project_create(slug="load", name="Load test", overlap=2)
    a, b = edited_pair(size=(640, 480))
    template = pair_create(project=project, pair_input=PairInput(a, b, external_id="p0"))
    fields = {f: getattr(template, f) for f in ("image_a", "image_b", "thumb_a", "thumb_b")}
    sizes = {f: getattr(template, f) for f in ("width_a", "height_a", "width_b", "height_b")}
    started = time.perf_counter()
    batch = []
    for i in range(1, n_pairs):
        batch.append(
            Pair(
                project=project,
                number=i + 1,
                external_id=f"p{i}",
                sha256_a=f"{i:064x}",
                sha256_b=f"{i:064x}",
                format_a="PNG",
                format_b="PNG",
                **fields,
                **sizes,
            )
        )
        if len(batch) == 5000:
            Pair.objects.bulk_create(batch)
            batch = []
    Pair.objects.bulk_create(batch)
    print(f"seeded {n_pairs} pairs in {time.perf_counter() - started:.1f} s")
    tokens = []
    for i in range(n_clients):
        user = user_ensure(username=f"loader{i}", password="load-test-password")
        membership_set(project=project, user=user, role=Role.ANNOTATOR)
        tokens.append(token_create(user=user, name="load")[1])
    return project.slug, tokens, template.width_a


class Client:
    def __init__(self, token: str) -> None:
        self.conn = http.client.HTTPConnection(HOST, PORT, timeout=30)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: object = None, **headers: str):
        payload = json.dumps(body) if body is not None else None
        started = time.perf_counter()
        self.conn.request(method, path, body=payload, headers=self.headers | headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, data, time.perf_counter() - started


def _run_clients(slug: str, tokens: list[str], seconds: float) -> dict[str, list]:
    results: dict[str, list] = {"next": [], "submit": [], "errors": []}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def loop(token: str) -> None:
        client = Client(token)
        local: dict[str, list] = {"next": [], "submit": [], "errors": []}
        while time.monotonic() < deadline:
            status, data, elapsed = client.call("POST", f"/api/v1/projects/{slug}/next/")
            local["next"].append(elapsed)
            if status == 204:
                break
            if status != 200:
                local["errors"].append(("next", status, data[:200]))
                continue
            assignment = json.loads(data)["assignment"]["id"]
            status, data, elapsed = client.call(
                "POST",
                f"/api/v1/assignments/{assignment}/submit/",
                bench_answer(),
                **{"Idempotency-Key": f"load-{assignment}"},
            )
            local["submit"].append(elapsed)
            if status not in (200, 201):
                local["errors"].append(("submit", status, data[:200]))
        with lock:
            for key in results:
                results[key].extend(local[key])

    threads = [threading.Thread(target=loop, args=(t,)) for t in tokens]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results["elapsed"] = [time.perf_counter() - started]
    return results


def _percentiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    q = statistics.quantiles(values, n=100)
    return f"p50 {q[49] * 1000:.1f} ms, p95 {q[94] * 1000:.1f} ms, p99 {q[98] * 1000:.1f} ms"


def _check_invariants(slug: str) -> None:
    from annotator.models import Annotation, Assignment, AssignmentState, Pair
    from projects.models import Project

    project = Project.objects.get(slug=slug)
    per_pair = Counter(
        Annotation.objects.filter(pair__project=project).values_list("pair_id", flat=True)
    )
    taken = Counter(
        Assignment.objects.filter(pair__project=project)
        .exclude(state__in=[AssignmentState.EXPIRED, AssignmentState.SKIPPED])
        .values_list("pair_id", flat=True)
    )
    pairs_and_people = list(
        Annotation.objects.filter(pair__project=project).values_list("pair_id", "annotator_id")
    )
    over = [p for p, n in taken.items() if n > project.overlap]
    repeated = len(pairs_and_people) - len(set(pairs_and_people))
    counters = dict(
        Pair.objects.filter(project=project, n_taken__gt=0).values_list("pk", "n_taken")
    )
    disagree = sum(1 for pk in set(counters) | set(taken) if counters.get(pk, 0) != taken[pk])
    print(
        f"invariants: {len(per_pair)} pairs annotated; most annotators on a pair "
        f"{max(taken.values(), default=0)} (overlap {project.overlap}); pairs over overlap: "
        f"{len(over)}; repeated (pair, annotator): {repeated}; "
        f"pairs whose counter disagrees with their leases: {disagree}"
    )


def _measure_workspace(slug: str) -> None:
    jar = CookieJar()
    opener = build_opener(HTTPCookieProcessor(jar))
    base = f"http://{HOST}:{PORT}"
    page = opener.open(f"{base}/login/").read().decode()
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert found, "the login page has a CSRF token"
    csrf = found[1]
    form = urlencode(
        {"username": "loader0", "password": "load-test-password", "csrfmiddlewaretoken": csrf}
    ).encode()
    opener.open(Request(f"{base}/login/", data=form, headers={"Referer": f"{base}/login/"}))
    csrf = next(c.value for c in jar if c.name == "csrftoken" and c.value)
    lease = opener.open(
        Request(f"{base}/p/{slug}/next/", data=b"", headers={"X-CSRFToken": csrf, "Referer": base})
    )
    url = lease.geturl()
    timings, html = [], b""
    for _ in range(30):
        started = time.perf_counter()
        html = opener.open(url).read()
        timings.append(time.perf_counter() - started)
    assets = set(re.findall(rb'(?:src|href)="(/static/[^"]+\.(?:js|css))"', html))
    total_assets, seen = 0, set()
    while assets:
        path = assets.pop()
        if path in seen:
            continue
        seen.add(path)
        body = opener.open(base + path.decode()).read()
        total_assets += len(body)
        folder = path.rsplit(b"/", 1)[0]
        for imported in re.findall(rb'from\s+"\./([^"]+\.js)"', body):
            assets.add(folder + b"/" + imported)
    print(
        f"workspace page {url}: HTML {len(html):,} bytes + JS/CSS {total_assets:,} bytes "
        f"in {len(seen)} files (raw; bench/page_weight.py counts what a browser transfers); "
        f"server time {_percentiles(timings)}"
    )


def main() -> None:
    global PORT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--lease-order", default="import", choices=["import", "random", "prioritised"]
    )
    parser.add_argument("--port", type=int, default=PORT, help="a free port of your own")
    args = parser.parse_args()
    PORT = args.port
    database_url = os.environ.get("BENCH_DATABASE_URL", LOCAL_POSTGRES + "diffmark_bench_load")
    if not database_url.startswith("postgres"):
        sys.exit("this benchmark needs PostgreSQL (BENCH_DATABASE_URL=postgres://…)")
    with tempfile.TemporaryDirectory(prefix="diffmark-load-") as tmp:
        env = _environment(Path(tmp), database_url)
        os.environ.update(env)
        recreate_database(database_url)
        slug, tokens, _ = _seed(args.pairs, args.clients)
        if args.lease_order != "import":
            _order(slug, args.lease_order)
        server = gunicorn_start(ROOT, env, host=HOST, port=PORT, workers=args.workers)
        try:
            results = _run_clients(slug, tokens, args.seconds)
            elapsed = results["elapsed"][0]
            print(
                f"{args.clients} clients, {elapsed:.1f} s, gunicorn workers {args.workers}, "
                f"{os.cpu_count()} cores"
            )
            print(f"next:   {len(results['next'])} calls, {_percentiles(results['next'])}")
            print(f"submit: {len(results['submit'])} calls, {_percentiles(results['submit'])}")
            print(f"annotations/s: {len(results['submit']) / elapsed:.1f}")
            print(f"errors: {len(results['errors'])} {results['errors'][:3]}")
            _check_invariants(slug)
            _measure_workspace(slug)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
