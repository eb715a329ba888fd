"""Work run after the response: not before the response is made, always once it is closed."""

from __future__ import annotations

import logging
import threading

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from config.after_response import THREAD_NAME, AfterResponseMiddleware, run_after_response

# A response's close() sends request_finished, whose receiver looks at the database connection.
pytestmark = pytest.mark.django_db


def _serve(view):
    return AfterResponseMiddleware(view)(RequestFactory().post("/api/v1/anything/"))


def test_outside_a_request_the_work_runs_at_once():
    done = []
    run_after_response(lambda: done.append("work"))
    assert done == ["work"]


def test_in_a_request_the_work_waits_for_the_close_of_the_response():
    done = []

    def view(request):
        run_after_response(lambda: done.append("work"))
        assert done == []
        return HttpResponse("answered")

    response = _serve(view)
    assert done == []  # the server writes the response now
    response.close()
    assert done == ["work"]


def test_a_failing_piece_of_work_is_logged_and_the_rest_still_runs(caplog):
    done = []

    def view(request):
        run_after_response(lambda: 1 / 0)
        run_after_response(lambda: done.append("second"))
        return HttpResponse("answered")

    response = _serve(view)
    with caplog.at_level(logging.ERROR, logger="config.after_response"):
        response.close()
    assert done == ["second"]
    assert "work run after the response failed" in caplog.text
    assert "ZeroDivisionError" in caplog.text


def test_the_work_of_a_request_that_raised_still_runs():
    done = []

    def view(request):
        run_after_response(lambda: done.append("work"))
        raise RuntimeError("the view broke")

    with pytest.raises(RuntimeError, match="the view broke"):
        _serve(view)
    assert done == ["work"]


def test_after_the_request_work_runs_at_once_again():
    def view(request):
        return HttpResponse("answered")

    _serve(view).close()
    done = []
    run_after_response(lambda: done.append("work"))
    assert done == ["work"]


def test_a_response_with_work_after_it_says_where_its_body_ends():
    """Or a client reads until the connection closes, which wsgiref-based servers (runserver,
    the test server) do only after the work: the page would wait for it after all."""

    def view(request):
        run_after_response(lambda: None)
        return HttpResponse("answered")

    response = _serve(view)
    assert response["Content-Length"] == str(len(b"answered"))
    response.close()


def _serve_on(view, server_software: str):
    request = RequestFactory().post("/api/v1/anything/", SERVER_SOFTWARE=server_software)
    return AfterResponseMiddleware(view)(request)


def _long_and_short(started, release, done):
    def view(request):
        def long_work():
            started.set()
            release.wait(10)
            done.append("long")

        run_after_response(long_work, detach=True)
        run_after_response(lambda: done.append("short"))
        return HttpResponse("answered")

    return view


@pytest.mark.django_db(transaction=True)
def test_on_runserver_long_work_runs_on_its_own_thread_and_short_work_in_close(settings):
    """wsgiref reads a keep-alive connection's next request only after close() returns: a
    job's work there must not hold it; the submit's cross-check still runs in close()."""
    settings.DIFFMARK_AFTER_RESPONSE_THREADS = True
    started, release, done = threading.Event(), threading.Event(), []
    response = _serve_on(_long_and_short(started, release, done), "WSGIServer/0.2 CPython/3.12")
    response.close()  # returns while the long work waits
    assert done == ["short"]
    assert started.wait(5)
    threads = [t for t in threading.enumerate() if t.name == THREAD_NAME]
    assert threads and all(t.daemon for t in threads)
    release.set()
    for thread in threads:
        thread.join(10)
    assert done == ["short", "long"]


def test_elsewhere_long_work_runs_in_close(settings):
    """Django's test client (no SERVER_SOFTWARE), gunicorn, or the threads turned off."""
    settings.DIFFMARK_AFTER_RESPONSE_THREADS = True
    for software, threads_on in [("", True), ("gunicorn/23.0.0", True), ("WSGIServer/0.2", False)]:
        settings.DIFFMARK_AFTER_RESPONSE_THREADS = threads_on
        started, release, done = threading.Event(), threading.Event(), []
        release.set()
        _serve_on(_long_and_short(started, release, done), software).close()
        assert done == ["long", "short"], software


@pytest.mark.django_db(transaction=True)
def test_a_failing_detached_work_is_logged_and_its_thread_ends(settings, caplog):
    settings.DIFFMARK_AFTER_RESPONSE_THREADS = True

    def view(request):
        run_after_response(lambda: 1 / 0, detach=True)
        return HttpResponse("answered")

    with caplog.at_level(logging.ERROR, logger="config.after_response"):
        _serve_on(view, "WSGIServer/0.2").close()
        for thread in [t for t in threading.enumerate() if t.name == THREAD_NAME]:
            thread.join(10)
    assert "work run after the response failed" in caplog.text
    assert "ZeroDivisionError" in caplog.text
