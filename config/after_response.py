"""Work a response need not wait for, run once the response has been sent.

Without a broker, Celery runs tasks in the process that sends them. The cross-check and gold
score a submit triggers are work a worker would do after the commit: nobody waits for their
result in the response, so inside a request they run when the server closes the response (the
WSGI close(), after the last byte is written), outside one (commands, shells, a test's captured
on-commit callbacks) at once. The client is answered sooner; the CPU is spent all the same.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponseBase

log = logging.getLogger(__name__)

_pending: ContextVar[list[Callable[[], object]] | None] = ContextVar(
    "diffmark_after_response", default=None
)


def run_after_response(work: Callable[[], object]) -> None:
    """Run ``work`` after the current request's response is sent; at once outside a request."""
    pending = _pending.get()
    if pending is None:
        work()
    else:
        pending.append(work)


def _run(pending: list[Callable[[], object]]) -> None:
    # Django swallows what a response's closer raises: each failure is logged here.
    for work in pending:
        try:
            work()
        except Exception:
            log.exception("work run after the response failed: %r", work)
    pending.clear()


class AfterResponseMiddleware:
    """Collects the request's after-response work and hands it to the response's close().
    First in MIDDLEWARE, so the response it holds is the one the server sends."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        pending: list[Callable[[], object]] = []
        token = _pending.set(pending)
        try:
            response = self.get_response(request)
        except BaseException:
            _pending.reset(token)
            _run(pending)  # no response to wait for; the work is not lost
            raise
        _pending.reset(token)
        if pending:
            # HttpResponseBase.close() calls these before request_finished (which may close
            # the database connection); the server calls close() once the body is written.
            response._resource_closers.append(lambda: _run(pending))
            if not response.streaming and not response.has_header("Content-Length"):
                # Without it a client reads the body until the connection closes, and servers
                # built on wsgiref (runserver, the test server) close it after this work: the
                # page would wait for the whole build after all.
                response["Content-Length"] = str(len(response.content))
        return response
