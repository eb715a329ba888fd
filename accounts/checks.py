"""A deployment check: rate limits that each worker process counts on its own are no limits."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def rate_limit_cache_check(app_configs, **kwargs) -> list[Warning]:
    """With a broker there are several processes (gunicorn workers, hosts); a per-process cache
    would give every one of them its own budget of log-in guesses."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return []  # the zero-setup default: one process
    if not settings.CACHES["default"]["BACKEND"].endswith("LocMemCache"):
        return []
    return [
        Warning(
            "the log-in and token rate limits are counted per process",
            hint="set DIFFMARK_CACHE_URL to a Redis database, e.g. redis://redis:6379/1",
            id="accounts.W001",
        )
    ]
