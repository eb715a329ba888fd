"""Questions only the images can answer: twin groups, slot gaps, controls, splits grouped by
source photo, and what a later version keeps of an earlier one."""

import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from pairdiff.geometry import Frame
from pairdiff.release.baselines import NaiveBayes, group_scores, length_scores
from pairdiff.release.build import Previous, ReleaseMeta, release_files
from pairdiff.release.controls import WHY
from pairdiff.release.options import ReleaseOptions
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.records import ReleasePair
from pairdiff.release.slots import GROUPS, WORDS, find_slots, why_false
from pairdiff.release.sources import difference_hash, source_groups
from pairdiff.release.splits import SplitItem, SplitPlan, split_assign
from pairdiff.release.swap import SWAPPED_SPLIT

META = ReleaseMeta("p", "P", "v1", 1, ({"slug": "object", "name": "Object"},))

# (photo, category, description): three twin groups, one lone pair and no-change-able pairs.
PAIRS = [
    ("coins", "appear_disappear", "There are now 23 coins instead of 24."),
    ("coins", "appear_disappear", "There are now 21 coins instead of 24."),
    ("coins", "appear_disappear", "There are now 19 coins instead of 24."),
    ("astro", "regional_colour", "The round mission patch changed from blue to red."),
    ("astro", "regional_colour", "The round mission patch changed from blue to green."),
    ("astro", "regional_colour", "The round mission patch changed from blue to purple."),
    ("hubble", "position", "The galaxy at the top right moved to the left."),
    ("hubble", "position", "The galaxy at the top right moved to the right."),
    ("hubble", "position", "The galaxy at the top right moved up."),
    (
        "camera",
        "noise_resolution",
        "Image B has a lower resolution: 205x205 instead of 512x512 pixels.",
    ),
    (
        "camera",
        "noise_resolution",
        "Image B has a lower resolution: 256x256 instead of 512x512 pixels.",
    ),
    (
        "camera",
        "noise_resolution",
        "Image B has a lower resolution: 307x307 instead of 512x512 pixels.",
    ),
    ("page", "ocr_text", "The word 'first' changed to 'then'."),
    ("page", "ocr_text", "The word 'markers' changed to 'labels'."),
    ("moon", "lighting", "The whole image became brighter."),
    ("moon", "lighting", "The whole image became darker."),
]


def _pair(i: int, photo: str, category: str, description: str) -> ReleasePair:
    k = i % 100
    box_a, box_b = [[100 + k, 100, 300 + k, 300]], [[500 + k, 100, 700 + k, 300]]
    if category == "position":  # from the top right to the left
        box_a, box_b = [[700 + k, 100, 900, 300]], [[100 + k, 400, 300 + k, 600]]
    return ReleasePair(
        pair_id=i,
        external_id=f"p-{i}",
        image_a=f"images/{i}_a.png",
        image_b=f"images/{i}_b.png",
        frame_a=Frame(1000, 1000),
        frame_b=Frame(1000, 1000),
        changes=(
            {
                "category": category,
                "description": description,
                "entity_a": "thing",
                "entity_b": "thing",
                "boxes_a": box_a,
                "boxes_b": box_b,
            },
        ),
        agreement={"tiers": ["excellent", "excellent"], "annotators": 2, "mean_iou": 0.9},
        source={"instruction": ""},
        content_key=f"sha-{photo}:sha-b-{i}",
    )


def _pairs(n_copies: int = 1) -> list[ReleasePair]:
    out = []
    for copy in range(n_copies):
        for j, (photo, category, text) in enumerate(PAIRS):
            out.append(_pair(copy * 100 + j + 1, f"{photo}{copy}", category, text))
    return out


def _sources(pairs):
    return {p.pair_id: p.content_key.split(":")[0] for p in pairs}


def _build(pairs, *, previous=None, options=None, plan=None, order_swap=False):
    return release_files(
        pairs,
        plan or SplitPlan(seed=0, val_fraction=0.2, test_fraction=0.2),
        META,
        sources=_sources(pairs),
        previous=previous,
        options=options,
        order_swap=order_swap,
    )


def _questions(built) -> list[dict]:
    return [json.loads(line) for line in built.files["questions.jsonl"].decode().splitlines()]


def test_twin_groups_share_their_option_text_exactly_and_each_option_is_a_members_truth():
    rows = _questions(_build(_pairs(3)))
    groups: dict[str, list[dict]] = {}
    for row in rows:
        if row["twin_group"] and not row["control"]:
            groups.setdefault(row["twin_group"], []).append(row)
    assert len(groups) >= 9
    for members in groups.values():
        assert len({json.dumps(m["options"], sort_keys=True) for m in members}) == 1
        truths = [m["options"][m["answer"]] for m in members]
        assert len(set(truths)) == len(members)  # each member a different truth
        if len(members) == 3:  # VDiff-Bench's four: three truths and "no difference"
            assert set(members[0]["options"].values()) == {*truths, NO_DIFFERENCE}


@pytest.mark.parametrize("answerer", ["longest", "first", "naive_bayes"])
def test_a_text_only_answerer_wholly_answers_no_twin_group(answerer):
    rows = [r for r in _questions(_build(_pairs(3))) if r["twin_group"]]
    model = NaiveBayes().fit(
        [(t, k == r["answer"]) for r in rows[::2] for k, t in r["options"].items()]
    )
    pick = {
        "longest": lambda r: max(r["options"], key=lambda k: length_scores([r["options"][k]])[0]),
        "first": lambda r: min(r["options"], key=lambda k: r["options"][k]),
        "naive_bayes": lambda r: max(r["options"], key=lambda k: model.score(r["options"][k])),
    }[answerer]
    credits = [float(pick(r) == r["answer"]) for r in rows]
    scores = group_scores(rows, credits)
    assert scores["groups"] >= 9
    assert scores["group_accuracy"] == 0.0


def test_the_release_reports_group_accuracy_and_passes_its_gate_without_an_override():
    built = _build(_pairs(3))
    baselines = built.report["text_baselines"]
    assert not baselines["gate"]["over_limit"]
    for name in ("similarity", "longest"):
        assert baselines["baselines"][name]["group_accuracy"] == 0.0


def test_every_derived_negative_names_its_slot_and_why_it_is_false_with_the_slots_gap():
    rows = _questions(_build(_pairs(1)))
    for row in rows:
        truth = row["options"][row["answer"]]
        for negative in row["negatives"]:
            assert negative["why"] and negative["slot"]
            assert negative["text"] in row["options"].values() and negative["text"] != truth
            assert negative["slot"] != "motion"  # a move's negative changes the direction
            new = find_slots(negative["text"])
            for slot, other in zip(find_slots(truth), new, strict=False):
                if slot.kind == other.kind and slot.value != other.value:
                    assert why_false(slot.kind, slot.value, other.value)


@pytest.mark.parametrize(
    ("kind", "truth", "other", "false"),
    [
        ("count", "23", "22", False),
        ("count", "23", "21", True),
        ("angle", "30", "40", False),
        ("angle", "30", "45", True),
        ("resolution", "307x307", "256x171", False),  # another aspect ratio
        ("resolution", "307x307", "205x205", True),
        ("effect", "noisy", "grainy", False),  # synonyms
        ("size", "larger", "wider", False),  # a uniform enlargement is wider too
        ("heading", "up and to the left", "up", False),  # shares a part
        ("heading", "up and to the left", "down and to the right", True),
        ("event", "appeared", "grew larger", False),  # a presupposition
        ("event", "appeared", "disappeared", False),  # "appeared" of what disappeared
        ("light", "brighter", "darker", True),
        ("light", "brighter", "cooler", False),  # another axis: reads as made up
        ("light", "warmer", "cooler", True),
        ("tone", "warm", "faint", False),
    ],
)
def test_slot_gaps_and_synonyms(kind, truth, other, false):
    assert bool(why_false(kind, truth, other)) is false


def test_negatives_are_well_formed_real_words_and_places_of_the_grammar():
    rows = _questions(_build(_pairs(1)))
    places = set(GROUPS["place"])
    for row in rows:
        for negative in row["negatives"]:
            for slot in find_slots(negative["text"]):
                if slot.kind == "place":
                    assert slot.value.lower() in places
            if negative["slot"] == "quoted":
                quoted = re.findall(r"'([^']+)'", negative["text"])
                truths = {
                    w for r in rows for w in re.findall(r"'([^']+)'", r["options"][r["answer"]])
                }
                assert all(q.lower() in WORDS or q in truths for q in quoted)
            assert not re.search(r"\bin the (?:top|bottom)\b(?! (?:left|right))", negative["text"])


def test_no_source_photo_is_in_two_splits():
    pairs = _pairs(4)
    built = _build(pairs)
    split_of_source: dict[str, set[str]] = {}
    for record in built.records:
        split_of_source.setdefault(record["content_key"].split(":")[0], set()).add(record["split"])
    assert all(len(s) == 1 for s in split_of_source.values())
    assert {s for splits in split_of_source.values() for s in splits} == {"train", "val", "test"}


def test_a_re_encoded_copy_of_a_photo_is_the_same_source():
    rng = np.random.default_rng(1)
    pixels = (rng.random((64, 96, 3)) * 255).astype(np.uint8)
    pixels = np.asarray(Image.fromarray(pixels).resize((192, 128)))

    def encoded(fmt: str, **kw) -> bytes:
        out = io.BytesIO()
        Image.fromarray(pixels).save(out, format=fmt, **kw)
        return out.getvalue()

    other = (rng.random((128, 192, 3)) * 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(other).save(buf, format="PNG")
    items = [
        (1, "sha-png", difference_hash(encoded("PNG"))),
        (2, "sha-jpeg", difference_hash(encoded("JPEG", quality=85))),
        (3, "sha-other", difference_hash(buf.getvalue())),
        (4, "sha-png", None),
    ]
    groups = source_groups(items)
    assert groups[1] == groups[2] == groups[4] != groups[3]
    assert difference_hash(b"not an image") is None


def test_split_assign_keeps_every_item_of_a_source_together_and_released_items_in_place():
    items = [SplitItem(i, "object", None, f"c{i}", source=f"photo{i % 7}") for i in range(70)]
    first = split_assign(items, SplitPlan(seed=0, val_fraction=0.2, test_fraction=0.2))
    by_source: dict[str, set[str]] = {}
    for item in items:
        by_source.setdefault(item.source, set()).add(first.of[item.key])
    assert all(len(s) == 1 for s in by_source.values())
    more = items + [
        SplitItem(100 + i, "object", None, f"n{i}", source=f"new{i}") for i in range(30)
    ]
    more += [SplitItem(200, "object", None, "late", source="photo3")]
    second = split_assign(
        more, SplitPlan(seed=0, val_fraction=0.2, test_fraction=0.2), previous=first.of
    )
    assert all(second.of[i.key] == first.of[i.key] for i in items)
    assert second.of[200] == first.of[3]  # a new pair of a released source joins its split


def test_few_sources_of_distinct_categories_still_make_val_and_test():
    """The default demo: 17 pairs from 4 photos, each photo's pairs mostly of one category.
    Kept one per category in train, no source could be held out; pooled, two are."""
    categories = ["appear_disappear", "regional_colour", "position", "ocr_text"]
    items = [
        SplitItem(i, categories[i % 4], "hard", f"c{i}", source=f"photo{i % 4}") for i in range(17)
    ]
    splits = split_assign(items, SplitPlan(seed=0, val_fraction=0.1, test_fraction=0.25))

    held_out = {splits.of[i.key] for i in items}
    assert {"train", "val", "test"} <= held_out
    assert all(len({splits.of[i.key] for i in items if i.source == s}) == 1 for s in
               {i.source for i in items})  # fmt: skip
    assert any("split without regard to category" in n for n in splits.notes)


def _previous(built) -> Previous:
    rows = _questions(built)
    return Previous(
        splits={r["pair_id"]: r["split"] for r in built.records},
        questions={
            r["pair_id"]: {"truth": r["options"][r["answer"]], "row": r}
            for r in rows
            if not r["control"] and r["split"] != SWAPPED_SPLIT
        },
        controls={r.get("control_of") or r["pair_id"]: r for r in rows if r["control"]},
    )


def test_a_pairs_split_and_negatives_are_unchanged_from_v1_to_v2():
    options = ReleaseOptions(control_rate=0.2)
    v1_pairs = _pairs(2)
    v1 = _build(v1_pairs, options=options)
    v2 = _build(_pairs(4), previous=_previous(v1), options=options)
    split2 = {r["pair_id"]: r["split"] for r in v2.records}
    assert all(split2[r["pair_id"]] == r["split"] for r in v1.records)
    rows2 = {(r["pair_id"], r["control"]): r for r in _questions(v2)}
    made2 = {r["control_of"]: r for r in _questions(v2) if r.get("control_of")}
    kept = ("question", "options", "answer", "negatives", "twin_group", "split")
    for row in _questions(v1):
        if row.get("control_of"):  # a made control: its question and the image it copies
            again = made2[row["control_of"]]
            assert {k: again[k] for k in kept} == {k: row[k] for k in kept}
            assert v2.control_files[again["image_b"]] == v1.control_files[row["image_b"]]
            continue
        assert rows2[(row["pair_id"], row["control"])] == row
    # Every question v1 published (a pair left out for want of negatives has none) is kept.
    published = [r for r in _questions(v1) if not r["control"]]
    assert v2.report["questions"]["negatives"]["published"] == len(published) > 0


def test_control_pairs_ask_with_their_pairs_options_and_no_difference_is_the_truth():
    built = _build(_pairs(3), options=ReleaseOptions(control_rate=0.1))
    rows = _questions(built)
    controls = [r for r in rows if r["control"]]
    assert controls and {r["split"] for r in controls} == {"train", "val", "test"}
    by_group = {}
    for r in rows:
        if not r["control"] and r["twin_group"]:
            by_group[r["twin_group"]] = r
    for control in controls:
        assert control["options"][control["answer"]] == NO_DIFFERENCE
        assert control["options"] == by_group[control["twin_group"]]["options"]
        assert all(n["why"] == WHY for n in control["negatives"])
    assert built.report["text_baselines"]["chance"] == 0.25


def test_an_accepted_no_difference_answer_is_a_control_never_a_change():
    pairs = _pairs(1)
    pairs.append(
        _pair(99, "coins0", "appear_disappear", "There is no difference between the two images.")
    )
    built = _build(pairs, options=ReleaseOptions(control_rate=0.1))
    record = next(r for r in json.loads(built.files["benchmark.json"]) if r["pair_id"] == 99)
    assert record["changes"] == [] and record["control"] is True
    own = [r for r in _questions(built) if r["pair_id"] == 99]
    assert own and own[0]["image_b"] == "images/99_b.png"
    assert own[0]["options"][own[0]["answer"]] == NO_DIFFERENCE


def test_the_swapped_copy_turns_every_description_around_from_b():
    built = _build(_pairs(3), order_swap=True)
    rows = _questions(built)
    normal = {r["id"]: r for r in rows if r["split"] == "test"}
    swapped = [r for r in rows if r["split"] == SWAPPED_SPLIT]
    assert swapped
    for row in swapped:
        before = normal[row["swap_of"]]
        assert (row["image_a"], row["image_b"]) == (before["image_b"], before["image_a"])
        assert row["answer"] == before["answer"]
        truth = row["options"][row["answer"]]
        assert truth != before["options"][before["answer"]]
        if "moved" in truth:  # the start is where B shows it, the heading reversed
            assert truth.startswith("The galaxy on the left moved")
    records = [r for r in json.loads(built.files["benchmark.json"]) if r["split"] == SWAPPED_SPLIT]
    assert records and all(
        r["swap_of"].endswith(r["id"].removesuffix("-swapped")[-3:]) for r in records
    )


def test_the_card_counts_annotators_from_the_annotations_and_names_simulated_ones():
    pairs = _pairs(1)
    rules = {
        "tier_rule": "strict",
        "overlap": 1,
        "annotators": 2,
        "simulated_annotators": True,
    }
    meta = ReleaseMeta("p", "P", "v1", 1, META.categories, rules=rules)
    text = release_files(pairs, SplitPlan(seed=0), meta).files["README.md"].decode()
    # Every pair has two annotations although the overlap is now 1.
    assert "two simulated annotators (programs answering from the known edits, not people)" in text
    assert "one person" not in text and "2 distinct simulated annotators" in text
    assert "people working blind" not in text


def test_a_taxonomy_category_without_pairs_is_a_coverage_warning():
    meta = ReleaseMeta(
        "p",
        "P",
        "v1",
        1,
        ({"slug": "motion", "name": "Motion"}, {"slug": "position", "name": "Position"}),
    )
    built = release_files(_pairs(1), SplitPlan(seed=0), meta)
    assert any("“Motion” has no pairs" in w for w in built.report["warnings"])
    assert "“Motion” has no pairs" in built.files["README.md"].decode()


def test_twin_groups_never_span_two_categories():
    pairs = _pairs(1)
    pairs += [
        _pair(51, "cat", "noise_resolution", "The fur became noisy."),
        _pair(52, "cat", "noise_resolution", "The fur became pixelated."),
        _pair(53, "cat", "texture", "The fur became blurred."),
    ]
    rows = _questions(_build(pairs, plan=SplitPlan(seed=0, val_fraction=0, test_fraction=0)))
    categories: dict[str, set[str]] = {}
    for row in rows:
        if row["twin_group"]:
            categories.setdefault(row["twin_group"], set()).add(row["category"])
    assert categories and all(len(c) == 1 for c in categories.values())
    blurred = next(r for r in rows if r["pair_id"] == 53)
    assert blurred["twin_group"] is None  # a question shows its category: it would tell


def test_a_repeated_truth_joins_the_group_that_has_it_and_the_group_still_needs_the_images():
    pairs = [_pair(i + 1, "astro", c, d) for i, (_, c, d) in enumerate(PAIRS[3:6])]
    pairs.append(_pair(9, "astro", "regional_colour", PAIRS[3][2]))  # red again
    rows = _questions(_build(pairs, plan=SplitPlan(seed=0, val_fraction=0, test_fraction=0)))
    assert len({r["twin_group"] for r in rows}) == 1
    assert len({json.dumps(r["options"], sort_keys=True) for r in rows}) == 1
    assert (
        group_scores(rows, [1.0 if r["answer"] == rows[0]["answer"] else 0.0 for r in rows])[
            "group_accuracy"
        ]
        == 0.0
    )


def _moves(rows: list[str]) -> list:
    from pairdiff.release.twins import Member

    place = {"br": "at the bottom right", "t": "at the top", "tr": "at the top right"}
    place |= {"c": "in the centre", "l": "on the left"}
    out = []
    for i, row in enumerate(rows):
        where, way = row.split("|")
        text = f"The galaxy {place[where]} moved {way}."
        out.append(Member(i, "val", "position", "", text, str(i)))
    return out


def test_the_grouping_that_leaves_fewest_members_out_wins():
    from pairdiff.release.twins import twin_groups

    # Each move has two slots (place and heading): grouping by place first stranded two of
    # these (the galaxies of a 400-pair demo release), grouping by heading first none.
    ways = ("to the left", "to the right", "up")
    rows = ["br|to the left", "br|up"]
    rows += [f"{w}|{d}" for w in ("t", "tr", "l") for d in ways for _ in range(2)]
    rows += [f"{w}|{d}" for w in ("t", "c") for d in ways]
    members = _moves(rows)
    groups = twin_groups(members)
    assert sum(len(g.members) for g in groups) == len(members)
    for g in groups:
        texts = list(dict.fromkeys(g.texts))
        assert len(texts) >= 2 and len(g.members) <= 2 * len(texts)


def test_four_different_truths_make_two_groups_of_two_not_three_and_a_single():
    from pairdiff.release.twins import twin_groups

    members = _moves(["t|to the left", "t|to the right", "t|up", "t|down"])
    groups = twin_groups(members)
    assert sorted(len(g.members) for g in groups) == [2, 2]
