"""Handing out work: leases on pairs, renewed while the page is open, expiring otherwise.

Invariants (pinned by a concurrency test on PostgreSQL): no pair ever has more than `overlap`
live-or-submitted regular assignments, and nobody gets the same pair twice. The guard is the
conditional update of `Pair.n_taken`, which holds on every database; row locks with SKIP LOCKED
only keep concurrent callers from queueing behind each other on PostgreSQL.

Its statements are hand-written in annotator/sql.py (why, and which tests pin them, is said
there); this module binds their values and reads their rows.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from accounts.users import AnyUser, User
from annotator import sql
from annotator.models import (
    OPEN_STATUSES,
    Assignment,
    AssignmentState,
    Pair,
    PairEvent,
    PairEventKind,
    PairStatus,
)
from config import rows
from projects import access
from projects.models import Project

_ATTEMPTS = 8  # candidates tried when concurrent callers keep winning the same pair


class LeaseLost(Exception):
    """The lease expired and the pair went to enough other annotators meanwhile."""


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.DIFFMARK_LEASE_SECONDS)


def assignment_lease_next(
    *, project: Project, user: User, now: datetime | None = None, rng: random.Random | None = None
) -> Assignment | None:
    """The caller's live lease in this project, renewed, or a new lease on the next pair.

    Gold pairs are mixed in at the project's gold rate; regular pairs someone else has already
    started come first, so pairs get finished. None when nothing is left for this caller. The
    caller has checked that the user may annotate here (`assignment_lease_next_in` does both).
    """
    return _lease_next_by(user, "id", project.pk, now=now, rng=rng, project=project)[1]


def assignment_lease_next_in(
    *, slug: str, user: AnyUser, now: datetime | None = None, rng: random.Random | None = None
) -> tuple[Project, Assignment | None]:
    """`assignment_lease_next` in the project named ``slug`` when the user may annotate there
    (else Http404 or PermissionDenied, as `access.project_for`): the one road of `next`, for the
    workspace page and the API alike."""
    return _lease_next_by(user, "slug", slug, now=now, rng=rng)


def _lease_next_by(
    user: AnyUser,
    by: str,
    key: object,
    *,
    now: datetime | None,
    rng: random.Random | None,
    project: Project | None = None,
) -> tuple[Project, Assignment | None]:
    """Both ways of `next`: the project (``by`` its "slug" or "id" ``key``), the caller's role,
    their live lease with its pair and, without a broker, whether any lease has expired come in
    one statement (sql.lease_start); then the lease renewed, or a new one. The role is checked
    when the project is named by its slug (the caller of the other way has checked it)."""
    now = now or timezone.now()
    eager = settings.CELERY_TASK_ALWAYS_EAGER
    state, at = AssignmentState.LEASED.value, rows.when(now)
    params = [*([state, at] if eager else []), user.pk or 0, user.pk or 0, state, at, key]
    row = rows.fetchone(sql.lease_start(connection.vendor, eager, by), params)
    if row is None:
        raise Http404("no such project")
    at_role = rows.width(Project)
    if project is None:
        project = rows.from_row(Project, row)
        access.role_check(access.role_of(user, row[at_role]), access.Action.ANNOTATE)
    assert isinstance(user, User)  # role_check let no anonymous caller through
    current = None
    if row[at_role + 1] is not None:  # the live lease's id
        current = rows.from_row(Assignment, row, start=at_role + 1)
        current.pair = rows.from_row(Pair, row, start=at_role + 1 + rows.width(Assignment))
        current.pair.project = project
    expired = bool(row[-1]) if eager else False
    return project, _lease_next(project, user, current, now=now, rng=rng, expired=expired)


def assignment_live(
    user: User, project: Project, *, now: datetime | None = None
) -> Assignment | None:
    """The annotator's live lease in the project (the one `next` resumes), with its pair (the
    lease's body shows it); the annotator's home lists it."""
    params = [user.pk, project.pk, AssignmentState.LEASED.value, rows.when(now or timezone.now())]
    row = rows.fetchone(sql.live_lease(connection.vendor), params)
    if row is None:
        return None
    assignment = rows.from_row(Assignment, row)
    assignment.pair = rows.from_row(Pair, row, start=rows.width(Assignment))
    assignment.pair.project = project
    return assignment


def _lease_next(
    project: Project,
    user: User,
    current: Assignment | None,
    *,
    now: datetime,
    rng: random.Random | None,
    expired: bool,
) -> Assignment | None:
    """The live lease ``current`` renewed, or a new lease. ``expired``: whether any lease has
    expired (asked only without a broker: with one, the beat sweep returns them every minute,
    CELERY_BEAT_SCHEDULE), so the request pays the sweep only when there is something to
    expire."""
    if current is not None:
        current.expires_at = now + lease_duration()
        rows.update(current, ["expires_at"])
        return current
    if expired:
        assignments_expire(now=now)
    for gold in _queue_order(project, rng or random.Random()):
        assignment = _lease_from(project, user, gold=gold, now=now)
        if assignment is not None:
            return assignment
    return None


def assignment_lease_pair(
    *, pair: Pair, user: User, now: datetime | None = None
) -> Assignment | None:
    """A lease for ``user`` on this very pair (imports of work done elsewhere, which then goes
    through ``annotation_submit`` like any answer); None when the pair has no room left.

    Caller runs inside a transaction; the slot is taken with the same guarded update as
    ``assignment_lease_next``, so the overlap holds.
    """
    now = now or timezone.now()
    if not _take_slot(pair, pair.project, gold=pair.is_gold):
        return None
    return _assignment_open(pair, user, now)


# The one rule for live leases: an annotator holds at most this many in a project at once (the
# pair being answered and the one ahead of it, or an answer taken back to edit). Every way to a
# live lease (next, ahead, reopen) keeps to it.
MAX_LIVE_LEASES = 2


def leases_live(
    *, project: Project, user: User, now: datetime, lock: bool = False
) -> list[Assignment]:
    """The caller's live leases in the project, oldest first (``lock``: rows locked)."""
    live = Assignment.objects.filter(
        annotator=user, pair__project=project, state=AssignmentState.LEASED, expires_at__gt=now
    ).order_by("leased_at", "pk")
    return list(live.select_for_update(of=("self",)) if lock else live)


def lease_make_room(*, project: Project, user: User, now: datetime) -> bool:
    """Room for one more live lease under MAX_LIVE_LEASES: the newest unused leases (no draft:
    a lease ahead nobody opened) go back to the pool as needed. False when the leases held all
    carry work. Call in a transaction."""
    live = leases_live(project=project, user=user, now=now, lock=True)
    over = len(live) - MAX_LIVE_LEASES + 1
    if over <= 0:
        return True
    unused = [a for a in reversed(live) if not a.draft][:over]
    if len(unused) < over:
        return False
    Assignment.objects.filter(pk__in=[a.pk for a in unused]).update(state=AssignmentState.EXPIRED)
    for assignment in unused:
        Pair.objects.filter(pk=assignment.pair_id).update(n_taken=F("n_taken") - 1)
    return True


def assignment_lease_ahead(
    *, project: Project, user: User, now: datetime | None = None, rng: random.Random | None = None
) -> Assignment | None:
    """A lease on the pair after the one being worked on, so the workspace can load its images
    while the current pair is answered (the annotator may only fetch images of pairs leased to
    them). `assignment_lease_next` hands it out after the current one is submitted or skipped:
    it returns the oldest live lease.

    At most one lease ahead (MAX_LIVE_LEASES): at the limit the newest is returned again. None
    when the caller holds no live lease in the project (nothing to be ahead of) or nothing is
    left. An unused lease ahead simply expires like any other.
    """
    now = now or timezone.now()
    live = leases_live(project=project, user=user, now=now)
    if not live:
        return None
    if len(live) >= MAX_LIVE_LEASES:
        return live[-1]
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


def _lease_from(project: Project, user: User, *, gold: bool, now: datetime) -> Assignment | None:
    for _ in range(_ATTEMPTS):
        try:
            if connection.vendor == "postgresql":
                return _lease_in_one_statement(project, user, gold=gold, now=now)
            with transaction.atomic():
                pair = _take_next(project, user, gold=gold)
                if pair is None:
                    return None
                return _assignment_open(pair, user, now)
        except IntegrityError:
            continue  # the same user leased this pair in another tab meanwhile
    return None


def _slot_params(project: Project, *, gold: bool) -> list:
    """The parameters of sql.slot: the statuses, and the overlap for regular pairs."""
    return [*_SLOT_PARAMS] if gold else [*_SLOT_PARAMS, project.overlap]


_SLOT_PARAMS = (
    PairStatus.IMPORTED.value,
    PairStatus.PRE_ANNOTATED.value,
    PairStatus.IN_ANNOTATION.value,
    *(str(s) for s in OPEN_STATUSES),
)


def _lease_in_one_statement(
    project: Project, user: User, *, gold: bool, now: datetime
) -> Assignment | None:
    """PostgreSQL: `_take_next` and `_assignment_open` as one statement (data-modifying CTEs),
    so a new lease is one round trip instead of five (BEGIN, three statements, COMMIT). A
    single statement is atomic on its own; inside a caller's transaction a savepoint lets a
    failed attempt be retried."""
    if connection.in_atomic_block:
        with transaction.atomic():
            return _lease_in_one_statement_now(project, user, gold=gold, now=now)
    return _lease_in_one_statement_now(project, user, gold=gold, now=now)


def _lease_in_one_statement_now(
    project: Project, user: User, *, gold: bool, now: datetime
) -> Assignment | None:
    locks = connection.features.has_select_for_update_skip_locked
    statement = sql.lease_in_one_statement(connection.vendor, gold, locks)
    update_params = _take_next_params(project, user, gold=gold)
    expires_at = now + lease_duration()
    lease = [user.pk, AssignmentState.LEASED.value, now, expires_at]
    # Not prepared: PostgreSQL's generic plan for the queue (no project, no overlap known)
    # sorted the project's whole queue, 16 ms against 1 for a plan made for the values.
    params = [*update_params, *lease, user.pk, PairEventKind.LEASED.value, now]
    row = rows.fetchone(statement, params, prepared=False)
    if row is None:
        return None
    pair = rows.from_row(Pair, row)
    pair.project = project
    assignment = Assignment(
        pair=pair,
        annotator=user,
        state=AssignmentState.LEASED,
        leased_at=now,
        expires_at=expires_at,
    )
    return rows.saved(assignment, row[-1])


def _take_next_params(project: Project, user: User, *, gold: bool) -> list:
    """The parameters of sql.take_next: the slot's, then the queue's with its slots bound."""
    _, queue_params, slots = sql.queue(connection.vendor, gold)
    bound = rows.bind(
        queue_params, slots, project=project.pk, user=user.pk, overlap=project.overlap
    )
    return [*_slot_params(project, gold=gold), *bound]


def _take_next(project: Project, user: User, *, gold: bool) -> Pair | None:
    """Take a slot on the first pair of the queue in one statement, and return that pair:
    UPDATE … WHERE id = (the queue's first row, FOR UPDATE SKIP LOCKED on PostgreSQL, so
    concurrent callers pass each other instead of queueing) RETURNING the pair. SQLite runs
    one writer at a time, so the same statement without row locks is just as exclusive.
    The guard of the UPDATE repeats the queue's conditions, so the overlap holds regardless.
    """
    locks = connection.features.has_select_for_update_skip_locked
    statement = sql.take_next(connection.vendor, gold, locks)
    row = rows.fetchone(statement, _take_next_params(project, user, gold=gold), prepared=False)
    if row is None:
        return None
    pair = rows.from_row(Pair, row)
    pair.project = project
    return pair


def _take_slot(pair: Pair, project: Project, *, gold: bool) -> bool:
    """Count one more annotator on this pair, unless it is full: the queue's own guarded
    UPDATE (sql.slot), on this pair."""
    params = [*_slot_params(project, gold=gold), pair.pk]
    return bool(rows.execute(sql.take_slot(connection.vendor, gold), params))


def _assignment_open(pair: Pair, user: User, now: datetime) -> Assignment:
    """The lease row in one INSERT; an expired lease of the same user on the pair is revived
    (ON CONFLICT DO UPDATE), as the queue offers pairs whose lease the caller let expire."""
    assignment = Assignment(
        pair=pair,
        annotator=user,
        state=AssignmentState.LEASED,
        leased_at=now,
        expires_at=now + lease_duration(),
    )
    params = [pair.pk, user.pk, assignment.state, rows.when(now), rows.when(assignment.expires_at)]
    opened = rows.fetchone(sql.assignment_open(connection.vendor), params)
    assert opened is not None  # INSERT … RETURNING always returns the row
    rows.saved(assignment, opened[0])
    detail = rows.json(PairEvent, "detail", {"assignment": assignment.pk})
    rows.execute(
        sql.event(connection.vendor),
        [pair.pk, user.pk, PairEventKind.LEASED.value, detail, rows.when(now)],
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


def assignment_check_member(*, assignment: Assignment, user: User) -> None:
    """PermissionDenied unless the user still annotates in the assignment's project: a member
    removed (or made a researcher) while holding a lease must not go on drafting, submitting or
    skipping on it. An assignment read with its `member_role` annotated (the caller's
    Membership.role, see submitting._locked) is checked without another query."""
    if hasattr(assignment, "member_role"):
        role = access.role_of(user, assignment.member_role)
    else:
        role = access.project_role(user, assignment.pair.project)
    if not access.role_may(role, access.Action.ANNOTATE):
        raise PermissionDenied("you are no longer an annotator of this project")


@transaction.atomic  # the row lock below needs a transaction (PostgreSQL refuses it outside)
def assignment_skip(*, assignment: Assignment, user: User, reason: str = "") -> Assignment:
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
        pair_id=assignment.pair_id,
        actor=user,
        kind=PairEventKind.SKIPPED,
        detail={"reason": reason[:500]},
    )
    return assignment
