"""Reads: who may see what, and the counts pages show."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from django.db.models import (
    Case,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotator.models import (
    OPEN_STATUSES,
    Annotation,
    Assignment,
    AssignmentState,
    Change,
    Job,
    Membership,
    Pair,
    PairStatus,
    Prediction,
    Project,
    Role,
)
from pairdiff.geometry import Difficulty
from review.models import Agreement
from review.standing import standing_rows


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
        .select_related("pair")  # the lease's body shows the pair
        .order_by("leased_at")
        .first()
    )


def annotation_editable(pair: Pair) -> bool:
    """Editable while the cross-check has not started: the pair still in annotation and not
    everyone it waits for has submitted. Gold pairs are scored at submit, so never."""
    waits_for = min(pair.project.overlap, 2)
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
    for assignment in out:
        assignment.editable = annotation_editable(assignment.pair)
    return out


def queue_candidates(project: Project, user, *, gold: bool) -> QuerySet[Pair]:
    """Pairs the user could be given next, in order. Every annotator answers each gold pair."""
    own = Assignment.objects.filter(pair=OuterRef("pk"), annotator=user).exclude(
        state=AssignmentState.EXPIRED
    )
    pairs = Pair.objects.filter(project=project, status__in=OPEN_STATUSES, is_gold=gold)
    if not gold:
        pairs = pairs.filter(n_taken__lt=project.overlap)
    # Started pairs first (so pairs get finished), then the lease order's priority
    # (annotator/priorities.py): one partial index (pair_queue) serves every order.
    return pairs.filter(~Exists(own)).order_by("-n_taken", "-queue_priority", "id")


# --- leads' pages ----------------------------------------------------------------------------


def project_may_create(user) -> bool:
    """Staff, admins, and anyone who already leads a project may start a new one."""
    if not user.is_authenticated:
        return False
    if user.is_staff or user.is_superuser:
        return True
    return Membership.objects.filter(user=user, role=Role.LEAD).exists()


def project_members(project: Project) -> QuerySet[Membership]:
    """Members, leads first, with the number of annotations each submitted in the project."""
    submitted = (
        Annotation.objects.filter(pair__project=project, annotator=OuterRef("user"))
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    ranks = (Role.LEAD, Role.ANNOTATOR, Role.RESEARCHER)
    order = Case(
        *(When(role=role, then=rank) for rank, role in enumerate(ranks)),
        output_field=IntegerField(),
    )
    return (
        project.memberships.select_related("user")
        .annotate(n_submitted=Coalesce(Subquery(submitted), 0), rank=order)
        .order_by("rank", "user__username")
    )


def lead_count(project: Project) -> int:
    return project.memberships.filter(role=Role.LEAD).count()


def project_jobs(project: Project) -> QuerySet[Job]:
    """Every background job of the project, newest first."""
    return project.jobs.select_related("created_by").order_by("-created_at", "-id")


def job_may_view(user, job: Job) -> bool:
    """A project's jobs are its current leads', and the creator's while still a member (a
    researcher polls the evaluation they started); a job without a project is its creator's."""
    if job.project is None:
        return user.is_authenticated and (job.created_by_id == user.pk or user.is_superuser)
    role = project_role(user, job.project)
    return role == Role.LEAD or (role is not None and job.created_by_id == user.pk)


@dataclass(frozen=True)
class PairFilters:
    """The pairs browser's filters; empty strings mean "any"."""

    status: str = ""
    category: str = ""
    difficulty: str = ""
    flag: str = ""
    annotator: str = ""
    q: str = ""  # text: a pair id, words of the external id or instruction, or an entity label

    def query(self) -> str:
        """The filters as a query string, to keep them across pages."""
        return urlencode({k: v for k, v in asdict(self).items() if v})


def pairs_browse(project: Project, filters: PairFilters) -> QuerySet[Pair]:
    """The project's pairs under the filters. Category matches the import hint or any change
    of any annotation; flag matches a prediction's screening flags; annotator matches anyone
    who leased the pair. Difficulty is computed in Python from the standing answer (see
    `pair_difficulties`), so that filter reads every accepted pair of the project."""
    pairs = project_pairs(project, status=filters.status)
    if filters.category:
        by_change = Change.objects.filter(
            annotation__pair=OuterRef("pk"), category=filters.category
        )
        pairs = pairs.filter(Q(category_hint=filters.category) | Exists(by_change))
    if filters.flag:
        # Matches the JSON text of the list, as flags hold plain words; works on SQLite and
        # PostgreSQL alike (JSON containment is not available on SQLite).
        flagged = Prediction.objects.filter(
            pair=OuterRef("pk"), flags__icontains=json.dumps(filters.flag)
        )
        pairs = pairs.filter(Exists(flagged))
    if filters.annotator:
        leased = Assignment.objects.filter(
            pair=OuterRef("pk"), annotator__username=filters.annotator
        )
        pairs = pairs.filter(Exists(leased))
    if filters.q:
        pairs = pairs.filter(_text_match(filters.q))
    if filters.difficulty:
        accepted = pairs.filter(status=PairStatus.ACCEPTED)
        levels = pair_difficulties(list(accepted))
        pairs = pairs.filter(pk__in=[pk for pk, d in levels.items() if d == filters.difficulty])
    return pairs


def _text_match(text: str) -> Q:
    """A pair whose id is `text`, or whose external id, instruction or any annotated entity
    label contains it (case-insensitive)."""
    named = Change.objects.filter(annotation__pair=OuterRef("pk")).filter(
        Q(entity_a__icontains=text) | Q(entity_b__icontains=text)
    )
    match = Q(external_id__icontains=text) | Q(instruction__icontains=text) | Exists(named)
    if text.isdigit():
        match |= Q(pk=int(text))
    return match


def pairs_filter_choices(project: Project) -> dict[str, list]:
    """What the filters offer: categories, screening flags seen, annotators who leased."""
    flag_lists = (
        Prediction.objects.filter(pair__project=project)
        .exclude(flags=[])
        .values_list("flags", flat=True)
        .distinct()
    )
    usernames = (
        Assignment.objects.filter(pair__project=project)
        .values_list("annotator__username", flat=True)
        .distinct()
        .order_by("annotator__username")
    )
    return {
        "categories": [(c["slug"], c["name"]) for c in project.categories],
        "difficulties": [(d.value, d.value.capitalize()) for d in Difficulty],
        "flags": sorted({str(f) for flags in flag_lists for f in flags}),
        "annotators": list(usernames),
    }


def pair_difficulties(pairs: list[Pair]) -> dict[int, Difficulty]:
    """MinCU difficulty of the accepted ones of ``pairs`` from their standing answer (see
    review.standing). Pairs without a measurable box get none."""
    accepted = [p.pk for p in pairs if p.status == PairStatus.ACCEPTED]
    rows = standing_rows(Pair.objects.filter(pk__in=accepted))
    return {row.pair_id: row.difficulty for row in rows if row.difficulty is not None}


def pair_history(pair: Pair) -> dict:
    """Everything that happened to a pair, for its leads: leases, annotations with their
    changes and gold scores, the agreement verdict, lead decisions and the event log."""
    annotations = list(
        pair.annotations.select_related("annotator", "gold_score")
        .prefetch_related("changes")
        .order_by("created_at", "id")
    )
    agreement = Agreement.objects.filter(pair=pair).first()
    slots = {agreement.annotation_1_id: 1, agreement.annotation_2_id: 2} if agreement else {}
    for number, annotation in enumerate(annotations, start=1):
        annotation.number = number
        annotation.agreement_slot = slots.get(annotation.pk)
        for change in annotation.changes.all():
            change.category_name = pair.project.category_name(change.category)
    return {
        "marks": {side: _marks(annotations, side) for side in ("a", "b")},
        "assignments": pair.assignments.select_related("annotator").order_by("leased_at", "id"),
        "annotations": annotations,
        "agreement": agreement,
        "agreement_rows": [_agreement_row(c) for c in agreement.changes] if agreement else [],
        "resolutions": pair.resolutions.select_related("lead").order_by("created_at", "id"),
        "events": pair.events.select_related("actor").order_by("at", "id"),
    }


def _marks(annotations: list[Annotation], side: str) -> list[dict]:
    """Every annotation's boxes on one side, numbered by annotation, for the image overlay."""
    return [
        {"x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1, "number": annotation.number}
        | {"label": f"{annotation.annotator}: {getattr(change, f'entity_{side}')}"}
        for annotation in annotations
        for change in annotation.changes.all()
        for x1, y1, x2, y2 in getattr(change, f"boxes_{side}")
    ]


def _agreement_row(change: dict) -> dict:
    """One matched change of an Agreement, as a table row: which fields and sides agree."""
    i, j = change.get("index_1"), change.get("index_2")
    if i is not None and j is not None:
        label = f"#1.{i + 1} ↔ #2.{j + 1}"
    else:
        label = f"only #1.{i + 1}" if i is not None else f"only #2.{j + 1}"
    return {
        "label": label,
        "category": change.get("category_agrees", False),
        "entity_a": change.get("entity_a_agrees", False),
        "entity_b": change.get("entity_b_agrees", False),
        "side_a": _side_text(change.get("side_a") or {}),
        "side_b": _side_text(change.get("side_b") or {}),
        "side_a_ok": (change.get("side_a") or {}).get("agrees", False),
        "side_b_ok": (change.get("side_b") or {}).get("agrees", False),
        "similarity": change.get("description_similarity"),
        "agrees": change.get("agrees", False),
    }


def _side_text(side: dict) -> str:
    """ "IoU 0.83, 0.71 + 1 unmatched", or "both absent" / "absent in one"."""
    matched = [f"{m[2]:.2f}" for m in side.get("matched", [])]
    unmatched = len(side.get("unmatched_1", [])) + len(side.get("unmatched_2", []))
    if not matched and not unmatched:
        return "both absent"
    if not side.get("null_consistent", True):
        return "absent in one"
    text = f"IoU {', '.join(matched)}" if matched else "no match"
    return f"{text} + {unmatched} unmatched" if unmatched else text
