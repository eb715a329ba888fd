"""Typed environment helpers: read a variable, convert it, fail loudly on nonsense."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def redis_neighbour_db(url: str) -> str:
    """The same Redis as ``url`` in the next database (15 goes back to 14); "" unless ``url`` is
    a redis:// or rediss:// URL. The broker's database keeps the broker's data alone."""
    if not url.startswith(("redis://", "rediss://")):
        return ""
    parts = urlsplit(url)
    number = parts.path.strip("/") or "0"
    if not number.isdigit():
        raise ImproperlyConfigured("CELERY_BROKER_URL names a Redis database that is not a number")
    db = int(number)
    neighbour = db + 1 if db < 15 else db - 1
    return urlunsplit(parts._replace(path=f"/{neighbour}"))
