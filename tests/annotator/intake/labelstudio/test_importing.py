import io
import itertools
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotator.intake.importing import ImportUnusable
from annotator.intake.labelstudio.importing import labelstudio_import
from annotator.intake.labelstudio.plan import LSInput
from annotator.models import (
    Annotation,
    Assignment,
    AssignmentState,
    Change,
    Pair,
    PairEvent,
    PairStatus,
)
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from projects.models import Membership, Role
from review.models import Agreement
from tests.images import edited_pair

# Boxes in percent of the 96×64 test images: 25% of 96 is 24, 25% of 64 is 16.
AGREED = {"x": 25, "y": 25, "width": 25, "height": 25}  # [24, 16, 48, 32]
ELSEWHERE = {"x": 75, "y": 75, "width": 20, "height": 20}  # [72, 48, 91.2, 60.8]


def _box(side: str, value: dict, label: str = "attribute") -> dict:
    return {
        "original_width": 96,
        "original_height": 64,
        "image_rotation": 0,
        "value": {**value, "rotation": 0, "rectanglelabels": [label]},
        "id": f"box{side}",
        "from_name": f"box_{side}",
        "to_name": f"image_{side}",
        "type": "rectanglelabels",
        "origin": "manual",
    }


def _text(name: str, text: str) -> dict:
    return {
        "value": {"text": [text]},
        "id": name,
        "from_name": name,
        "to_name": "image_a",
        "type": "textarea",
        "origin": "manual",
    }


_annotation_ids = itertools.count(1000)


def _annotation(by, box_b=AGREED, *, label="attribute", annotation_id=None, **texts) -> dict:
    texts = {"description": "The patch changed colour.", "entity_a": "patch"} | texts
    result = [_box("a", AGREED, label), _box("b", box_b, label)]
    result += [_text(name, text) for name, text in texts.items()]
    result += [_text("entity_b", "patch")]
    return {
        "id": annotation_id or next(_annotation_ids),
        "completed_by": by,
        "result": result,
        "was_cancelled": False,
        "ground_truth": False,
        "lead_time": 12.5,
        "task": 1,
    }


def _task(task_id: int, number: int, annotations: list[dict]) -> dict:
    return {
        "id": task_id,
        "data": {
            "image_a": f"/data/upload/3/1a2b3c4d-pair{number}_a.png",
            "image_b": f"/data/upload/3/9f8e7d6c-pair{number}_b.png",
        },
        "annotations": annotations,
        "predictions": [],
        "meta": {},
        "project": 3,
    }


ANN = {"id": 8, "email": "ann@example.com", "first_name": "Ann", "last_name": "Lee"}


@pytest.fixture
def images(tmp_path) -> Path:
    """Images as people keep them: original names, without Label Studio's upload prefix."""
    folder = tmp_path / "images"
    folder.mkdir()
    for number in range(1, 5):
        a, b = edited_pair(number * 10)
        (folder / f"pair{number}_a.png").write_bytes(a)
        (folder / f"pair{number}_b.png").write_bytes(b)
    return folder


def _import(project, images, tasks: list[dict], **given):
    job = job_create(kind=JobKind.IMPORT, project=project)
    ls_input = LSInput(export=json.dumps(tasks).encode(), **given)
    report = labelstudio_import(project=project, given=ls_input, images=images, job=job)
    job.refresh_from_db()
    return report, job


TWO_BY_TWO = [
    _task(101, 1, [_annotation(7), _annotation(ANN, label="Attribute")]),
    _task(102, 2, [_annotation(7), _annotation(ANN, box_b=ELSEWHERE)]),
]


def test_two_tasks_by_two_users_become_pairs_annotations_and_verdicts(
    project, images, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        report, job = _import(project, images, TWO_BY_TWO)

    assert report.errors == []
    assert (job.status, job.result) == (
        JobStatus.SUCCEEDED,
        {"rows": 2, "imported": 2, "rejected": 0, "annotations": 4, "predictions": 0, "notes": 0},
    )
    agreeing, disagreeing = Pair.objects.order_by("id")
    assert agreeing.metadata["label_studio"]["task"] == 101
    assert agreeing.metadata["source_files"] == ["pair1_a.png", "pair1_b.png"]
    assert (agreeing.status, disagreeing.status) == (PairStatus.ACCEPTED, PairStatus.DISPUTED)
    assert Agreement.objects.count() == 2
    for pair in (agreeing, disagreeing):
        assert (pair.n_taken, pair.n_submitted) == (2, 2)
    users = {u.username: u for u in get_user_model().objects.filter(username__startswith="ls:")}
    seven, ann = f"ls:{project.pk}:7", f"ls:{project.pk}:ann@example.com"
    assert set(users) == {seven, ann}
    assert not any(u.has_usable_password() or u.is_active for u in users.values())
    roles = Membership.objects.filter(project=project, user__in=users.values())
    assert sorted(roles.values_list("role", flat=True)) == [Role.ANNOTATOR, Role.ANNOTATOR]
    assert Annotation.objects.count() == 4
    assert set(Assignment.objects.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}
    by_ann = Annotation.objects.get(pair=disagreeing, annotator=users[ann])
    [change] = by_ann.changes.all()
    assert change.as_json() == {
        "category": "attribute",
        "description": "The patch changed colour.",
        "entity_a": "patch",
        "entity_b": "patch",
        "boxes_a": [[24, 16, 48, 32]],
        "boxes_b": [[72, 48, 91, 61]],
    }
    assert (by_ann.tier, by_ann.time_spent_ms) == ("excellent", 12_500)
    kinds = sorted(PairEvent.objects.filter(pair=agreeing).values_list("kind", flat=True))
    assert kinds == [
        "agreement",
        "imported",
        "imported_from_label_studio",
        "imported_from_label_studio",
        "leased",
        "leased",
        "submitted",
        "submitted",
    ]


def test_bad_annotation_is_a_row_error_and_writes_nothing(project, images):
    outside = {"x": 90, "y": 10, "width": 20, "height": 10}
    tasks = [
        _task(101, 1, [_annotation(7, box_b=outside, annotation_id=55), _annotation(ANN)]),
        _task(102, 2, [_annotation(7, description="", annotation_id=56)]),
        _task(103, 3, [_annotation(7, label="vehicle", annotation_id=57)]),
    ]

    report, job = _import(project, images, tasks)

    assert Pair.objects.count() == 3
    [kept] = Annotation.objects.all()
    assert kept.annotator.username == f"ls:{project.pk}:ann@example.com"
    assert (Assignment.objects.count(), Change.objects.count()) == (1, 1)
    pairs = Pair.objects.order_by("id")
    assert [(p.n_taken, p.n_submitted, p.status) for p in pairs] == [
        (1, 1, PairStatus.IN_ANNOTATION),
        (0, 0, PairStatus.IMPORTED),
        (0, 0, PairStatus.IMPORTED),
    ]
    assert [(e["line"], e["id"]) for e in job.errors] == [(1, "101"), (2, "102"), (3, "103")]
    box, description, category = (e["message"] for e in job.errors)
    assert box.startswith("annotation 55 by Label Studio user 7: box on image B")
    assert "outside" in box
    assert description.startswith("annotation 56 by Label Studio user 7: changes.0.description")
    assert category.startswith(
        "annotation 57 by Label Studio user 7: box label: 'vehicle' is no category of the "
        "project; map it in the mapping's category section"
    )
    assert job.result == {
        "rows": 3,
        "imported": 3,
        "rejected": 3,
        "annotations": 1,
        "predictions": 0,
        "notes": 0,
    }
    assert not report.complete


def test_annotations_beyond_the_overlap_are_reported(project, images):
    annotations = [_annotation(7), _annotation(ANN), _annotation(9, annotation_id=77)]

    report, _ = _import(project, images, [_task(101, 1, annotations)])

    assert Annotation.objects.count() == 2
    [error] = report.errors
    assert error.message == (
        "annotation 77 by Label Studio user 9: the project takes 2 annotations per pair"
    )
    assert not get_user_model().objects.filter(username=f"ls:{project.pk}:9").exists()


def test_duplicates_are_reported_and_get_no_annotations(project, images):
    _import(project, images, [_task(101, 1, [_annotation(7)])])

    again = [_task(201, 1, [_annotation(ANN)]), _task(202, 2, []), _task(203, 2, [_annotation(7)])]
    report, _ = _import(project, images, again)

    assert Pair.objects.count() == 2 and Annotation.objects.count() == 1
    assert [(e.line, e.external_id) for e in report.errors] == [(1, "201"), (3, "203")]
    first, repeat = (e.message for e in report.errors)
    pair = Pair.objects.order_by("id").first()
    assert first == f"duplicate of pair {pair.pk}; its annotations were not imported"
    assert repeat == "duplicate of task 2 (same images); its annotations were not imported"


def test_missing_image_is_a_row_error(project, images):
    (images / "pair2_b.png").unlink()

    report, _ = _import(project, images, TWO_BY_TWO)

    assert Pair.objects.count() == 1
    [error] = report.errors
    assert (error.line, error.external_id) == (2, "102")
    assert error.message.startswith("image_b: no file named 9f8e7d6c-pair2_b.png or pair2_b.png")


def test_unusable_export_fails_the_job_and_writes_nothing(project, images):
    job = job_create(kind=JobKind.IMPORT, project=project)

    with pytest.raises(ImportUnusable, match="list of tasks"):
        labelstudio_import(
            project=project, given=LSInput(export=b'{"data": {}}'), images=images, job=job
        )

    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and Pair.objects.count() == 0


# The command ---------------------------------------------------------------------------------


def _exit_code(*args) -> int | str | None:
    try:
        call_command(*args)
    except SystemExit as exc:
        return exc.code
    return 0


def _zip(images: Path, tmp_path: Path) -> Path:
    """The images as Label Studio keeps them: upload-prefixed names, in a zip."""
    path = tmp_path / "media.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for number, side, prefix in ((1, "a", "1a2b3c4d"), (1, "b", "9f8e7d6c")):
            file = images / f"pair{number}_{side}.png"
            archive.write(file, f"upload/3/{prefix}-{file.name}")
    return path


def test_command_exits_0_when_everything_is_imported(project, images, tmp_path, capsys):
    export = tmp_path / "project-3-at-2024-05-02.json"
    export.write_text(json.dumps(TWO_BY_TWO[:1]))

    code = _exit_code(
        "import_labelstudio",
        str(export),
        "--project",
        "cars",
        "--images",
        str(_zip(images, tmp_path)),
    )

    assert code == 0
    assert (
        "1 of 1 tasks imported with 2 annotations and 0 predictions, 0 rejected"
        in capsys.readouterr().out
    )
    job = Job.objects.get()
    assert (job.kind, job.params["format"]) == (JobKind.IMPORT, "label-studio")


def test_command_exits_1_and_names_rejected_tasks(project, images, tmp_path, capsys):
    export = images / "export.json"
    tasks = [TWO_BY_TWO[0], _task(105, 5, [])]
    export.write_text(json.dumps(tasks))

    code = _exit_code("import_labelstudio", str(export), "--project", project.slug)

    out = capsys.readouterr().out
    assert code == 1 and Pair.objects.count() == 1
    assert "rejected task 2 (id 105): image_a: no file named" in out


@pytest.mark.parametrize(
    "case", ["no project", "no export", "not an export", "no images", "not json"]
)
def test_command_exits_2_on_unusable_input(project, images, tmp_path, case):
    export = tmp_path / "export.json"
    export.write_text(json.dumps(TWO_BY_TWO))
    args = [str(export), "--project", project.slug, "--images", str(images)]
    if case == "no project":
        args[2] = "nope"
    elif case == "no export":
        args[0] = str(tmp_path / "missing.json")
    elif case == "not an export":
        export.write_text(json.dumps([{"image_a": "a.png", "image_b": "b.png"}]))
    elif case == "no images":
        args[4] = str(tmp_path / "nowhere")
    else:
        export.write_text("image_a,image_b\n")

    assert _exit_code("import_labelstudio", *args) == 2
    assert Pair.objects.count() == 0


def _zip_all(images: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(images.iterdir()):
            archive.write(file, file.name)
    return buffer.getvalue()


def test_a_label_studio_export_is_imported_over_rest_as_a_job(
    project, lead, images, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(lead)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/projects/cars/imports/",
            {
                "format": "label-studio",
                "manifest": SimpleUploadedFile("export.json", json.dumps(TWO_BY_TWO).encode()),
                "images": SimpleUploadedFile("images.zip", _zip_all(images)),
            },
            format="multipart",
        )
    assert response.status_code == 202, response.json()
    job = client.get(f"/api/v1/jobs/{response.json()['job']['id']}/").json()
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert job["result"]["imported"] == 2 and job["result"]["annotations"] == 4
    assert Annotation.objects.count() == 4


def test_the_upload_page_takes_a_label_studio_export(
    client, project, lead, images, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(lead)
    archive = _zip_all(images)
    missing = client.post(
        "/p/cars/upload/",
        {"source_format": "label-studio", "images": SimpleUploadedFile("i.zip", archive)},
    )
    assert missing.status_code == 400
    assert "choose the Label Studio export" in missing.content.decode()
    preview = client.post(
        "/p/cars/upload/",
        {
            "source_format": "label-studio",
            "images": SimpleUploadedFile("i.zip", archive),
            "manifest": SimpleUploadedFile("export.json", json.dumps(TWO_BY_TWO).encode()),
        },
    )
    assert preview.status_code == 200
    page = preview.content.decode()
    assert "Nothing has been written yet" in page and Pair.objects.count() == 0
    assert 'Tasks to import</th><td class="num">2<' in page
    assert 'Annotations to import</th><td class="num">4<' in page
    token = preview.context["token"]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/p/cars/upload/", {"staged": token, "action": "import"})
    assert response.status_code == 302
    job = Job.objects.get()
    assert job.params["format"] == "label-studio" and job.status == JobStatus.SUCCEEDED
    assert Pair.objects.count() == 2


def test_a_staged_upload_of_another_session_is_not_found(client, project, lead):
    client.force_login(lead)
    response = client.post("/p/cars/upload/", {"staged": "0" * 32, "action": "import"})
    assert response.status_code == 404 and Job.objects.count() == 0
