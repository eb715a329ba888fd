"""The lines of a predictions file, read one at a time with a bound on each (pure).

A predictions file can be hundreds of megabytes: it is never read whole, and no line is held
past MAX_LINE_BYTES (the rest of an over-long line is read and dropped in chunks), so memory
holds one line whatever the file's size. Lines end at ``\\n`` (a ``\\r`` before it is dropped);
a UTF-8 byte-order mark at the start is skipped.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

MAX_LINE_BYTES = 1024 * 1024  # a line of a few thousand boxes is still well under this
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    text: str | None  # None when the line could not be read: see ``problem``
    problem: str = ""


def file_lines(source: bytes | BinaryIO, *, max_bytes: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """Every line of ``source`` (bytes, or a binary file open for reading) with its number
    from 1; an over-long line or one that is not UTF-8 comes with its problem instead."""
    handle = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    number = 0
    while True:
        raw = handle.readline(max_bytes + 1)
        if not raw:
            return
        number += 1
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            size = len(raw) + _skip_rest(handle)
            yield Line(number, None, f"the line is {size} bytes, over the limit of {max_bytes}")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Line(number, None, f"not UTF-8 text (byte {exc.start + 1} of the line)")
            continue
        yield Line(number, text.rstrip("\n").rstrip("\r"))


def _skip_rest(handle: BinaryIO) -> int:
    """Read the rest of the current line in chunks, keeping none of it; its length."""
    skipped = 0
    while True:
        chunk = handle.readline(_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped
