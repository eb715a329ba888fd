"""Building releases: accepted pairs → files in storage, records and a manifest, all or nothing."""

from __future__ import annotations

import json
import logging
from datetime import datetime

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from annotator.models import Pair, PairStatus
from jobs.lifecycle import job_claim, job_create, job_finish, job_progress, job_start
from jobs.models import Job, JobKind, JobStatus
from jobs.registry import work_enqueue_on_commit
from jobs.sweeps import jobs_stale
from pairdiff.geometry import Frame
from pairdiff.release.build import ReleaseFiles, ReleaseMeta, manifest, release_files, sha256
from pairdiff.release.options import ReleaseOptions
from pairdiff.release.publish import research_files
from pairdiff.release.records import ReleasePair
from pairdiff.release.splits import SplitPlan
from projects.models import Project
from review.models import QuestionEdit, Release, ReleaseRecord, ReleaseStatus
from review.standing import Standing, standing_answers

log = logging.getLogger(__name__)

EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp", "TIFF": "tif", "BMP": "bmp"}
RECORDS_BATCH = 1000


class ReleaseRefused(ValueError):
    """A release that cannot be made as asked; the message is meant for people, ``field``
    names the input at fault when there is one."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


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
    """The options a release is built with: the project's baseline limit, the rest as asked."""
    asked = options or ReleaseOptions()
    return ReleaseOptions(
        strict=asked.strict,
        strict_no_lead=asked.strict_no_lead,
        swap_ab=asked.swap_ab,
        baseline_limit=project.question_baseline_limit,
        allow_baselines=asked.allow_baselines,
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
    work_enqueue_on_commit(JobKind.RELEASE, release.pk)


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
        with transaction.atomic():
            if not _owned(release, job, lock=True):
                log.warning("release %s was failed as stale meanwhile: not published", release.pk)
                return release
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
                    for i, record in enumerate(built.records)
                ),
                batch_size=RECORDS_BATCH,
            )
            release.manifest = written
            release.status = ReleaseStatus.READY
            release.ready_at = timezone.now()
            release.save(update_fields=["manifest", "status", "ready_at"])
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
    except ReleaseRefused as exc:  # the message is meant for people as it is
        log.warning("release %s refused: %s", release.pk, exc)
        _release_fail(release, storage, str(exc))
    except Exception as exc:
        log.exception("release %s failed", release.pk)
        _release_fail(release, storage, f"{type(exc).__name__}: {exc}")
    return release


def _build(release: Release, storage: Storage, job) -> tuple[ReleaseFiles, dict]:
    project = release.project
    standing = list(standing_answers(Pair.objects.filter(project=project)))
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
        },
    )
    pairs = [release_pair(s) for s in standing]
    verified, edited = _lead_negatives(standing)
    options = ReleaseOptions.from_json(release.options)
    built = release_files(pairs, plan, meta, negatives=edited, verified=verified, options=options)
    _refuse_telling_questions(built, options)
    files: dict[str, tuple[int, str]] = {}
    for done, s in enumerate(standing, start=1):
        for side in ("a", "b"):
            name, size_digest = _copy_image(s.pair, side, release.prefix, storage)
            files[name] = size_digest
        if job and done % 25 == 0:
            job_progress(job, done=done)
    for name, data in built.files.items():
        _write(storage, f"{release.prefix}/{name}", data)
        files[name] = (len(data), sha256(data))
    extras = research_files(
        built.files,
        built.records,
        meta=meta.as_json(),
        checksums={name: digest for name, (_, digest) in files.items()},
        read_image=lambda path: _read(storage, f"{release.prefix}/{path}"),
    )
    for name, data in extras:  # one at a time: a Parquet shard holds its rows' images
        _write(storage, f"{release.prefix}/{name}", data)
        files[name] = (len(data), sha256(data))
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
    return built, json.loads(data)


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


def _copy_image(pair: Pair, side: str, prefix: str, storage: Storage) -> tuple[str, tuple]:
    """Copy the original byte for byte, checked against the sha256 taken at import."""
    with pair.image(side).open("rb") as source:
        data = source.read()
    expected = pair.sha256_a if side == "a" else pair.sha256_b
    digest = sha256(data)
    if digest != expected:
        raise ReleaseRefused(
            f"image {side.upper()} of pair {pair.pk} changed since its import "
            f"(sha256 {digest[:12]}…, expected {expected[:12]}…)"
        )
    name = image_path(pair, side)
    _write(storage, f"{prefix}/{name}", data)
    return name, (len(data), digest)


def _lead_negatives(standing: list[Standing]) -> tuple[dict, dict]:
    """Leads' verified (frozen) and edited negatives, by pair, for pairs whose description is
    still the one they were written for."""
    firsts = {s.pair.pk: s.changes[0]["description"] for s in standing if s.changes}
    edits = QuestionEdit.objects.filter(pair_id__in=firsts).values_list(
        "pair_id", "description", "negatives", "verified"
    )
    verified, edited = {}, {}
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
    )


def _read(storage: Storage, name: str) -> bytes:
    with storage.open(name, "rb") as handle:
        return handle.read()


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
    """Fail the builds whose worker stopped (no heartbeat for DIFFMARK_STALE_JOB_MINUTES): the
    folder is cleared, release and job are failed with a message, and ``release_retry`` builds
    it again. A build that comes back to life afterwards finds it is no longer its release's
    build and publishes nothing."""
    storage = storage or default_storage
    message = (
        f"the build stopped: no progress for {settings.DIFFMARK_STALE_JOB_MINUTES} minutes "
        "(its worker was killed or lost its connection); nothing was published, build it again"
    )
    failed = []
    stale = Release.objects.filter(
        status=ReleaseStatus.BUILDING, job__in=jobs_stale(now=now)
    ).select_related("project", "job")
    for release in stale:
        # Only if the build showed no sign of life since we looked.
        if not Job.objects.filter(
            pk=release.job.pk, status=JobStatus.RUNNING, heartbeat_at=release.job.heartbeat_at
        ).update(status=JobStatus.FAILED, message=message):
            continue
        _release_fail(release, storage, message)
        failed.append(release.pk)
    return failed


def _release_fail(release: Release, storage: Storage, message: str) -> None:
    if not _owned(release, release.job):
        log.warning("release %s is no longer this build's: left as it is", release.pk)
        return
    try:
        _storage_clear(storage, release.prefix)
    except Exception:  # the release is failed either way; a retry clears the folder again
        log.exception("could not clear the folder of failed release %s", release.pk)
    Release.objects.filter(pk=release.pk, status=ReleaseStatus.BUILDING, job=release.job).update(
        status=ReleaseStatus.FAILED, message=message
    )
    release.status, release.message = ReleaseStatus.FAILED, message
    if release.job:
        job_finish(release.job, status=JobStatus.FAILED, message=message)


def _warned(warnings: list[str]) -> str:
    if not warnings:
        return "."
    return f", with {len(warnings)} warning{'s' if len(warnings) > 1 else ''}: {warnings[0]}"


def _ratio(value) -> tuple[int, int, int] | None:
    return tuple(value) if value else None
