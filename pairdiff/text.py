"""Similarity of two change descriptions, reported beside the agreement verdict."""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from pairdiff.labels import singular

_WORD = re.compile(r"[^\W_]+")


def description_words(text: str) -> list[str]:
    """Words of ``text``: NFKC, case-folded, letters and digits only, each made singular."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [singular(w) for w in _WORD.findall(folded)]


def description_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1]: the mean of word-set Dice and word-sequence difflib ratio.

    Dice (2·|A∩B| / (|A|+|B|), the F1 of the word sets) rewards the same vocabulary in any
    order; the ratio over the word sequences adds order, so "white to blue" and "blue to white"
    score below 1. Words rather than characters keep the cost small for long descriptions.
    1.0 exactly when the word sequences are equal (two blank texts included); 0.0 when only
    one text is blank or no word is shared. Symmetric in ``a`` and ``b``.
    """
    words_a, words_b = description_words(a), description_words(b)
    if not words_a or not words_b:
        return 1.0 if words_a == words_b else 0.0
    set_a, set_b = set(words_a), set(words_b)
    dice = 2 * len(set_a & set_b) / (len(set_a) + len(set_b))
    # difflib's longest-match tie-breaking depends on argument order; averaging both
    # directions keeps the score symmetric.
    ratio = (_ratio(words_a, words_b) + _ratio(words_b, words_a)) / 2
    return (dice + ratio) / 2


def _ratio(a: list[str], b: list[str]) -> float:
    return SequenceMatcher(None, a, b, autojunk=False).ratio()
