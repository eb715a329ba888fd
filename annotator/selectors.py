"""Reads: who may see what, and the counts pages show."""

from __future__ import annotations

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from annotator.models import (
    OPEN_STATUSES,
    Assignment,
    AssignmentState,
    Membership,
    Pair,
    PairStatus,
    Project,
    Role,
)


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


def projects_for_user(user) -> QuerySet[Project]:
    """Projects the user belongs to (all for admins), with pair counts per status."""
    projects = Project.objects.all()
    if not user.is_superuser:
        projects = projects.filter(memberships__user=user)
    counts = {
        f"n_{status}": Count("pairs", filter=Q(pairs__status=status))
        for status in PairStatus.values
    }
    return projects.annotate(n_pairs=Count("pairs"), **counts).order_by("name")


def roles_by_project(user) -> dict[int, Role]:
    if user.is_superuser:
        return {pk: Role.LEAD for pk in Project.objects.values_list("pk", flat=True)}
    rows = Membership.objects.filter(user=user).values_list("project_id", "role")
    return {project_id: Role(role) for project_id, role in rows}


def pair_counts(project: Project) -> dict[str, int]:
    rows = project.pairs.values("status").annotate(n=Count("id"))
    counts = dict.fromkeys(PairStatus.values, 0)
    counts.update({row["status"]: row["n"] for row in rows})
    return counts


def pair_may_view(user, pair: Pair) -> bool:
    """Leads see every pair of their projects; an annotator only the pairs leased to them."""
    role = project_role(user, pair.project)
    if role == Role.LEAD:
        return True
    if role == Role.ANNOTATOR:
        return Assignment.objects.filter(pair=pair, annotator=user).exists()
    return False


def project_pairs(project: Project, *, status: str = "") -> QuerySet[Pair]:
    pairs = project.pairs.order_by("id")
    if status:
        pairs = pairs.filter(status=status)
    return pairs


def annotator_progress(user, project: Project, *, now=None) -> dict[str, int]:
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


def assignment_live(user, project: Project, *, now=None) -> Assignment | None:
    """The annotator's open lease in the project, to resume."""
    return (
        Assignment.objects.filter(
            annotator=user,
            pair__project=project,
            state=AssignmentState.LEASED,
            expires_at__gt=now or timezone.now(),
        )
        .order_by("leased_at")
        .first()
    )


def queue_candidates(project: Project, user, *, gold: bool) -> QuerySet[Pair]:
    """Pairs the user could be given next, in order. Every annotator answers each gold pair."""
    own = Assignment.objects.filter(pair=OuterRef("pk"), annotator=user).exclude(
        state=AssignmentState.EXPIRED
    )
    pairs = Pair.objects.filter(project=project, status__in=OPEN_STATUSES, is_gold=gold)
    if not gold:
        pairs = pairs.filter(n_taken__lt=project.overlap)
    return pairs.filter(~Exists(own)).order_by("-n_taken", "id")
