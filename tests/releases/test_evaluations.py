"""Scoring predictions against a release: the evaluate command, the REST endpoint, the job."""

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from jobs.models import Job, JobKind, JobStatus
from pairdiff.release.splits import SplitPlan
from pairdiff.scoring.own_answers import jsonl, own_answer_lines
from releases.building import release_build, release_register
from releases.evaluations import evaluation_run, release_truth
from releases.models import Evaluation, EvaluationStatus, ReleaseStatus
from tests.factories import make_accepted
from tests.releases.test_releases import _bodies


@pytest.fixture
def release(project, annotator_1, annotator_2):
    make_accepted(project, [annotator_1, annotator_2], _bodies(9))
    built = release_build(release_register(project=project, name="v1", plan=SplitPlan(seed=3)).pk)
    assert built.status == ReleaseStatus.READY
    return built


def _perfect(release, coords="1000") -> bytes:
    records, questions = release_truth(release)
    return jsonl(own_answer_lines(records, questions, coords=coords))


def _run(tmp_path, capsys, release, data: bytes, *more) -> dict:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(data)
    call_command("evaluate", "--release", str(release.pk), "--predictions", str(path), *more)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("coords", ["1000", "pixel", "unit"])
def test_evaluate_command_scores_the_release_s_own_answers_one(release, tmp_path, capsys, coords):
    result = _run(tmp_path, capsys, release, _perfect(release, coords), "--coords", coords)
    g, q = result["grounding"], result["questions"]
    assert result["release"] == {"id": release.pk, "name": "v1", "version": 1, "project": "cars"}
    splits = sorted({r["split"] for r in release_truth(release)[0]} - {"test_swapped"})
    assert g["splits"] == splits and g["records"] == 9 and g["missing"] == 0
    assert [g["grounded_f1"], g["precision"], g["recall"], g["miou"], g["map"]["mean"]] == [1.0] * 5
    assert g["hallucination_rate"] == 0.0
    assert (q["accuracy"], q["questions"]) == (1.0, 9)
    assert result["text_metric"]["name"] == "slots" and result["unparseable"]["count"] == 0


def test_evaluate_command_accepts_the_release_name(release, tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_bytes(_perfect(release))
    call_command("evaluate", "--release", "v1", "--predictions", str(path))
    assert json.loads(capsys.readouterr().out)["grounding"]["grounded_f1"] == 1.0


def test_evaluate_command_reports_garbage_lines_by_number(release, tmp_path, capsys):
    data = b"this is not json\n" + _perfect(release)
    result = _run(tmp_path, capsys, release, data)
    assert result["unparseable"]["count"] == 1
    assert result["unparseable"]["lines"][0]["line"] == 1
    assert result["grounding"]["grounded_f1"] == 1.0  # the other lines are all there


@pytest.mark.parametrize(
    ("args", "data", "message"),
    [
        (["--coords", "unit"], None, "does not fit --coords unit"),
        (["--coords", "pixel"], b"unit", "use --coords unit"),
        ([], b"", "has no lines"),
        ([], b"\xff\xfe garbage", "not UTF-8"),
        (["--text-metric", "bertscore"], None, "bert-score package"),
    ],
)
def test_evaluate_command_exits_2_on_unusable_input(release, tmp_path, args, data, message):
    path = tmp_path / "p.jsonl"
    path.write_bytes(_perfect(release, "unit") if data == b"unit" else data or _perfect(release))
    if data == b"":
        path.write_bytes(b"\n\n")
    with pytest.raises(CommandError, match=message) as caught:
        call_command("evaluate", "--release", str(release.pk), "--predictions", str(path), *args)
    assert caught.value.returncode == 2


def test_evaluate_command_exits_2_for_a_missing_release_or_file(release, tmp_path):
    for args, message in (
        (["--release", "999", "--predictions", str(tmp_path / "p")], "no release '999'"),
        (["--release", str(release.pk), "--predictions", str(tmp_path / "p")], "cannot read"),
    ):
        with pytest.raises(CommandError, match=message) as caught:
            call_command("evaluate", *args)
        assert caught.value.returncode == 2


def _post(client, release, data: bytes, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    body = {"file": SimpleUploadedFile("p.jsonl", data), "model": "qwen-demo", **fields}
    return client.post(f"/api/v1/releases/{release.pk}/evaluations/", body, format="multipart")


def test_researcher_scores_predictions_as_a_job_and_lists_the_leaderboard(
    release, researcher, django_capture_on_commit_callbacks
):
    client = APIClient()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, release, _perfect(release), coords="1000")
    assert response.status_code == 202
    body = response.json()
    assert body["job"]["kind"] == JobKind.EVALUATE and body["evaluation"]["model"] == "qwen-demo"
    job = Job.objects.get(pk=body["job"]["id"])
    assert job.status == JobStatus.SUCCEEDED and job.created_by == researcher
    assert client.get(f"/api/v1/jobs/{job.pk}/").json()["result"]["grounded_f1"] == 1.0
    listed = client.get(f"/api/v1/releases/{release.pk}/evaluations/").json()
    assert listed["count"] == 1
    row = listed["results"][0]
    assert (row["status"], row["grounded_f1"], row["accuracy"]) == ("ready", 1.0, 1.0)
    assert row["result"]["grounding"]["map"]["mean"] == 1.0


def test_the_leaderboard_lists_the_best_first(release, lead, django_capture_on_commit_callbacks):
    client = APIClient()
    client.force_login(lead)
    records, questions = release_truth(release)
    half = jsonl(own_answer_lines(records[:4], questions[:3]))
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, release, half, model="half")
        _post(client, release, _perfect(release), model="all")
    rows = client.get(f"/api/v1/releases/{release.pk}/evaluations/").json()["results"]
    assert [r["model"] for r in rows] == ["all", "half"]
    assert rows[1]["grounded_f1"] < 1.0


def test_a_refused_file_fails_the_evaluation_with_the_reason(
    release, researcher, django_capture_on_commit_callbacks
):
    client = APIClient()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, release, _perfect(release), coords="unit")
    assert response.status_code == 202
    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.FAILED
    assert "does not fit --coords unit" in evaluation.message
    assert evaluation.job.status == JobStatus.FAILED and evaluation.grounded_f1 is None


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"coords": "inches"}, "coords", "is not a valid choice"),
        ({"model": "  "}, "model", "may not be blank"),
        ({"text_metric": "bertscore"}, "text_metric", "bert-score package"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(release, researcher, fields, field, message):
    client = APIClient()
    client.force_login(researcher)
    response = _post(client, release, _perfect(release), **fields)
    assert response.status_code == 400
    error = response.json()["error"]
    assert message in error["fields"][field][0]
    assert not Evaluation.objects.exists() and not Job.objects.filter(kind="evaluate").exists()


def test_an_empty_file_is_a_400(release, researcher):
    client = APIClient()
    client.force_login(researcher)
    response = _post(client, release, b"")
    assert response.status_code == 400 and "file" in response.json()["error"]["fields"]


def test_annotators_cannot_score_or_list(release, annotator_1):
    client = APIClient()
    client.force_login(annotator_1)
    assert _post(client, release, _perfect(release)).status_code == 404
    assert client.get(f"/api/v1/releases/{release.pk}/evaluations/").status_code == 404


def test_the_scoring_task_runs_once(release, researcher, django_capture_on_commit_callbacks):
    client = APIClient()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, release, _perfect(release))
    evaluation = Evaluation.objects.get()
    finished = evaluation.finished_at
    again = evaluation_run(evaluation.pk)
    assert again.finished_at == finished and again.status == EvaluationStatus.READY


def test_the_release_page_shows_the_leaderboard_with_breakdowns(
    client, release, researcher, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    records, questions = release_truth(release)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/review/releases/{release.pk}/evaluate/",
            {"file": SimpleUploadedFile("p.jsonl", _perfect(release)), "model": "oracle <b>",
             "coords": "1000"},
        )  # fmt: skip
    assert response.status_code == 302
    assert response["Location"].endswith(f"/review/releases/{release.pk}/#leaderboard-h")
    page = client.get(f"/review/releases/{release.pk}/").content.decode()
    assert "Leaderboard" in page and "oracle &lt;b&gt;" in page
    assert "Grounded F1 per category" in page and "Question accuracy per difficulty" in page
    assert "descriptions scored by slots ≥ 0.5" in page
    # one chart group per category of the release, e.g. the "Object" row
    assert page.count('class="lb-group"') >= len({r["category"] for r in records})


def test_the_release_page_form_reports_a_refused_file(
    client, release, researcher, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/review/releases/{release.pk}/evaluate/",
            {"file": SimpleUploadedFile("p.jsonl", _perfect(release)), "model": "m",
             "coords": "unit"},
        )  # fmt: skip
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert '<span class="badge ev-failed">Failed</span> line 1: box' in page
    assert "does not fit Box coordinates “[0, 1]” ([0, 1])" in page
    assert "--coords" not in page  # the command's wording, not the form's


def test_an_evaluation_whose_message_was_lost_is_scored_by_the_sweep(release, researcher):
    from datetime import timedelta

    from django.utils import timezone

    from jobs.sweeps import jobs_resend_queued
    from releases.evaluations import evaluation_create

    # No capture of on-commit callbacks: inside the test's transaction the send never happens,
    # as when the broker lost it.
    evaluation = evaluation_create(
        release=release, model_name="m", coords="1000", text_metric="words",
        data=_perfect(release), user=researcher,
    )  # fmt: skip
    assert evaluation.status == EvaluationStatus.QUEUED
    later = timezone.now() + timedelta(minutes=60)
    assert jobs_resend_queued(now=later) == [evaluation.job.pk]  # eager: scored here
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.READY and evaluation.grounded_f1 == 1.0


def test_a_stale_evaluation_job_fails_with_advice(release, researcher):
    from datetime import timedelta

    from django.utils import timezone

    from jobs.lifecycle import job_claim
    from jobs.sweeps import jobs_fail_stale
    from releases.evaluations import evaluation_create

    evaluation = evaluation_create(
        release=release, model_name="m", coords="1000", text_metric="words",
        data=_perfect(release), user=researcher,
    )  # fmt: skip
    assert job_claim(evaluation.job)
    assert jobs_fail_stale(now=timezone.now() + timedelta(minutes=60)) == [evaluation.job.pk]
    evaluation.job.refresh_from_db()
    assert "send the predictions again" in evaluation.job.message


def test_the_leaderboard_ranks_only_evaluations_scored_on_the_same_splits():
    from releases.leaderboard import leaderboard

    def scored(name, f1, splits):
        grounding = {
            "grounded_f1": f1,
            "splits": splits,
            "records": 3,
            "by_category": {"object": {"grounded_f1": f1}},
            "by_difficulty": {},
        }
        result = {"grounding": grounding, "questions": None, "unparseable": {"rate": 0.0},
                  "text_metric": {"name": "words", "threshold": 0.5}}  # fmt: skip
        return Evaluation(model_name=name, status=EvaluationStatus.READY, result=result)

    board = leaderboard(
        [
            scored("test only", 1.0, ["test"]),
            scored("all a", 0.8, ["test", "train"]),
            scored("all b", 0.6, ["test", "train"]),
            Evaluation(model_name="waiting", status=EvaluationStatus.QUEUED),
        ],
        [{"slug": "object", "name": "Object"}],
    )
    assert [
        (s.splits, [(r.rank, r.evaluation.model_name) for r in s.rows]) for s in board.scopes
    ] == [
        ("test, train", [(1, "all a"), (2, "all b")]),
        ("test", [(1, "test only")]),
        ("", [(None, "waiting")]),
    ]
    assert [m["name"] for m in board.models] == ["all a", "all b"]
    bars = board.charts[0].groups[0]["bars"]
    assert [(b["model"], b["pct"]) for b in bars] == [("all a", 80.0), ("all b", 60.0)]
    assert board.text_metrics == ["words ≥ 0.5"] and board.count == 4
