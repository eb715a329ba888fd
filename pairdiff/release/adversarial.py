"""Negatives of the questions outside twin groups, chosen adversarially (SWAG / AFLite).

A question no twin group takes is asked with negatives that are, first, the **truths of other
pairs** of the release: same category, the same sentence but for its slots (``template``), at
least one slot false of this pair (``slots.why_false``), so each is written by the same hands,
true of a real pair and false of this one; then the truths of other edits of the same photo;
then same-slot rewrites (``slots.candidates``). Drawn from the truths themselves, a negative
looks like a truth to anything that reads only text: a value no truth takes never appears.

Among the candidates, an ensemble of text-only models picks the two most like truths: naive
Bayes over words and word pairs cross-fitted on the release's own questions (two folds, by a
hash of the pair), and one trained on the questions of *other* releases (``reference``: what
earlier releases of the project published) when there are any. The choice is repeated with
the models refitted on the questions as chosen (AFLite's iteration) until the best of them
answers at most ``NEAR_CHANCE`` of the questions, or for ``ROUNDS`` rounds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from pairdiff.release.baselines import NaiveBayes
from pairdiff.release.fallback import of_other_things
from pairdiff.release.question_checks import plain, question_problem, slot_and_why
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.slots import FIXED_KINDS, Prior, Slot, candidates, find_slots, why_false

FOLDS = 2  # the adversary is trained on the other fold's questions (cross-fitting)
ROUNDS = 4  # AFLite's iterations at most
NEAR_CHANCE = 0.4  # of three change options, chance is 1/3: stop once the best model is this near
MADE_BY_OTHERS = ("other_truth", "neighbour")  # negatives taken from other pairs' truths


def template(text: str, slots: Sequence[Slot]) -> str:
    """``text`` with each slot replaced by its kind: two truths of one template say the same
    thing of different values."""
    out, pos = "", 0
    for slot in slots:
        out += text[pos : slot.start] + f"\0{slot.kind}\0"
        pos = slot.end
    return " ".join((out + text[pos:]).casefold().split()).rstrip(" .!?;:,")


def false_of(truth: str, other: str, found: dict[str, list[Slot]]) -> str:
    """Why ``other`` (another pair's truth of the same template) is false of the pair whose
    truth is ``truth``: the first slot whose value is false of the truth's, or "" (a different
    template, the same values, or only synonyms and too-near numbers)."""
    a, b = _slots(truth, found), _slots(other, found)
    if len(a) != len(b) or template(truth, a) != template(other, b):
        return ""
    changed = [(x, y) for x, y in zip(a, b, strict=True) if plain(x.value) != plain(y.value)]
    if any(x.kind in FIXED_KINDS for x, _ in changed):  # "appeared" of what disappeared
        return ""
    for x, y in changed:
        why = why_false(x.kind, x.value, y.value)
        if why:
            return f"{x.kind}: {why}"
    return ""


def other_truths(
    record: Mapping,
    pool: Sequence[Mapping],
    found: dict[str, list[Slot]],
    *,
    by_template: Mapping[tuple[str, str], Sequence[Mapping]] | None = None,
) -> list[dict]:
    """Negatives for ``record`` taken from the truths of ``pool`` (the release's records):
    ``other_truth`` (same category and template, false by a slot), then ``neighbour`` (another
    edit of the same photo and category, same split), then ``category_truth`` (an edit of
    another photo in the category said with the same kinds of slot, none an event, one of
    them false of the truth's or said of another thing — "A bright light now falls on the
    wall" for "A bright light now falls on the gravel": the photo has no such wall, and the
    value "bright light" no longer tells the truth from its negatives. "The whole image
    became brighter" is no negative of "A bright light now falls on the wall", which it may
    well be: its kinds of slot differ)."""
    truth = " ".join(record["description"].split())
    _slots(truth, found)
    key = (record["category"], template(truth, found[truth]))
    same = by_template.get(key, ()) if by_template is not None else pool
    out: list[dict] = []
    seen = {plain(truth)}
    for other in same:
        text = " ".join(other["description"].split())
        if other["pair_id"] == record["pair_id"] or plain(text) in seen:
            continue
        _slots(text, found)
        why = false_of(truth, text, found)
        if why and other["category"] == record["category"]:
            seen.add(plain(text))
            out.append(_negative(text, why, "other_truth", other["pair_id"]))
    photo = _photo(record)
    for other in pool:
        text = " ".join(other["description"].split())
        if (
            photo
            and other["pair_id"] != record["pair_id"]
            and _photo(other) == photo
            and other["split"] == record["split"]
            and other["category"] == record["category"]
            and plain(text) not in seen
            and not question_problem(other)
        ):
            seen.add(plain(text))
            why = "the truth of another edit of the same photo, which this pair lacks"
            out.append(_negative(text, why, "neighbour", other["pair_id"]))
    for other in pool:
        text = " ".join(other["description"].split())
        if (
            _photo(other) != photo
            and other["category"] == record["category"]
            and plain(text) not in seen
            and not question_problem(other)
            and _same_kinds(found[truth], _slots(text, found))
        ):
            a, b = found[truth], found[text]
            if any(why_false(x.kind, x.value, y.value) for x, y in zip(a, b, strict=True)):
                why = "the truth of an edit of another photo, a slot false of this one"
            elif template(truth, a) != template(text, b) and not (_whole(truth) or _whole(text)):
                # Not of the whole image: "The whole image became grainy" is no thing the
                # photo lacks, and may be true of "The gravel became noisy".
                why = "the truth of an edit of another photo, of a thing this one lacks"
            else:
                continue  # the same sentence but for synonyms or near numbers: maybe true
            seen.add(plain(text))
            out.append(_negative(text, why, "category_truth", other["pair_id"]))
    if any(s.kind not in FIXED_KINDS for s in found[truth]):
        return out
    # A sentence with no slot to fill ("A cup was added on the table.", "The round mission
    # patch disappeared."): the truths of the category that say the same of other things.
    # Those saying the same happened first, then any.
    events = [(s.kind, plain(s.value)) for s in found[truth]]
    others = [
        (" ".join(o["description"].split()), o)
        for o in pool
        if o["pair_id"] != record["pair_id"]
        and (not photo or _photo(o) != photo)
        and o["category"] == record["category"]
        and not question_problem(o)
        and of_other_things(record, o)
    ]
    alike = [
        (t, o) for t, o in others if [(s.kind, plain(s.value)) for s in _slots(t, found)] == events
    ]
    for text, other in [*alike, *others]:
        if plain(text) not in seen:
            seen.add(plain(text))
            why = "the truth of an edit of another photo, of a thing this pair did not change"
            out.append(_negative(text, why, "category_truth", other["pair_id"]))
    return out


def _whole(text: str) -> bool:
    return "whole image" in text.casefold()


def _same_kinds(a: Sequence[Slot], b: Sequence[Slot]) -> bool:
    """Slots of the same kinds in the same order, at least one, none fixed."""
    if not a or [x.kind for x in a] != [y.kind for y in b]:
        return False
    return not any(x.kind in FIXED_KINDS for x in a)


def templates_of(pool: Sequence[Mapping], found: dict[str, list[Slot]]) -> dict:
    """The pool's records by (category, template), for ``other_truths``."""
    out: dict[tuple[str, str], list[Mapping]] = {}
    for record in pool:
        text = " ".join(record["description"].split())
        _slots(text, found)
        out.setdefault((record["category"], template(text, found[text])), []).append(record)
    return out


def adversarial(
    free: list[tuple[Mapping, list[dict]]],
    twin_rows: Sequence[Mapping],
    *,
    pool: Sequence[Mapping],
    prior: Prior,
    slots_of: dict[str, list[Slot]],
    seed: int,
    reference: Sequence[Mapping] = (),
) -> tuple[list[tuple[Mapping, list[dict]]], dict]:
    """The negatives of the questions outside twin groups (``free``) chosen again, as the
    module says; lead-written ones stay. Returns them and a report: per round, the share of
    these questions the best model answers."""
    pools = {}
    by_template = templates_of([r for r in pool if not question_problem(r)], slots_of)
    for record, negatives in free:
        if any(n["made"] in ("verified", "edited") for n in negatives):
            continue
        pools[record["pair_id"]] = _candidates(record, pool, by_template, prior, slots_of, seed)
    outside = NaiveBayes().fit(_examples(reference)) if reference else None
    current = list(free)
    rounds: list[float] = []
    for _ in range(ROUNDS):
        models = _fit_folds(current, twin_rows, seed)
        rounds.append(_best_accuracy(current, models, outside, seed))
        if rounds[-1] <= NEAR_CHANCE and len(rounds) > 1:
            break
        current = [
            (record, _pick(record, pools.get(record["pair_id"]), negatives, models, outside, seed))
            for record, negatives in current
        ]
    else:
        models = _fit_folds(current, twin_rows, seed)
        rounds.append(_best_accuracy(current, models, outside, seed))
    report = {"rounds": [round(a, 3) for a in rounds], "questions": len(current)}
    report["made"] = _made(current)
    return current, report


def _candidates(
    record: Mapping,
    pool: Sequence[Mapping],
    by_template: dict[tuple[str, str], list[Mapping]],
    prior: Prior,
    slots_of: dict[str, list[Slot]],
    seed: int,
) -> list[dict]:
    """Every negative ``record`` may take, best kind first: other truths, then rewrites."""
    found = other_truths(record, pool, slots_of, by_template=by_template)
    text = " ".join(record["description"].split())
    seen = {plain(n["text"]) for n in found} | {plain(text), plain(NO_DIFFERENCE)}
    rewrites = candidates(
        text,
        seed=f"{seed}:{record.get('content_key')}",
        prior=prior,
        per_slot=8,
        slots=_slots(text, slots_of),
    )
    for c in rewrites:
        if c.slot.startswith("swap:") or plain(c.sentence) in seen:
            continue
        kind, why = slot_and_why(text, c.sentence)
        new = [s for s in find_slots(c.sentence) if s.kind == kind]
        attested = any(v.value.lower() in {x.lower() for x in prior.get(kind, {})} for v in new)
        seen.add(plain(c.sentence))
        made = "derived" if attested else "derived_unattested"
        found.append({"text": c.sentence, "slot": kind, "why": why, "made": made})
    return found


# Other pairs' truths of the same template first; then rewrites to values some truth takes (the
# same template too); then other edits of the photo and truths of the category said in other
# words (another template: the odd one out to a reader comparing options); then rewrites to
# values no truth takes.
_TIER = {
    "other_truth": 0,
    "derived": 1,
    "neighbour": 2,
    "category_truth": 2,
    "derived_unattested": 3,
}


def _pick(
    record: Mapping,
    pool: list[dict] | None,
    negatives: list[dict],
    models: list[NaiveBayes],
    outside: NaiveBayes | None,
    seed: int,
) -> list[dict]:
    """The two candidates the models find most like truths, from the best kind that has
    two (a kind is mixed in only when the one before has too few); fewer than two when
    the pool and the record's own negatives have fewer (the question is left out)."""
    # Fallbacks (``fallback.py``) look less like truths: they come last, only where nothing
    # better exists (a sentence with no slot and no other truth of its kind), so no question
    # is lost.
    kept = sorted(negatives, key=lambda n: n["made"] == "fallback")
    if not pool:
        return kept
    scored = sorted(
        pool,
        key=lambda n: (_TIER[n["made"]], -_score(n["text"], record, models, outside, seed)),
    )
    chosen: list[dict] = []
    for n in [*scored, *kept]:  # the negatives it had fill a pool of fewer than two
        if len(chosen) == 2:
            break
        if all(plain(n["text"]) != plain(c["text"]) for c in chosen):
            chosen.append(n)
    return [
        {**n, "made": "derived" if n["made"] == "derived_unattested" else n["made"]} for n in chosen
    ]


def _score(
    text: str, record: Mapping, models: list[NaiveBayes], outside: NaiveBayes | None, seed: int
) -> float:
    score = models[_fold(record["pair_id"], seed)].score(text)
    return score + (outside.score(text) if outside is not None else 0.0)


def _fit_folds(
    free: Sequence[tuple[Mapping, list[dict]]], twin_rows: Sequence[Mapping], seed: int
) -> list[NaiveBayes]:
    examples: list[list[tuple[str, bool]]] = [[] for _ in range(FOLDS)]
    for row in twin_rows:
        examples[_fold(row.get("pair_id"), seed)] += _examples([row])
    for record, negatives in free:
        k = _fold(record["pair_id"], seed)
        examples[k].append((record["description"], True))
        examples[k] += [(n["text"], False) for n in negatives]
    return [
        NaiveBayes().fit([e for j in range(FOLDS) if j != k for e in examples[j]])
        for k in range(FOLDS)
    ]


def _best_accuracy(
    free: Sequence[tuple[Mapping, list[dict]]],
    models: list[NaiveBayes],
    outside: NaiveBayes | None,
    seed: int,
) -> float:
    """The share of ``free`` the better of the cross-fitted and the outside model answers."""
    if not free:
        return 0.0
    best = 0.0
    for fixed in (None, outside) if outside is not None else (None,):
        right = 0.0
        for record, negatives in free:
            options = [record["description"], *(n["text"] for n in negatives)]
            model = fixed or models[_fold(record["pair_id"], seed)]
            scores = [model.score(o) for o in options]
            top = [i for i, s in enumerate(scores) if s == max(scores)]
            right += (1 / len(top)) if 0 in top else 0.0
        best = max(best, right / len(free))
    return best


def _examples(rows: Sequence[Mapping]) -> list[tuple[str, bool]]:
    out = []
    for row in rows:
        options = row.get("options") or {}
        for letter, text in options.items():
            if text != NO_DIFFERENCE:
                out.append((text, letter == row.get("answer")))
    return out


def _made(free: Sequence[tuple[Mapping, list[dict]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, negatives in free:
        for n in negatives:
            counts[n["made"]] = counts.get(n["made"], 0) + 1
    return dict(sorted(counts.items()))


def _negative(text: str, why: str, made: str, pair_id: object) -> dict:
    slot = why.split(":", 1)[0] if made == "other_truth" else "sentence"
    return {"text": text, "slot": slot, "why": f"{why}; the truth of pair {pair_id}", "made": made}


def _slots(text: str, found: dict[str, list[Slot]]) -> list[Slot]:
    if text not in found:
        found[text] = find_slots(text)
    return found[text]


def _photo(record: Mapping) -> str:
    return str(record.get("content_key") or "").split(":")[0]


def _fold(pair_id: object, seed: int) -> int:
    return hashlib.sha256(f"{seed}:fold:{pair_id}".encode()).digest()[0] % FOLDS
