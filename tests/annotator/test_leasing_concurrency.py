"""Many annotators at once on PostgreSQL: the leasing invariants hold under real row locks."""

import threading
from collections import Counter

import pytest
from django.db import connection

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Assignment, AssignmentState, Pair
from annotator.submitting import annotation_submit
from tests.conftest import member
from tests.factories import answer, make_pairs

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 16
PAIRS = 40


def test_concurrent_annotators_never_exceed_overlap_nor_repeat_a_pair(project):
    make_pairs(project, PAIRS)
    annotators = [member(project, f"worker_{i}", "annotator") for i in range(THREADS)]
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(user) -> None:
        try:
            start.wait()
            while (assignment := assignment_lease_next(project=project, user=user)) is not None:
                annotation_submit(assignment_id=assignment.pk, user=user, body=answer())
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(u,)) for u in annotators]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    per_pair = Counter(Annotation.objects.values_list("pair_id", flat=True))
    assert set(per_pair.values()) == {project.overlap}  # every pair finished, none overfilled
    assert len(per_pair) == PAIRS
    pairs = Annotation.objects.values_list("pair_id", "annotator_id")
    assert len(set(pairs)) == len(pairs)  # nobody annotated a pair twice
    assert not Assignment.objects.filter(state=AssignmentState.LEASED).exists()
    for pair in Pair.objects.all():
        assert (pair.n_taken, pair.n_submitted) == (project.overlap, project.overlap)


def test_two_submits_at_the_same_moment_still_start_the_cross_check(project):
    from review.models import Agreement

    first, second = (member(project, f"twin_{i}", "annotator") for i in (1, 2))
    rounds = 8
    make_pairs(project, rounds)
    errors: list[BaseException] = []
    for _ in range(rounds):
        leases = [assignment_lease_next(project=project, user=u) for u in (first, second)]
        assert leases[0].pair_id == leases[1].pair_id
        start = threading.Barrier(2)

        def submit(user, assignment, start: threading.Barrier) -> None:
            try:
                start.wait()
                annotation_submit(assignment_id=assignment.pk, user=user, body=answer())
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)
            finally:
                connection.close()

        threads = [
            threading.Thread(target=submit, args=(u, a, start))
            for u, a in zip((first, second), leases, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert errors == []
    # Eager tasks run on commit: every pair got its agreement, none waits for the sweep.
    assert Agreement.objects.count() == rounds
