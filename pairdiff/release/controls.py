"""No-difference controls: pairs with no change asked with the options of a released pair's
question, "no difference" the truth, at the project's rate."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from pairdiff.release.question_checks import question_problem, says_no_change
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.splits import SPLITS


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
