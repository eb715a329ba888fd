"""A predictions JSONL → predicted changes per record and answers per question.

One line per record or question::

    {"id": "<record id>", "changes": [{"boxes_a": [[x1, y1, x2, y2], ...], "boxes_b": [],
      "description": "...", "entity_a": "...", "entity_b": "...", "category": "...",
      "confidence": 0.9}]}
    {"id": "<question id>", "answer": "B"}
    {"id": "...", "text": "<raw model output>", "task": "changes" | "question"}

``changes`` boxes are in the declared space (``1000``: [0, 1000] of each side's image, as
MinCU and Qwen-VL write them; ``pixel``: pixels of each side's image; ``unit``: [0, 1]); ``[]``
is an absent side. ``text`` is read by the project's answer parser (``pairdiff.vlm.parse``: JSON or
MinCU tokens, always [0, 1000]) or, for a question, as a single option letter; ``task`` is only
needed where a question and a record share the id and the text is a bare letter.

A line that cannot be read is *unparseable*: reported with its number and reason and scored as
no answer — never guessed (VLMEvalKit fills those with a random option). Lines are read one at
a time (``lines.file_lines``: a file of any size in bounded memory) by ``pairdiff.strictjson``,
so a line nested 100,000 deep, a NaN or a 5,000-digit integer is one unreadable line, never a
crash.

Coordinates are read with a tolerance: a value up to TOLERANCE of the frame outside it
(``-1`` or ``1001`` in [0, 1000], a model overshooting by a unit) is clipped to the frame and
counted (``clipped_boxes``). A box further out cannot be in the declared space: its line is
*refused* (by number, scored as no answer). When refused lines are more than MAX_REFUSED_RATE
of the lines with boxes, the file is refused whole (``PredictionsRefused``), naming the space
the boxes look like: lmms-eval scores Qwen-style [0, 1000] boxes as pixels and reports near-zero
IoU without a word; here the mistake is named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import BinaryIO, TypeGuard, cast

from pairdiff import strictjson
from pairdiff.geometry import Box, BoxError, Frame
from pairdiff.predict import NO_VISIBLE_CHANGE
from pairdiff.scoring.change import Change, space_of
from pairdiff.scoring.letters import LETTERS, read_letter
from pairdiff.scoring.lines import file_lines
from pairdiff.vlm.parse import parse_answer
from pairdiff.vlm.result import ANSWER_TOO_DEEP, excerpt

COORDS = ("1000", "pixel", "unit")
MAX_LINE_REASONS = 200  # reported in full up to this many; the count is always exact
TOLERANCE = 0.01  # of the frame's width or height: coordinates this far outside are clipped
MAX_REFUSED_RATE = 0.05  # of the lines with boxes: more refused lines refuse the whole file
_THOUSAND = Frame(1000, 1000)


class PredictionsRefused(ValueError):
    """The file cannot be scored as declared; the message names the line and what to do."""


@dataclass
class Predictions:
    changes: dict[str, list[Change]] = field(default_factory=dict)  # record id → changes
    answers: dict[str, str | None] = field(default_factory=dict)  # question id → letter
    lines: int = 0  # non-blank lines
    unparseable: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)
    # Ids named on unparseable lines, by what the line answered: they still say which splits
    # the file meant to answer, so a split whose every line is garbage is scored, not skipped.
    mentioned_records: set[str] = field(default_factory=set)
    mentioned_questions: set[str] = field(default_factory=set)
    unparseable_count: int = 0  # exact; ``unparseable`` keeps the first MAX_LINE_REASONS
    refused: list[tuple[int, str]] = field(default_factory=list)  # boxes outside the frame
    refused_count: int = 0
    clipped_boxes: int = 0  # boxes within the tolerance outside the frame, clipped to it

    def unreadable(self, number: int, reason: str, *, refused: bool = False) -> None:
        self.unparseable_count += 1
        if len(self.unparseable) < MAX_LINE_REASONS:
            self.unparseable.append((number, reason))
        if refused:
            self.refused_count += 1
            if len(self.refused) < MAX_LINE_REASONS:
                self.refused.append((number, reason))


class _Unreadable(Exception):
    pass


class _OutOfFrame(_Unreadable):
    """A box further outside the declared frame than the tolerance: its line is refused."""


def read_predictions(
    source: bytes | BinaryIO,
    *,
    records: Sequence[Mapping],
    questions: Sequence[Mapping],
    coords: str,
) -> Predictions:
    """Every line read, or reported unparseable; PredictionsRefused for an unusable file.
    ``source`` is the file's bytes or a binary file open for reading (read line by line)."""
    if coords not in COORDS:
        raise PredictionsRefused(f"coords must be one of {', '.join(COORDS)}, not {coords!r}")
    by_record = {str(r["id"]): r for r in records}
    by_question = {str(q["id"]): q for q in questions}
    categories = sorted({c["category"] for r in records for c in r["changes"]})
    reader = _LineReader(by_record, by_question, coords, categories)
    out = Predictions()
    seen: dict[tuple[str, str], int] = {}
    for line in file_lines(source):
        if line.text is not None and not line.text.strip():
            continue
        out.lines += 1
        try:
            if line.text is None:
                reader.named = ("", ())
                raise _Unreadable(line.problem)
            kind, key, value = reader.read(line.text, line.number)
            if (kind, key) in seen:
                first = seen[kind, key]
                raise _Unreadable(f"a second {kind} for id {key!r} (first on line {first})")
        except _Unreadable as exc:
            out.unreadable(line.number, str(exc), refused=isinstance(exc, _OutOfFrame))
            key, kinds = reader.named
            if "record" in kinds and key in by_record:
                out.mentioned_records.add(key)
            if "question" in kinds and key in by_question:
                out.mentioned_questions.add(key)
            continue
        seen[kind, key] = line.number
        # read() gives a question's letter (or None), or a record's changes.
        if kind == "question":
            out.answers[key] = cast("str | None", value)
        else:
            out.changes[key] = cast("list[Change]", value)
    if not out.lines:
        raise PredictionsRefused("the predictions file has no lines")
    out.clipped_boxes = reader.clipped
    reader.check_refused(out)
    if out.unparseable_count == out.lines:
        reasons = "; ".join(f"line {n}: {why}" for n, why in out.unparseable[:3])
        raise PredictionsRefused(f"no line of the predictions file could be read ({reasons})")
    reader.check_space()
    return out


class _LineReader:
    def __init__(
        self,
        records: Mapping[str, Mapping],
        questions: Mapping[str, Mapping],
        coords: str,
        categories: Sequence[str],
    ) -> None:
        self.records, self.questions, self.coords = records, questions, coords
        self.categories = categories
        self.largest = 0.0  # largest coordinate of any ``changes`` box, for check_space
        self.boxes = 0
        self.named: tuple[str, tuple[str, ...]] = ("", ())  # the id the last line gave
        self.clipped = 0  # boxes clipped into the frame
        self.box_lines = 0  # lines whose changes have boxes
        self.outside = 0.0  # the largest coordinate of a refused box

    def read(self, line: str, number: int) -> tuple[str, str, object]:
        self.named = ("", ())
        try:
            row = strictjson.loads(line)
        except strictjson.JSONRejected as exc:
            raise _Unreadable(f"not JSON ({exc})") from None
        except ValueError as exc:  # e.g. an integer past Python's digit limit
            raise _Unreadable(f"not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise _Unreadable(f"a line must be a JSON object, not {type(row).__name__}")
        key = row.get("id")
        if isinstance(key, bool) or not isinstance(key, str | int) or key == "":
            raise _Unreadable('"id" must be a record or question id (text or integer)')
        key = str(key)
        given = [k for k in ("changes", "answer", "text") if k in row]
        kinds = {"changes": ("record",), "answer": ("question",)}
        self.named = (
            key,
            tuple(kind for g in given for kind in kinds.get(g, ("record", "question"))),
        )
        if len(given) != 1:
            raise _Unreadable('give exactly one of "changes", "answer" or "text"')
        if given[0] == "answer":
            return "question", self._question(key), _letter(row["answer"])
        if given[0] == "changes":
            record = self._record(key)
            changes = self._changes(row["changes"], record, number)
            self.box_lines += any(c.boxes_a or c.boxes_b for c in changes)
            return "record", key, changes
        text = row["text"]
        if not isinstance(text, str):
            raise _Unreadable('"text" must be the model\'s output as a string')
        task = row.get("task")
        if task not in (None, "changes", "question"):
            raise _Unreadable('"task" must be "changes" or "question"')
        if task is None:
            task = self._task_of(key, text)
        if task == "question":
            question = self.questions.get(key)
            if question is None:
                raise _Unreadable(f"no question has id {key!r}")
            return "question", key, _text_letter(text, question.get("options", {}))
        return "record", key, self._text_changes(text, self._record(key))

    def _task_of(self, key: str, text: str) -> str:
        in_records, in_questions = key in self.records, key in self.questions
        if in_questions and (not in_records or _names_option(text, self.questions[key])):
            return "question"
        if in_records:
            return "changes"
        raise _Unreadable(f"no record or question has id {key!r}")

    def _record(self, key: str) -> Mapping:
        record = self.records.get(key)
        if record is None:
            raise _Unreadable(f"no record of the release has id {key!r}")
        return record

    def _question(self, key: str) -> str:
        if key not in self.questions:
            raise _Unreadable(f"no question of the release has id {key!r}")
        return key

    def _changes(self, value: object, record: Mapping, number: int) -> list[Change]:
        if not isinstance(value, list):
            raise _Unreadable('"changes" must be a list ([] for no change)')
        out = []
        for index, item in enumerate(value, start=1):
            if not isinstance(item, dict):
                raise _Unreadable(f"change {index} must be an object")
            sides = [
                self._side(item.get(f"boxes_{s}", []), record[f"size_{s}"], number, index, s)
                for s in ("a", "b")
            ]
            out.append(
                Change(
                    boxes_a=sides[0],
                    boxes_b=sides[1],
                    description=_text(item, "description", index),
                    entity_a=_text(item, "entity_a", index),
                    entity_b=_text(item, "entity_b", index),
                    category=_text(item, "category", index),
                    confidence=_confidence(item.get("confidence", 1.0), index),
                )
            )
        return out

    def _side(
        self, value: object, size: Sequence[float], number: int, index: int, side: str
    ) -> tuple[Box, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise _Unreadable(f"change {index}: boxes_{side} must be a list of boxes")
        if value and all(_is_number(v) for v in value):
            value = [value]  # one bare box
        boxes = []
        for box in value:
            if not isinstance(box, list) or len(box) != 4 or not all(map(_is_number, box)):
                raise _Unreadable(f"change {index}: a box of side {side} is not [x1, y1, x2, y2]")
            box = self._in_space(box, size, side)
            boxes.append(self._box(box, size, index, side))
        return tuple(boxes)

    def _in_space(self, box: list, size: Sequence[float], side: str) -> list:
        """``box`` clipped into the declared frame when within the tolerance outside it;
        _OutOfFrame when further out."""
        width, height = size
        limits = {"1000": (1000, 1000), "unit": (1, 1), "pixel": (width, height)}[self.coords]
        self.largest = max(self.largest, *box)
        self.boxes += 1
        clipped = []
        for i, value in enumerate(box):
            limit = limits[i % 2]
            slack = TOLERANCE * limit
            if value < -slack or value > limit + slack:
                self.outside = max(self.outside, *box)
                what = {"1000": "[0, 1000]", "unit": "[0, 1]", "pixel": f"{width}×{height} pixels"}
                raise _OutOfFrame(
                    f"box {box} on side {side.upper()} does not fit --coords {self.coords} "
                    f"({what[self.coords]}) even {slack:g} past its edge"
                )
            clipped.append(min(max(value, 0), limit))
        if clipped != box:
            self.clipped += 1
        return clipped

    def _box(self, box: list, size: Sequence[float], index: int, side: str) -> Box:
        if self.coords == "unit":
            width, height = size
            box = [box[0] * width, box[1] * height, box[2] * width, box[3] * height]
        try:
            return Box(*box)
        except BoxError as exc:
            raise _Unreadable(f"change {index}, side {side}: {exc}") from None

    def _text_changes(self, text: str, record: Mapping) -> list[Change]:
        result = parse_answer(text, _THOUSAND, _THOUSAND, self.categories)
        if result.error == ANSWER_TOO_DEEP:  # JSON nested past what the parser can walk
            raise _Unreadable(ANSWER_TOO_DEEP)
        if not result.changes and NO_VISIBLE_CHANGE not in result.flags:
            raise _Unreadable(f"the answer parser found no change: {result.error or 'no reason'}")
        scale = [(1.0, 1.0), (1.0, 1.0)]
        if space_of(self.coords) == "pixel":
            scale = [(w / 1000, h / 1000) for w, h in (record["size_a"], record["size_b"])]
        return [
            Change(
                boxes_a=tuple(_scaled(b, *scale[0]) for b in c.boxes_a),
                boxes_b=tuple(_scaled(b, *scale[1]) for b in c.boxes_b),
                description=c.description,
                entity_a=c.entity_a,
                entity_b=c.entity_b,
                category=c.category,
                confidence=1.0 if c.confidence is None else c.confidence,
            )
            for c in result.changes
        ]

    def check_refused(self, out: Predictions) -> None:
        """PredictionsRefused when refused lines are more than MAX_REFUSED_RATE of the lines
        with boxes: then the declared space is wrong, not a few boxes."""
        with_boxes = self.box_lines + out.refused_count
        if not out.refused_count or out.refused_count <= MAX_REFUSED_RATE * with_boxes:
            return
        first = "; ".join(f"line {n}: {why}" for n, why in out.refused[:3])
        hint = f"declare the space the boxes are in ({' | '.join(COORDS)})"
        if self.coords != "pixel" and self.outside > (1000 if self.coords == "1000" else 1) * 1.01:
            hint = (
                f"the largest coordinate is {self.outside:g}: these look like pixel "
                "coordinates, so send them with --coords pixel"
            )
        raise PredictionsRefused(
            f"{first}; {out.refused_count} of {with_boxes} lines with boxes have a box outside "
            f"the frame of --coords {self.coords}, more than {MAX_REFUSED_RATE:.0%}: {hint}"
        )

    def check_space(self) -> None:
        """Boxes declared [0, 1000] or pixels whose every coordinate is at most 1 are almost
        surely [0, 1] coordinates: scoring them as declared would give IoU 0 everywhere."""
        if self.coords != "unit" and self.boxes and 0 < self.largest <= 1:
            raise PredictionsRefused(
                f"every box coordinate is at most 1, which --coords {self.coords} cannot mean "
                "for real boxes; these look like [0, 1] coordinates: use --coords unit"
            )


def _scaled(box: Box, sx: float, sy: float) -> Box:
    return Box(box.x1 * sx, box.y1 * sy, box.x2 * sx, box.y2 * sy)


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _text(item: Mapping, key: str, index: int) -> str:
    value = item.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Unreadable(f"change {index}: {key} must be text")
    return value


def _confidence(value: object, index: int) -> float:
    if not _is_number(value) or not 0 <= value <= 1:
        raise _Unreadable(f"change {index}: confidence must be a number in [0, 1]")
    return float(value)


def _letter(value: object) -> str:
    if isinstance(value, str) and value.strip().upper() in LETTERS:
        return value.strip().upper()
    raise _Unreadable(f'"answer" must be one of A, B, C, D, not {excerpt(repr(value), 40)}')


def _text_letter(text: str, options: Mapping[str, str]) -> str:
    letter = read_letter(text, options)
    if letter is None:
        raise _Unreadable(f"the text names no single option: {excerpt(text.strip(), 80)!r}")
    return letter


def _names_option(text: str, question: Mapping) -> bool:
    return read_letter(text, question.get("options", {})) is not None
