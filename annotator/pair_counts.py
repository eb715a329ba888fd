"""Pairs per status: counted live on small projects, stored on large ones.

Counting a million pairs by status costs ~300 ms however well indexed, and the home page, the
project page, the project API and the dashboard each need it. Up to DIFFMARK_FIGURES_LIVE_PAIRS
pairs they count for each request, as before; above it they read the PairCounts row the
periodic job (review.figures.figures_refresh_due, every minute) writes once the stored counts
are DIFFMARK_COUNTS_SECONDS old, and say when they were counted. A large project never counted
yet is counted on the first request that needs it (once).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from annotator.models import Pair, PairCounts, PairStatus
from projects.models import Project


@dataclass(frozen=True)
class StatusCounts:
    """Pairs per status (every status, zeros included), gold pairs among them, and when they
    were counted (None: for this request)."""

    counts: dict[str, int]
    gold: int
    counted_at: datetime | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def pair_counts_live(project_ids: Iterable[int]) -> dict[int, StatusCounts]:
    """Count now: one grouped query over the projects' pairs (index on project, status)."""
    ids = list(project_ids)
    found: dict[int, dict[str, int]] = {pk: dict.fromkeys(PairStatus.values, 0) for pk in ids}
    gold = dict.fromkeys(ids, 0)
    if not ids:
        return {}
    rows = (
        Pair.objects.filter(project_id__in=ids)
        .values("project_id", "status")
        .annotate(n=Count("id"), n_gold=Count("id", filter=Q(is_gold=True)))
        .order_by()
    )
    for row in rows:
        found[row["project_id"]][row["status"]] = row["n"]
        gold[row["project_id"]] += row["n_gold"]
    return {pk: StatusCounts(found[pk], gold[pk]) for pk in ids}


def pair_counts_refresh(project_id: int, *, now: datetime | None = None) -> StatusCounts:
    """Count the project's pairs now and store the counts with the time."""
    counted_at = now or timezone.now()
    live = pair_counts_live([project_id])[project_id]
    PairCounts.objects.update_or_create(
        project_id=project_id,
        defaults={"counts": live.counts, "gold": live.gold, "counted_at": counted_at},
    )
    return StatusCounts(live.counts, live.gold, counted_at)


def pair_counts_read(projects: Iterable[Project]) -> dict[int, StatusCounts]:
    """Each project's counts: stored on a large project, else counted for this request."""
    ids = [p.pk for p in projects]
    limit = settings.DIFFMARK_FIGURES_LIVE_PAIRS
    found: dict[int, StatusCounts] = {}
    for row in PairCounts.objects.filter(project_id__in=ids):
        counts = dict.fromkeys(PairStatus.values, 0) | row.counts
        if sum(counts.values()) > limit:
            found[row.project_id] = StatusCounts(counts, row.gold, row.counted_at)
    live = pair_counts_live(pk for pk in ids if pk not in found)
    for pk, counted in live.items():
        if counted.total > limit:  # large, never counted before: store them (once)
            counted = pair_counts_refresh(pk)
        found[pk] = counted
    return found


def pair_counts_of(project: Project) -> StatusCounts:
    return pair_counts_read([project])[project.pk]


def pair_counts_refresh_due(*, now: datetime | None = None) -> list[int]:
    """Count again the stored counts older than DIFFMARK_COUNTS_SECONDS; the projects
    counted. Small projects have none stored (pair_counts_read stores a large one's)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.DIFFMARK_COUNTS_SECONDS)
    due = list(
        PairCounts.objects.filter(counted_at__lte=cutoff)
        .order_by("project_id")
        .values_list("project_id", flat=True)
    )
    for project_id in due:
        pair_counts_refresh(project_id, now=now)
    return due
