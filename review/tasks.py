"""Celery tasks of the review side: ids in, one service call, safe to run twice."""

from celery import shared_task

from jobs.lifecycle import job_claim
from jobs.models import Job, JobKind
from jobs.registry import Work, task_register
from review.agreement import agreement_compute, agreements_recompute, gold_score_compute
from review.figures import figures_refresh_due
from review.sweeps import review_work_resend


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
    if job_claim(job):
        agreements_recompute(job=job)
    return job.result


@shared_task
def resend_review_work() -> dict[str, int]:
    """Beat: send again the cross-checks and gold scores whose message was lost."""
    return review_work_resend()


@shared_task
def refresh_project_figures() -> list[int]:
    """Beat: recompute the whole-project figures of large projects once they are
    DIFFMARK_FIGURES_SECONDS old (checked every minute)."""
    return figures_refresh_due()


task_register(kind=Work.CROSS_CHECK, task=compute_agreement)
task_register(kind=Work.GOLD_SCORE, task=score_gold_annotation)
task_register(kind=JobKind.RECOMPUTE, task=recompute_agreements)
