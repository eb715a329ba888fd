"""Scoring at any size and from any input: uploads streamed with the limit enforced while they
arrive, scoring always a job, unreadable lines counted (issues #24 item 3 and #26)."""

import json

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from pairdiff.release.circular import CIRCULAR_FILE
from pairdiff.scoring.own_answers import jsonl, own_answer_lines
from releases.evaluations import release_rotations, release_truth
from releases.models import Evaluation, EvaluationStatus
from tests.releases.test_evaluations import _perfect, _post
from tests.releases.test_evaluations import release as built_release

release = built_release  # the same fixture: a release of nine accepted pairs

DEEP = ("[" * 100_000 + "]" * 100_000).encode() + b"\n"


def test_an_upload_over_the_limit_is_refused_while_it_streams(release, researcher, monkeypatch):
    import api.evaluations

    monkeypatch.setattr(api.evaluations, "MAX_PREDICTIONS_BYTES", 100_000)
    client = APIClient()
    client.force_login(researcher)
    response = _post(client, release, b'{"id": 1, "answer": "A"}\n' * 10_000)  # 250 KB
    assert response.status_code == 400
    message = response.json()["error"]["fields"]["file"][0]
    assert "at least" in message and "limit" in message
    assert not Evaluation.objects.exists()


def test_scoring_is_a_job_the_response_does_not_wait_for(
    release, researcher, django_capture_on_commit_callbacks
):
    client = APIClient()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, release, _perfect(release))
        # Without a broker the scoring runs once the response is sent, not inside it.
        assert response.json()["evaluation"]["status"] == EvaluationStatus.QUEUED
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.READY and evaluation.grounded_f1 == 1.0
    with default_storage.open(evaluation.predictions, "rb") as handle:
        assert handle.read() == _perfect(release)  # kept as sent, copied in chunks


def test_a_line_nested_100k_deep_is_unparseable_over_rest(
    release, researcher, django_capture_on_commit_callbacks
):
    client = APIClient()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, release, DEEP + _perfect(release))
    assert response.status_code == 202
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.READY
    assert evaluation.result["unparseable"]["count"] == 1
    assert evaluation.result["unparseable"]["lines"][0]["line"] == 1


def test_evaluate_command_counts_a_deep_line_and_exits_2_when_nothing_else(
    release, tmp_path, capsys
):
    path = tmp_path / "p.jsonl"
    path.write_bytes(DEEP + _perfect(release))
    call_command("evaluate", "--release", str(release.pk), "--predictions", str(path))
    result = json.loads(capsys.readouterr().out)
    assert result["unparseable"]["count"] == 1 and result["grounding"]["grounded_f1"] == 1.0
    path.write_bytes(DEEP)
    with pytest.raises(CommandError, match="nested more than 64 levels") as caught:
        call_command("evaluate", "--release", str(release.pk), "--predictions", str(path))
    assert caught.value.returncode == 2


def _normal_order(records: list, questions: list) -> tuple[list, list]:
    """The release as read in A→B order: its test_swapped copy is scored apart (order_swap)."""
    return (
        [r for r in records if r["split"] != "test_swapped"],
        [q for q in questions if q.get("split") != "test_swapped"],
    )


def test_every_release_writes_its_rotations_and_scoring_reports_circular_accuracy(
    release, tmp_path, capsys
):
    assert CIRCULAR_FILE in release.manifest["files"]
    records, questions = _normal_order(*release_truth(release))
    rotations = release_rotations(release)
    assert len(rotations) == 3 * len(questions)
    assert {r["rotation_of"] for r in rotations} == {q["id"] for q in questions}
    lines = own_answer_lines(records, [*questions, *rotations])
    path = tmp_path / "p.jsonl"
    path.write_bytes(jsonl(lines))
    call_command("evaluate", "--release", str(release.pk), "--predictions", str(path))
    q = json.loads(capsys.readouterr().out)["questions"]
    assert (q["accuracy"], q["circular_accuracy"], q["questions"]) == (1.0, 1.0, len(questions))


def test_the_result_says_when_mincu_s_rule_is_not_computable(release, tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_bytes(_perfect(release))
    call_command("evaluate", "--release", str(release.pk), "--predictions", str(path))
    mincu = json.loads(capsys.readouterr().out)["grounding"]["mincu"]
    assert mincu["computable"] is False and "DIFFMARK_BERTSCORE_MODEL" in mincu["why"]


def test_the_built_release_s_own_hard_negatives_score_zero_through_the_command(
    release, tmp_path, capsys
):
    from pairdiff.release.questions import NO_DIFFERENCE
    from pairdiff.text import description_words

    records, questions = _normal_order(*release_truth(release))
    truth = {q["pair_id"]: q["options"][q["answer"]] for q in questions}

    def false(sentence: str, pair_id: int) -> bool:
        # A template shortening the truth ("The cup was added." for "A cup was added on the
        # table.") is made of its words only and claims nothing false: not a negative here.
        shortening = set(description_words(sentence)) <= set(description_words(truth[pair_id]))
        return sentence != NO_DIFFERENCE and not shortening

    negatives = {
        q["pair_id"]: [v for k, v in q["options"].items()
                       if k != q["answer"] and false(v, q["pair_id"])]
        for q in questions
    }  # fmt: skip
    lines = own_answer_lines(records, [])
    for record, line in zip(records, lines, strict=True):
        line["changes"][0]["description"] = negatives[record["pair_id"]][0]
    path = tmp_path / "p.jsonl"
    path.write_bytes(jsonl(lines))
    call_command("evaluate", "--release", str(release.pk), "--predictions", str(path))
    g = json.loads(capsys.readouterr().out)["grounding"]
    assert g["records"] == len(records) and g["true_positives"] == 0
    assert g["grounded_f1"] == 0.0 and g["miou"] == 1.0  # boxes perfect, descriptions false
