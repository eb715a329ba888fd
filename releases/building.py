"""Building releases: accepted pairs → files in storage, records and a manifest, all or nothing.

One path (``release_build``): the build's Python makes the data files, questions and tables
while an executor (workers.py) checks and copies the originals and makes the files holding
images beside it, in forked processes when the release's folder and the originals are on local
disk, in threads otherwise (S3). What the build reads is in inputs.py, the bytes it writes in
storage.py, how a failed or stopped build ends in failing.py.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from django.core.files.storage import Storage, default_storage
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from annotator.models import Pair, PairStatus
from jobs.lifecycle import job_claim, job_create, job_finish, job_start
from jobs.models import Job, JobKind, JobStatus
from jobs.registry import work_enqueue_on_commit
from pairdiff.release.build import ReleaseFiles, ReleaseMeta, manifest, release_files
from pairdiff.release.hf import config_rows
from pairdiff.release.options import ReleaseOptions, strict_filter
from pairdiff.release.publish import research_parts
from pairdiff.release.records import ReleasePair
from pairdiff.release.splits import SplitPlan
from projects.models import Project
from releases.failing import build_owned, release_fail
from releases.inputs import (
    annotator_counts,
    import_checksums,
    lead_negatives,
    pair_sources,
    release_pair,
    release_previous,
)
from releases.models import Release, ReleaseStatus
from releases.records import records_insert
from releases.refusals import ReleaseRefused
from releases.storage import (
    control_files_write,
    file_read,
    file_store,
    file_write,
    folder_clear,
)
from releases.storage import original_copy as _copy_image  # the executors' copier (tests swap it)
from releases.workers import BuildExecutor, Files, ProcessExecutor, ThreadExecutor, workers_usable
from review.standing import Standing, standing_answers
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit

log = logging.getLogger(__name__)

COPY_BATCH = 100  # originals per copying task (threads)
WRITERS = 2  # threads writing and hashing the built files while the next is made


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
        control_rate=(
            project.question_control_rate if asked.control_rate is None else asked.control_rate
        ),
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
        folder_clear(storage, release.prefix)
        built, written = _build(release, storage, job)
        clock = _Stages(release.pk)
        with transaction.atomic():
            if not build_owned(release, job, lock=True):
                log.warning("release %s was failed as stale meanwhile: not published", release.pk)
                return release
            records_insert(release, built)
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
        release_fail(release, storage, str(exc), pairs=exc.pairs)
    except Exception as exc:
        log.exception("release %s failed", release.pk)
        release_fail(release, storage, f"{type(exc).__name__}: {exc}")
    return release


@dataclass
class _Build:
    """One build's inputs, as the file-writing steps need them."""

    release: Release
    storage: Storage
    job: Job | None
    clock: _Stages
    standing: list[Standing]
    pairs: list[ReleasePair]
    plan: SplitPlan
    meta: ReleaseMeta
    options: ReleaseOptions


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
    build = _Build(release, storage, job, clock, standing, pairs, plan, meta, options)
    # The originals are checked and copied beside this thread, which makes the data files. A
    # failure of either stops both before the caller clears the folder, and a refusal of the
    # questions comes first, as it would if the copies came after.
    executor = _executor(standing, release.prefix, storage)
    failed = True
    try:
        built, files = _write_files(build, executor)
        failed = False
    finally:
        executor.close(failed=failed)
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
    file_write(storage, f"{release.prefix}/manifest.json", data)
    clock.done("manifest")
    return built, json.loads(data)


def _executor(standing: list[Standing], prefix: str, storage: Storage) -> BuildExecutor:
    """Worker processes when the folder and the originals are on local disk and this process
    may fork; threads otherwise."""
    if workers_usable(standing, prefix, storage):
        return ProcessExecutor(standing, prefix, storage, copy_image=_copy_image)
    return ThreadExecutor(standing, prefix, storage, copy_image=_copy_image, batch=COPY_BATCH)


def _shipped(
    standing: list[Standing], pairs: list[ReleasePair], options: ReleaseOptions
) -> list[Standing]:
    """The standing answers whose pairs the release keeps (all but the strict rule's left-out)."""
    if not options.strict:
        return standing
    kept = {p.pair_id for p in strict_filter(pairs, no_lead=options.strict_no_lead)[0]}
    return [s for s in standing if s.pair.pk in kept]


def _write_files(build: _Build, executor: BuildExecutor) -> tuple[ReleaseFiles, Files]:
    """Every file but the manifest written: the built data files, and size and sha256 of
    every file by name."""
    release, storage, job, clock = build.release, build.storage, build.job, build.clock
    verified, edited = lead_negatives(build.standing)

    def records_made(records: list[dict]) -> None:
        executor.records_made(records, build.meta, verified=verified, edited=edited)

    built = release_files(
        build.pairs,
        build.plan,
        build.meta,
        sources=pair_sources(build.standing),
        order_swap=True,  # every release the app builds has the test split with B first
        previous=release_previous(release, storage),
        negatives=edited,
        verified=verified,
        options=build.options,
        on_records=records_made,
        derived=executor.derived,
        labelstudio=executor.labelstudio,
    )
    clock.done("data files, questions and baselines (images checked meanwhile)")
    _refuse_telling_questions(built, build.options)
    rows = built.rows or config_rows(built.files, built.records)
    meta = build.meta.as_json()
    # The VLMEvalKit TSVs need the questions; the images' sha256 are the ones taken at import,
    # which the copies check.
    # The made controls' files first: the TSVs read them from the release's folder.
    controls = control_files_write(
        [st.pair for st in build.standing], built.control_files, release.prefix, storage
    )
    checksums = import_checksums(build.standing)
    checksums.update({name: digest for name, (_, digest) in controls.items()})
    imaged: list[Future] = executor.images(rows["questions"], meta, checksums)
    files = executor.copied(job)
    files.update(controls)
    clock.done("images checked and copied")
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        # Files are written and hashed in threads (both release the GIL) while the next one
        # is made; at most WRITERS + 1 wait, so memory holds a few Parquet shards at most.
        pending: deque = deque()

        def store(name: str, data: bytes) -> None:
            pending.append(
                (name, pool.submit(file_store, storage, f"{release.prefix}/{name}", data))
            )
            while len(pending) > WRITERS:
                done_name, future = pending.popleft()
                files[done_name] = future.result()

        for name, data in built.files.items():
            store(name, data)
        clock.done("data files written")
        # The files holding images are made and written by the executor meanwhile (one at a
        # time: a TSV holds its images), while this thread makes the tables.
        tables, _ = research_parts(
            built.files,
            built.records,
            meta=meta,
            checksums={name: digest for name, (_, digest) in files.items()},
            read_image=lambda path: file_read(storage, f"{release.prefix}/{path}"),
            rows=rows,
        )
        for name, data in tables:
            store(name, data)
        for future in imaged:
            files.update(future.result())
        while pending:
            done_name, future = pending.popleft()
            files[done_name] = future.result()
    return built, files


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


def _warned(warnings: list[str]) -> str:
    if not warnings:
        return "."
    return f", with {len(warnings)} warning{'s' if len(warnings) > 1 else ''}: {warnings[0]}"


def _ratio(value) -> tuple[int, int, int] | None:
    return tuple(value) if value else None
