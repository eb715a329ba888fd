"""The Celery app; tasks run eagerly in-process when no broker is configured."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("diffmark")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
