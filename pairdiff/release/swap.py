"""The order-swapped copy of the test split, as MinCU measures order robustness: every test
record and question seen with B first (images, sizes, boxes and entities exchanged, every
description turned around), in a split of its own, ``test_swapped``. Each item names the item
it was made from in ``swap_of``; items whose descriptions or options cannot be turned around
(or would no longer be four distinct options) are left out and counted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.records import anchors
from pairdiff.release.training import end_place, swap_description, swapped_record

SWAPPED_SPLIT = "test_swapped"
SWAPPED_FROM = "test"


def swapped_records(records: Sequence[Mapping]) -> tuple[list[dict], int]:
    """The test records with B first, and how many could not be turned around."""
    out: list[dict] = []
    left = 0
    for record in records:
        if record["split"] != SWAPPED_FROM:
            continue
        turned = swapped_record(record)
        if turned is None or not turned["changes"]:  # a control has no change to turn around
            left += 1
            continue
        changes = [
            {
                **c,
                "boxes_a_px": c.get("boxes_b_px", []),
                "boxes_b_px": c.get("boxes_a_px", []),
                "anchors": anchors(c["boxes_b"], c["boxes_a"]),
            }
            for c in turned["changes"]
        ]
        first = changes[0]
        out.append(
            {
                **turned,
                "id": f"{record['id']}-swapped",
                "swap_of": record["id"],
                "split": SWAPPED_SPLIT,
                "size_a": record["size_b"],
                "size_b": record["size_a"],
                "description": first["description"],
                "entities": [first["entity_a"], first["entity_b"]],
                "boxes_a": first["boxes_a"],
                "boxes_b": first["boxes_b"],
                "boxes_a_px": first["boxes_a_px"],
                "boxes_b_px": first["boxes_b_px"],
                "anchors": first["anchors"],
                "changes": changes,
            }
        )
    return out, left


def swapped_questions(
    rows: Sequence[Mapping], records: Sequence[Mapping]
) -> tuple[list[dict], int]:
    """The test questions with B first: the same letters, each option turned around with the
    pair's own geometry (a move's start place becomes its end place), the answer unchanged.
    A control stays a control, its options turned with the geometry of the pair they were
    written for. Returns the rows and how many were left
    out."""
    by_pair = {r["pair_id"]: r for r in records}
    out: list[dict] = []
    left = 0
    for row in rows:
        if row["split"] != SWAPPED_FROM:
            continue
        # A control's options are those of the pair it was made from (or whose question it
        # is asked with): turned as that pair's are, so its swapped options are no tell.
        of = row.get("control_of") or row.get("options_of") or row["pair_id"]
        record = by_pair.get(of)
        options = _turned(row, record)
        if options is None:
            left += 1
            continue
        out.append(
            {
                **row,
                "id": f"{row['id']}-swapped",
                "swap_of": row["id"],
                "split": SWAPPED_SPLIT,
                "image_a": row["image_b"],
                "image_b": row["image_a"],
                "options": options,
                "negatives": [
                    {**n, "text": options[k]}
                    for n in row.get("negatives", [])
                    for k, v in row["options"].items()
                    if v == n["text"]
                ],
                "twin_group": None,
            }
        )
    return out, left


def _turned(row: Mapping, record: Mapping | None) -> dict | None:
    if record is None or not record.get("changes"):
        return None
    change = record["changes"][0]
    end = end_place(change, record.get("size_b"))
    start = _start_place(record)
    options: dict[str, str] = {}
    for letter, text in row["options"].items():
        if text == NO_DIFFERENCE:
            options[letter] = text
            continue
        turned = swap_description(text, end=end, start=start)
        if turned is None:
            return None
        options[letter] = turned
    plain = {" ".join(v.casefold().split()).rstrip(".") for v in options.values()}
    return options if len(plain) == len(options) else None


def _start_place(record: Mapping) -> str | None:
    """Where A shows the first change, in the words descriptions use."""
    change = record["changes"][0]
    flipped = {**change, "boxes_b_px": change.get("boxes_a_px") or []}
    return end_place(flipped, record.get("size_a"))
