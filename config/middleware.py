"""A database that is down or restarting answers 503 with Retry-After, never a 500 page."""

from __future__ import annotations

import logging

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
