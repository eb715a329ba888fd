"""The words and templates hard negatives are made from: swaps, colours, counts, templates."""

from __future__ import annotations

import random
import re
from itertools import chain


def _table(spec: str) -> dict[str, str]:
    """``a=b`` swaps both ways, ``a>b`` one way; the first entry for a word wins."""
    table: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        a, b = (s.strip() for s in re.split("[=>]", item))
        table.setdefault(a, b)
        if "=" in item:
            table.setdefault(b, a)
    return table


DIRECTIONS = _table(
    """left=right, up=down, above=below, top=bottom, upper=lower, higher=lower, high=low,
    in front of=behind, front>back, on top of>under, under>above, beneath>above,
    underneath>above, closer=farther, nearer>farther, clockwise=counterclockwise,
    counter-clockwise>clockwise, anticlockwise>clockwise, anti-clockwise>clockwise,
    larger=smaller, bigger>smaller, large=small, big>small, increased=decreased,
    increases=decreases, increase=decrease, increasing=decreasing, brighter=darker,
    brightened=darkened, bright=dark, lighter>darker, more=fewer, less>more, wider=narrower,
    wide=narrow, sharper=blurrier, sharp=blurry, sharpened=blurred, taller=shorter, tall=short,
    longer>shorter, thicker=thinner, raised=lowered, lifted>lowered, open=closed, opened>closed,
    turned on=turned off, switched on=switched off, inside=outside, towards=away from,
    toward>away from, forward=backward, forwards=backwards, zoomed in=zoomed out,
    enlarged=shrunk, warmer=cooler, noisier=cleaner, rougher=smoother, standing=sitting,
    stood=sat, rose=fell, horizontal=vertical, horizontally=vertically"""
)
ADDED_REMOVED = _table(
    """added=removed, adds=removes, add=remove, adding=removing, appeared=disappeared,
    appears=disappears, appear=disappear, appearing=disappearing, inserted=deleted,
    vanished>appeared, emerged>disappeared"""
)
# After "lower", these words mean a place ("the lower half" → "upper"), anything else a
# level ("became lower" → "higher"); "upper" after "became" would not be English.
PLACES = frozenset(
    ("left", "right", "part", "half", "body", "corner", "side", "edge", "area", "region", "shelf")
)
COLOUR_FAMILIES = (
    ("red", "orange", "yellow", "pink", "brown", "gold", "beige", "maroon"),
    ("green", "blue", "purple", "violet", "cyan", "teal", "turquoise", "navy"),
    ("black", "white", "grey", "silver"),
)
FAMILY = {c: i for i, family in enumerate(COLOUR_FAMILIES) for c in family}
COLOUR = re.compile(
    r"\b(?:(?:dark|light|pale|bright|deep)[\s-]+)?(" + "|".join([*FAMILY, "gray"]) + r")\b", re.I
)
NUMBER_WORDS: tuple[str, ...]
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
NUMBER_WORDS += ("ten", "eleven", "twelve")
VALUES = {word: value for value, word in enumerate(NUMBER_WORDS)} | {"a single": 1}
COUNT = re.compile(r"\b(?:a\s+single|" + "|".join(NUMBER_WORDS[1:]) + r"|\d{1,3})\b", re.I)
WORD_AFTER = re.compile(r"\s+([^\W\d_]+)")
AGREE = {"is": "are", "was": "were", "has": "have"}
ARTICLE_TAIL = re.compile(r"\b(an?)(\s+)$", re.I)

MOVE = ("The {e} moved to the left.", "The {e} moved to the right.", "The {e} moved up.")
TEMPLATES: dict[str, tuple[str, ...]] = {
    "position": MOVE,
    "relation": MOVE,
    "motion": ("The {e} changed its pose.", "The {e} turned to the left.", "The {e} turned right."),
    "attribute": ("The {e} changed colour.", "The {e} changed material.", "The {e} became open."),
    "regional_colour": ("The {e} changed colour.", "The {e} became darker."),
    "global_colour": ("The image became warmer.", "The image became cooler."),
    "object": ("The {e} was removed.", "The {e} was added.", "The {e} was replaced."),
    "appear_disappear": ("The {e} was removed.", "The {e} was added."),
    "counting": ("Another {e} appeared.", "One {e} was removed."),
    "noise_resolution": ("The image became noisier.", "The image became blurrier."),
    "texture": ("The {e} became smoother.", "The {e} became rougher.", "The {e} became blurrier."),
    "replacement_size": ("The {e} became larger.", "The {e} became smaller."),
    "ocr_text": ("The text on the {e} changed.", "The text was removed.", "New text was added."),
    "lighting": ("The image became brighter.", "The image became darker.", "A shadow appeared."),
}
GENERIC = tuple(dict.fromkeys(chain.from_iterable(TEMPLATES.values())))
# Category → rules tried first; the other rules follow, then the templates.
PREFERENCES = {
    **dict.fromkeys(["attribute", "regional_colour", "global_colour"], ("colour",)),
    **dict.fromkeys(
        ["relation", "position", "motion", "lighting", "texture", "noise_resolution"],
        ("direction",),
    ),
    "object": ("entity", "added_removed"),
    "counting": ("count",),
    "appear_disappear": ("added_removed",),
    "replacement_size": ("direction", "entity"),
}


# Real words a quoted text may be replaced with (besides the other texts of the release):
# a negative never reads as a misspelling, which would tell it from the truth.
_WORD_LIST = """open close start stop entry exit north south east west water paper stone metal
    light night river field house garden market school office station harbour bridge
    tower castle forest island valley summer winter spring autumn morning evening
    window door table chair letter number signal target record report system method
    model sample result figure image region object colour surface border centre corner
    circle square label marker values points cells stars seeds graph edge shape detail
    level layer frame scale range limit total first second third final early later
    inside outside above below before after under over small large black white green
    orange purple silver golden yellow simple complex random normal global local sharp
    structure direction detection resolution calibration distribution recognition measurement
    background foreground threshold gradient boundary function operation transform component
    classification reconstruction estimation processing smoothing filtering"""
WORDS = tuple(_WORD_LIST.split())


def word_variants(word: str, rng: random.Random) -> list[str]:
    """Real words of about the text's length (the eight closest), cased like it."""
    head, dash, tail = word.partition("-")  # "Region-based": another word before "-based"
    if dash and len(head) < 3:  # "X-ray": no word to swap
        return []
    words = [w for w in WORDS if w != head.lower()]
    rng.shuffle(words)
    words.sort(key=lambda w: abs(len(w) - len(head)))  # stable: shuffled among equals
    near = [w.capitalize() if head[:1].isupper() else w for w in words[:8]]
    return [w + dash + tail for w in near]
