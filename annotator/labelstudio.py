"""Import of a Label Studio JSON export: its pairs, and the annotations made on them in Label
Studio as submitted annotations of users named ``labelstudio-<Label Studio user>``."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotator.importing import (
    CHECK_THREADS,
    ImportReport,
    ImportUnusable,
    Progress,
    import_batches,
)
from annotator.jobs import job_finish
from annotator.models import (
    OPEN_STATUSES,
    Annotation,
    Assignment,
    AssignmentState,
    Change,
    Job,
    JobStatus,
    Membership,
    Pair,
    PairEvent,
    PairStatus,
    Project,
    Role,
)
from annotator.services import (
    CheckedPair,
    PairInput,
    PairRejected,
    image_limits,
    membership_set,
    pair_check,
    pair_find_duplicate,
    pairs_store,
    user_ensure,
)

# Private, but it is the one place that decides when agreement and gold scoring run after a
# submission; a copy here would drift from it.
from annotator.submitting import _enqueue_review, answer_rules
from pairdiff.answers import Answer, AnswerInvalid, parse_answer
from pairdiff.geometry import Frame
from pairdiff.images import ImageRejected
from pairdiff.labelstudio import (
    ImageFinder,
    ImageNotFound,
    LSAnnotation,
    LSTask,
    LSUnusable,
    read_export,
    task_in_frames,
)
from pairdiff.manifest import RowError
from pairdiff.sources import ImageSource, SourceError, open_source

USERNAME_PREFIX = "labelstudio-"
_USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")


@dataclass
class LabelStudioReport(ImportReport):
    """rows are tasks; imported are pairs; annotations are (line, annotation id)."""

    annotations: list[tuple[int, int]] = field(default_factory=list)

    def as_result(self) -> dict[str, int]:
        return {**super().as_result(), "annotations": len(self.annotations)}


def labelstudio_username(annotator: str) -> str:
    """The Diffmark user for a Label Studio user: ``labelstudio-7``, ``labelstudio-ann@x.org``."""
    return USERNAME_PREFIX + _USERNAME_UNSAFE.sub("_", annotator)[: 150 - len(USERNAME_PREFIX)]


def labelstudio_import(
    *,
    project: Project,
    export: bytes,
    images: str | os.PathLike[str],
    job: Job,
    actor=None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import every task whose images pass, then the annotations made on it; report the rest.

    Tasks are checked like a manifest's rows and stored in atomic batches; a pair already in
    the project (same images) is reported and gets no annotations. Each pair's annotations are
    checked like a submission and written in one transaction, at most ``project.overlap`` of
    them; a bad one is reported and writes nothing, the pair stays. Agreement is enqueued on
    commit as after a submission. Raises ImportUnusable (and fails the job) for unusable input.
    """
    try:
        tasks, errors = read_export(export)
        source = open_source(images, max_entry_bytes=image_limits().max_bytes)
    except (LSUnusable, SourceError) as exc:
        job_finish(job, status=JobStatus.FAILED, message=str(exc))
        raise ImportUnusable(str(exc)) from exc
    report = LabelStudioReport(rows=len(tasks) + len(errors), errors=list(errors))
    seen: dict[tuple[str, str], int] = {}
    users: dict[str, object] = {}
    finder = ImageFinder(source.names())

    def run(batch: list[LSTask]) -> None:
        checked = _check_batch(project, batch, source, finder, seen, report)
        for task, pair in _store_batch(project, checked, actor, job, report):
            _annotations_import(task, pair, users, job, report)

    return import_batches(
        job=job,
        report=report,
        items=tasks,
        source=source,
        run=run,
        done_before=len(errors),
        progress=progress,
        summary=_summary,
    )


def _summary(report: LabelStudioReport) -> str:
    return (
        f"{len(report.imported)} of {report.rows} tasks imported with "
        f"{len(report.annotations)} annotations, {len(report.errors)} problems"
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
        outcomes = list(pool.map(lambda task: _check_outcome(project, task, source, finder), tasks))
    for task, checked in zip(tasks, outcomes, strict=True):
        if isinstance(checked, PairRejected):
            report.errors.append(RowError(task.line, task.label, str(checked)))
            continue
        earlier = seen.get(checked.content_key)
        duplicate = None if earlier else pair_find_duplicate(project=project, checked=checked)
        if earlier or duplicate:
            what = f"task {earlier} (same images)" if earlier else f"pair {duplicate.pk}"
            message = f"duplicate of {what}; its annotations were not imported"
            report.errors.append(RowError(task.line, task.label, message))
            continue
        seen[checked.content_key] = task.line
        good.append((task, checked))
    return good


def _check_outcome(
    project: Project, task: LSTask, source: ImageSource, finder: ImageFinder
) -> CheckedPair | PairRejected:
    data, names = {}, []
    try:
        for side, reference in (("image_a", task.image_a), ("image_b", task.image_b)):
            try:
                name = finder.find(reference)
                data[side] = source.read(name)
            except (ImageNotFound, ImageRejected) as exc:
                raise PairRejected(f"{side}: {exc}") from exc
            names.append(name)
        pair_input = PairInput(
            image_a=data["image_a"],
            image_b=data["image_b"],
            external_id=task.external_id,
            metadata={**task.metadata, "source_files": names},
        )
        return pair_check(project=project, pair_input=pair_input)
    except PairRejected as exc:
        return exc


def _store_batch(
    project: Project,
    batch: list[tuple[LSTask, CheckedPair]],
    actor,
    job: Job,
    report: LabelStudioReport,
) -> list[tuple[LSTask, Pair]]:
    if not batch:
        return []
    try:
        pairs = pairs_store(project=project, checked=[c for _, c in batch], actor=actor, job=job)
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


def _annotations_import(
    task: LSTask, pair: Pair, users: dict[str, object], job: Job, report: LabelStudioReport
) -> None:
    """Check the task's annotations against the stored pair and write the good ones."""
    frames = Frame(pair.width_a, pair.height_a), Frame(pair.width_b, pair.height_b)
    task, problems = task_in_frames(task, *frames)
    report.errors.extend(problems)
    rules, names = answer_rules(pair), _category_names(pair.project)
    good: list[tuple[LSAnnotation, Answer]] = []
    for annotation in task.annotations:
        try:
            if not annotation.annotator:
                raise ValueError("completed_by does not say who made it")
            good.append((annotation, parse_answer(_answer_body(annotation, names), rules)))
        except ValueError as exc:  # AnswerInvalid too
            _reject(report, task, annotation, _problem(exc))
    if not good:
        return
    for annotation, _ in good[: pair.project.overlap]:
        _annotator_user(pair.project, annotation.annotator, users)
    try:
        created = _annotations_store(pair, good, users, job)
    except IntegrityError as exc:
        message = f"the annotations could not be stored ({exc}); the pair has none"
        report.errors.append(RowError(task.line, task.label, message))
        return
    report.annotations.extend((task.line, a.pk) for a in created)
    overlap = pair.project.overlap
    for annotation, _ in good[len(created) :]:
        _reject(report, task, annotation, f"the project takes {overlap} annotations per pair")


def _problem(exc: ValueError) -> str:
    if isinstance(exc, AnswerInvalid):
        return "; ".join(f"{path}: {m[0]}" if path else m[0] for path, m in exc.fields.items())
    return str(exc)


def _reject(report: LabelStudioReport, task: LSTask, annotation: LSAnnotation, why: str) -> None:
    report.errors.append(RowError(task.line, task.label, f"{annotation.who}: {why}"))


def _category_names(project: Project) -> dict[str, str]:
    """Category slugs by slug and by name, lower case: Label Studio labels are often names."""
    names = {}
    for category in project.categories:
        names[category["name"].strip().lower()] = category["slug"]
        names[category["slug"].lower()] = category["slug"]
    return names


def _answer_body(annotation: LSAnnotation, names: dict[str, str]) -> dict:
    body = annotation.as_answer()
    for change in body["changes"]:
        change["category"] = names.get(change["category"].strip().lower(), change["category"])
    return body


def _annotator_user(project: Project, annotator: str, users: dict[str, object]):
    """The user for a Label Studio user, made an annotator of the project unless a member.

    Called outside the annotations' transaction, so a rollback never leaves a cached user that
    is not in the database.
    """
    if annotator not in users:
        user = user_ensure(username=labelstudio_username(annotator))  # no usable password
        if not Membership.objects.filter(project=project, user=user).exists():
            membership_set(project=project, user=user, role=Role.ANNOTATOR)
        users[annotator] = user
    return users[annotator]


@transaction.atomic
def _annotations_store(
    pair: Pair, good: list[tuple[LSAnnotation, Answer]], users: dict[str, object], job: Job
) -> list[Annotation]:
    """Write submitted assignments and annotations, as the annotator loop would have, as many
    as the pair has room for (the first ones).

    Takes the pair's row lock; keeps n_taken and n_submitted in step and enqueues agreement
    on commit through the same rule as a submission.
    """
    pair = Pair.objects.select_for_update().select_related("project").get(pk=pair.pk)
    room = max(pair.project.overlap - pair.n_taken, 0)
    now = timezone.now()
    created = []
    for ls, answer in good[:room]:
        user = users[ls.annotator]
        assignment = Assignment.objects.create(
            pair=pair,
            annotator=user,
            state=AssignmentState.SUBMITTED,
            expires_at=now,
            submitted_at=now,
        )
        annotation = Annotation.objects.create(
            assignment=assignment,
            pair=pair,
            annotator=user,
            tier=answer.tier,
            defects=list(answer.defects),
            time_spent_ms=answer.time_spent_ms,
        )
        Change.objects.bulk_create(
            Change(annotation=annotation, position=i, **change.as_json())
            for i, change in enumerate(answer.changes)
        )
        PairEvent.objects.create(
            pair=pair,
            actor=user,
            kind="submitted",
            detail={
                "annotation": annotation.pk,
                "job": job.pk,
                "label_studio": {"annotation": ls.annotation_id, "user": ls.annotator},
            },
        )
        _enqueue_review(pair, annotation)  # reads n_submitted as it was before this one
        pair.n_taken += 1
        pair.n_submitted += 1
        created.append(annotation)
    if pair.status in OPEN_STATUSES:
        pair.status = PairStatus.IN_ANNOTATION
    pair.save(update_fields=["n_taken", "n_submitted", "status", "updated_at"])
    return created
