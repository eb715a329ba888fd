"""MinCU's strict filter, its vocabulary targets read back by the project's parser, the A/B swap,
and a card that states the project's real rules."""

import json

import pytest

from pairdiff.anchors import MINCU_VOCABULARY
from pairdiff.geometry import Frame
from pairdiff.release.build import ReleaseMeta, release_files
from pairdiff.release.card import agreement_stats
from pairdiff.release.options import ReleaseOptions, strict_filter
from pairdiff.release.records import ReleasePair, benchmark_record
from pairdiff.release.splits import SplitPlan
from pairdiff.release.training import swap_description, targets_read_back
from pairdiff.synth import make_pair
from pairdiff.vlm.parse import parse_answer

THOUSAND = Frame(1000, 1000)


def _parse(text: str):
    return parse_answer(text, THOUSAND, THOUSAND, [])


def _pair(i, *, changes=None, tiers=("excellent", "excellent"), defects=(), by="agreement"):
    return ReleasePair(
        pair_id=i,
        external_id=f"p-{i}",
        image_a=f"images/{i}_a.png",
        image_b=f"images/{i}_b.png",
        frame_a=THOUSAND,
        frame_b=THOUSAND,
        changes=tuple(
            changes
            or [
                {
                    "category": "object",
                    "description": f"The cup number {i} turned from blue to red.",
                    "entity_a": "cup",
                    "entity_b": "cup",
                    "boxes_a": [[10, 10, 200, 200]],
                    "boxes_b": [[10, 10, 200, 200]],
                }
            ]
        ),
        agreement={
            "tiers": list(tiers),
            "annotators": len(tiers),
            "defects": [list(defects)] + [[] for _ in tiers[1:]],
            "mean_iou": 1.0 if len(tiers) == 1 else 0.8,
            "decided_by": by,
        },
        content_key=f"sha-{i}",
    )


def test_vocabulary_has_mincus_sixteen_tokens():
    assert len(MINCU_VOCABULARY) == 16 and len(set(MINCU_VOCABULARY)) == 16
    assert {"<loc_0>", "<loc_9>", "<loc_null>", "<box_sep>"} <= set(MINCU_VOCABULARY)


def _synth_records() -> list[dict]:
    records = []
    for index in range(24):  # every kind of demo edit twice
        synth = make_pair(index, 0)
        frame_a, frame_b = Frame(*synth.size_a), Frame(*synth.size_b)
        changes = [
            {
                "category": c.category,
                "description": c.description,
                "entity_a": c.entity_a,
                "entity_b": c.entity_b,
                "boxes_a": [list(b) for b in c.boxes_a],
                "boxes_b": [list(b) for b in c.boxes_b],
            }
            for c in synth.changes
        ]
        pair = ReleasePair(index, synth.key, "a", "b", frame_a, frame_b, tuple(changes))
        records.append(benchmark_record(pair, "train"))
    return records


def test_every_training_target_reads_back_exactly_through_the_mincu_parser():
    records = _synth_records()
    odd = benchmark_record(
        _pair(
            90,
            changes=[
                {
                    "category": "object",
                    "description": "The cat [left] became a dog: see 'x'.",
                    "entity_a": "cat",
                    "entity_b": "dog",
                    "boxes_a": [[1, 2, 3, 4], [500, 500, 999, 1000]],
                    "boxes_b": [[0, 0, 1000, 1000]],
                },
                {
                    "category": "object",
                    "description": "A mug appeared.",
                    "entity_a": "",
                    "entity_b": "mug",
                    "boxes_a": [],
                    "boxes_b": [[20, 30, 40, 50]],
                },
            ],
        ),
        "train",
    )
    assert targets_read_back([*records, odd], _parse) == []


def test_a_change_without_boxes_is_left_out_of_training_and_named():
    pair = _pair(
        5,
        changes=[
            {
                "category": "lighting",
                "description": "It got brighter.",
                "entity_a": "",
                "entity_b": "",
                "boxes_a": [],
                "boxes_b": [],
            }
        ],
    )
    built = release_files([pair], SplitPlan(val_fraction=0, test_fraction=0), _meta({}))
    assert built.files["training.jsonl"] == b""
    assert built.report["training"]["left_out"][0]["id"] == "p-5"


def test_swap_augmentation_adds_half_turned_around_and_readable():
    pairs = [_pair(i) for i in range(1, 41)]
    options = ReleaseOptions(swap_ab=True)
    built = release_files(
        pairs, SplitPlan(val_fraction=0, test_fraction=0), _meta({}), options=options
    )
    rows = [json.loads(line) for line in built.files["training.jsonl"].decode().splitlines()]
    swapped = [r for r in rows if r["swapped"]]
    assert 12 <= len(swapped) <= 28 and len(rows) == 40 + len(swapped)
    first = swapped[0]
    original = next(r for r in rows if r["id"] == first["id"] and not r["swapped"])
    assert (first["image_a"], first["image_b"]) == (original["image_b"], original["image_a"])
    assert "from red to blue" in first["target"]
    assert not _parse(first["target"]).error


@pytest.mark.parametrize(
    ("text", "turned"),
    [
        ("A galaxy appeared on the right.", "A galaxy disappeared on the right."),
        ("There are now 23 coins instead of 24.", "There are now 24 coins instead of 23."),
        (
            "Image B has a lower resolution: 307x307 instead of 512x512 pixels.",
            "Image B has a higher resolution: 512x512 instead of 307x307 pixels.",
        ),
        ("The patch moved up.", "The patch moved down."),
        ("The sky became noisy.", None),
    ],
)
def test_descriptions_turn_around_for_the_swap(text, turned):
    assert swap_description(text) == turned


def test_strict_filter_keeps_two_excellent_clean_single_change_pairs():
    two_changes = _pair(3)
    two_changes = ReleasePair(
        **{
            **{f: getattr(two_changes, f) for f in two_changes.__slots__},
            "changes": two_changes.changes * 2,
        }
    )
    pairs = [
        _pair(1),
        _pair(2, tiers=("excellent", "good")),
        two_changes,
        _pair(4, defects=("artefacts",)),
        _pair(5, tiers=("excellent",)),
        _pair(6, by="lead"),
    ]
    kept, left = strict_filter(pairs, no_lead=False)
    assert [p.pair_id for p in kept] == [1, 6]
    assert left == {
        "a defect flag": 1,
        "fewer than two annotators": 1,
        "not excellent from both annotators": 1,
        "not exactly one change": 1,
    }
    kept, left = strict_filter(pairs, no_lead=True)
    assert [p.pair_id for p in kept] == [1] and left["decided by a lead"] == 1


def test_a_strict_release_writes_only_the_kept_pairs_and_says_so():
    pairs = [_pair(1), _pair(2, tiers=("excellent", "good"))]
    built = release_files(pairs, SplitPlan(), _meta({}), options=ReleaseOptions(strict=True))
    assert [r["pair_id"] for r in built.records] == [1]
    assert built.report["strict_filter"] == {
        "applied": True,
        "left_out": {"not excellent from both annotators": 1},
    }
    assert "MinCU strict filter" in built.files["README.md"].decode()


def _meta(rules: dict) -> ReleaseMeta:
    return ReleaseMeta("p", "P", "v1", 1, ({"slug": "object", "name": "Object"},), rules=rules)


RULES = {
    "strict": {"tier_rule": "strict", "tier_rule_label": "Both excellent", "overlap": 2},
    "good": {"tier_rule": "good", "tier_rule_label": "Excellent or good", "overlap": 3},
}


@pytest.mark.parametrize(
    ("rule", "claim"),
    [("strict", "both rated it excellent"), ("good", "both rated it excellent or good")],
)
def test_the_card_states_the_projects_tier_rule_and_overlap(rule, claim):
    pairs = [_pair(1), _pair(2, tiers=("excellent", "good"), by="lead")]
    card = release_files(pairs, SplitPlan(), _meta({**RULES[rule], "iou_threshold": 0.5}))
    text = card.files["README.md"].decode()
    assert claim in text
    assert f"overlap {RULES[rule]['overlap']}" in text
    assert "Accepted on agreement: 1 (excellent+excellent 1); decided by a lead: 1 " in text
    assert "(excellent+good 1)" in text
    other = {"strict": "excellent or good", "good": "both rated it excellent and"}[rule]
    assert other not in text


def test_with_overlap_one_the_card_says_one_annotator_and_no_iou_of_one_enters():
    pairs = [_pair(1, tiers=("excellent",)), _pair(2, tiers=("excellent",))]
    rules = {"tier_rule": "strict", "tier_rule_label": "Both excellent", "overlap": 1}
    built = release_files(pairs, SplitPlan(), _meta(rules))
    text = built.files["README.md"].decode()
    assert "annotated by one person (overlap 1)" in text
    assert "two people" not in text
    assert built.stats["mean_iou"] is None and built.stats["single_annotator_pairs"] == 2
    assert built.stats["tiers_by_decision"]["agreement"] == {"excellent": 2}


def test_agreement_stats_leave_single_annotator_pairs_out_of_the_iou():
    records = [
        {"agreement": {"tiers": ["excellent"], "annotators": 1, "mean_iou": 1.0}},
        {"agreement": {"tiers": ["excellent", "excellent"], "annotators": 2, "mean_iou": 0.6}},
    ]
    stats = agreement_stats(records)
    assert stats["mean_iou"] == 0.6 and stats["pairs_compared"] == 1
