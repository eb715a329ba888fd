"""The real path: submit → commit → Redis → a Celery worker process → PostgreSQL."""

import time

import pytest

from annotator.leasing import assignment_lease_next
from annotator.models import Pair, PairStatus
from annotator.submitting import annotation_submit
from review.models import Agreement
from tests.factories import answer, make_pair

pytestmark = [
    pytest.mark.integration,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


def test_a_real_worker_cross_checks_the_pair_after_the_last_submit(
    project, annotator_1, annotator_2, celery_worker
):
    pair = make_pair(project)
    for user in (annotator_1, annotator_2):
        assignment = assignment_lease_next(project=project, user=user)
        annotation_submit(assignment_id=assignment.pk, user=user, body=answer())

    deadline = time.monotonic() + 60
    while Pair.objects.get(pk=pair.pk).status == PairStatus.IN_ANNOTATION:
        assert time.monotonic() < deadline, "the worker did not decide the pair within 60 s"
        time.sleep(0.2)

    assert Pair.objects.get(pk=pair.pk).status == PairStatus.ACCEPTED
    assert Agreement.objects.get(pair=pair).consensus[0]["boxes_a"] == [[20, 10, 40, 30]]
