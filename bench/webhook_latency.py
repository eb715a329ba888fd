"""How long a webhook takes from the commit to the receiver, through Redis and a real worker.

    python -m bench.webhook_latency --broker redis://127.0.0.1:6379/6

Migrates a database of its own (--database, diffmark_*bench*, dropped and made again), starts a
receiver on 127.0.0.1, on the first free port of 8151-8159 (allowed by
DIFFMARK_WEBHOOK_ALLOWED_NETWORKS), and a `webhooks` worker pool
(threads), then sends SENDS test deliveries one after another — each committed on its own, as
an event is — and prints the commit-to-arrival times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import LOCAL_POSTGRES, recreate_database, server_env

ROOT = Path(__file__).resolve().parent.parent
SENDS = 40


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default=LOCAL_POSTGRES + "diffmark_hooks_bench")
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    recreate_database(args.database)
    workdir = Path(tempfile.mkdtemp(prefix="diffmark-hooks-bench-"))
    env = server_env(os.environ, workdir, database_url=args.database, hosts="localhost") | {
        "CELERY_BROKER_URL": args.broker,
        "DIFFMARK_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from projects.creating import project_create
    from tests.webhooks.receiver import receiver_start, receiver_stop
    from webhooks.services import endpoint_create, endpoint_test

    call_command("migrate", verbosity=0)
    receiver = receiver_start()
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "webhooks"]
    command += ["-n", "bench@%h", "--pool=threads", "--concurrency=4", "--loglevel=WARNING"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        project = project_create(slug="hooks", name="Webhook latency")
        endpoint = endpoint_create(project=project, url=receiver.url, events=["release.ready"])
        endpoint_test(endpoint=endpoint)  # the first waits for the worker to be up
        receiver.wait_for(1, timeout=60)
        waits = []
        for n in range(2, SENDS + 2):
            sent = time.monotonic()
            endpoint_test(endpoint=endpoint)  # autocommit: committed, then published
            waits.append(receiver.wait_for(n)[-1].at - sent)
            time.sleep(0.1)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        receiver_stop(receiver)
    waits.sort()
    p95 = waits[round(0.95 * len(waits)) - 1]
    print(
        f"{len(waits)} deliveries, commit to receiver: p50 {statistics.median(waits) * 1000:.0f} ms"
        f", p95 {p95 * 1000:.0f} ms, max {waits[-1] * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
