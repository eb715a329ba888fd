"""Helpers shared by the bench scripts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

LOCAL_POSTGRES = "postgres://postgres@127.0.0.1:5432/"
# (several engineers bench on one host; each uses a name nobody else does).


def server_env(
    base: Mapping[str, str], workdir: Path, *, database_url: str, hosts: str, debug: bool = False
) -> dict[str, str]:
    """The environment of a Diffmark server a bench starts: production settings (unless
    ``debug``) over plain HTTP on loopback, its files under ``workdir``, quiet logs."""
    return dict(base) | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "SECRET_KEY": "bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "DEBUG": "1" if debug else "0",
        "ALLOWED_HOSTS": hosts,
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "MEDIA_ROOT": str(workdir / "media"),
        "STATIC_ROOT": str(workdir / "static"),
        "STATIC_BUNDLE_DIR": str(workdir / "bundles"),
        "LOG_LEVEL": "WARNING",
    }


def recreate_database(url: str) -> None:
    """Drop and create the bench's own database; refuses names not made for benches."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    if not (name.startswith(("diffmark_", "dm_")) and "bench" in name):
        raise SystemExit(
            f"refusing to recreate {name!r}: bench databases are diffmark_*bench* or dm_*bench*"
        )
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def gunicorn_start(root, env: dict, *, host: str, port: int, workers: int):
    """gunicorn serving the app on host:port in its own process group; returns once it answers."""
    import http.client
    import subprocess
    import sys
    import time
    from pathlib import Path

    # The venv's gunicorn: the one beside this Python (a worktree may have no .venv of its own).
    gunicorn = root / ".venv/bin/gunicorn"
    if not gunicorn.exists():
        gunicorn = Path(sys.executable).parent / "gunicorn"
    server = subprocess.Popen(
        [
            str(gunicorn),
            "config.wsgi:application",
            "--bind",
            f"{host}:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=root,
        env=env,
        start_new_session=True,
    )
    for _ in range(150):
        try:
            http.client.HTTPConnection(host, port, timeout=1).request("GET", "/login/")
            break
        except OSError:
            time.sleep(0.2)
    return server


def bench_answer() -> dict:
    """The one answer every bench submits: a recoloured patch boxed on both sides."""
    change = {
        "category": "attribute",
        "description": "The patch changed colour.",
        "entity_a": "patch",
        "entity_b": "patch",
        "boxes_a": [[20, 10, 40, 30]],
        "boxes_b": [[20, 10, 40, 30]],
    }
    return {"tier": "excellent", "defects": [], "time_spent_ms": 9000, "changes": [change]}


def stamping_handler() -> Any:
    """Django's test-client handler, noting (`answered`, perf_counter) when each response is
    ready: a WSGI server writes it then and calls its close() after, where the work run after
    the response goes (config.after_response). Call after django.setup()."""
    import time

    from django.test.client import ClientHandler

    class StampingHandler(ClientHandler):
        answered = 0.0

        def get_response(self, request):
            response = super().get_response(request)
            self.answered = time.perf_counter()
            return response

    return StampingHandler()
