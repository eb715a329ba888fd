"""Writes of the review side that have no module of their own: queueing a project's agreement
recompute. Verdicts are in agreement.py, lead decisions in resolutions.py; a pair's known (gold)
answer is annotator.intake.gold; releases are an app of their own (releases/)."""

from __future__ import annotations

from jobs.lifecycle import job_create
from jobs.models import Job, JobKind
from jobs.registry import job_enqueue_on_commit
from projects.models import Project


def agreements_recompute_queue(*, project: Project, user=None) -> Job:
    """Queue a recompute of every verdict of the project (call after its policy changed)."""
    job = job_create(kind=JobKind.RECOMPUTE, project=project, user=user)
    job_enqueue_on_commit(job)
    return job
