"""Who may do what on a project: the one place that pages and the API ask.

A user without a role in the project gets "not found" (a project's existence is private to its
members); a member whose role does not allow the action gets "forbidden". Admins act as leads
everywhere. Pair, assignment, release and job rules derive from the project's.

Pairs and jobs live in the apps above; the rules here know them only by what they
ask of them (the protocols below), so every decision stays in this one module.
"""

from __future__ import annotations

from typing import Any, Protocol

from django.core.exceptions import PermissionDenied
from django.db import connection, models
from django.http import Http404

from accounts.users import AnyUser
from config import rows
from projects import sql
from projects.models import Membership, Project, Role


class PairLike(Protocol):
    """annotator.models.Pair, as far as access asks."""

    @property
    def project(self) -> Project: ...

    @property
    def assignments(self) -> Any: ...  # its leases (Assignment.pair's related name)


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


def role_of(user: AnyUser, member_role: str | None = None) -> Role | None:
    """The user's role in a project where their membership's role is ``member_role`` (None: no
    membership). Admins act as leads in every project, member or not: this is the one place
    that rule is written, so ``role_of(user)`` is the role a user holds everywhere (None for
    all but admins)."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.LEAD
    return Role(member_role) if member_role else None


def project_role(user: AnyUser, project: Project) -> Role | None:
    """The user's role in the project (one query, none for admins and anonymous callers)."""
    everywhere = role_of(user)
    if everywhere is not None or not user.is_authenticated:
        return everywhere
    member = Membership.objects.filter(project=project, user=user)
    return role_of(user, member.values_list("role", flat=True).first())


def role_may(role: Role | None, action: Action) -> bool:
    """The rule itself, for a role already known (no query)."""
    return role is not None and role in RULES[action]


def role_check(role: Role | None, action: Action) -> Role:
    """The role when it allows ``action``: Http404 for no role (an outsider: a project's
    existence is private), PermissionDenied for a member whose role does not (DRF answers both
    as 404/403 in the API's error shape)."""
    if role is None:
        raise Http404("no such project")
    if not role_may(role, action):
        raise PermissionDenied(REFUSED[action])
    return role


def project_check(user: AnyUser, project: Project, action: Action) -> Role:
    """The user's role in the project when it allows ``action`` (else as `role_check`)."""
    return role_check(project_role(user, project), action)


def project_for(user: AnyUser, slug: str, action: Action) -> tuple[Project, Role]:
    """The project named ``slug`` and the user's role in it, if ``action`` is allowed (else as
    `role_check`): one hand-written statement reads both (projects/sql.py)."""
    row = rows.fetchone(sql.project_with_role(connection.vendor), [user.pk or 0, slug])
    if row is None:
        raise Http404("no such project")
    return rows.from_row(Project, row), role_check(role_of(user, row[-1]), action)


def project_may_create(user: AnyUser) -> bool:
    """Staff, admins, and anyone who already leads a project may start a new one."""
    if not user.is_authenticated:
        return False
    if user.is_staff or role_of(user) is not None:
        return True
    return Membership.objects.filter(user=user, role=Role.LEAD).exists()


def pair_may_view(user: AnyUser, pair: PairLike, *, role: Role | None = None) -> bool:
    """Leads see every pair of their projects; an annotator only the pairs leased to them."""
    role = role if role is not None else project_role(user, pair.project)
    if role == Role.LEAD:
        return True
    if role == Role.ANNOTATOR:
        return pair.assignments.filter(annotator=user).exists()
    return False


def release_may_read(role: Role | None, *, ready: bool) -> bool:
    """Leads read every release of their projects; researchers the ready ones; annotators none
    (a release holds the agreed answers they must not see)."""
    if role_may(role, Action.MANAGE):
        return True
    return ready and role_may(role, Action.READ_RELEASES)


def job_may_view(user: AnyUser, job: JobLike) -> bool:
    """A project's jobs are its current leads', and the creator's while still a member (a
    researcher polls the evaluation they started); a job without a project is its creator's
    (or an admin's: a lead everywhere)."""
    if job.project is None:
        mine = user.is_authenticated and job.created_by_id == user.pk
        return mine or role_may(role_of(user), Action.MANAGE)
    role = project_role(user, job.project)
    return role_may(role, Action.MANAGE) or (role is not None and job.created_by_id == user.pk)
