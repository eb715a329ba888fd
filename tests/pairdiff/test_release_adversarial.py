"""Questions outside twin groups: other pairs' truths as negatives, chosen by an iterated
text-only adversary; well-formed, false negatives only (issue 25)."""

from __future__ import annotations

import re

from pairdiff.release.adversarial import false_of, other_truths, template
from pairdiff.release.question_set import question_set
from pairdiff.release.records import benchmark_record
from pairdiff.release.slots import find_slots
from tests.pairdiff.test_release_question_set import _pair


def _records(rows: list[tuple[str, str, str, str]]) -> list[dict]:
    """(split, category, description, photo) → records; the photo is the content key's head."""
    out = []
    for i, (split, category, description, photo) in enumerate(rows, start=1):
        pair = _pair(i, category, description)
        record = benchmark_record(pair, split)
        record["content_key"] = f"{photo}:{i}"
        out.append(record)
    return out


def test_other_truths_are_false_by_a_slot_of_the_same_template_and_category():
    records = _records(
        [
            ("test", "lighting", "A bright light now falls on the brick wall.", "p1"),
            ("train", "lighting", "A shadow now falls on the brick wall.", "p2"),
            ("train", "lighting", "A glare now falls on the brick wall.", "p3"),  # a synonym
            ("train", "texture", "A shadow now falls on the brick wall.", "p4"),  # category
            ("train", "lighting", "A shadow now falls on the stained tissue.", "p5"),
            ("train", "lighting", "A bright light now falls on the gravel.", "p6"),
            ("train", "lighting", "The whole image became darker.", "p7"),  # other kinds
        ]
    )
    found: dict = {}
    negatives = other_truths(records[0], records, found)
    by_text = {n["text"]: n["made"] for n in negatives}
    assert by_text["A shadow now falls on the brick wall."] == "other_truth"
    assert "A glare now falls on the brick wall." not in by_text  # glare is bright light
    # Another photo's truth with the same kinds of slot, one false: said in other words.
    assert by_text["A shadow now falls on the stained tissue."] == "category_truth"
    # The same value said of a thing this photo lacks: the value no longer tells the truth.
    assert by_text["A bright light now falls on the gravel."] == "category_truth"
    assert "The whole image became darker." not in by_text  # may be true of a bright light
    truth = records[0]["description"]
    for n in negatives:
        if n["made"] == "other_truth":
            assert false_of(truth, n["text"], found)
            assert template(n["text"], find_slots(n["text"])) == template(truth, find_slots(truth))


def test_no_event_and_no_other_axis_makes_a_negative():
    found: dict = {}
    assert not false_of(
        "The galaxy on the left disappeared.", "The galaxy on the left appeared.", found
    )
    assert not false_of("The whole image became brighter.", "The whole image became cooler.", found)
    assert false_of("The whole image became brighter.", "The whole image became darker.", found)


def _galaxies() -> list[dict]:
    places = ["on the left", "on the right", "in the centre", "at the top", "at the bottom"]
    rows = []
    for i, place in enumerate(places * 4):
        split = ("train", "val")[i % 2]
        rows.append((split, "appear_disappear", f"The galaxy {place} disappeared.", f"g{i}"))
    # Alone in its split: no twin group can take it (groups of one split only).
    rows.append(("test", "appear_disappear", "The galaxy on the left disappeared.", "g99"))
    return _records(rows)


def test_a_question_outside_groups_takes_other_pairs_truths_and_never_a_made_up_event():
    records = _galaxies()
    result = question_set(records, seed=3, verified={}, edited={})
    outside = [r for r in result.rows if not r["twin_group"]]
    assert outside  # the test split's one galaxy
    truths = {r["description"] for r in records}
    for row in result.rows:
        for n in row["negatives"]:
            assert not re.search(r"\bappeared", n["text"])  # what disappeared never "appeared"
            assert n["made"] != "fallback"
    for row in outside:
        made = {n["made"] for n in row["negatives"]}
        assert made == {"other_truth"}, row["negatives"]
        assert all(n["text"] in truths for n in row["negatives"])  # true of another pair
        truth = row["options"][row["answer"]]
        assert all(false_of(truth, n["text"], {}) for n in row["negatives"])


def test_the_adversarial_filter_iterates_and_reports_its_rounds():
    result = question_set(_galaxies(), seed=3, verified={}, edited={})
    report = result.adversarial
    assert report["questions"] == sum(1 for r in result.rows if not r["twin_group"])
    assert 1 <= len(report["rounds"]) <= 5
    assert report["made"].get("other_truth", 0) >= 2


def test_a_question_with_nothing_better_keeps_the_fallback_negatives_and_says_so():
    """Nothing else in the release, and no slot to change but what happened: the question is
    still asked (no question lost), with fallback negatives, counted as such — the sentence's
    thing swapped for another (its label here, "thing", names none: the subject is found)."""
    records = _records([("test", "appear_disappear", "The round mission patch disappeared.", "m")])
    result = question_set(records, seed=1, verified={}, edited={})
    [row] = result.rows
    assert not result.left_out
    assert result.sources["fallback"] == 1 and result.adversarial["made"] == {"fallback": 2}
    for n in row["negatives"]:
        assert re.fullmatch(r"The \w+ disappeared\.", n["text"]) and n["slot"] == "entity"


def test_a_rewrite_or_another_truth_comes_before_a_fallback():
    records = _records(
        [
            ("test", "attribute", "The patch changed from red to blue.", "m"),
            ("test", "appear_disappear", "The round mission patch disappeared.", "n"),
        ]
    )
    result = question_set(records, seed=1, verified={}, edited={})
    assert result.sources == {"derived": 1, "fallback": 1}  # fallbacks only where nothing else


def test_a_group_of_two_takes_a_third_truth_from_another_split():
    records = _records(
        [
            ("test", "lighting", "The whole image became brighter.", "a"),
            ("test", "lighting", "The whole image became darker.", "a2"),
            ("train", "lighting", "A shadow now falls on the brick wall.", "b"),
            ("train", "lighting", "A bright light now falls on the brick wall.", "c"),
        ]
    )
    result = question_set(records, seed=1, verified={}, edited={})
    held = [r for r in result.rows if r["split"] == "test"]
    assert len(held) == 2 and held[0]["twin_group"] == held[1]["twin_group"] is not None
    assert held[0]["options"] == held[1]["options"]
    assert held[0]["answer"] != held[1]["answer"]
    # The third: a local edit of another photo, false of both (never "cooler" or "warmer").
    third = set(held[0]["options"].values()) - {r["description"] for r in records[:2]}
    assert third & {r["description"] for r in records[2:]}
    assert not any("cooler" in t or "warmer" in t for t in held[0]["options"].values())


def test_a_whole_image_truth_is_no_thing_another_photo_lacks():
    records = _records(
        [
            ("test", "noise_resolution", "The gravel became noisy.", "p1"),
            ("test", "noise_resolution", "The gravel became pixelated.", "p1"),
            ("train", "noise_resolution", "The whole image became grainy.", "p2"),
            ("train", "noise_resolution", "The whole image became pixelated.", "p3"),
            ("train", "noise_resolution", "The sky became noisy.", "p4"),
        ]
    )
    found = {n["text"]: n["made"] for n in other_truths(records[0], records, {})}
    # Grainy is noisy: of the whole image it may be true of noisy gravel filling the photo.
    assert "The whole image became grainy." not in found
    assert found["The whole image became pixelated."] == "category_truth"  # false by its slot
    assert found["The sky became noisy."] == "category_truth"  # a thing the gravel lacks
    # A twin group of the two gravel pairs takes a third option false of both.
    rows = question_set(records, seed=0, verified={}, edited={}).rows
    group = [r for r in rows if r["pair_id"] in (1, 2)]
    assert group[0]["twin_group"] and group[0]["options"] == group[1]["options"]
    assert "The whole image became grainy." not in group[0]["options"].values()
    # The third option is another photo's truth, and says so (not "the same photo").
    for row in group:
        [third] = [n for n in row["negatives"] if n["made"] != "twin"]
        assert third["made"] == "other_truth" and "same photo" not in third["why"]
        assert third["slot"] != "effect" or row["pair_id"] == 2  # the whole sentence, of 1
