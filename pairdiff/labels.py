"""Entity label normalisation, so two annotators' names for one object compare fairly.

A label is normalised in this order:

1. Unicode NFKC and case folding; hyphens, underscores and slashes count as spaces
   ("T-Shirt" → "t shirt"); runs of whitespace collapse to one space.
2. Punctuation and symbols at either end are dropped ("(car)." → "car"); inside ones stay.
3. Leading articles ("a", "an", "the") are dropped while more words follow.
4. Every alphabetic word is made singular by simple English rules ("red cars" → "red car",
   "slices of pizza" → "slice of pizza"): irregular nouns (people, children, mice, leaves…),
   words that only look plural (glass, bus, grass, series, news) and pluralia tantum
   (glasses, jeans, scissors) are kept. Any fixed rule errs now and then; it errs the same way
   for both annotators, and project synonyms fix what it cannot.
5. Project synonyms (canonical → variants, both normalised by steps 1–4) map the whole label
   to its canonical name. One step only: a canonical is never rewritten, and a variant listed
   under two canonicals goes to the first one listed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence

Synonyms = Mapping[str, Sequence[str]]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ARTICLES = frozenset({"a", "an", "the"})
_SEPARATORS = re.compile(r"[\s\-_/]+")

# Words that end in "s" but are singular or have no singular worth producing.
_KEEP = _word_set(
    """
    glasses jeans pants trousers shorts scissors pliers tongs binoculars goggles clothes
    news series species means headquarters physics mathematics athletics gymnastics politics
    economics gas canvas atlas chaos cosmos christmas lens sheep deer fish aircraft
    """
)

_IRREGULAR = {
    "men": "man",
    "people": "person",
    "children": "child",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "oxen": "ox",
    "lice": "louse",
    "cacti": "cactus",
    "fungi": "fungus",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "crises": "crisis",
    "analyses": "analysis",
    "gases": "gas",
    "lenses": "lens",
    "canvases": "canvas",
    "atlases": "atlas",
    "irises": "iris",
    "bonuses": "bonus",
    "viruses": "virus",
    "campuses": "campus",
    "circuses": "circus",
    "octopuses": "octopus",
    "walruses": "walrus",
    "cactuses": "cactus",
    "choruses": "chorus",
    "quizzes": "quiz",
    "menus": "menu",
    "emus": "emu",
    "gnus": "gnu",
    "gurus": "guru",
    "tutus": "tutu",
    "haikus": "haiku",
    "tomatoes": "tomato",
    "potatoes": "potato",
    "heroes": "hero",
    "echoes": "echo",
    "mosquitoes": "mosquito",
    "volcanoes": "volcano",
    "dominoes": "domino",
    "torpedoes": "torpedo",
    "leaves": "leaf",
    "wolves": "wolf",
    "knives": "knife",
    "wives": "wife",
    "lives": "life",
    "shelves": "shelf",
    "halves": "half",
    "calves": "calf",
    "loaves": "loaf",
    "scarves": "scarf",
    "thieves": "thief",
    "elves": "elf",
    "selves": "self",
    "hooves": "hoof",
}

# Singular nouns ending in "ie": their plural "-ies" must not become "-y" (movies → movie).
_IE_NOUNS = _word_set(
    """
    movie cookie pie tie lie die zombie selfie brownie rookie calorie hoodie beanie collie
    birdie genie magpie necktie bowtie smoothie prairie pixie veggie goalie auntie budgie
    """
)

# Words ending in "men" that are not plurals of "-man".
_MEN_SINGULAR = frozenset({"omen", "semen", "specimen", "abdomen", "stamen", "hymen", "ramen"})


def singular(word: str) -> str:
    """The singular of one lower-case English word by the rules above; other words unchanged."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if not word.isalpha() or len(word) <= 3 or word in _KEEP:
        return word
    if word.endswith("men") and word not in _MEN_SINGULAR:
        return word[:-3] + "man"  # women, snowmen, firemen
    if not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-1] if len(word) <= 4 or word[:-1] in _IE_NOUNS else word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes", "buses")):
        return word[:-2]
    # "peoples" → "people" → "person": normalising twice must change nothing.
    return _IRREGULAR.get(word[:-1], word[:-1])


def _basic(text: str) -> str:
    """Rules 1–4: the label without synonyms."""
    # NFKC again after folding: folding can leave decomposed sequences behind.
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    words = _strip_edges(_SEPARATORS.sub(" ", folded)).split()
    while len(words) > 1 and words[0] in _ARTICLES:
        # Dropping "a" from "a :0" exposes new edge punctuation, so strip again.
        words = _strip_edges(" ".join(words[1:])).split()
    return " ".join(singular(w) for w in words)


def _strip_edges(text: str) -> str:
    """``text`` without whitespace, punctuation and symbols at either end."""
    start, end = 0, len(text)
    while start < end and _is_edge_junk(text[start]):
        start += 1
    while end > start and _is_edge_junk(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_edge_junk(char: str) -> bool:
    return char.isspace() or unicodedata.category(char)[0] in "PS"


def synonym_index(synonyms: Synonyms | None) -> dict[str, str]:
    """Normalised variant (and canonical) → normalised canonical, by rule 5 above."""
    index: dict[str, str] = {}
    for canonical in synonyms or {}:
        key = _basic(canonical)
        index.setdefault(key, key)
    for canonical, variants in (synonyms or {}).items():
        for variant in variants:
            index.setdefault(_basic(variant), _basic(canonical))
    return index


def label_normaliser(synonyms: Synonyms | None = None) -> Callable[[str], str]:
    """``normalise_label`` with the synonym index built once, for comparing many labels."""
    index = synonym_index(synonyms)

    def normalise(text: str) -> str:
        basic = _basic(text)
        return index.get(basic, basic)

    return normalise


def normalise_label(text: str, synonyms: Synonyms | None = None) -> str:
    """``text`` normalised by the module's rules; "" for a blank label."""
    return label_normaliser(synonyms)(text)


def labels_agree(a: str, b: str, synonyms: Synonyms | None = None) -> bool:
    """True when ``a`` and ``b`` normalise to the same label."""
    normalise = label_normaliser(synonyms)
    return normalise(a) == normalise(b)
