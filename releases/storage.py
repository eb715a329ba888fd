"""The release's files in storage: originals copied (checked against their import sha256,
hard-linked on local disk), built files written and hashed, a folder read back or cleared. No
database here: the build's executors (workers.py) call these from threads and processes."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage

from annotator.models import Pair
from config.storage import local_path
from pairdiff.release.build import sha256
from pairdiff.release.control_images import control_file
from releases.refusals import ReleaseRefused

EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp", "TIFF": "tif", "BMP": "bmp"}


def image_path(pair: Pair, side: str) -> str:
    """The name of a side's original in the release's folder."""
    fmt = pair.format_a if side == "a" else pair.format_b
    return f"images/{pair.pk}_{side}.{EXTENSIONS.get(fmt, fmt.lower() or 'bin')}"


def original_copy(
    pair: Pair,
    side: str,
    prefix: str,
    storage: Storage,
    *,
    checked: dict | None = None,
    made: set | None = None,
) -> tuple[str, tuple]:
    """Copy the original byte for byte, checked against the sha256 taken at import. On local
    disk the release's file is a hard link to the checked original (a copy across devices):
    originals are never rewritten in place, and deleting either leaves the other."""
    expected = pair.sha256_a if side == "a" else pair.sha256_b
    name = image_path(pair, side)
    original = pair.image(side)
    source = local_path(original.storage, original.name)
    target = local_path(storage, f"{prefix}/{name}")
    if source is None or target is None:
        # A handle of its own: the pair's FieldFile is shared with the threads that read the
        # same original for the Parquet rows, and an S3 file closed by one is None to another.
        with original.storage.open(original.name, "rb") as handle:
            data = handle.read()
        _check(pair, side, sha256(data), expected)
        file_write(storage, f"{prefix}/{name}", data)
        return name, (len(data), expected)
    cache = checked if checked is not None else {}
    digest = cache.get(source) or _file_sha256(source)
    _check(pair, side, digest, expected)
    cache[source] = digest
    folder = os.path.dirname(target)
    if made is None or folder not in made:
        _makedirs(folder)
        if made is not None:
            made.add(folder)
    try:
        os.link(source, target)
    except FileExistsError:  # the folder was cleared; a leftover would break the manifest
        raise RuntimeError(f"{prefix}/{name} exists already") from None
    except OSError:  # another device, a link limit, a filesystem without links
        shutil.copyfile(source, target)
        os.chmod(target, settings.FILE_UPLOAD_PERMISSIONS)  # as the storage writes (a link shares)
    return name, (os.path.getsize(target), digest)


def control_files_write(
    pairs: Sequence[Pair],
    specs: Mapping[str, tuple[str, str]],
    prefix: str,
    storage: Storage,
) -> dict[str, tuple[int, str]]:
    """The made controls' files (``ReleaseFiles.control_files``): image A of the pair each is
    made from, read from its original (checked against its import sha256), copied or
    re-encoded (``control_images.control_file``), written under the release's folder; size
    and sha256 by name."""
    sides = {image_path(pair, side): (pair, side) for pair in pairs for side in "ab"}
    written = {}
    for name, (source, how) in sorted(specs.items()):
        pair, side = sides[source]
        original = pair.image(side)
        with original.storage.open(original.name, "rb") as handle:
            data = handle.read()
        _check(pair, side, sha256(data), pair.sha256_a if side == "a" else pair.sha256_b)
        written[name] = file_store(storage, f"{prefix}/{name}", control_file(data, how))
    return written


def _makedirs(folder: str) -> None:
    """The release's folders with the storage's folder mode (as its own saves make them). Each
    new folder is chmod-ed: the umask is the process's, and copies run in threads."""
    mode = settings.FILE_UPLOAD_DIRECTORY_PERMISSIONS
    missing = []
    path = Path(folder)
    while not path.exists():
        missing.append(path)
        path = path.parent
    for new in reversed(missing):
        try:
            new.mkdir()
        except FileExistsError:
            continue  # another thread made it
        if mode is not None:
            new.chmod(mode)


def _check(pair: Pair, side: str, digest: str, expected: str) -> None:
    if digest != expected:
        raise ReleaseRefused(
            f"image {side.upper()} of pair {pair.pk} changed since its import "
            f"(sha256 {digest[:12]}…, expected {expected[:12]}…)"
        )


def _file_sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def file_read(storage: Storage, name: str) -> bytes:
    with storage.open(name, "rb") as handle:
        return handle.read()


def files_store(
    storage: Storage, prefix: str, made: Iterator[tuple[str, bytes]], stopped
) -> dict[str, tuple[int, str]]:
    """Write each file ``made`` gives under ``prefix``, until ``stopped`` (a thread's or a
    worker process's event) is set: size and sha256 by name."""
    written = {}
    for name, data in made:
        if stopped.is_set():
            break
        written[name] = file_store(storage, f"{prefix}/{name}", data)
    return written


def file_store(storage: Storage, name: str, data: bytes) -> tuple[int, str]:
    """Write ``data`` and return its size and sha256 (for the manifest)."""
    file_write(storage, name, data)
    return len(data), sha256(data)


def file_write(storage: Storage, name: str, data: bytes) -> None:
    saved = storage.save(name, ContentFile(data))
    if saved != name:  # the folder was cleared; a renamed file would break the manifest
        storage.delete(saved)
        raise RuntimeError(f"storage wrote {saved} instead of {name}")


def folder_clear(storage: Storage, prefix: str) -> None:
    try:
        folders, files = storage.listdir(prefix)
    except FileNotFoundError:
        return
    for name in files:
        storage.delete(f"{prefix}/{name}")
    for folder in folders:
        folder_clear(storage, f"{prefix}/{folder}")
