"""Diffmark settings, read from the environment (see README "Configuration").

Nothing here touches the disk or the network: folders are made by `make`/the services,
so importing settings never has side effects.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str

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
    "annotator",
    "review",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
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
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STATICFILES_DIRS = [BASE_DIR / "static"]

AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
if AWS_STORAGE_BUCKET_NAME:
    AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL") or None
    AWS_S3_REGION_NAME = env_str("AWS_S3_REGION_NAME") or None
    AWS_ACCESS_KEY_ID = env_str("AWS_ACCESS_KEY_ID") or None
    AWS_SECRET_ACCESS_KEY = env_str("AWS_SECRET_ACCESS_KEY") or None
    AWS_DEFAULT_ACL = None  # private objects; the bucket policy decides, never public-read
    AWS_QUERYSTRING_AUTH = True
    AWS_QUERYSTRING_EXPIRE = env_int("AWS_QUERYSTRING_EXPIRE", 300)
    AWS_S3_FILE_OVERWRITE = False
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
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# Upload limits for pair images (see pairdiff.images.ImageLimits).
DIFFMARK_MAX_IMAGE_BYTES = env_int("DIFFMARK_MAX_IMAGE_BYTES", 50 * 1024 * 1024)
DIFFMARK_MAX_IMAGE_PIXELS = env_int("DIFFMARK_MAX_IMAGE_PIXELS", 40_000_000)
DIFFMARK_LEASE_SECONDS = env_int("DIFFMARK_LEASE_SECONDS", 30 * 60)
# The `vlm` pre-annotation backend: an OpenAI-compatible chat-completions API (vLLM, SGLang).
DIFFMARK_VLM_URL = env_str("DIFFMARK_VLM_URL")
DIFFMARK_VLM_MODEL = env_str("DIFFMARK_VLM_MODEL", "Qwen/Qwen3-VL-8B-Instruct")
DIFFMARK_VLM_API_KEY = env_str("DIFFMARK_VLM_API_KEY")
DIFFMARK_VLM_TIMEOUT = env_int("DIFFMARK_VLM_TIMEOUT", 120)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_THROTTLE_RATES": {"auth": env_str("DIFFMARK_TOKEN_RATE", "10/minute")},
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
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
}

# Production hardening: on whenever DEBUG is off (manage.py check --deploy is clean).
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("DIFFMARK_BEHIND_PROXY", True) else None
)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
