"""The leads' pairs browser: filtered pairs, their difficulty and a pair's whole history."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import (
    Case,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import RawSQL

from annotator.models import Annotation, Assignment, Change, Pair, PairStatus, Prediction
from annotator.selectors import project_pairs
from config import rows
from pairdiff.geometry import Difficulty
from projects.models import Project
from review.figures import figures_of
from review.models import Agreement, PairDifficulty
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


# The browser's orders on a page-numbered (small) project; console.pair_pages reads the same
# orders by key on a large one. By status: in the workflow's order, then oldest first.
_STATUS_RANK = Case(
    *(When(status=value, then=Value(rank)) for rank, value in enumerate(PairStatus.values)),
    output_field=IntegerField(),
)
SORT_ORDERS: dict[str, tuple] = {
    "oldest": ("id",),
    "newest": ("-id",),
    "status": (_STATUS_RANK, "id"),
}

# Pairs with ids in [low, high] only (high None: no bound): each set a filter joins is read in
# that range too, so a page of a large project reads a slice of each set (console.pair_pages).
Window = tuple[int, int | None]


def pairs_browse(
    project: Project, filters: PairFilters, *, window: Window | None = None
) -> QuerySet[Pair]:
    """The project's pairs under the filters. Category matches the import hint or any change
    of any annotation; flag matches a prediction's screening flags; annotator matches anyone
    who leased the pair. Difficulty is computed in Python from the standing answer (see
    `pair_difficulties`), so that filter reads every accepted pair of the project."""
    pairs = project_pairs(project, status=filters.status)
    if window is not None:
        pairs = pairs.filter(**_in_window("pk", window))
    if filters.category:
        pairs = pairs.filter(_of_category(project, filters.category, window))
    if filters.flag:
        # Matches the JSON text of the list, as flags hold plain words; works on SQLite and
        # PostgreSQL alike (JSON containment is not available on SQLite).
        flagged = Prediction.objects.filter(
            pair__project=project, flags__icontains=json.dumps(filters.flag)
        )
        if window is not None:
            flagged = flagged.filter(**_in_window("pair_id", window))
        pairs = pairs.filter(pk__in=flagged.values("pair_id"))
    if filters.annotator:
        user_id = (
            get_user_model()
            .objects.filter(username=filters.annotator)
            .values_list("pk", flat=True)
            .first()
        )
        # The person's leases (index on annotator), not a probe per pair of the project.
        leased = Assignment.objects.filter(annotator_id=user_id)
        if window is not None:
            leased = leased.filter(**_in_window("pair_id", window))
        pairs = pairs.filter(pk__in=leased.values("pair_id"))
    if filters.q:
        pairs = pairs.filter(text_match(project, filters.q, window))
    if filters.difficulty:
        pairs = _of_difficulty(project, pairs, filters.difficulty, window)
    return pairs


def filters_join_sets(filters: PairFilters) -> bool:
    """Whether a filter other than status joins a set of pairs (the rest read pair rows)."""
    return bool(filters.category or filters.flag or filters.annotator or filters.q)


def _in_window(field: str, window: Window) -> dict:
    low, high = window
    return {f"{field}__gte": low} | ({f"{field}__lte": high} if high is not None else {})


def _window_sql(column: str, window: Window | None) -> tuple[str, list]:
    """`` AND column BETWEEN …`` for the raw UNIONs, and its parameters."""
    if window is None:
        return "", []
    low, high = window
    if high is None:
        return f" AND {column} >= %s", [low]
    return f" AND {column} BETWEEN %s AND %s", [low, high]


def _of_category(project: Project, category: str, window: Window | None = None) -> Q:
    """The import hint or any change of any annotation says ``category``: one UNION on
    PostgreSQL (an OR of the two would probe the changes once per pair)."""
    if connection.vendor != "postgresql":
        by_change = Change.objects.filter(annotation__pair=OuterRef("pk"), category=category)
        return Q(category_hint=category) | Q(Exists(by_change))
    pair = rows.table(Pair)
    in_pairs, pair_params = _window_sql("id", window)
    changed, change_params = _by_change("c.category = %s", [category], window)
    sql = (
        f"SELECT id FROM {pair} WHERE project_id = %s AND category_hint = %s{in_pairs} "
        f"UNION {changed}"
    )
    params = [project.pk, category, *pair_params, *change_params]
    return Q(pk__in=RawSQL(sql, params))


def _by_change(condition: str, params: list, window: Window | None) -> tuple[str, list]:
    """The pairs with an annotation with a change (alias ``c``) meeting ``condition``, for a
    UNION. In a window, from the window's annotations with an EXISTS per annotation: PostgreSQL
    then merges along the window's slice of index change_category, or probes the covering
    index change_annotation_labels (migration 0021), where a join would read the changes of
    the whole table (60-100 ms a window at 1M pairs, against 3)."""
    change, annotation = rows.table(Change), rows.table(Annotation)
    if window is None:
        sql = (
            f"SELECT a.pair_id FROM {change} c JOIN {annotation} a ON a.id = c.annotation_id "
            f"WHERE {condition}"
        )
        return sql, list(params)
    in_annotations, annotation_params = _window_sql("a.pair_id", window)
    sql = (
        f"SELECT a.pair_id FROM {annotation} a WHERE TRUE{in_annotations} AND EXISTS "
        f"(SELECT 1 FROM {change} c WHERE c.annotation_id = a.id AND {condition})"
    )
    return sql, [*annotation_params, *params]


def _of_difficulty(
    project: Project, pairs: QuerySet[Pair], level: str, window: Window | None = None
) -> QuerySet[Pair]:
    """On a large project, the levels the periodic job stored (review.figures); else computed
    now from every accepted pair's standing answer."""
    if figures_of(project) is not None:
        stored = PairDifficulty.objects.filter(project=project, level=level)
        if window is not None:
            stored = stored.filter(**_in_window("pair_id", window))
        return pairs.filter(pk__in=stored.values("pair_id"))
    accepted = pairs.filter(status=PairStatus.ACCEPTED)
    levels = pair_difficulties(list(accepted))
    return pairs.filter(pk__in=[pk for pk, d in levels.items() if d == level])


def text_match(project: Project, text: str, window: Window | None = None) -> Q:
    """A pair whose id is `text`, or whose external id, instruction or any annotated entity
    label contains it (case-insensitive). On PostgreSQL one UNION of four LIKE scans, each
    served by a trigram index (migration pair_text_trigram); elsewhere the same rule as a Q."""
    if connection.vendor == "postgresql":
        return _text_match_postgres(project, text, window)
    named = Change.objects.filter(annotation__pair=OuterRef("pk")).filter(
        Q(entity_a__icontains=text) | Q(entity_b__icontains=text)
    )
    # Q | Exists is a Q at run time; the stubs say Combinable.
    match: Q = Q(external_id__icontains=text) | Q(instruction__icontains=text) | Exists(named)  # type: ignore[assignment]
    if text.isdigit():
        match |= Q(pk=int(text))
    return match


def _text_match_postgres(project: Project, text: str, window: Window | None) -> Q:
    pair = rows.table(Pair)
    like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    in_pairs, pair_params = _window_sql("id", window)
    by_label, label_params = _by_change(
        "(UPPER(c.entity_a) LIKE UPPER(%s) OR UPPER(c.entity_b) LIKE UPPER(%s))",
        [like, like],
        window,
    )
    sql = (
        f"SELECT id FROM {pair} WHERE project_id = %s AND UPPER(external_id) LIKE UPPER(%s)"
        f"{in_pairs} UNION SELECT id FROM {pair} WHERE project_id = %s "
        f"AND UPPER(instruction) LIKE UPPER(%s){in_pairs} UNION {by_label}"
    )
    params: list = [project.pk, like, *pair_params, project.pk, like, *pair_params]
    params += label_params
    if text.isdigit() and len(text) < 19:  # the id too, inside the UNION: an OR outside it
        sql += " UNION SELECT %s"  # would make PostgreSQL run the UNION once per pair
        params.append(int(text))
    return Q(pk__in=RawSQL(sql, params))


def pairs_filter_choices(project: Project) -> dict[str, list]:
    """What the filters offer: categories, screening flags seen, annotators who leased."""
    flag_lists = _flag_lists(project)
    # Per user one probe of their leases (index on annotator): the cost follows the number of
    # people, not of pairs.
    leased = Assignment.objects.filter(annotator=OuterRef("pk"), pair__project=project)
    usernames = (
        get_user_model()
        .objects.filter(Exists(leased))
        .order_by("username")
        .values_list("username", flat=True)
    )
    return {
        "categories": [(c["slug"], c["name"]) for c in project.categories],
        "difficulties": [(d.value, d.value.capitalize()) for d in Difficulty],
        "flags": sorted({str(f) for flags in flag_lists for f in flags}),
        "annotators": list(usernames),
    }


def _flag_lists(project: Project) -> list:
    """The distinct screening flag lists of the project's predictions. On PostgreSQL the few
    distinct lists of all predictions first, then one probe each for a prediction of this
    project (not a join of every flagged prediction to its pair: 150 ms at 1M pairs)."""
    if connection.vendor != "postgresql":
        return list(
            Prediction.objects.filter(pair__project=project)
            .exclude(flags=[])
            .values_list("flags", flat=True)
            .distinct()
        )
    prediction, pair = rows.table(Prediction), rows.table(Pair)
    sql = (
        f"SELECT f.flags FROM (SELECT DISTINCT flags FROM {prediction} "
        f"WHERE flags <> '[]'::jsonb) f WHERE EXISTS (SELECT 1 FROM {prediction} p "
        f"JOIN {pair} q ON q.id = p.pair_id WHERE p.flags = f.flags AND q.project_id = %s)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [project.pk])
        return [json.loads(f) if isinstance(f, str) else f for (f,) in cursor.fetchall()]


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
