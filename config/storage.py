"""What the app needs to know of a storage beyond Django's API."""

from __future__ import annotations

from django.core.files.storage import Storage


def local_path(storage: Storage, name: str) -> str | None:
    """The file's path on local disk, or None for a remote store (S3 has no paths)."""
    try:
        return storage.path(name)
    except NotImplementedError:
        return None
