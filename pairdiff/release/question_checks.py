"""Whether a record can make a question, and how a negative differs from its truth: shared by
the question file, its adversarial negatives and its controls."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.slots import find_slots, why_false

# A description that says nothing changed cannot be the true option next to "no difference".
_SAYS_NO_CHANGE = re.compile(
    r"^\W*(?:there\s+(?:is|are)\s+)?no(?:\s+(?:visible|noticeable|apparent))?\s+"
    r"(?:difference|change)s?\b",
    re.I,
)


def question_problem(record: Mapping) -> str:
    """Why the record cannot make a question, or ""."""
    if says_no_change(record):
        return "the description says there is no difference, which is the fourth option"
    if not record["changes"]:
        return "the answer has no change"
    if not " ".join(record["description"].split()):
        return "the description is blank"
    return ""


def says_no_change(record: Mapping) -> bool:
    """Whether the record's answer says nothing changed: it is a control, not a change."""
    text = " ".join((record.get("description") or "").split())
    return bool(text) and (
        _SAYS_NO_CHANGE.search(text) is not None or plain(text) == plain(NO_DIFFERENCE)
    )


def slot_and_why(truth: str, negative: str) -> tuple[str, str]:
    """The kind of slot ``negative`` changed in ``truth`` and why it is false."""
    a, b = find_slots(" ".join(truth.split())), find_slots(" ".join(negative.split()))
    if len(a) == len(b):
        changed = [(x, y) for x, y in zip(a, b, strict=True) if plain(x.value) != plain(y.value)]
        if len(changed) == 1 and changed[0][0].kind == changed[0][1].kind:
            x, y = changed[0]
            return x.kind, why_false(x.kind, x.value, y.value) or "another value"
        if len(changed) == 2 and changed[0][0].value == changed[1][1].value:
            kind = changed[0][0].kind
            return f"swap:{kind}", f"the two {kind.replace('_', ' ')}s exchanged"
    return "sentence", "another sentence: it differs from the truth in more than one slot"


def plain(text: str) -> str:
    return re.sub(r"[\s.!?;:,]+$", "", " ".join(text.casefold().split()))
