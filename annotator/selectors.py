"""Reads: the counts and lists pages show (who may do what: projects.access)."""

from __future__ import annotations

from typing import Any

from django.db.models import (
    Case,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.users import User
from annotator.models import (
    OPEN_STATUSES,
    Annotation,
    Assignment,
    AssignmentState,
    Pair,
    PairEvent,
    PairEventKind,
    PairStatus,
)
from jobs.models import Job
from pairdiff.agreement import annotations_compared
from projects import access
from projects.models import Membership, Project, Role


def projects_for_user(user: User) -> QuerySet[Project]:
    """Projects the user belongs to (all for admins: a role everywhere), by name; their pairs per
    status are in annotator.pair_counts (stored on large projects)."""
    projects = Project.objects.all()
    if access.role_of(user) is None:
        projects = projects.filter(memberships__user=user)
    return projects.order_by("name")


def roles_by_project(user: User) -> dict[int, Role]:
    everywhere = access.role_of(user)  # an admin's
    if everywhere is not None:
        return {pk: everywhere for pk in Project.objects.values_list("pk", flat=True)}
    rows = Membership.objects.filter(user=user).values_list("project_id", "role")
    return {project_id: Role(role) for project_id, role in rows}


def project_pairs(project: Project, *, status: str = "") -> QuerySet[Pair]:
    pairs = project.pairs.order_by("id")
    if status:
        pairs = pairs.filter(status=status)
    return pairs


def annotator_progress(user: User, project: Project, *, now=None) -> dict[str, int]:
    """What an annotator's home shows: submitted today and in all, and pairs left for them."""
    now = now or timezone.now()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    mine = Assignment.objects.filter(
        annotator=user, pair__project=project, state=AssignmentState.SUBMITTED
    )
    left = queue_candidates(project, user, gold=False).count()
    if project.gold_rate > 0:
        left += queue_candidates(project, user, gold=True).count()
    return {
        "today": mine.filter(submitted_at__gte=midnight).count(),
        "total": mine.count(),
        "left": left,
    }


def annotation_editable(pair: Pair) -> bool:
    """Editable while the cross-check has not started: the pair still in annotation and not
    everyone it waits for has submitted. Gold pairs are scored at submit, so never."""
    waits_for = annotations_compared(pair.project.overlap)
    return (
        not pair.is_gold
        and pair.status == PairStatus.IN_ANNOTATION
        and pair.n_submitted < waits_for
    )


def annotator_submitted(user, project: Project, *, limit: int = 30) -> list[Assignment]:
    """The annotator's latest submitted pairs in the project, each marked `editable`."""
    submitted = (
        Assignment.objects.filter(
            annotator=user, pair__project=project, state=AssignmentState.SUBMITTED
        )
        .select_related("pair__project")
        .order_by("-submitted_at")[:limit]
    )
    out = list(submitted)
    edited = pairs_edited_by(user, [a.pair_id for a in out])
    for assignment in out:
        # Attributes for the template only, not model fields.
        assignment.editable = annotation_editable(assignment.pair)  # type: ignore[attr-defined]
        assignment.edited = assignment.pair_id in edited  # type: ignore[attr-defined]
    return out


def pairs_edited_by(user: User | int, pair_ids: list[int]) -> set[int]:
    """Those of the pairs whose submitted answer the user (or the user's id) took back to edit
    at least once."""
    return set(
        PairEvent.objects.filter(
            pair_id__in=pair_ids, actor=user, kind=PairEventKind.REOPENED_TO_EDIT
        ).values_list("pair_id", flat=True)
    )


def queue_candidates(project: Project, user: User, *, gold: bool) -> QuerySet[Pair]:
    """Pairs the user could be given next, in order. Every annotator answers each gold pair."""
    return pairs_queue(project_id=project.pk, user_id=user.pk, overlap=project.overlap, gold=gold)


def pairs_queue(*, project_id: Any, user_id: Any, overlap: Any, gold: bool) -> QuerySet[Pair]:
    """`queue_candidates` over the project's id, the user's and the overlap: values, or
    `config.rows.Slot`s where the lease compiles it once (annotator/sql.py)."""
    own = Assignment.objects.filter(pair=OuterRef("pk"), annotator_id=user_id).exclude(
        state=AssignmentState.EXPIRED
    )
    pairs = Pair.objects.filter(project_id=project_id, status__in=OPEN_STATUSES, is_gold=gold)
    if not gold:
        pairs = pairs.filter(n_taken__lt=overlap)
    # Started pairs first (so pairs get finished), then the lease order's priority
    # (annotator/priorities.py): one partial index (pair_queue) serves every order.
    return pairs.filter(~Exists(own)).order_by("-n_taken", "-queue_priority", "id")


# --- leads' pages ----------------------------------------------------------------------------


def project_members(project: Project, *, submitted: dict[str, int] | None = None) -> list:
    """Members, leads first, with the number of annotations each submitted in the project
    (``submitted``: those numbers by user id as text, counted already, e.g. by the periodic
    figures of a large project)."""
    members = _members(project, counted=submitted is None)
    if submitted is not None:
        for member in members:
            member.n_submitted = submitted.get(str(member.user_id), 0)
    return members


def _members(project: Project, *, counted: bool) -> list:
    submitted = (
        Annotation.objects.filter(pair__project=project, annotator=OuterRef("user"))
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    number = Coalesce(Subquery(submitted), 0) if counted else Value(0)
    ranks = (Role.LEAD, Role.ANNOTATOR, Role.RESEARCHER)
    order = Case(
        *(When(role=role, then=rank) for rank, role in enumerate(ranks)),
        output_field=IntegerField(),
    )
    return list(
        project.memberships.select_related("user")
        .annotate(n_submitted=number, rank=order)
        .order_by("rank", "user__username")
    )


def project_jobs(project: Project) -> QuerySet[Job]:
    """Every background job of the project, newest first."""
    return project.jobs.select_related("created_by").order_by("-created_at", "-id")
