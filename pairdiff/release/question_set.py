"""The question file of a release: one question per record that can make one, the records that
cannot (named, with the reason), and how the text-only baselines do on the rest."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.release.baselines import NaiveBayes, text_baselines
from pairdiff.release.questions import (
    LETTERS,
    NO_DIFFERENCE,
    QUESTION,
    answer_positions,
    hard_negatives,
    image_negatives,
    question_check,
    question_item,
)
from pairdiff.release.slots import (
    Prior,
    Slot,
    candidates,
    find_slots,
    slots_prior,
    why_false,
)
from pairdiff.release.splits import SPLITS
from pairdiff.release.twins import TwinGroup, member_of, twin_groups

# A description that says nothing changed cannot be the true option next to "no difference".
_SAYS_NO_CHANGE = re.compile(
    r"^\W*(?:there\s+(?:is|are)\s+)?no(?:\s+(?:visible|noticeable|apparent))?\s+"
    r"(?:difference|change)s?\b",
    re.I,
)


@dataclass
class QuestionSet:
    rows: list[dict] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)  # {"id", "pair_id", "reason"}
    sources: Counter = field(default_factory=Counter)  # verified / edited / derived / fallback
    baselines: dict = field(default_factory=dict)


def question_negatives(
    record: Mapping,
    *,
    entity_pool: Sequence[str] = (),
    prior: Prior | None = None,
    slots_of: Mapping[str, Sequence[Slot]] | None = None,
) -> tuple[list, str]:
    """The derived negatives of one record's first change and how they were made ("derived":
    same-slot rewrites; "fallback": the older word rules and templates, for sentences with too
    few slots). Seeded by the pair's content, so a lead's preview and the releases agree.
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
    negatives = hard_negatives(
        description=change["description"],
        category=change["category"],
        entity_a=change["entity_a"],
        entity_b=change["entity_b"],
        absent_a=not change["boxes_a"],
        absent_b=not change["boxes_b"],
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


def question_problem(record: Mapping) -> str:
    """Why the record cannot make a question, or ""."""
    if says_no_change(record):
        return "the description says there is no difference, which is the fourth option"
    if not record["changes"]:
        return "the answer has no change"
    if not " ".join(record["description"].split()):
        return "the description is blank"
    return ""


def says_no_change(record: Mapping) -> bool:
    """Whether the record's answer says nothing changed: it is a control, not a change."""
    text = " ".join((record.get("description") or "").split())
    return bool(text) and (
        _SAYS_NO_CHANGE.search(text) is not None or _plain(text) == _plain(NO_DIFFERENCE)
    )


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
) -> QuestionSet:
    """Questions of ``records`` (in their order). Options, in this order of precedence:
    the question a release of the project published already for the pair, when its truth is
    unchanged (``published``, by pair id: frozen, letters and all); a lead's verified ones,
    else a lead's edit; a twin group's shared options (``twins``); else derived (``derived``,
    by pair id, holds some made already by ``derived_negatives``). ``controls``: pairs with no
    change (``control_items``), asked with "no difference" as the truth. A record that
    cannot make a question is left out and named; nothing here raises for one record."""
    result = QuestionSet()
    published = published or {}
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
    groups = twin_groups([member_of(r, "") for r in open_], seed=seed)
    grouped: dict[int, tuple[TwinGroup, list[str]]] = {}
    for group in groups:
        texts = list(dict.fromkeys(group.texts))  # a repeat shares its twin's option
        if len(texts) == 2:
            third = group.third(seed=f"{seed}:{group.id}") or _neighbour_truth(
                group, records, seed=seed
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
    for record in records:
        pid = record["pair_id"]
        try:
            if pid in frozen:
                rows[pid] = _frozen_row(record, frozen[pid])
                result.sources["published"] += 1
            elif pid in grouped:
                group, texts = grouped[pid]
                rows[pid] = _twin_row(record, group, texts, seed=seed)
                result.sources["twin"] += 1
            elif pid in lead or record in open_:
                negatives, source = lead.get(pid) or _derive(
                    record, derived, entity_pool, prior, slots_of
                )
                question_check(description=record["description"], negatives=negatives)
                free.append((record, [_explained(record, n, source) for n in negatives]))
                result.sources[source] += 1
        except ValueError as exc:
            result.left_out.append(
                {
                    "id": record["id"],
                    "pair_id": pid,
                    "reason": f"no question could be made: {exc}",
                }
            )
    free = adversarial(free, [*rows.values()], prior=prior, slots_of=slots_of, seed=seed)
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


FOLDS = 2  # the adversary is trained on the other fold's questions (cross-fitting)


def adversarial(
    free: list[tuple[Mapping, list[dict]]],
    twin_rows: Sequence[Mapping],
    *,
    prior: Prior,
    slots_of: dict[str, list[Slot]],
    seed: int,
) -> list[tuple[Mapping, list[dict]]]:
    """Derived negatives chosen again, adversarially (SWAG / AFLite): of each question's
    candidates (same-slot rewrites, false by ``why_false``), the two that a text-only model
    finds most like a truth — a value the release's truths use first (a value no truth ever
    takes gives itself away), then the score of naive Bayes trained on the options of the
    other fold's questions (each option true or false). Lead-written and fallback negatives
    stay as they are."""
    folds = [NaiveBayes() for _ in range(FOLDS)]
    examples: list[list[tuple[str, bool]]] = [[] for _ in range(FOLDS)]
    for row in twin_rows:
        k = _fold(row.get("pair_id"), seed)
        examples[k] += [(t, t == row["options"][row["answer"]]) for t in row["options"].values()]
    for record, negatives in free:
        k = _fold(record["pair_id"], seed)
        examples[k].append((record["description"], True))
        examples[k] += [(n["text"], False) for n in negatives]
    for k in range(FOLDS):
        folds[k].fit([e for j in range(FOLDS) if j != k for e in examples[j]])
    out = []
    for record, negatives in free:
        if any(n["made"] != "derived" for n in negatives):
            out.append((record, negatives))
            continue
        model = folds[_fold(record["pair_id"], seed)]
        picked = _most_like_truths(record, model, prior, slots_of, seed)
        out.append((record, picked or negatives))
    return out


def _most_like_truths(
    record: Mapping,
    model: NaiveBayes,
    prior: Prior,
    slots_of: dict[str, list[Slot]],
    seed: int,
) -> list[dict] | None:
    text = record["description"].strip()
    pool = candidates(
        text,
        seed=f"{seed}:{record.get('content_key')}",
        prior=prior,
        per_slot=8,
        slots=slots_of.get(text),
    )
    ranked = []
    for c in pool:
        if c.slot.startswith("swap:") or _plain(c.sentence) in (
            _plain(text),
            _plain(NO_DIFFERENCE),
        ):
            continue
        kind, why = _slot_and_why(text, c.sentence)
        new = [s for s in find_slots(c.sentence) if s.kind == kind]
        attested = any(v.value.lower() in {x.lower() for x in prior.get(kind, {})} for v in new)
        ranked.append((not attested, -model.score(c.sentence), c.sentence, kind, why))
    ranked.sort()
    chosen: list[dict] = []
    for _, _, sentence, kind, why in ranked:
        if len(chosen) == 2:
            break
        if all(_plain(sentence) != _plain(n["text"]) for n in chosen):
            chosen.append({"text": sentence, "slot": kind, "why": why, "made": "derived"})
    try:
        question_check(description=text, negatives=[n["text"] for n in chosen])
    except ValueError:
        return None
    return chosen


def _fold(pair_id: object, seed: int) -> int:
    return hashlib.sha256(f"{seed}:fold:{pair_id}".encode()).digest()[0] % FOLDS


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
    prior: Prior,
    slots_of: dict[str, list[Slot]],
) -> tuple[list, str]:
    pid = record["pair_id"]
    if derived is not None and pid in derived:
        done = derived[pid]
        if isinstance(done, ValueError):
            raise done
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


def _twin_row(record: Mapping, group: TwinGroup, texts: list[str], *, seed: int) -> dict:
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
            made = "twin"
            why = f"{why}; the truth of pair {group.members[other]}"
        else:
            slot, why = _slot_and_why(truth, text)
            made = "derived"
            if slot == "sentence":  # _neighbour_truth: another pair's edit of the photo
                made = "neighbour"
                why = "the truth of another pair of the same photo: an edit this pair lacks"
        negatives.append({"text": text, "slot": group.slot, "why": why, "made": made})
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
    slot, why = _slot_and_why(record["description"], negative)
    return {"text": negative, "slot": slot, "why": why, "made": made}


def _slot_and_why(truth: str, negative: str) -> tuple[str, str]:
    """The kind of slot ``negative`` changed in ``truth`` and why it is false."""
    a, b = find_slots(" ".join(truth.split())), find_slots(" ".join(negative.split()))
    if len(a) == len(b):
        changed = [(x, y) for x, y in zip(a, b, strict=True) if _plain(x.value) != _plain(y.value)]
        if len(changed) == 1 and changed[0][0].kind == changed[0][1].kind:
            x, y = changed[0]
            return x.kind, why_false(x.kind, x.value, y.value) or "another value"
        if len(changed) == 2 and changed[0][0].value == changed[1][1].value:
            kind = changed[0][0].kind
            return f"swap:{kind}", f"the two {kind.replace('_', ' ')}s exchanged"
    return "sentence", "a word rule changed the sentence (too few slots to fill)"


def control_items(
    records: Sequence[Mapping],
    *,
    rate: float,
    seed: int,
    published: Mapping[int, Mapping] | None = None,
) -> list[dict]:
    """Pairs with no change made from released pairs: image A shown twice, so "no difference"
    is the truth. ``rate`` of each split's records (at least one when the rate is positive
    and the split has records), chosen by a seeded hash; the controls an earlier release
    published (``published``, rows by pair id) come first and keep their question."""
    published = published or {}
    if rate <= 0 and not published:
        return []
    out: list[dict] = []
    for split in SPLITS:
        in_split = [r for r in records if r["split"] == split and not question_problem(r)]
        if not in_split:
            continue
        want = max(1, round(rate * len(in_split))) if rate > 0 else 0
        ranked = sorted(
            in_split,
            key=lambda r: (
                r["pair_id"] not in published,
                hashlib.sha256(
                    f"{seed}:control:{r.get('content_key') or r['id']}".encode()
                ).hexdigest(),
            ),
        )
        kept = sum(1 for r in in_split if r["pair_id"] in published)
        for record in [r for r in records if r["split"] == split and says_no_change(r)]:
            # An accepted pair whose answer is "no difference": a control with its own images,
            # asked with the options of a question of its source (else its category).
            donor = _donor(record, in_split)
            if donor is not None:
                out.append(
                    {
                        "id": record["id"],
                        "pair_id": record["pair_id"],
                        "options_of": donor["pair_id"],
                        "split": split,
                        "category": record["category"],
                        "image_a": record["image_a"],
                        "image_b": record["image_b"],
                    }
                )
        for record in ranked[: max(want, kept)]:
            if record["pair_id"] in published:
                out.append({**published[record["pair_id"]], "published": True})
                continue
            out.append(
                {
                    "id": f"{record['id']}-same",
                    "pair_id": record["pair_id"],
                    "split": split,
                    "category": record["category"],
                    "image_a": record["image_a"],
                    "image_b": record["image_a"],
                }
            )
    return out


def _donor(record: Mapping, candidates: Sequence[Mapping]) -> Mapping | None:
    """The pair whose question a no-change pair is asked with: one of its source photo (same
    image A), else of its category, else any; the first by pair id."""
    for same in (
        lambda r: r["content_key"].split(":")[0] == record["content_key"].split(":")[0],
        lambda r: r["category"] == record["category"],
        lambda r: True,
    ):
        found = sorted((r for r in candidates if same(r)), key=lambda r: r["pair_id"])
        if found:
            return found[0]
    return None


def control_rows(controls: Sequence[Mapping], rows: Sequence[dict]) -> list[dict]:
    """The control questions: the options of the question of the pair the control was made
    from (its twin group's when it has one, so the control joins the group), under the same
    letters, with "no difference" as the answer. Each change option is false: nothing
    changed. One control per twin group."""
    by_pair = {row["pair_id"]: row for row in rows}
    used: set[str] = set()
    out = []
    for control in controls:
        own = "options_of" in control  # an accepted pair that says "no difference"
        row = by_pair.get(control["options_of"] if own else control["pair_id"])
        if row is None:
            continue
        if control.get("published"):  # frozen: the row as it was published
            frozen = {k: v for k, v in control.items() if k != "published"}
            used.add(str(frozen.get("twin_group")))
            out.append(frozen)
            continue
        group = row.get("twin_group") or f"pair-{row['id']}"
        if group in used and not own:
            continue
        used.add(group)
        # The control and its pair's question share their options: a group of their own.
        row["twin_group"] = group
        letter = next(k for k, v in row["options"].items() if v == NO_DIFFERENCE)
        negatives = [
            {
                "text": text,
                "slot": "control",
                "why": "image B is image A: nothing changed",
                "made": "control",
            }
            for text in row["options"].values()
            if text != NO_DIFFERENCE
        ]
        control = {k: v for k, v in control.items() if k != "options_of"}
        out.append(
            {
                **control,
                "question": row["question"],
                "options": dict(row["options"]),
                "answer": letter,
                "twin_group": group,
                "control": True,
                "negatives": negatives,
            }
        )
    return out


def _plain(text: str) -> str:
    return re.sub(r"[\s.!?;:,]+$", "", " ".join(text.casefold().split()))
