"""Rate limits that each worker process counts on its own are no limits: production refuses to
start without a shared cache (accounts.E001); `check --deploy` names it too (accounts.W001)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

PER_PROCESS = ("LocMemCache", "DummyCache")
HINT = (
    "set DIFFMARK_CACHE_URL to a Redis database (e.g. redis://redis:6379/1), or "
    "CELERY_BROKER_URL to Redis (the cache then uses its next database)"
)


def _per_process() -> bool:
    return settings.CACHES["default"]["BACKEND"].endswith(PER_PROCESS)


@register(Tags.security)
def shared_cache_required(app_configs, **kwargs) -> list[CheckMessage]:
    """Production (DIFFMARK_REQUIRE_SHARED_CACHE, on whenever DEBUG is off) runs several
    processes (gunicorn workers, hosts); a per-process cache gives each its own budget of
    log-in guesses, and a lock-out in one is none in the others. Every command that runs the
    checks then stops: migrate (which docker-compose.yml runs before gunicorn), runserver,
    check. `make run` (DEBUG=1) is one process and is left be."""
    if not settings.DIFFMARK_REQUIRE_SHARED_CACHE or not _per_process():
        return []
    return [
        Error(
            "production needs a shared cache: the log-in and token rate limits would be "
            "counted per process, every gunicorn worker letting through its own guesses",
            hint=HINT,
            id="accounts.E001",
        )
    ]


@register(Tags.security, deploy=True)
def rate_limit_cache_check(app_configs, **kwargs) -> list[CheckMessage]:
    """The deployment checklist names a per-process cache whatever DEBUG says."""
    if not _per_process():
        return []
    return [
        Warning(
            "the log-in and token rate limits are counted per process: every gunicorn worker "
            "lets through its own budget of password guesses",
            hint=HINT,
            id="accounts.W001",
        )
    ]
