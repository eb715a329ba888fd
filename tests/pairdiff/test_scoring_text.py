"""The description scorer: deterministic default, BERTScore only when configured."""

import pytest

from pairdiff.scoring.text import BertScoreScorer, TextScorerUnavailable, text_scorer


def test_default_scorer_is_the_download_free_slot_rule():
    scorer = text_scorer()
    assert (scorer.name, scorer.threshold) == ("slots", 0.5)
    contradicts, keeps = scorer.similarities(
        [("The car turned blue.", "The car turned red."), ("The car turned blue.", "It is blue.")]
    )
    assert (contradicts, keeps) == (0.0, 1.0)


def test_word_scorer_with_its_threshold():
    scorer = text_scorer("words")
    assert (scorer.name, scorer.threshold) == ("words", 0.5)
    same, other = scorer.similarities(
        [("The car turned blue.", "the cars turned blue"), ("The car turned blue.", "A hat.")]
    )
    assert (same, other) == (1.0, 0.0)


def test_exact_scorer_and_threshold_override():
    scorer = text_scorer("exact", threshold=0.9)
    assert scorer.threshold == 0.9
    assert scorer.similarities([("A dog.", "a dogs"), ("A dog.", "a cat")]) == [1.0, 0.0]


def test_unknown_metric_names_the_choices():
    with pytest.raises(TextScorerUnavailable, match="choose one of slots, words, exact, bertscore"):
        text_scorer("bleu")


def test_threshold_outside_zero_one_is_refused():
    with pytest.raises(TextScorerUnavailable, match="between 0 and 1"):
        text_scorer("words", threshold=1.5)


def test_bertscore_without_the_package_says_so():
    with pytest.raises(TextScorerUnavailable, match="needs the bert-score package"):
        text_scorer("bertscore", bertscore_model="/models/roberta", has_module=lambda _: None)


def test_bertscore_without_a_local_model_never_downloads():
    with pytest.raises(TextScorerUnavailable, match="DIFFMARK_BERTSCORE_MODEL"):
        text_scorer("bertscore", has_module=lambda _: object())


def test_bertscore_with_package_and_model_is_selected():
    scorer = text_scorer("bertscore", bertscore_model="/models/roberta", has_module=lambda _: 1)
    assert isinstance(scorer, BertScoreScorer)
    assert (scorer.model_path, scorer.threshold, scorer.similarities([])) == (
        "/models/roberta",
        0.85,
        [],
    )
