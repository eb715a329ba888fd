"""Bulk import of pairs from a manifest (JSONL or CSV) and images in a folder or a zip."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from django.db import DatabaseError, IntegrityError

from annotator.intake.checks import Outcome, RowChecker
from annotator.services import (
    CheckedPair,
    PairRejected,
    image_limits,
    pairs_find_duplicates,
    pairs_store,
)
from config.middleware import DB_UNAVAILABLE
from jobs.lifecycle import job_finish, job_progress, job_start
from jobs.models import Job, JobStatus
from pairdiff.manifest import ManifestRow, ManifestUnusable, RowError, parse_manifest
from pairdiff.sources import ImageSource, SourceError, open_source
from projects.models import Project

log = logging.getLogger(__name__)
# Rows stored in one transaction, and progress written after each; the image bytes of
# (1 + checks.AHEAD) batches are in memory at once.
BATCH_SIZE = 25
Progress = Callable[[int, int], None]


class ImportUnusable(ValueError):
    """The input cannot be used at all (no manifest, unreadable source); nothing was written.
    ``field`` names the upload at fault ("manifest", "images", "config", "mapping") when known."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass
class ImportReport:
    rows: int = 0
    imported: list[tuple[int, int]] = field(default_factory=list)  # (line, pair id)
    errors: list[RowError] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.errors

    def as_result(self) -> dict[str, int]:
        return {"rows": self.rows, "imported": len(self.imported), "rejected": len(self.errors)}

    def errors_as_json(self) -> list[dict[str, object]]:
        return [{"line": e.line, "id": e.external_id, "message": e.message} for e in self.errors]


R = TypeVar("R", bound=ImportReport)  # import_batches hands its summary the report it was given


def pairs_import(
    *,
    project: Project,
    manifest: bytes,
    manifest_name: str = "",
    images: str | os.PathLike[str],
    job: Job,
    actor=None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import every good row; report every bad one with its reason.

    Rows are checked outside any transaction (decoding images is slow), then written in atomic
    batches. Duplicates, by content or by external id, are reported and never stored twice.
    Raises ImportUnusable (and fails the job) when the manifest or the image source is unusable.
    """
    try:
        rows, errors = parse_manifest(manifest, filename=manifest_name)
        source = open_source(images, max_entry_bytes=image_limits().max_bytes)
    except (ManifestUnusable, SourceError) as exc:
        job_finish(job, status=JobStatus.FAILED, message=str(exc))
        raise ImportUnusable(str(exc)) from exc
    report = ImportReport(rows=len(rows) + len(errors), errors=list(errors))
    seen: dict[tuple[str, str], int] = {}
    checker = RowChecker(
        batches(rows),
        images=images,
        source=source,
        limits=image_limits(),
        categories=project.category_slugs,
    )

    def run(batch: list[ManifestRow], on_rows: Callable[[], None]) -> None:
        outcomes = checker.outcomes(batch)
        accepted = _accept(project, batch, outcomes, seen, report)
        _store_batch(project, accepted, actor, job, report, on_rows)

    with checker:
        return import_batches(
            job=job,
            report=report,
            items=rows,
            source=source,
            run=run,
            done_before=len(errors),
            progress=progress,
            summary=_summary,
        )


def import_batches(
    *,
    job: Job,
    report: R,
    items: list,
    source: ImageSource,
    run: Callable[[list, Callable[[], None]], None],
    done_before: int,
    progress: Progress | None,
    summary: Callable[[R], str],
) -> R:
    """``run`` over ``items`` in batches of BATCH_SIZE with the source open, reporting progress
    on the job; the job ends failed with what was done if anything raises, else succeeded.
    ``run(batch, on_rows)`` calls ``on_rows`` inside the transaction that stores the batch's
    rows, so a process killed between the two never leaves a job saying less than it kept."""
    job_start(job, total=report.rows)
    done = done_before
    try:
        with source:
            for batch in batches(items):
                after = done + len(batch)
                run(batch, partial(job_progress, job, done=after))
                done = after
                job_progress(job, done=done)  # also when the batch stored no row
                if progress:
                    progress(done, report.rows)
    except BaseException as exc:
        job_finish(
            job,
            status=JobStatus.FAILED,
            result=report.as_result(),
            errors=report.errors_as_json(),
            message=_stopped(exc, report),
        )
        raise
    report.errors.sort(key=lambda e: e.line)
    job_finish(
        job,
        status=JobStatus.SUCCEEDED,
        result=report.as_result(),
        errors=report.errors_as_json(),
        message=summary(report),
    )
    return report


def batches(items: list) -> list[list]:
    """The items in batches of BATCH_SIZE, the order import_batches runs them in."""
    return [items[start : start + BATCH_SIZE] for start in range(0, len(items), BATCH_SIZE)]


def _stopped(exc: BaseException, report: ImportReport) -> str:
    """Why the job stopped, in words; never a database's own message (it names tables, columns
    and values), which is logged instead."""
    kept = f"{len(report.imported)} pairs imported before it stopped are kept"
    if isinstance(exc, DB_UNAVAILABLE):
        return f"stopped: the database became unreachable; {kept}; import the manifest again"
    if isinstance(exc, DatabaseError):
        log.warning("an import stopped by the database: %r", exc)
        return f"stopped: the database refused a write (logged); {kept}"
    return f"stopped: {exc!r}; {kept}"


def _summary(report: ImportReport) -> str:
    return f"{len(report.imported)} of {report.rows} rows imported, {len(report.errors)} rejected"


def _accept(
    project: Project,
    rows: list[ManifestRow],
    outcomes: list[Outcome],
    seen: dict[tuple[str, str], int],
    report: ImportReport,
) -> list[tuple[ManifestRow, CheckedPair]]:
    """The rows to store: checked, and neither an earlier row's images nor an existing pair."""
    checked = [c for c in outcomes if not isinstance(c, PairRejected)]
    existing = iter(pairs_find_duplicates(project=project, checked=checked))
    good = []
    for row, outcome in zip(rows, outcomes, strict=True):
        if isinstance(outcome, PairRejected):
            report.errors.append(RowError(row.line, row.external_id, str(outcome)))
            continue
        duplicate = next(existing)
        earlier = seen.get(outcome.content_key)
        if earlier is not None:
            message = f"duplicate of line {earlier} (same images)"
            report.errors.append(RowError(row.line, row.external_id, message))
            continue
        if duplicate is not None:
            message = (
                f"duplicate of existing pair {duplicate.pk} ({duplicate.external_id or duplicate})"
            )
            report.errors.append(RowError(row.line, row.external_id, message))
            continue
        seen[outcome.content_key] = row.line
        good.append((row, outcome))
    return good


def _store_batch(
    project: Project,
    batch: list[tuple[ManifestRow, CheckedPair]],
    actor,
    job: Job,
    report: ImportReport,
    on_rows: Callable[[], None],
) -> None:
    if not batch:
        return
    items = [c for _, c in batch]
    try:
        pairs = pairs_store(project=project, checked=items, actor=actor, job=job, on_rows=on_rows)
    except DB_UNAVAILABLE:
        raise  # the database is gone, not a row: the job fails and says so
    except DatabaseError:
        # Another import stored one of these pairs meanwhile, or the database refused one row's
        # values: retry row by row so only those rows are reported and the rest still lands.
        for row, checked in batch:
            try:
                pair = pairs_store(project=project, checked=[checked], actor=actor, job=job)[0]
            except DB_UNAVAILABLE:
                raise
            except DatabaseError as exc:
                report.errors.append(RowError(row.line, row.external_id, _refusal(exc)))
            else:
                report.imported.append((row.line, pair.pk))
        return
    report.imported.extend((row.line, pair.pk) for (row, _), pair in zip(batch, pairs, strict=True))


def _refusal(exc: DatabaseError) -> str:
    """The reason in words, never the database's own message (it names tables and values)."""
    if isinstance(exc, IntegrityError):
        return "duplicate of a pair imported meanwhile"
    log.warning("import row refused by the database: %r", exc)
    return "the database refused a value of this row (its text or metadata); fix and import again"


def read_manifest(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImportUnusable(f"cannot read manifest {path}: {exc.strerror or exc}") from exc
