"""Whole-project figures on large projects: computed by a periodic job, read by the pages.

The quality dashboard, the accepted pairs by category and difficulty, the prior of the next
release's questions, annotations per member and the browser's difficulty filter all read every
pair, annotation or agreement of a project. Up to DIFFMARK_FIGURES_LIVE_PAIRS pairs they are
computed on each request, as before; above it the pages read the ProjectFigures row (and the
PairDifficulty rows) that ``figures_refresh`` wrote, and say when. Beat runs
``figures_refresh_due`` every DIFFMARK_FIGURES_SECONDS; a large project without figures yet gets
them computed once, on the first request that needs them.
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotator.models import Annotation, Pair
from annotator.pair_counts import pair_counts_of, pair_counts_refresh, pair_counts_refresh_due
from pairdiff.release.question_set import release_prior
from projects.models import Project
from review.dashboard import (
    AnnotatorQuality,
    Grid,
    ProjectQuality,
    project_quality,
)
from review.models import PairDifficulty, ProjectFigures
from review.standing import accepted_breakdown, standing_rows

BATCH = 5000  # PairDifficulty rows per insert


def figures_large(project: Project) -> bool:
    """More pairs than DIFFMARK_FIGURES_LIVE_PAIRS: reads at most that many index entries."""
    limit = settings.DIFFMARK_FIGURES_LIVE_PAIRS
    return Pair.objects.filter(project=project).order_by().values("pk")[limit : limit + 1].exists()


def figures_refresh(*, project_id: int) -> ProjectFigures:
    """Compute every whole-project figure of the project and store them with the time."""
    project = Project.objects.get(pk=project_id)
    started = time.perf_counter()
    computed_at = timezone.now()
    quality = project_quality(project=project)
    submitted = {
        str(row["annotator_id"]): row["n"]
        for row in Annotation.objects.filter(pair__project=project)
        .values("annotator_id")
        .annotate(n=Count("id"))
        .order_by()
    }
    levels = [
        PairDifficulty(pair_id=row.pair_id, project_id=project.pk, level=str(row.difficulty))
        for row in standing_rows(Pair.objects.filter(project=project))
        if row.difficulty is not None
    ]
    values = {
        "quality": quality_json(quality),
        "breakdown": accepted_breakdown(project),
        "prior": project_prior(project),
        "submitted": submitted,
        "pairs": quality.total,
        "computed_at": computed_at,
    }
    pair_counts_refresh(project.pk, now=computed_at)
    with transaction.atomic():
        PairDifficulty.objects.filter(project=project).delete()
        PairDifficulty.objects.bulk_create(levels, batch_size=BATCH)
        values["seconds"] = time.perf_counter() - started
        figures, _ = ProjectFigures.objects.update_or_create(project=project, defaults=values)
    return figures


def figures_refresh_due(*, now: datetime | None = None) -> list[int]:
    """Refresh the figures of every large project whose figures are older than
    DIFFMARK_FIGURES_SECONDS (or missing); returns the projects refreshed."""
    pair_counts_refresh_due(now=now)  # the pairs per status: every DIFFMARK_COUNTS_SECONDS
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.DIFFMARK_FIGURES_SECONDS)
    done = []
    for project in Project.objects.order_by("pk"):
        figures = ProjectFigures.objects.filter(project=project).first()
        if figures is not None and figures.computed_at > cutoff:
            continue
        if figures is None and not figures_large(project):
            continue
        figures_refresh(project_id=project.pk)
        done.append(project.pk)
    return done


def figures_of(project: Project) -> ProjectFigures | None:
    """The stored figures of a large project (computed now if it has none); None for a project
    small enough to compute them live."""
    if not figures_large(project):
        return None
    found = ProjectFigures.objects.filter(project=project).first()
    return found or figures_refresh(project_id=project.pk)


def quality_read(project: Project) -> tuple[ProjectQuality, datetime | None]:
    """The dashboard's figures and when they were computed (None: just now, live)."""
    quality, computed_at, _ = quality_counted_read(project)
    return quality, computed_at


def quality_counted_read(
    project: Project,
) -> tuple[ProjectQuality, datetime | None, datetime | None]:
    """The dashboard's figures, when they were computed and when its pairs per status were
    counted (None: for this request). On a large project the figures are what the periodic
    job stored, and the pairs per status what it counted (annotator.pair_counts: every
    DIFFMARK_COUNTS_SECONDS)."""
    counted = pair_counts_of(project)
    if counted.counted_at is None:  # small: everything live
        quality = project_quality(project=project, status_counts=(counted.counts, counted.gold))
        return quality, None, None
    figures = ProjectFigures.objects.filter(project=project).first()
    figures = figures or figures_refresh(project_id=project.pk)
    stored = quality_from_json(figures.quality)
    quality = replace(stored, status_counts=counted.counts, gold_pairs=counted.gold)
    return quality, figures.computed_at, counted.counted_at


def quality_json(quality: ProjectQuality) -> dict:
    return asdict(quality)


def quality_from_json(data: dict) -> ProjectQuality:
    return ProjectQuality(
        **{
            **data,
            "tiers": Grid(**data["tiers"]),
            "categories": Grid(**data["categories"]),
            "annotators": [AnnotatorQuality(**a) for a in data["annotators"]],
        }
    )


def project_prior(project: Project) -> dict:
    """The slot values a release of the project would draw from (the prior of the questions'
    derived negatives): every standing answer's first description, as a release reads them."""
    records = [
        {"changes": row.changes}
        for row in standing_rows(Pair.objects.filter(project=project))
        if row.changes
    ]
    return release_prior(records)


def prior_read(project: Project) -> dict:
    """The prior, from the stored figures on a large project, else computed now."""
    figures = figures_of(project)
    return figures.prior if figures is not None else project_prior(project)
