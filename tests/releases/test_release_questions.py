"""Releases that check their own questions: the baseline limit, the override, records that
cannot make a question, verified questions, and warnings a reader sees."""

import json

from django.core.files.storage import default_storage
from django.core.management import call_command
from django.urls import reverse

from annotator.models import Pair
from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import SplitPlan
from releases.building import release_create
from releases.models import QuestionEdit, Release, ReleaseStatus
from releases.questions import question_previews, question_unverify, question_verify
from tests.conftest import PASSWORD
from tests.factories import answer, make_accepted

DESCRIPTIONS = [
    "The patch changed from red to blue.",
    "A cup appeared on the left.",
    "The cup on the right disappeared.",
    "There are now 5 apples instead of 4.",
    "The table became blurred.",
    "The whole image became brighter.",
]


def _accept(project, annotators, n, *, start=0):
    bodies = [answer(description=DESCRIPTIONS[(start + i) % len(DESCRIPTIONS)]) for i in range(n)]
    return make_accepted(project, annotators, bodies)


def _build(project, capture, name="v1", *, options=None, **plan) -> Release:
    with capture(execute=True):
        release = release_create(
            project=project, name=name, plan=SplitPlan(**plan), options=options
        )
    release.refresh_from_db()
    return release


def _questions(release: Release) -> list[dict]:
    with default_storage.open(f"{release.prefix}/questions.jsonl", "rb") as handle:
        return [json.loads(line) for line in handle.read().decode().splitlines()]


def test_a_build_above_the_baseline_limit_is_refused_naming_the_questions(
    project, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    pairs = _accept(project, [annotator_1, annotator_2], 12)
    project.question_baseline_limit = 0.0  # any baseline that ever finds the truth is too good
    project.save()

    release = _build(project, django_capture_on_commit_callbacks)

    assert release.status == ReleaseStatus.FAILED
    assert "without the images, above the project's limit of 0.0%" in release.message
    named = [p.external_id or f"pair-{p.pk}" for p in pairs]
    if "Fix the questions of " in release.message:
        listed = release.message.split("Fix the questions of ")[1].split(" on the questions")[0]
        assert all(item.strip() in named for item in listed.split(","))
    else:  # every question a three-way tie: 1/3 is still above a limit of 0
        assert "the baseline is at chance on every one" in release.message
    assert release.options["baseline_limit"] == 0.0
    assert not release.records.exists()


def test_a_leads_override_builds_it_and_the_card_says_so(
    project, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    _accept(project, [annotator_1, annotator_2], 12)
    project.question_baseline_limit = 0.0
    project.save()

    release = _build(
        project, django_capture_on_commit_callbacks, options=ReleaseOptions(allow_baselines=True)
    )

    assert release.status == ReleaseStatus.READY
    gate = release.manifest["text_baselines"]["gate"]
    assert gate["over_limit"] and gate["overridden"] and gate["limit"] == 0.0
    assert any("a lead built the release anyway" in w for w in release.manifest["warnings"])
    with default_storage.open(f"{release.prefix}/README.md", "rb") as handle:
        assert "built on a lead's override" in handle.read().decode()


def test_an_accepted_no_difference_description_never_fails_a_build(
    project, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    # Five: "The whole image became brighter." alone has one well-formed negative ("darker";
    # "cooler" changes another property), so it would be left out too.
    _accept(project, [annotator_1, annotator_2], 5)
    [odd] = make_accepted(
        project,
        [annotator_1, annotator_2],
        [answer(description="There is no difference between the two images.")],
    )

    release = _build(project, django_capture_on_commit_callbacks, name="v1")
    again = _build(project, django_capture_on_commit_callbacks, name="v2")

    for built in (release, again):
        assert built.status == ReleaseStatus.READY, built.message
        left = built.manifest["questions"]["left_out"]
        assert [item["pair_id"] for item in left] == [odd.pk]
        assert {q["pair_id"] for q in _questions(built)} == set(
            built.records.exclude(pair=odd).values_list("pair_id", flat=True)
        )
        assert any(f"pair {odd.pk}" in w for w in built.manifest["warnings"])


def test_verified_negatives_are_frozen_for_later_releases(
    project, annotator_1, annotator_2, lead, django_capture_on_commit_callbacks
):
    pairs = _accept(project, [annotator_1, annotator_2], 6)
    target = pairs[0]
    question_verify(pair=target, user=lead)
    edit = QuestionEdit.objects.get(pair=target)
    assert edit.verified and edit.verified_by == lead and len(edit.negatives) == 2
    frozen = list(edit.negatives)
    # More accepted pairs change what derived negatives are drawn from; verified ones stay.
    _accept(project, [annotator_1, annotator_2], 6, start=3)

    release = _build(project, django_capture_on_commit_callbacks, val_fraction=0, test_fraction=0)

    question = next(q for q in _questions(release) if q["pair_id"] == target.pk)
    assert set(frozen) <= set(question["options"].values())
    assert release.manifest["questions"]["negatives"]["verified"] == 1
    preview = question_previews(project, Pair.objects.filter(pk=target.pk))[0]
    assert preview.verified and preview.negatives == frozen
    question_unverify(pair=target)
    assert not QuestionEdit.objects.filter(pair=target).exists()


def test_the_questions_page_verifies_a_question(client, project, annotator_1, annotator_2, lead):
    [pair] = _accept(project, [annotator_1, annotator_2], 1)
    client.login(username="lead", password=PASSWORD)
    response = client.post(reverse("releases:question", args=[pair.pk]), {"action": "verify"})
    assert response.status_code == 302
    assert QuestionEdit.objects.get(pair=pair).verified
    page = client.get(reverse("releases:questions", args=[project.slug]))
    assert b"q-verified" in page.content and b"Unverify" in page.content


def test_a_release_with_an_empty_split_is_ready_with_a_warning_on_both_pages(
    client, project, annotator_1, annotator_2, lead, researcher, django_capture_on_commit_callbacks
):
    _accept(project, [annotator_1, annotator_2], 2)
    release = _build(project, django_capture_on_commit_callbacks)
    assert release.status == ReleaseStatus.READY
    assert "val is empty: 2 accepted pairs are too few for the plan" in release.manifest["warnings"]

    client.login(username="researcher", password=PASSWORD)
    listing = client.get(reverse("releases:releases", args=[project.slug])).content.decode()
    assert "release-warnings" in listing and "val is empty" in listing
    page = client.get(reverse("releases:release", args=[release.pk])).content.decode()
    assert 'role="alert"' in page and "val is empty" in page
    assert "Questions without the images" in page


def test_the_api_takes_the_release_options(
    client, project, annotator_1, annotator_2, lead, django_capture_on_commit_callbacks
):
    _accept(project, [annotator_1, annotator_2], 3)
    client.login(username="lead", password=PASSWORD)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/v1/projects/{project.slug}/releases/",
            {"name": "v1", "strict": True, "swap_ab": True, "allow_baselines": True},
            content_type="application/json",
        )
    assert response.status_code == 202, response.content
    release = Release.objects.get(pk=response.json()["release"]["id"])
    assert release.options == {
        "strict": True,
        "strict_no_lead": False,
        "swap_ab": True,
        "baseline_limit": project.question_baseline_limit,
        "allow_baselines": True,
    }
    assert response.json()["release"]["options"] == release.options


def test_the_command_takes_the_override_and_prints_the_best_baseline(
    project, annotator_1, annotator_2, capsys
):
    _accept(project, [annotator_1, annotator_2], 3)
    call_command("build_release", "--project", project.slug, "--name", "v1", "--allow-baselines")
    out = capsys.readouterr().out
    assert "best text-only baseline:" in out
    assert Release.objects.get(project=project).options["allow_baselines"] is True
