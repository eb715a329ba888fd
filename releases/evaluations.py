"""Scoring a model's predictions against a ready release: the ``evaluate`` command scores in
process, the REST endpoint queues a job; both call ``evaluation_score``."""

from __future__ import annotations

import io
import json
import logging
import uuid
from typing import BinaryIO, cast

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from jobs.lifecycle import job_claim, job_create, job_finish, job_start
from jobs.models import JobKind, JobStatus
from jobs.registry import work_enqueue_on_commit
from pairdiff import strictjson
from pairdiff.release.circular import CIRCULAR_FILE
from pairdiff.scoring.evaluate import SWAPPED, evaluate
from pairdiff.scoring.predictions import COORDS, PredictionsRefused
from pairdiff.scoring.text import (
    DEFAULT,
    MINCU,
    TextScorer,
    TextScorerUnavailable,
    text_scorer,
)
from releases.models import Evaluation, EvaluationStatus, Release, ReleaseStatus
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit

log = logging.getLogger(__name__)

MAX_PREDICTIONS_BYTES = 200 * 1024 * 1024


class EvaluationRefused(ValueError):
    """Predictions that cannot be scored as asked; ``field`` names the input at fault."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def evaluation_scorer(name: str = DEFAULT) -> TextScorer:
    try:
        return text_scorer(
            name,
            bertscore_model=settings.DIFFMARK_BERTSCORE_MODEL,
            bertscore_layers=settings.DIFFMARK_BERTSCORE_LAYERS,
        )
    except TextScorerUnavailable as exc:
        raise EvaluationRefused(str(exc), field="text_metric") from exc


def mincu_scorer() -> tuple[TextScorer | None, str]:
    """MinCU's rule (BERTScore ≥ 0.85) when a local model is configured, else why not."""
    if not settings.DIFFMARK_BERTSCORE_MODEL:
        return None, (
            "no local BERTScore model is configured (DIFFMARK_BERTSCORE_MODEL, a model folder; "
            "Diffmark never downloads one)"
        )
    try:
        return evaluation_scorer(MINCU), ""
    except EvaluationRefused as exc:
        return None, str(exc)


def release_truth(release: Release, *, storage: Storage | None = None) -> tuple[list, list]:
    """The release's benchmark records (in order) and its questions, as the files hold them.
    The A/B-swapped copy of the test split has no ReleaseRecord rows: its records are read
    from benchmark.json, where the build wrote them after the others."""
    records = [r.data for r in release.records.order_by("position").only("data")]
    return records + _swapped_records(release, storage), _jsonl_file(
        release, "questions.jsonl", storage
    )


def _swapped_records(release: Release, storage: Storage | None) -> list[dict]:
    if "benchmark.json" not in (release.manifest or {}).get("files", {}):
        return []
    with (storage or default_storage).open(f"{release.prefix}/benchmark.json", "rb") as handle:
        return [r for r in json.load(handle) if r.get("split") == SWAPPED]


def release_rotations(release: Release, *, storage: Storage | None = None) -> list[dict]:
    """The rotated variants of the release's questions (none for a release built before
    circular evaluation)."""
    return _jsonl_file(release, CIRCULAR_FILE, storage)


def _jsonl_file(release: Release, name: str, storage: Storage | None) -> list[dict]:
    if name not in (release.manifest or {}).get("files", {}):
        return []
    with (storage or default_storage).open(f"{release.prefix}/{name}", "rb") as handle:
        return [json.loads(line) for line in handle.read().splitlines() if line.strip()]


def evaluation_score(
    *, release: Release, data: bytes | BinaryIO, coords: str, text_metric: str = DEFAULT
) -> dict:
    """Every metric of ``data`` (a predictions JSONL: its bytes, or a binary file read line by
    line) against ``release``; EvaluationRefused when the release is not ready or the file
    cannot be scored as declared."""
    if release.status != ReleaseStatus.READY:
        raise EvaluationRefused(f"release {release.name} is not ready", field="release")
    if coords not in COORDS:
        raise EvaluationRefused(f"coords must be one of {', '.join(COORDS)}", field="coords")
    scorer = evaluation_scorer(text_metric)
    mincu, unavailable = mincu_scorer()
    records, questions = release_truth(release)
    try:
        result = evaluate(
            records=records,
            questions=questions,
            rotations=release_rotations(release),
            data=data,
            coords=coords,
            scorer=scorer,
            synonyms=release.project.entity_synonyms or None,
            mincu=mincu,
            mincu_unavailable=unavailable,
        )
    except PredictionsRefused as exc:
        raise EvaluationRefused(str(exc), field="file") from exc
    except strictjson.JSONRejected as exc:  # never: lines are read apart; kept as a 4xx
        raise EvaluationRefused(str(exc), field="file") from exc
    release_json = {"id": release.pk, "name": release.name, "version": release.version}
    return {"release": release_json | {"project": release.project.slug}, **result}


def evaluation_create(
    *,
    release: Release,
    model_name: str,
    coords: str,
    text_metric: str,
    data: bytes | File,
    user=None,
) -> Evaluation:
    """Keep the uploaded predictions (``data``: bytes, or an uploaded file, copied to storage
    in chunks, never read whole) and queue their scoring (a job of kind evaluate, run after
    the response without a broker). Refuses at once what would only fail later: a release
    not ready, a blank model name, an unknown space or text metric, an empty or oversized
    file."""
    model_name = (model_name or "").strip()
    if not model_name or len(model_name) > 100:
        raise EvaluationRefused("name the model in 1 to 100 characters", field="model")
    if release.status != ReleaseStatus.READY:
        raise EvaluationRefused(f"release {release.name} is not ready", field="release")
    if coords not in COORDS:
        raise EvaluationRefused(f"coords must be one of {', '.join(COORDS)}", field="coords")
    evaluation_scorer(text_metric)
    upload = File(io.BytesIO(data), name="predictions.jsonl") if isinstance(data, bytes) else data
    if (upload.size or 0) > MAX_PREDICTIONS_BYTES:
        raise EvaluationRefused(too_large_message(upload.size or 0), field="file")
    if _blank(upload):
        raise EvaluationRefused("the predictions file is empty", field="file")
    name = f"evaluations/{release.project.slug}/{release.pk}/{uuid.uuid4().hex}.jsonl"
    stored = default_storage.save(name, upload)
    with transaction.atomic():
        job = job_create(kind=JobKind.EVALUATE, project=release.project, user=user)
        evaluation = Evaluation.objects.create(
            release=release,
            model_name=model_name,
            coords=coords,
            text_metric=text_metric,
            predictions=stored,
            job=job,
            created_by=user,
        )
        job.params = {"evaluation": evaluation.pk, "release": release.pk, "model": model_name}
        job.save(update_fields=["params"])
        _enqueue(evaluation)
    return evaluation


def too_large_message(size: int, *, at_least: bool = False) -> str:
    shown = f"{'at least ' if at_least else ''}{size / 2**20:.1f} MB"
    return (
        f"the predictions file is {shown}, larger than the limit of "
        f"{MAX_PREDICTIONS_BYTES // 2**20} MB"
    )


def _blank(upload: File) -> bool:
    """Whether the file holds nothing but whitespace (read in chunks, stopping at the first
    other byte)."""
    upload.seek(0)
    try:
        return all(not chunk.strip() for chunk in upload.chunks())
    finally:
        upload.seek(0)


def _enqueue(evaluation: Evaluation) -> None:
    # Scoring a large file takes a while: without a broker it runs once the response is sent.
    work_enqueue_on_commit(JobKind.EVALUATE, evaluation.pk, after_response=True)


def evaluation_run(evaluation_id: int) -> Evaluation:
    """Score a queued evaluation. Safe to run twice: the job is claimed first, and a scored
    evaluation is left alone. A refused file fails the evaluation with the reason."""
    evaluation = Evaluation.objects.select_related("release__project", "job").get(pk=evaluation_id)
    job = evaluation.job
    if evaluation.status != EvaluationStatus.QUEUED or (job and not job_claim(job)):
        return evaluation
    if job:
        job_start(job, total=1)
    try:
        with default_storage.open(evaluation.predictions, "rb") as handle:
            result = evaluation_score(  # line by line: memory holds one line, not the file
                release=evaluation.release,
                data=cast("BinaryIO", handle),  # a File: readline() as a binary file has
                coords=evaluation.coords,
                text_metric=evaluation.text_metric,
            )
    except EvaluationRefused as exc:
        return _finish(evaluation, status=EvaluationStatus.FAILED, message=str(exc))
    except Exception as exc:
        log.exception("evaluation %s failed", evaluation.pk)
        return _finish(
            evaluation, status=EvaluationStatus.FAILED, message=f"{type(exc).__name__}: {exc}"
        )
    return _finish(evaluation, status=EvaluationStatus.READY, result=result)


def _finish(
    evaluation: Evaluation, *, status: str, result: dict | None = None, message: str = ""
) -> Evaluation:
    evaluation.status = status
    evaluation.result = result
    evaluation.message = message
    evaluation.grounded_f1 = ((result or {}).get("grounding") or {}).get("grounded_f1")
    evaluation.accuracy = ((result or {}).get("questions") or {}).get("accuracy")
    evaluation.finished_at = timezone.now()
    with transaction.atomic():
        evaluation.save(
            update_fields=["status", "result", "message", "grounded_f1", "accuracy", "finished_at"]
        )
        _job_finish(evaluation, status=status, message=message)
        webhook_emit(
            evaluation.release.project,
            EventKind.EVALUATION_FINISHED,
            ObjectKind.EVALUATION,
            evaluation,
        )
    return evaluation


def _job_finish(evaluation: Evaluation, *, status: str, message: str) -> None:
    if evaluation.job:
        ok = status == EvaluationStatus.READY
        job_finish(
            evaluation.job,
            status=JobStatus.SUCCEEDED if ok else JobStatus.FAILED,
            result={
                "evaluation": evaluation.pk,
                "grounded_f1": evaluation.grounded_f1,
                "accuracy": evaluation.accuracy,
            },
            message=(
                f"{evaluation.model_name} scored on {evaluation.release.name}."
                if ok
                else f"{evaluation.model_name} could not be scored: {message}"
            ),
        )


def evaluations_of(release: Release) -> QuerySet[Evaluation]:
    """The release's evaluations, best first: Grounded F1, then question accuracy, then newest;
    ones not scored (yet) last."""
    return (
        Evaluation.objects.filter(release=release)
        .select_related("job", "created_by")
        .order_by(
            F("grounded_f1").desc(nulls_last=True),
            F("accuracy").desc(nulls_last=True),
            "-created_at",
            "-id",
        )
    )
