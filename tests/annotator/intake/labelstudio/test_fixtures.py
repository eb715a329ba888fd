"""The issue's real Label Studio export imported from the command, the page and the API; the
round trip back to Label Studio; the account takeover made impossible."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotator.intake.labelstudio.plan import author_username
from annotator.models import Annotation, Pair, PairStatus, Prediction
from jobs.models import Job, JobStatus
from pairdiff.labelstudio.mapping import parse_value_map
from pairdiff.labelstudio.read import ReadOptions, parse_export, resolve_mapping
from pairdiff.release.splits import SplitPlan
from projects.creating import project_create
from projects.members import membership_set, user_ensure
from projects.models import Membership, Role, TierRule
from releases.building import release_create

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "labelstudio"
MINCU = FIXTURES / "mincu"
EXPECTED = json.loads((MINCU / "expected.json").read_text())
EXPORT = json.loads((MINCU / "export.json").read_text())


@pytest.fixture
def ls_project(db):
    """A MinCU project taking "good" too, so every pair of the export can be accepted."""
    project = project_create(slug="from-ls", name="From LS", overlap=2)
    project.tier_rule = TierRule.GOOD
    project.save(update_fields=["tier_rule"])
    return project


@pytest.fixture
def ls_lead(ls_project):
    user = user_ensure(username="ls-lead", password="a-long-lead-password")
    membership_set(project=ls_project, user=user, role=Role.LEAD)
    return user


def _exit_code(*args) -> int | str | None:
    try:
        call_command(*args)
    except SystemExit as exc:
        return exc.code
    return 0


def _command(project, *extra) -> int | str | None:
    return _exit_code(
        "import_labelstudio",
        str(MINCU / "export.json"),
        "--project",
        project.slug,
        "--images",
        str(MINCU / "images"),
        "--config",
        str(MINCU / "label_config.xml"),
        "--mapping",
        str(MINCU / "mapping.yaml"),
        *extra,
    )


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted((MINCU / "images").iterdir()):
            archive.write(file, f"exported/{file.name}")
    return buffer.getvalue()


def _assert_imported_as_drawn(project) -> None:
    """Every annotation of the export, on its side, at its pixels, tiers and categories mapped."""
    pairs = {p.metadata["label_studio"]["task"]: p for p in Pair.objects.filter(project=project)}
    assert sorted(pairs) == sorted(e["task"] for e in EXPECTED)
    tiers = {"4 excellent": "excellent", "3 good": "good"}
    categories = {"Attribute change": "attribute", "Object added or removed": "object"}
    for task, want in zip(EXPORT, EXPECTED, strict=True):
        pair = pairs[want["task"]]
        choices = {
            r["from_name"]: r["value"]["choices"][0]
            for r in task["annotations"][0]["result"]
            if r["type"] == "choices"
        }
        annotations = list(Annotation.objects.filter(pair=pair).prefetch_related("changes"))
        assert len(annotations) == 2
        for annotation in annotations:
            [change] = annotation.changes.all()
            assert (change.boxes_a, change.boxes_b) == (want["boxes_a"], want["boxes_b"])
            assert annotation.tier == tiers[choices["quality"]]
            assert change.category == categories[choices["category"]]
    assert {p.status for p in pairs.values()} == {PairStatus.ACCEPTED}


def test_command_imports_every_annotation_on_its_side_with_tiers_and_categories(
    ls_project, capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        code = _command(ls_project)

    out = capsys.readouterr().out
    assert code == 0, out
    assert "image A: Image tag 'a', data key 'image_a'" in out
    assert "4 of 4 tasks imported with 8 annotations and 1 predictions, 0 rejected" in out
    _assert_imported_as_drawn(ls_project)
    [prediction] = Prediction.objects.all()
    assert (prediction.model_name, prediction.confidence) == ("diffnet-v2", 0.83)
    assert prediction.changes[0]["boxes_a"] == [[28, 20, 70, 52]]
    ls_project.refresh_from_db()
    assert ls_project.labelstudio["mapping"]["images"] == [["a", "image_a"], ["b", "image_b"]]


def test_dry_run_prints_the_mapping_and_counts_and_writes_nothing(ls_project, capsys):
    code = _command(ls_project, "--dry-run")

    out = capsys.readouterr().out
    assert code == 0, out
    assert "'quality' → tier" in out and "'empty_side' → absent side" in out
    assert "  tasks to import: 4" in out
    assert "  annotations to import: 8" in out
    assert "  predictions to import: 1" in out
    assert f"→ account {author_username(ls_project, '2')} (cannot log in)" in out
    assert (Pair.objects.count(), Job.objects.count(), get_user_model().objects.count()) == (
        0,
        0,
        0,
    )


def test_unknown_choice_value_is_reported_per_task_never_guessed(ls_project, tmp_path, capsys):
    mapping = (MINCU / "mapping.yaml").read_text().replace("  3 good: good\n", "")
    (tmp_path / "mapping.yaml").write_text(mapping)

    code = _exit_code(
        "import_labelstudio",
        str(MINCU / "export.json"),
        "--project",
        ls_project.slug,
        "--images",
        str(MINCU / "images"),
        "--config",
        str(MINCU / "label_config.xml"),
        "--mapping",
        str(tmp_path / "mapping.yaml"),
    )

    out = capsys.readouterr().out
    assert code == 1
    assert out.count("quality: '3 good' is no tier; map it in the mapping's tier section") == 4
    assert Annotation.objects.count() == 4 and Annotation.objects.filter(tier="good").count() == 0


def test_the_api_imports_with_config_and_mapping_parts(
    ls_project, ls_lead, django_capture_on_commit_callbacks
):
    client = APIClient()
    client.force_authenticate(ls_lead)

    def post(**extra):
        return client.post(
            f"/api/v1/projects/{ls_project.slug}/imports/",
            {
                "format": "label-studio",
                "manifest": SimpleUploadedFile("export.json", (MINCU / "export.json").read_bytes()),
                "images": SimpleUploadedFile("images.zip", _zip()),
                "config": SimpleUploadedFile("c.xml", (MINCU / "label_config.xml").read_bytes()),
                "mapping": SimpleUploadedFile("m.yaml", (MINCU / "mapping.yaml").read_bytes()),
                **extra,
            },
            format="multipart",
        )

    dry = post(dry_run="true")
    assert dry.status_code == 200, dry.json()
    assert dry.json()["preview"]["counts"]["annotations to import"] == 8
    assert Pair.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        response = post()
    assert response.status_code == 202, response.json()
    job = client.get(f"/api/v1/jobs/{response.json()['job']['id']}/").json()
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert (job["result"]["annotations"], job["result"]["predictions"]) == (8, 1)
    _assert_imported_as_drawn(ls_project)


def test_the_api_names_the_part_at_fault(ls_project, ls_lead):
    client = APIClient()
    client.force_authenticate(ls_lead)
    response = client.post(
        f"/api/v1/projects/{ls_project.slug}/imports/",
        {
            "format": "label-studio",
            "manifest": SimpleUploadedFile("export.json", (MINCU / "export.json").read_bytes()),
            "images": SimpleUploadedFile("images.zip", _zip()),
            "config": SimpleUploadedFile("c.xml", b"<View><Image name='a' value='$x'/></View>"),
            "dry_run": "true",
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert "exactly two <Image" in response.json()["error"]["fields"]["config"][0]


@pytest.mark.parametrize(
    ("upload", "content", "field", "words"),
    [
        ("manifest", b"{}", "manifest", "list of tasks"),
        ("mapping", b'entities_separator: ""', "mapping", "entities_separator"),
        (
            "config",
            b"<View><Image name='a' value='$a'/><Image name='b' value='$b'/>"
            b"<RectangleLabels name='r' toName='c'/></View>",
            "config",
            "no Image tag",
        ),
    ],
)
def test_the_api_names_the_upload_whose_step_failed(
    ls_project, ls_lead, upload, content, field, words
):
    """The part at fault is the step that refused it, even when its words name no file."""
    client = APIClient()
    client.force_authenticate(ls_lead)
    body = {
        "format": "label-studio",
        "manifest": SimpleUploadedFile("export.json", (MINCU / "export.json").read_bytes()),
        "images": SimpleUploadedFile("images.zip", _zip()),
        "dry_run": "true",
    }
    body[upload] = SimpleUploadedFile(
        f"{upload}.{'json' if upload == 'manifest' else 'txt'}", content
    )
    response = client.post(f"/api/v1/projects/{ls_project.slug}/imports/", body, format="multipart")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]
    assert words in response.json()["error"]["fields"][field][0]


def test_the_page_previews_then_imports(
    client, ls_project, ls_lead, django_capture_on_commit_callbacks
):
    client.force_login(ls_lead)
    preview = client.post(
        f"/p/{ls_project.slug}/upload/",
        {
            "source_format": "label-studio",
            "images": SimpleUploadedFile("images.zip", _zip()),
            "manifest": SimpleUploadedFile("export.json", (MINCU / "export.json").read_bytes()),
            "config": SimpleUploadedFile(
                "label_config.xml", (MINCU / "label_config.xml").read_bytes()
            ),
            "mapping": (MINCU / "mapping.yaml").read_text(),
        },
    )
    page = preview.content.decode()
    assert preview.status_code == 200, page
    assert "image A: Image tag &#x27;a&#x27;, data key &#x27;image_a&#x27;" in page
    assert 'Annotations to import</th><td class="num">8<' in page
    assert Pair.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/p/{ls_project.slug}/upload/",
            {"staged": preview.context["token"], "action": "import"},
        )
    assert response.status_code == 302
    _assert_imported_as_drawn(ls_project)
    job_page = client.get(response.url).content.decode()
    assert "Label Studio mapping used" in job_page


def test_release_round_trip_keeps_every_box_and_field(
    ls_project, ls_lead, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        assert _command(ls_project) == 0
    with django_capture_on_commit_callbacks(execute=True):
        release = release_create(project=ls_project, name="v1", plan=SplitPlan(), user=ls_lead)
    release.refresh_from_db()

    def read(name: str) -> bytes:
        with default_storage.open(f"{release.prefix}/{name}", "rb") as handle:
            return handle.read()

    config = read("label_config.xml")
    assert config == (MINCU / "label_config.xml").read_bytes()
    exported = json.loads(read("label_studio.json"))
    by_name = {
        Pair.objects.get(pk=t["data"]["pair_id"]).metadata["label_studio"]["task"]: t
        for t in exported
    }
    assert len(by_name) == len(EXPORT)
    for original in EXPORT:
        back = by_name[original["id"]]
        assert set(back["data"]) >= {"image_a", "image_b"}
        assert _fields(back["annotations"][0]["result"]) == _fields(
            original["annotations"][0]["result"]
        )
    # And Label Studio → Diffmark → Label Studio → Diffmark gives the same answers.
    values = parse_value_map((MINCU / "mapping.yaml").read_bytes())
    mapping = resolve_mapping(EXPORT, config, values)
    again, errors = parse_export(json.dumps(exported).encode(), ReadOptions(mapping, values))
    first, _ = parse_export((MINCU / "export.json").read_bytes(), ReadOptions(mapping, values))
    assert errors == []
    originals = {t.task_id: t.annotations[0].as_answer()["changes"] for t in first}
    for task in again:
        ls_task = Pair.objects.get(pk=task.metadata["pair_id"]).metadata["label_studio"]["task"]
        assert task.annotations[0].as_answer()["changes"] == originals[ls_task]


def _fields(result: list[dict]) -> dict:
    """What a Label Studio annotation says, by control: box pixels per side, texts, choices."""
    said: dict = {}
    for r in result:
        name = r.get("from_name")
        if r["type"] == "rectanglelabels":
            v = r["value"]
            box = [
                round(v["x"] * r["original_width"] / 100),
                round(v["y"] * r["original_height"] / 100),
                round((v["x"] + v["width"]) * r["original_width"] / 100),
                round((v["y"] + v["height"]) * r["original_height"] / 100),
            ]
            said.setdefault(name, []).append((r["to_name"], box, v["rectanglelabels"]))
        elif r["type"] == "textarea":
            said[name] = r["value"]["text"]
        elif r["type"] == "choices":
            said[name] = r["value"]["choices"]
    return said


# The account takeover (issue 12, item 1) ------------------------------------------------------


def test_a_lead_of_another_project_cannot_plant_an_author_account(
    client, ls_project, django_capture_on_commit_callbacks
):
    other = project_create(slug="other", name="Other")
    attacker = user_ensure(username="attacker", password="a-long-attacker-password")
    membership_set(project=other, user=attacker, role=Role.LEAD)
    client.force_login(attacker)
    # The old name (labelstudio-<id>) can be made with a password: the import no longer uses it.
    planted = client.post(
        "/p/other/members/",
        {"username": "labelstudio-2", "role": "annotator", "password": "Planted-pass-123"},
    )
    assert planted.status_code == 302
    # The new per-project name cannot be made or claimed from a members page.
    for name in (author_username(ls_project, "2"), f"ls:{ls_project.pk}:3"):
        refused = client.post(
            "/p/other/members/",
            {"username": name, "role": "annotator", "password": "Planted-pass-123"},
        )
        assert "Enter a valid username" in refused.content.decode()
        assert not get_user_model().objects.filter(username=name).exists()
    with pytest.raises(CommandError, match="reserved"):
        call_command("add_member", "other", author_username(ls_project, "2"), "annotator")

    with django_capture_on_commit_callbacks(execute=True):
        assert _command(ls_project) == 0

    planted_user = get_user_model().objects.get(username="labelstudio-2")
    assert not Membership.objects.filter(project=ls_project, user=planted_user).exists()
    assert not Annotation.objects.filter(annotator=planted_user).exists()
    authors = get_user_model().objects.filter(annotations__pair__project=ls_project).distinct()
    assert sorted(a.username for a in authors) == [
        author_username(ls_project, "2"),
        author_username(ls_project, "3"),
    ]
    for author in authors:
        assert not author.is_active and not author.has_usable_password()
        assert not client.login(username=author.username, password="")
        assert list(author.memberships.values_list("project__slug", flat=True)) == ["from-ls"]


def test_an_author_name_that_can_log_in_is_never_used(ls_project, capsys):
    # e.g. made in Django admin by mistake, with a password
    user_ensure(username=author_username(ls_project, "2"), password="Some-password-123")

    code = _command(ls_project)

    out = capsys.readouterr().out
    assert code == 1
    assert out.count(f"the account {author_username(ls_project, '2')} exists and can log in") == 4
    taken = get_user_model().objects.get(username=author_username(ls_project, "2"))
    assert not Membership.objects.filter(user=taken).exists()
    assert Annotation.objects.count() == 4  # user 3's


def test_authors_mapped_to_members_chosen_by_the_lead(ls_project, tmp_path):
    alice = user_ensure(username="alice", password="a-long-alice-password")
    membership_set(project=ls_project, user=alice, role=Role.ANNOTATOR)
    mapping = (MINCU / "mapping.yaml").read_text() + 'authors:\n  "2": alice\n'
    (tmp_path / "mapping.yaml").write_text(mapping)
    args = ["import_labelstudio", str(MINCU / "export.json"), "--project", ls_project.slug]
    args += ["--images", str(MINCU / "images"), "--config", str(MINCU / "label_config.xml")]

    assert _exit_code(*args, "--mapping", str(tmp_path / "mapping.yaml")) == 0

    assert Annotation.objects.filter(annotator=alice).count() == 4
    outsider = user_ensure(username="bob", password="a-long-bob-password")
    (tmp_path / "bad.yaml").write_text(mapping.replace("alice", outsider.username))
    assert _exit_code(*args, "--mapping", str(tmp_path / "bad.yaml")) == 2


# The second config: other tag names, keys and reference styles --------------------------------

VDIFF = FIXTURES / "vdiff"


def _vdiff_command(project) -> int | str | None:
    return _exit_code(
        "import_labelstudio",
        str(VDIFF / "export.json"),
        "--project",
        project.slug,
        "--images",
        str(VDIFF / "images"),
        "--config",
        str(VDIFF / "label_config.xml"),
        "--mapping",
        str(VDIFF / "mapping.json"),
    )


@pytest.fixture
def vdiff_project(db):
    return project_create(slug="vdiff-ls", name="VDiff from LS", preset="vdiff", overlap=2)


def test_second_config_imports_local_files_s3_and_signed_urls_by_path(vdiff_project, capsys):
    code = _vdiff_command(vdiff_project)

    out = capsys.readouterr().out
    assert code == 0, out
    assert "note task 1 (id " in out and "rotated 15°: imported as its upright bounds" in out
    expected = json.loads((VDIFF / "expected.json").read_text())
    pairs = {p.metadata["label_studio"]["task"]: p for p in Pair.objects.all()}
    assert [pairs[e["task"]].metadata["source_files"] for e in expected] == [
        [f"before/{n:03}.png", f"after/{n:03}.png"] for n in range(1, 5)
    ]
    for want in expected:
        for annotation in Annotation.objects.filter(pair=pairs[want["task"]]):
            changes = list(annotation.changes.all())
            assert [c.boxes_b for c in changes] == [c["boxes_b"] for c in want["changes"]]
            assert {c.category for c in changes} <= {
                "regional_colour",
                "appear_disappear",
                "lighting",
            }


def test_rotated_boxes_are_refused_when_the_project_says_so(vdiff_project, capsys):
    vdiff_project.rotated_boxes = "refuse"
    vdiff_project.save(update_fields=["rotated_boxes"])

    assert _vdiff_command(vdiff_project) == 1

    out = capsys.readouterr().out
    assert "is rotated (15°); this project takes only upright boxes" in out
    assert Annotation.objects.count() == 7


def test_s3_reference_to_our_own_bucket_is_read_from_storage(ls_project, settings, tmp_path):
    from annotator.intake.labelstudio.plan import read_image
    from pairdiff.labelstudio.refs import ImageFinder, ImageNotFound
    from pairdiff.sources import open_source

    settings.AWS_STORAGE_BUCKET_NAME = "our-bucket"
    data = (MINCU / "images" / "coffee_a.png").read_bytes()
    key = default_storage.save("pairs/from-ls/ls-objects/coffee_a.png", io.BytesIO(data))
    empty = tmp_path / "empty"
    empty.mkdir()
    with open_source(empty, max_entry_bytes=10**7) as source:
        finder = ImageFinder(source.names())
        assert read_image(f"s3://our-bucket/{key}", source, finder, project=ls_project) == (
            f"s3://our-bucket/{key}",
            data,
        )
        with pytest.raises(ImageNotFound):
            read_image(f"s3://someone-else/{key}", source, finder, project=ls_project)
