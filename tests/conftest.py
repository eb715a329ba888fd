"""Personas and a project to work in; every test's files go to its own folder."""

from __future__ import annotations

import os

import pytest

from annotator.leasing import assignment_lease_next
from annotator.models import PairStatus
from annotator.submitting import annotation_submit
from config.celery import app as celery_app
from projects.creating import project_create
from projects.members import membership_set, user_ensure
from projects.models import Preset, Role
from review.agreement import agreement_compute
from tests.factories import answer, make_pair

PASSWORD = "correct horse battery staple"


def pytest_collection_modifyitems(config, items):
    """Tests marked `postgres` need real row locks, tests marked `s3` the S3-compatible server
    that `.ci/run` starts (DIFFMARK_TEST_S3_ENDPOINT); both run in CI's PostgreSQL pass."""
    from django.conf import settings

    absent = set()
    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        absent.add("postgres")
    if not os.environ.get("DIFFMARK_TEST_S3_ENDPOINT"):
        absent.add("s3")
    keep = [item for item in items if not any(item.get_closest_marker(m) for m in absent)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def project(db):
    project = project_create(slug="cars", name="Cars", preset=Preset.MINCU)
    # The fixtures' few look-alike pairs make questions any text-only baseline answers; the
    # limit on baselines has tests of its own (tests/releases/test_release_questions.py).
    project.question_baseline_limit = 1.0
    # No controls unless a test asks (tests/projects/test_control_rate.py and the release
    # tests of controls): the fixtures' counts of questions stay those of their pairs.
    project.question_control_rate = 0.0
    project.save(update_fields=["question_baseline_limit", "question_control_rate"])
    return project


def member(project, username: str, role: Role | str):
    user = user_ensure(username=username, password=PASSWORD)
    membership_set(project=project, user=user, role=Role(role))
    return user


@pytest.fixture
def annotator_1(project):
    return member(project, "annotator_1", Role.ANNOTATOR)


@pytest.fixture
def annotator_2(project):
    return member(project, "annotator_2", Role.ANNOTATOR)


@pytest.fixture
def lead(project):
    return member(project, "lead", Role.LEAD)


@pytest.fixture
def researcher(project):
    return member(project, "researcher", Role.RESEARCHER)


@pytest.fixture
def outsider(db):
    return user_ensure(username="outsider", password=PASSWORD)


@pytest.fixture
def disputed(project, annotator_1, annotator_2):
    """A pair two annotators answered with disagreeing boxes on B."""
    pair = make_pair(project)
    for user, body in ((annotator_1, answer()), (annotator_2, answer(boxes_b=[[30, 20, 50, 40]]))):
        assignment = assignment_lease_next(project=project, user=user)
        annotation_submit(assignment_id=assignment.pk, user=user, body=body)
    agreement_compute(pair_id=pair.pk)
    pair.refresh_from_db()
    assert pair.status == PairStatus.DISPUTED
    return pair


def reset_broker_pool() -> None:
    """Drop the connection pools Celery made for the broker it was configured with: they keep
    that broker (kombu keeps each URL's pool for reuse, so it is not closed) whatever
    ``broker_url`` says next. Call after every change of ``broker_url`` in a test, and after
    putting it back: any earlier test may have made them for the tests' ``memory://``."""
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
