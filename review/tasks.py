"""Celery tasks of the review side: ids in, one service call, safe to run twice."""

import contextlib

from celery import shared_task

from annotator.sweeps import job_files_delete
from jobs.lifecycle import job_claim, job_fail_if_running
from jobs.models import Job, JobKind
from jobs.registry import Work, task_register
from jobs.sweeps import STALE_ADVICE
from jobs.tempdirs import job_tempdir, local_copy
from review.agreement import agreement_compute, agreements_recompute, gold_score_compute
from review.figures import figures_refresh_due
from review.sweeps import review_work_resend
from review.synthesis import SynthesisUnusable, synthesis_options, synthesis_run


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


# Named as when it lived in annotator.tasks: messages already queued still find it.
@shared_task(acks_late=True, name="annotator.tasks.synthesize_pairs_job")
def synthesize_pairs_job(job_id: int) -> dict | None:
    """Run a queued synthesis job over the zip of photos stored under the job's folder."""
    job = Job.objects.select_related("project", "created_by").get(pk=job_id)
    if not job_claim(job):
        return job.result
    options = synthesis_options(
        **{k: job.params[k] for k in ("per_image", "categories", "gold", "seed")}
    )
    try:
        with job_tempdir("synth") as tmp:
            images = local_copy(job.params["images"], tmp / "images.zip")
            # An unusable zip fails the job with its reason; nothing to retry.
            with contextlib.suppress(SynthesisUnusable):
                assert job.project is not None  # a synthesis job always has its project
                synthesis_run(
                    project=job.project,
                    images=images,
                    options=options,
                    job=job,
                    actor=job.created_by,
                )
    except BaseException as exc:
        # Whatever stopped it (a bug, memory, a time limit), the job ends failed with the
        # reason, never "running"; the error goes on to the worker's log.
        job_fail_if_running(
            job, f"stopped: {type(exc).__name__} (logged); {STALE_ADVICE[JobKind.SYNTHESIZE]}"
        )
        raise
    finally:
        job_files_delete(job)  # the photos are not kept once the job ended, whatever happened
    job.refresh_from_db()
    return job.result


task_register(kind=Work.CROSS_CHECK, task=compute_agreement)
task_register(kind=Work.GOLD_SCORE, task=score_gold_annotation)
task_register(kind=JobKind.RECOMPUTE, task=recompute_agreements)
task_register(kind=JobKind.SYNTHESIZE, task=synthesize_pairs_job, cleanup=job_files_delete)
