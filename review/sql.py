"""The review app's hand-written SQL: the cross-check's reads, which run after every submit that
completes a pair (in the request itself without a broker).

Why hand-written: compiling a queryset costs the ORM about a millisecond of CPU per statement,
more than the database spends answering it; the cross-check sends several (bench/RESULTS.md,
"profile_hot.py": a submit completing a pair went from 27 statements to 18). Each statement is a
string built once per database from the models' metadata with config/rows.py, which reads the
rows back as model instances. agreement.py and selectors.py bind the values and read the rows.

Pinned by tests/api/test_hot_queries.py (`test_submit_completing_the_pair_runs_the_agreement_in_
the_request`: its statements, counted) and tests/review/test_agreement.py.
"""

from __future__ import annotations

from functools import cache

from annotator.models import Annotation, Change, Pair
from config import rows
from pairdiff.agreement import COMPARED
from projects.models import Project
from review.models import Resolution


@cache
def pair_locked(vendor: str, locks: bool) -> str:
    """The pair with its project (parameter: the pair's id). The lock is the pair's row only:
    locking the project's row too made every concurrent cross-check of the project wait for
    each other."""
    p, r, qn = rows.qn("p"), rows.qn("r"), rows.qn
    sql = (
        f"SELECT {rows.columns(Pair, 'p')}, {rows.columns(Project, 'r')} "
        f"FROM {rows.table(Pair)} {p} "
        f"INNER JOIN {rows.table(Project)} {r} ON {r}.{qn('id')} = {p}.{qn('project_id')} "
        f"WHERE {p}.{qn('id')} = %s"
    )
    return sql + f" FOR UPDATE OF {p}" if locks else sql


@cache
def first_annotations(vendor: str) -> str:
    """The pair's first COMPARED annotations, each joined to its changes (a row with NULL
    change columns for an annotation without any), in order (parameter: the pair's id)."""
    a, c, qn = rows.qn("a"), rows.qn("c"), rows.qn
    first_two = (
        f"SELECT {rows.columns(Annotation)} FROM {rows.table(Annotation)} "
        f"WHERE {qn('pair_id')} = %s ORDER BY {qn('created_at')} ASC, {qn('id')} ASC "
        f"LIMIT {COMPARED}"
    )
    return (
        f"SELECT {rows.columns(Annotation, 'a')}, {rows.columns(Change, 'c')} "
        f"FROM ({first_two}) {a} "
        f"LEFT JOIN {rows.table(Change)} {c} ON {c}.{qn('annotation_id')} = {a}.{qn('id')} "
        f"ORDER BY {a}.{qn('created_at')} ASC, {a}.{qn('id')} ASC, "
        f"{c}.{qn('position')} ASC, {c}.{qn('id')} ASC"
    )


@cache
def latest_decision(vendor: str) -> str:
    """The latest lead decision on a pair (parameter: the pair's id); every cross-check asks."""
    qn = rows.qn
    return (
        f"SELECT {qn('decision')} FROM {rows.table(Resolution)} WHERE {qn('pair_id')} = %s "
        f"ORDER BY {qn('created_at')} DESC, {qn('id')} DESC LIMIT 1"
    )
