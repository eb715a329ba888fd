"""Local working folders of jobs, named after the process that made them, and their sweep.

A job that needs a stored file on local disk (a zip of images: zipfile and the decoders want a
path, the storage may be S3) copies it into a temporary folder deleted when the job ends. A
process killed mid-job (kill -9, the OOM killer, gunicorn's timeout) deletes nothing: the folder
name carries the pid, and ``temp_folders_delete`` removes the folders whose process has ended.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from django.core.files.storage import default_storage

from jobs.processes import pid_alive

PREFIX = "diffmark-job-"
_OWNED = re.compile(rf"^{PREFIX}(\d+)-")
# Folders of the releases before the pid was in the name: deleted once a day old.
_LEGACY = ("diffmark-import-", "diffmark-synth-", "diffmark-ls-preview-")
LEGACY_SECONDS = 24 * 3600


@contextlib.contextmanager
def job_tempdir(what: str) -> Iterator[Path]:
    """A new local folder for this process's work on ``what``, deleted on the way out."""
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-{what}-") as folder:
        yield Path(folder)


def local_copy(name: str, target: Path) -> Path:
    """The stored file ``name`` copied to ``target`` in chunks (a zip may be gigabytes)."""
    with default_storage.open(name, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return target


def temp_folders_delete(*, root: str | None = None, now: float | None = None) -> int:
    """Delete the job folders whose process has ended (and old ones of the former naming); the
    number of folders deleted. Only this host's processes are looked at: /tmp is per host."""
    root_path = Path(root or tempfile.gettempdir())
    now = now if now is not None else time.time()
    deleted = 0
    for entry in os.scandir(root_path):
        if not entry.is_dir(follow_symlinks=False):
            continue
        owner = _OWNED.match(entry.name)
        if owner:
            stale = not pid_alive(int(owner.group(1)))
        else:
            stale = entry.name.startswith(_LEGACY) and (
                now - entry.stat(follow_symlinks=False).st_mtime > LEGACY_SECONDS
            )
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)
            deleted += 1
    return deleted
