"""Whether a predicted description says the same change as the truth, slot by slot (pure).

A release knows what a description claims: its slots (``pairdiff.release.slots``: a colour, a
count, a direction, what happened, a size, an effect, a quoted text…), the opposite words its
hard negatives flip (``question_words``: left ↔ right, added ↔ removed, larger ↔ smaller…) and
the entity labels of its records. A prediction

- *contradicts* the truth when it fills a slot kind the truth fills with other values (or the
  same values in another order: "from blue to red" against "from red to blue"), or uses the
  other pole of an opposite pair the truth uses ("removed" against "added", "appeared"
  against "disappeared");
- *keeps* the truth when every slot and every entity label of the truth is in it.

``slot_similarity`` is 0.0 for a prediction that contradicts or does not keep the truth,
whatever its word overlap; 1.0 for one that keeps every slot of a truth that has slots (a
paraphrase: other words, the same claims); and the word similarity
(``pairdiff.text.description_similarity``) for a truth without slots, where words are all there
is to compare. Values are compared after case folding, "gray" as "grey" and number words as
digits.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from pairdiff.release.question_words import ADDED_REMOVED, DIRECTIONS, NUMBER_WORDS
from pairdiff.release.slots import find_slots
from pairdiff.text import description_similarity

Claims = dict[str, tuple[str, ...]]


def slot_similarity(truth: str, predicted: str, *, labels: Iterable[str] = ()) -> float:
    """See the module's docstring; ``labels`` are the release's entity labels."""
    label_set = frozenset(labels)
    want, got = claims(truth, label_set), claims(predicted, label_set)
    if contradicts(want, got) or not keeps(want, got, predicted):
        return 0.0
    if any(not kind.startswith(("pole:", "entity")) for kind in want):
        return 1.0
    return description_similarity(truth, predicted)


def claims(text: str, labels: frozenset[str] = frozenset()) -> Claims:
    """What ``text`` claims: slot values by kind (``colour``, ``count``…), poles of opposite
    pairs (``pole:<pair>``) and entity labels (``entity``), each in the order said."""
    found: dict[str, list[str]] = {}
    for slot in find_slots(text):
        kind = "count" if slot.kind == "count_word" else slot.kind
        found.setdefault(kind, []).append(_value(slot.kind, slot.value))
    for pair, pole in _poles(text):
        found.setdefault(f"pole:{pair}", []).append(pole)
    mentioned = _labels_in(text, labels)
    if mentioned:
        found["entity"] = list(mentioned)
    return {kind: tuple(values) for kind, values in found.items()}


def contradicts(truth: Claims, predicted: Claims) -> bool:
    """A slot kind or an opposite pair both fill, with other values (or another order)."""
    for kind, values in truth.items():
        if kind == "entity":
            continue
        other = predicted.get(kind)
        if other is None:
            continue
        if kind.startswith("pole:"):
            if set(other) != set(values):
                return True
        elif other != values:
            return True
    return False


def keeps(truth: Claims, predicted: Claims, text: str = "") -> bool:
    """Every slot of the truth said in the prediction, and every entity label it names. A
    slot kind the prediction's wording does not mark as such (``text``: "moved the cup to
    the left" has no "moved to the left") is kept when each of its values is said anyway, or,
    for a word of an opposite pair, when the prediction says the same pole ("vanished" for
    "disappeared")."""
    for kind, values in truth.items():
        if kind.startswith("pole:"):
            continue
        if kind == "entity":
            if not set(values) <= set(predicted.get("entity", ())):
                return False
        elif kind in predicted:
            if predicted[kind] != values:
                return False
        elif not all(_said_anyway(v, predicted, text) for v in values):
            return False
    return True


def _said_anyway(value: str, predicted: Claims, text: str) -> bool:
    if re.search(rf"(?<![\w-]){_words(value)}(?![\w-])", text, re.I):
        return True
    poles = _poles(value)
    return bool(poles) and all(pole in predicted.get(f"pole:{pair}", ()) for pair, pole in poles)


def _words(value: str) -> str:
    return r"\s+".join(map(re.escape, value.split()))


def _value(kind: str, value: str) -> str:
    plain = " ".join(value.casefold().split())
    if kind == "count_word" and plain in NUMBER_WORDS:
        return str(NUMBER_WORDS.index(plain))
    return "grey" if plain == "gray" else plain


# Words that say the same pole as a word of the tables ("appeared" for "added").
_SAME_POLE = {
    "appeared": "added",
    "appears": "added",
    "appear": "added",
    "appearing": "added",
    "inserted": "added",
    "emerged": "added",
    "disappeared": "removed",
    "disappears": "removed",
    "disappear": "removed",
    "disappearing": "removed",
    "deleted": "removed",
    "vanished": "removed",
}


@functools.cache
def _pole_table() -> tuple[re.Pattern[str], dict[str, tuple[str, str]]]:
    """Each word of an opposite pair → (the pair's name, the pole it says), and a pattern
    finding them (longest first: "turned on" before "on")."""
    poles: dict[str, tuple[str, str]] = {}
    for table in (ADDED_REMOVED, DIRECTIONS):
        for word, other in table.items():
            pole = word
            partner = table.get(other, "")
            if partner != word and table.get(partner) == other:
                pole = partner  # one way ("bigger>smaller"): the opposite of smaller, "larger"
            pole, opposite = _SAME_POLE.get(pole, pole), _SAME_POLE.get(other, other)
            poles.setdefault(word, ("/".join(sorted((pole, opposite))), pole))
    words = sorted(poles, key=len, reverse=True)
    alternation = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words)
    return re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])", re.I), poles


def _poles(text: str) -> list[tuple[str, str]]:
    pattern, poles = _pole_table()
    out = []
    for m in pattern.finditer(text):
        key = " ".join(m.group(0).casefold().split())
        if key in poles:
            out.append(poles[key])
    return out


def _labels_in(text: str, labels: frozenset[str]) -> tuple[str, ...]:
    """The labels ``text`` names (a plural too), each once, in order; longest first, so
    "coffee cup" is not also "cup"."""
    if not labels:
        return ()
    pattern = _label_pattern(labels)
    seen: dict[str, None] = {}
    for m in pattern.finditer(text):
        seen.setdefault(_singular(" ".join(m.group(1).casefold().split()), labels), None)
    return tuple(seen)


@functools.lru_cache(maxsize=32)
def _label_pattern(labels: frozenset[str]) -> re.Pattern[str]:
    words = sorted(labels, key=len, reverse=True)
    alternation = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words)
    return re.compile(rf"(?<![\w-])({alternation})(?:e?s)?(?![\w-])", re.I)


def _singular(found: str, labels: frozenset[str]) -> str:
    return found if found in labels else found.rstrip("s")


def release_labels(records: Iterable[Mapping]) -> frozenset[str]:
    """The entity labels of a release's records, case folded (the words a description names
    its entities by)."""
    out = set()
    for record in records:
        for change in record.get("changes", []):
            for side in ("entity_a", "entity_b"):
                label = " ".join(str(change.get(side) or "").casefold().split())
                if label and label not in ("image", "none"):
                    out.add(label)
    return frozenset(out)
