"""A database that is down or restarting answers 503 with Retry-After, never a 500 page."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)

# What a lost or refused connection raises (InterfaceError: a connection closed under us).
DB_UNAVAILABLE = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 5
MESSAGE = (
    "the database is not reachable right now; retry in a few seconds "
    "(a submit repeated with the same Idempotency-Key is stored once)"
)


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 + Retry-After: the JSON error shape under /api/, a plain page elsewhere. Rendered
    without the request, so no context processor touches the database again."""
    if request.path.startswith("/api/"):
        body = {"error": {"code": "unavailable", "message": MESSAGE, "fields": {}}}
        response: HttpResponse = JsonResponse(body, status=503)
    else:
        response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    """Views (browser and API alike) that lose the database answer 503; the transaction they
    were in was rolled back, so nothing is half-written and the request can be repeated."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DB_UNAVAILABLE):
            return None
        log.warning("database unavailable on %s %s: %s", request.method, request.path, exception)
        return database_unavailable(request)


NUL_MESSAGE = "text may not contain NUL (\\u0000) characters"


class RefuseNulMiddleware:
    """A NUL in a query parameter or a form field is a 400 naming it, before any view runs.

    PostgreSQL stores and compares no NUL: a filter like ?category=%00, or a form field a view
    reads without a form, failed inside the query as a DataError (a 500, on PostgreSQL only).
    Multipart forms are read here only for views the CSRF check reads anyway; a csrf_exempt
    view (the API, the pair upload) reads its body itself, with its own limits and checks.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        name = _nul_field(request.GET)
        if name is None and request.content_type == "application/x-www-form-urlencoded":
            name = _nul_field(request.POST)
        if name is not None:
            return _refused(request, name)
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        if request.method != "POST" or getattr(view_func, "csrf_exempt", False):
            return None
        name = _nul_field(request.POST)
        return _refused(request, name) if name is not None else None


def _nul_field(data) -> str | None:
    for key, values in data.lists():
        if "\x00" in key:
            return key.replace("\x00", "\\u0000")
        if any("\x00" in value for value in values):
            return key
    return None


def _refused(request: HttpRequest, name: str) -> HttpResponse:
    message = f"{name}: {NUL_MESSAGE}"
    if request.path.startswith("/api/"):
        body = {"error": {"code": "invalid", "message": message, "fields": {name: [NUL_MESSAGE]}}}
        return JsonResponse(body, status=400)
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


class SecurityHeadersMiddleware:
    """Content-Security-Policy and Permissions-Policy on every response (settings
    DIFFMARK_CONTENT_SECURITY_POLICY, DIFFMARK_PERMISSIONS_POLICY); a view that set its own
    keeps it. The policy runs scripts from this site's static files only: no inline script or
    event handler, so markup an attacker slips into a page cannot run."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        for header, value in (
            ("Content-Security-Policy", settings.DIFFMARK_CONTENT_SECURITY_POLICY),
            ("Permissions-Policy", settings.DIFFMARK_PERMISSIONS_POLICY),
        ):
            if value and header not in response:
                response[header] = value
        return response
