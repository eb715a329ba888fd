"""One JSON error shape everywhere: {"error": {"code", "message", "fields"}}."""

from __future__ import annotations

import sys

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from config.middleware import DB_UNAVAILABLE, MESSAGE, RETRY_AFTER_SECONDS, database_unavailable


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
    if isinstance(exc, DB_UNAVAILABLE):  # retryable: 503, never a 500
        resp = error_response("unavailable", MESSAGE, status.HTTP_503_SERVICE_UNAVAILABLE)
        resp["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return resp
    if isinstance(exc, ObjectDoesNotExist | Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, DjangoPermissionDenied):  # raised by a service: its words, DRF's code
        exc = exceptions.PermissionDenied(str(exc) or None)
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


def _error_json(code: str, message: str, http_status: int) -> JsonResponse:
    body = {"error": {"code": code, "message": message, "fields": {}}}
    return JsonResponse(body, status=http_status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: Django refuses some requests before any view runs (too many form fields, a
    bad Host); under /api/ the answer is still the JSON error shape."""
    if request.path.startswith("/api/"):
        return _error_json("bad_request", "the request could not be read", 400)
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: a URL under /api/ that matches no route (say /pairs/abc/) still gets the
    JSON error shape; a client parsing errors should never meet an HTML page."""
    if request.path.startswith("/api/"):
        return _error_json("not_found", "no such API endpoint or object", 404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the same for an unexpected failure (logged by Django as usual)."""
    if isinstance(sys.exc_info()[1], DB_UNAVAILABLE):  # raised outside a view, say by a middleware
        return database_unavailable(request)
    if request.path.startswith("/api/"):
        return _error_json("server_error", "internal error; it has been logged", 500)
    return defaults.server_error(request)
