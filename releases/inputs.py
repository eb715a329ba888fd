"""What a release build reads: each accepted pair's standing answer as a ReleasePair, the
pairs' source photos, the annotators behind them, leads' negatives, and what the project's
earlier ready releases published (splits and questions)."""

from __future__ import annotations

import json

from django.core.files.storage import Storage, default_storage

from annotator.models import Annotation, Pair, PairStatus
from pairdiff.geometry import Frame
from pairdiff.release.build import Previous
from pairdiff.release.records import ReleasePair
from pairdiff.release.sources import difference_hash, source_groups
from pairdiff.release.splits import SPLITS
from projects.members import SIMULATED_ANNOTATORS
from releases.models import QuestionEdit, Release, ReleaseRecord, ReleaseStatus
from releases.storage import file_read, image_path
from review.standing import Standing


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
    return Previous(
        splits=splits, questions=questions, controls=controls, spare=spare_pairs(release)
    )


def spare_pairs(release: Release) -> list[tuple[int, str]]:
    """Pair id and record id of the project's pairs no release holds and that are not
    accepted: the identities made controls take, so their numbers and ids are the project's."""
    released = ReleaseRecord.objects.filter(
        release__project_id=release.project_id, pair_id__isnull=False
    ).values("pair_id")
    pairs = (
        Pair.objects.filter(project_id=release.project_id)
        .exclude(status=PairStatus.ACCEPTED)
        .exclude(pk__in=released)
        .values_list("pk", "external_id")
        .order_by("pk")
    )
    return [(pk, external or f"pair-{pk}") for pk, external in pairs]


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
            data = file_read(storage, f"{last.prefix}/questions.jsonl")
        except OSError:
            data = b""
        for line in data.splitlines():
            row = json.loads(line)
            if row.get("split") not in SPLITS:
                continue
            if row.get("control"):  # by the pair it was made from
                controls[int(row.get("control_of") or row["pair_id"])] = row
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


def lead_negatives(standing: list[Standing]) -> tuple[dict, dict]:
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


def import_checksums(standing: list[Standing]) -> dict[str, str]:
    """The sha256 taken at import of every image, by its name in the release."""
    return {
        image_path(s.pair, side): s.pair.sha256_a if side == "a" else s.pair.sha256_b
        for s in standing
        for side in ("a", "b")
    }
