"""Import of a Label Studio JSON export: its pairs, the annotations made on them in Label Studio
(submitted through the same service as an annotator's answer), and its model predictions.

Authors are the members the lead mapped Label Studio users to, or else accounts made for this
project that nobody can log in as (``plan.author_account``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from annotator.intake.checks import CHECK_THREADS
from annotator.intake.importing import (
    ImportReport,
    ImportUnusable,
    Progress,
    import_batches,
)
from annotator.intake.labelstudio.plan import (
    Checked,
    LSInput,
    LSPlan,
    author_account,
    check_answers,
    check_task,
    labelstudio_plan,
)
from annotator.leasing import assignment_lease_pair
from annotator.models import Pair, PairEvent, PairEventKind, PairStatus, Prediction
from annotator.services import (
    CheckedPair,
    PairRejected,
    image_limits,
    pair_find_duplicate,
    pairs_store,
)
from annotator.submitting import SubmitConflict, annotation_submit
from jobs.lifecycle import job_finish
from jobs.models import Job, JobStatus
from pairdiff.labelstudio.read import LSTask
from pairdiff.labelstudio.refs import ImageFinder
from pairdiff.labelstudio.write import ExportProfile
from pairdiff.manifest import RowError
from pairdiff.sources import ImageSource, SourceError, open_source
from projects.members import membership_set
from projects.models import Membership, Project, Role


@dataclass
class LabelStudioReport(ImportReport):
    """rows are tasks; imported are pairs; annotations/predictions are (line, id)."""

    annotations: list[tuple[int, int]] = field(default_factory=list)
    predictions: list[tuple[int, int]] = field(default_factory=list)
    notes: list[RowError] = field(default_factory=list)
    mapping: list[str] = field(default_factory=list)

    def as_result(self) -> dict[str, int]:
        return {
            **super().as_result(),
            "annotations": len(self.annotations),
            "predictions": len(self.predictions),
            "notes": len(self.notes),
        }


def labelstudio_import(
    *,
    project: Project,
    given: LSInput,
    images: str | os.PathLike[str],
    job: Job,
    actor=None,
    progress: Progress | None = None,
) -> LabelStudioReport:
    """Import every task whose images pass, then the annotations and predictions made on it;
    report the rest.

    Tasks are checked like a manifest's rows and stored in atomic batches; a pair already in
    the project (same images) is reported and gets no annotations. Each annotation is leased
    and submitted like an annotator's answer (at most ``project.overlap`` per pair); a bad one
    is reported and writes nothing, the pair stays. With a config, the project keeps it (and
    the mapping) so releases write Label Studio tasks in its names. Raises ImportUnusable (and
    fails the job) for unusable input.
    """
    try:
        plan = labelstudio_plan(project=project, given=given)
        source = open_source(images, max_entry_bytes=image_limits().max_bytes)
    except (ImportUnusable, SourceError) as exc:
        job_finish(job, status=JobStatus.FAILED, message=str(exc))
        raise ImportUnusable(str(exc)) from exc
    report = LabelStudioReport(
        rows=len(plan.tasks) + len(plan.errors),
        errors=list(plan.errors),
        mapping=plan.mapping.describe(),
    )
    seen: dict[tuple[str, str], int] = {}
    finder = ImageFinder(source.names())

    def run(batch: list[LSTask], on_rows: Callable[[], None]) -> None:
        checked = _check_batch(project, batch, source, finder, seen, report)
        for task, pair in _store_batch(project, checked, actor, job, report, on_rows):
            _answers_import(task, pair, plan, job, report)

    import_batches(
        job=job,
        report=report,
        items=plan.tasks,
        source=source,
        run=run,
        done_before=len(plan.errors),
        progress=progress,
        summary=_summary,
    )
    _keep(project, plan, job, report)
    return report


def _keep(project: Project, plan: LSPlan, job: Job, report: LabelStudioReport) -> None:
    """The mapping and notes on the job (its page shows them); the profile on the project."""
    notes = [{"line": n.line, "id": n.external_id, "message": n.message} for n in report.notes]
    job.params = {**job.params, "mapping_used": report.mapping, "notes": notes}
    job.save(update_fields=["params"])
    if plan.config and report.imported:
        project.labelstudio = ExportProfile(plan.mapping, plan.values, plan.config).as_json()
        project.save(update_fields=["labelstudio"])


def _summary(report: LabelStudioReport) -> str:
    return (
        f"{len(report.imported)} of {report.rows} tasks imported with "
        f"{len(report.annotations)} annotations and {len(report.predictions)} predictions, "
        f"{len(report.errors)} problems, {len(report.notes)} notes"
    )


def _check_batch(
    project: Project,
    tasks: list[LSTask],
    source: ImageSource,
    finder: ImageFinder,
    seen: dict[tuple[str, str], int],
    report: LabelStudioReport,
) -> list[tuple[LSTask, CheckedPair]]:
    good = []
    with ThreadPoolExecutor(max_workers=CHECK_THREADS) as pool:
        outcomes = list(pool.map(lambda task: check_task(project, task, source, finder), tasks))
    for task, checked in zip(tasks, outcomes, strict=True):
        if isinstance(checked, PairRejected):
            report.errors.append(RowError(task.line, task.label, str(checked)))
            continue
        earlier = seen.get(checked.content_key)
        duplicate = None if earlier else pair_find_duplicate(project=project, checked=checked)
        if earlier or duplicate:
            what = f"pair {duplicate.pk}" if duplicate else f"task {earlier} (same images)"
            message = f"duplicate of {what}; its annotations were not imported"
            report.errors.append(RowError(task.line, task.label, message))
            continue
        seen[checked.content_key] = task.line
        good.append((task, checked))
    return good


def _store_batch(
    project: Project,
    batch: list[tuple[LSTask, CheckedPair]],
    actor,
    job: Job,
    report: LabelStudioReport,
    on_rows: Callable[[], None],
) -> list[tuple[LSTask, Pair]]:
    if not batch:
        return []
    items = [c for _, c in batch]
    try:
        pairs = pairs_store(project=project, checked=items, actor=actor, job=job, on_rows=on_rows)
        stored = [(task, pair) for (task, _), pair in zip(batch, pairs, strict=True)]
    except IntegrityError:
        # Another import stored one of these pairs meanwhile: retry task by task so only the
        # conflicting ones are reported and the rest of the batch still lands.
        stored = []
        for task, checked in batch:
            try:
                pair = pairs_store(project=project, checked=[checked], actor=actor, job=job)[0]
            except IntegrityError:
                message = (
                    "duplicate of a pair imported meanwhile; its annotations were not imported"
                )
                report.errors.append(RowError(task.line, task.label, message))
            else:
                stored.append((task, pair))
    report.imported.extend((task.line, pair.pk) for task, pair in stored)
    return stored


def _answers_import(
    task: LSTask, pair: Pair, plan: LSPlan, job: Job, report: LabelStudioReport
) -> None:
    """Check the task's annotations and predictions against the stored pair; write the good
    ones: predictions first (the pair is pre-annotated), then each annotation as a submission."""
    checked: Checked = check_answers(task, pair)
    report.errors.extend(checked.errors)
    report.notes.extend(checked.notes)
    for prediction, answer in checked.predictions:
        stored, _ = Prediction.objects.update_or_create(
            pair=pair,
            model_name=prediction.model,
            model_version="",
            defaults={
                "changes": answer.as_json()["changes"],
                "confidence": prediction.confidence,
                "flags": [],
                "error": "",
                "job": job,
            },
        )
        report.predictions.append((task.line, stored.pk))
    if checked.predictions:
        Pair.objects.filter(pk=pair.pk, status=PairStatus.IMPORTED).update(
            status=PairStatus.PRE_ANNOTATED
        )
    room = max(pair.project.overlap - pair.n_taken, 0)
    for annotation, _ in checked.annotations[room:]:  # no account made for work not taken
        overlap = pair.project.overlap
        why = f"{annotation.who}: the project takes {overlap} annotations per pair"
        report.errors.append(RowError(task.line, task.label, why))
    for annotation, answer in checked.annotations[:room]:
        try:
            user = _author(pair.project, annotation.annotator, plan)
            created = _submit(pair, user, annotation, answer, job)
        except (ImportUnusable, SubmitConflict, IntegrityError) as exc:
            why = f"{annotation.who}: {exc}"
            report.errors.append(RowError(task.line, task.label, why))
            continue
        if created is None:
            overlap = pair.project.overlap
            why = f"{annotation.who}: the project takes {overlap} annotations per pair"
            report.errors.append(RowError(task.line, task.label, why))
        else:
            report.annotations.append((task.line, created))


def _author(project: Project, annotator: str, plan: LSPlan):
    """The member the lead chose, or the project's no-login account for this Label Studio
    user, made an annotator of the project. Outside the submission's transaction, so a
    rolled-back submission never leaves a user cached that is not in the database."""
    user = plan.authors.get(annotator.lower())
    if user is not None:
        return user
    user = author_account(project, annotator)
    if not Membership.objects.filter(project=project, user=user).exists():
        membership_set(project=project, user=user, role=Role.ANNOTATOR)
    plan.authors[annotator.lower()] = user
    return user


@transaction.atomic
def _submit(pair: Pair, user, annotation, answer, job: Job) -> int | None:
    """Lease the pair for the author and submit the answer through ``annotation_submit``, as
    the annotator loop would; None (nothing written) when the pair is full."""
    pair = Pair.objects.select_related("project").get(pk=pair.pk)
    assignment = assignment_lease_pair(pair=pair, user=user)
    if assignment is None:
        return None
    body = {**annotation.as_answer(), "changes": answer.as_json()["changes"]}
    created, _ = annotation_submit(assignment_id=assignment.pk, user=user, body=body)
    PairEvent.objects.create(
        pair=pair,
        actor=user,
        kind=PairEventKind.IMPORTED_FROM_LABEL_STUDIO,
        detail={
            "annotation": created.pk,
            "job": job.pk,
            "label_studio": {"annotation": annotation.annotation_id, "user": annotation.annotator},
        },
    )
    return created.pk
