"""Failed log-ins are limited per username and per client address, at every password door."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import RequestFactory, override_settings

from accounts.throttle import LoginAttempt, client_ip, login_begin, too_many_message
from projects.members import user_ensure
from tests.conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = "Too many attempts; try again in 15 minutes."


@pytest.fixture(autouse=True)
def _fresh_counters():
    cache.clear()
    yield
    cache.clear()


def _login(client, username="lead", password=PASSWORD, **extra):
    return client.post("/login/", {"username": username, "password": password}, **extra)


def _token(client, username="lead", password=PASSWORD, **extra):
    body = {"username": username, "password": password}
    return client.post("/api/v1/auth/token/", body, "application/json", **extra)


def _fail(client, times, username="lead", **extra):
    statuses = {_login(client, username, "wrong", **extra).status_code for _ in range(times)}
    assert statuses == {200}, statuses


def test_five_failures_block_the_username_even_with_the_right_password(client, lead):
    _fail(client, 5)

    response = _login(client)

    assert response.status_code == 429
    assert 890 <= int(response["Retry-After"]) <= 900
    assert BLOCKED in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_block_is_for_that_username_only(client, lead, annotator_1):
    _fail(client, 5, "lead")

    assert _login(client, "annotator_1").status_code == 302


def test_the_username_is_counted_whatever_its_case(client, lead):
    _fail(client, 3, "lead")
    _fail(client, 2, "LEAD")

    assert _login(client).status_code == 429


def test_a_successful_login_clears_the_username_counter(client, lead):
    _fail(client, 4)
    assert _login(client).status_code == 302
    client.logout()
    _fail(client, 4)

    assert _login(client).status_code == 302


def test_twenty_failures_from_one_address_block_every_username(client, lead):
    for i in range(4):
        _fail(client, 5 - (i == 3), f"guess{i}")  # 19 failures, no username blocked
    assert _login(client).status_code == 302
    client.logout()
    _fail(client, 1, "guess9")  # the 20th

    assert _login(client).status_code == 429
    assert _login(client, REMOTE_ADDR="198.51.100.7").status_code == 302


def test_a_forged_forwarded_for_header_does_not_change_the_address(client, lead):
    for i in range(20):
        _login(client, f"guess{i}", "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")

    assert _login(client, HTTP_X_FORWARDED_FOR="203.0.113.99").status_code == 429


def test_the_block_ends_with_the_window(client, lead, settings):
    settings.DIFFMARK_LOGIN_WINDOW_SECONDS = 1
    _fail(client, 5)
    assert _login(client).status_code == 429

    time.sleep(1.1)

    assert _login(client).status_code == 302


def test_an_unknown_username_is_counted_like_a_known_one(client, db):
    _fail(client, 5, "nobody")

    response = _login(client, "nobody", "wrong")

    assert response.status_code == 429 and BLOCKED in response.content.decode()


def test_trying_while_blocked_does_not_extend_the_block(client, lead, settings):
    """Else someone who keeps trying would never get back in."""
    settings.DIFFMARK_LOGIN_WINDOW_SECONDS = 2
    _fail(client, 5)
    time.sleep(1)
    assert _login(client, password="wrong").status_code == 429

    time.sleep(1.1)  # the window that the first failure opened is over

    assert _login(client).status_code == 302


def test_attempts_in_flight_are_counted_before_any_password_is_checked(db):
    """Six guesses sent at once: the sixth is refused even though none has failed yet."""
    attempt = LoginAttempt(username="lead", ip="192.0.2.1")

    waits = [login_begin(attempt) for _ in range(6)]

    assert waits[:5] == [0] * 5 and 890 <= waits[5] <= 900


def test_successful_logins_do_not_use_up_the_address_budget(client, lead):
    for _ in range(25):
        assert _login(client).status_code == 302
        client.logout()

    for i in range(19):  # 19 failures from here still leave one try for the address
        _fail(client, 1, f"guess{i}")
    assert _login(client).status_code == 302


def test_a_form_missing_a_field_checks_no_password_and_counts_nothing(client, lead):
    for _ in range(10):
        assert _login(client, password="").status_code == 200

    assert _login(client).status_code == 302


@pytest.mark.parametrize(
    ("wait", "message"),
    [
        (1, "Too many attempts; try again in 1 minute."),
        (60, "Too many attempts; try again in 1 minute."),
        (61, "Too many attempts; try again in 2 minutes."),
        (900, "Too many attempts; try again in 15 minutes."),
    ],
)
def test_the_message_rounds_the_wait_up_to_minutes(wait, message):
    assert too_many_message(wait) == message


@pytest.mark.parametrize(
    ("proxies", "meta", "expected"),
    [
        (0, {"REMOTE_ADDR": "192.0.2.1"}, "192.0.2.1"),
        (0, {"REMOTE_ADDR": "192.0.2.1", "HTTP_X_FORWARDED_FOR": "203.0.113.5"}, "192.0.2.1"),
        (1, {"REMOTE_ADDR": "192.0.2.1", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 203.0.113.5"},
         "203.0.113.5"),
        (2, {"REMOTE_ADDR": "192.0.2.1", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 203.0.113.5, 10.0.0.1"},
         "203.0.113.5"),
        (3, {"REMOTE_ADDR": "192.0.2.1", "HTTP_X_FORWARDED_FOR": "203.0.113.5"}, "203.0.113.5"),
        (1, {"REMOTE_ADDR": "192.0.2.1"}, "192.0.2.1"),
        (0, {"REMOTE_ADDR": "2001:db8:1:2:3:4:5:6"}, "2001:db8:1:2::/64"),
        (0, {"REMOTE_ADDR": "::ffff:192.0.2.9"}, "192.0.2.9"),
        (0, {"REMOTE_ADDR": ""}, "unknown"),
    ],
)  # fmt: skip
def test_client_ip_trusts_forwarded_for_only_as_far_as_the_proxies(
    settings, proxies, meta, expected
):
    settings.DIFFMARK_PROXY_COUNT = proxies
    request = RequestFactory().get("/", **meta)
    request.META.update(meta)

    assert client_ip(request) == expected


# The API's token endpoint and the admin check passwords too: the same budget.


def test_browser_failures_block_the_token_endpoint_for_that_username(client, lead):
    _fail(client, 5)

    response = _token(client)

    assert response.status_code == 429
    assert response.json()["error"] == {"code": "throttled", "message": BLOCKED, "fields": {}}
    assert 890 <= int(response["Retry-After"]) <= 900


def test_token_endpoint_failures_count_towards_the_browser_login(client, lead):
    for _ in range(5):
        assert _token(client, password="wrong").status_code == 400

    assert _login(client).status_code == 429


def test_a_token_clears_the_username_counter(client, lead):
    _fail(client, 4)
    assert _token(client).status_code == 201
    _fail(client, 4)

    assert _login(client).status_code == 302


def test_a_forged_forwarded_for_header_does_not_escape_the_token_throttle(client, db):
    """DRF keyed its throttle by the whole X-Forwarded-For header (NUM_PROXIES unset), so a new
    header on every request meant no limit at all."""
    statuses = [
        _token(client, f"user{i}", "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code
        for i in range(11)
    ]

    assert statuses == [400] * 10 + [429]


def test_the_admin_login_shares_the_budget(client, db):
    staff = user_ensure(username="boss", password=PASSWORD)
    staff.is_staff = staff.is_superuser = True
    staff.save()
    _fail(client, 5, "boss")

    response = client.post("/admin/login/?next=/admin/", {"username": "boss", "password": PASSWORD})

    assert response.status_code == 200 and BLOCKED in response.content.decode()
    assert "_auth_user_id" not in client.session


# Settings: the cache the counters live in.


def _django(code: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DIFFMARK_", "CELERY_"))}
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cache_is_per_process_by_default_and_redis_when_configured():
    show = (
        "from django.conf import settings; c = settings.CACHES['default']; "
        "print(c['BACKEND'], c.get('LOCATION', ''))"
    )

    default = _django(show)
    redis = _django(show, DIFFMARK_CACHE_URL="redis://127.0.0.1:6379/7")
    broker = _django(show, CELERY_BROKER_URL="redis://:pw@127.0.0.1:6379/0")
    broker_15 = _django(show, CELERY_BROKER_URL="redis://127.0.0.1:6379/15")
    both = _django(
        show, CELERY_BROKER_URL="redis://127.0.0.1:6379/0", DIFFMARK_CACHE_URL="redis://r:6379/3"
    )
    bogus = _django(show, DIFFMARK_CACHE_URL="memcached://secret@127.0.0.1:11211")

    assert default.stdout.strip() == "django.core.cache.backends.locmem.LocMemCache"
    redis_cache = "django.core.cache.backends.redis.RedisCache"
    assert redis.stdout.split() == [redis_cache, "redis://127.0.0.1:6379/7"]
    # With a Redis broker and no cache URL: the broker's Redis, its next database.
    assert broker.stdout.split() == [redis_cache, "redis://:pw@127.0.0.1:6379/1"]
    assert broker_15.stdout.split() == [redis_cache, "redis://127.0.0.1:6379/14"]
    assert both.stdout.split() == [redis_cache, "redis://r:6379/3"]
    assert "DIFFMARK_CACHE_URL must be a redis://" in bogus.stderr
    assert "secret" not in bogus.stderr


@pytest.mark.parametrize(
    ("env", "warned"),
    [
        ({}, True),  # no broker: gunicorn still runs several workers
        ({"CELERY_BROKER_URL": "amqp://rabbit//"}, True),
        ({"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0"}, False),
        ({"DIFFMARK_CACHE_URL": "redis://127.0.0.1:6379/1"}, False),
    ],
    ids=["no-broker", "rabbitmq-broker", "redis-broker", "cache-url"],
)
def test_deploy_check_warns_when_workers_would_count_on_their_own(env, warned):
    production = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 20 + "-production-like-secret-key-0123456789",
        "ALLOWED_HOSTS": "a.b",
    }
    check = "from django.core.management import call_command; call_command('check', deploy=True)"

    result = _django(check, **production, **env)

    assert ("accounts.W001" in result.stderr + result.stdout) is warned, result.stderr


@pytest.mark.integration
@pytest.mark.postgres  # CI's PostgreSQL pass is the one with Redis
def test_with_redis_the_counters_hold_across_processes(client, lead):
    """What one gunicorn worker counted, another process sees: here a separate Python."""
    url = "redis://127.0.0.1:6379/1"
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    redis = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    keys = [key for key, _ in LoginAttempt(username="lead", ip="127.0.0.1").buckets()]
    # A prefix of its own and no cache.clear(), which would flush the whole Redis database.
    with override_settings(CACHES={"default": redis | {"KEY_PREFIX": prefix}}):
        try:
            _fail(client, 5)
            other = _django(
                "from django.conf import settings; "
                f"settings.CACHES['default']['KEY_PREFIX'] = {prefix!r}; "
                "from accounts.throttle import LoginAttempt, login_wait; "
                "print(login_wait(LoginAttempt(username='lead', ip='127.0.0.1')))",
                DIFFMARK_CACHE_URL=url,
            )
        finally:
            cache.delete_many(keys + [f"{key}:until" for key in keys])
    assert other.returncode == 0, other.stderr
    assert 890 <= int(other.stdout.strip()) <= 900


@pytest.mark.integration
@pytest.mark.postgres  # CI's PostgreSQL pass is the one with Redis
def test_two_processes_guessing_at_once_share_one_budget():
    """Two processes (two gunicorn workers) each try 9 wrong passwords at the same moment: with
    only a Redis broker configured, the cache is its next database, and 5 guesses in all are
    let through (a per-process cache let through 5 each)."""
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    start = time.time() + 4  # both have started Django by then
    code = (
        "import time; from django.conf import settings; "
        f"settings.CACHES['default']['KEY_PREFIX'] = {prefix!r}; "
        "from accounts.throttle import LoginAttempt, login_begin; "
        f"time.sleep(max(0, {start} - time.time())); "
        "print(sum(login_begin(LoginAttempt(username='lead', ip='')) == 0 for _ in range(9)))"
    )
    env = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/11"}  # the cache: database 12
    workers = [_django_async(code, **env) for _ in range(2)]
    allowed = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        allowed.append(int(out.strip()))

    assert sum(allowed) == 5, allowed


def _django_async(code: str, **env: str) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DIFFMARK_", "CELERY_"))}
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_with_the_cache_down_people_still_log_in_and_get_tokens(client, lead):
    dead = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
        }
    }
    with override_settings(CACHES=dead):
        assert _token(client).status_code == 201
        response = _login(client)
    assert response.status_code == 302  # logged in: the limits are off, not the log-in
