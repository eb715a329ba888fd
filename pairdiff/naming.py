"""A pair's short human name: its number in the project and the name of what it came from.

"#42 · kitchen_03" reads and says better than a 20-character hex key; the number is unique in the
project, the source name is only a reminder (several pairs may come from one photo).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

SOURCE_NAME_LENGTH = 40
# A content hash or a generated key says nothing to a person: a file name says more.
_KEY_LIKE = re.compile(r"[0-9a-f]{16,}|[0-9a-f-]{32,}", re.IGNORECASE)


def source_name(external_id: str, metadata: Mapping[str, Any] | None) -> str:
    """The most telling short name of a pair's source: the photo a synthesized pair was made
    from, else its external id unless that is a generated key, else image A's file name."""
    metadata = metadata or {}
    synthesized = metadata.get("synthesized")
    candidates: list[object] = []
    if isinstance(synthesized, Mapping):
        candidates.append(_stem(synthesized.get("photo")))
    if external_id and not _KEY_LIKE.fullmatch(external_id):
        candidates.append(external_id)
    files = metadata.get("source_files")
    if isinstance(files, list) and files:
        candidates.append(_stem(files[0]))
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            return _short(candidate.strip())
    return ""


def pair_name(number: int | None, source: str) -> str:
    """ "#42 · kitchen_03", or "#42" when the pair has no source name."""
    head = f"#{number}" if number else "#?"
    return f"{head} · {source}" if source else head


def _stem(path: object) -> str:
    if not isinstance(path, str) or not path:
        return ""
    return PurePosixPath(path.replace("\\", "/")).stem


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SOURCE_NAME_LENGTH else text[: SOURCE_NAME_LENGTH - 1] + "…"
