"""A staticfiles finder that serves each screen's ES module graph as one script.

`annotator/js/main.bundle.js` is built from `annotator/js/main.js` and everything it imports
(config/jsbundle.py), so the page makes one request for its code instead of one per module, in
a waterfall. The finder is how the bundle reaches every server the same way: `collectstatic`
copies it into STATIC_ROOT (where the manifest storage hashes and compresses it), and runserver
and the test server find it on each request, rebuilt from the current sources.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.checks import CheckMessage, Error
from django.core.files.storage import FileSystemStorage

from config.jsbundle import BundleError, bundle

SUFFIX = ".bundle.js"


def bundle_name(entry: str) -> str:
    """annotator/js/main.js → annotator/js/main.bundle.js"""
    return entry.removesuffix(".js") + SUFFIX


def _read(path: str) -> str:
    found = finders.find(path)
    if not found:
        raise BundleError(f"no static file {path}")
    return Path(found).read_text(encoding="utf-8")


class BundleFinder(finders.BaseFinder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.entries = {bundle_name(entry): entry for entry in settings.STATIC_BUNDLES}
        self.storage = FileSystemStorage(location=settings.STATIC_BUNDLE_DIR)

    def check(self, **kwargs) -> list[CheckMessage]:
        errors: list[CheckMessage] = []
        for entry in self.entries.values():
            try:
                bundle(entry, _read)
            except BundleError as error:
                errors.append(Error(f"cannot bundle {entry}: {error}", id="config.E101"))
        return errors

    def _build(self, name: str) -> str:
        """Write the bundle when its text changed (atomically: requests may read it meanwhile)."""
        text = bundle(self.entries[name], _read)
        target = Path(self.storage.path(name))
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            # A file of its own per writer (runserver's threads, parallel test processes).
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", delete=False
            ) as partial:
                partial.write(text)
            os.chmod(partial.name, 0o644)  # collected and served like the sources, not 0600
            os.replace(partial.name, target)
        return str(target)

    def find(self, path, find_all=False, **kwargs):
        if path not in self.entries:
            return [] if find_all else None
        found = self._build(path)
        return [found] if find_all else found

    def list(self, ignore_patterns):
        for name in self.entries:
            self._build(name)
            yield name, self.storage
