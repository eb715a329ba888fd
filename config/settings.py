"""Diffmark settings, read from the environment (see docs/operations.md, "Configuration").

Nothing here touches the disk or the network: folders are made by `make`/the services,
so importing settings never has side effects.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import env_bool, env_int, env_list, env_str, redis_neighbour_db

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("DIFFMARK_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "django-insecure-development-only-key-never-use-in-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "accounts",
    "projects",
    "webhooks",
    "jobs",
    "annotator",
    "review",
    "releases",
    "console",
    "api",
]

MIDDLEWARE = [
    # First: the review work a submit triggers runs after the response is sent (no broker).
    "config.after_response.AfterResponseMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.SecurityHeadersMiddleware",  # CSP and Permissions-Policy
    "config.middleware.DatabaseUnavailableMiddleware",  # 503 + Retry-After, not a 500 page
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.RefuseNulMiddleware",  # ?q=%00: a 400, not a DataError deep in a query
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # No broker: the sweeps that beat would run ride on a request now and then
    # (console.maintenance).
    "console.maintenance.SweepWithoutWorkerMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'diffmark.sqlite3'}"),
        # Persistent connections, except under DEBUG: the development server (`make run`) runs
        # each request in a new thread, whose kept connection is never reused and only closed
        # when garbage-collected, so 8 busy users exhausted PostgreSQL's 100 connections (503s).
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0 if DEBUG else 60),
        # Off by default: a check is one more round trip at the start of every request. A
        # persistent connection the database dropped fails that one request's first statement
        # instead, which answers 503 + Retry-After (config.middleware; nothing half-written, a
        # submit repeated with its key is stored once); Django then discards the connection.
        conn_health_checks=env_bool("DATABASE_CONN_HEALTH_CHECKS", False),
    )
}
# PostgreSQL: the hot path's own statements (config.rows) are prepared once per connection, so
# the server parses and plans each only once (issue #17). Nothing else is: the ORM's cursors bind
# on the client, which psycopg never prepares. Off for a pooler in transaction mode that does not
# keep prepared statements (PgBouncer before 1.21).
DATABASE_PREPARED_STATEMENTS = DATABASES["default"]["ENGINE"].endswith("postgresql") and env_bool(
    "DATABASE_PREPARED_STATEMENTS", True
)
if DATABASE_PREPARED_STATEMENTS:
    # psycopg prepares a statement when asked, or after this many runs; Django's default (None)
    # would refuse even when asked.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 2**31 - 1)
# A pooler in transaction mode (PgBouncer pool_mode=transaction) hands each transaction any
# server connection: a cursor a chunked read (QuerySet.iterator()) declared on one is not on the
# next. Set to 1 there (docs/scaling.md, "PostgreSQL behind a pooler").
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool(
    "DATABASE_DISABLE_SERVER_SIDE_CURSORS", False
)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL: readers never wait for the writer, and a commit appends to the log instead of
    # syncing the database file (synchronous=NORMAL: durable up to a power cut, never corrupt).
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"
    )
    # A writer waits this long for another's commit before "database is locked" (Python's
    # default is 5 s): without a broker a job writes from its own thread beside the requests.
    DATABASES["default"]["OPTIONS"].setdefault("timeout", env_int("DATABASE_SQLITE_TIMEOUT", 20))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotator:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Files: originals of the pairs and the releases. Filesystem by default, S3 when a bucket is set.
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
# Media files are nobody else's to read: the owner writes, its group (the web and worker users
# share one) reads; folders likewise. On S3 objects are private (AWS_DEFAULT_ACL below).
FILE_UPLOAD_PERMISSIONS = 0o640
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o750
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "config.staticbundles.BundleFinder",
]
# Each screen's ES modules are served as one script, <entry>.bundle.js (config/staticbundles.py),
# built into STATIC_BUNDLE_DIR for runserver and the tests and collected with the rest.
STATIC_BUNDLES = ["annotator/js/main.js", "review/js/adjudicate.js"]
STATIC_BUNDLE_DIR = Path(env_str("STATIC_BUNDLE_DIR", str(VAR_DIR / "bundles")))

AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
if AWS_STORAGE_BUCKET_NAME:
    AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL") or None
    AWS_S3_REGION_NAME = env_str("AWS_S3_REGION_NAME") or None
    AWS_ACCESS_KEY_ID = env_str("AWS_ACCESS_KEY_ID") or None
    AWS_SECRET_ACCESS_KEY = env_str("AWS_SECRET_ACCESS_KEY") or None
    AWS_DEFAULT_ACL = None  # private objects; the bucket policy decides, never public-read
    AWS_QUERYSTRING_AUTH = True
    AWS_QUERYSTRING_EXPIRE = env_int("AWS_QUERYSTRING_EXPIRE", 300)
    # Left unset, botocore signs URLs for us-east-1 (MinIO's default region) with the deprecated
    # SigV2, which AWS regions opened since 2014 refuse; SigV4 works on AWS and MinIO alike.
    AWS_S3_SIGNATURE_VERSION = "s3v4"
    AWS_S3_FILE_OVERWRITE = False
    # A file opened for reading is downloaded whole into a spooled buffer before the first byte
    # is served; django-storages' default (0) never spills it to disk, so every image request
    # would hold up to DIFFMARK_MAX_IMAGE_BYTES in memory.
    AWS_S3_MAX_MEMORY_SIZE = 4 * 1024 * 1024
    _default_storage = {"BACKEND": "storages.backends.s3.S3Storage"}
else:
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _default_storage,
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Celery: with no broker, tasks run eagerly in-process (the zero-setup default).
CELERY_TASK_ALWAYS_EAGER = not env_str("CELERY_BROKER_URL")
# In eager mode nothing is sent; the in-memory transport keeps Celery from dialling a default
# broker on localhost when it sets up.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "memory://"
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker child whose memory passed this (kilobytes) after a task (a big import, figures of a
# large project) is replaced before its next one, so a day-long run cannot creep; 0: never.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", 400_000) or None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Publishing fails fast: web requests enqueue after commit and must not hang on a dead or stuck
# broker (kombu's defaults retry and, on a Redis that accepts but never answers, wait forever).
# A send that fails is logged and re-sent by the sweeps below, so nothing is lost.
DIFFMARK_BROKER_TIMEOUT = env_int("DIFFMARK_BROKER_TIMEOUT", 1)  # seconds, connect and reply
CELERY_BROKER_CONNECTION_TIMEOUT = DIFFMARK_BROKER_TIMEOUT
CELERY_TASK_PUBLISH_RETRY = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": DIFFMARK_BROKER_TIMEOUT,
    "socket_timeout": DIFFMARK_BROKER_TIMEOUT,
    "max_retries": 0,  # one connection attempt per send; the worker reconnects on its own loop
    # An unacknowledged message (its worker died) comes back after this many seconds; the
    # stale-job sweep usually recovers sooner. Keep it above the longest task, or it runs twice
    # (harmless: every task claims its job first, but wasted work).
    "visibility_timeout": env_int("DIFFMARK_BROKER_VISIBILITY_TIMEOUT", 3600),
}
# Periodic sweeps (run `celery -A config beat`, one beat process per deployment).
DIFFMARK_SWEEP_SECONDS = env_int("DIFFMARK_SWEEP_SECONDS", 300)
# Whole-project figures (dashboard, accepted breakdown, question prior, difficulty filter):
# computed per request up to this many pairs, above it read from what beat stored every
# DIFFMARK_FIGURES_SECONDS (review.figures), with the time they were computed.
DIFFMARK_FIGURES_LIVE_PAIRS = env_int("DIFFMARK_FIGURES_LIVE_PAIRS", 20_000)
DIFFMARK_FIGURES_SECONDS = env_int("DIFFMARK_FIGURES_SECONDS", 600)
# A large project's pairs per status are counted again by the same job once this old
# (annotator.pair_counts); pages show them with the time they were counted.
DIFFMARK_COUNTS_SECONDS = env_int("DIFFMARK_COUNTS_SECONDS", 60)
DIFFMARK_RESEND_AFTER_MINUTES = env_int("DIFFMARK_RESEND_AFTER_MINUTES", 10)
DIFFMARK_STALE_JOB_MINUTES = env_int("DIFFMARK_STALE_JOB_MINUTES", 30)
# Label Studio uploads staged for a preview and never imported are deleted after this long.
DIFFMARK_STAGED_UPLOAD_HOURS = env_int("DIFFMARK_STAGED_UPLOAD_HOURS", 24)
# Without a broker, a request every DIFFMARK_SWEEP_SECONDS runs the failing sweeps (on by default;
# `manage.py sweep` from cron does all of them).
DIFFMARK_SWEEP_ON_REQUEST = env_bool("DIFFMARK_SWEEP_ON_REQUEST", True)
# Without a broker, under runserver (`make run`), long work run after the response (a build, a
# synthesis) gets a thread of its own, so the connection's next request need not wait for it
# (config.after_response).
DIFFMARK_AFTER_RESPONSE_THREADS = env_bool("DIFFMARK_AFTER_RESPONSE_THREADS", True)
# A sweep that waited longer than its period is dropped: the next one does the same work.
CELERY_BEAT_SCHEDULE = {
    name: {"task": task, "schedule": float(every), "options": {"expires": float(every)}}
    for name, task, every in [
        ("expire-leases", "annotator.tasks.expire_leases", 60),
        ("resend-queued-jobs", "annotator.tasks.resend_queued_jobs", DIFFMARK_SWEEP_SECONDS),
        ("fail-stale-jobs", "annotator.tasks.fail_stale_jobs", DIFFMARK_SWEEP_SECONDS),
        ("resend-review-work", "review.tasks.resend_review_work", DIFFMARK_SWEEP_SECONDS),
        ("fail-stale-releases", "review.tasks.fail_stale_releases", DIFFMARK_SWEEP_SECONDS),
        ("refresh-queue-priorities", "annotator.tasks.refresh_queue_priorities", 600),
        ("sweep-files", "annotator.tasks.sweep_files", 3600),
        ("resend-webhooks", "api.tasks.resend_webhooks", 60),
        ("prune-webhooks", "api.tasks.prune_webhooks", 3600),
        ("refresh-project-figures", "review.tasks.refresh_project_figures", 60),
    ]
}
# Queues, so each kind of work gets a worker pool of its own (docs/scaling.md): "interactive"
# (the cross-check and gold score after a submit: short, many, latency counts), "jobs" (imports,
# releases, evaluations, pre-annotation, synthesis: long, CPU and storage), "webhooks" (waiting
# on other people's servers: I/O only) and "celery" (the beat's sweeps). A worker started
# without -Q listens to all four (CELERY_TASK_QUEUES), so one worker still does everything.
CELERY_TASK_DEFAULT_QUEUE = "celery"
DIFFMARK_QUEUES = ("interactive", "jobs", "webhooks", "celery")
CELERY_TASK_QUEUES = [Queue(name) for name in DIFFMARK_QUEUES]
CELERY_TASK_ROUTES = {
    "review.tasks.compute_agreement": {"queue": "interactive"},
    "review.tasks.score_gold_annotation": {"queue": "interactive"},
    "annotator.tasks.import_pairs_job": {"queue": "jobs"},
    "annotator.tasks.preannotate_job": {"queue": "jobs"},
    "annotator.tasks.synthesize_pairs_job": {"queue": "jobs"},
    "review.tasks.recompute_agreements": {"queue": "jobs"},
    "review.tasks.build_release": {"queue": "jobs"},
    "review.tasks.score_evaluation": {"queue": "jobs"},
    "annotator.assists.precompute_assists": {"queue": "jobs"},
    "api.tasks.deliver_webhook": {"queue": "webhooks"},
}

# Webhooks (docs/webhooks.md). Receivers on loopback, private, link-local or metadata addresses
# are refused unless a network here allows them (comma-separated CIDRs, e.g. 10.20.0.0/16).
DIFFMARK_WEBHOOK_ALLOWED_NETWORKS = env_str("DIFFMARK_WEBHOOK_ALLOWED_NETWORKS")
DIFFMARK_WEBHOOK_TIMEOUT = env_int("DIFFMARK_WEBHOOK_TIMEOUT", 10)  # seconds, connect and read
DIFFMARK_WEBHOOK_ATTEMPTS = env_int("DIFFMARK_WEBHOOK_ATTEMPTS", 8)
# The wait before retry n is DIFFMARK_WEBHOOK_RETRY_SECONDS × 2^(n-1): 10 s, 20 s, … 21 min.
DIFFMARK_WEBHOOK_RETRY_SECONDS = env_int("DIFFMARK_WEBHOOK_RETRY_SECONDS", 10)
# Events, their deliveries and attempts are deleted this many days after the event.
DIFFMARK_WEBHOOK_KEEP_DAYS = env_int("DIFFMARK_WEBHOOK_KEEP_DAYS", 30)

# Upload limits for pair images (see pairdiff.images.ImageLimits).
DIFFMARK_MAX_IMAGE_BYTES = env_int("DIFFMARK_MAX_IMAGE_BYTES", 50 * 1024 * 1024)
DIFFMARK_MAX_IMAGE_PIXELS = env_int("DIFFMARK_MAX_IMAGE_PIXELS", 40_000_000)
DIFFMARK_LEASE_SECONDS = env_int("DIFFMARK_LEASE_SECONDS", 30 * 60)
# The `vlm` pre-annotation backend: an OpenAI-compatible chat-completions API (vLLM, SGLang).
DIFFMARK_VLM_URL = env_str("DIFFMARK_VLM_URL")
DIFFMARK_VLM_MODEL = env_str("DIFFMARK_VLM_MODEL", "Qwen/Qwen3-VL-8B-Instruct")
DIFFMARK_VLM_API_KEY = env_str("DIFFMARK_VLM_API_KEY")
DIFFMARK_VLM_TIMEOUT = env_int("DIFFMARK_VLM_TIMEOUT", 120)
# Scoring: a local BERTScore model folder (with the bert-score package installed) enables
# `evaluate --text-metric bertscore`; nothing is ever downloaded. Layers as bert-score wants.
DIFFMARK_BERTSCORE_MODEL = env_str("DIFFMARK_BERTSCORE_MODEL")
DIFFMARK_BERTSCORE_LAYERS = env_int("DIFFMARK_BERTSCORE_LAYERS", 17)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# The cache holds the log-in and token rate limits (accounts.throttle, DRF throttles). A
# per-process cache would let every gunicorn worker count on its own and the limits multiply,
# so whenever Redis is configured the cache lives there: DIFFMARK_CACHE_URL, or by default the
# broker's Redis in the next database (never the broker's own: clearing the cache must never
# drop queued tasks). Without either it is per process: fine for `make run` (DEBUG=1), refused
# in production (accounts.E001).
DIFFMARK_CACHE_URL = env_str("DIFFMARK_CACHE_URL") or redis_neighbour_db(
    env_str("CELERY_BROKER_URL")
)
if DIFFMARK_CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": DIFFMARK_CACHE_URL,
            "KEY_PREFIX": "diffmark",
        }
    }
elif DIFFMARK_CACHE_URL:
    # The value is not echoed: it may hold the Redis password.
    raise ImproperlyConfigured("DIFFMARK_CACHE_URL must be a redis://, rediss:// or unix:// URL")
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Production refuses to start on a per-process cache (accounts.E001): whenever DEBUG is off.
DIFFMARK_REQUIRE_SHARED_CACHE = not DEBUG
# Failed log-ins allowed per window, by username and by client address (accounts.throttle).
DIFFMARK_LOGIN_USER_LIMIT = env_int("DIFFMARK_LOGIN_USER_LIMIT", 5)
DIFFMARK_LOGIN_IP_LIMIT = env_int("DIFFMARK_LOGIN_IP_LIMIT", 20)
DIFFMARK_LOGIN_WINDOW_SECONDS = env_int("DIFFMARK_LOGIN_WINDOW_SECONDS", 15 * 60)
# Proxies in front of the app that append to X-Forwarded-For. 0 trusts only the socket's
# address: a header the client wrote must never choose the bucket it is counted in.
DIFFMARK_PROXY_COUNT = env_int("DIFFMARK_PROXY_COUNT", 0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_THROTTLE_RATES": {"auth": env_str("DIFFMARK_TOKEN_RATE", "10/minute")},
    # DRF's default (None) keys throttles by the whole X-Forwarded-For header, which a client
    # can change on every request to escape the limit.
    "NUM_PROXIES": DIFFMARK_PROXY_COUNT,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only: DRF's browsable HTML pages run inline scripts, which the CSP blocks; people
    # read the API at /api/v1/docs/.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # DRF's three, refusing NUL characters, which PostgreSQL cannot store (api.parsers).
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.JSONParser",
        "api.parsers.FormParser",
        "api.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "api.errors.handle_exception",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Diffmark API",
    "DESCRIPTION": "Image-pair change benchmarks: projects, pairs, annotations, releases.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs page's assets come from the sidecar package: no CDN, nothing fetched at run time.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Several models have a `status` with its own choices; named here, or drf-spectacular makes
    # up "Status203Enum" and warns (which fails `check --deploy`).
    "ENUM_NAME_OVERRIDES": {"ReleaseStatusEnum": "releases.models.ReleaseStatus"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.add_common_errors",
    ],
}

# Production hardening: on whenever DEBUG is off (manage.py check --deploy is clean).
# X-Forwarded-Proto is believed only when a proxy is said to be there: with none, a client
# could write "https" itself and pass as a secure request (CSRF's referer check, secure-only
# redirects). The proxy must set the header, overwriting what the client sent.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if DIFFMARK_PROXY_COUNT > 0 else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Scripts only from this site's files (no inline script, no inline handler, no eval); styles
# may be inline (the pages size panels with style attributes, htmx adds its indicator style);
# images are the app's own (pairs are streamed through it, never from a bucket URL), plus the
# data:/blob: URLs the canvas and the API docs make.
DIFFMARK_CONTENT_SECURITY_POLICY = env_str(
    "DIFFMARK_CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)
# Nothing here uses the camera, microphone, location or sensors; copying to the clipboard
# (token pages) stays allowed for this site.
DIFFMARK_PERMISSIONS_POLICY = env_str(
    "DIFFMARK_PERMISSIONS_POLICY",
    "accelerometer=(), autoplay=(), camera=(), display-capture=(), geolocation=(), "
    "gyroscope=(), magnetometer=(), microphone=(), midi=(), payment=(), usb=(), "
    "browsing-topics=()",
)
SESSION_COOKIE_HTTPONLY = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Without a broker every task runs inside a request; its "Task … succeeded" line would be
    # written once per submit. Failures are still logged (ERROR).
    "loggers": {"celery.app.trace": {"level": "WARNING"}} if CELERY_TASK_ALWAYS_EAGER else {},
}
