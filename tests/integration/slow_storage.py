"""Test-only: a filesystem storage that sleeps before every save, so that a fault test can kill
a worker in the middle of a release build or an import. Used by workers started with
DJANGO_SETTINGS_MODULE=tests.integration.settings_slow; nothing outside the tests knows it."""

import os
import time

from django.core.files.storage import FileSystemStorage


class SlowStorage(FileSystemStorage):
    def _save(self, name, content):
        time.sleep(float(os.environ.get("DIFFMARK_TEST_SAVE_DELAY", "0")))
        return super()._save(name, content)
