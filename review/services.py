"""Writes of the review side that have no module of their own: a pair's known (gold) answer and
queueing a project's agreement recompute. Verdicts are in agreement.py, lead decisions in
resolutions.py; releases are an app of their own (releases/)."""

from __future__ import annotations

from django.db import transaction

from annotator.models import Pair
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind
from jobs.registry import job_enqueue_on_commit
from projects.models import Project
from review.models import GoldAnswer


@transaction.atomic
def gold_answer_set(
    *, pair: Pair, changes: list[dict], source: str = "", user=None, mixed_in: bool = True
) -> GoldAnswer:
    """Store this known answer of `pair` (replacing an earlier one). With `mixed_in` the pair
    becomes a gold pair that every annotator's queue draws at the project's gold rate;
    without, it stays a regular pair whose answer happens to be known (a synthetic benchmark)."""
    gold, _ = GoldAnswer.objects.update_or_create(
        pair=pair, defaults={"changes": changes, "source": source, "created_by": user}
    )
    if mixed_in:
        Pair.objects.filter(pk=pair.pk).update(is_gold=True)
        pair.is_gold = True
    return gold


def agreements_recompute_queue(*, project: Project, user=None) -> Job:
    """Queue a recompute of every verdict of the project (call after its policy changed)."""
    job = job_create(kind=JobKind.RECOMPUTE, project=project, user=user)
    job_enqueue_on_commit(job)
    return job
