"""The ``vlm-judge`` screener: MinCU's automatic filter as a predictor.

The served model is asked MinCU's three questions about an edited pair — was the instruction
followed, is the edit correct, did anything unrelated change — and each "no" (or "yes" for the
third) becomes a screening flag with the model's reason. The questions can be reworded per
project; the answer format is always appended, so the reply stays machine-readable.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence

from pairdiff.images import ImageRejected, inspect_image
from pairdiff.vlm.client import VlmPredictor, _Failure
from pairdiff.vlm.prompt import MAX_EDIT_INSTRUCTION, data_url
from pairdiff.vlm.result import VlmResult, excerpt, truncate_raw

INSTRUCTION_NOT_FOLLOWED = "instruction_not_followed"
EDIT_INCORRECT = "edit_incorrect"
UNRELATED_CHANGES = "unrelated_changes"
JUDGE_FLAGS = (INSTRUCTION_NOT_FOLLOWED, EDIT_INCORRECT, UNRELATED_CHANGES)
JUDGE_VERSION = 1

DEFAULT_QUESTIONS = """Image A is a photo; image B is meant to be A after this edit: {instruction}
Judge the edit like a careful annotator and answer three questions:
1. instruction_followed: was the requested edit carried out in B?
2. edit_correct: is the edit correct and clean (the right object, plausible, no artefacts)?
3. unrelated_changes: did anything else change between A and B besides the requested edit?"""

# (answer key, flag, the answer that raises the flag)
_QUESTIONS = (
    ("instruction_followed", INSTRUCTION_NOT_FOLLOWED, False),
    ("edit_correct", EDIT_INCORRECT, False),
    ("unrelated_changes", UNRELATED_CHANGES, True),
)
_FORMAT = (
    "Answer with JSON only, in exactly this shape (true or false, and one short sentence "
    'each): {"instruction_followed": true, "edit_correct": true, "unrelated_changes": false, '
    '"reasons": {"instruction_followed": "...", "edit_correct": "...", '
    '"unrelated_changes": "..."}}'
)
_NO_INSTRUCTION = "(no instruction was given: B should differ from A by one clean, local change)"
_YES = {"true", "yes", "y", "1"}
_NO = {"false", "no", "n", "0"}


def judge_text(questions: str, instruction: str) -> str:
    """The questions (a project's own or the default) with the instruction filled in."""
    edit = " ".join(instruction.split())[:MAX_EDIT_INSTRUCTION] or _NO_INSTRUCTION
    text = (questions.strip() or DEFAULT_QUESTIONS).replace("{instruction}", edit)
    if edit not in text:
        text = f"The requested edit: {edit}\n{text}"
    return f"{text}\n{_FORMAT}"


def parse_verdict(text: str) -> VlmResult:
    """Flags and reasons from the judge's reply; an unreadable reply is an error, no flags."""
    raw = truncate_raw(text)
    body = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)
    try:
        answer = _first_object(body)
    except RecursionError:  # JSON nested past what the parser can walk: unreadable
        return VlmResult(error="the judge's answer is JSON nested too deeply to read", raw=raw)
    if answer is None:
        return VlmResult(error=f"the judge's answer is not JSON: {excerpt(body)!r}", raw=raw)
    keys = {str(k).lower(): v for k, v in answer.items()}
    reasons_in = keys.get("reasons")
    reasons_in = reasons_in if isinstance(reasons_in, Mapping) else {}
    flags, reasons, missing = [], {}, []
    for key, flag, bad in _QUESTIONS:
        value = _boolean(keys.get(key))
        if value is None:
            missing.append(key)
        elif value is bad:
            flags.append(flag)
            reasons[flag] = str(reasons_in.get(key, "") or "")[:500]
    if missing:
        return VlmResult(
            error=f"the judge did not answer {', '.join(missing)}: {excerpt(body)!r}", raw=raw
        )
    notes = tuple(f"{flag}: {reason}" for flag, reason in reasons.items())
    return VlmResult(flags=tuple(flags), reasons=reasons, notes=notes, raw=raw)


def _first_object(body: str) -> Mapping | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", body):
        try:
            value, _ = decoder.raw_decode(body, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, Mapping):
            return value
    return None


def _boolean(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str | int) and str(value).strip().lower() in _YES | _NO:
        return str(value).strip().lower() in _YES
    return None


class VlmJudge(VlmPredictor):
    """A served vision-language model asking MinCU's screening questions; flags, no boxes."""

    name = "vlm-judge"

    def __init__(self, *, questions: str = "", **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.questions = questions
        # Another wording is another judge: its verdicts are kept apart from the default's.
        wording = "default" if not questions.strip() else f"custom-{_digest(questions)}"
        self.version = f"{self.model} judge-{JUDGE_VERSION} {wording}"[-100:]

    def _predict(
        self, image_a: bytes, image_b: bytes, categories: Sequence[str], instruction: str
    ) -> VlmResult:
        images = []
        for label, data in (("A", image_a), ("B", image_b)):
            try:
                info = inspect_image(data, self.image_limits)
            except ImageRejected as exc:
                return VlmResult(error=f"image {label} cannot be sent: {exc}")
            images.append(data_url(data, info.mime_type))
        content = [
            {"type": "text", "text": "Image A:"},
            {"type": "image_url", "image_url": {"url": images[0]}},
            {"type": "text", "text": "Image B:"},
            {"type": "image_url", "image_url": {"url": images[1]}},
            {"type": "text", "text": judge_text(self.questions, instruction)},
        ]
        body: dict[str, object] = dict(self.extra_body)
        body.update(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": content}],
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
            }
        )
        try:
            reply = self._ask(json.dumps(body).encode("utf-8"))
        except _Failure as failure:
            return VlmResult(error=failure.reason, raw=truncate_raw(failure.raw))
        return parse_verdict(reply.content)


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()[:8]
