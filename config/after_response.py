"""Work a response need not wait for, run once the response has been sent.

Without a broker, Celery runs tasks in the process that sends them. The cross-check and gold
score a submit triggers are work a worker would do after the commit: nobody waits for their
result in the response, so inside a request they run when the server closes the response (the
WSGI close(), after the last byte is written), outside one (commands, shells, a test's captured
on-commit callbacks) at once. The client is answered sooner; the CPU is spent all the same.

Long work (a job: a release build, a synthesis, a pre-annotation, ``detach=True``) must not hold
the connection either. Servers built on wsgiref (``runserver``, so ``make run``) read a
connection's next request only once close() has returned: the browser's next page over the same
keep-alive connection would wait for the whole build. There, when DIFFMARK_AFTER_RESPONSE_THREADS
is on, such work runs on a daemon thread of its own, which closes its database connections when
done. A thread ended with the process (a restart, Ctrl-C) leaves its job "running" until the
stale-job sweep fails it, as a killed worker would.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextvars import ContextVar

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponseBase

log = logging.getLogger(__name__)

Work = Callable[[], object]
_Pending = list[tuple[Work, bool]]  # (work, detach)

_pending: ContextVar[_Pending | None] = ContextVar("diffmark_after_response", default=None)

THREAD_NAME = "diffmark-after-response"


def run_after_response(work: Work, *, detach: bool = False) -> None:
    """Run ``work`` after the current request's response is sent; at once outside a request.
    ``detach``: long work, which on a wsgiref-based server runs on a thread of its own."""
    pending = _pending.get()
    if pending is None:
        work()
    else:
        pending.append((work, detach))


def _run(pending: list[Work]) -> None:
    # Django swallows what a response's closer raises: each failure is logged here.
    for work in pending:
        try:
            work()
        except Exception:
            log.exception("work run after the response failed: %r", work)
    pending.clear()


def _run_detached(pending: list[Work]) -> None:
    try:
        _run(pending)
    finally:
        connections.close_all()  # this thread's own; nobody else would close them


def _server_reads_next_request_after_close(request: HttpRequest) -> bool:
    """wsgiref's handler (runserver, Django's test server) names itself "WSGIServer/…"."""
    return str(request.META.get("SERVER_SOFTWARE", "")).startswith("WSGIServer/")


def _closer(pending: _Pending, *, threads: bool) -> Callable[[], None]:
    def close() -> None:
        detached = [work for work, detach in pending if detach] if threads else []
        _run([work for work, detach in pending if not (threads and detach)])
        pending.clear()
        if detached:
            threading.Thread(
                target=_run_detached, args=(detached,), name=THREAD_NAME, daemon=True
            ).start()

    return close


class AfterResponseMiddleware:
    """Collects the request's after-response work and hands it to the response's close().
    First in MIDDLEWARE, so the response it holds is the one the server sends."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        pending: _Pending = []
        token = _pending.set(pending)
        try:
            response = self.get_response(request)
        except BaseException:
            _pending.reset(token)
            _run([work for work, _ in pending])  # no response to wait for; the work is not lost
            raise
        _pending.reset(token)
        if pending:
            threads = settings.DIFFMARK_AFTER_RESPONSE_THREADS and (
                _server_reads_next_request_after_close(request)
            )
            # HttpResponseBase.close() calls these before request_finished (which may close
            # the database connection); the server calls close() once the body is written.
            response._resource_closers.append(_closer(pending, threads=threads))
            if not response.streaming and not response.has_header("Content-Length"):
                # Without it a client reads the body until the connection closes, and servers
                # built on wsgiref (runserver, the test server) close it after this work: the
                # page would wait for the whole build after all.
                response["Content-Length"] = str(len(response.content))
        return response
