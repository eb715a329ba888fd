"""The chat-completions request: both images as data URLs and the instruction (pure)."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence

# Bump when the wording changes: it is part of the predictor's version, so a rerun with a new
# prompt stores new predictions instead of overwriting the old prompt's.
PROMPT_VERSION = 1
MAX_EDIT_INSTRUCTION = 1000


def data_url(data: bytes, mime_type: str) -> str:
    """The original bytes, base64-encoded: re-encoding would erase low-level changes."""
    return f"data:{mime_type};base64,{base64.b64encode(data).decode('ascii')}"


def instruction_text(categories: Sequence[str], edit_instruction: str = "") -> str:
    """What the model is asked to do, with the exact JSON shape of the answer."""
    example_category = "attribute" if "attribute" in categories else next(iter(categories), "")
    example = {
        "changes": [
            {
                "entity_a": "car",
                "entity_b": "car",
                "description": "The car changed from white to dark blue.",
                "category": example_category,
                "boxes_a": [[125, 730, 228, 783]],
                "boxes_b": [[125, 730, 228, 783]],
            }
        ]
    }
    choices = ", ".join(categories) if categories else '"" (no categories are defined)'
    lines = [
        "Image A (first) and image B (second) are near-duplicates that differ by one or a few "
        "localized changes (or by a global one such as lighting, colour cast or noise).",
        "For each change give:",
        '- "entity_a": the changed object as seen in A, "" if it is absent from A;',
        '- "entity_b": the changed object as seen in B, "" if it is absent from B;',
        '- "description": one sentence saying what changed from A to B;',
        f'- "category": exactly one of: {choices};',
        '- "boxes_a" and "boxes_b": boxes around the changed region on A and on B, each '
        "[x1, y1, x2, y2] as integers in [0, 1000] relative to that image's own width and "
        "height ([0, 0] is the top-left corner, [1000, 1000] the bottom-right); [] for a side "
        "where the object is absent (added or removed); [[0, 0, 1000, 1000]] for a change of "
        "the whole image.",
        "Answer with JSON only, in exactly this shape:",
        json.dumps(example),
        'If the images do not differ, answer {"changes": []}.',
    ]
    edit = " ".join(edit_instruction.split())[:MAX_EDIT_INSTRUCTION]
    if edit:
        lines.insert(1, f"The edit that was asked for (it may not have been carried out): {edit}")
    return "\n".join(lines)


def chat_request(
    *,
    model: str,
    image_a: tuple[bytes, str],
    image_b: tuple[bytes, str],
    categories: Sequence[str],
    edit_instruction: str = "",
    max_tokens: int,
    temperature: float,
    extra_body: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The OpenAI-style body; images are ``(bytes, mime type)``, A first, each labelled."""
    content = [
        {"type": "text", "text": "Image A:"},
        {"type": "image_url", "image_url": {"url": data_url(*image_a)}},
        {"type": "text", "text": "Image B:"},
        {"type": "image_url", "image_url": {"url": data_url(*image_b)}},
        {"type": "text", "text": instruction_text(categories, edit_instruction)},
    ]
    body: dict[str, object] = dict(extra_body or {})
    # One user message, no system message: some chat templates reject a system role.
    body.update(
        {
            "model": model,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
    )
    return body
