"""What breaks behind PgBouncer in transaction mode, and the settings that mend it.

    python -m bench.pooler_check --pooled postgres://postgres@127.0.0.1:6432/diffmark_pooler_bench

The database is made and migrated directly (--direct, the same database on PostgreSQL itself);
then, for each configuration, a fresh process (settings are read once) runs ROUNDS rounds of
the annotator's hot path over the API — lease, submit, the cross-check, with token auth: the
statements config.rows prepares — and a chunked read (QuerySet.iterator(), as the queue
priorities and release builds do), outside any long transaction, so the pooler may hand each
transaction another server connection. It prints what failed, per configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.common import LOCAL_POSTGRES, recreate_database, server_env

ROOT = Path(__file__).resolve().parent.parent
NAME = "diffmark_pooler_bench"
ROUNDS = 40
CONFIGURATIONS = {
    "direct to PostgreSQL": ("direct", {}),
    "pooled, defaults": ("pooled", {}),
    "pooled, DATABASE_PREPARED_STATEMENTS=0": ("pooled", {"DATABASE_PREPARED_STATEMENTS": "0"}),
    "pooled, both settings": (
        "pooled",
        {"DATABASE_PREPARED_STATEMENTS": "0", "DATABASE_DISABLE_SERVER_SIDE_CURSORS": "1"},
    ),
}


def _kind(exc: Exception) -> str:
    """The error without the names that differ each time (cursor and statement numbers)."""
    return f"{type(exc).__name__}: " + re.sub(r"\d+", "N", str(exc).splitlines()[0])[:100]


def _child() -> None:
    """One configuration: seed a project of its own, run the rounds, print a JSON summary."""
    import django

    django.setup()
    from django.db import connection
    from rest_framework.test import APIClient

    from accounts.services import token_create
    from annotator.models import Pair
    from bench.common import bench_answer
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import Role
    from tests.factories import make_pairs

    failures: Counter[str] = Counter()
    slug = f"pool{os.getpid()}"
    project = project_create(slug=slug, name=slug, overlap=1)
    make_pairs(project, ROUNDS)
    user = user_ensure(username=slug, password="pooler-check-password")
    membership_set(project=project, user=user, role=Role.ANNOTATOR)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='p')[1]}")
    submitted = 0
    for _ in range(ROUNDS):
        try:
            lease = client.post(f"/api/v1/projects/{slug}/next/")
            assignment = lease.json()["assignment"]["id"]
            done = client.post(
                f"/api/v1/assignments/{assignment}/submit/", bench_answer(), format="json"
            )
            submitted += done.status_code == 201
            if done.status_code != 201:
                failures[f"submit answered {done.status_code}"] += 1
        except Exception as exc:  # what the pooler broke, by kind
            failures[f"hot path: {_kind(exc)}"] += 1
            connection.close()
        try:
            sum(1 for _ in Pair.objects.filter(project=project).iterator(chunk_size=5))
        except Exception as exc:
            failures[f"iterator: {_kind(exc)}"] += 1
            connection.close()
    print(json.dumps({"submitted": submitted, "rounds": ROUNDS, "failures": failures}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--direct", default=LOCAL_POSTGRES + NAME)
    parser.add_argument("--pooled", required=True, help="the same database through PgBouncer")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child()
    recreate_database(args.direct)
    workdir = Path("/tmp") / NAME
    base = server_env(os.environ, workdir, database_url=args.direct, hosts="testserver")
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=ROOT, env=base, check=True)
    for label, (where, extra) in CONFIGURATIONS.items():
        url = args.direct if where == "direct" else args.pooled
        env = base | {"DATABASE_URL": url, "DATABASE_CONN_MAX_AGE": "600"} | extra
        command = [sys.executable, "-m", "bench.pooler_check", "--pooled", url, "--child"]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if done.returncode == 0 and lines else None
        if result is None:
            print(f"{label}: the run itself failed:\n{done.stderr[-2000:]}")
            continue
        print(f"{label}: {result['submitted']}/{result['rounds']} submits stored")
        for failure, count in sorted(result["failures"].items()):
            print(f"    {count} × {failure}")


if __name__ == "__main__":
    main()
