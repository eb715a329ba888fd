"""Who may do what on a project: the one place that pages and the API ask.

A user without a role in the project gets "not found" (a project's existence is private to its
members); a member whose role does not allow the action gets "forbidden". Admins act as leads
everywhere. Pair, assignment, release and job rules derive from the project's.

Pairs, assignments and jobs live in the apps above; the rules here know them only by what they
ask of them (the protocols below), so every decision stays in this one module.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Protocol

from django.core.exceptions import PermissionDenied
from django.db import connection, models
from django.http import Http404

from config import rows
from projects.models import Membership, Project, Role


class PairLike(Protocol):
    """annotator.models.Pair, as far as access asks."""

    @property
    def project(self) -> Project: ...

    @property
    def assignments(self) -> Any: ...  # its leases (Assignment.pair's related name)


class AssignmentLike(Protocol):
    """annotator.models.Assignment, as far as access asks."""

    @property
    def annotator_id(self) -> int: ...


class JobLike(Protocol):
    """jobs.models.Job, as far as access asks."""

    @property
    def project(self) -> Project | None: ...

    @property
    def created_by_id(self) -> int | None: ...


class Action(models.TextChoices):
    VIEW = "view", "See the project and its pages for members"
    ANNOTATE = "annotate", "Lease pairs and answer them"
    MANAGE = "manage", "Settings, members, uploads, jobs, pairs, disputes, questions, releases"
    READ_RELEASES = "read-releases", "Read the project's (ready) releases"
    SEE_VERDICTS = "see-verdicts", "See how many pairs were accepted, disputed or rejected"


RULES: dict[Action, frozenset[Role]] = {
    Action.VIEW: frozenset(Role),
    Action.ANNOTATE: frozenset({Role.ANNOTATOR, Role.LEAD}),
    Action.MANAGE: frozenset({Role.LEAD}),
    Action.READ_RELEASES: frozenset({Role.LEAD, Role.RESEARCHER}),
    # Annotators are blind to verdicts, also counted over the project.
    Action.SEE_VERDICTS: frozenset({Role.LEAD, Role.RESEARCHER}),
}

REFUSED = {
    Action.VIEW: "members only",
    Action.ANNOTATE: "only annotators and leads take pairs",
    Action.MANAGE: "only the project's leads may do this",
    Action.READ_RELEASES: "releases are for leads and researchers",
    Action.SEE_VERDICTS: "annotators do not see verdicts",
}


def project_role(user, project: Project) -> Role | None:
    """The user's role in the project; admins act as leads everywhere."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.LEAD
    role = (
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    )
    return Role(role) if role else None


def role_may(role: Role | None, action: Action) -> bool:
    """The rule itself, for a role already known (no query)."""
    return role is not None and role in RULES[action]


def project_may(user, project: Project, action: Action) -> bool:
    return role_may(project_role(user, project), action)


def project_check(user, project: Project, action: Action) -> Role:
    """The user's role when it allows ``action``: Http404 for outsiders, PermissionDenied for
    members whose role does not (DRF answers both as 404/403 in the API's error shape)."""
    role = project_role(user, project)
    if role is None:
        raise Http404("no such project")
    if not role_may(role, action):
        raise PermissionDenied(REFUSED[action])
    return role


@cache
def _project_for_sql(vendor: str) -> str:
    # Hand-written (config.rows): the annotator's hot `next` asks it on every request.
    p, qn = rows.qn("p"), rows.qn
    return (
        f"SELECT {rows.columns(Project, 'p')}, ({member_role_sql(f'{p}.' + qn('id'))}) "
        f"FROM {rows.table(Project)} {p} WHERE {p}.{qn('slug')} = %s"
    )


def member_role_sql(project_id: str) -> str:
    """A scalar subquery for hand-written statements (config.rows): the role of the user given
    as its one parameter in the project whose id is the SQL expression ``project_id``; NULL
    without a membership. `member_check` reads it."""
    m, qn = rows.qn("m"), rows.qn
    return (
        f"SELECT {m}.{qn('role')} FROM {rows.table(Membership)} {m} "
        f"WHERE {m}.{qn('project_id')} = {project_id} AND {m}.{qn('user_id')} = %s LIMIT 1"
    )


def project_for(user, slug: str, action: Action) -> tuple[Project, Role]:
    """The project named ``slug`` and the user's role in it, if ``action`` is allowed: one
    query reads both (the annotator's hot `next` goes through here)."""
    row = rows.fetchone(_project_for_sql(connection.vendor), [user.pk or 0, slug])
    if row is None:
        raise Http404("no such project")
    return rows.from_row(Project, row), member_check(user, row[-1], action)


def member_check(user, member_role: str | None, action: Action) -> Role:
    """``project_check`` for a membership role already read with the project (None: no
    membership): the user's role when it allows ``action``, else Http404 or PermissionDenied."""
    if not user.is_authenticated:
        role = None
    elif user.is_superuser:
        role = Role.LEAD
    else:
        role = Role(member_role) if member_role else None
    if role is None:
        raise Http404("no such project")
    if not role_may(role, action):
        raise PermissionDenied(REFUSED[action])
    return role


def project_may_create(user) -> bool:
    """Staff, admins, and anyone who already leads a project may start a new one."""
    if not user.is_authenticated:
        return False
    if user.is_staff or user.is_superuser:
        return True
    return Membership.objects.filter(user=user, role=Role.LEAD).exists()


def pair_may_view(user, pair: PairLike, *, role: Role | None = None) -> bool:
    """Leads see every pair of their projects; an annotator only the pairs leased to them."""
    role = role if role is not None else project_role(user, pair.project)
    if role == Role.LEAD:
        return True
    if role == Role.ANNOTATOR:
        return pair.assignments.filter(annotator=user).exists()
    return False


def assignment_may_work(user, assignment: AssignmentLike) -> bool:
    """Only its annotator works on an assignment (leads neither see nor change it)."""
    return user.is_authenticated and assignment.annotator_id == user.pk


def release_may_read(role: Role | None, *, ready: bool) -> bool:
    """Leads read every release of their projects; researchers the ready ones; annotators none
    (a release holds the agreed answers they must not see)."""
    if role_may(role, Action.MANAGE):
        return True
    return ready and role_may(role, Action.READ_RELEASES)


def job_may_view(user, job: JobLike) -> bool:
    """A project's jobs are its current leads', and the creator's while still a member (a
    researcher polls the evaluation they started); a job without a project is its creator's
    (or an admin's)."""
    if job.project is None:
        return user.is_authenticated and (job.created_by_id == user.pk or user.is_superuser)
    role = project_role(user, job.project)
    return role_may(role, Action.MANAGE) or (role is not None and job.created_by_id == user.pk)
