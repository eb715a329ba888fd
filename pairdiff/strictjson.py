"""JSON read strictly: only values every database and every client can hold.

Python's json module accepts what JSON does not (NaN, Infinity), turns 1e309 into infinity,
keeps lone UTF-16 surrogates ("\\ud800") as unencodable text, parses integers of thousands of
digits and recurses until the interpreter gives up. Each of those got past the door and failed
deep inside a service (a 500, or a whole import stopped by one row). Here they are refused
where the text is read, with the path of the offending value ("changes.0.boxes_a.0.1").
"""

from __future__ import annotations

import json
import math
import re

MAX_DEPTH = 64  # objects and lists inside each other; real bodies nest 4 deep
MAX_INT_DIGITS = 19  # what a signed 64-bit integer holds; a database column holds no more
_SURROGATE = re.compile("[\ud800-\udfff]")


class JSONRejected(ValueError):
    """The text is not JSON, or holds a value refused here; `path` names it ("" = the whole)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class _Refused:
    """Stands in for a value the decoder met, so the walk can name where it sits."""

    def __init__(self, message: str) -> None:
        self.message = message


def _int(text: str) -> int | _Refused:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        return _Refused(f"an integer of {len(text.lstrip('-'))} digits is too large")
    return int(text)


def _float(text: str) -> float | _Refused:
    value = float(text)
    if not math.isfinite(value):
        return _Refused(f"the number {text[:20]} is too large")
    return value


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number")


def loads(text: str | bytes) -> object:
    """The decoded value, or JSONRejected naming the first refused value and why."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JSONRejected("", f"not UTF-8 text (invalid byte at {exc.start})") from None
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise JSONRejected("", f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise JSONRejected("", f"JSON nested more than {MAX_DEPTH} levels deep") from None
    check(value)
    return value


def check(value: object) -> None:
    """JSONRejected for the first value no database column can hold: too deep, a NUL or a lone
    surrogate in text (keys too), a number that is not finite or past 64 bits."""
    stack: list[tuple[object, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict | list) and depth > MAX_DEPTH:
            raise JSONRejected(path, f"JSON nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                child_path = f"{path}.{_segment(key)}" if path else _segment(key)
                if problem := _text_problem(key):
                    raise JSONRejected(child_path, f"the key {problem}")
                stack.append((child, child_path, depth + 1))
        elif isinstance(item, list):
            stack.extend(
                (child, f"{path}.{i}" if path else str(i), depth + 1)
                for i, child in reversed(list(enumerate(item)))
            )
        elif problem := _scalar_problem(item):
            raise JSONRejected(path, problem)


def _segment(key: str) -> str:
    # The path goes back to the client in the error: it must be printable, encodable text.
    if _text_problem(key):
        return key.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\u0000")
    return key


def _scalar_problem(item: object) -> str:
    if isinstance(item, _Refused):
        return item.message
    if isinstance(item, str):
        return _text_problem(item)
    if isinstance(item, float) and not math.isfinite(item):
        return "numbers must be finite"
    if isinstance(item, int) and not isinstance(item, bool) and abs(item) >= 2**63:
        return "an integer past 64 bits is too large"
    return ""


def _text_problem(text: object) -> str:
    if not isinstance(text, str):
        return ""
    if "\x00" in text:
        return "may not contain NUL (\\u0000) characters"
    if _SURROGATE.search(text):
        return "holds a lone UTF-16 surrogate (\\ud800–\\udfff), which is not text"
    return ""
