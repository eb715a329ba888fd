"""Questions that need the images, baselines that check it, and records that cannot make one."""

from collections import Counter

import pytest

from pairdiff.geometry import Frame
from pairdiff.release.baselines import (
    NaiveBayes,
    credit,
    similarity_scores,
    text_baselines,
)
from pairdiff.release.build import ReleaseMeta, release_files
from pairdiff.release.question_set import (
    derived_negatives,
    question_problem,
    question_set,
    release_firsts,
)
from pairdiff.release.questions import NO_DIFFERENCE, image_negatives
from pairdiff.release.records import ReleasePair, benchmark_record
from pairdiff.release.slots import find_slots, slot_prior
from pairdiff.release.splits import SplitPlan

DESCRIPTIONS = [
    ("regional_colour", "The round mission patch changed from blue to red."),
    ("appear_disappear", "A galaxy appeared on the right."),
    ("appear_disappear", "The first coin from the left in the second row disappeared."),
    ("position", "The galaxy in the centre moved to the left."),
    ("appear_disappear", "There are now 23 coins instead of 24."),
    ("ocr_text", "The word 'Region-based' changed to 'Graph-based'."),
    ("noise_resolution", "The sky became noisy."),
    ("texture", "The table became blurred."),
    ("lighting", "The whole image became brighter."),
    ("global_colour", "The whole image took on a warm orange tint."),
    ("replacement_size", "The sixth coin from the left in the second row became smaller."),
    ("noise_resolution", "Image B has a lower resolution: 307x307 instead of 512x512 pixels."),
]


def _pair(i: int, category: str, description: str, **agreement) -> ReleasePair:
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
                "boxes_a": [[100 + i, 100, 300 + i, 300]],
                "boxes_b": [[100 + i, 100, 300 + i, 300]],
            },
        ),
        agreement={
            "tiers": ["excellent", "excellent"],
            "annotators": 2,
            "mean_iou": 0.9,
            "decided_by": "agreement",
            **agreement,
        },
        source={"instruction": ""},
        content_key=f"sha-{i}",
    )


META = ReleaseMeta("p", "P", "v1", 1, ({"slug": "object", "name": "Object"},))


def test_a_light_negative_stays_on_the_truths_axis():
    """ "cooler" is no negative of "brighter": another property, which reads as made up."""
    negatives = image_negatives(description="The whole image became brighter.", seed="s") or []
    assert not any(w in n for n in negatives for w in ("warmer", "cooler"))


ONE_AXIS = ("The whole image became brighter.",)  # one value on its axis: no two rewrites


@pytest.mark.parametrize(
    ("category", "description"), [d for d in DESCRIPTIONS if d[1] not in ONE_AXIS]
)
def test_negatives_change_one_slot_of_one_kind_and_the_truth_is_not_the_centre(
    category, description
):
    prior = slot_prior(d for _, d in DESCRIPTIONS)
    negatives = image_negatives(description=description, seed="s", prior=prior)
    assert negatives is not None and len(set(negatives)) == 2
    options = [description, *negatives]
    assert NO_DIFFERENCE not in options and description not in negatives
    # Equally alike: a "pick the centre" heuristic has only chance (credit 1/3 for a tie).
    assert credit(similarity_scores(options), 0) <= 1 / 3 + 1e-9
    truth_words = description.split()
    for negative in negatives:
        assert len(negative.split()) >= len(truth_words) - 1
        assert sum(a != b for a, b in zip(truth_words, negative.split(), strict=False)) <= 3


def test_a_lower_resolution_never_becomes_a_contradiction():
    text = "Image B has a lower resolution: 307x307 instead of 512x512 pixels."
    for seed in range(20):
        for negative in image_negatives(description=text, seed=seed) or []:
            sizes = [s.value for s in find_slots(negative) if s.kind == "resolution"]
            w = [int(v.split("x")[0]) * int(v.split("x")[1]) for v in sizes]
            assert w[0] < w[1], negative


def test_text_negatives_change_the_text():
    text = "The word 'segmentation' changed to 'registration'."
    negatives = image_negatives(description=text, seed=1)
    assert negatives and all("'" in n and n != text for n in negatives)


def test_credit_splits_ties():
    assert credit([1, 1, 0], 0) == 0.5
    assert credit([1, 1, 1], 2) == pytest.approx(1 / 3)
    assert credit([0, 1, 0], 0) == 0


def test_baselines_catch_a_set_whose_truth_is_always_longest_and_the_classifier_learns():
    questions = []
    for i in range(30):
        truth = f"The red car number {i} moved far to the left side."
        questions.append(
            {
                "id": f"q{i}",
                "split": "train" if i < 20 else "test",
                "options": {"A": truth, "B": f"A cat {i}.", "C": f"A dog {i}.", "D": NO_DIFFERENCE},
                "answer": "A",
            }
        )
    result = text_baselines(questions, no_difference=NO_DIFFERENCE)
    assert result["baselines"]["longest"]["accuracy"] == 1.0
    assert result["baselines"]["classifier"]["accuracy"] == 1.0
    assert result["best_accuracy"] == 1.0
    assert set(result["telling"]) == {f"q{i}" for i in range(30)}


def test_naive_bayes_scores_seen_true_words_higher():
    model = NaiveBayes().fit([("blue car", True), ("red car", False)])
    assert model.score("blue car") > model.score("red car")


def test_a_no_difference_description_is_left_out_and_named_never_failing_the_build():
    few = [d for d in DESCRIPTIONS if d[1] not in ONE_AXIS]  # each with two negatives
    pairs = [_pair(i, c, d) for i, (c, d) in enumerate(few, start=1)]
    pairs.append(_pair(99, "object", "There is no difference between the two images."))
    built = release_files(pairs, SplitPlan(seed=0), META)
    questions = built.files["questions.jsonl"].decode().splitlines()
    assert len(questions) == len(few)
    left = built.report["questions"]["left_out"]
    assert left == [
        {
            "id": "p-99",
            "pair_id": 99,
            "reason": "the description says there is no difference, which is the fourth option",
        }
    ]
    assert any("p-99" in w for w in built.report["warnings"])
    assert "p-99" in built.files["README.md"].decode()
    assert b'"p-99"' in built.files["benchmark.json"]  # the pair itself stays in the release


@pytest.mark.parametrize(
    "text", ["No visible change.", "there are no differences", "  No change  "]
)
def test_descriptions_saying_nothing_changed_cannot_make_a_question(text):
    record = {"changes": [{}], "description": text}
    assert question_problem(record)


def test_answer_letters_are_balanced_inside_every_split():
    pairs = [_pair(i, "object", d) for i, (_, d) in enumerate(DESCRIPTIONS * 4, start=1)]
    records = [benchmark_record(p, ["train", "val", "test"][i % 3]) for i, p in enumerate(pairs)]
    result = question_set(records, seed=3, verified={}, edited={})
    for split in ("train", "val", "test"):
        counts = Counter(r["answer"] for r in result.rows if r["split"] == split)
        assert max(counts.values()) - min(counts.values()) <= 1, (split, counts)


def test_verified_negatives_win_over_edits_and_derived_ones():
    records = [benchmark_record(_pair(1, "object", DESCRIPTIONS[0][1]), "train")]
    frozen = ["The patch changed from green to red.", "The patch changed from grey to red."]
    result = question_set(records, seed=0, verified={1: frozen}, edited={1: ["x one.", "x two."]})
    options = set(result.rows[0]["options"].values())
    assert set(frozen) <= options
    assert result.sources == {"verified": 1}


@pytest.mark.parametrize("n", [0, 5, 1000, 20_000, 25_000])
def test_the_drawn_keys_are_pythons_own_draws_whichever_generator_makes_them(n):
    from random import Random

    from pairdiff.release.slot_draws import draws as _draws

    ours, python = Random("seed"), Random("seed")
    assert _draws(ours, n).tolist() == [python.random() for _ in range(n)]
    assert ours.random() == python.random()  # moved on past them


def test_negatives_derived_elsewhere_give_the_same_questions_and_errors_come_back():
    """A release build derives half the negatives in a worker process (``derived``): the
    questions are the same, and a record whose derivation failed is left out as it would be."""
    pairs = [_pair(i, c, d) for i, (c, d) in enumerate(DESCRIPTIONS * 3, start=1)]
    records = [benchmark_record(p, ["train", "val", "test"][i % 3]) for i, p in enumerate(pairs)]
    alone = question_set(records, seed=5, verified={}, edited={})

    half = records[len(records) // 2 :]
    sent = [{**r, "changes": [r["changes"][0]]} for r in half]  # as the worker gets them
    derived = derived_negatives(sent, firsts=release_firsts(records))
    assert set(derived) == {r["pair_id"] for r in half}
    together = question_set(records, seed=5, verified={}, edited={}, derived=derived)
    assert together.rows == alone.rows and together.sources == alone.sources
    assert together.baselines == alone.baselines

    # A derivation that failed: other pairs' truths of the release still make the question.
    failed = {half[0]["pair_id"]: ValueError("only 1 distinct negatives could be made")}
    result = question_set(records, seed=5, verified={}, edited={}, derived=failed)
    assert result.left_out == alone.left_out and len(result.rows) == len(alone.rows)
    row = next(r for r in result.rows if r["pair_id"] == half[0]["pair_id"])
    assert {n["made"] for n in row["negatives"]} <= {
        "twin",
        "other_truth",
        "category_truth",
        "neighbour",
        "derived",
    }
