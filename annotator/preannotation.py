"""Pre-annotation: run a predictor over a project's pairs as a background job.

A rerun replaces the predictions of the same model version; a predictor's failure on one pair
is recorded on the job and the prediction row, never raised; a lead may cancel between batches.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.conf import settings
from django.db import transaction

from annotator.models import Pair, PairStatus, Prediction
from annotator.priorities import queue_priorities_refresh
from annotator.screening import pair_screen
from annotator.services import image_limits
from jobs.lifecycle import job_create, job_finish, job_progress, job_start
from jobs.models import Job, JobKind, JobStatus
from jobs.registry import job_enqueue_on_commit
from pairdiff.predict import PredictionResult, Predictor
from projects.models import Project

BATCH_SIZE = 20
BACKENDS = ("pixeldiff", "vlm", "vlm-judge")
_VLM_BACKENDS = ("vlm", "vlm-judge")


class UnknownBackend(ValueError):
    pass


def predictor_for(backend: str, *, questions: str = "") -> Predictor:
    """The configured predictor behind a backend name (DIFFMARK_VLM_*: docs/operations.md); for
    the judge, `questions` are the project's own wording of MinCU's screening questions."""
    if backend == "pixeldiff":
        from pairdiff.pixeldiff import PixelDiff  # numpy/scikit-image: load only when used

        return PixelDiff()
    if backend in _VLM_BACKENDS:
        from pairdiff.vlm import VlmPredictor
        from pairdiff.vlm.judge import VlmJudge

        backend_check(backend)
        options: dict[str, Any] = {
            "base_url": settings.DIFFMARK_VLM_URL,
            "model": settings.DIFFMARK_VLM_MODEL,
            "api_key": settings.DIFFMARK_VLM_API_KEY or None,
            "timeout": settings.DIFFMARK_VLM_TIMEOUT,
            "image_limits": image_limits(),  # the same limits the import applied
        }
        try:
            if backend == "vlm-judge":
                return VlmJudge(questions=questions, **options)
            return VlmPredictor(**options)
        except ValueError as exc:
            raise UnknownBackend(f"the {backend} backend is misconfigured: {exc}") from exc
    raise UnknownBackend(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")


def backend_check(backend: str) -> None:
    """UnknownBackend, before any job exists, for a name we do not know or a model server that
    is not configured (a job created anyway would only fail on the worker)."""
    if backend not in BACKENDS:
        raise UnknownBackend(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if backend in _VLM_BACKENDS and not settings.DIFFMARK_VLM_URL:
        raise UnknownBackend(
            f"the {backend} backend needs DIFFMARK_VLM_URL (an OpenAI-compatible API); "
            "ask your administrator to set it, or use pixeldiff"
        )


def preannotate_queue(
    *, project: Project, backend: str, user=None, pair_ids: list[int] | None = None
) -> Job:
    """Queue a pre-annotation job (after commit); UnknownBackend for a name we do not know."""
    backend_check(backend)
    params = {"backend": backend, "pairs": pair_ids}
    job = job_create(kind=JobKind.PREANNOTATE, project=project, user=user, params=params)
    job_enqueue_on_commit(job, after_response=True)  # its page shows the progress
    return job


def preannotate_run(*, job: Job, predictor: Predictor | None = None) -> None:
    """Predict every selected pair of the job's project (the open, not yet annotated ones by
    default), in batches, reporting progress; stops early when the job is cancelled."""
    predictor = predictor or _predictor(job)
    pairs = _selected(job)
    job_start(job, total=len(pairs))
    outcome: Counter[str] = Counter()
    errors: list[dict] = []
    for start in range(0, len(pairs), BATCH_SIZE):
        if Job.objects.filter(pk=job.pk, status=JobStatus.CANCELLED).exists():
            job_finish(
                job,
                status=JobStatus.CANCELLED,
                result=dict(outcome),
                errors=errors,
                message=f"cancelled after {start} of {len(pairs)} pairs",
            )
            return
        for done, pair in enumerate(pairs[start : start + BATCH_SIZE], start=start + 1):
            result = _predict(predictor, pair)
            _store(pair, predictor, result, job)
            outcome["failed" if result.error else "predicted"] += 1
            outcome.update(f"flag:{flag}" for flag in result.flags)
            if result.error:
                errors.append({"id": pair.external_id or str(pair.pk), "message": result.error})
            # Per pair, not per batch: a slow model (up to DIFFMARK_VLM_TIMEOUT a pair) must
            # not look like a dead worker to the stale-job sweep.
            job_progress(job, done=done)
    assert job.project is not None  # a pre-annotation job always has its project
    queue_priorities_refresh(project=job.project)  # disagreement is known now
    job_finish(
        job,
        status=JobStatus.SUCCEEDED,
        result=dict(outcome),
        errors=errors,
        message=f"{outcome['predicted']} pairs predicted, {outcome['failed']} failed"
        if pairs
        else "nothing to pre-annotate: every pair is already in annotation or decided",
    )


def _predictor(job: Job) -> Predictor:
    backend = job.params["backend"]
    if backend == "vlm-judge":  # the judge asks the project's own questions
        assert job.project is not None
        return predictor_for(backend, questions=job.project.judge_prompt)
    return predictor_for(backend)


def _selected(job: Job) -> list[Pair]:
    pairs = Pair.objects.filter(project=job.project).order_by("id")
    if job.params.get("pairs"):
        return list(pairs.filter(pk__in=job.params["pairs"]))
    return list(pairs.filter(status__in=[PairStatus.IMPORTED, PairStatus.PRE_ANNOTATED]))


def _predict(predictor: Predictor, pair: Pair) -> PredictionResult:
    try:
        with pair.image_a.open("rb") as a, pair.image_b.open("rb") as b:
            data_a, data_b = a.read(), b.read()
        return predictor.predict(
            data_a, data_b, categories=pair.project.category_slugs, instruction=pair.instruction
        )
    except Exception as exc:  # a predictor bug must not sink the other pairs of the job
        return PredictionResult(error=f"{type(exc).__name__}: {exc}")


@transaction.atomic
def _store(pair: Pair, predictor: Predictor, result: PredictionResult, job: Job) -> None:
    Prediction.objects.update_or_create(
        pair=pair,
        model_name=predictor.name,
        model_version=predictor.version,
        defaults={
            "changes": [c.as_json() for c in result.changes],
            "flags": list(result.flags) + (["error"] if result.error else []),
            "confidence": result.confidence,
            "error": result.error[:2000],
            "reasons": dict(result.reasons),
            "job": job,
        },
    )
    Pair.objects.filter(pk=pair.pk, status=PairStatus.IMPORTED).update(
        status=PairStatus.PRE_ANNOTATED
    )
    pair_screen(pair=pair, flags=list(result.flags), reasons=dict(result.reasons))
