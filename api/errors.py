"""One JSON error shape everywhere: {"error": {"code", "message", "fields"}}."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


def error_response(
    code: str, message: str, http_status: int, fields: dict[str, list[str]] | None = None
) -> Response:
    return Response(
        {"error": {"code": code, "message": message, "fields": fields or {}}}, status=http_status
    )


def _flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    if isinstance(detail, dict):
        out: dict[str, list[str]] = {}
        for key, value in detail.items():
            out |= _flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(detail, list) and detail and all(isinstance(d, str) for d in detail):
        return {prefix or "": [str(d) for d in detail]}
    if isinstance(detail, list):
        out = {}
        for index, value in enumerate(detail):
            out |= _flatten(value, f"{prefix}.{index}" if prefix else str(index))
        return out
    return {prefix or "": [str(detail)]}


def handle_exception(exc, context):
    if isinstance(exc, ObjectDoesNotExist | Http404):
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        first = next(iter(fields.values()), ["invalid input"])[0]
        return error_response("invalid", first, status.HTTP_400_BAD_REQUEST, fields)
    detail = getattr(exc, "detail", str(exc))
    code = detail.code if hasattr(detail, "code") else "error"
    resp = error_response(str(code), str(detail), response.status_code)
    for header in ("WWW-Authenticate", "Retry-After", "Allow"):
        if header in response:
            resp[header] = response[header]
    return resp
