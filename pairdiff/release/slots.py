"""Slots of a true description — the words a hard negative may change — and their other values.

A slot is one span of the sentence of a known kind (a colour, a count, a direction, what
happened, a size, a resolution, a quoted text…); its alternatives are other values of the same
kind. Negatives built by filling the same slot with different values differ from the truth and
from each other in that one place, so no option is the "centre" of the others, and telling them
apart takes the images. Two spans of one kind (``from blue to red``) also give a swap, which
keeps every word of the truth.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pairdiff.release.question_words import WORDS as WORDS  # importable from here too
from pairdiff.release.question_words import word_variants
from pairdiff.release.slot_draws import weighted_order

COLOURS = (
    "red",
    "orange",
    "yellow",
    "green",
    "blue",
    "purple",
    "pink",
    "brown",
    "black",
    "white",
    "grey",
    "magenta",
    "cyan",
    "teal",
    "beige",
)
# Kind → the values a span of that kind may take; order is only the order of the regex.
GROUPS: dict[str, tuple[str, ...]] = {
    "event": ("disappeared", "appeared", "shrank", "grew larger"),
    "motion": ("moved", "turned", "tilted", "slid"),
    "heading": (
        "up and to the left",
        "up and to the right",
        "down and to the left",
        "down and to the right",
        "to the left",
        "to the right",
        "up",
        "down",
    ),
    # A place is the whole phrase a description says it with (``ops.where``): "at the top
    # left", "on the right", "in the centre" — filling it keeps the sentence well-formed.
    "place": (
        "at the top left",
        "at the top right",
        "at the bottom left",
        "at the bottom right",
        "in the centre",
        "on the left",
        "on the right",
        "at the top",
        "at the bottom",
    ),
    "size": ("larger", "smaller", "wider", "narrower", "taller", "shorter"),
    "light": ("brighter", "darker", "warmer", "cooler"),
    "effect": ("noisy", "blurred", "grainy", "sharper", "pixelated", "smoother"),
    "tone": ("warm", "cool", "faint", "strong"),
    "light_kind": ("shadow", "bright light", "glare", "dim light"),
    "ordinal": ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"),
    "colour": COLOURS + ("gray",),
}
# Values of one kind that say the same thing, or that one edit makes true together (a uniform
# enlargement is larger, wider and taller at once): a negative never swaps one for another of
# its set, so no negative is a paraphrase of the truth.
SYNONYMS: dict[str, tuple[frozenset[str], ...]] = {
    kind: tuple(frozenset(group.split("|")) for group in groups.split())
    for kind, groups in {
        "effect": "noisy|grainy blurred|smoother sharper pixelated",
        "size": "larger|wider|taller smaller|narrower|shorter",
        "light": "brighter darker warmer cooler",
        "light_kind": "bright_light|glare shadow|dim_light",
        "motion": "moved|slid|shifted turned|tilted",
        "tone": "warm|strong cool|faint",
        "colour": "grey|gray|silver purple|violet|magenta cyan|teal|turquoise pink|magenta",
    }.items()
}
# Values of one kind that lie on different axes: "cooler" is no negative of "brighter" (it
# changes another property, and reads as made up); a negative stays on the truth's axis.
AXES: dict[str, tuple[frozenset[str], ...]] = {
    "light": (frozenset(("brighter", "darker")), frozenset(("warmer", "cooler"))),
    "tone": (frozenset(("warm", "cool")), frozenset(("faint", "strong"))),
}
# Kinds a negative never changes: "The galaxy on the left appeared" as a negative of "The
# galaxy on the left disappeared" presupposes the galaxy it says was not there, and reads
# as made up. What happened stays; where, which and how much change.
FIXED_KINDS = frozenset(("event",))
# The opposite of each event (the order swap turns one into the other).
OPPOSITE_EVENT = {
    "appeared": "disappeared",
    "disappeared": "appeared",
    "shrank": "grew larger",
    "grew larger": "shrank",
}
# Colours a reader may give one hue (a blue patch called cyan, a teal one green): a made-up
# negative never takes a neighbour of the truth's colour, which might be true of the image.
# Twins are real pairs' truths, each true of its own image: they keep to ``SYNONYMS`` only.
NEAR_COLOURS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split("|"))
    for group in (
        "blue|cyan|teal|turquoise|navy|purple|violet",
        "green|teal|cyan|turquoise",
        "red|pink|magenta|orange|maroon",
        "orange|yellow|brown|beige|gold",
        "purple|violet|magenta|pink",
        "grey|gray|silver|white",
        "grey|gray|silver|black",
        "brown|beige|maroon",
    )
)
MIN_COUNT_GAP = 2  # counts a negative may say: at least this far from the truth
MIN_ANGLE_GAP = 15  # degrees
MIN_AREA_RATIO = 1.2  # resolutions: the larger area at least this much the smaller
_ASPECT_TOLERANCE = 0.02
_DIRECTION_WORDS = frozenset(("up", "down", "left", "right", "top", "bottom", "centre"))


def why_false(kind: str, truth: str, other: str) -> str:
    """Why ``other`` in a slot of ``kind`` makes a false sentence where ``truth`` makes the true
    one, or "" when it may not: the same value, a synonym, too close a number, a resolution of
    another aspect ratio, a direction sharing a part with the truth's."""
    a, b = " ".join(truth.casefold().split()), " ".join(other.casefold().split())
    if a == b:
        return ""
    if kind in ("count", "count_word"):
        x, y = _number(a), _number(b)
        if x is None or y is None or abs(x - y) < MIN_COUNT_GAP:
            return ""
        return f"{b} is {abs(x - y)} away from the true count {a}"
    if kind == "angle":
        if not (a.isdigit() and b.isdigit()) or abs(int(a) - int(b)) < MIN_ANGLE_GAP:
            return ""
        return f"{b}° is {abs(int(a) - int(b))}° away from the true {a}°"
    if kind == "resolution":
        ma, mb = _RESOLUTION.fullmatch(a), _RESOLUTION.fullmatch(b)
        if not ma or not mb:
            return ""
        wa, ha, wb, hb = (int(ma["w"]), int(ma["h"]), int(mb["w"]), int(mb["h"]))
        if abs(wa / ha - wb / hb) > _ASPECT_TOLERANCE * (wa / ha):
            return ""
        big, small = max(wa * ha, wb * hb), min(wa * ha, wb * hb)
        if big < MIN_AREA_RATIO * small:
            return ""
        return f"{b} keeps the aspect ratio of the true {a} but not its size"
    if kind in ("place", "heading"):
        shared = (set(a.split()) & set(b.split())) & _DIRECTION_WORDS
        return "" if shared else f"'{b}' shares no direction with the true '{a}'"
    if kind in FIXED_KINDS:
        return ""
    for axis in AXES.get(kind, ()):
        if (a in axis) != (b in axis):
            return ""
    for group in SYNONYMS.get(kind, ()):
        if a.replace(" ", "_") in group and b.replace(" ", "_") in group:
            return ""
    if kind == "quoted":
        return f"the text reads '{b}', a different word from the true '{a}'"
    return f"'{b}' is another {kind.replace('_', ' ')} than the true '{a}'"


def _number(value: str) -> int | None:
    if value.isdigit():
        return int(value)
    return _NUMBER_WORDS.index(value) + 2 if value in _NUMBER_WORDS else None


# Where a word of a group counts as that kind: one of the words right before it (none: any),
# and what must follow it.
_CONTEXT: dict[str, tuple[tuple[str, ...], str]] = {
    "event": ((), ""),
    "motion": ((), r"(?=\s+(?:to|up|down|left|right|away|towards)\b)"),
    "heading": (("moved", "turned", "tilted", "slid", "shifted"), ""),
    "place": ((), r"(?!\s+(?:row|column|half|corner|side|edge|part|of)\b)"),
    "size": ((), ""),
    "light": ((), ""),
    "effect": (("became", "looks", "is"), ""),
    "tone": ((), r"(?=\s+(?:\w+\s+)?tint)"),
    "light_kind": ((), r"(?=\s+now\s+falls)"),
    "ordinal": ((), r"(?=\s+(?:\w+\s+)?(?:from|in|row|column|one)\b)"),
    "colour": ((), ""),
}


def _pattern(kind: str) -> re.Pattern[str]:
    before, after = _CONTEXT[kind]
    values = sorted(GROUPS[kind], key=len, reverse=True)  # "top left" before "top"
    alternation = "|".join(r"\s+".join(map(re.escape, v.split())) for v in values)
    behind = "(?:" + "|".join(rf"(?<=\b{w}\s)" for w in before) + ")" if before else ""
    return re.compile(rf"{behind}\b(?P<v>{alternation})\b{after}", re.I)


_PATTERNS = {kind: _pattern(kind) for kind in GROUPS}
_LISTED_VALUES = frozenset(v for values in GROUPS.values() for v in values)
_QUOTED = re.compile(r"'(?P<v>[^'\s][^']{0,40})'")
_RESOLUTION = re.compile(r"\b(?P<v>(?P<w>\d{2,5})\s?[x×]\s?(?P<h>\d{2,5}))\b")
_ANGLE = re.compile(r"\b(?P<v>\d{1,3})(?=\s?(?:°|degrees?\b))")
_COUNT = re.compile(r"\b(?P<v>\d{1,3})\b(?!\s?[x×]\s?\d)(?!%)")
_NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_COUNT_WORD = re.compile(r"\b(?P<v>" + "|".join(_NUMBER_WORDS) + r")\b(?=\s+\w+s\b)", re.I)
_SCALES = (0.5, 0.75, 1.25, 1.5, 2.0, 0.6, 0.8)


@dataclass(frozen=True, slots=True)
class Slot:
    kind: str
    start: int
    end: int
    value: str

    @property
    def key(self) -> str:
        return f"{self.kind}@{self.start}"


@dataclass(frozen=True, slots=True)
class Candidate:
    sentence: str
    slot: str  # the slot key it changes, "swap:<kind>" for an exchange of two spans


Prior = dict[str, dict[str, int]]


def slot_prior(descriptions: Iterable[str]) -> Prior:
    """How often each value fills each kind of slot in the true descriptions: negatives drawn
    in these proportions look like truths to anything that reads only text."""
    return slots_prior(find_slots(text) for text in descriptions)


def slots_prior(slot_lists: Iterable[Sequence[Slot]]) -> Prior:
    """``slot_prior`` from the slots of each description (``find_slots``), found already."""
    prior: Prior = {}
    for slots in slot_lists:
        for slot in slots:
            cell = prior.setdefault(slot.kind, {})
            value = _value_key(slot.value)
            cell[value] = cell.get(value, 0) + 1
    return prior


def find_slots(text: str) -> list[Slot]:
    """Every slot of ``text``, leftmost first; a span belongs to the first kind that claims it
    (quoted text and resolutions before anything inside them)."""
    taken: list[tuple[int, int]] = []
    slots: list[Slot] = []

    def claim(kind: str, m: re.Match[str]) -> None:
        start, end = m.span("v")
        if any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        slots.append(Slot(kind, start, end, m.group("v")))

    for m in _QUOTED.finditer(text):
        claim("quoted", m)
    for m in _RESOLUTION.finditer(text):
        claim("resolution", m)
    for m in _ANGLE.finditer(text):
        claim("angle", m)
    for m in _COUNT.finditer(text):
        claim("count", m)
    for m in _COUNT_WORD.finditer(text):
        claim("count_word", m)
    for kind, pattern in _PATTERNS.items():
        for m in pattern.finditer(text):
            claim(kind, m)
    return sorted(slots, key=lambda s: s.start)


def candidates(
    text: str,
    *,
    seed: str,
    prior: Prior | None = None,
    per_slot: int = 6,
    slots: Sequence[Slot] | None = None,
) -> list[Candidate]:
    """Single-slot rewrites of ``text`` (up to ``per_slot`` per slot) and swaps of two spans of
    one kind. Values the release's truths use come first, drawn in proportion to how often
    they do (seeded); then made-up ones. None repeats a value already in the sentence.
    ``slots``: ``find_slots(text)``, when the caller has them already."""
    slots = list(find_slots(text) if slots is None else slots)
    present = {_plain(s.value) for s in slots}
    prior = prior or {}
    found: list[Candidate] = []
    # A direction negative changes the direction, not the verb ("slid" for "moved" is true).
    heading = any(s.kind == "heading" for s in slots)
    for slot in slots:
        if slot.kind == "motion" and heading:
            continue
        rng = random.Random(f"{seed}:{slot.kind}:{slot.value}")
        seen = prior.get(slot.kind, {})
        drawn = weighted_order(seen, rng, leave_out=_value_key(slot.value))
        made = [v for v in _alternatives(slot, rng) if _value_key(v) not in seen]
        # Lazily: the prior can hold thousands of values, and only the first few that fit
        # are used (each check is a regex search).
        options = (
            v
            for v in itertools.chain(drawn, made)
            if _plain(v) not in present
            and not _in_text(v, text)
            and _keeps_order(slot, v, slots)
            and _fits(slot, v)
            and why_false(slot.kind, slot.value, v)
            and not near_colour(slot, v)
        )
        for value in itertools.islice(options, per_slot):
            found.append(Candidate(_replace(text, [(slot, value)]), slot.key))
    by_kind: dict[str, list[Slot]] = {}
    for slot in slots:
        by_kind.setdefault(_swap_kind(slot.kind), []).append(slot)
    for kind, group in by_kind.items():
        # Not resolutions: "lower: 512x512 instead of 307x307" would contradict itself.
        if kind == "resolution":
            continue
        if len(group) == 2 and _plain(group[0].value) != _plain(group[1].value):
            a, b = group
            found.append(Candidate(_replace(text, [(a, b.value), (b, a.value)]), f"swap:{kind}"))
    sentences = {_plain(text)}
    unique = []
    for c in found:
        plain = _plain(c.sentence)
        if plain not in sentences:
            sentences.add(plain)
            unique.append(c)
    return unique


@functools.lru_cache(maxsize=4096)
def _value_key(value: str) -> str:
    key = " ".join(value.split())
    return key.lower() if key.lower() in _LISTED_VALUES else key


def near_colour(slot: Slot, value: str) -> bool:
    """Whether ``value`` in a colour slot is a neighbour of the slot's colour
    (``NEAR_COLOURS``): "cyan" of a blue patch may be true."""
    if slot.kind != "colour":
        return False
    a, b = slot.value.casefold(), value.casefold()
    return any(a in group and b in group for group in NEAR_COLOURS)


def _fits(slot: Slot, value: str) -> bool:
    """A drawn value of the right shape: a count stays a number, a resolution a size."""
    if slot.kind == "quoted":  # a word of the same shape: "-based" stays, length near
        _, dash, tail = slot.value.partition("-")
        return abs(len(value) - len(slot.value)) <= 4 and (not dash or value.endswith(dash + tail))
    if slot.kind in ("heading", "place"):  # options of one length: a long one stands out
        return abs(len(value.split()) - len(slot.value.split())) <= (slot.kind == "heading")
    if slot.kind in ("count", "resolution"):
        pattern = _COUNT if slot.kind == "count" else _RESOLUTION
        return pattern.fullmatch(value) is not None and value != "0"
    return True


def _in_text(value: str, text: str) -> bool:
    """Whether ``value`` is said elsewhere already: "in the left moved to the left" says
    nothing new and reads as nonsense."""
    return _said(value).search(text) is not None


@functools.lru_cache(maxsize=4096)
def _said(value: str) -> re.Pattern[str]:
    words = r"\s+".join(map(re.escape, value.split()))
    return re.compile(rf"(?<!\w){words}(?!\w)", re.I)


def _keeps_order(slot: Slot, value: str, slots: list[Slot]) -> bool:
    """A resolution keeps its side of the other one: "lower: 307x307 instead of 512x512"
    must not become "lower: 307x307 instead of 256x256", which contradicts itself."""
    if slot.kind != "resolution":
        return True
    others = [s for s in slots if s.kind == "resolution" and s is not slot]
    return all(
        (_area(value) < _area(o.value)) == (_area(slot.value) < _area(o.value)) for o in others
    )


def _area(value: str) -> int:
    m = _RESOLUTION.fullmatch(value)
    return int(m.group("w")) * int(m.group("h")) if m else 0


def _swap_kind(kind: str) -> str:
    return "count" if kind == "count_word" else kind


def _alternatives(slot: Slot, rng: random.Random) -> list[str]:
    value = slot.value
    if slot.kind == "quoted":
        return word_variants(value, rng)
    if slot.kind == "resolution":
        m = _RESOLUTION.fullmatch(value)
        assert m is not None
        w, h = int(m.group("w")), int(m.group("h"))
        sep = value[len(m.group("w")) : -len(m.group("h"))]
        sizes = []
        for scale in _SCALES:
            size = f"{round(w * scale)}{sep}{round(h * scale)}"
            if size != value and size not in sizes:
                sizes.append(size)
        rng.shuffle(sizes)
        return sizes
    if slot.kind == "angle":
        n = int(value)
        near = [v for v in (n - 30, n - 20, n + 15, n + 20, n + 30, n + 45) if 0 < v < 360]
        rng.shuffle(near)
        return [str(v) for v in near]
    if slot.kind in FIXED_KINDS:
        return []
    if slot.kind == "count":
        n = int(value)
        near = [v for v in (n - 3, n - 2, n + 2, n + 3, n + 4) if v >= 2 and v != n]
        rng.shuffle(near)
        return [str(v) for v in near]
    if slot.kind == "count_word":
        n = _NUMBER_WORDS.index(value.lower()) + 2
        near = [v for v in (n - 2, n + 2, n + 3) if 2 <= v < len(_NUMBER_WORDS) + 2 and v != n]
        rng.shuffle(near)
        return [_NUMBER_WORDS[v - 2] for v in near]
    key = "grey" if value.lower() == "gray" else " ".join(value.lower().split())
    values = [v for v in GROUPS[slot.kind] if v not in (key, "gray")]
    rng.shuffle(values)
    return values


def _replace(text: str, edits: list[tuple[Slot, str]]) -> str:
    """``text`` with the slots filled; "a"/"an" right before a changed word made to fit."""
    out, pos = "", 0
    for slot, new in sorted(edits, key=lambda e: e[0].start):
        out += text[pos : slot.start]
        article = _ARTICLE_TAIL.search(out)
        if article and new[:1].isalpha():
            fixed = "an" if new[0].lower() in "aeiou" else "a"
            fixed = fixed.capitalize() if article.group(1)[0].isupper() else fixed
            out = out[: article.start(1)] + fixed + article.group(2)
        out += _match_case(text[slot.start : slot.end], new)
        pos = slot.end
    return out + text[pos:]


_ARTICLE_TAIL = re.compile(r"\b(an?)(\s+)$", re.I)


def _match_case(original: str, new: str) -> str:
    if original[:1].isupper() and not new[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


_FINAL_PUNCTUATION = re.compile(r"[\s.!?;:,]+$")


def _plain(text: str) -> str:
    return _FINAL_PUNCTUATION.sub("", " ".join(text.casefold().split()))
