"""The question file of a release: one question per record that can make one, the records that
cannot (named, with the reason), and how the text-only baselines do on the rest."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.release.adversarial import adversarial, false_of, other_truths
from pairdiff.release.baselines import text_baselines
from pairdiff.release.controls import control_items as control_items  # importable from here
from pairdiff.release.controls import control_rows
from pairdiff.release.fallback import entities_of, explain, fallback_negatives, labels_of
from pairdiff.release.question_checks import plain as _plain
from pairdiff.release.question_checks import question_problem as question_problem
from pairdiff.release.question_checks import says_no_change as says_no_change
from pairdiff.release.question_checks import slot_and_why as _slot_and_why
from pairdiff.release.questions import (
    LETTERS,
    NO_DIFFERENCE,
    QUESTION,
    answer_positions,
    image_negatives,
    question_check,
    question_item,
)
from pairdiff.release.slots import FIXED_KINDS, Prior, Slot, find_slots, slots_prior, why_false
from pairdiff.release.splits import SPLITS
from pairdiff.release.twins import TwinGroup, member_of, twin_groups


@dataclass
class QuestionSet:
    rows: list[dict] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)  # {"id", "pair_id", "reason"}
    sources: Counter = field(default_factory=Counter)  # verified / edited / derived / fallback
    baselines: dict = field(default_factory=dict)
    adversarial: dict = field(default_factory=dict)  # the adversarial filter's rounds


def question_negatives(
    record: Mapping,
    *,
    entity_pool: Sequence[str] = (),
    prior: Prior | None = None,
    slots_of: Mapping[str, Sequence[Slot]] | None = None,
) -> tuple[list, str]:
    """The derived negatives of one record's first change and how they were made ("derived":
    same-slot rewrites; "fallback": ``fallback.fallback_negatives``, direction turns and
    entity swaps, for sentences with too few slots). Seeded by the pair's content, so a
    lead's preview and the releases agree (but for the entity pool of a fallback).
    ``slots_of``: ``find_slots`` of descriptions, by text, found already."""
    change = record["changes"][0]
    seed = record.get("content_key") or record["id"]
    instruction = (record.get("source") or {}).get("instruction") or ""
    found = image_negatives(
        description=change["description"],
        instruction=instruction,
        seed=seed,
        prior=prior,
        slots=(slots_of or {}).get(change["description"].strip()),
    )
    if found is not None:
        return found, "derived"
    negatives = fallback_negatives(
        description=change["description"],
        entities=entities_of(record["changes"]),
        entity_pool=entity_pool,
        seed=seed,
    )
    return negatives, "fallback"


def release_prior(
    records: Sequence[Mapping], *, slots_of: dict[str, list[Slot]] | None = None
) -> Prior:
    """The slot values of the true descriptions that can make questions (first changes).
    ``slots_of``, when given, is filled with ``find_slots`` of each description, by text."""
    return _prior_of(release_firsts(records), {} if slots_of is None else slots_of)


def _prior_of(firsts: Sequence[str], found: dict[str, list[Slot]]) -> Prior:
    for text in firsts:
        if text not in found:
            found[text] = find_slots(text)
    return slots_prior(found[text] for text in firsts)


Derived = dict[int, "tuple[list, str] | ValueError"]


def release_firsts(records: Sequence[Mapping]) -> list[str]:
    """The first descriptions of the records, which the release's prior is made of."""
    return [r["changes"][0]["description"] for r in records if r["changes"]]


def derived_negatives(
    records: Sequence[Mapping], *, firsts: Sequence[str], entity_pool: Sequence[str] = ()
) -> Derived:
    """``question_negatives`` of each record by pair id (or the ValueError it raised), under
    the prior of ``firsts`` (``release_firsts`` of the release's records): the derived
    negatives ``question_set`` makes, made elsewhere (another process) and handed to it as
    ``derived``, byte for byte the same."""
    slots_of: dict[str, list[Slot]] = {}
    prior = _prior_of(firsts, slots_of)
    out: Derived = {}
    for record in records:
        try:
            out[record["pair_id"]] = question_negatives(
                record, entity_pool=entity_pool, prior=prior, slots_of=slots_of
            )
        except ValueError as exc:
            out[record["pair_id"]] = exc
    return out


def question_set(
    records: Sequence[Mapping],
    *,
    seed: int,
    verified: Mapping[int, Sequence[str]],
    edited: Mapping[int, Sequence[str]],
    entity_pool: Sequence[str] = (),
    derived: Mapping[int, tuple[list, str] | ValueError] | None = None,
    published: Mapping[int, Mapping] | None = None,
    controls: Sequence[Mapping] = (),
    reference: Sequence[Mapping] = (),
) -> QuestionSet:
    """Questions of ``records`` (in their order). Options, in this order of precedence:
    the question a release of the project published already for the pair, when its truth is
    unchanged (``published``, by pair id: frozen, letters and all); a lead's verified ones,
    else a lead's edit; a twin group's shared options (``twins``); else derived (``derived``,
    by pair id, holds some made already by ``derived_negatives``). ``controls``: pairs with no
    change (``control_items``), asked with "no difference" as the truth. The negatives of
    questions outside twin groups are chosen by ``adversarial.adversarial``; ``reference``:
    question rows of other releases (the project's earlier ones), its outside adversary. A
    record that cannot make a question is left out and named; nothing here raises for one
    record."""
    result = QuestionSet()
    published = published or {}
    # Entity swaps name things of the release's other pairs first (``fallback``).
    entity_pool = entity_pool or labels_of(records)
    slots_of: dict[str, list[Slot]] = {}  # each description's slots, found once
    prior = release_prior(records, slots_of=slots_of)
    frozen: dict[int, Mapping] = {}
    lead: dict[int, tuple[list[str], str]] = {}
    open_: list[Mapping] = []
    for record in records:
        problem = question_problem(record)
        pid = record["pair_id"]
        if problem:
            result.left_out.append({"id": record["id"], "pair_id": pid, "reason": problem})
            continue
        before = published.get(pid)
        if before is not None and _plain(before.get("truth", "")) == _plain(record["description"]):
            frozen[pid] = before
        elif verified.get(pid):
            lead[pid] = (list(verified[pid]), "verified")
        elif edited.get(pid):
            lead[pid] = (list(edited[pid]), "edited")
        else:
            open_.append(record)
    truths: dict[str, set[str]] = {}  # each truth and the photos of the pairs it is true of
    for r in records:
        truths.setdefault(_plain(r["description"]), set()).add(_photo(r))
    groups = twin_groups([member_of(r, "") for r in open_], seed=seed)
    grouped: dict[int, tuple[TwinGroup, list[str]]] = {}
    for group in groups:
        texts = list(dict.fromkeys(group.texts))  # a repeat shares its twin's option
        if len(texts) == 2:
            third = (
                _other_truth(group, records, slots_of)
                or _neighbour_truth(group, records, seed=seed)
                or group.third(seed=f"{seed}:{group.id}")
                or _local_truth(group, records)
            )
            if third is None:
                continue
            texts.append(third)
        try:
            question_check(description=texts[0], negatives=texts[1:3])
        except ValueError:
            continue
        for key in group.members:
            grouped[int(key)] = (group, texts)
    rows: dict[int, dict] = {}
    free: list[tuple[Mapping, list[dict]]] = []
    failed: dict[int, str] = {}
    for record in records:
        pid = record["pair_id"]
        try:
            if pid in frozen:
                rows[pid] = _frozen_row(record, frozen[pid])
                result.sources["published"] += 1
            elif pid in grouped:
                group, texts = grouped[pid]
                rows[pid] = _twin_row(record, group, texts, seed=seed, truths=truths)
                result.sources["twin"] += 1
            elif pid in lead:
                negatives, source = lead[pid]
                question_check(description=record["description"], negatives=negatives)
                free.append((record, [_explained(record, n, source) for n in negatives]))
            elif record in open_:
                try:
                    negatives, source = _derive(record, derived, entity_pool, prior, slots_of)
                except ValueError as exc:  # other pairs' truths may still make its question
                    failed[pid] = str(exc)
                    negatives, source = [], "derived"
                free.append((record, [_explained(record, n, source) for n in negatives]))
        except ValueError as exc:
            result.left_out.append(_left(record, str(exc)))
    free, result.adversarial = adversarial(
        free,
        [*rows.values()],
        pool=records,
        prior=prior,
        slots_of=slots_of,
        seed=seed,
        reference=reference,
    )
    kept = []
    for record, explained in free:
        try:
            question_check(
                description=record["description"], negatives=[n["text"] for n in explained]
            )
        except ValueError as exc:
            reason = failed.get(record["pair_id"]) or (
                f"fewer than two well-formed false negatives ({exc})"
            )
            result.left_out.append(_left(record, reason))
            continue
        kept.append((record, explained))
        result.sources[explained[0]["made"]] += 1
    free = kept
    positions: dict[int, int] = {}
    for split in SPLITS:
        in_split = [i for i, (record, _) in enumerate(free) if record["split"] == split]
        for i, position in zip(
            in_split, answer_positions(len(in_split), seed=f"{seed}:{split}"), strict=True
        ):
            positions[i] = position
    for i, (record, explained) in enumerate(free):
        item = question_item(
            description=record["description"],
            negatives=[n["text"] for n in explained],
            answer_position=positions[i],
            seed=f"{seed}:{record.get('content_key') or record['id']}",
        )
        rows[record["pair_id"]] = _row(record, item, explained, twin_group=None)
    ordered = [rows[r["pair_id"]] for r in records if r["pair_id"] in rows]
    result.rows = ordered + control_rows(controls, ordered)
    result.sources["control"] = len(result.rows) - len(ordered)
    if not result.sources["control"]:
        del result.sources["control"]
    instructions = {r["pair_id"]: (r.get("source") or {}).get("instruction") or "" for r in records}
    result.baselines = text_baselines(
        [
            {**row, "instruction": "" if row.get("control") else instructions[row["pair_id"]]}
            for row in result.rows
        ],
        no_difference=NO_DIFFERENCE,
    )
    return result


def _left(record: Mapping, reason: str) -> dict:
    return {
        "id": record["id"],
        "pair_id": record["pair_id"],
        "reason": f"no question could be made: {reason}",
    }


def _other_truth(
    group: TwinGroup, records: Sequence[Mapping], found: dict[str, list[Slot]]
) -> str | None:
    """A third option for a group of two: the truth of another pair of the release (any
    split) of the group's category and template, false of both members; the first in the
    records' order."""
    members = [r for r in records if r["pair_id"] in group.members]
    if len(members) < 2:
        return None
    first = members[0]
    pool = [r for r in records if r["category"] == group.category and not question_problem(r)]
    found_truths = other_truths(first, pool, found)
    for negative in found_truths:
        text = negative["text"]
        if (
            negative["made"] == "other_truth"
            and all(false_of(" ".join(m["description"].split()), text, found) for m in members)
            and all(_plain(text) != _plain(t) for t in group.texts)
        ):
            return text
    # Else an edit of another photo in the category, said in other words: false of both.
    photos = {str(m.get("content_key") or "").split(":")[0] for m in members}
    by_text = {_plain(r["description"]): r for r in pool}
    of_each = [
        {n["text"] for n in other_truths(m, pool, found) if n["made"] == "category_truth"}
        for m in members[1:]
    ]
    for negative in found_truths:
        text = negative["text"]
        if (
            negative["made"] == "category_truth"
            and all(text in allowed for allowed in of_each)
            and all(_plain(text) != _plain(t) for t in group.texts)
            and str(by_text[_plain(text)].get("content_key") or "").split(":")[0] not in photos
        ):
            return text
    return None


def _local_truth(group: TwinGroup, records: Sequence[Mapping]) -> str | None:
    """The last third option of a group of two: a local edit of another photo in the category
    ("A shadow now falls on the wall" for "The whole image became brighter" / "darker", an
    axis with two values). It names what those photos lack, so it is false of both; never a
    global one, which may be true; what happened is no slot of it."""
    members = [r for r in records if r["pair_id"] in group.members]
    photos = {str(m.get("content_key") or "").split(":")[0] for m in members}
    pool = [r for r in records if r["category"] == group.category and not question_problem(r)]
    for other in pool:
        text = " ".join(other["description"].split())
        if (
            str(other.get("content_key") or "").split(":")[0] not in photos
            and "whole image" not in text.casefold()
            and all(_plain(text) != _plain(t) for t in group.texts)
            and not any(s.kind in FIXED_KINDS for s in find_slots(text))
        ):
            return text
    return None


def _neighbour_truth(group: TwinGroup, records: Sequence[Mapping], *, seed: int) -> str | None:
    """A third option for a group of two whose slot has no third value: the truth of another
    pair of the same split and source photo (another edit of the same image A, so false of
    both members, which each show one edit), chosen by a seeded hash; None when there is
    none."""
    members = {str(k) for k in group.members}
    keys = {
        str(r.get("content_key") or "").split(":")[0]
        for r in records
        if str(r["pair_id"]) in members
    }
    plain = {_plain(t) for t in group.texts}
    found = sorted(
        (
            hashlib.sha256(f"{seed}:{group.id}:{r['pair_id']}".encode()).hexdigest(),
            r["description"].strip(),
        )
        for r in records
        if str(r["pair_id"]) not in members
        and r["split"] == group.split
        and str(r.get("content_key") or "").split(":")[0] in keys - {""}
        and not question_problem(r)
        and _plain(r["description"]) not in plain
    )
    return found[0][1] if found else None


def _derive(
    record: Mapping,
    derived: Mapping[int, tuple[list, str] | ValueError] | None,
    entity_pool: Sequence[str],
    prior: Prior | None,
    slots_of: dict[str, list[Slot]] | None,
) -> tuple[list, str]:
    pid = record["pair_id"]
    if derived is not None and pid in derived:
        done = derived[pid]
        if isinstance(done, ValueError):
            raise done
        if done[1] != "fallback":  # made elsewhere without the release's entity pool
            return done
    return question_negatives(record, entity_pool=entity_pool, prior=prior, slots_of=slots_of)


def _row(record: Mapping, item: Mapping, negatives: list[dict], *, twin_group: str | None) -> dict:
    return {
        "id": record["id"],
        "pair_id": record["pair_id"],
        "split": record["split"],
        "category": record["category"],
        "image_a": record["image_a"],
        "image_b": record["image_b"],
        **item,
        "twin_group": twin_group,
        "control": False,
        "negatives": negatives,
    }


def _twin_row(
    record: Mapping,
    group: TwinGroup,
    texts: list[str],
    *,
    seed: int,
    truths: Mapping[str, set[str]] | None = None,
) -> dict:
    """The group's options in the group's order (seeded by its id): the same four texts under
    the same letters for every member; the answer is the letter of this pair's truth."""
    options = [*texts, NO_DIFFERENCE]
    random.Random(f"{seed}:{group.id}:options").shuffle(options)
    own = group.members.index(record["pair_id"])
    truth = group.texts[own]
    letters = dict(zip(LETTERS, options, strict=True))
    answer = next(k for k, v in letters.items() if v == truth)
    negatives = []
    for text in letters.values():
        if text in (truth, NO_DIFFERENCE):
            continue
        if text in group.texts:
            other = group.texts.index(text)
            why = why_false(group.slot, group.values[own], group.values[other])
            made, slot = "twin", group.slot
            why = f"{why}; the truth of pair {group.members[other]}"
        else:
            slot, why = _slot_and_why(truth, text)
            made = "derived"
            photos = (truths or {}).get(_plain(text), set())
            if _photo(record) in photos - {""}:  # _neighbour_truth: an edit of the photo
                made = "neighbour"
                same = "the truth of another pair of the same photo: an edit this pair lacks"
                why = same if slot == "sentence" else f"{why}; {same}"
            elif photos:  # _other_truth, _local_truth: a pair of another photo or split
                made = "other_truth"
                if slot == "sentence":
                    why = "the truth of an edit of another photo, of a thing this one lacks"
                why = f"{why}; the truth of another pair"
        negatives.append({"text": text, "slot": slot, "why": why, "made": made})
    item = {"question": QUESTION, "options": letters, "answer": answer}
    return _row(record, item, negatives, twin_group=group.id)


def _frozen_row(record: Mapping, before: Mapping) -> dict:
    """The published question again: same options under the same letters, same group."""
    row = dict(before["row"])
    row.update(
        {
            "id": record["id"],
            "split": record["split"],
            "category": record["category"],
            "image_a": record["image_a"],
            "image_b": record["image_b"],
        }
    )
    return row


def _explained(record: Mapping, negative: str, made: str) -> dict:
    if made in ("verified", "edited"):
        why = "written by a lead" + (" and verified" if made == "verified" else "")
        return {"text": negative, "slot": "", "why": why, "made": made}
    if made == "fallback":
        slot, why = explain(record["description"], negative)
    else:
        slot, why = _slot_and_why(record["description"], negative)
    return {"text": negative, "slot": slot, "why": why, "made": made}


def _photo(record: Mapping) -> str:
    return str(record.get("content_key") or "").split(":")[0]
