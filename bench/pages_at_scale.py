"""Lead and researcher pages at scale: server time of every page and list endpoint on a large
project, on PostgreSQL.

    .venv/bin/python bench/pages_at_scale.py [--pairs 100000] [--repeat 15] [--keep] [--only TEXT]

Recreates BENCH_DATABASE_URL (default: `dm_scale28_bench_<pairs>` on the local PostgreSQL),
migrates it, seeds one project of N pairs with bench/scale_seed.py (COPY), refreshes the
project's figures as the periodic job does (review.figures), then asks every URL a lead or a
researcher opens ``--repeat`` times through Django's test client in this process (server time:
request in, response out; no network) with production settings (DEBUG off), and prints p50/p95
per URL and the worst p95. ``--keep`` reuses a database seeded before (same name, same size);
``--only TEXT`` times only the URLs whose label or address contains TEXT.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import LOCAL_POSTGRES, recreate_database, server_env  # noqa: E402

BUDGET_MS = 300.0


def urls(seeded, *, last_page: int, dispute_pages: int) -> list[tuple[str, str, str]]:
    """(who, label, url) of every page and list endpoint a lead or researcher opens."""
    s = seeded.slug
    pair, disputed, release = seeded.accepted_pair, seeded.disputed_pair, seeded.release_id
    mid = pair // 2  # a cursor half-way through the project (pages by key)
    p = f"/p/{s}/"
    lead = [
        ("home", "/"),
        ("project page", p),
        # A large project's browser pages by key (console.pair_pages): "Last »" is before=end.
        ("pairs: last page", f"{p}?before=end"),
        ("pairs: next page (by key)", f"{p}?after=.{mid}"),
        ("pairs: sort newest", f"{p}?sort=newest"),
        ("pairs: sort status", f"{p}?sort=status"),
        ("pairs: sort status, next page", f"{p}?sort=status&after=disputed.{mid}"),
        ("pairs: category, newest", f"{p}?category=attribute&sort=newest"),
        ("pairs: category, last page", f"{p}?category=attribute&before=end"),
        ("pairs: text, status sort", f"{p}?q=umbrella&sort=status"),
        ("pairs: status accepted", f"{p}?status=accepted"),
        ("pairs: status disputed, next page", f"{p}?status=disputed&after=disputed.{mid}"),
        ("pairs: category", f"{p}?category=attribute"),
        ("pairs: difficulty hard", f"{p}?difficulty=hard"),
        ("pairs: flag", f"{p}?flag=artefacts"),
        ("pairs: annotator", f"{p}?annotator=ann007"),
        ("pairs: text (instruction word)", f"{p}?q=umbrella"),
        ("pairs: text (external id)", f"{p}?q=img-00123"),
        ("pairs: text (entity label)", f"{p}?q=mailbox"),
        ("pairs: text (pair id)", f"{p}?q={pair}"),
        ("pairs: text, no match", f"{p}?q=zebra-crossing"),
        ("pairs: status + category + text", f"{p}?status=accepted&category=attribute&q=dog"),
        ("pair page + history", f"/pairs/{disputed}/"),
        ("pair page (accepted)", f"/pairs/{pair}/"),
        ("adjudicate", f"/review/pairs/{disputed}/"),
        ("disputes", f"/review/{s}/disputes/"),
        ("disputes: last page", f"/review/{s}/disputes/?page={dispute_pages}"),
        ("disputes: annotator", f"/review/{s}/disputes/?annotator=ann011"),
        ("disputes: category", f"/review/{s}/disputes/?category=attribute"),
        ("spot check", f"/review/{s}/spot-check/"),
        ("quality dashboard", f"/review/{s}/dashboard/"),
        ("members", f"{p}members/"),
        ("jobs", f"{p}jobs/"),
        ("jobs: last page", f"{p}jobs/?page=6"),
        ("job", f"/jobs/{seeded.job_id}/"),
        ("screening", f"{p}screening/"),
        ("releases", f"/review/{s}/releases/"),
        ("release + leaderboard", f"/review/releases/{release}/"),
        ("questions", f"/review/{s}/questions/"),
        ("questions: last page", f"/review/{s}/questions/?page=1800"),
        ("questions: edited", f"/review/{s}/questions/?edited=1"),
        ("API projects", "/api/v1/projects/"),
        ("API project", f"/api/v1/projects/{s}/"),
        ("API pairs", f"/api/v1/projects/{s}/pairs/"),
        ("API pairs: last page", f"/api/v1/projects/{s}/pairs/?page={seeded.pairs // 50}"),
        ("API pairs: status", f"/api/v1/projects/{s}/pairs/?status=accepted&page=100"),
        ("API pairs: category", f"/api/v1/projects/{s}/pairs/?category=attribute"),
        ("API pairs: gold", f"/api/v1/projects/{s}/pairs/?gold=true"),
        ("API pairs: cursor", f"/api/v1/projects/{s}/pairs/?cursor=first"),
        ("API pair", f"/api/v1/pairs/{pair}/"),
        ("API disputes", f"/api/v1/projects/{s}/disputes/"),
        ("API disputes: last page", f"/api/v1/projects/{s}/disputes/?page={dispute_pages}"),
        ("API disputes: category", f"/api/v1/projects/{s}/disputes/?category=attribute"),
        ("API disputes: reason", f"/api/v1/projects/{s}/disputes/?reason=tier"),
        ("API agreement", f"/api/v1/projects/{s}/agreement/"),
        ("API releases", f"/api/v1/projects/{s}/releases/"),
        ("API release", f"/api/v1/releases/{release}/"),
        ("API records", f"/api/v1/releases/{release}/records/"),
        ("API records: last page", f"/api/v1/releases/{release}/records/?page=last"),
        ("API records: split test", f"/api/v1/releases/{release}/records/?split=test&page=50"),
        ("API evaluations", f"/api/v1/releases/{release}/evaluations/"),
        ("API job", f"/api/v1/jobs/{seeded.job_id}/"),
    ]
    researcher = [
        ("home", "/"),
        ("project page", p),
        ("releases", f"/review/{s}/releases/"),
        ("release + leaderboard", f"/review/releases/{release}/"),
        ("API releases", f"/api/v1/projects/{s}/releases/"),
        ("API records", f"/api/v1/releases/{release}/records/?split=test"),
        ("API evaluations", f"/api/v1/releases/{release}/evaluations/"),
    ]
    return [("lead", label, url) for label, url in lead] + [
        ("researcher", label, url) for label, url in researcher
    ]


def _resolve(client, url: str) -> str:
    """ "cursor=first" starts a cursor walk: its second page is what is timed. "page=last" is
    the last page of a page-numbered list."""
    if url.endswith("cursor=first"):
        body = client.get(url.replace("?cursor=first", "?cursor=")).json()
        return body["next"].split("testserver", 1)[-1] if body.get("next") else url
    if url.endswith("page=last"):
        count = client.get(url.replace("?page=last", "")).json()["count"]
        return url.replace("page=last", f"page={max(1, -(-count // 50))}")
    return url


def measure(seeded, repeat: int, only: str = "") -> list[tuple[str, str, int, float, float]]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotator.models import Pair

    clients = {}
    for who, name in (("lead", seeded.leads[0]), ("researcher", seeded.researcher)):
        client = Client()
        client.force_login(get_user_model().objects.get(username=name))
        clients[who] = client
    disputes = Pair.objects.filter(project_id=seeded.project_id, status="disputed").count()
    last = -(-seeded.pairs // 48)
    results = []
    for who, label, url in urls(seeded, last_page=last, dispute_pages=-(-disputes // 50)):
        if only and only not in f"{label}  {url}":
            continue
        client = clients[who]
        url = _resolve(client, url)
        status = client.get(url).status_code  # warm: the first read of a cold table
        timings = []
        for _ in range(repeat):
            started = time.perf_counter()
            status = client.get(url).status_code
            timings.append((time.perf_counter() - started) * 1000)
        q = statistics.quantiles(timings, n=20, method="inclusive")
        results.append((who, f"{label}  {url}", status, statistics.median(timings), q[18]))
        print(f"{who:10} {status} p50 {results[-1][3]:7.1f} ms  p95 {q[18]:7.1f} ms  {label}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="reuse the database seeded before")
    parser.add_argument(
        "--only", default="", help="time only the URLs whose label or address contains this"
    )
    args = parser.parse_args()
    database_url = os.environ.get(
        "BENCH_DATABASE_URL", f"{LOCAL_POSTGRES}dm_scale28_bench_{args.pairs}"
    )
    if not database_url.startswith("postgres"):
        sys.exit("this benchmark needs PostgreSQL (BENCH_DATABASE_URL=postgres://…)")
    workdir = Path(tempfile.gettempdir()) / f"diffmark-scale-{args.pairs}"
    workdir.mkdir(exist_ok=True)
    env = server_env(os.environ, workdir, database_url=database_url, hosts="testserver")
    os.environ.update(env | {"CELERY_BROKER_URL": ""})
    import django

    if not args.keep:
        recreate_database(database_url)
    django.setup()
    from django.core.management import call_command

    from bench.scale_seed import Seeded, seed_project
    from review.figures import figures_refresh

    call_command("collectstatic", verbosity=0, interactive=False)
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    print(f"migrated in {time.perf_counter() - started:.0f} s")
    if args.keep:
        seeded = _seeded_again(args.pairs)
    else:
        seeded = seed_project(slug="scale", n_pairs=args.pairs, database_url=database_url)
        print(f"seeded {args.pairs:,} pairs in {seeded.seconds:.0f} s: {seeded.rows}")
    started = time.perf_counter()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # as autovacuum would have: visibility and statistics
    print(f"VACUUM ANALYZE in {time.perf_counter() - started:.0f} s")
    assert isinstance(seeded, Seeded)
    started = time.perf_counter()
    figures_refresh(project_id=seeded.project_id)
    print(f"figures refreshed (the periodic job) in {time.perf_counter() - started:.1f} s")
    load = os.getloadavg()
    results = measure(seeded, args.repeat, args.only)
    after = os.getloadavg()
    print(
        f"load average (1 min) {load[0]:.1f} before timing, {after[0]:.1f} after, "
        f"on {os.cpu_count()} cores shared with other work"
    )
    worst = max(results, key=lambda r: r[4])
    over = [r for r in results if r[4] > BUDGET_MS]
    errors = [r for r in results if r[2] >= 400]
    print(
        f"\n{len(results)} URLs, {args.pairs:,} pairs, DEBUG off, Django test client in-process, "
        f"PostgreSQL; worst p95 {worst[4]:.0f} ms ({worst[1]}); over {BUDGET_MS:.0f} ms: "
        f"{len(over)}; 4xx/5xx: {len(errors)}"
    )
    for r in over + errors:
        print(f"  {r[0]} {r[2]} p95 {r[4]:.0f} ms {r[1]}")


def _seeded_again(n_pairs: int):
    """The Seeded of a database seeded before (``--keep``)."""
    from annotator.models import Pair
    from bench.scale_seed import Seeded
    from jobs.models import Job
    from projects.models import Project
    from releases.models import Release

    project = Project.objects.get(slug="scale")
    pairs = Pair.objects.filter(project=project)
    seeded = Seeded(
        "scale",
        project.pk,
        n_pairs,
        [],
        ["lead0", "lead1"],
        "researcher0",
        disputed_pair=pairs.filter(status="disputed").order_by("-pk")[0].pk,
        accepted_pair=pairs.filter(status="accepted").order_by("-pk")[0].pk,
        release_id=Release.objects.filter(project=project).order_by("-version")[0].pk,
        job_id=Job.objects.filter(project=project).order_by("-pk")[0].pk,
    )
    return seeded


if __name__ == "__main__":
    main()
