"""No-difference controls: pairs with no change asked with the options of a released pair's
question, "no difference" the truth, at the project's rate.

A made control is a pair of its own to anyone reading the files: image A of a released pair
(copied, or re-encoded where no other pair shows those bytes) under a pair number of its own,
and as image B a re-encoded copy of it
(``control_images.reencoded``), named as every pair's files are (``images/<n>_a.png``,
``images/<n>_b.png``), with a question id and pair id of the project's form (``identities``).
Nothing but the pixels tells it from a changed pair: not a path named twice, not the bytes,
not an id's suffix, not its place in the files (rows are in pair order)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from pairdiff.release.control_images import B_OF_COPY, B_OF_REENCODE, COPY, REENCODE
from pairdiff.release.question_checks import question_problem, says_no_change
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.splits import SPLITS

__all__ = ["B_OF_COPY", "B_OF_REENCODE", "COPY", "REENCODE", "WHY"]
WHY = "image B is a re-encoded copy of image A: nothing changed"


def control_items(
    records: Sequence[Mapping],
    *,
    rate: float,
    seed: int,
    published: Mapping[int, Mapping] | None = None,
) -> list[dict]:
    """The candidates for made controls, ``rate`` of each split's records wanted (at least one
    when the rate is positive and the split has records), ranked by a seeded hash; the
    controls an earlier release published (``published``, rows by the pair they were made
    from) come first and keep their question. ``control_rows`` takes the first wanted of
    them, those of a twin group first. An accepted pair whose answer says "no difference" is a
    control with its own images."""
    published = published or {}
    if rate <= 0 and not published:
        return []
    out: list[dict] = []
    for split in SPLITS:
        in_split = [r for r in records if r["split"] == split and not question_problem(r)]
        if not in_split:
            continue
        for record in [r for r in records if r["split"] == split and says_no_change(r)]:
            # Asked with the options of a question of its source (else its category).
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
        for record in ranked:
            if record["pair_id"] in published:
                out.append({**published[record["pair_id"]], "published": True})
                continue
            out.append(
                {
                    "id": record["id"],
                    "pair_id": record["pair_id"],
                    "control_of": record["pair_id"],
                    "split": split,
                    "category": record["category"],
                    "image_a": record["image_a"],
                    "image_b": record["image_a"],  # until ``identities`` gives it a file
                    "want": max(want, kept),
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
    from, under the same letters, with "no difference" as the answer; each change option is
    false, nothing changed. Made controls are taken from the candidates in rank order, one
    per twin group, those whose pair is in a twin group first (a control in a group of
    three twins makes the group's answers a permutation of its four options; beside a lone
    question it would make a group of two, one of whose answers is "no difference"). A made
    control keeps its pair's identity here: ``identities`` gives it its own."""
    by_pair = {row["pair_id"]: row for row in rows}
    used: set[str] = set()
    out = []
    taken: dict[str, int] = {}
    made: list[tuple[Mapping, dict]] = []
    for control in controls:
        if control.get("published"):  # frozen: the row as it was published
            frozen = {k: v for k, v in control.items() if k != "published"}
            if frozen["image_a"] == frozen["image_b"] and not frozen.get("control_of"):
                frozen["control_of"] = frozen["pair_id"]  # once A twice: given files of its own
            used.add(str(frozen.get("twin_group")))
            taken[frozen["split"]] = taken.get(frozen["split"], 0) + 1
            out.append(frozen)
        elif "options_of" in control:  # an accepted pair that says "no difference"
            row = by_pair.get(control["options_of"])
            if row is not None:
                group = row.get("twin_group") or _group_id(row)
                used.add(group)
                row["twin_group"] = group
                out.append(_control_row(control, row, own=True))
        elif control["pair_id"] in by_pair:
            made.append((control, by_pair[control["pair_id"]]))
    for grouped in (True, False):
        for control, row in made:
            split = control["split"]
            if taken.get(split, 0) >= control["want"] or bool(row.get("twin_group")) != grouped:
                continue
            group = row.get("twin_group") or _group_id(row)
            if group in used:
                continue
            used.add(group)
            taken[split] = taken.get(split, 0) + 1
            # The control and its pair's question share their options: a group of their own.
            row["twin_group"] = group
            out.append(_control_row(control, row, own=False))
    return out


def _group_id(row: Mapping) -> str:
    """A group id of the twin groups' form for a lone question and its control."""
    digest = hashlib.sha256(f"control-group:{row['pair_id']}:{row['id']}".encode()).hexdigest()
    return f"twin-{digest[:12]}"


def _control_row(control: Mapping, row: Mapping, *, own: bool) -> dict:
    letter = next(k for k, v in row["options"].items() if v == NO_DIFFERENCE)
    why = "the pair's answer says nothing changed" if own else WHY
    negatives = [
        {"text": text, "slot": "control", "why": why, "made": "control"}
        for text in row["options"].values()
        if text != NO_DIFFERENCE
    ]
    fields = {k: v for k, v in control.items() if k != "want"}
    return {
        **fields,
        "question": row["question"],
        "options": dict(row["options"]),
        "answer": letter,
        "twin_group": row.get("twin_group"),
        "control": True,
        "negatives": negatives,
    }


def identities(
    rows: Sequence[dict],
    records: Sequence[Mapping],
    *,
    seed: int,
    spare: Sequence[tuple[int, str]] = (),
) -> tuple[list[dict], dict[str, tuple[str, str]]]:
    """Every made control (a row with ``control_of``) under an identity of its own, the rows in
    pair order within each split, and the files to make: ``{path: (source path, how)}``,
    ``how`` one of control_images' COPY, REENCODE, B_OF_COPY, B_OF_REENCODE. A control's pair
    number and id are those of a pair of the project the release does not hold (``spare``:
    pair id and record id of pairs never released), those in the range of the released
    pairs' numbers first, to the test and val controls first; without one, a number past
    every pair's and an id of its source's form. A published control keeps its identity
    unless a released pair took it since (or it named one file twice, as controls once did).
    """
    source_of = {r["pair_id"]: r for r in records}
    sharing = Counter(_photo(r) for r in records)
    taken_ids = {r["id"] for r in records} | {r["id"] for r in rows if not r.get("control_of")}
    taken_pids = {r["pair_id"] for r in records} | {
        r["pair_id"] for r in rows if not r.get("control_of")
    }
    made = [r for r in rows if r.get("control_of") and r["control_of"] in source_of]
    keep = []
    for row in made:
        old = row["pair_id"] != row["control_of"] and row["image_a"] != row["image_b"]
        if old and row["pair_id"] not in taken_pids and row["id"] not in taken_ids:
            taken_pids.add(row["pair_id"])
            taken_ids.add(row["id"])
            keep.append(row)
    numbers = sorted(r["pair_id"] for r in records) or [0]
    low, high = numbers[0], numbers[-1]
    pool = sorted(
        (s for s in spare if s[0] not in taken_pids and s[1] not in taken_ids),
        key=lambda s: (
            not low <= s[0] <= high,
            hashlib.sha256(f"{seed}:control-identity:{s[0]}".encode()).hexdigest(),
        ),
    )
    beyond = max([high, *(s[0] for s in spare), *taken_pids]) + 1
    files: dict[str, tuple[str, str]] = {}
    renamed: dict[int, dict] = {}
    # The held-out splits' controls first: the spare numbers among the released pairs' are
    # few, and a test control numbered past every released pair would stand out.
    held_first = {"test": 0, "val": 1}
    for row in sorted(made, key=lambda r: held_first.get(r["split"], 2)):
        source = source_of[row["control_of"]]
        if not any(row is k for k in keep):
            if pool:
                number, record_id = pool.pop(0)
            else:
                number, beyond = beyond, beyond + 1
                record_id = _id_like(source, number, taken_ids)
            taken_pids.add(number)
            taken_ids.add(record_id)
            row = {
                **row,
                "id": record_id,
                "pair_id": number,
                "image_a": _named(source["image_a"], number, "a"),
                "image_b": _named(source["image_a"], number, "b"),
            }
        # Image A copied where another released pair shows the same bytes (a photo several
        # pairs were made from: one more is no tell), else re-encoded too (a copy would be
        # the only A shared by two questions, its pair's and its own).
        # A published control keeps its files as they were made (``control_a``).
        kind = row.get("control_a") or (COPY if sharing[_photo(source)] > 1 else REENCODE)
        row = {**row, "control_a": kind}
        files[row["image_a"]] = (source["image_a"], kind)
        files[row["image_b"]] = (source["image_a"], B_OF_COPY if kind == COPY else B_OF_REENCODE)
        renamed[row["control_of"]] = row
    out = [renamed[r["control_of"]] if r.get("control_of") in renamed else r for r in rows]
    order = {s: i for i, s in enumerate(SPLITS)}
    out.sort(key=lambda r: (order.get(r["split"], len(order)), r["pair_id"]))
    return out, files


def _photo(record: Mapping) -> str:
    """Image A's sha256 (the content key's first half), or the record id without one."""
    return str(record.get("content_key") or record["id"]).split(":")[0]


def _named(source: str, number: int, side: str) -> str:
    """``images/<number>_<side>.<the source's extension>``."""
    path = PurePosixPath(source)
    return str(path.with_name(f"{number}_{side}{path.suffix}"))


def _id_like(source: Mapping, number: int, taken: set[str]) -> str:
    """A record id for pair ``number`` of the form of ``source``'s: ``pair-<n>`` for an id
    made from the pair number, else the source's id with its last number moved by as much
    as the pair number moved (same width)."""
    text, pid = str(source["id"]), int(source["pair_id"])
    found = list(re.finditer(r"\d+", text))
    candidate = f"pair-{number}"
    if text != f"pair-{pid}" and found:
        last = found[-1]
        value = max(0, int(last.group()) + number - pid)
        candidate = f"{text[: last.start()]}{value:0{len(last.group())}d}{text[last.end() :]}"
    while candidate in taken:
        candidate += "x"
    return candidate
