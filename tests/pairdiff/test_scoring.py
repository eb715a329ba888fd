"""Scoring a model against a release: Grounded F1, mIoU, mAP, hallucination rate, MCQ."""

import json
import re

import pytest

from pairdiff.geometry import Box
from pairdiff.labels import label_normaliser
from pairdiff.scoring.change import Change
from pairdiff.scoring.cocomap import side_map
from pairdiff.scoring.evaluate import evaluate
from pairdiff.scoring.grounded import Tally, record_tally
from pairdiff.scoring.own_answers import jsonl, own_answer_lines
from pairdiff.scoring.text import text_scorer
from tests.pairdiff import scoring_data

WORDS = text_scorer("words")


def _score(lines, *, coords="1000", recs=None, qs=None, scorer=WORDS):
    recs = recs if recs is not None else scoring_data.records()
    qs = qs if qs is not None else scoring_data.questions(recs)
    data = lines if isinstance(lines, bytes) else jsonl(lines)
    return evaluate(records=recs, questions=qs, data=data, coords=coords, scorer=scorer)


@pytest.mark.parametrize("coords", ["1000", "pixel", "unit"])
def test_the_release_s_own_answers_score_exactly_one_on_every_metric(coords):
    recs = scoring_data.records()
    qs = scoring_data.questions(recs, rotated=True)
    result = _score(own_answer_lines(recs, qs, coords=coords), coords=coords, qs=qs)
    g, q = result["grounding"], result["questions"]
    assert (g["grounded_f1"], g["precision"], g["recall"], g["miou"]) == (1.0, 1.0, 1.0, 1.0)
    assert g["map"] == {"a": 1.0, "b": 1.0, "mean": 1.0, "how": g["map"]["how"]}
    assert g["hallucination_rate"] == 0.0
    assert (q["accuracy"], q["circular_accuracy"]) == (1.0, 1.0)
    assert result["unparseable"] == {"count": 0, "rate": 0.0, "lines": []}
    assert all(cell["grounded_f1"] == 1.0 for cell in g["by_category"].values())
    assert all(cell["accuracy"] == 1.0 for cell in q["by_category"].values())
    assert result["text_metric"]["name"] == "words" and result["text_metric"]["threshold"] == 0.5


def _tally(truth, pred, *, similar=True):
    return record_tally(
        truth,
        pred,
        similarity=lambda i, j: 1.0 if similar else 0.0,
        threshold=0.5,
        normalise=label_normaliser(),
    )


def _c(a, b, ea="car", eb="car"):
    return Change(
        boxes_a=tuple(Box(*x) for x in a), boxes_b=tuple(Box(*x) for x in b), entity_a=ea,
        entity_b=eb,
    )  # fmt: skip


SQ = [[0, 0, 100, 100]]
# (case, truth, prediction, similar, true positives, hallucinated, IoU sum) — hand-computed.
CASES = [
    ("identical", _c(SQ, SQ), _c(SQ, SQ), True, 1, 0, 2.0),
    # [10,0,110,100] ∩ [0,0,100,100] = 90·100 = 9000; union 11000 → 0.8182 on A
    ("small shift still counts", _c(SQ, SQ), _c([[10, 0, 110, 100]], SQ), True, 1, 0, 1 + 9 / 11),
    # [50,0,150,100]: 5000 / 15000 = 1/3 < 0.5
    ("shifted box", _c(SQ, SQ), _c([[50, 0, 150, 100]], SQ), True, 0, 0, 1 + 1 / 3),
    (
        "box elsewhere hallucinates",
        _c(SQ, SQ),
        _c([[200, 200, 300, 300]], [[200, 200, 300, 300]]),
        True,
        0,
        1,
        0.0,
    ),  # fmt: skip
    ("wrong label", _c(SQ, SQ), _c(SQ, SQ, eb="bus"), True, 0, 0, 2.0),
    ("plural label normalised", _c(SQ, SQ), _c(SQ, SQ, ea="Cars", eb="the car"), True, 1, 0, 2.0),
    ("description below threshold", _c(SQ, SQ), _c(SQ, SQ), False, 0, 0, 2.0),
    # added object: A absent. Swapped sides put the box on A, nothing on B.
    ("swapped sides", _c([], SQ, ea=""), _c(SQ, [], eb=""), True, 0, 1, 0.0),
    ("box on the absent side", _c([], SQ, ea=""), _c(SQ, SQ), True, 0, 1, 1.0),
    ("absent side missed", _c(SQ, SQ), _c([], SQ, ea=""), True, 0, 0, 1.0),
    ("absent sides both absent", _c([], SQ, ea=""), _c([], SQ, ea="whatever"), True, 1, 0, 1.0),
    # count: two truth boxes on B, one predicted → B side has an unmatched box: IoU 1/2.
    (
        "one of two boxes",
        _c(SQ, [[0, 0, 10, 10], [20, 0, 30, 10]]),
        _c(SQ, [[0, 0, 10, 10]]),
        True,
        0,
        0,
        1.5,
    ),  # fmt: skip
]


@pytest.mark.parametrize(
    ("truth", "pred", "similar", "tp", "hallucinated", "iou_sum"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_one_change_against_one_prediction(truth, pred, similar, tp, hallucinated, iou_sum):
    tally = _tally([truth], [pred], similar=similar)
    assert (tally.true_positives, tally.hallucinated) == (tp, hallucinated)
    assert tally.iou_sum == pytest.approx(iou_sum)


def test_changes_are_paired_one_to_one_by_optimal_assignment():
    left, right = _c([[0, 0, 100, 100]], []), _c([[200, 0, 300, 100]], [])
    # Listed in the other order; each prediction can serve one truth only.
    tally = _tally([left, right], [right, left, left])
    assert (tally.truths, tally.predicted, tally.true_positives) == (2, 3, 2)
    assert tally.hallucinated == 1  # the third prediction has no truth left
    assert tally.as_json()["precision"] == round(2 / 3, 4)
    assert tally.as_json()["recall"] == 1.0
    assert tally.as_json()["grounded_f1"] == 0.8  # 2·(2/3)·1 / (2/3 + 1)


def test_no_prediction_is_recall_zero_and_not_a_hallucination():
    tally = _tally([_c(SQ, SQ)], [])
    assert tally.as_json() | {} == {
        "grounded_f1": 0.0, "precision": None, "recall": 0.0, "miou": 0.0,
        "hallucination_rate": 0.0, "truth_changes": 1, "predicted_changes": 0,
        "true_positives": 0, "hallucinated_changes": 0,
    }  # fmt: skip


def test_tally_f1_from_counts():
    tally = Tally(truths=4, predicted=5, true_positives=3, hallucinated=1, iou_sum=3, iou_sides=6)
    got = tally.as_json()
    # P = 3/5, R = 3/4, F1 = 2·0.6·0.75/1.35 = 0.6667
    assert (got["precision"], got["recall"], got["grounded_f1"]) == (0.6, 0.75, 0.6667)
    assert (got["miou"], got["hallucination_rate"]) == (0.5, 0.2)


def test_map_by_pycocotools_hand_computed():
    truth = [[Box(0, 0, 100, 100)], []]
    # IoU 0.72 passes the thresholds .50 … .70 (5 of 10) → AP 0.5.
    assert side_map(truth, [[(Box(0, 0, 100, 72), 1.0)], []]) == 0.5
    # A box on an image without truth (an absent side) is a false positive ranked first.
    assert side_map(truth, [[(Box(0, 0, 100, 100), 0.5)], [(Box(0, 0, 9, 9), 0.9)]]) < 1.0
    assert side_map(truth, [[], []]) == 0.0
    assert side_map([[], []], [[(Box(0, 0, 9, 9), 1.0)], []]) is None


def _lines(coords="1000"):
    recs = scoring_data.records()
    return own_answer_lines(recs, scoring_data.questions(recs), coords=coords)


def _with(lines, index, **changes):
    lines = [dict(x) for x in lines]
    first = dict(lines[index]["changes"][0]) | changes
    lines[index] = {**lines[index], "changes": [first]}
    return lines


def test_each_kind_of_error_lowers_the_right_metric():
    perfect = _score(_lines())["grounding"]
    shifted = _score(_with(_lines(), 0, boxes_a=[[300, 200, 500, 400]]))["grounding"]
    assert shifted["grounded_f1"] < 1 and shifted["miou"] < 1 and shifted["map"]["a"] < 1
    # A's box misses; B's still marks the change, so the change is no hallucination.
    assert shifted["map"]["b"] == 1.0 and shifted["hallucination_rate"] == 0.0
    gone = _score(_with(_lines(), 0, boxes_a=[[300, 200, 500, 400]], boxes_b=[[0, 0, 50, 50]]))
    assert gone["grounding"]["hallucination_rate"] == 0.25  # 1 of 4 predicted changes
    label = _score(_with(_lines(), 0, entity_b="truck"))["grounding"]
    assert label["grounded_f1"] < 1 and label["miou"] == 1.0 and label["map"]["mean"] == 1.0
    # r2 adds a hat on B; swapping its sides boxes A, where the truth is absent.
    r2 = _lines()[1]["changes"][0]
    swapped = _score(_with(_lines(), 1, boxes_a=r2["boxes_b"], boxes_b=[]))["grounding"]
    assert swapped["grounded_f1"] < 1 and swapped["hallucination_rate"] == 0.25
    assert swapped["map"]["a"] < 1 and swapped["map"]["b"] < 1
    absent = _score(_with(_lines(), 2, boxes_b=[[500, 250, 900, 480]]))["grounding"]
    assert absent["grounded_f1"] < 1 and absent["hallucination_rate"] == 0.25
    assert absent["miou"] == 1.0
    assert perfect["by_category"]["object"]["grounded_f1"] == 1.0
    assert absent["by_category"]["object"]["grounded_f1"] == 0.5  # 1 TP of 2 (P = R = 1/2)
    assert absent["by_category"]["attribute"]["grounded_f1"] == 1.0


def test_garbage_lines_are_unparseable_by_line_number_never_guessed():
    lines = jsonl(_lines()).decode().splitlines()
    lines[0] = "{not json"
    lines[4] = json.dumps({"id": "r1", "answer": "E"})
    lines.insert(2, json.dumps({"id": "nobody", "answer": "A"}))
    data = ("\n".join(lines) + "\n\n").encode()
    result = _score(data)
    assert result["lines"] == 9
    assert [x["line"] for x in result["unparseable"]["lines"]] == [1, 3, 6]
    assert "not JSON" in result["unparseable"]["lines"][0]["reason"]
    reason = result["unparseable"]["lines"][1]["reason"]
    assert reason == "no question of the release has id 'nobody'"
    assert result["unparseable"]["rate"] == round(3 / 9, 4)
    g, q = result["grounding"], result["questions"]
    assert g["missing"] == 1 and g["recall"] == 0.75  # record r1 unreadable → no prediction
    assert q["missing"] == 1 and q["accuracy"] == 0.75  # r1's answer unreadable → wrong


def test_a_second_line_for_the_same_id_is_unparseable():
    lines = _lines()
    result = _score([*lines, lines[0]])
    assert result["unparseable"]["lines"] == [
        {"line": 9, "reason": "a second record for id 'r1' (first on line 1)"}
    ]


@pytest.mark.parametrize(
    ("coords", "box", "message"),
    [
        ("unit", [0.1, 0.1, 1.5, 0.4], "does not fit --coords unit"),
        ("1000", [10, 10, 1500, 400], "does not fit --coords 1000"),
        ("pixel", [10, 10, 990, 400], "does not fit --coords pixel (800×400 pixels)"),
        ("1000", [-11, 10, 500, 400], "does not fit --coords 1000"),
    ],
)
def test_a_coordinate_outside_the_declared_space_refuses_the_file(coords, box, message):
    from pairdiff.scoring.predictions import PredictionsRefused

    with pytest.raises(PredictionsRefused, match="line 1: .*" + re.escape(message)):
        _score(_with(_lines(), 0, boxes_b=[box]), coords=coords)


@pytest.mark.parametrize("coords", ["1000", "pixel"])
def test_unit_boxes_declared_as_another_space_are_refused(coords):
    from pairdiff.scoring.predictions import PredictionsRefused

    with pytest.raises(PredictionsRefused, match="use --coords unit"):
        _score(_lines("unit"), coords=coords)


def test_a_file_with_no_readable_line_is_refused():
    from pairdiff.scoring.predictions import PredictionsRefused

    with pytest.raises(PredictionsRefused, match=r"no line .* could be read \(line 1: not JSON"):
        _score(b"garbage\n{]\n")


def test_a_number_past_python_s_digit_limit_is_an_unparseable_line_not_a_crash():
    # json.loads raises a plain ValueError (no .msg, no .colno) for an over-long integer.
    lines = jsonl(_lines()).decode().splitlines()
    lines[0] = "1" * 5000
    result = _score(("\n".join(lines) + "\n").encode())
    assert [x["line"] for x in result["unparseable"]["lines"]] == [1]
    assert "not JSON" in result["unparseable"]["lines"][0]["reason"]


def test_raw_text_is_read_by_the_project_s_parser():
    recs = scoring_data.records()
    qs = scoring_data.questions(recs)
    r1 = recs[0]
    tokens = (
        f"car {r1['anchors']} The car turned from white to blue. "
        f"{json.dumps(r1['boxes_a'])} {json.dumps(r1['boxes_b'])}"
    )
    as_json = json.dumps({"changes": [_lines()[1]["changes"][0]]})
    lines = [
        {"id": "r1", "text": tokens},
        {"id": "r2", "text": f"```json\n{as_json}\n```"},
        {"id": "r3", "text": "I cannot tell."},
        {"id": "r1", "text": "Answer: " + qs[0]["answer"]},
        {"id": "r2", "text": qs[1]["options"][qs[1]["answer"]]},
        {"id": "r3", "text": "A or B", "task": "question"},
    ]
    result = _score(lines, recs=recs, qs=qs)
    assert [x["line"] for x in result["unparseable"]["lines"]] == [3, 6]
    g = result["grounding"]
    assert (g["true_positives"], g["answered"]) == (2, 2)
    assert result["questions"]["correct"] == 2


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("B", "B"),
        ("(C)", "C"),
        ("The answer is D.", "D"),
        ("answer: a", "A"),
        ("B)", "B"),
        ("B. y", "B"),
        ("z", "C"),
    ],
)
def test_a_single_letter_reads_as_that_option(text, letter):
    from pairdiff.scoring.letters import read_letter

    assert read_letter(text, {"A": "x", "B": "y", "C": "z", "D": "w"}) == letter


@pytest.mark.parametrize("text", ["A or B", "", "I think it changed", "B. something else"])
def test_an_ambiguous_answer_is_unreadable(text):
    from pairdiff.scoring.letters import read_letter

    assert read_letter(text, {"A": "x", "B": "y", "C": "z", "D": "w"}) is None


def test_circular_accuracy_needs_every_rotation_right():
    recs = scoring_data.records()
    qs = scoring_data.questions(recs, rotated=True)
    answers = [{"id": q["id"], "answer": q["answer"]} for q in qs]
    wrong = next(a for a in answers if a["id"] == "r2-r1")
    wrong["answer"] = "A" if wrong["answer"] != "A" else "B"
    result = _score(answers, recs=recs, qs=qs)["questions"]
    # Plain accuracy is over the questions themselves; a wrong rotation costs circular only.
    assert result["accuracy"] == 1.0 and result["circular_accuracy"] == 0.75
    assert result["by_category"]["object"] == {"accuracy": 1.0, "questions": 2, "correct": 2}
    assert _score(answers[:2], recs=recs)["questions"]["circular_accuracy"] is None


def test_a_split_whose_every_line_is_garbage_is_still_scored():
    train = scoring_data.records("train")
    test = [dict(r, id=f"t{r['id']}") for r in scoring_data.records("test")]
    lines = own_answer_lines(train, [])
    lines += [{"id": r["id"], "text": "no idea"} for r in test]
    result = _score(lines, recs=train + test, qs=[])
    g = result["grounding"]
    assert g["splits"] == ["test", "train"] and g["records"] == 8
    assert (g["recall"], g["missing"], result["unparseable"]["count"]) == (0.5, 4, 4)
