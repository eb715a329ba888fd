"""Image references as Label Studio writes them, matched to the files of an images folder or zip.

The rule (documented in docs/labelstudio.md, pinned by tests):

1. The reference is reduced to a path. ``/data/local-files/?d=<path>`` gives ``<path>``; an
   ``http(s)://`` URL its path (the query string, e.g. a presigned signature, is dropped);
   ``s3://``, ``gs://`` and ``azure-blob://`` URIs the object key (the bucket is set aside);
   ``/data/upload/<project>/<name>`` the name. Percent-escapes are decoded.
2. The path is looked up among the source's files: first whole, then with leading folders
   dropped one at a time (``datasets/pairs/a/001.png``, ``pairs/a/001.png``, ``a/001.png``,
   ``001.png``), so a zip made from any folder level matches and ``a/001.png`` is never
   confused with ``b/001.png``. The first step that matches exactly one file wins; a step that
   matches several files is ambiguous and reported.
3. Label Studio renames uploads to ``<8 hex characters>-<original name>``; when nothing matches,
   the file name without that prefix is tried the same way.

A reference is bounded: at most MAX_REFERENCE_CHARS characters and MAX_REFERENCE_PARTS
folders, so looking one up costs the same whatever a hostile export writes (the suffix walk of
rule 2 is quadratic in the parts). A longer one is not found, and the answer says why.

An ``s3://`` reference to the bucket Diffmark itself stores files in may also be read from that
bucket by key (done by the caller, which knows the storage and which keys the importing
project may read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import parse_qs, unquote, urlsplit

# Label Studio renames uploads to "<8 hex chars of a uuid4>-<original name>".
_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{8}-(.+)$")
_BUCKET_SCHEMES = frozenset({"s3", "gs", "azure-blob"})
MAX_REFERENCE_CHARS = 2048  # a URL with a presigned query fits; browsers stop near here too
MAX_REFERENCE_PARTS = 64  # folders deep; real exports have a handful
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"})


class ImageNotFound(LookupError):
    """No file, or more than one, matches an image reference; str() says which."""


@dataclass(frozen=True)
class Reference:
    """What an image reference names: a path, and the bucket for a cloud-storage URI."""

    path: str
    bucket: str = ""
    scheme: str = ""


def reference_problem(reference: str) -> str:
    """Why a reference is too costly to look up ("" when it is not)."""
    if len(reference) > MAX_REFERENCE_CHARS:
        return f"the image reference is over {MAX_REFERENCE_CHARS} characters"
    if reference.count("/") + reference.count("\\") > MAX_REFERENCE_PARTS + 8:
        return f"the image reference is over {MAX_REFERENCE_PARTS} folders deep"
    return ""


def parse_reference(reference: str) -> Reference:
    """What the reference names; a reference over the bounds names nothing (an empty path)."""
    if reference_problem(reference):
        return Reference("")
    parts = urlsplit(reference.strip().replace("\\", "/"))
    scheme = parts.scheme.lower()
    if scheme in _BUCKET_SCHEMES:
        return Reference(unquote(parts.path.lstrip("/")), parts.netloc, scheme)
    local = parse_qs(parts.query).get("d")
    path = unquote(local[0] if local else parts.path)
    upload = re.match(r"^/?data/upload/\d+/(.+)$", path)
    return Reference(upload.group(1) if upload else path, "", scheme)


def looks_like_image(value: str) -> bool:
    return PurePosixPath(parse_reference(value).path).suffix.lower() in IMAGE_SUFFIXES


class ImageFinder:
    """Finds the file an image reference names among the files of the images folder or zip."""

    def __init__(self, names: Iterable[str]) -> None:
        self._by_suffix: dict[str, list[str]] = {}
        for name in sorted(set(names)):
            parts = PurePosixPath(name).parts
            for start in range(len(parts)):
                self._by_suffix.setdefault("/".join(parts[start:]), []).append(name)

    def find(self, reference: str) -> str:
        """The file's name in the source; ImageNotFound when none (or several) match."""
        if problem := reference_problem(reference):
            raise ImageNotFound(problem)
        path = parse_reference(reference).path
        parts = [p for p in PurePosixPath(path).parts if p not in ("/", "", ".")]
        if len(parts) > MAX_REFERENCE_PARTS:
            raise ImageNotFound(f"the image reference is over {MAX_REFERENCE_PARTS} folders deep")
        if ".." in parts:
            parts = parts[len(parts) - 1 :]  # never walk up: only the file name is trusted
        tries = [parts]
        stripped = _UPLOAD_PREFIX.match(parts[-1]) if parts else None
        if stripped:
            tries.append([stripped.group(1)])
        for candidate in tries:
            for start in range(len(candidate)):
                suffix = "/".join(candidate[start:])
                found = self._by_suffix.get(suffix, [])
                if len(found) == 1:
                    return found[0]
                if found:
                    shown = ", ".join(found[:3]) + (", …" if len(found) > 3 else "")
                    raise ImageNotFound(f"several files match {suffix} ({shown})")
        names = " or ".join(dict.fromkeys(c[-1] for c in tries if c)) or "(empty)"
        raise ImageNotFound(f"no file named {names} in the images source (from {reference})")
