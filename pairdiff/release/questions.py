"""Multiple-choice questions in the VDiff-Bench style: the truth, hard negatives, "no difference".

A hard negative is the true description with one slot filled with another value (a colour, a
count, a direction, a place…: ``slots.candidates``), chosen so that no option stands out to
a text-only reader; sentences with too few slots take ``fallback.fallback_negatives``.
Randomness comes from ``random.Random(str)`` (SHA-512 of the string), never from ``hash()``,
so a release rebuilt with the same seed is byte for byte the same.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from itertools import combinations

from pairdiff.release.baselines import set_jaccard, word_set
from pairdiff.release.slots import Prior, Slot, candidates

NO_DIFFERENCE = "There is no difference between the two images."
LETTERS = ("A", "B", "C", "D")
LENGTH_RANK = 0.3
CENTRE = 0.5  # cost of a set of options whose centre (or one of two) is the truth
MAX_POOL = 24  # candidates a question chooses its negatives among
QUESTION = "Which sentence describes the difference between image A and image B?"


def image_negatives(
    *,
    description: str,
    instruction: str = "",
    seed: int | str,
    prior: Prior | None = None,
    n: int = 2,
    slots: Sequence[Slot] | None = None,
) -> list[str] | None:
    """``n`` negatives that each fill one slot of the truth (a colour, a count, a direction,
    what happened, a quoted text…) with another value, or None when the sentence has too few.
    ``prior`` (``slot_prior`` of the release's truths) makes the values look like truths.

    Of the candidate sets, the most symmetric wins: the options as alike as each other (the
    truth is not the centre); negatives changing the same kind of slot; the truth at a length
    rank drawn per question (so it is the longest a third of the time); options of one
    length; then a seeded draw. Values the release's truths use come first among the candidates, so
    negatives read like truths. ``instruction`` is
    not looked at: the edit instruction states the edit, no negative can hide from it.
    ``slots``: ``find_slots`` of the description, when the caller has them already.
    """
    text = description.strip()
    pool = [
        c
        for c in candidates(text, seed=f"{seed}", prior=prior, slots=slots)
        if _norm(c.sentence) != _NO_DIFFERENCE_NORM
    ]
    if len(pool) < n:
        return None
    rng = random.Random(f"{seed}:pick:{text}")
    # Where the truth should fall among the three lengths, drawn per question: over a release
    # it is the longest a third of the time, whatever lengths its slot's values have.
    length_rank = rng.randrange(3)
    # Each sentence's words, kind and length once, each pair's similarity once: a question
    # scores up to 276 sets of options.
    sentences = [text, *(c.sentence for c in pool[:MAX_POOL])]
    sets = [word_set(s) for s in sentences]
    alike = _similarities(sets)
    lengths = [len(s) for s in sentences]
    kinds = [""] + [_kind(c.slot) for c in pool[:MAX_POOL]]
    score = _score_two if n == 2 else _score_any
    best: tuple[float, float] | None = None
    chosen: tuple[int, ...] = ()
    for combo in combinations(range(1, len(sentences)), n):
        # A spread, not the truth's rank: options equally alike give a text-only heuristic
        # nothing to go on, while steering the truth away from the centre would only make it
        # the odd one out — a tell of its own. Likewise options of exactly one length are
        # preferred, but not "nearly as long": that would make a long truth the longest.
        key = (round(score(combo, alike, lengths, kinds, length_rank), 9), rng.random())
        if best is None or key < best:
            best, chosen = key, combo
    return [sentences[i] for i in chosen]


def _similarities(sets: Sequence[frozenset[str]]) -> list[list[float]]:
    """``set_jaccard`` of every two sets (symmetric: each pair once), 0 on the diagonal."""
    alike = [[0.0] * len(sets) for _ in sets]
    for i, x in enumerate(sets):
        row = alike[i]
        for j in range(i + 1, len(sets)):
            row[j] = alike[j][i] = set_jaccard(x, sets[j])
    return alike


def _score_any(
    combo: Sequence[int], alike: list[list[float]], lengths: list[int], kinds: list[str], rank: int
) -> float:
    """The cost of the options ``combo`` (indexes into the sentences, the truth is 0): the
    spread of their similarities to each other, mixed kinds, the truth off its length rank,
    options of several lengths."""
    at = (0, *combo)
    similarity = [sum(alike[i][j] for j in at if j != i) for i in at]  # similarity_scores
    option_lengths = [lengths[i] for i in at]
    cost = max(similarity) - min(similarity)
    top = max(similarity)
    tied = sum(abs(x - top) < 1e-9 for x in similarity)
    cost += CENTRE * (abs(similarity[0] - top) < 1e-9 and tied < len(similarity))
    cost += 0.25 * (len({kinds[i] for i in combo}) - 1)
    cost += LENGTH_RANK * _off_rank(option_lengths, rank)
    cost += 0.05 * (len(set(option_lengths)) - 1)
    return cost


def _score_two(
    combo: Sequence[int], alike: list[list[float]], lengths: list[int], kinds: list[str], rank: int
) -> float:
    """``_score_any`` of two negatives written out: the same sums in the same order (every
    question scores dozens of sets, a release tens of thousands of questions)."""
    i, j = combo
    row_i = alike[i]
    # sum() of the two others starts from 0, which adds nothing: x + y, as below.
    s0, si, sj = alike[0][i] + alike[0][j], row_i[0] + row_i[j], alike[j][0] + alike[j][i]
    cost = max(s0, si, sj) - min(s0, si, sj)
    # The truth as the centre (most alike the others, alone or tied with one) is a tell.
    cost += CENTRE * (s0 > max(si, sj) - 1e-9 and not (abs(si - sj) < 1e-9 and abs(s0 - si) < 1e-9))
    cost += 0.25 * (kinds[i] != kinds[j])
    l0, li, lj = lengths[0], lengths[i], lengths[j]
    # A truth sharing its length with a negative has no rank to be off.
    off = 0.0 if l0 in (li, lj) else float((li < l0) + (lj < l0) != rank)
    cost += LENGTH_RANK * off
    cost += 0.05 * (len({l0, li, lj}) - 1)
    return cost


def _off_rank(lengths: Sequence[int], rank: int) -> float:
    """0 when the first option (the truth) has the wanted length rank (0 shortest, 2 longest)
    or shares its length with another, else 1 (``lengths`` of the options, truth first)."""
    if lengths.count(lengths[0]) > 1:
        return 0.0
    return float(sorted(lengths).index(lengths[0]) != rank)


def _kind(slot: str) -> str:
    return slot.split("@")[0].removeprefix("swap:")


def answer_positions(n_items: int, *, seed: int | str, n_options: int = 4) -> list[int]:
    """Index of the true answer for each of ``n_items`` questions.

    Every position is used floor or ceil of n_items / n_options times — which positions get
    the extra one is seeded too, so a short release does not favour "A" — in a seeded order.
    """
    if n_items < 0 or n_options < 1:
        raise ValueError("answer_positions needs n_items >= 0 and n_options >= 1")
    rng = random.Random(f"{seed}:answer_positions")
    order = list(range(n_options))
    rng.shuffle(order)
    positions = [order[i % n_options] for i in range(n_items)]
    rng.shuffle(positions)
    return positions


def question_item(
    *, description: str, negatives: Sequence[str], answer_position: int, seed: int | str
) -> dict:
    """The question, four options with the truth at ``answer_position``, and its letter.

    The negatives and NO_DIFFERENCE fill the other letters in an order seeded by ``seed`` and
    the description. ValueError unless there are exactly two negatives and the four options
    are non-blank and distinct after normalising.
    """
    if len(negatives) != 2:
        raise ValueError(f"question_item needs exactly 2 negatives, got {len(negatives)}")
    if not 0 <= answer_position < len(LETTERS):
        raise ValueError(f"answer_position must be in 0..{len(LETTERS) - 1}")
    question_check(description=description, negatives=negatives)
    others = [*negatives, NO_DIFFERENCE]
    random.Random(f"{seed}:options:{description}").shuffle(others)
    others.insert(answer_position, description)
    return {
        "question": QUESTION,
        "options": dict(zip(LETTERS, others, strict=True)),
        "answer": LETTERS[answer_position],
    }


_FINAL_PUNCTUATION = re.compile(r"[\s.!?;:,]+$")


def question_check(*, description: str, negatives: Sequence[str]) -> None:
    """ValueError, as ``question_item`` raises it, unless the description and ``negatives``
    make a question: exactly two negatives, four options non-blank and distinct."""
    if len(negatives) != 2:
        raise ValueError(f"question_item needs exactly 2 negatives, got {len(negatives)}")
    texts = [description, *negatives, NO_DIFFERENCE]
    if any(not t.strip() for t in texts) or len({_norm(t) for t in texts}) != len(texts):
        raise ValueError("options must be non-blank and distinct")


def _norm(text: str) -> str:
    return _FINAL_PUNCTUATION.sub("", " ".join(text.casefold().split()))


_NO_DIFFERENCE_NORM = _norm(NO_DIFFERENCE)
