import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_the_deploy_checklist():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="x" * 20 + "-production-like-secret-key-0123456789",
        ALLOWED_HOSTS="a.b",
        DIFFMARK_CACHE_URL="redis://127.0.0.1:6379/1",  # CI's broker needs a shared cache too
    )
    assert result.returncode == 0, result.stderr + result.stdout


def test_missing_secret_key_fails_loudly_without_debug():
    result = _manage("check", DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_non_boolean_debug_fails_loudly():
    result = _manage("check", DEBUG="maybe")
    assert "DEBUG must be a boolean" in result.stderr


def test_production_refuses_to_start_without_a_shared_cache():
    """Issue 24 item 11: per-process rate limits let every worker count its own guesses, so
    with DEBUG off and no Redis cache every command that runs the checks (migrate before
    gunicorn, runserver, check) stops with an error, not a warning."""
    production = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 20 + "-production-like-secret-key-0123456789",
        "ALLOWED_HOSTS": "a.b",
    }
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DIFFMARK_", "CELERY_"))}
    os_env = {**base, "DJANGO_SETTINGS_MODULE": "config.settings"}

    def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**os_env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )

    refused = manage("check", **production)
    shared = manage("check", **production, DIFFMARK_CACHE_URL="redis://127.0.0.1:6379/1")
    development = manage("check", DEBUG="1")

    assert refused.returncode != 0
    assert "accounts.E001" in refused.stderr and "ERRORS" in refused.stderr
    assert shared.returncode == 0, shared.stderr
    assert development.returncode == 0, development.stderr
    assert "accounts.E001" not in development.stderr + development.stdout


def test_the_compose_file_wires_every_app_process_to_a_shared_redis_cache():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # our own file

    app_processes = [
        n for n in compose["services"] if n in ("web", "beat") or n.startswith("worker")
    ]
    assert len(app_processes) >= 3
    for name in app_processes:
        env = compose["services"][name]["environment"]
        assert env["DEBUG"] == "0"
        assert env["DIFFMARK_CACHE_URL"].startswith("redis://redis:"), name
        assert env["DIFFMARK_CACHE_URL"] != env["CELERY_BROKER_URL"]  # never the broker's db


def test_a_bad_webhook_network_fails_the_check():
    result = _manage("check", DEBUG="1", DIFFMARK_WEBHOOK_ALLOWED_NETWORKS="10.0.0.0/8, intranet")
    assert result.returncode != 0
    assert "webhooks.E001" in result.stderr and "'intranet'" in result.stderr


def test_server_side_cursors_can_be_turned_off_for_a_transaction_pooler():
    show = (
        "from django.db import connection; "
        'print(connection.settings_dict["DISABLE_SERVER_SIDE_CURSORS"])'
    )
    assert _manage("shell", "-c", show, DEBUG="1").stdout.split()[-1] == "False"
    pooled = _manage("shell", "-c", show, DEBUG="1", DATABASE_DISABLE_SERVER_SIDE_CURSORS="1")
    assert pooled.stdout.split()[-1] == "True"


SQLITE_WRITER_WAITS = """
import sqlite3, threading, time
import django
django.setup()
from django.db import connection

path = connection.settings_dict["NAME"]
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE t (x int)")
held = threading.Event()

def job_thread():  # a job's long write transaction, on a connection of its own
    other = sqlite3.connect(path)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    held.set()
    time.sleep(6)
    other.commit()

threading.Thread(target=job_thread).start()
held.wait()
with connection.cursor() as cursor:
    cursor.execute("INSERT INTO t VALUES (2)")  # a request's write waits for the commit
    cursor.execute("SELECT count(*) FROM t")
    print("rows", cursor.fetchone()[0])
"""


def test_a_sqlite_writer_waits_for_a_long_commit_instead_of_failing(tmp_path):
    """Without a broker a job writes from its own thread beside the requests (under runserver):
    a write waiting more than Python's default 5 s must not fail with "database is locked"."""
    result = subprocess.run(
        [sys.executable, "-c", SQLITE_WRITER_WAITS],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rows 2" in result.stdout
