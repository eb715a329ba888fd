"""Test settings for a worker whose storage is slow (see slow_storage.py)."""

from config.settings_test import *  # noqa: F403

STORAGES = {  # noqa: F405
    **STORAGES,  # noqa: F405
    "default": {"BACKEND": "tests.integration.slow_storage.SlowStorage"},
}
