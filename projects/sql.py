"""The projects app's hand-written SQL: the caller's role, read inside other statements.

Why hand-written: compiling a queryset costs the ORM about a millisecond of CPU per statement,
more than the database spends answering, and the annotator's hot endpoints (`next`, draft,
`submit`) ask the caller's role on every request (figures: bench/RESULTS.md, profile_hot.py;
config/rows.py builds and reads these statements). The role is a scalar subquery, so it comes in
the same round trip as the project or the assignment it is asked with: `project_with_role`
here, `annotator/sql.py`'s start of a lease and a submit's locked read.

Pinned by tests/api/test_hot_queries.py (statements per request), tests/api/
test_prepared_statements.py (prepared on PostgreSQL) and tests/projects/test_access.py (the
rule, read through `access.project_for`).
"""

from __future__ import annotations

from functools import cache

from config import rows
from projects.models import Membership, Project


def member_role(project_id: str) -> str:
    """A scalar subquery: the role of the user given as its one parameter in the project whose
    id is the SQL expression ``project_id``; NULL without a membership (`access.role_of` reads
    it)."""
    m, qn = rows.qn("m"), rows.qn
    return (
        f"SELECT {m}.{qn('role')} FROM {rows.table(Membership)} {m} "
        f"WHERE {m}.{qn('project_id')} = {project_id} AND {m}.{qn('user_id')} = %s LIMIT 1"
    )


@cache
def project_with_role(vendor: str) -> str:
    """The project by its slug with the caller's membership role last (parameters: user id,
    slug)."""
    p, qn = rows.qn("p"), rows.qn
    return (
        f"SELECT {rows.columns(Project, 'p')}, ({member_role(f'{p}.' + qn('id'))}) "
        f"FROM {rows.table(Project)} {p} WHERE {p}.{qn('slug')} = %s"
    )
