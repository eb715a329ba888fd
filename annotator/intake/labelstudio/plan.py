"""What a Label Studio import will do, worked out before anything is written: the mapping (from
the labelling config, or inferred), the lead's value mapping, who the authors become, and for a
dry run the count of every outcome. The import (``importing``, next to this module) runs the
same checks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage

from annotator.intake.importing import ImportUnusable
from annotator.models import Pair
from annotator.services import (
    CheckedPair,
    PairInput,
    PairRejected,
    pair_check,
    pair_find_duplicate,
)
from annotator.submitting import answer_rules
from pairdiff.answers import Answer, AnswerInvalid, parse_answer
from pairdiff.geometry import Frame
from pairdiff.images import ImageRejected
from pairdiff.labelstudio.config import ConfigUnusable, LSMapping
from pairdiff.labelstudio.mapping import SIDES, TIERS, ValueMap, norm, parse_value_map
from pairdiff.labelstudio.read import (
    LSAnnotation,
    LSPrediction,
    LSTask,
    LSUnusable,
    ReadOptions,
    load_export,
    read_export,
    resolve_mapping,
    task_in_frames,
)
from pairdiff.labelstudio.refs import ImageFinder, ImageNotFound, parse_reference
from pairdiff.labelstudio.skeleton import mapping_skeleton, problem_kind
from pairdiff.manifest import RowError
from pairdiff.sources import ImageSource
from projects.models import Membership, Project, Role

# Accounts for Label Studio users nobody mapped to a member: "ls:<project id>:<LS user>". The
# colon is outside Django's username characters, so no form (members page, sign-up) can create
# or claim such a name, and the project id keeps each project's authors apart.
AUTHOR_PREFIX = "ls:"
SHOWN_TASKS = 5  # tasks named beside a problem many share


@dataclass(frozen=True)
class LSInput:
    """What the lead gives: the export, and optionally the labelling config and the mapping."""

    export: bytes
    config: bytes | None = None
    mapping: bytes | None = None


@dataclass
class LSPlan:
    """The export read through the mapping; ``authors``: LS user → member the lead chose."""

    mapping: LSMapping
    values: ValueMap
    options: ReadOptions
    tasks: list[LSTask]
    errors: list[RowError]
    authors: dict[str, object]
    config: str = ""


@dataclass
class Checked:
    """One task checked against its real images: the pair to store, its good answers and
    predictions, and what could not be used."""

    pair: CheckedPair | None
    annotations: list[tuple[LSAnnotation, Answer]] = field(default_factory=list)
    predictions: list[tuple[LSPrediction, Answer]] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    notes: list[RowError] = field(default_factory=list)


def author_username(project: Project, annotator: str) -> str:
    room = 150 - len(AUTHOR_PREFIX) - len(str(project.pk)) - 1
    return f"{AUTHOR_PREFIX}{project.pk}:{annotator[:room]}"


def is_author_name(username: str) -> bool:
    return username.startswith(AUTHOR_PREFIX)


def labelstudio_plan(*, project: Project, given: LSInput) -> LSPlan:
    """Read the export through the config (or the inferred mapping) and the lead's values;
    ImportUnusable when any of them cannot be used. No writes."""
    categories = category_names(project)
    try:
        raw_tasks = load_export(given.export)
    except LSUnusable as exc:
        raise ImportUnusable(str(exc), field="manifest") from exc
    try:
        values = parse_value_map(given.mapping or b"", categories=categories)
    except ConfigUnusable as exc:
        raise ImportUnusable(str(exc), field="mapping") from exc
    try:
        # The config's, or with none given the one inferred from the export (whose failure
        # asks for a config).
        mapping = resolve_mapping(raw_tasks, given.config, values)
    except LSUnusable as exc:
        raise ImportUnusable(str(exc), field="config") from exc
    options = ReadOptions(mapping, values, categories, project.rotated_boxes)
    tasks, errors = read_export(raw_tasks, options)
    config = given.config.decode("utf-8-sig", errors="replace") if given.config else ""
    return LSPlan(
        mapping, values, options, tasks, errors, _members(project, values.authors), config
    )


def category_names(project: Project) -> dict[str, str]:
    """Category slugs by slug and by name, normalised: Label Studio labels are often names."""
    names = {}
    for category in project.categories:
        names[norm(category["name"])] = category["slug"]
        names[norm(category["slug"])] = category["slug"]
    return names


def _members(project: Project, authors: Mapping[str, str]) -> dict[str, object]:
    """The members the lead mapped Label Studio users to; each must belong to the project as
    an annotator or lead (mapping to anyone else would hand them the project's work)."""
    users: dict[str, object] = {}
    for key, username in authors.items():
        membership = (
            Membership.objects.select_related("user")
            .filter(project=project, user__username=username)
            .first()
        )
        if membership is None or membership.role not in (Role.ANNOTATOR, Role.LEAD):
            raise ImportUnusable(
                f"authors: {key} → {username!r}, who is no annotator or lead of this project",
                field="mapping",
            )
        users[key.strip().lower()] = membership.user
    return users


def author_text(plan: LSPlan, project: Project, annotator: str) -> str:
    user = plan.authors.get(annotator.lower())
    if user is not None:
        return f"member {user}"
    return f"account {author_username(project, annotator)} (cannot log in)"


def project_prefixes(project: Project) -> tuple[str, ...]:
    """The storage folders that hold only this project's objects: its pairs, thumbnails,
    releases and staged imports (slugs are unique, and the slash ends each). A synthesis's
    photos are not among them: they are deleted once their job ends."""
    return tuple(f"{top}/{project.slug}/" for top in ("pairs", "thumbs", "releases", "imports"))


def _own_key(path: str, project: Project) -> str:
    """The storage key a reference names when the project may read it; "" otherwise. The key
    must be plain (no ``..``, ``.`` or empty part, which a storage would resolve into another
    folder) and under one of the project's own prefixes."""
    parts = path.split("/")
    if not path or any(part in ("", ".", "..") for part in parts):
        return ""
    return path if path.startswith(project_prefixes(project)) else ""


def read_image(
    reference: str, source: ImageSource, finder: ImageFinder, *, project: Project
) -> tuple[str, bytes]:
    """(name, bytes) of the image a reference names: a file of the folder or zip staged with
    the import, by the rule of ``pairdiff.labelstudio.refs``, else, for ``s3://<our
    bucket>/<key>``, the object of the storage Diffmark itself uses when the key lies under one
    of the importing project's own prefixes (``project_prefixes``). Another project's key and a
    key that does not exist get the very same ImageNotFound: the answer tells nothing about
    what else the bucket holds. ImageRejected when the bytes are no usable image."""
    try:
        name = finder.find(reference)
    except ImageNotFound as not_found:
        ref = parse_reference(reference)
        bucket = getattr(settings, "AWS_STORAGE_BUCKET_NAME", "")
        if not (ref.scheme == "s3" and bucket and ref.bucket == bucket):
            raise
        key = _own_key(ref.path, project)
        if not key or not default_storage.exists(key):
            raise not_found from None
        with default_storage.open(key, "rb") as handle:
            return reference, handle.read(settings.DIFFMARK_MAX_IMAGE_BYTES + 1)
    return name, source.read(name)


def check_task(
    project: Project, task: LSTask, source: ImageSource, finder: ImageFinder
) -> CheckedPair | PairRejected:
    """The task's pair with both images checked; PairRejected (returned) when it cannot be."""
    data, names = {}, []
    try:
        for side, reference in (("image_a", task.image_a), ("image_b", task.image_b)):
            try:
                name, data[side] = read_image(reference, source, finder, project=project)
            except (ImageNotFound, ImageRejected) as exc:
                raise PairRejected(f"{side}: {exc}", field=side) from exc
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


def check_answers(task: LSTask, pair: Pair) -> Checked:
    """The task's annotations and predictions in pixels of the pair's real images, each checked
    like a submission; ``pair`` may be unsaved (a dry run)."""
    frames = Frame(pair.width_a, pair.height_a), Frame(pair.width_b, pair.height_b)
    task, problems = task_in_frames(task, *frames)
    checked = Checked(pair=None, errors=list(problems))
    rules = answer_rules(pair)
    for annotation in task.annotations:
        checked.notes += [
            RowError(task.line, task.label, f"{annotation.who}: {n}") for n in annotation.notes
        ]
        try:
            if not annotation.annotator:
                raise ValueError("completed_by does not say who made it")
            checked.annotations.append((annotation, parse_answer(annotation.as_answer(), rules)))
        except ValueError as exc:  # AnswerInvalid too
            checked.errors.append(
                RowError(task.line, task.label, f"{annotation.who}: {problem(exc)}")
            )
    for prediction in task.predictions:
        try:
            checked.predictions.append((prediction, parse_answer(prediction.as_answer(), rules)))
        except AnswerInvalid as exc:
            message = f"prediction of {prediction.model}: {problem(exc)}"
            checked.errors.append(RowError(task.line, task.label, message))
    return checked


def problem(exc: ValueError) -> str:
    if isinstance(exc, AnswerInvalid):
        return "; ".join(f"{path}: {m[0]}" if path else m[0] for path, m in exc.fields.items())
    return str(exc)


# What a dry run counts, in the order people read them.
OUTCOMES = (
    "tasks to import",
    "tasks rejected: images",
    "tasks rejected: duplicate",
    "tasks unreadable",
    "annotations to import",
    "annotations over the overlap",
    "annotations or predictions rejected",
    "predictions to import",
    "notes",
)


@dataclass
class LSPreview:
    """A dry run's findings: the mapping in words, counts per outcome, the problems."""

    mapping: list[str]
    counts: dict[str, int]
    authors: list[str]
    problems: list[RowError]
    notes: list[RowError]
    # The first task to import, as it would go in (its images, its first annotation).
    sample: dict | None = None
    # The mapping the lead fills in for every value found that maps to nothing ("" if none).
    skeleton: str = ""

    @property
    def problem_groups(self) -> list[dict]:
        """The problems, one row per kind with how many tasks have it and the first few."""
        groups: dict[str, dict] = {}
        for e in self.problems:
            row = groups.setdefault(problem_kind(e.message), {"tasks": [], "count": 0})
            row["count"] += 1
            if len(row["tasks"]) < SHOWN_TASKS and e.line not in row["tasks"]:
                row["tasks"].append(e.line)
        return [{"message": kind, **row} for kind, row in groups.items()]

    def as_json(self) -> dict:
        def rows(items: list[RowError]) -> list[dict]:
            return [{"line": e.line, "id": e.external_id, "message": e.message} for e in items]

        return {
            "mapping": self.mapping,
            "counts": self.counts,
            "authors": self.authors,
            "problems": rows(self.problems),
            "notes": rows(self.notes),
        }


def labelstudio_preview(*, project: Project, given: LSInput, source: ImageSource) -> LSPreview:
    """Everything the import would do, and nothing written: each task's images found and
    checked, duplicates found, each annotation checked against the real image sizes."""
    plan = labelstudio_plan(project=project, given=given)
    finder = ImageFinder(source.names())
    counts: Counter[str] = Counter()
    problems, notes = list(plan.errors), []
    counts["tasks unreadable"] = len(plan.errors)
    seen: set[tuple[str, str]] = set()
    authors: dict[str, str] = {}
    sample = None
    for task in plan.tasks:
        outcome = check_task(project, task, source, finder)
        if isinstance(outcome, PairRejected):
            counts["tasks rejected: images"] += 1
            problems.append(RowError(task.line, task.label, str(outcome)))
            continue
        if outcome.content_key in seen or _duplicate(project, outcome):
            counts["tasks rejected: duplicate"] += 1
            problems.append(RowError(task.line, task.label, "duplicate pair (same images or id)"))
            continue
        seen.add(outcome.content_key)
        counts["tasks to import"] += 1
        pair = Pair(
            project=project,
            width_a=outcome.info_a.width,
            height_a=outcome.info_a.height,
            width_b=outcome.info_b.width,
            height_b=outcome.info_b.height,
        )
        checked = check_answers(task, pair)
        fitting = checked.annotations[: project.overlap]
        counts["annotations to import"] += len(fitting)
        counts["annotations over the overlap"] += len(checked.annotations) - len(fitting)
        counts["annotations or predictions rejected"] += len(checked.errors)
        counts["predictions to import"] += len(checked.predictions)
        counts["notes"] += len(checked.notes)
        problems += checked.errors
        notes += checked.notes
        for annotation, _ in fitting:
            authors.setdefault(
                annotation.annotator, author_text(plan, project, annotation.annotator)
            )
        if sample is None or (sample["annotation"] is None and fitting):  # one with an answer
            sample = _sample(task, [a for a, _ in fitting], authors)
    problems.sort(key=lambda e: e.line)
    targets = {
        "category": sorted({c["slug"] for c in project.categories}),
        "tier": list(TIERS),
        "absent_side": list(SIDES),
    }
    return LSPreview(
        mapping=plan.mapping.describe(),
        counts={what: counts[what] for what in OUTCOMES},
        authors=[f"Label Studio user {key} → {who}" for key, who in authors.items()],
        problems=problems,
        notes=notes,
        sample=sample,
        skeleton=mapping_skeleton((e.message for e in problems), targets),
    )


def _sample(task: LSTask, annotations: list, authors: Mapping[str, str]) -> dict:
    """A task as the import reads it, for the lead to check the mapping against."""
    first = annotations[0] if annotations else None
    answer = None
    if first is not None:
        answer = {
            "by": authors.get(first.annotator, "no Label Studio user"),
            "tier": first.tier,
            "changes": [
                {
                    "category": c.get("category", ""),
                    "description": c.get("description", ""),
                    "entity_a": c.get("entity_a", ""),
                    "entity_b": c.get("entity_b", ""),
                    "boxes_a": len(c.get("boxes_a") or []),
                    "boxes_b": len(c.get("boxes_b") or []),
                }
                for c in first.changes
            ],
        }
    return {
        "line": task.line,
        "label": task.label,
        "image_a": task.image_a,
        "image_b": task.image_b,
        "annotation": answer,
    }


def _duplicate(project: Project, checked: CheckedPair) -> bool:
    return pair_find_duplicate(project=project, checked=checked) is not None


def author_account(project: Project, annotator: str):
    """The account an unmapped Label Studio user's work is stored under: created for this
    project, inactive with no usable password, so nobody can ever log in as it. A pre-existing
    account of that name that *could* log in is never used (ImportUnusable names it)."""
    users = get_user_model().objects
    username = author_username(project, annotator)
    user = users.filter(username=username).first()
    if user is None:
        user = users.create(username=username, is_active=False)
        user.set_unusable_password()
        user.save(update_fields=["password"])
    elif user.has_usable_password() or user.is_active or user.is_staff or user.is_superuser:
        raise ImportUnusable(
            f"the account {username} exists and can log in; map Label Studio user "
            f"{annotator} to a member in the mapping's authors section"
        )
    return user
