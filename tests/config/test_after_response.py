"""Work run after the response: not before the response is made, always once it is closed."""

from __future__ import annotations

import logging

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from config.after_response import AfterResponseMiddleware, run_after_response

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
