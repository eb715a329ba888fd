import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotator.models import Pair
from projects.models import Membership, Project, Role
from tests.images import edited_pair


def _exit_code(*args) -> int | str | None:
    try:
        call_command(*args)
    except SystemExit as exc:
        return exc.code
    return 0


def test_create_project_with_vdiff_preset(db):
    call_command(
        "create_project", "scenes", "--name", "Scenes", "--preset", "vdiff", "--overlap", "3"
    )

    project = Project.objects.get(slug="scenes")
    assert (project.name, project.overlap, len(project.categories)) == ("Scenes", 3, 10)
    assert "ocr_text" in project.category_slugs


def test_create_project_refuses_an_existing_slug(project):
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_project", project.slug)


def test_add_member_creates_the_user_and_sets_the_role(project):
    call_command("add_member", project.slug, "newcomer", "lead", "--password", "s3cret-pass")

    user = get_user_model().objects.get(username="newcomer")
    assert user.check_password("s3cret-pass")
    assert Membership.objects.get(user=user, project=project).role == Role.LEAD


def test_add_member_changes_an_existing_role(project, annotator_1):
    call_command("add_member", project.slug, annotator_1.username, "researcher")

    assert Membership.objects.get(user=annotator_1).role == Role.RESEARCHER


def test_add_member_to_unknown_project_fails(db):
    with pytest.raises(CommandError, match="no project"):
        call_command("add_member", "nope", "someone", "annotator")


@pytest.fixture
def manifest_dir(tmp_path):
    a, b = edited_pair()
    (tmp_path / "a.png").write_bytes(a)
    (tmp_path / "b.png").write_bytes(b)
    return tmp_path


def test_import_pairs_exits_0_when_every_row_is_imported(project, manifest_dir, capsys):
    manifest = manifest_dir / "m.jsonl"
    manifest.write_text(json.dumps({"id": "x", "image_a": "a.png", "image_b": "b.png"}))

    assert _exit_code("import_pairs", str(manifest), "--project", project.slug) == 0
    assert Pair.objects.count() == 1
    assert "1 of 1 rows imported" in capsys.readouterr().out


def test_import_pairs_exits_1_and_names_rejected_rows(project, manifest_dir, capsys):
    manifest = manifest_dir / "m.jsonl"
    rows = [
        {"id": "x", "image_a": "a.png", "image_b": "b.png"},
        {"id": "y", "image_a": "a.png", "image_b": "gone.png"},
    ]
    manifest.write_text("\n".join(json.dumps(r) for r in rows))

    assert _exit_code("import_pairs", str(manifest), "--project", project.slug) == 1
    out = capsys.readouterr().out
    assert "rejected line 2 (y): image_b:" in out
    assert Pair.objects.count() == 1


@pytest.mark.parametrize(
    "args",
    [
        ["missing.jsonl", "--project", "cars"],
        ["m.jsonl", "--project", "no-such-project"],
        ["m.jsonl", "--project", "cars", "--images", "not-a-folder"],
    ],
)
def test_import_pairs_exits_2_on_unusable_input(project, manifest_dir, monkeypatch, args):
    monkeypatch.chdir(manifest_dir)
    (manifest_dir / "m.jsonl").write_text('{"image_a": "a.png", "image_b": "b.png"}')

    assert _exit_code("import_pairs", *args) == 2
    assert Pair.objects.count() == 0
