"""Label Studio interoperability: read a JSON export of two-image tasks with rectangles
(writing releases as Label Studio tasks is ``write``; which tag means what is
``config``; the lead's value mapping ``mapping``).

Reading happens in two steps because Label Studio stores boxes in percent: ``read_export``
checks the structure through the mapping, ``task_in_frames`` turns the percent boxes into
pixels of the real images. ``parse_export`` does both with the sizes the export declares.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pairdiff import strictjson
from pairdiff.coords import from_label_studio
from pairdiff.geometry import Box, BoxError, Frame
from pairdiff.labelstudio.config import (
    ConfigUnusable,
    LSMapping,
    infer_mapping,
    parse_config,
    with_roles,
)
from pairdiff.labelstudio.mapping import UnknownValue, ValueMap
from pairdiff.labelstudio.results import (
    DEFAULT_TIER,
    DraftChange,
    Invalid,
    ReadOptions,
    Region,
    Rotated,
    read_result,
)
from pairdiff.manifest import MAX_ID_LENGTH, RowError, json_type

MAX_TIME_MS = 24 * 3600 * 1000
_ROUND_SLACK = 1e-6


class LSUnusable(ValueError):
    """The input is not a Label Studio JSON export at all; str() says why."""


@dataclass(frozen=True)
class LSAnnotation:
    """One annotator's answer; ``changes`` have the submit-body shape, boxes in pixels."""

    # completed_by as a key: the user id, or the email when the export has it; "" when absent
    # (tasks written by release_tasks, which belong to no Label Studio user)
    annotator: str
    tier: str
    changes: list[dict]
    annotation_id: int | str | None = None
    time_spent_ms: int = 0
    notes: tuple[str, ...] = ()

    @property
    def who(self) -> str:
        """How error messages name it: "annotation 1001 by Label Studio user 7"."""
        return _who(self.annotation_id, self.annotator)

    def as_answer(self) -> dict[str, object]:
        """The submit body, boxes rounded (half up) to the whole pixels a submission holds."""
        changes = [
            {**c, "boxes_a": _whole(c["boxes_a"]), "boxes_b": _whole(c["boxes_b"])}
            for c in self.changes
        ]
        return {
            "tier": self.tier,
            "defects": [],
            "time_spent_ms": self.time_spent_ms,
            "changes": changes,
        }


@dataclass(frozen=True)
class LSPrediction:
    """A model's proposal from the export's ``predictions``; the model is its model_version."""

    model: str
    confidence: float | None
    changes: list[dict]

    def as_answer(self) -> dict[str, object]:
        return LSAnnotation("", "fair", self.changes).as_answer()


@dataclass(frozen=True)
class _Draft:
    """An annotation read from the export, boxes still in percent; ``error`` when unreadable."""

    annotation_id: int | str | None
    annotator: str
    tier: str = DEFAULT_TIER
    time_spent_ms: int = 0
    changes: tuple[DraftChange, ...] = ()
    error: str = ""
    model: str = ""  # set for a prediction
    confidence: float | None = None

    @property
    def who(self) -> str:
        if self.model:
            return f"prediction of {self.model}"
        return _who(self.annotation_id, self.annotator)


@dataclass(frozen=True)
class LSTask:
    """One task; ``annotations`` stay empty until ``task_in_frames`` (or ``parse_export``)."""

    task_id: int | str | None
    image_a: str  # the reference as in the export: a path, an upload path or a URL
    image_b: str
    external_id: str
    annotations: list[LSAnnotation]
    line: int = 0  # position in the export, from 1
    metadata: dict[str, object] = field(default_factory=dict)
    drafts: tuple[_Draft, ...] = field(default=(), repr=False, compare=False)
    predictions: list[LSPrediction] = field(default_factory=list)
    rotated: str = field(default=Rotated.BOUND, repr=False, compare=False)

    @property
    def label(self) -> str:
        return "" if self.task_id is None else str(self.task_id)

    def declared_frames(self) -> tuple[Frame | None, Frame | None]:
        """The image sizes the export states (original_width/height), None where it is silent."""
        found: dict[str, Frame] = {}
        for draft in self.drafts:
            for change in draft.changes:
                for region in change.regions:
                    if region.declared is not None:
                        found.setdefault(region.side, region.declared)
        return found.get("a"), found.get("b")


def load_export(data: bytes) -> list:
    """The export's tasks as JSON; LSUnusable when it is no Label Studio JSON export."""
    try:
        value = strictjson.loads(data)
    except strictjson.JSONRejected as exc:
        if str(exc).startswith("not UTF-8"):
            raise LSUnusable(f"the export is {exc}") from None
        raise LSUnusable(f"the export is not JSON ({exc}); export with the JSON format") from None
    if not isinstance(value, list):
        raise LSUnusable(f"a Label Studio JSON export is a list of tasks, not {json_type(value)}")
    if not value:
        raise LSUnusable("the export has no tasks")
    if not any(isinstance(t, dict) and isinstance(t.get("data"), dict) for t in value):
        raise LSUnusable(
            'no task has a "data" object: this is not a Label Studio JSON export '
            "(JSON-MIN and CSV exports lack the boxes' details; export with the JSON format)"
        )
    return value


def resolve_mapping(
    raw_tasks: list, config: bytes | str | None, values: ValueMap | None = None
) -> LSMapping:
    """The mapping of the config when given, else the one inferred from the export; the lead's
    roles win either way. LSUnusable when neither gives one."""
    roles = values.roles if values else {}
    try:
        if config:
            return parse_config(config, roles=roles)
        return with_roles(infer_mapping(raw_tasks, roles=roles), roles)
    except ConfigUnusable as exc:
        raise LSUnusable(str(exc)) from exc


def parse_export(
    data: bytes, options: ReadOptions | None = None
) -> tuple[list[LSTask], list[RowError]]:
    """Tasks with their annotations in pixels of the image sizes the export declares, and
    errors per task or annotation (``line``: the task's position in the export, from 1;
    ``external_id``: its Label Studio id). LSUnusable when it is no Label Studio JSON export."""
    tasks, errors = read_export(data, options)
    converted = []
    for task in tasks:
        task, problems = task_in_frames(task, *task.declared_frames())
        converted.append(task)
        errors.extend(problems)
    errors.sort(key=lambda e: e.line)
    return converted, errors


def read_export(
    data: bytes | list, options: ReadOptions | None = None
) -> tuple[list[LSTask], list[RowError]]:
    """The tasks, their annotations read but not yet in pixels, and per-task errors."""
    raw_tasks = load_export(data) if isinstance(data, bytes) else data
    options = options or ReadOptions()
    if options.mapping is None:
        options = replace(options, mapping=resolve_mapping(raw_tasks, None, options.values))
    tasks: list[LSTask] = []
    errors: list[RowError] = []
    first_line_of_id: dict[str, int] = {}
    for line, raw in enumerate(raw_tasks, start=1):
        try:
            tasks.append(_task(raw, line, first_line_of_id, options))
        except Invalid as exc:
            task_id = raw.get("id") if isinstance(raw, dict) else None
            label = str(task_id) if isinstance(task_id, int | str) else ""
            errors.append(RowError(line, label, str(exc)))
    return tasks, errors


def task_in_frames(
    task: LSTask, frame_a: Frame | None, frame_b: Frame | None
) -> tuple[LSTask, list[RowError]]:
    """The task with its annotations' and predictions' boxes in pixels of these frames (the
    real image sizes), and an error for each that cannot be used: unreadable, a box outside
    the image, or drawn on an image of another size than the export declares."""
    frames = {"a": frame_a, "b": frame_b}
    annotations, predictions, errors = [], [], []
    for draft in task.drafts:
        try:
            if draft.error:
                raise Invalid(draft.error)
            annotation = _in_pixels(draft, frames, task.rotated)
        except Invalid as exc:
            errors.append(RowError(task.line, task.label, f"{draft.who}: {exc}"))
            continue
        if draft.model:
            predictions.append(LSPrediction(draft.model, draft.confidence, annotation.changes))
        else:
            annotations.append(annotation)
    return replace(task, annotations=annotations, predictions=predictions), errors


# Reading -------------------------------------------------------------------------------------


def _task(raw: object, line: int, first_line_of_id: dict[str, int], options: ReadOptions) -> LSTask:
    mapping = options.mapping
    assert mapping is not None
    if not isinstance(raw, dict):
        raise Invalid(f"task is {json_type(raw)}, not a JSON object")
    data = raw.get("data")
    if not isinstance(data, dict):
        raise Invalid('task has no "data" object')
    keys = mapping.data_keys
    if not all(isinstance(data.get(k), str) and data[k].strip() for k in keys):
        found = ", ".join(data) or "nothing"
        raise Invalid(f"task data needs two images, {keys[0]} and {keys[1]} (found: {found})")
    external_id = _external_id(data)
    if external_id in first_line_of_id:
        raise Invalid(f"id {external_id!r} repeats task {first_line_of_id[external_id]}")
    if external_id:
        first_line_of_id[external_id] = line
    raw_annotations = raw.get("annotations", raw.get("completions", []))  # completions: LS < 1.0
    if not isinstance(raw_annotations, list):
        raise Invalid(f'"annotations" must be a list, not {json_type(raw_annotations)}')
    raw_predictions = raw.get("predictions") or []
    if not isinstance(raw_predictions, list):
        raise Invalid(f'"predictions" must be a list, not {json_type(raw_predictions)}')
    task_id = raw.get("id")
    if isinstance(task_id, bool) or not isinstance(task_id, int | str):
        task_id = None
    return LSTask(
        task_id=task_id,
        image_a=data[keys[0]].strip(),
        image_b=data[keys[1]].strip(),
        external_id=external_id,
        annotations=[],
        line=line,
        metadata={
            **{k: v for k, v in data.items() if k not in keys},
            "label_studio": {"task": task_id, keys[0]: data[keys[0]], keys[1]: data[keys[1]]},
        },
        drafts=_drafts(raw_annotations, options) + _predictions(raw_predictions, options),
        rotated=options.rotated,
    )


def _external_id(data: Mapping[str, object]) -> str:
    for key in ("external_id", "id", "record_id"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and value.strip():
            if len(value.strip()) > MAX_ID_LENGTH:
                raise Invalid(f"{key} is longer than {MAX_ID_LENGTH} characters")
            return value.strip()
    return ""


def _drafts(raw_annotations: list, options: ReadOptions) -> tuple[_Draft, ...]:
    drafts: list[_Draft] = []
    seen: set[str] = set()
    for raw in raw_annotations:
        if isinstance(raw, dict) and raw.get("was_cancelled") is True:
            continue
        draft = _draft(raw, options)
        if not draft.error and draft.annotator and draft.annotator in seen:
            draft = replace(draft, error="a second annotation by the same user on this task")
        seen.add(draft.annotator)
        drafts.append(draft)
    return tuple(drafts)


def _predictions(raw_predictions: list, options: ReadOptions) -> tuple[_Draft, ...]:
    drafts = []
    for raw in raw_predictions:
        if not isinstance(raw, dict):
            continue  # the quick export lists predictions by id only: nothing to import
        draft = _draft(raw, options)
        version = raw.get("model_version") if isinstance(raw, dict) else None
        model = version.strip()[:100] if isinstance(version, str) and version.strip() else ""
        score = raw.get("score") if isinstance(raw, dict) else None
        confidence = (
            float(score)
            if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1
            else None
        )
        drafts.append(
            replace(
                draft,
                annotator="",
                model=model or "label-studio",
                confidence=confidence,
            )
        )
    return tuple(drafts)


def _draft(raw: object, options: ReadOptions) -> _Draft:
    if not isinstance(raw, dict):
        return _Draft(None, "", error=f"annotation is {json_type(raw)}, not a JSON object")
    annotation_id = raw.get("id") if isinstance(raw.get("id"), int | str) else None
    annotator = _annotator(raw.get("completed_by"))
    try:
        tier, changes = read_result(raw.get("result", []), options)
    except (Invalid, UnknownValue) as exc:
        return _Draft(annotation_id, annotator, error=str(exc))
    return _Draft(annotation_id, annotator, tier, _lead_time_ms(raw.get("lead_time")), changes)


def _annotator(value: object) -> str:
    """completed_by: a user id (recent Label Studio) or a user object (older exports)."""
    if isinstance(value, Mapping):
        email = value.get("email")
        if isinstance(email, str) and email.strip():
            return email.strip().lower()
        value = value.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) else ""


def _lead_time_ms(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return min(max(round(value * 1000), 0), MAX_TIME_MS)


def _in_pixels(draft: _Draft, frames: Mapping[str, Frame | None], rotated: str) -> LSAnnotation:
    changes, notes = [], []
    for change in draft.changes:
        boxes: dict[str, list[list[float]]] = {"a": [], "b": []}
        for region in change.regions:
            box, note = _pixels(region, frames[region.side])
            boxes[region.side].append(box)
            if note:
                notes.append(note)
        changes.append(
            {
                "category": change.category,
                "description": change.description,
                "entity_a": change.entity_a,
                "entity_b": change.entity_b,
                "boxes_a": boxes["a"],
                "boxes_b": boxes["b"],
            }
        )
    return LSAnnotation(
        draft.annotator,
        draft.tier,
        changes,
        draft.annotation_id,
        draft.time_spent_ms,
        tuple(notes),
    )


def _pixels(region: Region, frame: Frame | None) -> tuple[list[float], str]:
    image = f"image {region.side.upper()}"
    if frame is None:
        raise Invalid(f"the export does not give the size of {image} (original_width/height)")
    if region.declared is not None and region.declared != frame:
        raise Invalid(f"{image} is {frame}, but the box was drawn on a {region.declared} image")
    angle = region.value.get("rotation", 0)
    try:
        if angle not in (0, 0.0, None):
            box = rotated_bounds(region.value, frame)
            note = f"the box on {image} was rotated {angle}°: imported as its upright bounds"
            return [box.x1, box.y1, box.x2, box.y2], note
        box = from_label_studio(region.value, frame)
    except BoxError as exc:
        raise Invalid(f"box on {image}: {exc}") from exc
    return [box.x1, box.y1, box.x2, box.y2], ""


def rotated_bounds(value: Mapping[str, Any], frame: Frame) -> Box:
    """The axis-aligned bounding box, in pixels, of a Label Studio rectangle rotated by
    ``rotation`` degrees (clockwise, about its top-left corner), clipped to the image.

    The percentages are turned into pixels first: x and y scale by different sizes, so
    rotating in percent would skew the box."""
    try:
        x, y, w, h, angle = (float(value[k]) for k in ("x", "y", "width", "height", "rotation"))
    except (KeyError, TypeError, ValueError) as exc:
        raise BoxError(f"Label Studio box {dict(value)!r}: expected numbers") from exc
    if not all(math.isfinite(v) for v in (x, y, w, h, angle)) or w <= 0 or h <= 0:
        raise BoxError(f"Label Studio box {dict(value)!r}: width and height must be positive")
    px, py = x * frame.width / 100, y * frame.height / 100
    pw, ph = w * frame.width / 100, h * frame.height / 100
    cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    xs = [px, px + pw * cos, px + pw * cos - ph * sin, px - ph * sin]
    ys = [py, py + pw * sin, py + pw * sin + ph * cos, py + ph * cos]
    x1, x2 = max(min(xs), 0.0), min(max(xs), float(frame.width))
    y1, y2 = max(min(ys), 0.0), min(max(ys), float(frame.height))
    return Box.parse([x1, y1, x2, y2], frame)


def _whole(boxes: list[list[float]]) -> list[list[int]]:
    # The slack keeps a half pixel that went through percent (30.499999999999996) a half.
    return [[math.floor(v + 0.5 + _ROUND_SLACK) for v in box] for box in boxes]


def _who(annotation_id: int | str | None, annotator: str) -> str:
    number = f" {annotation_id}" if annotation_id is not None else ""
    by = f" by Label Studio user {annotator}" if annotator else ""
    return f"annotation{number}{by}"
