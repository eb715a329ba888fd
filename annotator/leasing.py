"""Handing out work: leases on pairs, renewed while the page is open, expiring otherwise.

Invariants (pinned by a concurrency test on PostgreSQL): no pair ever has more than `overlap`
live-or-submitted regular assignments, and nobody gets the same pair twice. The guard is the
conditional update of `Pair.n_taken`, which holds on every database; row locks with SKIP LOCKED
only keep concurrent callers from queueing behind each other on PostgreSQL.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from annotator.models import OPEN_STATUSES, Assignment, AssignmentState, Pair, PairEvent, PairStatus
from annotator.selectors import assignment_live, queue_candidates
from projects.access import Action, project_role, role_may
from projects.models import Project, Role

_ATTEMPTS = 8  # candidates tried when concurrent callers keep winning the same pair


class LeaseLost(Exception):
    """The lease expired and the pair went to enough other annotators meanwhile."""


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.DIFFMARK_LEASE_SECONDS)


def assignment_lease_next(
    *, project: Project, user, now: datetime | None = None, rng: random.Random | None = None
) -> Assignment | None:
    """The caller's live lease in this project, renewed, or a new lease on the next pair.

    Gold pairs are mixed in at the project's gold rate; regular pairs someone else has already
    started come first, so pairs get finished. None when nothing is left for this caller.
    """
    now = now or timezone.now()
    current = assignment_live(user, project, now=now)
    if current is not None:
        current.expires_at = now + lease_duration()
        Assignment.objects.filter(pk=current.pk).update(expires_at=current.expires_at)
        return current
    _expire_in_request(now)
    for gold in _queue_order(project, rng or random.Random()):
        assignment = _lease_from(project, user, gold=gold, now=now)
        if assignment is not None:
            return assignment
    return None


def assignment_lease_pair(*, pair: Pair, user, now: datetime | None = None) -> Assignment | None:
    """A lease for ``user`` on this very pair (imports of work done elsewhere, which then goes
    through ``annotation_submit`` like any answer); None when the pair has no room left.

    Caller runs inside a transaction; the slot is taken with the same guarded update as
    ``assignment_lease_next``, so the overlap holds.
    """
    now = now or timezone.now()
    if not _take_slot(pair, pair.project, gold=pair.is_gold):
        return None
    return _assignment_open(pair, user, now)


def assignment_lease_ahead(
    *, project: Project, user, now: datetime | None = None, rng: random.Random | None = None
) -> Assignment | None:
    """A lease on the pair after the one being worked on, so the workspace can load its images
    while the current pair is answered (the annotator may only fetch images of pairs leased to
    them). `assignment_lease_next` hands it out after the current one is submitted or skipped:
    it returns the oldest live lease.

    At most one lease ahead: with two live leases the newer is returned again. None when the
    caller holds no live lease in the project (nothing to be ahead of) or nothing is left. An
    unused lease ahead simply expires like any other.
    """
    now = now or timezone.now()
    live = list(
        Assignment.objects.filter(
            annotator=user,
            pair__project=project,
            state=AssignmentState.LEASED,
            expires_at__gt=now,
        ).order_by("leased_at", "pk")[:2]
    )
    if not live:
        return None
    if len(live) == 2:
        return live[1]
    for gold in _queue_order(project, rng or random.Random()):
        assignment = _lease_from(project, user, gold=gold, now=now)
        if assignment is not None:
            return assignment
    return None


def _queue_order(project: Project, rng: random.Random) -> list[bool]:
    """Which pool to try first: gold at the project's rate, regular pairs otherwise."""
    if project.gold_rate <= 0:
        return [False]
    return [True, False] if rng.random() < project.gold_rate else [False, True]


def _expire_in_request(now: datetime) -> None:
    """Without a broker nothing else returns expired leases, so the request does, and only
    pays the sweep's transaction when there is something to expire (one indexed EXISTS).
    With a broker the beat sweep does it every minute (CELERY_BEAT_SCHEDULE), not the request.
    """
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return
    if Assignment.objects.filter(state=AssignmentState.LEASED, expires_at__lte=now).exists():
        assignments_expire(now=now)


def _lease_from(project: Project, user, *, gold: bool, now: datetime) -> Assignment | None:
    for _ in range(_ATTEMPTS):
        try:
            with transaction.atomic():
                pair = _take_next(project, user, gold=gold)
                if pair is None:
                    return None
                return _assignment_open(pair, user, now)
        except IntegrityError:
            continue  # the same user leased this pair in another tab meanwhile
    return None


def _slot_update_sql(project: Project, *, gold: bool) -> tuple[str, list]:
    """SET and guard of the UPDATE that counts one more annotator on a pair: still open (the
    screening gate may have held it since it was read) and, for regular pairs, not full."""
    qn = connection.ops.quote_name
    n_taken, status = qn("n_taken"), qn("status")
    starting = [PairStatus.IMPORTED.value, PairStatus.PRE_ANNOTATED.value]
    open_ = [str(s) for s in OPEN_STATUSES]
    sql = (
        f"SET {n_taken} = {n_taken} + 1, {status} = CASE WHEN {status} IN (%s, %s) "
        f"THEN %s ELSE {status} END "
        f"WHERE {status} IN ({', '.join(['%s'] * len(open_))})"
    )
    params: list = [*starting, PairStatus.IN_ANNOTATION.value, *open_]
    if not gold:
        sql += f" AND {n_taken} < %s"
        params.append(project.overlap)
    return sql, params


def _take_next(project: Project, user, *, gold: bool) -> Pair | None:
    """Take a slot on the first pair of the queue in one statement, and return that pair:
    UPDATE … WHERE id = (the queue's first row, FOR UPDATE SKIP LOCKED on PostgreSQL, so
    concurrent callers pass each other instead of queueing) RETURNING the pair. SQLite runs
    one writer at a time, so the same statement without row locks is just as exclusive.
    The guard of the UPDATE repeats the queue's conditions, so the overlap holds regardless.
    """
    candidates = queue_candidates(project, user, gold=gold).values("pk")[:1]
    if connection.features.has_select_for_update_skip_locked:
        candidates = candidates.select_for_update(skip_locked=True, of=("self",))
    queue_sql, queue_params = candidates.query.sql_with_params()
    slot_sql, slot_params = _slot_update_sql(project, gold=gold)
    qn = connection.ops.quote_name
    columns = ", ".join(qn(field.column) for field in Pair._meta.concrete_fields)
    sql = (
        f"UPDATE {qn(Pair._meta.db_table)} {slot_sql} AND {qn('id')} = ({queue_sql}) "
        f"RETURNING {columns}"
    )
    taken = list(Pair.objects.raw(sql, [*slot_params, *queue_params]))
    if taken:
        taken[0].project = project
    return taken[0] if taken else None


def _take_slot(pair: Pair, project: Project, *, gold: bool) -> bool:
    """Count one more annotator on this pair, unless it is full (checked in the UPDATE)."""
    limit = Q() if gold else Q(n_taken__lt=project.overlap)
    starting = [PairStatus.IMPORTED, PairStatus.PRE_ANNOTATED]
    status = Case(
        When(status__in=starting, then=Value(PairStatus.IN_ANNOTATION.value)),
        default=F("status"),
    )
    taken = Pair.objects.filter(limit, pk=pair.pk, status__in=OPEN_STATUSES).update(
        n_taken=F("n_taken") + 1, status=status
    )
    return bool(taken)


def _assignment_open(pair: Pair, user, now: datetime) -> Assignment:
    """The lease row in one INSERT; an expired lease of the same user on the pair is revived
    (ON CONFLICT DO UPDATE), as the queue offers pairs whose lease the caller let expire."""
    (assignment,) = Assignment.objects.bulk_create(
        [
            Assignment(
                pair=pair,
                annotator=user,
                state=AssignmentState.LEASED,
                leased_at=now,
                expires_at=now + lease_duration(),
            )
        ],
        update_conflicts=True,
        unique_fields=["pair", "annotator"],
        update_fields=["state", "leased_at", "expires_at"],
    )
    PairEvent.objects.create(
        pair=pair, actor=user, kind="leased", detail={"assignment": assignment.pk}
    )
    return assignment


def assignment_renew(*, assignment: Assignment, now: datetime | None = None) -> Assignment:
    """Extend a lease; revive an expired one if the pair still has room (else LeaseLost).

    Caller holds the assignment row lock.
    """
    now = now or timezone.now()
    if assignment.state == AssignmentState.EXPIRED:
        pair = assignment.pair
        if pair.status not in OPEN_STATUSES or not _take_slot(
            pair, pair.project, gold=pair.is_gold
        ):
            raise LeaseLost("the lease expired and the pair was given to other annotators")
        assignment.state = AssignmentState.LEASED
    assignment.expires_at = now + lease_duration()
    assignment.save(update_fields=["state", "expires_at"])
    return assignment


def assignments_expire(*, now: datetime | None = None) -> int:
    """Return expired leases to the pool; safe to run concurrently and repeatedly."""
    now = now or timezone.now()
    with transaction.atomic():
        expired = list(
            Assignment.objects.filter(state=AssignmentState.LEASED, expires_at__lte=now)
            .select_for_update(skip_locked=True)
            .values_list("pk", "pair_id")[:1000]
        )
        if not expired:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _ in expired]).update(
            state=AssignmentState.EXPIRED
        )
        for pair_id in {pair_id for _, pair_id in expired}:
            freed = sum(1 for _, p in expired if p == pair_id)
            Pair.objects.filter(pk=pair_id).update(n_taken=F("n_taken") - freed)
    return len(expired)


def assignment_check_member(*, assignment: Assignment, user) -> None:
    """PermissionDenied unless the user still annotates in the assignment's project: a member
    removed (or made a researcher) while holding a lease must not go on drafting, submitting or
    skipping on it. An assignment read with its `member_role` annotated (the caller's
    Membership.role, see submitting._locked) is checked without another query."""
    if hasattr(assignment, "member_role"):
        role = Role.LEAD if user.is_superuser else assignment.member_role
    else:
        role = project_role(user, assignment.pair.project)
    if not role_may(role, Action.ANNOTATE):
        raise PermissionDenied("you are no longer an annotator of this project")


@transaction.atomic  # the row lock below needs a transaction (PostgreSQL refuses it outside)
def assignment_skip(*, assignment: Assignment, user, reason: str = "") -> Assignment:
    """The annotator passes on a pair; it goes back to the pool for others, never to them.
    PermissionDenied when the user is no longer a member who annotates."""
    assignment_check_member(assignment=assignment, user=user)
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.state == AssignmentState.SUBMITTED:
        raise ValueError("this pair was already submitted")
    if assignment.state == AssignmentState.LEASED:
        Pair.objects.filter(pk=assignment.pair_id).update(n_taken=F("n_taken") - 1)
    assignment.state = AssignmentState.SKIPPED
    assignment.save(update_fields=["state"])
    PairEvent.objects.create(
        pair_id=assignment.pair_id, actor=user, kind="skipped", detail={"reason": reason[:500]}
    )
    return assignment
