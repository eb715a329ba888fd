"""Buttons that start long work answer at once: without a broker, a release build and a
pre-annotation run once their page has been sent (config.after_response), and the page shows the
job's progress meanwhile, instead of the request freezing for the whole build."""

from __future__ import annotations

import pytest
from django.core import signals
from django.db import close_old_connections
from django.http import HttpResponse
from django.test import RequestFactory

from annotator.preannotation import preannotate_queue
from config.after_response import AfterResponseMiddleware
from jobs.models import JobStatus
from pairdiff.release.splits import SplitPlan
from releases.building import release_create
from releases.models import ReleaseStatus
from tests.factories import answer, make_accepted, make_pairs


def _serve(view):
    return AfterResponseMiddleware(view)(RequestFactory().post("/p/cars/releases/"))


@pytest.fixture(autouse=True)
def _keep_the_test_s_connection():
    """``response.close()`` sends request_finished, whose close_old_connections would close the
    test's own database connection (on PostgreSQL; SQLite's in-memory one is kept), as a server
    does after each request. Django's test client unhooks it the same way."""
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def capture(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_a_release_builds_after_its_page_is_sent(project, annotator_1, annotator_2, capture):
    make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])
    made = []

    def view(request):
        with capture():  # the request's transaction commits
            made.append(release_create(project=project, name="v1", plan=SplitPlan()))
        made[0].refresh_from_db()
        return HttpResponse(made[0].status)

    response = _serve(view)
    assert response.content == b"building"  # the page is made before the build
    response.close()  # the server has sent it
    release = made[0]
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY, release.message
    assert release.job.status == JobStatus.SUCCEEDED


def test_a_preannotation_runs_after_its_page_is_sent(project, capture):
    make_pairs(project, 2)
    jobs = []

    def view(request):
        with capture():
            jobs.append(preannotate_queue(project=project, backend="pixeldiff"))
        jobs[0].refresh_from_db()
        return HttpResponse(jobs[0].status)

    response = _serve(view)
    assert response.content == b"queued"
    response.close()
    job = jobs[0]
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert job.result["predicted"] == 2
