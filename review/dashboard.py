"""Reads for the leads' quality dashboard; the page and the REST API show the same figures.

Cross-check figures (agreement rate, kappa, alpha, mean IoU, confusion grids, agreement per
annotator) come from the Agreement rows: the automatic verdict on the first two annotations
of a pair, before any lead decision. With overlap 1 a pair's single annotation is compared
with itself; such rows measure nobody's agreement and are left out of every figure here.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Avg, Count, F, Q

from annotator.assists import draft_acceptance
from annotator.models import Annotation, Change, Pair, PairStatus, Tier
from pairdiff.geometry import Difficulty
from pairdiff.metrics import confusion, krippendorff_alpha_ordinal, weighted_kappa
from projects.models import Membership, Project, Role
from review.models import Agreement, GoldScore, VerdictStatus
from review.standing import standing_rows

# Landis & Koch (1977): the lower bound (exclusive) of each reading of a kappa.
KAPPA_BANDS = (
    (0.8, "almost perfect"),
    (0.6, "substantial"),
    (0.4, "moderate"),
    (0.2, "fair"),
    (0.0, "slight"),
)


@dataclass(frozen=True)
class Cell:
    count: int
    shade: int  # 0..100: count relative to the grid's largest cell
    agree: bool  # on the diagonal: both annotators said the same


@dataclass(frozen=True)
class Grid:
    """Counts of (annotation 1, annotation 2) values; rows are the first-submitted annotation."""

    keys: list[str]
    labels: list[str]
    counts: list[list[int]]

    @property
    def total(self) -> int:
        return sum(map(sum, self.counts))

    @property
    def agreeing(self) -> int:
        return sum(self.counts[i][i] for i in range(len(self.keys)))

    @property
    def rows(self) -> list[tuple[str, list[Cell]]]:
        top = max((n for row in self.counts for n in row), default=0) or 1
        return [
            (label, [Cell(n, round(100 * n / top), i == j) for j, n in enumerate(row)])
            for i, (label, row) in enumerate(zip(self.labels, self.counts, strict=True))
        ]


@dataclass(frozen=True)
class AnnotatorQuality:
    user_id: int
    username: str
    pairs: int = 0  # annotations submitted in the project, gold pairs included
    timed: int = 0  # of those, how many carry a time (0 ms means "not measured")
    median_time_ms: float | None = None
    mean_time_ms: float | None = None
    cross_checked: int = 0
    accepted: int = 0
    gold_answered: int = 0
    gold_passed: int = 0
    gold_mean_score: float | None = None
    drafts_offered: int = 0  # changes submitted where a drafted description was offered
    drafts_kept: int = 0  # of those, how many kept a draft's sentence unchanged

    @property
    def draft_rate(self) -> float | None:
        return self.drafts_kept / self.drafts_offered if self.drafts_offered else None

    @property
    def agreement_rate(self) -> float | None:
        return self.accepted / self.cross_checked if self.cross_checked else None

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_passed / self.gold_answered if self.gold_answered else None


@dataclass(frozen=True)
class ProjectQuality:
    status_counts: dict[str, int]
    gold_pairs: int
    verdicts: dict[str, int]  # cross-checks per automatic verdict (accepted/disputed/rejected)
    reasons: dict[str, int]  # kind of reason → cross-checks not accepted that give it
    kappa: float | None
    alpha: float | None
    mean_iou: float | None
    tiers: Grid
    categories: Grid
    unmatched_changes: int  # changes one annotator listed and the other had no counterpart for
    annotators: list[AnnotatorQuality]
    difficulty: dict[str, int]  # easy/medium/hard → accepted pairs
    without_boxes: int  # accepted pairs whose standing answer has no box at all

    @property
    def slowest_ms(self) -> float:
        """The scale of the time sparks: the largest median or mean time of anyone."""
        times = [
            t for a in self.annotators for t in (a.median_time_ms, a.mean_time_ms) if t is not None
        ]
        return max(times, default=0.0)

    @property
    def kappa_band(self) -> str:
        """Landis & Koch's words for kappa, so the number reads without a table."""
        if self.kappa is None:
            return ""
        return next((w for bound, w in KAPPA_BANDS if self.kappa > bound), "chance or worse")

    @property
    def kappa_note(self) -> str:
        """Why κ reads as it does when it would mislead: undefined with a single tier given, or
        low only because one tier dominates (the kappa paradox: chance agreement is then high,
        so κ near 0 sits beside a high share of identical tiers). Empty when κ speaks plainly."""
        grid = self.tiers
        if not grid.total:
            return ""
        same = grid.agreeing / grid.total
        n = len(grid.keys)  # tiers given, in either annotation of a pair
        given = [sum(grid.counts[i]) + sum(grid.counts[j][i] for j in range(n)) for i in range(n)]
        top = max(range(len(given)), key=given.__getitem__)
        share = given[top] / (2 * grid.total)
        if self.kappa is None:
            return (
                f"Undefined: every tier given is “{grid.labels[top].lower()}”, so there is no "
                f"variation to agree on beyond chance. The tiers are identical on "
                f"{round(100 * same)}% of pairs."
            )
        if share >= 0.8 and self.kappa < 0.4 and same >= 0.7:
            return (
                f"Uninformative here: {round(100 * share)}% of tiers are "
                f"“{grid.labels[top].lower()}”, so agreement by chance is already high and κ "
                f"stays low although the tiers are identical on {round(100 * same)}% of pairs."
            )
        return ""

    @property
    def alpha_band(self) -> str:
        """Krippendorff's reading: ≥ 0.8 reliable, ≥ 0.667 tentative, below that unreliable."""
        if self.alpha is None:
            return ""
        if self.alpha >= 0.8:
            return "reliable"
        return "tentative" if self.alpha >= 0.667 else "unreliable"

    @property
    def total(self) -> int:
        return sum(self.status_counts.values())

    @property
    def cross_checked(self) -> int:
        return sum(self.verdicts.values())

    @property
    def accepted(self) -> int:
        return self.verdicts[VerdictStatus.ACCEPTED]

    @property
    def not_accepted(self) -> int:
        return self.cross_checked - self.accepted

    @property
    def agreement_rate(self) -> float | None:
        return self.accepted / self.cross_checked if self.cross_checked else None

    @property
    def verdict_rows(self) -> list[tuple[str, str, int]]:
        return [(v, label, self.verdicts[v]) for v, label in VerdictStatus.choices]

    @property
    def status_rows(self) -> list[tuple[str, str, int]]:
        return [(v, label, self.status_counts[v]) for v, label in PairStatus.choices]

    @property
    def reason_rows(self) -> list[tuple[str, int, int]]:
        """(kind, pairs, percent of the cross-checks not accepted)."""
        failed = self.not_accepted
        return [(k, n, round(100 * n / failed) if failed else 0) for k, n in self.reasons.items()]

    @property
    def accepted_measured(self) -> int:
        return sum(self.difficulty.values())

    @property
    def difficulty_rows(self) -> list[tuple[str, int, int]]:
        """(level, pairs, percent of the accepted pairs with a box)."""
        measured = self.accepted_measured
        return [
            (level, n, round(100 * n / measured) if measured else 0)
            for level, n in self.difficulty.items()
        ]


def project_quality(
    *, project: Project, status_counts: tuple[dict[str, int], int] | None = None
) -> ProjectQuality:
    """Every figure of the dashboard, in seven queries whatever the project's size
    (``status_counts``: what ``pair_status_counts`` answered, when the caller asked it)."""
    counts, gold_pairs = status_counts or pair_status_counts(project=project)
    checks = _cross_checks(project)
    tier_pairs = [(c["tier_1"], c["tier_2"]) for c in checks]
    categories, unmatched = category_confusion(project=project, checks=checks)
    levels, without_boxes = difficulty_counts(project=project)
    ious = [c["mean_iou"] for c in checks if c["mean_iou"] is not None]
    return ProjectQuality(
        status_counts=counts,
        gold_pairs=gold_pairs,
        verdicts={v: sum(c["status"] == v for c in checks) for v in VerdictStatus.values},
        reasons=reason_counts(checks=checks),
        kappa=weighted_kappa(tier_pairs, weights="quadratic"),
        alpha=krippendorff_alpha_ordinal(tier_pairs),
        mean_iou=math.fsum(ious) / len(ious) if ious else None,
        tiers=_grid(tier_pairs, Tier.values, dict(Tier.choices)),
        categories=categories,
        unmatched_changes=unmatched,
        annotators=annotator_quality(project=project, checks=checks),
        difficulty=levels,
        without_boxes=without_boxes,
    )


def pair_status_counts(*, project: Project) -> tuple[dict[str, int], int]:
    """Pairs per status (every status present, zeros included) and how many are gold."""
    rows = project.pairs.values("status").annotate(
        n=Count("id"), n_gold=Count("id", filter=Q(is_gold=True))
    )
    counts = dict.fromkeys(PairStatus.values, 0)
    gold = 0
    for row in rows:
        counts[row["status"]] = row["n"]
        gold += row["n_gold"]
    return counts, gold


def _cross_checks(project: Project) -> list[Mapping[str, Any]]:
    return list(
        Agreement.objects.filter(pair__project=project)
        .exclude(annotation_1=F("annotation_2"))
        .values(
            "status",
            "mean_iou",
            "changes",
            "reasons",
            "annotation_1_id",
            "annotation_2_id",
            tier_1=F("annotation_1__tier"),
            tier_2=F("annotation_2__tier"),
            annotator_1=F("annotation_1__annotator_id"),
            annotator_2=F("annotation_2__annotator_id"),
        )
        .order_by("pair_id")
    )


# The verdict's reason codes (see pairdiff.agreement), by what a lead would fix or teach.
REASON_KINDS = {
    "tier": "tiers",
    "category": "category",
    "entity_a": "entity label",
    "entity_b": "entity label",
    "null_mismatch": "absent side",
    "unmatched_boxes": "boxes",
    "iou_below_threshold": "boxes",
    "unmatched": "missing change",
    "change_count": "missing change",
    "description": "description",
}


def reason_counts(*, checks: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many cross-checks that were not accepted give each kind of reason, most first.

    A pair counts once per kind however many of its changes or sides give it.
    """
    counts: dict[str, int] = defaultdict(int)
    for check in checks:
        for kind in {_reason_kind(r.get("code", "")) for r in check["reasons"]}:
            counts[kind] += 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _reason_kind(code: str) -> str:
    head = code.split(":", 1)[0]
    return REASON_KINDS.get(head) or REASON_KINDS.get(code.rsplit(".", 1)[-1], code)


def category_confusion(
    *, project: Project, checks: Sequence[Mapping[str, Any]]
) -> tuple[Grid, int]:
    """Categories of the matched changes of each cross-check, and the unmatched count.

    Matched changes are those the agreement paired (``index_1`` and ``index_2`` in
    Agreement.changes, indices into each annotation's changes in their stored order), so a
    pair with several changes counts each pairing once and a pairing never depends on the
    order the annotators listed their changes in.
    """
    listed: dict[int, list[str]] = defaultdict(list)
    # Every annotation of a cross-checked pair rather than an IN list of ids: SQLite caps the
    # number of query parameters, and a gold pair's extra annotations cost only a few rows.
    rows = (
        Change.objects.filter(
            annotation__pair__project=project, annotation__pair__agreement__isnull=False
        )
        .order_by("annotation_id", "position", "id")
        .values_list("annotation_id", "category")
    )
    for annotation_id, category in rows:
        listed[annotation_id].append(category)
    pairs: list[tuple[str, str]] = []
    unmatched = 0
    for check in checks:
        first, second = listed[check["annotation_1_id"]], listed[check["annotation_2_id"]]
        for change in check["changes"]:
            i, j = change.get("index_1"), change.get("index_2")
            if i is None or j is None:
                unmatched += 1
            elif i < len(first) and j < len(second):
                pairs.append((first[i], second[j]))
    known = project.category_slugs
    extra = sorted({c for pair in pairs for c in pair} - set(known))
    keys = known + extra
    return _grid(pairs, keys, {k: project.category_name(k) for k in keys}), unmatched


def annotator_quality(
    *, project: Project, checks: Sequence[Mapping[str, Any]]
) -> list[AnnotatorQuality]:
    """Per annotator, by username: every member with the annotator role, and anyone else
    (a lead, an admin) who has submitted an annotation in the project."""
    names: dict[int, str] = dict(
        Membership.objects.filter(project=project, role=Role.ANNOTATOR).values_list(
            "user_id", "user__username"
        )
    )
    times: dict[int, list[int]] = defaultdict(list)
    for user_id, username, ms in Annotation.objects.filter(pair__project=project).values_list(
        "annotator_id", "annotator__username", "time_spent_ms"
    ):
        names[user_id] = username
        times[user_id].append(ms)
    checked: dict[int, int] = defaultdict(int)
    accepted: dict[int, int] = defaultdict(int)
    for check in checks:
        for user_id in {check["annotator_1"], check["annotator_2"]}:
            checked[user_id] += 1
            accepted[user_id] += check["status"] == VerdictStatus.ACCEPTED
    gold = {
        row["annotation__annotator_id"]: row
        for row in GoldScore.objects.filter(annotation__pair__project=project)
        .values("annotation__annotator_id")
        .annotate(n=Count("id"), passed=Count("id", filter=Q(passed=True)), mean=Avg("score"))
        .order_by()
    }
    drafts = draft_acceptance(project)
    result = []
    for user_id, username in sorted(names.items(), key=lambda item: item[1]):
        timed = [ms for ms in times[user_id] if ms > 0]
        scored = gold.get(user_id, {})
        result.append(
            AnnotatorQuality(
                user_id=user_id,
                username=username,
                pairs=len(times[user_id]),
                timed=len(timed),
                median_time_ms=statistics.median(timed) if timed else None,
                mean_time_ms=statistics.fmean(timed) if timed else None,
                cross_checked=checked[user_id],
                accepted=accepted[user_id],
                gold_answered=scored.get("n", 0),
                gold_passed=scored.get("passed", 0),
                gold_mean_score=scored.get("mean"),
                drafts_offered=drafts.get(user_id, (0, 0))[0],
                drafts_kept=drafts.get(user_id, (0, 0))[1],
            )
        )
    return result


def difficulty_counts(*, project: Project) -> tuple[dict[str, int], int]:
    """Accepted pairs by MinCU difficulty of the answer that stands (see review.standing),
    and those without a measurable box. Difficulty is the largest box area over its own
    image's area (A and B may differ in size), across all changes and both sides."""
    levels = dict.fromkeys(Difficulty, 0)
    without = 0
    for row in standing_rows(Pair.objects.filter(project=project)):
        if row.difficulty is None:
            without += 1
        else:
            levels[row.difficulty] += 1
    return {str(level): n for level, n in levels.items()}, without


def _grid(pairs: Sequence[tuple[str, str]], keys: Sequence[str], names: dict[str, str]) -> Grid:
    counted = confusion(pairs)
    return Grid(
        keys=list(keys),
        labels=[names.get(k, k) for k in keys],
        counts=[[counted.get((a, b), 0) for b in keys] for a in keys],
    )
