"""Multiple-choice questions in the VDiff-Bench style: the truth, hard negatives, "no difference".

A hard negative is the true description with one thing changed — a direction, a colour, a
count, the entity, or added/removed — so a model that half-reads the images picks it. Rules run
in the order the category prefers; when none changes the sentence, templates built from the
entity fill up. Randomness comes from ``random.Random(str)`` (SHA-512 of the string), never
from ``hash()``, so a release rebuilt with the same seed is byte for byte the same.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, combinations, zip_longest

from pairdiff.labels import normalise_label
from pairdiff.release.baselines import set_jaccard, word_set
from pairdiff.release.question_words import (
    ADDED_REMOVED,
    AGREE,
    ARTICLE_TAIL,
    COLOUR,
    COUNT,
    DIRECTIONS,
    FAMILY,
    GENERIC,
    NUMBER_WORDS,
    PLACES,
    PREFERENCES,
    TEMPLATES,
    VALUES,
    WORD_AFTER,
)
from pairdiff.release.slots import Prior, Slot, candidates

NO_DIFFERENCE = "There is no difference between the two images."
LETTERS = ("A", "B", "C", "D")
LENGTH_RANK = 0.3
CENTRE = 0.5  # cost of a set of options whose centre (or one of two) is the truth
MAX_POOL = 24  # candidates a question chooses its negatives among
QUESTION = "Which sentence describes the difference between image A and image B?"


@dataclass(frozen=True, slots=True)
class _Hit:  # one swappable span: its normalised key and its replacements, best first
    start: int
    end: int
    key: str
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Context:
    entities: tuple[str, ...]  # entity labels as written, distinct after normalising
    pool: tuple[str, ...]  # other labels, not the entities and not already in the sentence


_Rule = Callable[[str, _Context, random.Random], tuple[list[_Hit], bool]]


def hard_negatives(
    *,
    description: str,
    category: str,
    entity_a: str,
    entity_b: str,
    absent_a: bool,
    absent_b: bool,
    entity_pool: Sequence[str],
    seed: int | str,
    n: int = 2,
) -> list[str]:
    """``n`` distinct false descriptions, each the truth with one thing changed.

    Never the truth nor NO_DIFFERENCE (compared after normalising case, whitespace and final
    punctuation). The same arguments give the same list. ValueError for a blank description
    or a negative ``n``; templates make at least ~50 sentences, so any practical ``n`` is met.
    """
    text = description.strip()
    if not text or n < 0:
        raise ValueError("hard_negatives needs a non-empty description and n >= 0")
    ctx = _context(text, (entity_a, entity_b), entity_pool)
    found: dict[str, list[str]] = {}
    for name, rule in _RULES.items():
        rng = random.Random(f"{seed}:{name}:{text}")
        hits, swap_any_two = rule(text, ctx, rng)
        rng.shuffle(hits)
        found[name] = _rewrite(text, hits, swap_any_two)
    absent = ("added_removed",) if absent_a or absent_b else ()
    preferred = list(dict.fromkeys((*absent, *PREFERENCES.get(category, ()))))
    rest = [name for name in _RULES if name not in preferred]
    templates = _templates(category, ctx, random.Random(f"{seed}:templates:{text}"))
    ranked = chain(
        _interleave(found[name] for name in preferred),
        _interleave(found[name] for name in rest),
        templates,
    )
    seen = {_norm(text), _norm(NO_DIFFERENCE)}
    negatives: list[str] = []
    for sentence in ranked:
        if len(negatives) == n:
            break
        if _norm(sentence) not in seen:
            seen.add(_norm(sentence))
            negatives.append(sentence)
    if len(negatives) < n:
        raise ValueError(f"only {len(negatives)} distinct negatives could be made, not {n}")
    return negatives


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


def _context(text: str, entities: Iterable[str], pool: Iterable[str]) -> _Context:
    keys = {""}  # normalised labels taken so far; a blank label is never used

    def fresh(label: str) -> bool:
        before = len(keys)
        keys.add(normalise_label(label))
        return len(keys) > before

    own = tuple(e.strip() for e in entities if fresh(e))
    others = (p.strip() for p in pool if fresh(p) and not _label_pattern(p).search(text))
    return _Context(own, tuple(others))


def _label_pattern(label: str) -> re.Pattern[str]:
    words = r"\s+".join(map(re.escape, label.split()))
    return re.compile(rf"(?<!\w){words}(?P<plural>e?s)?(?!\w)", re.I)


def _table_rule(table: dict[str, str]) -> _Rule:
    keys = sorted(table, key=len, reverse=True)  # "in front of" before "front"
    pattern = re.compile(r"\b(?:" + "|".join(r"\s+".join(k.split()) for k in keys) + r")\b", re.I)

    def rule(text: str, ctx: _Context, rng: random.Random) -> tuple[list[_Hit], bool]:
        hits = []
        for m in pattern.finditer(text):
            key = " ".join(m.group().lower().split())
            after = WORD_AFTER.match(text, m.end())
            nxt = after.group(1).lower() if after else ""
            if key not in table:  # re.I lets "İ" match "i", but "İ".lower() is not "i"
                continue
            opposite = table[key]
            if key == "lower":
                opposite = "upper" if nxt in PLACES else "higher"
            elif key == "more":
                opposite = "fewer" if nxt.endswith("s") and not nxt.endswith("ss") else "less"
            hits.append(_Hit(m.start(), m.end(), key, (opposite,)))
        return hits, False

    return rule


def _colour_rule(text: str, ctx: _Context, rng: random.Random) -> tuple[list[_Hit], bool]:
    entity_keys = {normalise_label(e) for e in ctx.entities}  # "an orange" is a fruit
    found = [m for m in COLOUR.finditer(text) if _colour_key(m) in FAMILY.keys() - entity_keys]
    present = {_colour_key(m) for m in found}
    hits = []
    for m in found:
        key = _colour_key(m)
        contrasting = [
            c
            for c in FAMILY
            if c not in present and (FAMILY[c] != FAMILY[key] or {c, key} == {"black", "white"})
        ]
        prefix = text[m.start() : m.start(1)]  # "dark " stays: only the colour changes
        picks = rng.sample(contrasting, min(3, len(contrasting)))
        hits.append(_Hit(m.start(), m.end(), key, tuple(prefix + c for c in picks)))
    return hits, True


def _colour_key(m: re.Match[str]) -> str:
    word = m.group(1).lower()
    return "grey" if word == "gray" else word


def _count_rule(text: str, ctx: _Context, rng: random.Random) -> tuple[list[_Hit], bool]:
    found = []
    for m in COUNT.finditer(text):
        word = " ".join(m.group().lower().split())
        value = int(word) if word.isdigit() else VALUES.get(word)
        if value is not None:  # None: a non-ASCII case variant, as in the table rules
            found.append((m, value, not word.isdigit()))
    present = {value for _, value, _ in found}
    heads = {e.split()[-1].lower() for e in ctx.entities}
    hits = []
    for m, value, as_word in found:
        if value == 1:
            # "one car" → "two cars" only when the noun is the entity; a guess at which
            # following word is the noun would turn "one red car" into "two reds car".
            pos = m.end()
            words: list[str] = []
            while len(words) < 3 and (after := WORD_AFTER.match(text, pos)):
                words.append(after.group(1))
                pos = after.end()
                if words[-1].lower() in heads and 2 not in present:
                    new = [_count_word(2, as_word), *words[:-1], _plural(words[-1])]
                    verb = WORD_AFTER.match(text, pos)
                    if verb and verb.group(1).lower() in AGREE:  # "Two cars are parked."
                        new.append(AGREE[verb.group(1).lower()])
                        pos = verb.end()
                    hits.append(_Hit(m.start(), pos, "1", (" ".join(new),)))
                    break
            continue
        # Staying at two or more keeps the noun plural and the verb agreeing.
        near = [v for v in (value - 1, value + 1) if v >= 2]
        rng.shuffle(near)
        options = [_count_word(v, as_word) for v in (*near, value + 2) if v not in present]
        hits.append(_Hit(m.start(), m.end(), str(value), tuple(options[:2])))
    return hits, 1 not in present


def _count_word(value: int, as_word: bool) -> str:
    return NUMBER_WORDS[value] if as_word and value < len(NUMBER_WORDS) else str(value)


def _entity_rule(text: str, ctx: _Context, rng: random.Random) -> tuple[list[_Hit], bool]:
    hits: list[_Hit] = []
    for label in sorted(ctx.entities, key=len, reverse=True):  # "red car" before "car"
        for m in _label_pattern(label).finditer(text):
            if any(m.start() < h.end and h.start < m.end() for h in hits):
                continue
            picks = rng.sample(ctx.pool, min(3, len(ctx.pool)))
            options = tuple(_plural(p) if m.group("plural") else p for p in picks)
            hits.append(_Hit(m.start(), m.end(), normalise_label(label), options))
    return hits, True


_RULES: dict[str, _Rule] = {
    "direction": _table_rule(DIRECTIONS),
    "colour": _colour_rule,
    "count": _count_rule,
    "entity": _entity_rule,
    "added_removed": _table_rule(ADDED_REMOVED),
}


def _rewrite(text: str, hits: list[_Hit], swap_any_two: bool) -> list[str]:
    """Exchanges of two opposite keys first ("left … right" → "right … left"), then singles.

    A single that writes a key already in the sentence is dropped: "from left to right" →
    "from right to right" says nothing about the images.
    """
    surface: dict[str, str] = {}
    for h in hits:
        surface.setdefault(h.key, text[h.start : h.end])
    opposite = {h.key: h.options[0] for h in hits if h.options}
    if swap_any_two:
        pairs = [tuple(sorted(surface))] if len(surface) == 2 else []
    else:
        pairs = sorted({tuple(sorted((a, b))) for a, b in opposite.items() if opposite.get(b) == a})
    swaps = []
    for a, b in pairs:
        swapped = {a: surface[b], b: surface[a]}
        edits = [(h.start, h.end, swapped[h.key]) for h in hits if h.key in swapped]
        swaps.append(_apply(text, edits))
    singles = [
        [_apply(text, [(h.start, h.end, o)]) for o in h.options if o not in surface] for h in hits
    ]
    return swaps + _interleave(singles)


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with the spans replaced, casing kept and "a"/"an" before each span fixed."""
    out, pos = "", 0
    for start, end, new in sorted(edits):
        out += text[pos:start]
        new = _match_case(text[start:end], new)
        article = ARTICLE_TAIL.search(out)
        if article and new:
            fixed = "an" if new[0].lower() in "aeiou" else "a"
            out = out[: article.start(1)] + _match_case(article.group(1), fixed) + article.group(2)
        out += new
        pos = end
    return out + text[pos:]


def _match_case(original: str, new: str) -> str:
    if len(original) >= 3 and original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    if new[1:2].islower():  # "An apple" moved mid-sentence; "TV" stays "TV"
        return new[:1].lower() + new[1:]
    return new


def _plural(word: str) -> str:
    if re.search(r"(s|x|z|ch|sh)$", word, re.I):
        return word + "es"
    if re.search(r"[^aeiou]y$", word, re.I):
        return word[:-1] + "ies"
    return word + "s"


def _templates(category: str, ctx: _Context, rng: random.Random) -> Iterator[str]:
    labels = [*ctx.entities, "object", *ctx.pool]
    own = list(TEMPLATES.get(category, ()))
    rng.shuffle(own)
    yield from (t.format(e=labels[0]) for t in own)
    for label in labels:
        yield from (t.format(e=label) for t in GENERIC)
        yield from (f"The {label} turned {colour}." for colour in FAMILY)
        yield from (f"There are now {w} {_plural(label)}." for w in NUMBER_WORDS[2:])


def _interleave(lists: Iterable[list[str]]) -> list[str]:
    return [x for row in zip_longest(*lists) for x in row if x is not None]
