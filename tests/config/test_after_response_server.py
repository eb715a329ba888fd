"""Under runserver (`make run`, no broker) a long job started by a request runs after its
response on a thread of its own: the next request over the same keep-alive connection is
answered while the job still runs. Django's test server is the same wsgiref server as runserver,
so this drives a real one over one HTTP/1.1 connection."""

from __future__ import annotations

import http.client
import json
import threading
from urllib.parse import urlsplit

import pytest

from accounts.services import token_create
from annotator.tasks import preannotate_job
from config.after_response import THREAD_NAME
from jobs.models import Job, JobStatus
from tests.factories import make_pairs


@pytest.fixture
def slow_preannotation(monkeypatch):
    """The pre-annotation task waits (before touching the database) until the test lets it go,
    10 s at most: time enough to see whether the connection's next request waited for it."""
    started, release, ended = threading.Event(), threading.Event(), threading.Event()
    real = preannotate_job.run

    def slow(job_id):
        started.set()
        release.wait(10)
        ended.set()
        return real(job_id)

    monkeypatch.setattr(preannotate_job, "run", slow)
    return started, release, ended


def _json(connection: http.client.HTTPConnection, method: str, path: str, headers, body=None):
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    assert response.status < 300, (response.status, data[:500])
    assert not response.will_close, "the server closed the keep-alive connection"
    return json.loads(data)


def test_the_next_request_on_the_connection_does_not_wait_for_the_job(
    transactional_db, live_server, settings, project, lead, slow_preannotation
):
    settings.DIFFMARK_AFTER_RESPONSE_THREADS = True
    started, release, ended = slow_preannotation
    make_pairs(project, 2)
    headers = {
        "Authorization": f"Token {token_create(user=lead, name='t')[1]}",
        "Content-Type": "application/json",
    }
    url = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        body = json.dumps({"backend": "pixeldiff"})
        start = f"/api/v1/projects/{project.slug}/preannotate/"
        job = _json(connection, "POST", start, headers, body)["job"]
        # The same connection's next request: wsgiref reads it only once close() has returned.
        polled = _json(connection, "GET", f"/api/v1/jobs/{job['id']}/", headers)
        answered_while_the_job_waited = started.is_set() and not ended.is_set()
    finally:
        release.set()
        connection.close()
    assert answered_while_the_job_waited, "the next request waited for the job"
    assert polled["status"] == JobStatus.QUEUED
    for thread in [t for t in threading.enumerate() if t.name == THREAD_NAME]:
        thread.join(30)
    done = Job.objects.get(pk=job["id"])
    assert done.status == JobStatus.SUCCEEDED, done.message
    assert done.result["predicted"] == 2
