"""Negatives of a sentence with too few slots to fill ("A cup was added on the table."): the
last resort of a question no twin group, no other pair's truth and no slot rewrite can serve.

Each is the truth with one thing changed so that it is false and still reads like a sentence a
person wrote: the direction word turned to its opposite ("in front of" → "behind", "left" →
"right"), or the thing named swapped for another thing ("A cup was added on the table." → "A
bowl was added on the table.", with "a"/"an" fixed) — a label of the project or of other pairs
first, else a common object. The new thing is never the old one said otherwise (a cup is no
mug), never one the sentence or the pair's other changes name already, and never a word that
names no object (image, region, text). What happened is never changed: "A cup was removed on
the table" of an added cup presupposes a cup that was not there and reads as made up. When the
sentence does not name its thing, "A bowl appeared." and the like, of another thing, fill in.
Every negative says which slot it changed and why it is false (``explain``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence

from pairdiff.labels import normalise_label
from pairdiff.release.question_checks import plain

# Common objects an entity swap may name when the project has too few labels of its own.
STOCK = tuple(
    [
        "bird",
        "bottle",
        "book",
        "bowl",
        "box",
        "chair",
        "clock",
        "lamp",
        "plate",
        "vase",
        "ball",
        "bag",
        "bench",
        "basket",
        "bucket",
        "candle",
        "flag",
        "flower",
        "helmet",
        "jar",
        "kettle",
        "ladder",
        "mirror",
        "pillow",
        "shoe",
        "spoon",
        "stool",
        "teapot",
        "towel",
        "tray",
        "umbrella",
        "wheel",
    ]
)
# Labels that name no thing one adds, removes or moves: never put in a sentence as one.
_NOT_THINGS = frozenset(
    [
        "image",
        "picture",
        "photo",
        "photograph",
        "scene",
        "background",
        "foreground",
        "region",
        "area",
        "part",
        "thing",
        "object",
        "text",
        "word",
        "letter",
        "colour",
        "color",
        "light",
        "shadow",
        "sky",
        "whole",
        "surface",
        "edge",
        "centre",
        "center",
        "side",
        "top",
        "bottom",
        "left",
        "right",
    ]
)
# Labels that may name the same thing: a negative never swaps one for another of its set.
SAME_THING: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split("|"))
    for group in [
        "cup|mug|glass|beaker",
        "car|automobile|vehicle|van|truck|taxi",
        "person|man|woman|people|child|boy|girl|human|astronaut|pedestrian",
        "dog|puppy|hound",
        "cat|kitten",
        "bowl|dish|basin",
        "plate|dish|saucer",
        "bag|handbag|purse|backpack",
        "bicycle|bike|cycle",
        "tv|television|screen|monitor",
        "sofa|couch|settee",
        "picture|painting|photo|frame|poster",
        "bottle|flask",
        "rock|stone|pebble",
        "coin|medal|token",
        "lamp|light|lantern|floodlight|bulb",
        "box|crate|carton|case",
        "clock|watch",
        "stool|chair|seat",
        "jar|pot|vase|pitcher|jug",
        "kettle|teapot|pot",
        "bench|seat",
        "ball|sphere",
        "book|notebook|booklet",
        "galaxy|star|nebula",
        "patch|badge|emblem|logo|sticker",
        "sign|signboard|board|notice",
    ]
)
# A direction word and its opposite: a negative of a sentence with no slot to fill turns it.
# Only words that say where or which way, not adjectives of the thing ("a dark light").
_OPPOSITE_PAIRS = (
    ("left", "right"),
    ("above", "below"),
    ("top", "bottom"),
    ("in front of", "behind"),
    ("up", "down"),
    ("clockwise", "counterclockwise"),
    ("inside", "outside"),
    ("towards", "away from"),
    ("closer", "farther"),
    ("larger", "smaller"),
    ("brighter", "darker"),
    ("wider", "narrower"),
    ("taller", "shorter"),
    ("thicker", "thinner"),
    ("raised", "lowered"),
    ("opened", "closed"),
    ("turned on", "turned off"),
    ("switched on", "switched off"),
    ("forward", "backward"),
    ("zoomed in", "zoomed out"),
    ("enlarged", "shrunk"),
)
OPPOSITES = {a: b for a, b in _OPPOSITE_PAIRS} | {b: a for a, b in _OPPOSITE_PAIRS}
_OPPOSITE = re.compile(
    r"(?<![\w-])(?P<w>"
    + "|".join(r"\s+".join(map(re.escape, k.split())) for k in sorted(OPPOSITES, key=len)[::-1])
    + r")(?![\w-])",
    re.I,
)
# What any thing can do: only a sentence saying one of these takes an entity swap ("A bowl
# was added on the table."), where "The door was opened." → "The dog was opened." would not.
_ANY_THING = re.compile(
    r"\b(?:added|removed|appeared|disappeared|vanished|moved|placed|put|replaced|inserted|"
    r"deleted|(?:is|are) now|grew|shrank|became (?:larger|smaller|bigger))\b",
    re.I,
)
# "The round mission patch disappeared.": a determiner, up to three words, the noun, a verb
# of ``_ANY_THING`` (or an auxiliary before one).
_SUBJECT = re.compile(
    r"(?:the|a|an)\s+(?:[^\W\d_]+\s+){0,3}?(?P<noun>[^\W\d_]+)\s+"
    r"(?:was\s+|were\s+|has\s+|have\s+|is\s+|are\s+)?"
    r"(?:added|removed|appeared|disappeared|vanished|moved|placed|put|replaced|inserted|deleted|"
    r"now|grew|shrank)\b",
    re.I,
)
_DETERMINERS = frozenset(("a", "an", "the", "this", "that", "its", "their", "one"))
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
TEMPLATES = ("A {e} appeared.", "A {e} disappeared.", "A {e} moved to the left.")
_TEMPLATE_PATTERNS = tuple(
    re.compile(
        re.escape(t).replace("A\\ ", "An?\\ ", 1).replace(r"\{e\}", r"(?P<e>[a-z]+(?: [a-z]+)?)")
    )
    for t in TEMPLATES
)


def fallback_negatives(
    *,
    description: str,
    entities: Sequence[str],
    entity_pool: Sequence[str] = (),
    seed: int | str,
    n: int = 2,
) -> list[str]:
    """``n`` well-formed false negatives of ``description`` (direction turns first, then
    entity swaps, then templates of other things). ``entities``: every entity label of the
    pair's changes (none of them is swapped in); ``entity_pool``: the project's or the
    release's other labels, tried before ``STOCK``. ValueError when fewer than ``n``."""
    text = " ".join(description.split())
    if not text or n < 0:
        raise ValueError("fallback_negatives needs a non-empty description and n >= 0")
    rng = random.Random(f"{seed}:fallback:{text}")
    found = [*_turned(text), *_swapped(text, entities, _others(text, entities, entity_pool, rng))]
    others = _others(text, entities, entity_pool, random.Random(f"{seed}:templates:{text}"))
    found += [_article(TEMPLATES[i % len(TEMPLATES)].format(e=e)) for i, e in enumerate(others[:6])]
    seen = {plain(text)}
    out: list[str] = []
    for sentence in found:
        if plain(sentence) not in seen:
            seen.add(plain(sentence))
            out.append(sentence)
        if len(out) == n:
            return out
    raise ValueError(f"only {len(out)} well-formed negatives could be made, not {n}")


def explain(truth: str, negative: str) -> tuple[str, str]:
    """The slot ``negative`` changed in ``truth`` and why it is false: the span the two
    differ in (common words at either end left out)."""
    a, b = _WORDS.findall(truth.casefold()), _WORDS.findall(negative.casefold())
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    old, new = " ".join(a[start : len(a) - end]), " ".join(b[start : len(b) - end])
    if OPPOSITES.get(old) == new:
        return "direction", f"'{new}' is the opposite of the true '{old}'"
    for pattern in _TEMPLATE_PATTERNS:
        m = pattern.fullmatch(negative)
        if m:
            return "entity", f"names {_fit('a ', m['e'])}, which is no thing this pair changed"
    return "entity", f"'{new}' in place of the true '{old}': another thing than this pair's"


def _turned(text: str) -> list[str]:
    """The sentence with one direction word turned to its opposite, each in turn."""
    out = []
    for m in _OPPOSITE.finditer(text):
        key = " ".join(m.group("w").casefold().split())
        new = OPPOSITES[key]
        if _said(new, text):  # "from left to right" → "from right to right" says nothing
            continue
        out.append(text[: m.start()] + _case(m.group("w"), new) + text[m.end() :])
    return out


def _swapped(text: str, entities: Sequence[str], others: Sequence[str]) -> list[str]:
    """The sentence with the noun phrase of its first entity that it names swapped for each
    of ``others``: determiner kept ("a"/"an" made to fit), modifiers dropped ("the round
    mission patch" → "the bowl", never "the round mission bowl")."""
    if not _ANY_THING.search(text):  # "The dog was opened.": not every thing can be
        return []
    labels = sorted({e.strip() for e in entities if e.strip()}, key=len, reverse=True)
    subject = _SUBJECT.match(text)  # the entity not named as labelled: the sentence's subject
    if subject and subject["noun"].casefold() not in _NOT_THINGS:
        labels.append(subject["noun"])
    for label in labels:
        m = _label(label).search(text)
        if m is None:
            continue
        start = m.start()
        # Back to a determiner at most three words before: the modifiers between go.
        words = list(re.finditer(r"(\S+)\s+", text[: m.start()]))[-3:]
        for w in reversed(words):
            if w.group(1).casefold() in _DETERMINERS:
                start = w.end()
                break
        spans = [(start, m.end(), bool(m.group("plural")))]
        spans += [
            (x.start(), x.end(), bool(x.group("plural")))
            for x in _label(label).finditer(text, m.end())
        ]
        out = []
        for other in others:
            sentence, pos = "", 0
            for a, b, plural in spans:  # every mention: "... next to the other bowls."
                new = _plural(other) if plural else other
                sentence = _fit(sentence + text[pos:a], _case(text[a:b], new))
                pos = b
            out.append(sentence + text[pos:])
        return out
    return []


def _others(
    text: str, entities: Sequence[str], pool: Sequence[str], rng: random.Random
) -> list[str]:
    """Labels of other things, the pool's first (seeded order within each), none the
    sentence's or the pair's, none of the same thing, none that names no thing."""
    taken = {normalise_label(e) for e in entities if e.strip()}
    words = {w for t in taken for w in t.split()} | set(_WORDS.findall(text.casefold()))
    near = set(taken)
    for group in SAME_THING:
        if group & {w for t in taken for w in t.split()} or group & taken:
            near |= group
    own = sorted({p.strip() for p in pool if p.strip()})
    rng.shuffle(own)
    stock = list(STOCK)
    rng.shuffle(stock)
    out: list[str] = []
    seen: set[str] = set()
    for label in (*own, *stock):
        key = normalise_label(label)
        parts = key.split()
        if (
            not key
            or key in seen
            or len(parts) > 2
            or not all(p.isalpha() for p in parts)
            or key in near
            or set(parts) & words
            or set(parts) & near
            or set(parts) & _NOT_THINGS
        ):
            continue
        seen.add(key)
        out.append(key)
    return out


def _label(label: str) -> re.Pattern[str]:
    words = r"\s+".join(map(re.escape, label.split()))
    return re.compile(rf"(?<!\w){words}(?P<plural>e?s)?(?!\w)", re.I)


def _said(value: str, text: str) -> bool:
    words = r"\s+".join(map(re.escape, value.split()))
    return re.search(rf"(?<!\w){words}(?!\w)", text, re.I) is not None


def _fit(before: str, new: str) -> str:
    """``before`` + ``new`` with a final "a"/"an" made to fit ``new``."""
    m = re.search(r"(?<!\w)(an?)(\s+)$", before, re.I)
    if m and new[:1].isalpha():
        fixed = "an" if new[0].casefold() in "aeiou" else "a"
        fixed = fixed.capitalize() if m.group(1)[0].isupper() else fixed
        before = before[: m.start(1)] + fixed + m.group(2)
    return before + new


def _article(sentence: str) -> str:
    """A template's "A" made to fit its noun ("A apple" → "An apple")."""
    head, _, rest = sentence.partition(" ")
    return _fit(head + " ", rest) if head in ("A", "An") else sentence


def _case(original: str, new: str) -> str:
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def _plural(word: str) -> str:
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + "s"


def entities_of(changes: Iterable[Mapping]) -> list[str]:
    """Every entity label of a record's changes."""
    return [c.get(k) or "" for c in changes for k in ("entity_a", "entity_b")]


def labels_of(records: Iterable[Mapping]) -> list[str]:
    """Every entity label of the records' changes once (normalised), sorted: the pool of
    things an entity swap may name."""
    return sorted({normalise_label(e) for r in records for e in entities_of(r["changes"]) if e})


def of_other_things(record: Mapping, other: Mapping) -> bool:
    """Whether ``other``'s first change is about things ``record``'s are not: both name their
    things, no label (or a word of one, or a label of the same thing) of either is a word of
    the other's labels or description. Another pair's truth "A bird appeared." is then false
    of a pair whose truth is "A cup appeared." (it shows no bird appearing)."""
    mine, theirs = (_things(r) for r in (record, other))
    if not mine or not theirs or mine & theirs:
        return False
    words = set(_WORDS.findall(record["description"].casefold()))
    other_words = set(_WORDS.findall(other["description"].casefold()))
    return not (mine & other_words or theirs & words)


def _things(record: Mapping) -> set[str]:
    """The words of the record's entity labels and of labels of the same thing."""
    words = {w for e in entities_of(record["changes"]) if e for w in normalise_label(e).split()}
    words -= _NOT_THINGS
    for group in SAME_THING:
        if group & words:
            words |= group
    return words
