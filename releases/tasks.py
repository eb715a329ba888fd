"""Celery tasks of releases and model scoring: ids in, one service call, safe to run twice.

Named as when they lived in review.tasks: messages already queued, the routes and the beat
schedule (config/settings.py) still find them."""

from celery import shared_task

from jobs.models import JobKind
from jobs.registry import task_register
from releases.building import release_build
from releases.evaluations import evaluation_run
from releases.failing import releases_fail_stale


@shared_task(acks_late=True, reject_on_worker_lost=True, name="review.tasks.build_release")
def build_release(release_id: int) -> str:
    """Build a release; a message sent twice builds it once (the build claims its job)."""
    return release_build(release_id).status


@shared_task(name="review.tasks.fail_stale_releases")
def fail_stale_releases() -> list[int]:
    """Beat: fail the release builds whose worker stopped; they can be built again."""
    return releases_fail_stale()


@shared_task(acks_late=True, name="review.tasks.score_evaluation")
def score_evaluation(evaluation_id: int) -> str:
    """Score uploaded predictions; a message sent twice scores once (the job is claimed)."""
    return evaluation_run(evaluation_id).status


def _params(key: str):
    """The task argument of a job kept in its params (None: the job cannot be sent)."""
    return lambda job: (job.params[key],) if job.params.get(key) else None


task_register(kind=JobKind.RELEASE, task=build_release, job_args=_params("release"))
task_register(kind=JobKind.EVALUATE, task=score_evaluation, job_args=_params("evaluation"))
