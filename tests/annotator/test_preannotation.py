import json
from collections.abc import Collection

import pytest
from rest_framework.test import APIClient

from annotator.models import Pair, PairStatus, Prediction
from annotator.preannotation import UnknownBackend, preannotate_run, predictor_for
from annotator.predictions import predictions_import
from jobs.lifecycle import job_cancel, job_create
from jobs.models import Job, JobKind, JobStatus
from pairdiff.geometry import Box
from pairdiff.predict import NO_VISIBLE_CHANGE, PredictedChange, PredictionResult
from tests.factories import make_pair


class FakePredictor:
    """Answers from a script: a box per pair, a failure for some, a flag for others."""

    name, version = "fake", "2"

    def __init__(self, fail_on: Collection[bytes] = frozenset(), flag_all: bool = False) -> None:
        self.seen: list[tuple[bytes, bytes]] = []
        self.fail_on = fail_on
        self.flag_all = flag_all

    def predict(self, image_a, image_b, *, categories, instruction=""):
        self.seen.append((image_a, image_b))
        if image_a in self.fail_on:
            return PredictionResult(error="model answered nonsense")
        box = Box(20, 10, 40, 30)
        change = PredictedChange(
            categories[0], "A patch changed.", "patch", "patch", (box,), (box,)
        )
        flags = (NO_VISIBLE_CHANGE,) if self.flag_all else ()
        return PredictionResult(changes=(change,), flags=flags, confidence=0.7)


def _job(project):
    return job_create(kind=JobKind.PREANNOTATE, project=project, params={"backend": "fake"})


def test_a_job_predicts_every_open_pair_from_the_original_bytes(project):
    pairs = [make_pair(project) for _ in range(3)]
    predictor = FakePredictor()
    job = _job(project)

    preannotate_run(job=job, predictor=predictor)

    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.result == {"predicted": 3}
    assert (job.done, job.total) == (3, 3)
    assert predictor.seen[0] == (pairs[0].image_a.read(), pairs[0].image_b.read())
    prediction = Prediction.objects.get(pair=pairs[0])
    assert prediction.changes[0]["boxes_a"] == [[20, 10, 40, 30]]
    assert (prediction.model_name, prediction.model_version, prediction.confidence) == (
        "fake",
        "2",
        0.7,
    )
    assert set(Pair.objects.values_list("status", flat=True)) == {PairStatus.PRE_ANNOTATED}


def test_a_failure_on_one_pair_is_recorded_and_the_rest_go_on(project):
    bad, good = make_pair(project), make_pair(project)
    job = _job(project)

    preannotate_run(job=job, predictor=FakePredictor(fail_on={bad.image_a.read()}))

    job.refresh_from_db()
    assert job.result == {"predicted": 1, "failed": 1}
    assert job.errors == [{"id": str(bad.pk), "message": "model answered nonsense"}]
    assert Prediction.objects.get(pair=bad).error == "model answered nonsense"
    assert Prediction.objects.get(pair=good).error == ""


def test_a_rerun_replaces_the_same_model_versions_predictions(project):
    make_pair(project)
    preannotate_run(job=_job(project), predictor=FakePredictor())

    preannotate_run(job=_job(project), predictor=FakePredictor(flag_all=True))

    prediction = Prediction.objects.get()
    assert prediction.flags == [NO_VISIBLE_CHANGE]


def test_a_cancelled_job_stops_before_its_next_batch(project):
    make_pair(project)
    job = _job(project)
    assert job_cancel(job=job)

    preannotate_run(job=job, predictor=FakePredictor())

    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and Prediction.objects.count() == 0
    assert not job_cancel(job=job)


def test_predictions_import_reports_bad_rows_and_keeps_good_ones(project):
    pair = make_pair(project, external_id="p-1")
    rows = [
        {
            "external_id": "p-1",
            "model": "qwen3-vl",
            "version": "8b",
            "confidence": 0.9,
            "changes": [
                {
                    "category": "attribute",
                    "description": "The patch turned blue.",
                    "entity_a": "patch",
                    "entity_b": "patch",
                    "boxes_a": [[20, 10, 40, 30]],
                    "boxes_b": [[20, 10, 40, 30]],
                }
            ],
        },
        {
            "external_id": "p-1",
            "model": "other",
            "changes": [
                {
                    "category": "attribute",
                    "description": "x",
                    "entity_a": "a",
                    "entity_b": "b",
                    "boxes_a": [[0, 0, 500, 10]],
                    "boxes_b": [],
                }
            ],
        },
        {"external_id": "nope", "model": "qwen3-vl"},
        "not an object",
    ]
    data = ("\n".join(json.dumps(r) for r in rows) + "\n{broken").encode()

    report = predictions_import(project=project, data=data)

    assert report.imported == 1
    assert [e["line"] for e in report.errors] == [2, 3, 4, 5]
    assert "96×64" in report.errors[0]["message"]
    assert Prediction.objects.get(pair=pair).model_version == "8b"


def test_preannotate_over_rest_starts_a_job(
    project, lead, django_capture_on_commit_callbacks, monkeypatch
):
    make_pair(project)
    monkeypatch.setattr("annotator.preannotation.predictor_for", lambda backend: FakePredictor())
    client = APIClient()
    client.force_authenticate(lead)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/projects/cars/preannotate/", {"backend": "pixeldiff"}, format="json"
        )

    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.status == JobStatus.SUCCEEDED and Prediction.objects.count() == 1


def test_an_unknown_backend_is_a_clear_error(project, lead):
    client = APIClient()
    client.force_authenticate(lead)
    response = client.post("/api/v1/projects/cars/preannotate/", {"backend": "gpt"}, format="json")
    assert response.status_code == 400 and "backend" in response.json()["error"]["fields"]


@pytest.mark.parametrize("who", ["annotator_1", "researcher"])
def test_only_leads_import_predictions(project, request, who):
    client = APIClient()
    client.force_authenticate(request.getfixturevalue(who))
    response = client.post("/api/v1/projects/cars/predictions/", {"predictions": []}, format="json")
    assert response.status_code == 403


def test_the_vlm_backend_is_built_from_settings(settings):
    settings.DIFFMARK_VLM_URL = "http://127.0.0.1:9/v1"
    settings.DIFFMARK_VLM_MODEL = "qwen3-vl-test"

    predictor = predictor_for("vlm")

    assert predictor.name == "vlm" and "qwen3-vl-test" in predictor.version


def test_the_vlm_backend_without_a_url_is_a_clear_error(settings):
    settings.DIFFMARK_VLM_URL = ""
    with pytest.raises(UnknownBackend, match="DIFFMARK_VLM_URL"):
        predictor_for("vlm")


def test_progress_and_the_heartbeat_move_after_every_pair_not_every_batch(project):
    for _ in range(3):
        make_pair(project)
    job = _job(project)
    seen: list[tuple[int, object]] = []

    class Watching(FakePredictor):
        def predict(self, image_a, image_b, **kwargs):
            seen.append(Job.objects.values_list("done", "heartbeat_at").get(pk=job.pk))
            return super().predict(image_a, image_b, **kwargs)

    preannotate_run(job=job, predictor=Watching())

    assert [done for done, _ in seen] == [0, 1, 2]  # was [0, 0, 0] with one beat a batch
    beats = [beat for _, beat in seen]
    assert beats == sorted(beats) and len(set(beats)) == 3
