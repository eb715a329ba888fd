"""The question file of a release: one question per record that can make one, the records that
cannot (named, with the reason), and how the text-only baselines do on the rest."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.release.baselines import text_baselines
from pairdiff.release.questions import (
    NO_DIFFERENCE,
    answer_positions,
    hard_negatives,
    image_negatives,
    question_check,
    question_item,
)
from pairdiff.release.slots import Prior, Slot, find_slots, slots_prior
from pairdiff.release.splits import SPLITS

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
    if not record["changes"]:
        return "the answer has no change"
    text = " ".join(record["description"].split())
    if not text:
        return "the description is blank"
    if _SAYS_NO_CHANGE.search(text) or _plain(text) == _plain(NO_DIFFERENCE):
        return "the description says there is no difference, which is the fourth option"
    return ""


def question_set(
    records: Sequence[Mapping],
    *,
    seed: int,
    verified: Mapping[int, Sequence[str]],
    edited: Mapping[int, Sequence[str]],
    entity_pool: Sequence[str] = (),
    derived: Mapping[int, tuple[list, str] | ValueError] | None = None,
) -> QuestionSet:
    """Questions of ``records`` (in their order). Negatives: a lead's verified ones (frozen),
    else a lead's edit, else derived (``derived``, by pair id, holds some made already by
    ``derived_negatives``). A record that cannot make a question is left out and named;
    nothing here raises for one record. Answer letters are balanced in each split."""
    result = QuestionSet()
    slots_of: dict[str, list[Slot]] = {}  # each description's slots, found once
    prior = release_prior(records, slots_of=slots_of)
    made: list[tuple[Mapping, list[str]]] = []
    for record in records:
        problem = question_problem(record)
        negatives: Sequence[str] | None = None
        if not problem:
            pid = record["pair_id"]
            try:
                if verified.get(pid):
                    negatives, source = list(verified[pid]), "verified"
                elif edited.get(pid):
                    negatives, source = list(edited[pid]), "edited"
                elif derived is not None and pid in derived:
                    done = derived[pid]
                    if isinstance(done, ValueError):
                        raise done
                    negatives, source = done
                else:
                    negatives, source = question_negatives(
                        record, entity_pool=entity_pool, prior=prior, slots_of=slots_of
                    )
                question_check(description=record["description"], negatives=negatives)
            except ValueError as exc:
                problem = f"no question could be made: {exc}"
        if problem:
            result.left_out.append(
                {"id": record["id"], "pair_id": record["pair_id"], "reason": problem}
            )
            continue
        result.sources[source] += 1
        made.append((record, list(negatives or ())))
    positions: dict[int, int] = {}
    for split in SPLITS:
        in_split = [i for i, (record, _) in enumerate(made) if record["split"] == split]
        for i, position in zip(
            in_split, answer_positions(len(in_split), seed=f"{seed}:{split}"), strict=True
        ):
            positions[i] = position
    instructions = []
    for i, (record, negatives) in enumerate(made):
        item = question_item(
            description=record["description"],
            negatives=negatives,
            answer_position=positions[i],
            seed=f"{seed}:{record.get('content_key') or record['id']}",
        )
        result.rows.append(
            {
                "id": record["id"],
                "pair_id": record["pair_id"],
                "split": record["split"],
                "category": record["category"],
                "image_a": record["image_a"],
                "image_b": record["image_b"],
                **item,
            }
        )
        instructions.append((record.get("source") or {}).get("instruction") or "")
    result.baselines = text_baselines(
        [{**row, "instruction": text} for row, text in zip(result.rows, instructions, strict=True)],
        no_difference=NO_DIFFERENCE,
    )
    return result


def _plain(text: str) -> str:
    return re.sub(r"[\s.!?;:,]+$", "", " ".join(text.casefold().split()))
