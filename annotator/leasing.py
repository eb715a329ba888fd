"""Handing out work: leases on pairs, renewed while the page is open, expiring otherwise.

Invariants (pinned by a concurrency test on PostgreSQL): no pair ever has more than `overlap`
live-or-submitted regular assignments, and nobody gets the same pair twice. The guard is the
conditional update of `Pair.n_taken`, which holds on every database; row locks with SKIP LOCKED
only keep concurrent callers from queueing behind each other on PostgreSQL.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from functools import cache

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from annotator.models import (
    OPEN_STATUSES,
    Assignment,
    AssignmentState,
    Pair,
    PairEvent,
    PairEventKind,
    PairStatus,
)
from annotator.selectors import assignment_live, queue_candidates
from config import rows
from projects.access import Action, member_check, member_role_sql, project_role, role_may
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
    return _lease_next(project, user, assignment_live(user, project, now=now), now=now, rng=rng)


def assignment_lease_next_in(
    *, slug: str, user, now: datetime | None = None, rng: random.Random | None = None
) -> tuple[Project, Assignment | None]:
    """`assignment_lease_next` in the project named ``slug`` when the user may annotate there
    (else Http404 or PermissionDenied, as `access.project_for`). The annotator's hot `next`:
    the project, the caller's role, their live lease with its pair and, without a broker,
    whether any lease has expired come in one statement."""
    now = now or timezone.now()
    eager = settings.CELERY_TASK_ALWAYS_EAGER
    state, at = AssignmentState.LEASED.value, rows.when(now)
    params = [*([state, at] if eager else []), user.pk or 0, user.pk or 0, state, at, slug]
    row = rows.fetchone(_lease_start_sql(connection.vendor, eager), params)
    if row is None:
        raise Http404("no such project")
    project = rows.from_row(Project, row)
    at_role = rows.width(Project)
    member_check(user, row[at_role], Action.ANNOTATE)
    current = None
    if row[at_role + 1] is not None:  # the live lease's id
        current = rows.from_row(Assignment, row, start=at_role + 1)
        current.pair = rows.from_row(Pair, row, start=at_role + 1 + rows.width(Assignment))
        current.pair.project = project
    expired = bool(row[-1]) if eager else False
    return project, _lease_next(project, user, current, now=now, rng=rng, expired=expired)


@cache
def _lease_start_sql(vendor: str, eager: bool) -> str:
    r, a, p, qn = rows.qn("r"), rows.qn("a"), rows.qn("p"), rows.qn
    role = member_role_sql(f"{r}.{qn('id')}")
    expired = f", EXISTS ({_expired_sql(vendor)})" if eager else ""
    la, lp, live_id = qn("la"), qn("lp"), qn("live_id")
    live = (  # assignment_live's lease, as a subquery on the project
        f"SELECT {la}.{qn('id')} FROM {rows.table(Assignment)} {la} "
        f"INNER JOIN {rows.table(Pair)} {lp} ON {lp}.{qn('id')} = {la}.{qn('pair_id')} "
        f"WHERE {la}.{qn('annotator_id')} = %s AND {lp}.{qn('project_id')} = {r}.{qn('id')} "
        f"AND {la}.{qn('state')} = %s AND {la}.{qn('expires_at')} > %s "
        f"ORDER BY {la}.{qn('leased_at')} ASC, {la}.{qn('id')} ASC LIMIT 1"
    )
    # The project (one row, by its unique slug) with its role and live lease's id first, then
    # that lease and its pair by primary key. Joined on the subquery itself, PostgreSQL hashed
    # the whole assignment table; OFFSET 0 keeps it from merging the two levels back.
    project = (
        f"SELECT {rows.columns(Project, 'r')}, ({role}) AS {qn('role')}, ({live}) AS {live_id} "
        f"FROM {rows.table(Project)} {r} WHERE {r}.{qn('slug')} = %s"
        + (" OFFSET 0" if vendor == "postgresql" else "")
    )
    return (
        f"SELECT {rows.columns(Project, 'r')}, {r}.{qn('role')}, {rows.columns(Assignment, 'a')}, "
        f"{rows.columns(Pair, 'p')}{expired} FROM ({project}) {r} "
        f"LEFT JOIN {rows.table(Assignment)} {a} ON {a}.{qn('id')} = {r}.{live_id} "
        f"LEFT JOIN {rows.table(Pair)} {p} ON {p}.{qn('id')} = {a}.{qn('pair_id')}"
    )


def _lease_next(
    project: Project,
    user,
    current: Assignment | None,
    *,
    now: datetime,
    rng: random.Random | None,
    expired: bool | None = None,
) -> Assignment | None:
    """The live lease ``current`` renewed, or a new lease. ``expired``: whether any lease has
    expired, when already known (None: asked here, without a broker)."""
    if current is not None:
        current.expires_at = now + lease_duration()
        rows.update(current, ["expires_at"])
        return current
    if expired is None:
        _expire_in_request(now)
    elif expired:
        assignments_expire(now=now)
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


# The one rule for live leases: an annotator holds at most this many in a project at once (the
# pair being answered and the one ahead of it, or an answer taken back to edit). Every way to a
# live lease (next, ahead, reopen) keeps to it.
MAX_LIVE_LEASES = 2


def leases_live(*, project: Project, user, now: datetime, lock: bool = False) -> list[Assignment]:
    """The caller's live leases in the project, oldest first (``lock``: rows locked)."""
    live = Assignment.objects.filter(
        annotator=user, pair__project=project, state=AssignmentState.LEASED, expires_at__gt=now
    ).order_by("leased_at", "pk")
    return list(live.select_for_update(of=("self",)) if lock else live)


def lease_make_room(*, project: Project, user, now: datetime) -> bool:
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
    *, project: Project, user, now: datetime | None = None, rng: random.Random | None = None
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


def _expire_in_request(now: datetime) -> None:
    """Without a broker nothing else returns expired leases, so the request does, and only
    pays the sweep's transaction when there is something to expire (one indexed EXISTS).
    With a broker the beat sweep does it every minute (CELERY_BEAT_SCHEDULE), not the request.
    """
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return
    if rows.fetchone(
        _expired_sql(connection.vendor), [AssignmentState.LEASED.value, rows.when(now)]
    ):
        assignments_expire(now=now)


# The statements every `next` sends, hand-written once per database (config.rows): compiling
# them through the ORM cost more CPU than the database spends answering.


@cache
def _expired_sql(vendor: str) -> str:
    qn = rows.qn
    return (
        f"SELECT 1 FROM {rows.table(Assignment)} "
        f"WHERE {qn('state')} = %s AND {qn('expires_at')} <= %s LIMIT 1"
    )


# The columns a new lease writes, those an expired lease of the same user and pair has revived
# (ON CONFLICT DO UPDATE), and those of its event: one list for both ways of leasing.
_LEASE_COLUMNS = ("pair_id", "annotator_id", "state", "leased_at", "expires_at")
_REVIVED = ("state", "leased_at", "expires_at")
_EVENT_COLUMNS = ("pair_id", "actor_id", "kind", "detail", "at")


def _columns_sql(names: tuple[str, ...]) -> str:
    return ", ".join(rows.qn(c) for c in names)


def _lease_insert_sql(values: str, returning: tuple[str, ...] = ("id",)) -> str:
    """INSERT of a lease from ``values`` (VALUES … or a SELECT), reviving an expired one."""
    qn = rows.qn
    revive = ", ".join(f"{qn(c)} = EXCLUDED.{qn(c)}" for c in _REVIVED)
    return (
        f"INSERT INTO {rows.table(Assignment)} ({_columns_sql(_LEASE_COLUMNS)}) {values} "
        f"ON CONFLICT ({qn('pair_id')}, {qn('annotator_id')}) DO UPDATE SET {revive} "
        f"RETURNING {_columns_sql(returning)}"
    )


@cache
def _assignment_open_sql(vendor: str) -> str:
    return _lease_insert_sql("VALUES (%s, %s, %s, %s, %s)")


@cache
def _event_sql(vendor: str) -> str:
    columns = _columns_sql(_EVENT_COLUMNS)
    return f"INSERT INTO {rows.table(PairEvent)} ({columns}) VALUES (%s, %s, %s, %s, %s)"


@cache
def _queue_sql(vendor: str, gold: bool) -> tuple[str, tuple, dict[str, list[int]]]:
    """The queue's first row as `queue_candidates` defines it, compiled once per shape: its SQL,
    its parameters, and where the project, the user and the overlap go among them (found by
    compiling twice with different stand-in values: the places that follow them)."""
    compiled = []
    for stand_in in (
        {"project": 910_001, "user": 910_002, "overlap": 32_001},
        {"project": 920_001, "user": 920_002, "overlap": 32_002},
    ):
        project = Project(pk=stand_in["project"], overlap=stand_in["overlap"])
        user = get_user_model()(pk=stand_in["user"])
        candidates = queue_candidates(project, user, gold=gold).values("pk")[:1]
        compiled.append((stand_in, *candidates.query.sql_with_params()))
    (first, sql, params), (second, _, other) = compiled
    pairs = list(enumerate(zip(params, other, strict=True)))
    slots = {
        name: [i for i, (p, q) in pairs if (p, q) == (value, second[name])]
        for name, value in first.items()
    }
    if not (slots["project"] and slots["user"] and (gold or slots["overlap"])):
        raise RuntimeError("queue_candidates changed: bind its project, user and overlap here")
    return sql, tuple(params), slots


def _lease_from(project: Project, user, *, gold: bool, now: datetime) -> Assignment | None:
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


def _slot_update_sql(project: Project, *, gold: bool) -> tuple[str, list]:
    """SET and guard of the UPDATE that counts one more annotator on a pair: still open (the
    screening gate may have held it since it was read) and, for regular pairs, not full."""
    params: list = [*_SLOT_PARAMS]
    if not gold:
        params.append(project.overlap)
    return _slot_sql(connection.vendor, gold), params


_SLOT_PARAMS = (
    PairStatus.IMPORTED.value,
    PairStatus.PRE_ANNOTATED.value,
    PairStatus.IN_ANNOTATION.value,
    *(str(s) for s in OPEN_STATUSES),
)


@cache
def _slot_sql(vendor: str, gold: bool) -> str:
    qn = rows.qn
    n_taken, status = qn("n_taken"), qn("status")
    sql = (
        f"SET {n_taken} = {n_taken} + 1, {status} = CASE WHEN {status} IN (%s, %s) "
        f"THEN %s ELSE {status} END "
        f"WHERE {status} IN ({', '.join(['%s'] * len(OPEN_STATUSES))})"
    )
    return sql if gold else sql + f" AND {n_taken} < %s"


def _lease_in_one_statement(project: Project, user, *, gold: bool, now: datetime):
    """PostgreSQL: `_take_next` and `_assignment_open` as one statement (data-modifying CTEs),
    so a new lease is one round trip instead of five (BEGIN, three statements, COMMIT). A
    single statement is atomic on its own; inside a caller's transaction a savepoint lets a
    failed attempt be retried."""
    if connection.in_atomic_block:
        with transaction.atomic():
            return _lease_in_one_statement_now(project, user, gold=gold, now=now)
    return _lease_in_one_statement_now(project, user, gold=gold, now=now)


@cache
def _lease_in_one_statement_sql(vendor: str, gold: bool, locks: bool) -> str:
    qn = rows.qn
    leased = _lease_insert_sql(
        f"SELECT {qn('id')}, %s, %s, %s, %s FROM {qn('taken')}", returning=("id", "pair_id")
    )
    return (
        f"WITH {qn('taken')} AS ({_take_next_text(vendor, gold, locks)}), "
        f"{qn('leased')} AS ({leased}), "
        f"{qn('logged')} AS (INSERT INTO {rows.table(PairEvent)} ({_columns_sql(_EVENT_COLUMNS)}) "
        f"SELECT {qn('pair_id')}, %s, %s, jsonb_build_object('assignment', {qn('id')}), %s "
        f"FROM {qn('leased')}) "
        f"SELECT {rows.columns(Pair, 'taken')}, {qn('leased')}.{qn('id')} "
        f"FROM {qn('taken')}, {qn('leased')}"
    )


def _lease_in_one_statement_now(project: Project, user, *, gold: bool, now: datetime):
    locks = connection.features.has_select_for_update_skip_locked
    sql = _lease_in_one_statement_sql(connection.vendor, gold, locks)
    update_params = _take_next_params(project, user, gold=gold)
    expires_at = now + lease_duration()
    lease = [user.pk, AssignmentState.LEASED.value, now, expires_at]
    # Not prepared: PostgreSQL's generic plan for the queue (no project, no overlap known)
    # sorted the project's whole queue, 16 ms against 1 for a plan made for the values.
    params = [*update_params, *lease, user.pk, PairEventKind.LEASED.value, now]
    row = rows.fetchone(sql, params, prepared=False)
    if row is None:
        return None
    pair = rows.from_row(Pair, row)
    pair.project = project
    assignment = Assignment(
        pk=row[-1],
        pair=pair,
        annotator=user,
        state=AssignmentState.LEASED,
        leased_at=now,
        expires_at=expires_at,
    )
    assignment._state.adding = False
    return assignment


def _take_next_sql(project: Project, user, *, gold: bool) -> tuple[str, list]:
    """The UPDATE of `_take_next`, and its parameters."""
    locks = connection.features.has_select_for_update_skip_locked
    return (
        _take_next_text(connection.vendor, gold, locks),
        _take_next_params(project, user, gold=gold),
    )


@cache
def _take_next_text(vendor: str, gold: bool, locks: bool) -> str:
    queue_sql = _queue_sql(vendor, gold)[0]
    if locks:
        queue_sql += " " + connection.ops.for_update_sql(skip_locked=True, of=(rows.table(Pair),))
    return (
        f"UPDATE {rows.table(Pair)} {_slot_sql(vendor, gold)} AND {rows.qn('id')} = ({queue_sql}) "
        f"RETURNING {rows.columns(Pair)}"
    )


def _take_next_params(project: Project, user, *, gold: bool) -> list:
    _, queue_template, slots = _queue_sql(connection.vendor, gold)
    queue_params = list(queue_template)
    for name, value in (("project", project.pk), ("user", user.pk), ("overlap", project.overlap)):
        for index in slots[name]:
            queue_params[index] = value
    return [*_slot_update_sql(project, gold=gold)[1], *queue_params]


def _take_next(project: Project, user, *, gold: bool) -> Pair | None:
    """Take a slot on the first pair of the queue in one statement, and return that pair:
    UPDATE … WHERE id = (the queue's first row, FOR UPDATE SKIP LOCKED on PostgreSQL, so
    concurrent callers pass each other instead of queueing) RETURNING the pair. SQLite runs
    one writer at a time, so the same statement without row locks is just as exclusive.
    The guard of the UPDATE repeats the queue's conditions, so the overlap holds regardless.
    """
    row = rows.fetchone(*_take_next_sql(project, user, gold=gold), prepared=False)
    if row is None:
        return None
    pair = rows.from_row(Pair, row)
    pair.project = project
    return pair


def _take_slot(pair: Pair, project: Project, *, gold: bool) -> bool:
    """Count one more annotator on this pair, unless it is full: the queue's own guarded
    UPDATE (`_slot_update_sql`), on this pair."""
    slot_sql, params = _slot_update_sql(project, gold=gold)
    return bool(
        rows.execute(
            f"UPDATE {rows.table(Pair)} {slot_sql} AND {rows.qn('id')} = %s", [*params, pair.pk]
        )
    )


def _assignment_open(pair: Pair, user, now: datetime) -> Assignment:
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
    opened = rows.fetchone(_assignment_open_sql(connection.vendor), params)
    assert opened is not None  # INSERT … RETURNING always returns the row
    (assignment.pk,) = opened
    assignment._state.adding = False
    detail = rows.json(PairEvent, "detail", {"assignment": assignment.pk})
    rows.execute(
        _event_sql(connection.vendor),
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
        pair_id=assignment.pair_id,
        actor=user,
        kind=PairEventKind.SKIPPED,
        detail={"reason": reason[:500]},
    )
    return assignment
