"""Pair manifests (JSON Lines or CSV) parsed into good rows and per-row errors."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from pairdiff import strictjson
from pairdiff.labelstudio.refs import reference_problem

MAX_ID_LENGTH = 200
MAX_INSTRUCTION_LENGTH = 2000
# A pair's metadata is stored on it and shown with it in every answer about the pair.
MAX_METADATA_BYTES = 16 * 1024
_FIELDS = frozenset({"id", "image_a", "image_b", "instruction", "category"})
_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
_CSV_DELIMITERS = (",", ";", "\t")
_DRIVE = re.compile(r"[A-Za-z]:")
# C0 and C1 control characters (U+0085, next line, is also whitespace to str.strip).
_CONTROL = re.compile(r"[\x01-\x1f\x7f-\x9f]")


class ManifestUnusable(ValueError):
    """The manifest as a whole cannot be used; str() says why."""


@dataclass(frozen=True)
class ManifestRow:
    line: int
    image_a: str
    image_b: str
    external_id: str
    instruction: str
    category: str
    metadata: dict[str, object]


@dataclass(frozen=True)
class RowError:
    line: int
    external_id: str
    message: str


@dataclass(frozen=True)
class _Record:
    line: int
    fields: dict[str, object] | None  # None: the line could not be read as a row at all
    error: str = ""


def safe_relative_path(name: str) -> str:
    """`name` as a normalised POSIX path inside the images root; ValueError says why not."""
    if "\x00" in name:
        raise ValueError(f"path {name!r} contains a NUL byte")
    if _CONTROL.search(name):
        raise ValueError(f"path {name!r} contains a control character")
    # Windows tools write zip entries and manifests with backslashes.
    unified = name.replace("\\", "/")
    if not unified.strip():
        raise ValueError("path is empty")
    if unified.startswith("/") or _DRIVE.match(unified):
        raise ValueError(f"path {name!r} is absolute or names a drive")
    parts: list[str] = []
    for part in unified.split("/"):
        if part in ("", "."):
            continue
        if not part.strip():  # refused here as it would be on its own ("path is empty")
            raise ValueError(f"path {name!r} has a blank part")
        if part != "..":
            parts.append(part)
        elif parts:
            parts.pop()
        else:
            raise ValueError(f"path {name!r} leads outside the images folder")
    if not parts:
        raise ValueError(f"path {name!r} names no file")
    return "/".join(parts)


def parse_manifest(
    data: bytes, *, fmt: str | None = None, filename: str = "", max_rows: int = 1_000_000
) -> tuple[list[ManifestRow], list[RowError]]:
    """Good rows and per-row errors, in file order; ManifestUnusable if nothing can be used.

    fmt is "jsonl" or "csv"; without it the filename suffix decides, then the content.
    An id is taken by its first row even when that row has other errors, so a later row
    with the same id is always an error.
    """
    text = _decode(data)
    is_json = _detect_format(fmt, filename, text) == "jsonl"
    records = _jsonl_records(text) if is_json else _csv_records(text)
    rows: list[ManifestRow] = []
    errors: list[RowError] = []
    first_line_of_id: dict[str, int] = {}
    for count, record in enumerate(records, start=1):
        if count > max_rows:
            raise ManifestUnusable(f"manifest has more than {max_rows:,} rows")
        result = _row(record, first_line_of_id, from_json=is_json)
        if isinstance(result, ManifestRow):
            rows.append(result)
        else:
            errors.append(result)
    if not rows and not errors:
        raise ManifestUnusable("manifest has no rows")
    return rows, errors


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ManifestUnusable("manifest is UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManifestUnusable(
            f"manifest is not UTF-8 text (invalid byte at position {exc.start})"
        ) from exc
    if "\x00" in text:
        raise ManifestUnusable("manifest contains NUL bytes; it is binary, not JSONL or CSV")
    if not text.strip():
        raise ManifestUnusable("manifest is empty")
    return text


def _detect_format(fmt: str | None, filename: str, text: str) -> str:
    if fmt is not None:
        if fmt.lower() not in ("jsonl", "csv"):
            raise ManifestUnusable(f"unknown manifest format {fmt!r} (expected jsonl or csv)")
        return fmt.lower()
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "jsonl" if text.lstrip()[:1] in ("{", "[") else "csv"


def _jsonl_records(text: str) -> Iterator[_Record]:
    if text.lstrip().startswith("["):
        raise ManifestUnusable("manifest is a JSON array; expected JSON Lines (one object a line)")
    first_error = ""
    parsed_any = False
    # Not splitlines(): it also splits on U+2028 and friends, which JSON allows inside strings.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = strictjson.loads(raw)
        except strictjson.JSONRejected as exc:
            if exc.path:  # JSON, with a value no database column holds: this row alone is bad
                parsed_any = True
                yield _Record(number, None, f"{exc.path}: {exc.message}")
                continue
            first_error = first_error or f"line {number}: {exc.message}"
            yield _Record(number, None, exc.message)
            continue
        parsed_any = True
        if isinstance(value, dict):
            yield _Record(number, value)
        else:
            yield _Record(number, None, f"line is {json_type(value)}, not a JSON object")
    if not parsed_any:
        raise ManifestUnusable(f"no line is valid JSON; is this JSON Lines? ({first_error})")


def _csv_records(text: str) -> Iterator[_Record]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_csv_delimiter(text))
    header: list[str] | None = None
    last_line = 0
    try:
        for cells in reader:
            start, last_line = last_line + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if header is None:
                header = _csv_header(cells)
                continue
            padded = cells + [""] * (len(header) - len(cells))
            values: dict[str, object] = dict(zip(header, padded, strict=False))
            too_many = len(cells) > len(header)
            error = f"row has {len(cells)} cells, the header {len(header)}" if too_many else ""
            yield _Record(start, values, error)
    except csv.Error as exc:
        raise ManifestUnusable(f"CSV cannot be read at line {reader.line_num}: {exc}") from exc


def _csv_delimiter(text: str) -> str:
    # Spreadsheets in many locales save "CSV" with semicolons; the header tells which.
    first = next(line for line in io.StringIO(text) if line.strip())
    for delimiter in _CSV_DELIMITERS:
        names = {cell.strip() for cell in next(csv.reader([first], delimiter=delimiter))}
        if {"image_a", "image_b"} <= names:
            return delimiter
    return ","


def _csv_header(cells: list[str]) -> list[str]:
    names = [cell.strip() for cell in cells]
    for position, name in enumerate(names, start=1):
        if not name:
            raise ManifestUnusable(f"CSV header has an empty name in column {position}")
        if names.index(name) != position - 1:
            raise ManifestUnusable(f"CSV header repeats the column {name!r}")
    if not {"image_a", "image_b"} <= set(names):
        found = ", ".join(names[:10]) + (", …" if len(names) > 10 else "")
        raise ManifestUnusable(f"CSV header needs image_a and image_b columns (found: {found})")
    return names


def _row(
    record: _Record, first_line_of_id: dict[str, int], *, from_json: bool
) -> ManifestRow | RowError:
    if record.fields is None:
        return RowError(record.line, "", record.error)
    problems = [record.error] if record.error else []
    if _has_nul(record.fields):  # no database text column can hold one
        return RowError(record.line, "", "the row holds a NUL character (\\u0000)")
    external_id, problem = _external_id(record.fields.get("id"))
    if problem:
        problems.append(problem)
    elif external_id in first_line_of_id:
        problems.append(f"id {external_id!r} repeats line {first_line_of_id[external_id]}")
    elif external_id:
        first_line_of_id[external_id] = record.line
    image_a = _path(record.fields, "image_a", problems)
    image_b = _path(record.fields, "image_b", problems)
    instruction = _text(record.fields, "instruction", problems, MAX_INSTRUCTION_LENGTH)
    category = _text(record.fields, "category", problems, None)
    metadata = _metadata(record.fields, problems, from_json=from_json)
    if problems:
        return RowError(record.line, external_id[:MAX_ID_LENGTH], "; ".join(problems))
    return ManifestRow(record.line, image_a, image_b, external_id, instruction, category, metadata)


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def _external_id(value: object) -> tuple[str, str]:
    if value is None:
        return "", ""
    # JSON ids are often numbers; bool is an int subclass but never a sensible id.
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return "", f"id must be a string or an integer, not {json_type(value)}"
    value = value.strip()
    if len(value) > MAX_ID_LENGTH:
        return value, f"id is longer than {MAX_ID_LENGTH} characters ({len(value)})"
    return value, ""


def _path(fields: dict[str, object], key: str, problems: list[str]) -> str:
    value = fields.get(key)
    if value is None:
        problems.append(f"missing {key}")
    elif not isinstance(value, str):
        problems.append(f"{key} must be a string, not {json_type(value)}")
    elif not value.strip():
        problems.append(f"{key} is empty")
    elif problem := reference_problem(value):
        problems.append(f"{key}: {problem}")
    else:
        try:
            return safe_relative_path(value.strip())
        except ValueError as exc:
            problems.append(f"{key}: {exc}")
    return ""


def _text(fields: dict[str, object], key: str, problems: list[str], limit: int | None) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.append(f"{key} must be a string, not {json_type(value)}")
        return ""
    value = value.strip()
    if limit is not None and len(value) > limit:
        problems.append(f"{key} is longer than {limit} characters ({len(value)})")
    return value


def _metadata(
    fields: dict[str, object], problems: list[str], *, from_json: bool
) -> dict[str, object]:
    """Every non-row key; a JSON row's nested "metadata" object is merged under its own keys."""
    metadata = _metadata_fields(fields, problems, from_json=from_json)
    if problem := metadata_problem(metadata):
        problems.append(problem)
        return {}
    return metadata


def metadata_problem(metadata: dict[str, object]) -> str:
    """Why a pair may not carry this metadata ("" when it may): only its size is bounded."""
    size = len(json.dumps(metadata, ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        return f"metadata is larger than {MAX_METADATA_BYTES // 1024} KB ({size:,} bytes)"
    return ""


def _metadata_fields(
    fields: dict[str, object], problems: list[str], *, from_json: bool
) -> dict[str, object]:
    extras = {key: value for key, value in fields.items() if key not in _FIELDS}
    if not from_json:
        return {key: "" if value is None else value for key, value in extras.items()}
    nested = extras.pop("metadata", None)
    if nested is None:
        return extras
    if not isinstance(nested, dict):
        problems.append(f"metadata must be a JSON object, not {json_type(nested)}")
        return {}
    return {**nested, **extras}


def json_type(value: object) -> str:
    """What kind of JSON value this is, for an error message: "a string", "a list"…"""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__
