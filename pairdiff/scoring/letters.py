"""Which option a model's answer to a multiple-choice question names, read strictly (pure).

A letter (``B``, ``(B)``, ``B.``, ``Answer: B``, ``The correct option is B``), a letter followed
by that option's own sentence, or an option's exact sentence (case, spacing and final
punctuation aside). Anything else names no option: it is scored wrong, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

LETTERS = ("A", "B", "C", "D")
_LETTER = re.compile(
    r"^\W*(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*)?"
    r"\(?([A-D])\)?(?:[.):\]]\s*(.*))?$",
    re.IGNORECASE | re.DOTALL,
)


def read_letter(text: str, options: Mapping[str, str]) -> str | None:
    """The option letter ``text`` names, or None when it names no single option."""
    body = text.strip()
    match = _LETTER.match(body)
    if match:
        letter, rest = match.group(1).upper(), (match.group(2) or "").strip()
        if not rest or _same(rest, options.get(letter, "")):
            return letter
    named = [letter for letter, option in options.items() if _same(body, option)]
    return named[0] if len(named) == 1 else None


def _same(a: str, b: str) -> bool:
    return bool(b) and _norm(a) == _norm(b)


def _norm(text: str) -> str:
    return re.sub(r"[\s.!?;:,]+$", "", " ".join(text.casefold().split()))
