"""What the ``vlm`` pre-annotator returns (``VlmResult``), the limits and flags its answer
reader keeps, and how a reply is quoted in a reason."""

from __future__ import annotations

from dataclasses import dataclass

from pairdiff.predict import PredictionResult

# Limits as for an annotator's answer (pairdiff.answers.AnswerRules), so a prediction fits the
# same storage and forms.
MAX_CHANGES = 20
MAX_BOXES = 50
MAX_DESCRIPTION = 1000
MAX_LABEL = 200
RAW_LIMIT = 20_000
# Far beyond any max_tokens a pre-annotation needs; bounds the work on a runaway reply.
MAX_ANSWER = 200_000
# A coordinate this far outside [0, 1000] is rounding slop and is clamped; further out the model
# used another coordinate system (pixels, most likely) and the box is dropped.
CLAMP_SLACK = 10.0

FLAG_UNKNOWN_CATEGORY = "vlm_unknown_category"
FLAG_BOX_ADJUSTED = "vlm_box_adjusted"  # clamped into [0, 1000] or corners reordered
FLAG_BOX_DROPPED = "vlm_box_dropped"
FLAG_CHANGE_DROPPED = "vlm_change_dropped"
NOTE_FLAGS = (FLAG_UNKNOWN_CATEGORY, FLAG_BOX_ADJUSTED, FLAG_BOX_DROPPED, FLAG_CHANGE_DROPPED)
# A reply nested past what Python's JSON parser can walk (it recurses) is unreadable, not a crash.
ANSWER_TOO_DEEP = "the answer's JSON is nested too deeply to read"


@dataclass(frozen=True)
class VlmResult(PredictionResult):
    """A PredictionResult that also keeps the reasons behind its flags, for debugging."""

    notes: tuple[str, ...] = ()


def truncate_raw(text: str, limit: int = RAW_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left off."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit} more characters]"


def excerpt(text: str, limit: int = 200) -> str:
    """A short one-line quote of ``text`` for a reason."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
