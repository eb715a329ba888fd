"""The annotator's hand-written SQL: every statement of `next`, a lease, a draft save and a submit.

Why hand-written: compiling a queryset costs the ORM about a millisecond of CPU per statement,
more than the database spends answering it, and these endpoints send several on every request
(issue #17: next 19 statements → 7, 3 as served on PostgreSQL; the figures and their history are
in bench/RESULTS.md, "profile_hot.py"). Each statement here is a string built once per database
(and shape) from the models' metadata with config/rows.py, which also reads the rows back as
model instances and prepares the statements on PostgreSQL. Only the SQL is here; leasing.py and
submitting.py bind the values and read the rows.

The queue is the one statement not written by hand: its conditions and order are the queryset
`selectors.queue_candidates` (a rule the pages count too), compiled once per shape with named
slots (`config.rows.Slot`) where the project, the caller and the overlap go.

Pinned by tests/api/test_hot_queries.py (statements per request, on SQLite and PostgreSQL),
tests/api/test_prepared_statements.py (which are prepared on PostgreSQL, and that the lease is
not), tests/annotator/test_leasing.py, test_lease_ahead.py, test_concurrency.py (the overlap
under concurrent leases) and test_submitting.py.
"""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.db.models import IntegerField

from annotator.models import OPEN_STATUSES, Annotation, Assignment, Pair, PairEvent
from annotator.selectors import pairs_queue
from config import rows
from projects import sql as projects_sql
from projects.models import Project


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(rows.qn(c) for c in names)


# --- the caller's live lease -------------------------------------------------------------------


def live_lease_id(project_id: str) -> str:
    """The one definition of "the caller's live lease in a project" (its oldest): a scalar
    subquery on the project whose id is the SQL expression ``project_id``. Parameters: the
    user, then (after any in ``project_id``) the LEASED state and now."""
    la, lp, qn = rows.qn("la"), rows.qn("lp"), rows.qn
    return (
        f"SELECT {la}.{qn('id')} FROM {rows.table(Assignment)} {la} "
        f"INNER JOIN {rows.table(Pair)} {lp} ON {lp}.{qn('id')} = {la}.{qn('pair_id')} "
        f"WHERE {la}.{qn('annotator_id')} = %s AND {lp}.{qn('project_id')} = {project_id} "
        f"AND {la}.{qn('state')} = %s AND {la}.{qn('expires_at')} > %s "
        f"ORDER BY {la}.{qn('leased_at')} ASC, {la}.{qn('id')} ASC LIMIT 1"
    )


@cache
def live_lease(vendor: str) -> str:
    """The live lease with its pair (parameters: user, project id, LEASED, now)."""
    a, p, qn = rows.qn("a"), rows.qn("p"), rows.qn
    return (
        f"SELECT {rows.columns(Assignment, 'a')}, {rows.columns(Pair, 'p')} "
        f"FROM {rows.table(Assignment)} {a} INNER JOIN {rows.table(Pair)} {p} "
        f"ON {p}.{qn('id')} = {a}.{qn('pair_id')} WHERE {a}.{qn('id')} = ({live_lease_id('%s')})"
    )


@cache
def lease_start(vendor: str, eager: bool, by: str) -> str:
    """The start of every `next`: the project (``by`` its "slug" or "id"), the caller's role in
    it, their live lease with its pair and, without a broker (``eager``), whether any lease has
    expired — one statement. Parameters: [LEASED, now if eager], user (role), user, LEASED, now
    (live lease), the slug or id."""
    r, a, p, qn = rows.qn("r"), rows.qn("a"), rows.qn("p"), rows.qn
    role = projects_sql.member_role(f"{r}.{qn('id')}")
    expired_ = f", EXISTS ({expired(vendor)})" if eager else ""
    live_id = qn("live_id")
    # The project (one row, by a unique key) with its role and live lease's id first, then
    # that lease and its pair by primary key. Joined on the subquery itself, PostgreSQL hashed
    # the whole assignment table; OFFSET 0 keeps it from merging the two levels back.
    project = (
        f"SELECT {rows.columns(Project, 'r')}, ({role}) AS {qn('role')}, "
        f"({live_lease_id(f'{r}.' + qn('id'))}) AS {live_id} "
        f"FROM {rows.table(Project)} {r} WHERE {r}.{qn(by)} = %s"
        + (" OFFSET 0" if vendor == "postgresql" else "")
    )
    return (
        f"SELECT {rows.columns(Project, 'r')}, {r}.{qn('role')}, {rows.columns(Assignment, 'a')}, "
        f"{rows.columns(Pair, 'p')}{expired_} FROM ({project}) {r} "
        f"LEFT JOIN {rows.table(Assignment)} {a} ON {a}.{qn('id')} = {r}.{live_id} "
        f"LEFT JOIN {rows.table(Pair)} {p} ON {p}.{qn('id')} = {a}.{qn('pair_id')}"
    )


@cache
def expired(vendor: str) -> str:
    """Whether any lease has expired (parameters: LEASED, now): one indexed probe."""
    qn = rows.qn
    return (
        f"SELECT 1 FROM {rows.table(Assignment)} "
        f"WHERE {qn('state')} = %s AND {qn('expires_at')} <= %s LIMIT 1"
    )


# --- a new lease -------------------------------------------------------------------------------

# The columns a new lease writes, those an expired lease of the same user and pair has revived
# (ON CONFLICT DO UPDATE), and those of its event: one list for both ways of leasing.
LEASE_COLUMNS = ("pair_id", "annotator_id", "state", "leased_at", "expires_at")
_REVIVED = ("state", "leased_at", "expires_at")
EVENT_COLUMNS = ("pair_id", "actor_id", "kind", "detail", "at")


def _lease_insert(values: str, returning: tuple[str, ...] = ("id",)) -> str:
    """INSERT of a lease from ``values`` (VALUES … or a SELECT), reviving an expired one."""
    qn = rows.qn
    revive = ", ".join(f"{qn(c)} = EXCLUDED.{qn(c)}" for c in _REVIVED)
    return (
        f"INSERT INTO {rows.table(Assignment)} ({_names(LEASE_COLUMNS)}) {values} "
        f"ON CONFLICT ({qn('pair_id')}, {qn('annotator_id')}) DO UPDATE SET {revive} "
        f"RETURNING {_names(returning)}"
    )


@cache
def assignment_open(vendor: str) -> str:
    """The lease row (parameters: LEASE_COLUMNS), returning its id."""
    return _lease_insert("VALUES (%s, %s, %s, %s, %s)")


@cache
def event(vendor: str) -> str:
    """A pair's event (parameters: EVENT_COLUMNS)."""
    return (
        f"INSERT INTO {rows.table(PairEvent)} ({_names(EVENT_COLUMNS)}) VALUES (%s, %s, %s, %s, %s)"
    )


@cache
def slot(vendor: str, gold: bool) -> str:
    """SET and guard of the UPDATE that counts one more annotator on a pair: still open (the
    screening gate may have held it since it was read) and, for regular pairs, not full.
    Parameters: `SLOT_PARAMS`, then the overlap for regular pairs."""
    qn = rows.qn
    n_taken, status = qn("n_taken"), qn("status")
    sql = (
        f"SET {n_taken} = {n_taken} + 1, {status} = CASE WHEN {status} IN (%s, %s) "
        f"THEN %s ELSE {status} END "
        f"WHERE {status} IN ({', '.join(['%s'] * len(OPEN_STATUSES))})"
    )
    return sql if gold else sql + f" AND {n_taken} < %s"


@cache
def take_slot(vendor: str, gold: bool) -> str:
    """`slot` on one pair (parameters: as `slot`, then the pair's id)."""
    return f"UPDATE {rows.table(Pair)} {slot(vendor, gold)} AND {rows.qn('id')} = %s"


@cache
def queue(vendor: str, gold: bool) -> tuple[str, tuple, dict[str, tuple[int, ...]]]:
    """The queue's first pair id as `selectors.pairs_queue` defines it, compiled once per
    shape: its SQL, its parameters, and the places of the project, the user and the overlap
    among them (`rows.bind`)."""
    first = pairs_queue(
        project_id=rows.Slot("project", IntegerField()),
        user_id=rows.Slot("user", IntegerField()),
        overlap=rows.Slot("overlap", IntegerField()),
        gold=gold,
    ).values("pk")[:1]
    sql, params, slots = rows.compiled(first)
    if not ({"project", "user"} <= slots.keys() and (gold or "overlap" in slots)):
        raise RuntimeError("pairs_queue changed: bind its project, user and overlap here")
    return sql, params, slots


@cache
def take_next(vendor: str, gold: bool, locks: bool) -> str:
    """UPDATE … WHERE id = (the queue's first row, FOR UPDATE SKIP LOCKED where ``locks``)
    RETURNING the pair. Parameters: as `slot`, then the queue's (`queue_params`)."""
    queue_sql = queue(vendor, gold)[0]
    if locks:
        queue_sql += " " + connection.ops.for_update_sql(skip_locked=True, of=(rows.table(Pair),))
    return (
        f"UPDATE {rows.table(Pair)} {slot(vendor, gold)} AND {rows.qn('id')} = ({queue_sql}) "
        f"RETURNING {rows.columns(Pair)}"
    )


@cache
def lease_in_one_statement(vendor: str, gold: bool, locks: bool) -> str:
    """PostgreSQL: `take_next`, `assignment_open` and `event` as one statement (data-modifying
    CTEs). Parameters: `take_next`'s, then the user, LEASED, now, expires_at (the lease), then
    the user, the LEASED event kind and now (the event). Returns the pair and the lease's id."""
    qn = rows.qn
    leased = _lease_insert(
        f"SELECT {qn('id')}, %s, %s, %s, %s FROM {qn('taken')}", returning=("id", "pair_id")
    )
    return (
        f"WITH {qn('taken')} AS ({take_next(vendor, gold, locks)}), "
        f"{qn('leased')} AS ({leased}), "
        f"{qn('logged')} AS (INSERT INTO {rows.table(PairEvent)} ({_names(EVENT_COLUMNS)}) "
        f"SELECT {qn('pair_id')}, %s, %s, jsonb_build_object('assignment', {qn('id')}), %s "
        f"FROM {qn('leased')}) "
        f"SELECT {rows.columns(Pair, 'taken')}, {qn('leased')}.{qn('id')} "
        f"FROM {qn('taken')}, {qn('leased')}"
    )


# --- drafts and submissions --------------------------------------------------------------------


@cache
def locked(vendor: str, locks: bool) -> str:
    """The caller's assignment with its pair, project and the caller's role in the project,
    row-locked where ``locks`` (parameters: user (role), assignment id, user). Every draft save
    and submit reads it: the membership check costs no extra round trip."""
    a, p, r, qn = rows.qn("a"), rows.qn("p"), rows.qn("r"), rows.qn
    role = projects_sql.member_role(f"{p}.{qn('project_id')}")
    sql = (
        f"SELECT {rows.columns(Assignment, 'a')}, {rows.columns(Pair, 'p')}, "
        f"{rows.columns(Project, 'r')}, ({role}) "
        f"FROM {rows.table(Assignment)} {a} "
        f"INNER JOIN {rows.table(Pair)} {p} ON {p}.{qn('id')} = {a}.{qn('pair_id')} "
        f"INNER JOIN {rows.table(Project)} {r} ON {r}.{qn('id')} = {p}.{qn('project_id')} "
        f"WHERE {a}.{qn('id')} = %s AND {a}.{qn('annotator_id')} = %s"
    )
    return sql + f" FOR UPDATE OF {a}" if locks else sql


@cache
def by_key(vendor: str) -> str:
    """The caller's annotation stored under an idempotency key (parameters: user, key)."""
    qn = rows.qn
    return (
        f"SELECT {rows.columns(Annotation)} FROM {rows.table(Annotation)} "
        f"WHERE {qn('annotator_id')} = %s AND {qn('idempotency_key')} = %s "
        f"ORDER BY {qn('id')} ASC LIMIT 1"
    )


@cache
def count_submitted(vendor: str) -> str:
    """One more submission on a pair, returning the new count (parameter: the pair's id)."""
    qn = rows.qn
    return (
        f"UPDATE {rows.table(Pair)} SET {qn('n_submitted')} = {qn('n_submitted')} + 1 "
        f"WHERE {qn('id')} = %s RETURNING {qn('n_submitted')}"
    )
