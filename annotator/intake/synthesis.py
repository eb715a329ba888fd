"""Synthesis: pairs with known answers made from a lead's own single photos, as a job.

The photos (a folder or a zip) are checked like every uploaded image; each becomes several
pairs, B being A with one programmatic change (pairdiff.synth.custom). The known answer is
stored as the pair's gold answer; with `gold` the pairs are also mixed into annotators' queues
as honeypots, otherwise they are regular pairs whose answer is known (a synthetic benchmark,
or a held-out set to measure pre-annotators against).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from annotator.intake.gold import gold_answer_set
from annotator.models import Pair
from annotator.priorities import queue_priorities_refresh
from annotator.services import PairInput, PairRejected, image_limits, pair_check, pairs_store
from jobs.lifecycle import job_create, job_finish, job_progress, job_start
from jobs.models import Job, JobKind, JobStatus
from jobs.registry import job_enqueue_on_commit
from pairdiff.images import ImageRejected, inspect_image
from pairdiff.sources import ImageSource, SourceError, open_source
from pairdiff.synth.base import SynthChange, SynthPair
from pairdiff.synth.custom import CATEGORIES, Photo, PhotoUnusable, photo_load, plan, synthesize
from projects.models import Project

MAX_PER_IMAGE = 50
MAX_ZIP_BYTES = 2 * 1024**3


class SynthesisUnusable(ValueError):
    """Options or an images source that cannot be used at all. ``field`` names the input at
    fault (when one is), ``reason`` says why; str() is "field: reason"."""

    def __init__(self, reason: str, *, field: str = "") -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class SynthesisOptions:
    per_image: int = 10
    categories: tuple[str, ...] = CATEGORIES
    gold: bool = False
    seed: int = 0

    def as_params(self) -> dict:
        return {
            "per_image": self.per_image,
            "categories": list(self.categories),
            "gold": self.gold,
            "seed": self.seed,
        }


def synthesis_options(
    *, per_image: int = 10, categories: list[str] | None = None, gold: bool = False, seed: int = 0
) -> SynthesisOptions:
    """Checked options; SynthesisUnusable names the bad one."""
    if not 1 <= per_image <= MAX_PER_IMAGE:
        raise SynthesisUnusable(
            f"between 1 and {MAX_PER_IMAGE}, got {per_image}", field="per_image"
        )
    chosen = tuple(dict.fromkeys(categories or CATEGORIES))
    unknown = [c for c in chosen if c not in CATEGORIES]
    if unknown:
        raise SynthesisUnusable(
            f"unknown {', '.join(unknown)} (known: {', '.join(CATEGORIES)})", field="categories"
        )
    if not 0 <= seed < 2**32:
        raise SynthesisUnusable(f"between 0 and {2**32 - 1}, got {seed}", field="seed")
    return SynthesisOptions(per_image=per_image, categories=chosen, gold=gold, seed=seed)


def synthesis_queue(
    *, project: Project, images: UploadedFile, options: SynthesisOptions, user=None
) -> Job:
    """Store the zip of photos and queue the synthesis job (after commit)."""
    # An upload always has a name and a size; the stubs allow None for files in general.
    if not (images.name or "").lower().endswith(".zip"):
        raise SynthesisUnusable("send the photos as one .zip file", field="images")
    if (images.size or 0) > MAX_ZIP_BYTES:
        raise SynthesisUnusable("the zip is over 2 GB", field="images")
    with transaction.atomic():
        job = job_create(
            kind=JobKind.SYNTHESIZE, project=project, user=user, params=options.as_params()
        )
        stored = default_storage.save(f"synth/{project.slug}/{job.pk}/images.zip", images)
        job.params = {**job.params, "images": stored}
        job.save(update_fields=["params"])
        # Minutes of work for a big zip: a worker's, or without a broker after the response.
        job_enqueue_on_commit(job, after_response=True)
    return job


@dataclass
class SynthesisReport:
    created: list[Pair] = field(default_factory=list)
    duplicates: int = 0
    errors: list[dict] = field(default_factory=list)  # {"id", "message"} per photo or slot
    by_category: Counter[str] = field(default_factory=Counter)
    planned: int = 0

    @property
    def complete(self) -> bool:
        return not self.errors


def synthesis_run(
    *,
    project: Project,
    images: str | os.PathLike[str],
    options: SynthesisOptions,
    job: Job,
    actor=None,
    progress: Callable[[int, int], None] | None = None,
) -> SynthesisReport:
    """Make and store the pairs, reporting progress on the job (and to `progress`); a pair
    already there (same key or same content) is counted as a duplicate and never stored twice.
    SynthesisUnusable when the source cannot be read at all (the job fails with the reason)."""
    report = SynthesisReport()
    try:
        source = open_source(Path(images), max_entry_bytes=image_limits().max_bytes)
    except SourceError as exc:
        job_finish(job, status=JobStatus.FAILED, message=str(exc))
        raise SynthesisUnusable(str(exc)) from exc
    with source:
        try:
            names = _usable_photos(source, report)
        except SynthesisUnusable as exc:
            job_finish(job, status=JobStatus.FAILED, errors=report.errors[:1000], message=str(exc))
            raise
        slots = plan(len(names), options.per_image, list(options.categories))
        report.planned = len(slots)
        job_start(job, total=len(slots))
        current: tuple[str, Photo | str] = ("", "")  # one photo in memory at a time
        for done, slot in enumerate(slots, start=1):
            if done % 10 == 1 and _cancelled(job):
                job_finish(job, status=JobStatus.CANCELLED, message=_summary(report, done - 1))
                return report
            name = names[slot.photo]
            if current[0] != name:
                current = (name, _load(source, name))
            photo = current[1]
            if isinstance(photo, str):
                report.errors.append({"id": f"{name} #{slot.index}", "message": photo})
            else:
                outcome = synthesize(photo, slot, seed=options.seed)
                if outcome.pair is None:
                    reasons = "; ".join(outcome.problems[-2:])
                    report.errors.append(
                        {"id": f"{name} #{slot.index}", "message": f"{slot.category}: {reasons}"}
                    )
                else:
                    _store(project, outcome.pair, options, job, actor, report)
            job_progress(job, done=done)
            if progress:
                progress(done, len(slots))
    queue_priorities_refresh(project=project)
    status = JobStatus.SUCCEEDED if report.created or report.duplicates else JobStatus.FAILED
    job_finish(
        job,
        status=status,
        result={
            "created": len(report.created),
            "duplicates": report.duplicates,
            "skipped": len(report.errors),
            "by_category": dict(report.by_category),
        },
        errors=report.errors[:1000],
        message=_summary(report, len(slots)),
    )
    return report


def _usable_photos(source: ImageSource, report: SynthesisReport) -> list[str]:
    """Names of the photos that pass the upload checks (in name order); the rest reported."""
    usable = []
    limits = image_limits()
    for name in source.names():
        if Path(name).name.startswith("."):
            continue  # __MACOSX/._photo.jpg and other hidden companions
        try:
            inspect_image(source.read(name), limits)
        except ImageRejected as exc:
            report.errors.append({"id": name, "message": str(exc)})
            continue
        usable.append(name)
    if not usable:
        raise SynthesisUnusable("no usable photo (JPEG, PNG, WebP, TIFF or BMP)", field="images")
    return usable


def _load(source: ImageSource, name: str) -> Photo | str:
    """The photo, or why it cannot be used (its slots are reported as skipped)."""
    try:
        return photo_load(source.read(name), name, max_pixels=image_limits().max_pixels)
    except (PhotoUnusable, ImageRejected) as exc:
        return str(exc)


def _cancelled(job: Job) -> bool:
    return Job.objects.filter(pk=job.pk, status=JobStatus.CANCELLED).exists()


def _summary(report: SynthesisReport, done: int) -> str:
    return (
        f"{len(report.created)} pairs made from {done} of {report.planned} planned, "
        f"{report.duplicates} already there, {len(report.errors)} skipped"
    )


def _category(project: Project, change: SynthChange) -> str:
    """The change's category in the project's taxonomy (VDiff-Bench's or MinCU's slug)."""
    slugs = project.category_slugs
    for slug in (change.category, change.mincu_category):
        if slug in slugs:
            return slug
    return ""


def _store(
    project: Project,
    synth: SynthPair,
    options: SynthesisOptions,
    job: Job,
    actor,
    report: SynthesisReport,
) -> None:
    if Pair.objects.filter(project=project, external_id=synth.key).exists():
        report.duplicates += 1
        return
    pair_input = PairInput(
        image_a=synth.image_a,
        image_b=synth.image_b,
        external_id=synth.key,
        instruction=synth.instruction,
        metadata={"synthesized": dict(synth.source)},
    )
    try:
        checked = pair_check(project=project, pair_input=pair_input)
    except PairRejected as exc:
        report.errors.append({"id": synth.key, "message": str(exc)})
        return
    sha_a, sha_b = checked.content_key
    if Pair.objects.filter(project=project, sha256_a=sha_a, sha256_b=sha_b).exists():
        report.duplicates += 1
        return
    with transaction.atomic():
        pair = pairs_store(project=project, checked=[checked], actor=actor, job=job)[0]
        gold_answer_set(
            pair=pair,
            source="synthesized",
            changes=[_answer(project, c) for c in synth.changes],
            mixed_in=options.gold,
        )
    report.created.append(pair)
    report.by_category[synth.changes[0].category] += 1


def _answer(project: Project, c: SynthChange) -> dict:
    return {
        "category": _category(project, c),
        "description": c.description,
        "entity_a": c.entity_a,
        "entity_b": c.entity_b,
        "boxes_a": [list(b) for b in c.boxes_a],
        "boxes_b": [list(b) for b in c.boxes_b],
    }
