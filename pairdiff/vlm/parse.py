"""A vision-language model's answer → predicted changes, in each side's own pixels (pure).

Two answer formats are read; the package docstring (``pairdiff.vlm``) spells both out. Whatever
the model writes, ``parse_answer`` returns a result: problems become ``error`` (no usable change,
or a cut-off answer), ``flags`` (a fixed vocabulary leads can filter on) and ``notes`` (the
reasons, one sentence each), never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pairdiff.geometry import Frame
from pairdiff.vlm.json_scan import find_json, salvage_json
from pairdiff.vlm.reader import Reader
from pairdiff.vlm.result import ANSWER_TOO_DEEP, MAX_ANSWER, VlmResult, excerpt, truncate_raw
from pairdiff.vlm.tokens import LOC

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def parse_answer(text: str, frame_a: Frame, frame_b: Frame, categories: Sequence[str]) -> VlmResult:
    """Changes from a model's answer (JSON or MinCU tokens); boxes in each side's own frame."""
    if not isinstance(text, str):
        return VlmResult(error=f"the model's answer is not text: {type(text).__name__}")
    raw = truncate_raw(text)
    body, thinking_error = _without_thinking(text)
    if thinking_error:
        return VlmResult(error=thinking_error, raw=raw)
    if not body.strip():
        return VlmResult(error="the model's answer is empty", raw=raw)
    reader = Reader(frame_a, frame_b, categories)
    if len(body) > MAX_ANSWER:
        reader.note(f"the answer has {len(body)} characters; only the first {MAX_ANSWER} are read")
        body = body[:MAX_ANSWER]
    try:
        return _read(reader, body, raw)
    except RecursionError:  # JSON nested past what Python's parser can walk: unreadable
        return VlmResult(error=ANSWER_TOO_DEEP, raw=raw)


def _read(reader: Reader, body: str, raw: str) -> VlmResult:
    """The changes of ``body``: its JSON answer, the complete changes of a cut-off one, or its
    MinCU token lines."""
    found = find_json(body)
    if found is not None:
        return reader.from_json(found, raw)
    salvaged = salvage_json(body)
    if salvaged is not None:
        items, reason, fatal = salvaged
        if fatal:
            return reader.from_items(items, raw, cut_reason=reason)
        reader.note(reason)
        return reader.from_items(items, raw)
    if LOC.search(body):
        return reader.from_tokens(body, raw)
    return VlmResult(
        error=f"the answer holds neither JSON nor <loc_i> tokens: {excerpt(body)!r}", raw=raw
    )


def _without_thinking(text: str) -> tuple[str, str]:
    """The answer without reasoning blocks (Qwen3 "thinking" models), or an error."""
    body = _THINK.sub("", text)
    if "</think>" in body:
        # Some chat templates open the block themselves, so only its end is in the reply.
        body = body.rsplit("</think>", 1)[1]
    if "<think>" in body:
        return "", "the answer was cut off while the model was still reasoning (<think>)"
    return body, ""
