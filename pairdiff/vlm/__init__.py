"""The ``vlm`` pre-annotator: a served vision-language model behind an OpenAI-compatible
chat-completions API (vLLM or SGLang serving Qwen3-VL, for instance).

``VlmPredictor(base_url=..., model=..., api_key=None, timeout=120, max_tokens=1024,
temperature=0)`` sends both images (data URLs of the original bytes, with their mime type) and
an instruction asking for JSON; ``parse_answer(text, frame_a, frame_b, categories)`` turns the
answer into changes with boxes in each side's own pixels. Both are total: problems come back in
the result, never as exceptions.

Accepted answers
================

Free JSON (asked for; tried first). The first complete JSON value that looks like an answer,
inside a ```json fence or anywhere in the prose:

- ``{"changes": [change, ...], "confidence": c}`` (``"differences"`` also names the list),
  a bare list ``[change, ...]``, or a single ``change`` object;
- ``{"changes": []}`` or a bare ``[]`` that is the whole answer: no visible change
  (flag ``no_visible_change``, no error);
- a change: ``category``, ``description``, ``entity_a``, ``entity_b`` (or ``entity`` for both,
  or ``entities: [a, b]``), ``boxes_a``, ``boxes_b``, ``confidence`` in [0, 1]. Keys are
  case-insensitive, with aliases: ``bbox_a``/``bboxes_a``/``box_a``/``bbox_2d_a``,
  ``label_a``/``object_a``, ``type``/``change_type``, ``desc``/``caption``, ``score``;
  ``anchors_a``/``loc_a`` hold MinCU anchors when no boxes are given;
- a side: ``[]``, ``null`` or missing = absent (MinCU's ``<loc_null>``); one box
  ``[x1, y1, x2, y2]``; a list of boxes; box objects ``{"bbox_2d": [...]}`` (also ``bbox``,
  ``box``, or ``x1, y1, x2, y2`` keys); a string holding any of those as JSON or anchors.

Coordinates are ``[0, 1000]`` of that side's own image, xyxy, ints or floats. Corners given in
the wrong order are swapped and coordinates at most 10 outside the range are clamped (flag
``vlm_box_adjusted``); anything further out (pixel coordinates, most likely), non-numbers and
boxes of zero width or height are dropped (flag ``vlm_box_dropped``).

A JSON answer cut off (``max_tokens``) or broken mid-way keeps the changes whose objects are
complete, and ``error`` says why the rest was lost; a half-written change is never used, since
its missing boxes would read as an absent side.

MinCU tokens (when there is no JSON). One change per line holding ``<loc_`` tokens; other lines
are ignored; a leading ``-``, ``*`` or ``1.`` is skipped::

    ENTITY  ANCHORS_A ANCHORS_B  DESCRIPTION  [FINE_A] [FINE_B]
    car <loc_1><loc_7><loc_2><loc_7> <loc_null> The car turned blue. [125,730,228,783] []

- ENTITY: the text before the first token (a trailing ``:`` dropped); ``cat -> dog``
  (also ``→``, ``|``) names A's and B's entities, otherwise it names both;
- ANCHORS_A, ANCHORS_B: each ``<loc_null>`` or one or more regions of four ``<loc_0..9>``
  (x1, y1, x2, y2), A's tokens, whitespace, then B's. Tokens all written apart are read as
  4 + 4, or split at a ``<loc_null>`` at either end; anything else is ambiguous and the change
  is dropped, as is a line with tokens after the description;
- FINE_A, FINE_B (optional, both or neither, at the end of the line): ``[]``, one box or a
  list of boxes in ``[0, 1000]``. They replace the anchors of their side. Without them (or with
  ``[]`` on a side that has anchors) each anchor region becomes its cell box
  ``[100 x1, 100 y1, 100 (x2 + 1), 100 (y2 + 1)]``. Fine boxes on a ``<loc_null>`` side are
  ignored (the anchors say the side is absent);
- no category in this format: ``category`` is ``""``.

Whatever the format: a category is matched to the project's slugs ignoring case, spaces,
hyphens and color/colour; an unknown one becomes ``""`` (flag ``vlm_unknown_category``). A
change is dropped (flag ``vlm_change_dropped``) when it has no box on either side, or when a
side that was given boxes or anchors lost all of them: an empty side would claim the object is
absent. When every change is dropped, ``error`` lists why. An absent side gets entity ``""``.
``<think>…</think>`` blocks are skipped. At most 20 changes, 50 boxes per side,
1000-character descriptions, 200-character entities; only the first 200,000 characters of an
answer are read.

Where problems go: ``error`` when there is no usable answer (transport failure, HTTP error,
garbage) or the answer was cut off (the complete changes are still returned); fixed-word
``flags`` above for what was repaired or dropped; ``notes`` (on ``VlmResult``) for the reasons
in words. ``raw`` keeps the model's answer (or the server's error body), cut to 20,000
characters.
"""

from pairdiff.vlm.client import VlmPredictor
from pairdiff.vlm.parse import parse_answer
from pairdiff.vlm.prompt import PROMPT_VERSION, chat_request, instruction_text
from pairdiff.vlm.result import (
    FLAG_BOX_ADJUSTED,
    FLAG_BOX_DROPPED,
    FLAG_CHANGE_DROPPED,
    FLAG_UNKNOWN_CATEGORY,
    NOTE_FLAGS,
    VlmResult,
)
from pairdiff.vlm.tokens import anchor_cell_box

__all__ = [
    "FLAG_BOX_ADJUSTED",
    "FLAG_BOX_DROPPED",
    "FLAG_CHANGE_DROPPED",
    "FLAG_UNKNOWN_CATEGORY",
    "NOTE_FLAGS",
    "PROMPT_VERSION",
    "VlmPredictor",
    "VlmResult",
    "anchor_cell_box",
    "chat_request",
    "instruction_text",
    "parse_answer",
]
