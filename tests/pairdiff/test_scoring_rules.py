"""Scores that mean what the papers mean: the slot-aware description rule, tolerant and precise
input, circular and swapped-order scores, MinCU's rule, unreadable lines (issue #26)."""

import json

import pytest

from pairdiff.geometry import Frame
from pairdiff.release.circular import circular_rows, rotation_id
from pairdiff.release.question_set import question_set
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.records import ReleasePair, benchmark_record
from pairdiff.scoring.evaluate import evaluate
from pairdiff.scoring.own_answers import jsonl, own_answer_lines
from pairdiff.scoring.predictions import PredictionsRefused
from pairdiff.scoring.slotmatch import release_labels, slot_similarity
from pairdiff.scoring.text import BertScoreScorer, text_scorer
from pairdiff.text import description_words
from tests.pairdiff import scoring_data

SLOTS = text_scorer()

# One truth per kind of slot a release knows, as the release's own builders write them.
TRUTHS = [
    ("attribute", "The car turned from white to blue.", "car", "car", 1, 1),
    ("object", "A red hat was added to the table.", "", "hat", 0, 1),
    ("object", "The dog on the sofa was removed.", "dog", "", 1, 0),
    ("counting", "Two apples became three apples.", "apple", "apple", 1, 1),
    ("position", "The cup moved to the left.", "cup", "cup", 1, 1),
    ("lighting", "The whole image became brighter.", "image", "image", 1, 1),
    ("noise_resolution", "The whole image became grainy.", "image", "image", 1, 1),
    ("ocr_text", "The text 'OPEN' on the sign changed to 'CLOSED'.", "sign", "sign", 1, 1),
    ("replacement_size", "The bottle became larger.", "bottle", "bottle", 1, 1),
    ("global_colour", "The whole image took on a warm tint.", "image", "image", 1, 1),
    ("motion", "The lamp turned to the right.", "lamp", "lamp", 1, 1),
    ("appear_disappear", "The vase disappeared.", "vase", "", 1, 0),
]  # fmt: skip


def _records(split="test", prefix="r"):
    out = []
    for i, (category, text, entity_a, entity_b, a, b) in enumerate(TRUTHS, start=1):
        change = {"category": category, "description": text, "entity_a": entity_a,
                  "entity_b": entity_b, "boxes_a": [[100, 100, 300, 200]] if a else [],
                  "boxes_b": [[120, 100, 320, 220]] if b else []}  # fmt: skip
        pair = ReleasePair(
            pair_id=i, external_id=f"{prefix}{i}", image_a=f"images/{i}_a.png",
            image_b=f"images/{i}_b.png", frame_a=Frame(1000, 500), frame_b=Frame(800, 400),
            changes=(change,),
        )  # fmt: skip
        out.append(benchmark_record(pair, split))
    return out


def _with_descriptions(records, descriptions):
    lines = own_answer_lines(records, [])
    for line in lines:
        if line["id"] in descriptions:
            line["changes"][0]["description"] = descriptions[line["id"]]
    return lines


def _score(lines, records, *, questions=(), scorer=SLOTS, coords="1000", **more):
    data = lines if isinstance(lines, bytes) else jsonl(lines)
    return evaluate(records=records, questions=list(questions), data=data, coords=coords,
                    scorer=scorer, **more)  # fmt: skip


def _negatives(records):
    """The release's own hard negatives of each record, by record id."""
    made = question_set(records, seed=1, verified={}, edited={})
    ids = {r["pair_id"]: r["id"] for r in records}
    return {
        ids[q["pair_id"]]: [v for k, v in q["options"].items()
                            if k != q["answer"] and v != NO_DIFFERENCE]
        for q in made.rows
    }  # fmt: skip


def test_the_release_s_own_hard_negatives_never_match_with_perfect_boxes_and_entities():
    records = _records()
    negatives = _negatives(records)
    truth = {r["id"]: r["description"] for r in records}
    # A record with no slot to rewrite and no other truth of its kind makes no question (the
    # word-rule negatives read as made up): the rest make one each.
    assert len(negatives) >= len(records) // 2
    # A negative made of the truth's own words only (a template shortening it: "The dog was
    # removed." for "The dog on the sofa was removed.") claims nothing false: it is left out.
    false = {
        key: [
            n for n in found if not set(description_words(n)) <= set(description_words(truth[key]))
        ]
        for key, found in negatives.items()
    }
    for k in (0, 1):
        chosen = {key: found[k] for key, found in false.items() if len(found) > k}
        result = _score(_with_descriptions(records, chosen), records)["grounding"]
        assert result["true_positives"] == len(records) - len(chosen), chosen
        for key in chosen:
            cell = _score(_with_descriptions(records, {key: chosen[key]}), records)["grounding"]
            assert cell["true_positives"] == len(records) - 1, chosen[key]
    # The word-overlap rule, for contrast, counts most of them as right descriptions.
    words = text_scorer("words")
    chosen = {key: found[0] for key, found in false.items()}
    by_words = _score(_with_descriptions(records, chosen), records, scorer=words)["grounding"]
    assert by_words["true_positives"] >= len(records) // 2


def test_the_release_s_own_answers_still_score_one():
    records = _records()
    result = _score(own_answer_lines(records, []), records)
    g = result["grounding"]
    assert (g["grounded_f1"], g["precision"], g["recall"]) == (1.0, 1.0, 1.0)
    assert result["text_metric"]["name"] == "slots"


@pytest.mark.parametrize(
    ("truth", "paraphrase"),
    [
        ("The car turned from white to blue.", "The white car is now blue."),
        ("A red hat was added to the table.", "A red hat appeared on the table."),
        ("Two apples became three apples.", "The two apples are now three apples."),
        ("The cup moved to the left.", "Someone moved the cup to the left."),
        ("The whole image became grainy.", "Everything became grainy."),
        ("The text 'OPEN' on the sign changed to 'CLOSED'.",
         "On the sign, 'OPEN' became 'CLOSED'."),
        ("The vase disappeared.", "The vase vanished from view."),
    ],
)  # fmt: skip
def test_paraphrases_keeping_every_slot_match(truth, paraphrase):
    labels = release_labels(_records())
    assert slot_similarity(truth, paraphrase, labels=labels) >= SLOTS.threshold


@pytest.mark.parametrize(
    ("truth", "prediction"),
    [
        ("The car turned from white to blue.", "The car turned from blue to white."),
        ("A red hat was added to the table.", "A red hat was removed from the table."),
        ("The vase disappeared.", "The vase appeared."),
        ("The whole image became brighter.", "The whole image became noisy."),
        ("The cup moved to the left.", "The cup was replaced."),
    ],
)
def test_a_contradicted_or_missing_slot_never_matches(truth, prediction):
    assert slot_similarity(truth, prediction, labels=release_labels(_records())) == 0.0


def test_noise_for_every_record_scores_nothing_on_lighting():
    records = _records()
    lines = _with_descriptions(records, {r["id"]: "The whole image became noisy." for r in records})
    g = _score(lines, records)["grounding"]
    assert g["by_category"]["lighting"]["grounded_f1"] == 0.0


def _box_lines(records, box_a):
    lines = own_answer_lines(records, [])
    for line in lines:
        for change in line["changes"]:
            if change["boxes_a"]:
                change["boxes_a"] = [box_a]
    return lines


def test_boxes_a_unit_outside_the_frame_are_clipped_and_counted():
    records = _records()
    lines = own_answer_lines(records, [])
    lines[0]["changes"][0]["boxes_a"] = [[-1, 100, 300, 200]]
    lines[3]["changes"][0]["boxes_b"] = [[120, 100, 320, 1001]]
    result = _score(lines, records)
    assert result["clipped_boxes"] == 2 and result["refused"]["count"] == 0
    assert result["unparseable"]["count"] == 0
    assert result["grounding"]["records"] == len(records)


def test_a_few_impossible_lines_are_refused_by_number_and_the_file_is_scored():
    records = _records() + _records(prefix="s")  # 24 records: one refused line is ~4 %
    lines = own_answer_lines(records, [])
    lines[4]["changes"][0]["boxes_a"] = [[100, 100, 2500, 200]]
    result = _score(lines, records)
    assert result["refused"]["count"] == 1 and result["refused"]["lines"][0]["line"] == 5
    assert "does not fit --coords 1000" in result["refused"]["lines"][0]["reason"]
    assert result["unparseable"]["count"] == 1
    assert result["grounding"]["true_positives"] == len(records) - 1


def test_pixel_boxes_beyond_the_thousand_frame_refuse_the_file_naming_the_space():
    records = _records()
    lines = _box_lines(records, [1200, 900, 1900, 1400])
    with pytest.raises(PredictionsRefused, match="look like pixel coordinates"):
        _score(lines, records)


def test_pixel_boxes_inside_the_thousand_frame_are_reported_as_a_probable_mistake():
    records = _records()
    pixel = jsonl(own_answer_lines(records, [], coords="pixel"))
    result = _score(pixel, records, coords="1000")
    check = result["grounding"]["space_check"]
    assert check["probable"] == "pixel" and check["miou_probable"] == 1.0
    assert "probable coordinate-space mistake" in result["warnings"][0]
    right = _score(pixel, records, coords="pixel")
    assert right["warnings"] == [] and "space_check" not in right["grounding"]


def test_a_line_nested_100k_deep_is_one_unparseable_line():
    records = _records()
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    data = jsonl(own_answer_lines(records, [])) + deep + b"\n"
    result = _score(data, records)
    assert result["unparseable"]["count"] == 1
    assert result["unparseable"]["lines"][0]["line"] == len(records) + 1
    assert "nested" in result["unparseable"]["lines"][0]["reason"]
    with pytest.raises(PredictionsRefused, match="no line .* could be read"):
        _score(deep, records)


def test_a_raw_answer_nesting_json_100k_deep_is_one_unparseable_line():
    records = _records()
    deep = json.dumps({"id": "r1", "text": '{"changes": ' + "[" * 100_000 + "]" * 100_000 + "}"})
    result = _score(jsonl(own_answer_lines(records, [])[1:]) + deep.encode() + b"\n", records)
    assert result["unparseable"]["lines"] == [
        {"line": len(records), "reason": "the answer's JSON is nested too deeply to read"}
    ]


def test_an_over_long_line_is_unparseable_and_never_held(monkeypatch):
    from pairdiff.scoring import lines as line_module

    monkeypatch.setattr(line_module, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(line_module.file_lines, "__kwdefaults__", {"max_bytes": 1000})
    records = _records()
    long_line = json.dumps({"id": "r1", "text": "x" * 5000}).encode() + b"\n"
    result = _score(long_line + jsonl(own_answer_lines(records, [])[1:]), records)
    assert result["unparseable"]["lines"][0]["line"] == 1
    assert "over the limit of 1000" in result["unparseable"]["lines"][0]["reason"]


def test_a_line_that_is_not_utf8_is_one_unparseable_line():
    records = _records()
    data = b"\xff\xfe\n" + jsonl(own_answer_lines(records, []))
    result = _score(data, records)
    assert result["unparseable"]["lines"][0] == {
        "line": 1, "reason": "not UTF-8 text (byte 1 of the line)"
    }  # fmt: skip


def test_circular_rows_rotate_every_option_and_move_the_answer():
    recs = scoring_data.records()
    qs = scoring_data.questions(recs)
    rows = list(circular_rows(qs))
    assert len(rows) == 3 * len(qs)
    for q in qs:
        mine = [r for r in rows if r["rotation_of"] == q["id"]]
        assert [r["id"] for r in mine] == [rotation_id(q["id"], s) for s in (1, 2, 3)]
        orders = [tuple(q["options"].values())] + [tuple(r["options"].values()) for r in mine]
        assert len(set(orders)) == 4 and all(sorted(o) == sorted(orders[0]) for o in orders)
        truth = q["options"][q["answer"]]
        assert all(r["options"][r["answer"]] == truth for r in mine)
        assert {r["answer"] for r in mine} | {q["answer"]} == {"A", "B", "C", "D"}


def test_circular_accuracy_beside_plain_accuracy():
    recs = scoring_data.records()
    qs = scoring_data.questions(recs)
    rotations = list(circular_rows(qs))
    always_a = [{"id": q["id"], "answer": "A"} for q in [*qs, *rotations]]
    result = _score(always_a, recs, questions=qs, rotations=rotations)["questions"]
    assert result["accuracy"] == 0.25  # answers at A, B, C, D: one in four
    assert result["circular_accuracy"] == 0.0  # a fixed letter never survives rotation
    perfect = [{"id": q["id"], "answer": q["answer"]} for q in [*qs, *rotations]]
    result = _score(perfect, recs, questions=qs, rotations=rotations)["questions"]
    assert (result["accuracy"], result["circular_accuracy"]) == (1.0, 1.0)
    assert result["circular"]["variants"] == 3 * len(qs)
    plain = [{"id": q["id"], "answer": q["answer"]} for q in qs]
    result = _score(plain, recs, questions=qs, rotations=rotations)["questions"]
    assert result["circular_accuracy"] is None and result["circular"]["variants_answered"] == 0


def _swapped(records):
    """The A/B-swapped copy of records as the questions engineer's split names it."""
    out = []
    for r in records:
        turned = dict(r, id=f"{r['id']}-swap", split="test_swapped", swap_of=r["id"])
        turned["changes"] = [
            dict(c, boxes_a=c["boxes_b"], boxes_b=c["boxes_a"], boxes_a_px=c["boxes_b_px"],
                 boxes_b_px=c["boxes_a_px"], entity_a=c["entity_b"], entity_b=c["entity_a"])
            for c in r["changes"]
        ]  # fmt: skip
        turned["size_a"], turned["size_b"] = r["size_b"], r["size_a"]
        out.append(turned)
    return out


def test_the_swapped_copy_is_scored_beside_the_normal_order_with_the_drop():
    records = _records()
    swapped = _swapped(records[:6])
    everything = records + swapped
    lines = own_answer_lines(records, [])
    # The model ignores the order: it answers the swapped copy as if it were not swapped.
    for s in swapped:
        twin = next(line for line in lines if line["id"] == s["swap_of"])
        lines.append({"id": s["id"], "changes": twin["changes"]})
    result = _score(lines, everything)
    g = result["grounding"]
    assert g["splits"] == ["test"] and g["records"] == len(records) and g["grounded_f1"] == 1.0
    swap = result["order_swap"]["grounding"]
    assert swap["records"] == 6 and swap["normal"]["grounded_f1"] == 1.0
    assert swap["swapped"]["grounded_f1"] < 1.0 and swap["drop"] > 0
    honest = own_answer_lines(everything, [])
    assert _score(honest, everything)["order_swap"]["grounding"]["drop"] == 0.0
    assert _score(own_answer_lines(records, []), records)["order_swap"]["available"] is False


def test_the_mincu_row_says_why_it_is_not_computable():
    records = _records()
    result = _score(own_answer_lines(records, []), records, mincu_unavailable="no model here")
    assert result["grounding"]["mincu"]["computable"] is False
    assert result["grounding"]["mincu"]["why"] == "no model here"


def test_the_mincu_row_names_its_model_when_one_is_configured(monkeypatch):
    seen = []

    def fake_bertscore(self, pairs):
        seen.append(len(pairs))  # the real one loads the folder; here: equal text scores 1
        return [1.0 if a == b else 0.5 for a, b in pairs]

    monkeypatch.setattr(BertScoreScorer, "similarities", fake_bertscore)
    mincu = BertScoreScorer(model_path="/models/roberta-large", num_layers=17)
    records = _records()
    lines = _with_descriptions(records, {"r1": "The car turned from white to red."})
    result = _score(lines, records, mincu=mincu)
    row = result["grounding"]["mincu"]
    assert row["computable"] and row["text_metric"]["model"] == "roberta-large"
    assert row["text_metric"]["threshold"] == 0.85 and row["true_positives"] == len(records) - 1
    assert seen == [len(records)]
