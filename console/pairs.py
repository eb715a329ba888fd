"""The leads' pairs browser: filtered pairs, their difficulty and a pair's whole history."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from django.db.models import (
    Exists,
    OuterRef,
    Q,
    QuerySet,
)

from annotator.models import Annotation, Assignment, Change, Pair, PairStatus, Prediction
from annotator.selectors import project_pairs
from pairdiff.geometry import Difficulty
from projects.models import Project
from review.models import Agreement
from review.standing import standing_rows


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
    # Q | Exists is a Q at run time; the stubs say Combinable.
    match: Q = Q(external_id__icontains=text) | Q(instruction__icontains=text) | Exists(named)  # type: ignore[assignment]
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
    # The attributes set here are for the template only (not model fields): hence the ignores.
    for number, annotation in enumerate(annotations, start=1):
        annotation.number = number  # type: ignore[attr-defined]
        annotation.agreement_slot = slots.get(annotation.pk)  # type: ignore[attr-defined]
        for change in annotation.changes.all():
            change.category_name = pair.project.category_name(change.category)  # type: ignore[attr-defined]
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
        {"x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1, "number": annotation.number}  # type: ignore[attr-defined]
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
    elif i is not None:
        label = f"only #1.{i + 1}"
    else:
        assert j is not None  # a matched change has an index on one side at least
        label = f"only #2.{j + 1}"
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
