"""Test overrides: fast hashing, no HTTPS redirects, files under a throwaway folder."""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production-use-0123456789abcdef")

from config.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT") or tempfile.mkdtemp(prefix="diffmark-test-media-"))
STORAGES["staticfiles"] = {  # noqa: F405
    "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
}
STATIC_ROOT = Path(tempfile.mkdtemp(prefix="diffmark-test-static-"))
STATIC_BUNDLE_DIR = Path(tempfile.mkdtemp(prefix="diffmark-test-bundles-"))
WHITENOISE_USE_FINDERS = True
# Tasks run in-process in tests; the integration tests start a real worker and switch this off.
# The worker processes they start (named by DIFFMARK_TEST_QUEUE) run with their broker, as in
# production: what a task sends (a webhook's retry) goes through it.
CELERY_TASK_ALWAYS_EAGER = not os.environ.get("DIFFMARK_TEST_QUEUE")
# One queue: the tests' workers (tests/integration) each listen to a queue of their own, named
# here for the worker's own sends (a webhook's retry); the routes of config.settings have a test.
CELERY_TASK_ROUTES = {}
CELERY_TASK_QUEUES = []  # none declared: the default queue, made when first used
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("DIFFMARK_TEST_QUEUE", "celery")
# Tests that count queries must not meet a sweep riding on their request; its own tests turn it on.
DIFFMARK_SWEEP_ON_REQUEST = False
# The live server is wsgiref's: a job started from a browser test would get a thread of its own,
# writing through a second connection to the shared in-memory SQLite database (whose table locks
# do not wait). Tests run it in close() as before; tests/config/test_after_response_server.py
# turns the threads on.
DIFFMARK_AFTER_RESPONSE_THREADS = False
# CI's PostgreSQL pass sets CELERY_BROKER_URL, whose Redis would otherwise hold the cache (see
# settings): tests clear the cache freely, so they keep one per process unless told otherwise.
if not os.environ.get("DIFFMARK_CACHE_URL"):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Tests are one process each: the checks that refuse a per-process cache in production
# (accounts.E001) would stop every migrate the integration tests run.
DIFFMARK_REQUIRE_SHARED_CACHE = False
