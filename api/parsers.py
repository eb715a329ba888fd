"""Request parsers and a query reader that refuse, at the door, what no database can store.

PostgreSQL stores no NUL in text or jsonb: one that got through (a draft, a description, a
filter) failed deep in a service as a DataError, a 500, on PostgreSQL only. DRF's CharField
refuses NUL already; these cover what no serializer field sees (raw JSON bodies, query params).
JSON bodies are read by pairdiff.strictjson: NaN, 1e309, lone surrogates, integers past 64 bits
and nesting past 64 levels are a 400 naming the field, never a 500 somewhere later.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.request import Request

from pairdiff import strictjson

NUL_MESSAGE = "text may not contain NUL (\\u0000) characters"


def contains_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(k) or contains_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(contains_nul(item) for item in value)
    return False


def query_text(request: Request, name: str) -> str:
    """A query parameter as text ("" when absent); a NUL in it is a 400 naming the parameter."""
    value = request.query_params.get(name, "")
    if "\x00" in value:
        raise ValidationError({name: [NUL_MESSAGE]})
    return value


def json_rejected(exc: strictjson.JSONRejected) -> Exception:
    """The DRF error for a refused JSON value: a field error when it has a path."""
    if exc.path:
        return ValidationError({exc.path: [exc.message]})
    return ParseError(exc.message)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            raise ParseError(f"the body is not {encoding} text") from None
        try:
            return strictjson.loads(text)
        except strictjson.JSONRejected as exc:
            raise json_rejected(exc) from None


class FormParser(parsers.FormParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if contains_nul(list(data.lists())):
            raise ParseError(NUL_MESSAGE)
        return data


class MultiPartParser(parsers.MultiPartParser):
    """File contents may hold any byte; the form fields and file names may not hold NUL."""

    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        names = [upload.name or "" for _, uploads in parsed.files.lists() for upload in uploads]
        if contains_nul(list(parsed.data.lists())) or contains_nul(names):
            raise ParseError(NUL_MESSAGE)
        return parsed
