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
