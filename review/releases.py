"""Building releases: accepted pairs → files in storage, records and a manifest, all or nothing."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotator.models import Annotation, Pair, PairStatus
from config.storage import local_path
from jobs.lifecycle import job_claim, job_create, job_finish, job_progress, job_start
from jobs.models import Job, JobKind, JobStatus
from jobs.registry import work_enqueue_on_commit
from jobs.sweeps import jobs_orphaned, jobs_stale, orphan_message
from pairdiff.geometry import Frame
from pairdiff.release.build import (
    Previous,
    ReleaseFiles,
    ReleaseMeta,
    manifest,
    release_files,
    sha256,
)
from pairdiff.release.hf import config_rows
from pairdiff.release.options import ReleaseOptions, strict_filter
from pairdiff.release.publish import research_parts
from pairdiff.release.records import ReleasePair
from pairdiff.release.sources import difference_hash, source_groups
from pairdiff.release.splits import SPLITS, SplitPlan
from projects.members import SIMULATED_ANNOTATORS
from projects.models import Project
from review.models import QuestionEdit, Release, ReleaseRecord, ReleaseStatus
from review.release_workers import BuildWorkers, LaterNegatives, workers_usable
from review.standing import Standing, standing_answers
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit

log = logging.getLogger(__name__)

EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp", "TIFF": "tif", "BMP": "bmp"}
RECORDS_BATCH = 1000
COPIERS = 2  # threads checking and copying originals (I/O and hashing release the GIL)
COPY_BATCH = 100  # originals per copying task
WRITERS = 2  # threads writing and hashing the built files while the next is made


class ReleaseRefused(ValueError):
    """A release that cannot be made as asked; the message is meant for people, ``field``
    names the input at fault when there is one, ``pairs`` the pairs (ids) to fix, if any."""

    def __init__(self, message: str, *, field: str = "", pairs: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.field = field
        self.pairs = list(pairs)


def release_create(
    *,
    project: Project,
    name: str,
    plan: SplitPlan,
    user=None,
    options: ReleaseOptions | None = None,
) -> Release:
    """Register a release and queue its build on the workers."""
    with transaction.atomic():
        release = release_register(
            project=project, name=name, plan=plan, user=user, options=options
        )
        _enqueue(release)
    return release


def release_register(
    *,
    project: Project,
    name: str,
    plan: SplitPlan,
    user=None,
    options: ReleaseOptions | None = None,
) -> Release:
    """A new release in state building, with the project's next version number and a job;
    the caller runs ``release_build`` or queues it. ``options`` without a baseline limit of
    its own get the project's."""
    options = release_options(project=project, options=options)
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise ReleaseRefused("give the release a name of 1 to 100 characters", field="name")
    if not Pair.objects.filter(project=project, status=PairStatus.ACCEPTED).exists():
        raise ReleaseRefused("the project has no accepted pairs to release yet")
    try:
        with transaction.atomic():
            Project.objects.select_for_update().get(pk=project.pk)  # one version at a time
            if Release.objects.filter(project=project, name=name).exists():
                raise ReleaseRefused(
                    f"a release named “{name}” exists already; releases are "
                    "immutable, choose another name",
                    field="name",
                )
            last = Release.objects.filter(project=project).aggregate(v=Max("version"))["v"]
            job = job_create(kind=JobKind.RELEASE, project=project, user=user)
            release = Release.objects.create(
                project=project,
                name=name,
                version=(last or 0) + 1,
                plan=plan.as_json(),
                options=options.as_json(),
                job=job,
                created_by=user,
            )
            job.params = {
                "release": release.pk,
                "name": name,
                **plan.as_json(),
                "options": options.as_json(),
            }
            job.save(update_fields=["params"])
    except IntegrityError as exc:  # a concurrent request took the name or version
        raise ReleaseRefused(f"a release named “{name}” exists already", field="name") from exc
    return release


def release_options(*, project: Project, options: ReleaseOptions | None) -> ReleaseOptions:
    """The options a release is built with: the project's baseline limit and (unless asked
    for another) control rate, the rest as asked."""
    asked = options or ReleaseOptions()
    return ReleaseOptions(
        strict=asked.strict,
        strict_no_lead=asked.strict_no_lead,
        swap_ab=asked.swap_ab,
        baseline_limit=project.question_baseline_limit,
        allow_baselines=asked.allow_baselines,
        control_rate=asked.control_rate or project.question_control_rate,
    )


def release_retry(*, release: Release, user=None) -> Release:
    """Build a failed release again, under a new job."""
    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release.pk)
        if release.status != ReleaseStatus.FAILED:
            raise ReleaseRefused("only a failed release can be built again")
        release.job = job_create(
            kind=JobKind.RELEASE,
            project=release.project,
            user=user,
            params={"release": release.pk, "name": release.name, "retry": True, **release.plan},
        )
        release.status = ReleaseStatus.BUILDING
        release.message = ""
        release.save(update_fields=["job", "status", "message"])
        _enqueue(release)
    return release


def _enqueue(release: Release) -> None:
    # Watched: the releases page shows the build's progress (without a broker the build runs
    # once the page is sent, not before it).
    work_enqueue_on_commit(JobKind.RELEASE, release.pk, after_response=True)


def release_build(release_id: int, *, storage: Storage | None = None) -> Release:
    """Write every file, then make records and manifest visible in one transaction.

    Safe to run twice: a ready release is left alone, a build claims its job so a message sent
    twice builds once, and a build clears the release's folder first. A worker killed mid-build
    leaves nothing visible; ``releases_fail_stale`` fails that build, and a retry starts over.
    """
    storage = storage or default_storage
    release = Release.objects.select_related("project", "job").get(pk=release_id)
    if release.status != ReleaseStatus.BUILDING:
        return release
    job = release.job
    if job is not None and not job_claim(job):
        return release  # another delivery is building it, or its build was failed as stale
    try:
        _storage_clear(storage, release.prefix)
        built, written = _build(release, storage, job)
        clock = _Stages(release.pk)
        with transaction.atomic():
            if not _owned(release, job, lock=True):
                log.warning("release %s was failed as stale meanwhile: not published", release.pk)
                return release
            _records_insert(release, built)
            release.manifest = written
            release.status = ReleaseStatus.READY
            release.ready_at = timezone.now()
            release.save(update_fields=["manifest", "status", "ready_at"])
            webhook_emit(release.project, EventKind.RELEASE_READY, ObjectKind.RELEASE, release)
            if job:
                job_finish(
                    job,
                    status=JobStatus.SUCCEEDED,
                    result={
                        "release": release.pk,
                        "pairs": built.counts["total"],
                        **built.counts["splits"],
                    },
                    message=f"Release {release.name} is ready: {built.counts['total']} pairs"
                    + _warned(built.report.get("warnings", [])),
                )
        clock.done("records and manifest published")
    except ReleaseRefused as exc:  # the message is meant for people as it is
        log.warning("release %s refused: %s", release.pk, exc)
        _release_fail(release, storage, str(exc), pairs=exc.pairs)
    except Exception as exc:
        log.exception("release %s failed", release.pk)
        _release_fail(release, storage, f"{type(exc).__name__}: {exc}")
    return release


def _records_insert(release: Release, built: ReleaseFiles) -> None:
    """The release's records, in the caller's transaction: on PostgreSQL by COPY, with each
    record's JSON as benchmark.json holds it (one per line; a 10,000-pair release's
    bulk_create quoted every value in Python for seconds)."""
    records = built.records
    texts = _record_texts(built.files.get("benchmark.json", b""), len(records))
    if connection.vendor != "postgresql" or texts is None:
        ReleaseRecord.objects.bulk_create(
            (
                ReleaseRecord(
                    release=release,
                    pair_id=record["pair_id"],
                    position=i,
                    split=record["split"],
                    category=record["category"],
                    difficulty=record["difficulty"] or "",
                    data=record,
                )
                for i, record in enumerate(records)
            ),
            batch_size=RECORDS_BATCH,
        )
        return
    names = ("release_id", "pair_id", "position", "split", "category", "difficulty", "data")
    columns = ", ".join(connection.ops.quote_name(column) for column in names)
    table = connection.ops.quote_name(ReleaseRecord._meta.db_table)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for i, (record, text) in enumerate(zip(records, texts, strict=True)):
            copy.write_row(
                (
                    release.pk,
                    record["pair_id"],
                    i,
                    record["split"],
                    record["category"],
                    record["difficulty"] or "",
                    text,
                )
            )


def _record_texts(benchmark: bytes, count: int) -> list[str] | None:
    """Each record's JSON text from benchmark.json (``build._json``: a line per record; the
    released records first, then the order-swapped copy of the test split, which has no rows),
    or None when the file does not hold ``count`` of them that way."""
    lines = benchmark.decode().split("\n")
    if count == 0 or len(lines) < count + 3 or lines[0] != "[" or lines[-2:] != ["]", ""]:
        return None
    body = lines[1:-2]
    if not all(line.endswith(",") for line in body[:-1]) or body[-1].endswith(","):
        return None
    return [line.removesuffix(",") for line in body[:count]]


def _build(release: Release, storage: Storage, job) -> tuple[ReleaseFiles, dict]:
    project = release.project
    clock = _Stages(release.pk)
    standing = list(standing_answers(Pair.objects.filter(project=project)))
    clock.done("standing answers")
    if job:
        job_start(job, total=len(standing) + 1)
    plan = SplitPlan(**{**release.plan, "test_ratio": _ratio(release.plan.get("test_ratio"))})
    meta = ReleaseMeta(
        project_slug=project.slug,
        project_name=project.name,
        release_name=release.name,
        version=release.version,
        categories=tuple(project.categories),
        licence=project.licence,
        description=project.description,
        labelstudio=project.labelstudio or None,
        rules={
            "tier_rule": project.tier_rule,
            "tier_rule_label": project.get_tier_rule_display(),
            "overlap": project.overlap,
            "iou_threshold": project.iou_threshold,
            **annotator_counts(standing),
        },
    )
    pairs = [release_pair(s) for s in standing]
    options = ReleaseOptions.from_json(release.options)
    # The images (and their lines in the manifest) are those of the pairs released: a pair the
    # strict rule leaves out is counted in the report, its images are not shipped.
    standing = _shipped(standing, pairs, options)
    # The originals are checked and copied beside this thread, which makes the data files:
    # in a worker process when folder and originals are on local disk (release_workers),
    # in threads otherwise. A failure of either stops both before the caller clears the
    # folder, and a refusal of the questions comes first, as it would if the copies came after.
    workers = (
        BuildWorkers(
            standing,
            release.prefix,
            storage,
            copy_image=_copy_image,
            image_path=image_path,
            store_all=_store_all,
        )
        if workers_usable(standing, release.prefix, storage)
        else None
    )
    failed = True
    try:
        built, files = _write_files(
            release, storage, job, clock, standing, workers, pairs, plan, meta, options
        )
        failed = False
    finally:
        if workers:
            workers.close(failed=failed)
    clock.done("Parquet, TSVs, lmms-eval, croissant")
    data = manifest(
        meta=meta,
        plan=plan,
        counts=built.counts,
        stats=built.stats,
        notes=built.notes,
        files=files,
        report=built.report,
    )
    _write(storage, f"{release.prefix}/manifest.json", data)
    clock.done("manifest")
    return built, json.loads(data)


def _shipped(
    standing: list[Standing], pairs: list[ReleasePair], options: ReleaseOptions
) -> list[Standing]:
    """The standing answers whose pairs the release keeps (all but the strict rule's left-out)."""
    if not options.strict:
        return standing
    kept = {p.pair_id for p in strict_filter(pairs, no_lead=options.strict_no_lead)[0]}
    return [s for s in standing if s.pair.pk in kept]


def _write_files(
    release: Release,
    storage: Storage,
    job,
    clock: _Stages,
    standing: list[Standing],
    workers: BuildWorkers | None,
    pairs: list[ReleasePair],
    plan: SplitPlan,
    meta: ReleaseMeta,
    options: ReleaseOptions,
) -> tuple[ReleaseFiles, dict[str, tuple[int, str]]]:
    """Every file but the manifest written: the built data files, and size and sha256 of
    every file by name."""
    verified, edited = _lead_negatives(standing)
    copies = None if workers else _ImageCopies(standing, release.prefix, storage)
    imaged: list[Future] = []
    # The images' sha256 are the ones taken at import, which the copies check.
    sums = _import_checksums(standing) if workers else {}

    derived = LaterNegatives()
    labelstudio: list[Callable[[], Mapping[str, bytes]]] = []  # and the Label Studio files

    def records_made(records: list[dict]) -> None:
        if workers:  # half the derived negatives and the Label Studio files are made from now on
            workers.negatives(records, verified=verified, edited=edited, derived=derived)
            labelstudio.append(workers.labelstudio(records, meta))

    meta_json = meta.as_json()
    try:
        built = release_files(
            pairs,
            plan,
            meta,
            sources=pair_sources(standing),
            order_swap=True,  # every release the app builds has the test split with B first
            previous=release_previous(release, storage),
            negatives=edited,
            verified=verified,
            options=options,
            on_records=records_made,
            derived=derived if workers else None,
            labelstudio=(lambda: labelstudio[0]()) if workers else None,
        )
        clock.done("data files, questions and baselines (images checked meanwhile)")
        _refuse_telling_questions(built, options)
        rows = built.rows or config_rows(built.files, built.records)
        if workers:  # and the VLMEvalKit TSVs need the questions
            imaged.extend(workers.tsvs(rows["questions"], meta_json, sums))
            files = dict(workers.copies.result())
            if job:
                job_progress(job, done=len(standing))
        else:
            files = copies.result(job) if copies else {}
    finally:
        if copies:
            copies.stop()
    clock.done("images checked and copied")
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        # Files are written and hashed in threads (both release the GIL) while the next one
        # is made; at most WRITERS + 1 wait, so memory holds a few Parquet shards at most.
        pending: deque = deque()

        def store(name: str, data: bytes) -> None:
            pending.append((name, pool.submit(_store, storage, f"{release.prefix}/{name}", data)))
            while len(pending) > WRITERS:
                done_name, future = pending.popleft()
                files[done_name] = future.result()

        for name, data in built.files.items():
            store(name, data)
        clock.done("data files written")
        tables, with_images = research_parts(
            built.files,
            built.records,
            meta=meta.as_json(),
            checksums={name: digest for name, (_, digest) in files.items()},
            read_image=lambda path: _read(storage, f"{release.prefix}/{path}"),
            rows=rows,
        )
        # The files holding images are made and written by a worker (or a thread of their
        # own), one at a time (an images shard holds its images), while this thread makes the
        # tables.
        if workers:
            for name, data in tables:
                store(name, data)
            for future in imaged:
                files.update(future.result())
        else:
            _tables_beside_images(storage, release.prefix, tables, with_images, store, files)
        while pending:
            done_name, future = pending.popleft()
            files[done_name] = future.result()
    return built, files


def _tables_beside_images(storage, prefix, tables, with_images, store, files) -> None:
    """Without workers: the files holding images (reading, copying, hashing bytes: the GIL
    is free most of the time) made and written in a thread of their own."""
    stopped = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as side:
        imaged = side.submit(_store_all, storage, prefix, with_images, stopped)
        try:
            for name, data in tables:
                store(name, data)
        except BaseException:  # the other thread stops, and is waited for, first
            stopped.set()
            raise
        files.update(imaged.result())


def _import_checksums(standing: list[Standing]) -> dict[str, str]:
    """The sha256 taken at import of every image, by its name in the release."""
    return {
        image_path(s.pair, side): s.pair.sha256_a if side == "a" else s.pair.sha256_b
        for s in standing
        for side in ("a", "b")
    }


class _Stages:
    """Logs how long each stage of a build took (wall and this process's CPU seconds)."""

    def __init__(self, release_id: int) -> None:
        self.release_id = release_id
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def done(self, stage: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        log.info(
            "release %s: %s in %.2f s (CPU %.2f s)",
            self.release_id,
            stage,
            wall - self.wall,
            cpu - self.cpu,
        )
        self.wall, self.cpu = wall, cpu


def annotator_counts(standing: list[Standing]) -> dict[str, int | bool]:
    """Distinct annotators of the released pairs' compared annotations, and whether they
    are all the demo's simulated ones (the card must not call programs people)."""
    pair_ids = [s.pair.pk for s in standing]
    names: set[str] = set()
    for start in range(0, len(pair_ids), 500):
        names.update(
            Annotation.objects.filter(pair_id__in=pair_ids[start : start + 500]).values_list(
                "annotator__username", flat=True
            )
        )
    simulated = names & set(SIMULATED_ANNOTATORS)
    return {
        "annotators": len(names),
        "simulated_annotators": bool(names) and simulated == names,
    }


def pair_sources(standing: list[Standing]) -> dict[int, str]:
    """Each pair's source photo: its image A's sha256, joined with every A whose difference
    hash is a few bits from it (``sources.source_groups``). Each distinct A is read once."""
    hashes: dict[str, int | None] = {}
    items = []
    for s in standing:
        pair = s.pair
        if pair.sha256_a not in hashes:
            try:
                image = pair.image("a")  # a handle of its own: the copiers share the FieldFile
                with image.storage.open(image.name, "rb") as handle:
                    hashes[pair.sha256_a] = difference_hash(handle.read())
            except OSError:
                hashes[pair.sha256_a] = None
        items.append((pair.pk, pair.sha256_a, hashes[pair.sha256_a]))
    return {int(k): v for k, v in source_groups(items).items()}


def release_previous(release: Release, storage: Storage) -> Previous:
    """What the project's earlier ready releases published: every released pair's split (the
    latest release's where several hold it) and the latest release's questions, by pair."""
    earlier = Release.objects.filter(
        project_id=release.project_id, status=ReleaseStatus.READY, version__lt=release.version
    ).order_by("version")
    splits: dict[int | str, str] = {}
    for pair_id, split in (
        ReleaseRecord.objects.filter(release__in=earlier)
        .order_by("release__version")
        .values_list("pair_id", "split")
    ):
        splits[pair_id] = split
    questions, controls = published_questions(earlier.last(), storage)
    return Previous(splits=splits, questions=questions, controls=controls)


def published_questions(
    last: Release | None, storage: Storage | None = None
) -> tuple[dict[int, dict], dict[int, dict]]:
    """The questions ``last`` published, by pair id (``{"truth", "row"}``), and its control
    questions (rows by pair id); nothing for no release."""
    storage = storage or default_storage
    questions: dict[int, dict] = {}
    controls: dict[int, dict] = {}
    if last is not None:
        try:
            data = _read(storage, f"{last.prefix}/questions.jsonl")
        except OSError:
            data = b""
        for line in data.splitlines():
            row = json.loads(line)
            if row.get("split") not in SPLITS:
                continue
            if row.get("control"):
                controls[int(row["pair_id"])] = row
                continue
            truth = row["options"][row["answer"]]
            questions[int(row["pair_id"])] = {"truth": truth, "row": row}
    return questions, controls


def last_ready(project_id: int) -> Release | None:
    """The project's latest ready release, whose questions later versions keep."""
    return (
        Release.objects.filter(project_id=project_id, status=ReleaseStatus.READY)
        .order_by("-version")
        .first()
    )


def release_pair(s: Standing) -> ReleasePair:
    pair = s.pair
    return ReleasePair(
        pair_id=pair.pk,
        external_id=pair.external_id,
        image_a=image_path(pair, "a"),
        image_b=image_path(pair, "b"),
        frame_a=Frame(pair.width_a, pair.height_a),
        frame_b=Frame(pair.width_b, pair.height_b),
        changes=tuple(s.changes),
        agreement={
            "tiers": s.tiers,
            "annotators": s.annotators,
            "defects": s.defects,
            # A single annotation compared with itself has IoU 1 and says nothing.
            "mean_iou": s.mean_iou if s.annotators >= 2 else None,
            "ious": s.ious if s.annotators >= 2 else [],
            "decided_by": s.decided_by,
        },
        content_key=f"{pair.sha256_a}:{pair.sha256_b}",
        source={
            "external_id": pair.external_id,
            "instruction": pair.instruction,
            "metadata": pair.metadata,
        },
    )


def image_path(pair: Pair, side: str) -> str:
    fmt = pair.format_a if side == "a" else pair.format_b
    return f"images/{pair.pk}_{side}.{EXTENSIONS.get(fmt, fmt.lower() or 'bin')}"


class _ImageCopies:
    """Every original into ``images/``, each checked against its import sha256, started at
    once and collected by ``result``: in threads when originals and release are on local disk
    (hashing and linking release the GIL), one at a time otherwise (a remote store's failure
    then stops the copy where it happened). Copies run in batches, so a release of 10,000
    pairs makes a couple of hundred tasks, not 20,000. A failed batch stops the batches after
    it (those before it go on: the failure raised is the first in the pairs' order, as one at
    a time). The threads touch no database: ``result`` reports progress, in the caller's."""

    def __init__(self, standing: list[Standing], prefix: str, storage: Storage) -> None:
        self.prefix, self.storage = prefix, storage
        self.checked: dict[str, str] = {}  # digest of each local original: a shared file once
        self.made: set[str] = set()  # local folders made already
        items = [(s.pair, side) for s in standing for side in ("a", "b")]
        self.stop_at = len(items)  # the batches from this index on start no copy
        local = local_path(storage, prefix) is not None
        self.pool = ThreadPoolExecutor(max_workers=COPIERS if local else 1)
        self.batches = [
            self.pool.submit(self._copy, index, items[start : start + COPY_BATCH])
            for index, start in enumerate(range(0, len(items), COPY_BATCH))
        ]

    def _copy(self, index: int, batch: list[tuple[Pair, str]]) -> list[tuple[str, tuple[int, str]]]:
        done = []
        for pair, side in batch:
            if index >= self.stop_at:
                break
            try:
                done.append(
                    _copy_image(
                        pair, side, self.prefix, self.storage, checked=self.checked, made=self.made
                    )
                )
            except BaseException:
                self.stop_at = min(self.stop_at, index + 1)
                raise
        return done

    def result(self, job) -> dict[str, tuple[int, str]]:
        """Size and sha256 of every copy by name, in the pairs' order; raises the first
        failure in that order."""
        files: dict[str, tuple[int, str]] = {}
        for batch in self.batches:
            for name, size_digest in batch.result():
                files[name] = size_digest
                if job and len(files) % 50 == 0:
                    job_progress(job, done=len(files) // 2)
        return files

    def stop(self) -> None:
        """No copy starts any more; returns when the running ones have finished, so the
        folder can be cleared behind them."""
        self.stop_at = -1
        self.pool.shutdown(wait=True, cancel_futures=True)


def _copy_image(
    pair: Pair,
    side: str,
    prefix: str,
    storage: Storage,
    *,
    checked: dict | None = None,
    made: set | None = None,
) -> tuple[str, tuple]:
    """Copy the original byte for byte, checked against the sha256 taken at import. On local
    disk the release's file is a hard link to the checked original (a copy across devices):
    originals are never rewritten in place, and deleting either leaves the other."""
    expected = pair.sha256_a if side == "a" else pair.sha256_b
    name = image_path(pair, side)
    original = pair.image(side)
    source = local_path(original.storage, original.name)
    target = local_path(storage, f"{prefix}/{name}")
    if source is None or target is None:
        # A handle of its own: the pair's FieldFile is shared with the threads that read the
        # same original for the Parquet rows, and an S3 file closed by one is None to another.
        with original.storage.open(original.name, "rb") as handle:
            data = handle.read()
        _check(pair, side, sha256(data), expected)
        _write(storage, f"{prefix}/{name}", data)
        return name, (len(data), expected)
    cache = checked if checked is not None else {}
    digest = cache.get(source) or _file_sha256(source)
    _check(pair, side, digest, expected)
    cache[source] = digest
    folder = os.path.dirname(target)
    if made is None or folder not in made:
        _makedirs(folder)
        if made is not None:
            made.add(folder)
    try:
        os.link(source, target)
    except FileExistsError:  # the folder was cleared; a leftover would break the manifest
        raise RuntimeError(f"{prefix}/{name} exists already") from None
    except OSError:  # another device, a link limit, a filesystem without links
        shutil.copyfile(source, target)
        os.chmod(target, settings.FILE_UPLOAD_PERMISSIONS)  # as the storage writes (a link shares)
    return name, (os.path.getsize(target), digest)


def _makedirs(folder: str) -> None:
    """The release's folders with the storage's folder mode (as its own saves make them). Each
    new folder is chmod-ed: the umask is the process's, and copies run in threads."""
    mode = settings.FILE_UPLOAD_DIRECTORY_PERMISSIONS
    missing = []
    path = Path(folder)
    while not path.exists():
        missing.append(path)
        path = path.parent
    for new in reversed(missing):
        try:
            new.mkdir()
        except FileExistsError:
            continue  # another thread made it
        if mode is not None:
            new.chmod(mode)


def _check(pair: Pair, side: str, digest: str, expected: str) -> None:
    if digest != expected:
        raise ReleaseRefused(
            f"image {side.upper()} of pair {pair.pk} changed since its import "
            f"(sha256 {digest[:12]}…, expected {expected[:12]}…)"
        )


def _file_sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _lead_negatives(standing: list[Standing]) -> tuple[dict, dict]:
    """Leads' verified (frozen) and edited negatives, by pair, for pairs whose description is
    still the one they were written for."""
    firsts = {s.pair.pk: s.changes[0]["description"] for s in standing if s.changes}
    edits = QuestionEdit.objects.filter(pair_id__in=firsts).values_list(
        "pair_id", "description", "negatives", "verified"
    )
    verified: dict[int, bool] = {}
    edited: dict[int, list[str]] = {}
    for pk, description, negatives, is_verified in edits:
        if firsts[pk] == description:
            (verified if is_verified else edited)[pk] = negatives
    return verified, edited


MAX_NAMED = 25


def _refuse_telling_questions(built: ReleaseFiles, options: ReleaseOptions) -> None:
    """Refuse a release whose questions text alone answers too often, naming the questions a
    baseline answers outright, unless a lead overrode the limit."""
    gate = built.report["text_baselines"]["gate"]
    if not gate["over_limit"] or options.allow_baselines:
        return
    telling = built.report["text_baselines"]["telling"]
    best = gate["best"]
    named = [record_id for record_id, names in telling.items() if best in names]
    pair_of = {record["id"]: record["pair_id"] for record in built.records}
    shown = ", ".join(named[:MAX_NAMED]) + (
        f" and {len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else ""
    )
    fix = (
        f"Fix the questions of {shown} on the questions page (edit or verify their negatives)"
        if named
        else "No question stands out (the baseline is at chance on every one): "
        "the limit is below chance"
    )
    raise ReleaseRefused(
        f"the text-only baseline “{best}” answers {gate['best_accuracy']:.1%} of the questions "
        f"without the images, above the project's limit of {gate['limit']:.1%}. {fix}, or "
        "build again with the baseline override",
        field="allow_baselines",
        pairs=[pair_of[record_id] for record_id in named if record_id in pair_of],
    )


def _read(storage: Storage, name: str) -> bytes:
    with storage.open(name, "rb") as handle:
        return handle.read()


def _store_all(
    storage: Storage, prefix: str, made: Iterator[tuple[str, bytes]], stopped
) -> dict[str, tuple[int, str]]:
    """Write each file ``made`` gives under ``prefix``, until ``stopped`` (a thread's or a
    worker process's event) is set: size and sha256 by name."""
    written = {}
    for name, data in made:
        if stopped.is_set():
            break
        written[name] = _store(storage, f"{prefix}/{name}", data)
    return written


def _store(storage: Storage, name: str, data: bytes) -> tuple[int, str]:
    """Write ``data`` and return its size and sha256 (for the manifest)."""
    _write(storage, name, data)
    return len(data), sha256(data)


def _write(storage: Storage, name: str, data: bytes) -> None:
    saved = storage.save(name, ContentFile(data))
    if saved != name:  # the folder was cleared; a renamed file would break the manifest
        storage.delete(saved)
        raise RuntimeError(f"storage wrote {saved} instead of {name}")


def _storage_clear(storage: Storage, prefix: str) -> None:
    try:
        folders, files = storage.listdir(prefix)
    except FileNotFoundError:
        return
    for name in files:
        storage.delete(f"{prefix}/{name}")
    for folder in folders:
        _storage_clear(storage, f"{prefix}/{folder}")


def _owned(release: Release, job, *, lock: bool = False) -> bool:
    """Whether this build (of ``job``) is still the release's build in progress."""
    current = Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING, job=job)
    return (current.select_for_update() if lock else current).exists()


def releases_fail_stale(
    *, now: datetime | None = None, storage: Storage | None = None
) -> list[int]:
    """Fail the builds whose worker stopped (its process on this host ended, or no heartbeat
    for DIFFMARK_STALE_JOB_MINUTES): the folder is cleared, release and job are failed with a
    message, and ``release_retry`` builds it again. A build that comes back to life afterwards
    finds it is no longer its release's build and publishes nothing."""
    storage = storage or default_storage
    message = (
        f"the build stopped: no progress for {settings.DIFFMARK_STALE_JOB_MINUTES} minutes "
        "(its worker was killed or lost its connection); nothing was published, build it again"
    )
    orphaned = {job.pk: job for job in jobs_orphaned(release=True)}
    failed = []
    stale = (
        Release.objects.filter(status=ReleaseStatus.BUILDING)
        .filter(Q(job__in=jobs_stale(now=now)) | Q(job__in=list(orphaned)))
        .select_related("project", "job")
        .order_by("pk")
    )
    for release in stale:
        job = release.job
        assert job is not None  # picked by its job
        said = message
        if job.pk in orphaned:
            said = orphan_message(job, "nothing was published, build it again")
        # Only if the build showed no sign of life since we looked.
        if not Job.objects.filter(
            pk=job.pk, status=JobStatus.RUNNING, heartbeat_at=job.heartbeat_at
        ).update(status=JobStatus.FAILED, message=said):
            continue
        _release_fail(release, storage, said)
        failed.append(release.pk)
    return failed


def _release_fail(
    release: Release, storage: Storage, message: str, *, pairs: Sequence[int] = ()
) -> None:
    """Fail the build; the pairs to fix (if any) become the job's errors, one row per pair,
    which the releases page links to their questions."""
    if not _owned(release, release.job):
        log.warning("release %s is no longer this build's: left as it is", release.pk)
        return
    try:
        _storage_clear(storage, release.prefix)
    except Exception:  # the release is failed either way; a retry clears the folder again
        log.exception("could not clear the folder of failed release %s", release.pk)
    with transaction.atomic():
        failed = Release.objects.filter(
            pk=release.pk, status=ReleaseStatus.BUILDING, job=release.job
        ).update(status=ReleaseStatus.FAILED, message=message)
        release.status, release.message = ReleaseStatus.FAILED, message
        if release.job:
            found = Pair.objects.filter(pk__in=pairs).in_bulk()
            errors = [
                {
                    "pair": pk,
                    "id": found[pk].name,
                    "message": "a text-only baseline answers its question: edit or verify it",
                }
                for pk in pairs
                if pk in found
            ]
            job_finish(release.job, status=JobStatus.FAILED, message=message, errors=errors)
        if failed:
            webhook_emit(release.project, EventKind.RELEASE_FAILED, ObjectKind.RELEASE, release)


def _warned(warnings: list[str]) -> str:
    if not warnings:
        return "."
    return f", with {len(warnings)} warning{'s' if len(warnings) > 1 else ''}: {warnings[0]}"


def _ratio(value) -> tuple[int, int, int] | None:
    return tuple(value) if value else None
