from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next, assignment_skip, assignments_expire
from annotator.models import AssignmentState, PairStatus
from annotator.submitting import annotation_submit
from tests.conftest import member
from tests.factories import answer, make_pair, make_pairs


def _submit(assignment, user):
    return annotation_submit(assignment_id=assignment.pk, user=user, body=answer())


def test_next_leases_a_pair_and_marks_it_in_annotation(project, annotator_1):
    pair = make_pair(project)

    assignment = assignment_lease_next(project=project, user=annotator_1)

    pair.refresh_from_db()
    assert assignment.pair == pair and assignment.state == AssignmentState.LEASED
    assert assignment.expires_at > timezone.now()
    assert (pair.status, pair.n_taken) == (PairStatus.IN_ANNOTATION, 1)


def test_next_resumes_the_live_lease(project, annotator_1):
    make_pairs(project, 2)
    first = assignment_lease_next(project=project, user=annotator_1)

    again = assignment_lease_next(project=project, user=annotator_1)

    assert again.pk == first.pk


def test_no_pair_gets_more_than_overlap_annotators(project, annotator_1, annotator_2):
    third = member(project, "annotator_3", "annotator")
    make_pair(project)

    assert assignment_lease_next(project=project, user=annotator_1) is not None
    assert assignment_lease_next(project=project, user=annotator_2) is not None
    assert assignment_lease_next(project=project, user=third) is None


def test_nobody_gets_a_pair_they_already_did(project, annotator_1):
    make_pair(project)
    _submit(assignment_lease_next(project=project, user=annotator_1), annotator_1)

    assert assignment_lease_next(project=project, user=annotator_1) is None


def test_pairs_someone_started_come_first(project, annotator_1, annotator_2):
    p1, p2, _ = make_pairs(project, 3)
    assignment_skip(
        assignment=assignment_lease_next(project=project, user=annotator_1), user=annotator_1
    )
    started = assignment_lease_next(project=project, user=annotator_1)
    assert started.pair == p2

    assert assignment_lease_next(project=project, user=annotator_2).pair == p2


def test_a_skipped_pair_goes_to_others_but_never_back(project, annotator_1, annotator_2):
    pair = make_pair(project)
    assignment_skip(
        assignment=assignment_lease_next(project=project, user=annotator_1), user=annotator_1
    )

    assert assignment_lease_next(project=project, user=annotator_1) is None
    assert assignment_lease_next(project=project, user=annotator_2).pair == pair


def test_an_expired_lease_returns_the_pair_to_the_pool(project, annotator_1, annotator_2):
    project.overlap = 1
    project.save()
    pair = make_pair(project)
    stale = assignment_lease_next(project=project, user=annotator_1)
    later = timezone.now() + timedelta(hours=2)

    assert assignments_expire(now=later) == 1
    given = assignment_lease_next(project=project, user=annotator_2, now=later)

    stale.refresh_from_db()
    assert stale.state == AssignmentState.EXPIRED
    assert given.pair == pair


def test_gold_pairs_are_mixed_in_at_the_project_rate(project, annotator_1):
    regular = make_pair(project)
    gold = make_pair(project)
    gold_answer_set(pair=gold, changes=answer()["changes"])
    project.gold_rate = 1.0
    project.save()

    first = assignment_lease_next(project=project, user=annotator_1)
    _submit(first, annotator_1)
    second = assignment_lease_next(project=project, user=annotator_1)

    assert (first.pair, second.pair) == (gold, regular)


def test_every_annotator_answers_a_gold_pair_whatever_the_overlap(project, annotator_1):
    project.overlap = 1
    project.gold_rate = 0.5
    project.save()
    gold = make_pair(project)
    gold_answer_set(pair=gold, changes=answer()["changes"])
    others = [member(project, f"extra_{i}", "annotator") for i in range(3)]

    leased = [assignment_lease_next(project=project, user=u) for u in [annotator_1, *others]]

    assert all(a is not None and a.pair == gold for a in leased)


@pytest.mark.parametrize("gold_rate", [0.0, 0.3])
def test_queue_without_pairs_gives_nothing(project, annotator_1, gold_rate):
    project.gold_rate = gold_rate
    project.save()
    assert assignment_lease_next(project=project, user=annotator_1) is None
