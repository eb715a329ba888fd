"""Which Celery task does which kind of work.

The tasks live in the apps above (``annotator.tasks``, ``review.tasks``, ``releases.tasks``) and
register here when
their app is ready; the code that triggers work (a submit, a sweep, a queued job) asks the
registry by kind, so nothing has to import a task module above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import Task
from django.db import models

from config.enqueue import enqueue_on_commit


class Work(models.TextChoices):
    """Work that runs without a Job row (the job kinds, JobKind, are keys too)."""

    CROSS_CHECK = "cross-check", "Cross-check of a pair's annotations"
    GOLD_SCORE = "gold-score", "Score of an annotation against its gold answer"


JobArgs = Callable[[Any], tuple | None]
Cleanup = Callable[[Any], None]


def _job_pk(job: Any) -> tuple:
    return (job.pk,)


@dataclass(frozen=True)
class Entry:
    task: Task
    job_args: JobArgs  # what the task takes for a Job of this kind; None when it cannot run
    # What to tidy when a sweep fails a job of this kind (its task never got to do it).
    cleanup: Cleanup | None = None


_registry: dict[str, Entry] = {}


class UnknownWork(LookupError):
    """No task is registered for this kind (its app is not installed, or not ready yet)."""


def task_register(
    *, kind: str, task: Task, job_args: JobArgs = _job_pk, cleanup: Cleanup | None = None
) -> None:
    """Make ``task`` the one that does ``kind``; called by each app's tasks module."""
    _registry[str(kind)] = Entry(task=task, job_args=job_args, cleanup=cleanup)


def task_for(kind: str) -> Task:
    try:
        return _registry[str(kind)].task
    except KeyError:
        raise UnknownWork(f"no task registered for {kind!r}") from None


def work_enqueue_on_commit(kind: str, *args: Any, after_response: bool = False) -> None:
    """Send the task of ``kind`` with ``args`` once the current transaction commits. Work
    without a Job row (``Work``: a cross-check, a gold score) is what nobody waits for: without
    a broker it runs after the request's response is sent (config.after_response), as does
    a job's work when ``after_response`` (the client polls the job instead of waiting), long
    work that does not hold the connection either (config.after_response, ``detach``)."""
    short = str(kind) in Work.values
    after = after_response or short
    enqueue_on_commit(task_for(kind), *args, after_response=after, detach=after and not short)


def job_task(job: Any) -> tuple[Task, tuple] | None:
    """The task and arguments that run ``job``; None when nothing can (unknown kind, or a job
    missing what its task needs)."""
    entry = _registry.get(str(job.kind))
    if entry is None:
        return None
    args = entry.job_args(job)
    return None if args is None else (entry.task, args)


def job_cleanup(job: Any) -> None:
    """Tidy what a job of this kind leaves behind when it is failed from outside its task."""
    entry = _registry.get(str(job.kind))
    if entry is not None and entry.cleanup is not None:
        entry.cleanup(job)


def job_enqueue_on_commit(job: Any, *, after_response: bool = False) -> None:
    """Send the task that runs ``job`` once the current transaction commits. ``after_response``:
    long work the response does not wait for; without a broker it then runs once the response
    is sent (config.after_response), never inside the request, and without holding the
    connection (``detach``)."""
    found = job_task(job)
    if found is None:
        raise UnknownWork(f"no task can run job {job.pk} of kind {job.kind!r}")
    task, args = found
    enqueue_on_commit(task, *args, after_response=after_response, detach=after_response)
