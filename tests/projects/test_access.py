"""projects.access, the one answer to "may this user do X here", as a table."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotator.models import Assignment
from jobs.models import Job, JobKind
from projects import access
from projects.access import Action
from projects.members import user_ensure
from projects.models import Role
from tests.conftest import member
from tests.factories import make_pair

A, L, R = Role.ANNOTATOR, Role.LEAD, Role.RESEARCHER
ADMIN, OUTSIDER, ANONYMOUS = "admin", "outsider", "anonymous"

# who → the actions allowed; every other action is refused.
ALLOWED = {
    A: {Action.VIEW, Action.ANNOTATE},
    L: {Action.VIEW, Action.ANNOTATE, Action.MANAGE, Action.READ_RELEASES, Action.SEE_VERDICTS},
    R: {Action.VIEW, Action.READ_RELEASES, Action.SEE_VERDICTS},
    ADMIN: {Action.VIEW, Action.ANNOTATE, Action.MANAGE, Action.READ_RELEASES, Action.SEE_VERDICTS},
    OUTSIDER: set(),
    ANONYMOUS: set(),
}


def _user(project, who):
    if who == ANONYMOUS:
        return AnonymousUser()
    if who == ADMIN:
        user = user_ensure(username="root")
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
        return user
    if who == OUTSIDER:
        return user_ensure(username="nobody")
    return member(project, f"the-{who}", who)


@pytest.mark.parametrize("who", list(ALLOWED))
@pytest.mark.parametrize("action", list(Action))
def test_project_rules(project, who, action):
    user = _user(project, who)
    allowed = action in ALLOWED[who]
    assert access.role_may(access.project_role(user, project), action) is allowed
    if allowed:
        assert access.project_for(user, project.slug, action) == (project, user_role(who))
    elif who in (OUTSIDER, ANONYMOUS):
        with pytest.raises(Http404):  # outsiders do not learn that the project exists
            access.project_check(user, project, action)
    else:
        with pytest.raises(PermissionDenied, match=access.REFUSED[action]):
            access.project_check(user, project, action)


def user_role(who):
    return Role.LEAD if who == ADMIN else who


@pytest.mark.parametrize(
    ("who", "leased", "sees"),
    [(L, False, True), (A, True, True), (A, False, False), (R, False, False), (OUTSIDER, 0, 0)],
)
def test_pair_rule(project, who, leased, sees):
    pair = make_pair(project)
    user = _user(project, who)
    if leased:
        Assignment.objects.create(pair=pair, annotator=user, expires_at=pair.created_at)
    assert access.pair_may_view(user, pair) is bool(sees)


@pytest.mark.parametrize(
    ("role", "ready", "reads"),
    [
        (L, False, True),
        (L, True, True),
        (R, True, True),
        (R, False, False),
        (A, True, False),
        (None, True, False),
    ],
)
def test_release_rule(role, ready, reads):
    assert access.release_may_read(role, ready=ready) is reads


@pytest.mark.parametrize(
    ("who", "of_project", "own", "sees"),
    [
        (L, True, False, True),
        (A, True, False, False),
        (R, True, False, False),
        (R, True, True, True),  # the researcher polls the evaluation they started
        (A, True, True, True),
        (OUTSIDER, False, True, True),  # a job without a project is its creator's
        (OUTSIDER, False, False, False),
        (ADMIN, False, False, True),
    ],
)
def test_job_rule(project, who, of_project, own, sees):
    user = _user(project, who)
    creator = user if own else user_ensure(username="someone-else")
    job = Job.objects.create(
        kind=JobKind.IMPORT, project=project if of_project else None, created_by=creator
    )
    assert access.job_may_view(user, job) is sees


@pytest.mark.parametrize(
    ("who", "may"), [(A, False), (L, True), (R, False), (ADMIN, True), (ANONYMOUS, False)]
)
def test_who_may_start_a_project(project, who, may):
    assert access.project_may_create(_user(project, who)) is may
