"""Twin questions: groups of pairs whose true descriptions differ in one slot, asked with one
shared option set, so that each option is the truth of a different pair of the group.

As in MMVP and Winoground, a text-only answerer sees the same four options for every question
of a group and gives the same answer to each: it can be right on at most one of them. Pairs
are matched by their description with one slot left out (same category, split and source):
"The patch changed from blue to {}" with red, green and purple makes a group of three, whose
options are those three sentences and "no difference". Values of a group are pairwise false of
each other (``slots.why_false``: no synonyms, counts two apart, directions with no part in
common), so each pair's hard negatives are its twins' truths: written by the same hands, true
of a real pair, false of this one.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pairdiff.release.slots import Slot, candidates, find_slots, why_false

GROUP_SIZE = 3  # three truths and "no difference": VDiff-Bench's four options
# Slots whose values twin pairs may differ in: the ones an image settles at a glance.
TWIN_KINDS = frozenset(
    (
        "colour",
        "count",
        "count_word",
        "angle",
        "quoted",
        "resolution",
        "heading",
        "place",
        "size",
        "light",
        "light_kind",
        "effect",
        "event",
        "ordinal",
        "tone",
    )
)


@dataclass(frozen=True, slots=True)
class Member:
    """One pair that can make a question: its key, the group it may join, and its text."""

    key: int | str
    split: str
    category: str
    source: str
    description: str
    seed: str  # content key: orders members without database keys


@dataclass(frozen=True, slots=True)
class TwinGroup:
    id: str
    members: tuple[int | str, ...]  # keys, in the group's order
    slot: str  # the kind of slot the members differ in
    values: tuple[str, ...]  # each member's value of it
    texts: tuple[str, ...]  # each member's description
    slot_of_first: Slot  # the first member's slot the group differs in
    split: str = ""
    category: str = ""

    def third(self, *, seed: str) -> str | None:
        """For a group of two, a third option: the first member's description with the
        group's slot filled by a value false of both members, or None."""
        text = " ".join(self.texts[0].split())
        found = candidates(text, seed=seed, per_slot=8)
        for c in found:
            if c.slot != self.slot_of_first.key:
                continue
            new = [s for s in find_slots(c.sentence) if s.kind == self.slot]
            value = next((s.value for s in new if s.start == self.slot_of_first.start), None)
            if value and all(why_false(self.slot, v, value) for v in self.values):
                return c.sentence
        # Another slot of the first member changed: false of it, and of the second, whose
        # value of the group's slot it does not say.
        others = [c for c in found if not c.slot.startswith(("swap:", f"{self.slot}@"))]
        return others[0].sentence if others else None


def twin_groups(members: Sequence[Member], *, seed: int | str = 0) -> list[TwinGroup]:
    """Groups of two or three members, each member in at most one: same split, category and
    source, descriptions equal but for one slot whose values are pairwise false of each other.
    Deterministic: members are ordered by a hash of ``seed`` and their content key."""
    buckets: dict[tuple, list[tuple[Member, Slot]]] = defaultdict(list)
    for member in sorted(members, key=lambda m: (_rank(seed, m.seed), str(m.key))):
        text = " ".join(member.description.split())
        for slot in find_slots(text):
            if slot.kind not in TWIN_KINDS:
                continue
            template = (text[: slot.start] + "\0" + text[slot.end :]).casefold()
            # The category is part of the key: a question row shows it, and a group spanning
            # categories (noisy: noise, blurred: texture) would tell its members apart.
            key = (member.split, member.category, slot.kind, template)
            buckets[key].append((member, slot))
    # The buckets with most distinct values first: they make groups of three. A member has a
    # bucket per slot ("The galaxy at the top moved to the left": by place and by heading), and
    # the buckets taken first may strand others' members; the fewest left out wins, then the
    # first order.
    best: tuple[int, list[TwinGroup]] | None = None
    for order in (
        sorted(buckets, key=lambda k: (-_distinct(buckets[k]), k)),
        sorted(buckets, key=lambda k: (_distinct(buckets[k]), k)),
    ):
        groups = _grouped(buckets, order)
        left = len(members) - sum(len(g.members) for g in groups)
        if best is None or left < best[0]:
            best = (left, groups)
    assert best is not None
    return sorted(best[1], key=lambda g: g.id)


def _grouped(buckets: Mapping[tuple, list[tuple[Member, Slot]]], order: list[tuple]) -> list:
    taken: set[int | str] = set()
    groups: list[TwinGroup] = []
    for key in order:
        while True:
            # Four different truths left make two groups of two (each with a third option),
            # not three and a single no group asks (a repeat would join its twin's group).
            free = {
                " ".join(m.description.casefold().split())
                for m, _ in buckets[key]
                if m.key not in taken
            }
            size = 2 if len(free) == 4 else GROUP_SIZE
            chosen: list[tuple[Member, Slot]] = []
            for member, slot in buckets[key]:
                if member.key in taken:
                    continue
                if all(why_false(slot.kind, s.value, slot.value) for _, s in chosen) and all(
                    why_false(slot.kind, slot.value, s.value) for _, s in chosen
                ):
                    chosen.append((member, slot))
                if len(chosen) == size:
                    break
            if len(chosen) < 2:
                break
            taken.update(m.key for m, _ in chosen)
            groups.append(_group(chosen, key[2]))
        _join_repeats(buckets[key], groups, taken, key[2])
    return groups


def _join_repeats(
    entries: Sequence[tuple[Member, Slot]],
    groups: list[TwinGroup],
    taken: set[int | str],
    kind: str,
) -> None:
    """A pair left over whose description is word for word a member's of a group of its
    bucket joins that group (same options, the same truth as that member): the group still
    needs as many different answers as it has different truths, so nothing reading only
    text answers all of it."""
    for member, slot in entries:
        if member.key in taken:
            continue
        text = " ".join(member.description.split()).casefold()
        for i, group in enumerate(groups):
            if group.slot != kind or len(set(group.texts)) < 2:
                continue
            if any(" ".join(t.split()).casefold() == text for t in group.texts):
                if group.split != member.split or group.category != member.category:
                    continue
                groups[i] = TwinGroup(
                    id=group.id,
                    members=(*group.members, member.key),
                    slot=group.slot,
                    values=(*group.values, slot.value),
                    texts=(*group.texts, member.description.strip()),
                    slot_of_first=group.slot_of_first,
                    split=group.split,
                    category=group.category,
                )
                taken.add(member.key)
                break


def _group(chosen: Sequence[tuple[Member, Slot]], kind: str) -> TwinGroup:
    seeds = sorted(m.seed for m, _ in chosen)
    digest = hashlib.sha256("\n".join(seeds).encode()).hexdigest()[:12]
    return TwinGroup(
        id=f"twin-{digest}",
        members=tuple(m.key for m, _ in chosen),
        slot=kind,
        values=tuple(s.value for _, s in chosen),
        texts=tuple(m.description.strip() for m, _ in chosen),
        slot_of_first=chosen[0][1],
        split=chosen[0][0].split,
        category=chosen[0][0].category,
    )


def _distinct(entries: Sequence[tuple[Member, Slot]]) -> int:
    return len({s.value.casefold() for _, s in entries})


def _rank(seed: int | str, content: str) -> str:
    return hashlib.sha256(f"{seed}:twin:{content}".encode()).hexdigest()


def member_of(record: Mapping, source: str) -> Member:
    """The twin-matching view of a benchmark record."""
    return Member(
        key=record["pair_id"],
        split=record["split"],
        category=record["category"],
        source=source,
        description=record["description"],
        seed=str(record.get("content_key") or record["id"]),
    )
