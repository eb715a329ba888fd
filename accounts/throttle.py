"""Failed log-ins counted per username and per client address, in Django's cache.

Every password check goes through here: the browser log-in, the admin's log-in and the API's
token endpoint, so guessing cannot move to the door with no limit. The counters live in the
default cache; with the per-process default (locmem) each gunicorn worker counts on its own,
so production sets DIFFMARK_CACHE_URL to Redis and the limits hold across workers and hosts.

A fixed window per key: the first attempt starts it, the limit blocks until it ends. Every
attempt is counted before the password is checked (one atomic increment), so guesses sent in
parallel cannot all slip in under the limit; a blocked attempt is refused without checking the
password, and since the window never moves, someone who keeps trying waits no longer. A
successful log-in clears its username's counter and takes back its own count from the address,
but never more: an attacker holding one account could otherwise reset their address's budget.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import ipaddress
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.http import HttpRequest
from redis.exceptions import RedisError

TOO_MANY = "too_many_attempts"
CACHE_ERRORS = (RedisError, OSError)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoginAttempt:
    username: str
    ip: str

    @classmethod
    def of(cls, request: HttpRequest | None, username: str) -> LoginAttempt:
        return cls(username=username, ip=client_ip(request) if request is not None else "")

    def buckets(self) -> list[tuple[str, int]]:
        """(cache key, allowed failures per window) for each counter this attempt touches."""
        found = []
        if self.username:
            # Hashed: any length and any characters make a valid key; case-folded, so
            # "Lead" and "lead" share one budget.
            digest = hashlib.sha256(self.username.casefold().encode()).hexdigest()[:32]
            found.append((f"login-failures:user:{digest}", settings.DIFFMARK_LOGIN_USER_LIMIT))
        if self.ip:
            found.append((f"login-failures:ip:{self.ip}", settings.DIFFMARK_LOGIN_IP_LIMIT))
        return found


def client_ip(request: HttpRequest) -> str:
    """The caller's address, trusting X-Forwarded-For only as far as DIFFMARK_PROXY_COUNT says.

    Like DRF's NUM_PROXIES (set from the same setting): with N proxies in front, the client is
    the N-th address from the right; anything left of it was written by the client and is not
    to be believed. An IPv6 client is counted by its /64, which one host usually owns whole.
    """
    proxies = settings.DIFFMARK_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        address = hops[-min(proxies, len(hops))]
    else:
        address = request.META.get("REMOTE_ADDR", "")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64] or "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def _fail_open(function):
    """With the cache (Redis) down, log-ins go on unlimited rather than fail: people must be
    able to work through a Redis outage; the outage is logged."""

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except CACHE_ERRORS:
            log.warning("log-in limits are off: the cache is unreachable", exc_info=True)
            return 0

    return guarded


@_fail_open
def login_wait(attempt: LoginAttempt) -> int:
    """Seconds until this attempt may be tried; 0 when it may be tried now. Reads only."""
    return _wait(attempt, cache.get_many(_keys(attempt)))


@_fail_open
def login_begin(attempt: LoginAttempt) -> int:
    """Count the attempt; the seconds to wait when a counter is now over its limit (refuse the
    attempt then, without checking the password), else 0."""
    window = settings.DIFFMARK_LOGIN_WINDOW_SECONDS
    counts = {}
    for key, _ in attempt.buckets():
        # add() and incr() are atomic in Redis: parallel attempts each get their own count.
        if cache.add(key, 1, window):
            cache.set(f"{key}:until", time.time() + window, window)
            counts[key] = 1
            continue
        try:
            counts[key] = cache.incr(key)
        except ValueError:  # the window ended between add() and incr()
            cache.set(key, 1, window)
            cache.set(f"{key}:until", time.time() + window, window)
            counts[key] = 1
    if all(counts[key] <= limit for key, limit in attempt.buckets()):
        return 0
    return _wait(attempt, counts | cache.get_many([f"{key}:until" for key in counts]), over=True)


@_fail_open
def login_succeeded(attempt: LoginAttempt) -> None:
    """Forget the username's failures, and give the address back this attempt's count."""
    for key, _ in attempt.buckets():
        if key.startswith("login-failures:user:"):
            cache.delete_many([key, f"{key}:until"])
            continue
        with contextlib.suppress(ValueError):  # the window ended meanwhile: nothing to give back
            cache.decr(key)


def _keys(attempt: LoginAttempt) -> list[str]:
    keys = [key for key, _ in attempt.buckets()]
    return keys + [f"{key}:until" for key in keys]


def _wait(attempt: LoginAttempt, stored: dict, *, over: bool = False) -> int:
    now = time.time()
    wait = 0.0
    for key, limit in attempt.buckets():
        count = stored.get(key, 0)
        if count > limit if over else count >= limit:
            until = stored.get(f"{key}:until", now + settings.DIFFMARK_LOGIN_WINDOW_SECONDS)
            wait = max(wait, until - now, 1)
    return math.ceil(wait)


def too_many_message(wait: int) -> str:
    minutes = max(1, math.ceil(wait / 60))
    return f"Too many attempts; try again in {minutes} minute{'s' if minutes != 1 else ''}."


if TYPE_CHECKING:  # the mixin sits in front of AuthenticationForm (or its admin subclass)
    _FormBase = AuthenticationForm
else:
    _FormBase = object


class _ThrottledMixin(_FormBase):
    """Counts every password check; refuses one over the limit before checking the password."""

    retry_after = 0

    def clean(self):
        if not (self.cleaned_data.get("username") and self.cleaned_data.get("password")):
            return super().clean()  # a field is missing: no password is checked, nothing counts
        attempt = LoginAttempt.of(self.request, self.cleaned_data["username"][:254])
        wait = login_begin(attempt)
        if wait:
            self.retry_after = wait
            raise forms.ValidationError(too_many_message(wait), code=TOO_MANY)
        cleaned = super().clean()  # a failure stays counted
        login_succeeded(attempt)
        return cleaned


class LoginForm(_ThrottledMixin, AuthenticationForm):
    """The browser's log-in form."""


class AdminLoginForm(_ThrottledMixin, AdminAuthenticationForm):
    """The admin's log-in form: the same budget, so the admin is no way around the limit."""
