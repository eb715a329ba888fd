"""A deployment check: rate limits that each worker process counts on its own are no limits."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register

PER_PROCESS = ("LocMemCache", "DummyCache")


@register(Tags.security, deploy=True)
def rate_limit_cache_check(app_configs, **kwargs) -> list[Warning]:
    """Production runs several processes (gunicorn workers, hosts), with or without a broker;
    a per-process cache gives every one of them its own budget of log-in guesses (a dummy cache,
    none at all). A deployment that really is one process silences accounts.W001."""
    if not settings.CACHES["default"]["BACKEND"].endswith(PER_PROCESS):
        return []
    return [
        Warning(
            "the log-in and token rate limits are counted per process: every gunicorn worker "
            "lets through its own budget of password guesses",
            hint="set DIFFMARK_CACHE_URL to a Redis database (e.g. redis://redis:6379/1), or "
            "CELERY_BROKER_URL to Redis (the cache then uses its next database)",
            id="accounts.W001",
        )
    ]
