"""Celery tasks of the review side: ids in, one service call, safe to run twice."""

from celery import shared_task

from annotator.models import Job, JobStatus
from review.agreement import agreement_compute, agreements_recompute, gold_score_compute
from review.releases import release_build


@shared_task(acks_late=True)
def compute_agreement(pair_id: int) -> str | None:
    agreement = agreement_compute(pair_id=pair_id)
    return agreement.status if agreement else None


@shared_task(acks_late=True)
def score_gold_annotation(annotation_id: int) -> float | None:
    score = gold_score_compute(annotation_id=annotation_id)
    return score.score if score else None


@shared_task(acks_late=True)
def recompute_agreements(job_id: int) -> dict | None:
    job = Job.objects.select_related("project").get(pk=job_id)
    if job.status == JobStatus.QUEUED:
        agreements_recompute(job=job)
    return job.result


@shared_task(acks_late=True, reject_on_worker_lost=True)
def build_release(release_id: int) -> str:
    """Build a release; a message redelivered after a worker died starts the build over."""
    return release_build(release_id).status
