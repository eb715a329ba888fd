"""Celery tasks of the review side: ids in, one service call, safe to run twice."""

from celery import shared_task

from review.agreement import agreement_compute, gold_score_compute


@shared_task(acks_late=True)
def compute_agreement(pair_id: int) -> str | None:
    agreement = agreement_compute(pair_id=pair_id)
    return agreement.status if agreement else None


@shared_task(acks_late=True)
def score_gold_annotation(annotation_id: int) -> float | None:
    score = gold_score_compute(annotation_id=annotation_id)
    return score.score if score else None
