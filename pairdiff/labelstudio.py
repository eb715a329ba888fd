"""Label Studio interoperability: read a JSON export of two-image tasks with rectangles
(writing releases as Label Studio tasks is ``labelstudio_export``).

Reading happens in two steps because Label Studio stores boxes in percent: ``read_export``
checks the structure, ``task_in_frames`` turns the percent boxes into pixels of the real
images. ``parse_export`` does both with the image sizes the export itself declares.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from numbers import Real
from pathlib import PurePosixPath
from urllib.parse import parse_qs, unquote, urlsplit

from pairdiff.coords import from_label_studio
from pairdiff.geometry import BoxError, Frame
from pairdiff.manifest import MAX_ID_LENGTH, RowError, json_type, safe_relative_path

TIERS = ("excellent", "good", "fair", "poor")
DEFAULT_TIER = "excellent"
IMAGE_KEYS = ("image_a", "image_b")
MAX_TIME_MS = 24 * 3600 * 1000
_ROUND_SLACK = 1e-6
_IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"})
# Label Studio renames uploads to "<8 hex chars of a uuid4>-<original name>".
_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{8}-(.+)$")
_RECTANGLES = frozenset({"rectanglelabels", "rectangle"})
_SHAPES = frozenset({"polygon", "ellipse", "keypoint", "brush", "polyline", "vector"})
_ENTITY_TEXTS = ("entity_a", "entity_b")


class LSUnusable(ValueError):
    """The input is not a Label Studio JSON export at all; str() says why."""


class ImageNotFound(LookupError):
    """No file, or more than one, matches an image reference; str() says which."""


class _Invalid(ValueError):
    """One annotation that cannot be read; the message is for people."""


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
class _Region:
    side: str  # "a" or "b"
    value: Mapping[str, object]
    declared: Frame | None  # original_width × original_height, when the export gives them


@dataclass(frozen=True)
class _DraftChange:
    category: str
    description: str
    entity_a: str
    entity_b: str
    regions: tuple[_Region, ...]


@dataclass(frozen=True)
class _Draft:
    """An annotation read from the export, boxes still in percent; ``error`` when unreadable."""

    annotation_id: int | str | None
    annotator: str
    tier: str = DEFAULT_TIER
    time_spent_ms: int = 0
    changes: tuple[_DraftChange, ...] = ()
    error: str = ""

    @property
    def who(self) -> str:
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


def parse_export(data: bytes) -> tuple[list[LSTask], list[RowError]]:
    """Tasks with their annotations in pixels of the image sizes the export declares, and
    errors per task or annotation (``line``: the task's position in the export, from 1;
    ``external_id``: its Label Studio id). LSUnusable when it is no Label Studio JSON export."""
    tasks, errors = read_export(data)
    converted = []
    for task in tasks:
        task, problems = task_in_frames(task, *task.declared_frames())
        converted.append(task)
        errors.extend(problems)
    errors.sort(key=lambda e: e.line)
    return converted, errors


def read_export(data: bytes) -> tuple[list[LSTask], list[RowError]]:
    """The tasks, their annotations read but not yet in pixels, and per-task errors."""
    tasks_json = _load(data)
    tasks: list[LSTask] = []
    errors: list[RowError] = []
    first_line_of_id: dict[str, int] = {}
    for line, raw in enumerate(tasks_json, start=1):
        try:
            tasks.append(_task(raw, line, first_line_of_id))
        except _Invalid as exc:
            task_id = raw.get("id") if isinstance(raw, dict) else None
            label = str(task_id) if isinstance(task_id, int | str) else ""
            errors.append(RowError(line, label, str(exc)))
    return tasks, errors


def task_in_frames(
    task: LSTask, frame_a: Frame | None, frame_b: Frame | None
) -> tuple[LSTask, list[RowError]]:
    """The task with its annotations' boxes in pixels of these frames (the real image sizes),
    and an error for each annotation that cannot be used: unreadable, a box outside the image,
    or drawn on an image of another size than the export declares."""
    frames = {"a": frame_a, "b": frame_b}
    annotations, errors = [], []
    for draft in task.drafts:
        try:
            if draft.error:
                raise _Invalid(draft.error)
            annotations.append(_in_pixels(draft, frames))
        except _Invalid as exc:
            errors.append(RowError(task.line, task.label, f"{draft.who}: {exc}"))
    return replace(task, annotations=annotations), errors


class ImageFinder:
    """Finds the file an image reference names among the files of the images folder or zip."""

    def __init__(self, names: Iterable[str]) -> None:
        self._names = set(names)
        self._by_basename: dict[str, list[str]] = {}
        for name in sorted(self._names):
            self._by_basename.setdefault(PurePosixPath(name).name, []).append(name)

    def find(self, reference: str) -> str:
        """The file's name in the source; ImageNotFound when none (or several) match.

        Tried in order: the reference as a relative path, its file name anywhere in the
        source, and its file name without Label Studio's upload prefix ("1a2b3c4d-").
        """
        path = _reference_path(reference)
        try:
            relative = safe_relative_path(path)
        except ValueError:
            relative = ""
        if relative in self._names:
            return relative
        basename = PurePosixPath(path).name
        candidates = [basename]
        stripped = _UPLOAD_PREFIX.match(basename)
        if stripped:
            candidates.append(stripped.group(1))
        for candidate in candidates:
            found = self._by_basename.get(candidate, [])
            if len(found) == 1:
                return found[0]
            if found:
                shown = ", ".join(found[:3]) + (", …" if len(found) > 3 else "")
                raise ImageNotFound(f"several files are named {candidate} ({shown})")
        tried = " or ".join(dict.fromkeys(candidates))
        raise ImageNotFound(f"no file named {tried} in the images source (from {reference})")


# Reading -------------------------------------------------------------------------------------


def _load(data: bytes) -> list:
    try:
        value = json.loads(data.decode("utf-8-sig"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise LSUnusable(f"the export is not UTF-8 text (byte {exc.start})") from exc
    except (ValueError, RecursionError) as exc:
        raise LSUnusable(f"the export is not JSON ({exc}); export with the JSON format") from exc
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


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not allowed in JSON")


def _task(raw: object, line: int, first_line_of_id: dict[str, int]) -> LSTask:
    if not isinstance(raw, dict):
        raise _Invalid(f"task is {json_type(raw)}, not a JSON object")
    data = raw.get("data")
    if not isinstance(data, dict):
        raise _Invalid('task has no "data" object')
    keys = _image_keys(data)
    if keys is None:
        found = ", ".join(data) or "nothing"
        raise _Invalid(f"task data needs two images, image_a and image_b (found: {found})")
    external_id = _external_id(data)
    if external_id in first_line_of_id:
        raise _Invalid(f"id {external_id!r} repeats task {first_line_of_id[external_id]}")
    if external_id:
        first_line_of_id[external_id] = line
    raw_annotations = raw.get("annotations", raw.get("completions", []))  # completions: LS < 1.0
    if not isinstance(raw_annotations, list):
        raise _Invalid(f'"annotations" must be a list, not {json_type(raw_annotations)}')
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
            "label_studio": {"task": task_id, "image_a": data[keys[0]], "image_b": data[keys[1]]},
        },
        drafts=_drafts(raw_annotations, keys),
    )


def _image_keys(data: Mapping[str, object]) -> tuple[str, str] | None:
    if all(isinstance(data.get(k), str) and data[k].strip() for k in IMAGE_KEYS):
        return IMAGE_KEYS
    found = [k for k, v in data.items() if isinstance(v, str) and _looks_like_image(v)]
    return (found[0], found[1]) if len(found) >= 2 else None


def _looks_like_image(value: str) -> bool:
    return PurePosixPath(_reference_path(value)).suffix.lower() in _IMAGE_SUFFIXES


def _reference_path(reference: str) -> str:
    """The path part of an upload path, a local-files URL (``?d=``), an http or s3 URL."""
    parts = urlsplit(reference.strip().replace("\\", "/"))
    local = parse_qs(parts.query).get("d")
    return unquote(local[0] if local else parts.path)


def _external_id(data: Mapping[str, object]) -> str:
    for key in ("external_id", "id", "record_id"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and value.strip():
            if len(value.strip()) > MAX_ID_LENGTH:
                raise _Invalid(f"{key} is longer than {MAX_ID_LENGTH} characters")
            return value.strip()
    return ""


def _drafts(raw_annotations: list, keys: tuple[str, str]) -> tuple[_Draft, ...]:
    drafts: list[_Draft] = []
    seen: set[str] = set()
    for raw in raw_annotations:
        if isinstance(raw, dict) and raw.get("was_cancelled") is True:
            continue
        draft = _draft(raw, keys)
        if not draft.error and draft.annotator and draft.annotator in seen:
            draft = replace(draft, error="a second annotation by the same user on this task")
        seen.add(draft.annotator)
        drafts.append(draft)
    return tuple(drafts)


def _draft(raw: object, keys: tuple[str, str]) -> _Draft:
    if not isinstance(raw, dict):
        return _Draft(None, "", error=f"annotation is {json_type(raw)}, not a JSON object")
    annotation_id = raw.get("id") if isinstance(raw.get("id"), int | str) else None
    annotator = _annotator(raw.get("completed_by"))
    try:
        tier, changes = _read_result(raw.get("result", []), keys)
    except _Invalid as exc:
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
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        return 0
    return min(max(round(value * 1000), 0), MAX_TIME_MS)


def _read_result(result: object, keys: tuple[str, str]) -> tuple[str, tuple[_DraftChange, ...]]:
    if not isinstance(result, list) or not all(isinstance(r, dict) for r in result):
        raise _Invalid('"result" must be a list of JSON objects')
    for r in result:
        kind = str(r.get("type", ""))
        if kind not in _RECTANGLES and (kind.endswith("labels") or kind in _SHAPES):
            raise _Invalid(f"{kind} regions cannot be imported, only rectangles")
    tier = _tier(r for r in result if r.get("type") == "choices")
    groups = _groups(result)
    grouped = {id(r) for group in groups for r in group}
    shared = [r for r in result if id(r) not in grouped]
    changes = tuple(_draft_change(group, shared, keys) for group in groups)
    return tier, changes


def _tier(choices: Iterable[Mapping]) -> str:
    for r in choices:
        picked = _values(r, "choices")
        if picked and (r.get("from_name") == "tier" or set(picked) <= set(TIERS)):
            if picked[0] not in TIERS:
                raise _Invalid(f"tier {picked[0]!r} is none of {', '.join(TIERS)}")
            return picked[0]
    return DEFAULT_TIER


def _groups(result: list[dict]) -> list[list[dict]]:
    """Results of each change, in order of their first rectangle.

    Results are linked by a shared id, a ``parentID`` or a relation; without any link every
    rectangle of the annotation belongs to one change.
    """
    rectangles = [r for r in result if r.get("type") in _RECTANGLES]
    ids = [r["id"] for r in result if isinstance(r.get("id"), str | int)]
    linked = (
        len(ids) != len(set(ids))
        or any(r.get("parentID") for r in result)
        or any(r.get("type") == "relation" for r in result)
    )
    if not linked:
        return [rectangles] if rectangles else []
    parent: dict[object, object] = {}

    def root(key: object) -> object:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for r in result:
        for one, other in ((r.get("id"), r.get("parentID")), (r.get("from_id"), r.get("to_id"))):
            if one not in (None, "") and other not in (None, ""):
                parent[root(one)] = root(other)
    groups: dict[object, list[dict]] = {root(_key(r)): [] for r in rectangles}
    for r in result:
        key = root(_key(r))
        if key in groups:
            groups[key].append(r)
    return list(groups.values())


def _key(r: Mapping) -> object:
    """The result's id; one of its own when it has none, so id-less results never link."""
    return r["id"] if r.get("id") not in (None, "") else ("no id", id(r))


def _draft_change(group: list[dict], shared: list[dict], keys: tuple[str, str]) -> _DraftChange:
    sides = {keys[0]: "a", keys[1]: "b"}
    regions, labels, meta = [], [], {"a": "", "b": ""}
    for r in group:
        if r.get("type") not in _RECTANGLES:
            continue
        side = sides.get(r.get("to_name"))
        if side is None:
            raise _Invalid(f"a box is on {r.get('to_name')!r}, neither {keys[0]} nor {keys[1]}")
        regions.append(_region(r, side, keys))
        labels += [label for label in _values(r, "rectanglelabels") if label not in labels]
        meta_text = r.get("meta", {}).get("text") if isinstance(r.get("meta"), dict) else None
        meta[side] = meta[side] or _first_text(meta_text)
    if len(labels) > 1:
        raise _Invalid(f"the boxes of one change have different labels: {', '.join(labels)}")
    texts = {name: _text(group, shared, name) for name in ("description", *_ENTITY_TEXTS)}
    return _DraftChange(
        category=labels[0] if labels else _category_choice(group, shared),
        description=texts["description"],
        entity_a=texts["entity_a"] or meta["a"],
        entity_b=texts["entity_b"] or meta["b"],
        regions=tuple(regions),
    )


def _region(r: Mapping, side: str, keys: tuple[str, str]) -> _Region:
    image = keys["ab".index(side)]
    value = r.get("value")
    if not isinstance(value, Mapping):
        raise _Invalid(f'a box on {image} has no "value" object')
    for name, angle in (("box", value.get("rotation", 0)), ("image", r.get("image_rotation", 0))):
        if angle not in (0, 0.0, None):
            raise _Invalid(
                f"the {name} on {image} is rotated ({angle}°); only upright boxes can be imported"
            )
    width, height = r.get("original_width"), r.get("original_height")
    if width is None and height is None:
        return _Region(side, value, None)
    try:
        declared = Frame(_integral(width), _integral(height))
    except BoxError as exc:
        raise _Invalid(f"{image}: original {exc}") from exc
    return _Region(side, value, declared)


def _integral(value: object) -> object:
    """640.0 as 640: JSON writers differ on whole floats; anything else goes to Frame as is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _text(group: list[dict], shared: list[dict], name: str) -> str:
    """The text of a text area: the change's own first, else the annotation's."""
    for results in (group, shared):
        for r in results:
            if r.get("type") != "textarea":
                continue
            source = r.get("from_name")
            # Any text area that names no entity is the description.
            wanted = source == name if name in _ENTITY_TEXTS else source not in _ENTITY_TEXTS
            if wanted:
                text = _first_text(r.get("value", {}).get("text"))
                if text:
                    return text
    return ""


def _category_choice(group: list[dict], shared: list[dict]) -> str:
    for r in (*group, *shared):
        if r.get("type") == "choices" and r.get("from_name") == "category":
            picked = _values(r, "choices")
            if picked:
                return picked[0]
    return ""


def _values(r: Mapping, key: str) -> list[str]:
    value = r.get("value")
    items = value.get(key) if isinstance(value, Mapping) else None
    return [v for v in items if isinstance(v, str)] if isinstance(items, list) else []


def _first_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0].strip()
    return ""


def _in_pixels(draft: _Draft, frames: Mapping[str, Frame | None]) -> LSAnnotation:
    changes = []
    for change in draft.changes:
        boxes: dict[str, list[list[float]]] = {"a": [], "b": []}
        for region in change.regions:
            boxes[region.side].append(_pixels(region, frames[region.side]))
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
        draft.annotator, draft.tier, changes, draft.annotation_id, draft.time_spent_ms
    )


def _pixels(region: _Region, frame: Frame | None) -> list[float]:
    image = f"image_{region.side}"
    if frame is None:
        raise _Invalid(f"the export does not give the size of {image} (original_width/height)")
    if region.declared is not None and region.declared != frame:
        raise _Invalid(f"{image} is {frame}, but the box was drawn on a {region.declared} image")
    try:
        box = from_label_studio(region.value, frame)
    except BoxError as exc:
        raise _Invalid(f"box on {image}: {exc}") from exc
    return [box.x1, box.y1, box.x2, box.y2]


def _whole(boxes: list[list[float]]) -> list[list[int]]:
    # The slack keeps a half pixel that went through percent (30.499999999999996) a half.
    return [[math.floor(v + 0.5 + _ROUND_SLACK) for v in box] for box in boxes]


def _who(annotation_id: int | str | None, annotator: str) -> str:
    number = f" {annotation_id}" if annotation_id is not None else ""
    by = f" by Label Studio user {annotator}" if annotator else ""
    return f"annotation{number}{by}"
