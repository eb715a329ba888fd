"""The lease order: import order, random, or the most useful pairs first."""

import json
import threading
from collections import Counter

import pytest
from django.db import connection

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Assignment, AssignmentState, Pair, PairEvent, PairEventKind
from annotator.predictions import predictions_import
from annotator.priorities import queue_priorities_refresh
from annotator.submitting import annotation_submit
from projects.models import LeaseOrder
from tests.conftest import member
from tests.factories import answer, make_pairs

SAME_BOX = [[20, 10, 40, 30]]
FAR_BOX = [[60, 40, 90, 60]]


def _predict(pair, model, boxes, confidence=0.9, category="attribute"):
    change = {
        "category": category,
        "description": "A patch changed.",
        "entity_a": "patch",
        "entity_b": "patch",
        "boxes_a": boxes,
        "boxes_b": boxes,
    }
    row = {"pair": pair.pk, "model": model, "confidence": confidence, "changes": [change]}
    assert predictions_import(project=pair.project, data=json.dumps(row).encode()).errors == []


def _order(project, lease_order):
    project.lease_order = lease_order
    project.save(update_fields=["lease_order"])
    queue_priorities_refresh(project=project)


def _disagreeing_setup(project, n=6):
    """Pairs two pre-annotators predicted: the odd ones they disagree on, the even ones not."""
    pairs = make_pairs(project, n)
    for i, pair in enumerate(pairs):
        _predict(pair, "pixeldiff", SAME_BOX)
        _predict(pair, "vlm", FAR_BOX if i % 2 else SAME_BOX)
    return pairs


def test_prioritised_serves_pairs_the_pre_annotators_disagree_on_first(project, annotator_1):
    pairs = _disagreeing_setup(project)
    _order(project, LeaseOrder.PRIORITISED)

    served = []
    while (lease := assignment_lease_next(project=project, user=annotator_1)) is not None:
        served.append(lease.pair_id)
        annotation_submit(assignment_id=lease.pk, user=annotator_1, body=answer())

    disagreeing = {p.pk for i, p in enumerate(pairs) if i % 2}
    assert set(served[:3]) == disagreeing
    assert served[:3] == sorted(served[:3])  # ties keep import order


def test_pairs_someone_started_still_come_first(project, annotator_1, annotator_2):
    pairs = _disagreeing_setup(project)
    started = assignment_lease_next(project=project, user=annotator_1)  # import order: pairs[0]
    assert started.pair_id == pairs[0].pk
    _order(project, LeaseOrder.PRIORITISED)

    assert assignment_lease_next(project=project, user=annotator_2).pair_id == pairs[0].pk


def test_unsure_pre_annotators_come_first(project, annotator_1):
    sure, unsure = make_pairs(project, 2)
    _predict(sure, "pixeldiff", SAME_BOX, confidence=0.95)
    _predict(unsure, "pixeldiff", SAME_BOX, confidence=0.1)
    _order(project, LeaseOrder.PRIORITISED)

    assert assignment_lease_next(project=project, user=annotator_1).pair_id == unsure.pk


def test_categories_rare_among_accepted_pairs_come_first(project, annotator_1, annotator_2):
    from tests.factories import make_accepted

    make_accepted(project, [annotator_1, annotator_2], [answer()] * 2)  # two "attribute"
    common, rare = make_pairs(project, 2)
    _predict(common, "pixeldiff", SAME_BOX, confidence=0.9, category="attribute")
    _predict(rare, "pixeldiff", SAME_BOX, confidence=0.9, category="counting")
    _order(project, LeaseOrder.PRIORITISED)

    common.refresh_from_db()
    rare.refresh_from_db()
    assert rare.queue_priority > common.queue_priority
    assert assignment_lease_next(project=project, user=annotator_1).pair_id == rare.pk


def test_random_order_is_stable_and_import_order_restores_ids(project, annotator_1):
    pairs = make_pairs(project, 12)
    _order(project, LeaseOrder.RANDOM)
    first = list(
        Pair.objects.filter(project=project)
        .order_by("-queue_priority", "id")
        .values_list("pk", flat=True)
    )
    assert queue_priorities_refresh(project=project) == 0  # same places on a refresh
    assert first != [p.pk for p in pairs]
    assert assignment_lease_next(project=project, user=annotator_1).pair_id == first[0]

    _order(project, LeaseOrder.IMPORT)
    assert set(Pair.objects.values_list("queue_priority", flat=True)) == {0}


def test_the_queue_query_reads_the_partial_index(project, annotator_1):
    from annotator.selectors import queue_candidates

    sql = str(queue_candidates(project, annotator_1, gold=False).query)

    assert 'ORDER BY "annotator_pair"."n_taken" DESC, "annotator_pair"."queue_priority" DESC' in sql


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_prioritised_queue_under_16_concurrent_annotators_keeps_every_invariant(project):
    threads_n, pairs_n = 16, 40
    pairs = _disagreeing_setup(project, pairs_n)
    _order(project, LeaseOrder.PRIORITISED)
    annotators = [member(project, f"worker_{i}", "annotator") for i in range(threads_n)]
    errors: list[BaseException] = []
    start = threading.Barrier(threads_n)

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
    assert set(per_pair.values()) == {project.overlap} and len(per_pair) == pairs_n
    leased = Annotation.objects.values_list("pair_id", "annotator_id")
    assert len(set(leased)) == len(leased)
    assert not Assignment.objects.filter(state=AssignmentState.LEASED).exists()
    # The first 16 leases taken (in the order of their events; each is written by the lease's
    # own statement) went to disagreeing pairs only: 20 of them, 2 annotators a pair. Not "each
    # thread's first lease": on a loaded machine a thread may start after the others have
    # filled every disagreeing pair.
    disagreeing = {p.pk for i, p in enumerate(pairs) if i % 2}
    lease_events = PairEvent.objects.filter(kind=PairEventKind.LEASED, pair__project=project)
    first_wave = lease_events.order_by("id").values_list("pair_id", flat=True)[:threads_n]
    assert set(first_wave) <= disagreeing
