"""Release pages (list, build, retry, one release) and the question editor, for each role."""

from __future__ import annotations

import re

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone

from jobs.lifecycle import job_create
from jobs.models import JobKind, JobStatus
from releases.models import QuestionEdit, Release, ReleaseStatus
from review.models import Decision
from review.resolutions import resolution_record
from tests.factories import answer, make_pair

CARD = """# Cars — v1 (version 1)

<script>alert("card")</script>

| category | easy | total |
|---|---|---|
| Attribute | 2 | 2 |
"""


def _manifest(**counts) -> dict:
    files = {
        "README.md": {"size": 120, "sha256": "a" * 64},
        "benchmark.json": {"size": 2048, "sha256": "b" * 64},
        "coco_a.json": {"size": 512, "sha256": "c" * 64},
        "images/1_a.png": {"size": 1_000_000, "sha256": "d" * 64},
        "images/1_b.png": {"size": 1_000_000, "sha256": "e" * 64},
        "images/2_a.png": {"size": 500_000, "sha256": "f" * 64},
    }
    return {
        "release_name": "v1",
        "version": 1,
        "project_name": "Cars",
        "licence": "CC BY 4.0",
        "description": "",
        "split_plan": {"seed": 0},
        "counts": {
            "total": 4,
            "splits": {"train": 2, "val": 1, "test": 1},
            "by_split": {
                "train": {"attribute": {"easy": 1, "hard": 1}},
                "val": {"object": {"medium": 1}},
                "test": {"attribute": {"none": 1}},
            },
        }
        | counts,
        "agreement": {
            "pairs": 4,
            "mean_iou": 0.8123,
            "median_iou": 0.8,
            "accepted_by_agreement": 3,
            "accepted_by_lead": 1,
        },
        "notes": ["attribute: 2 hard test pairs asked, only 1 accepted"],
        "files": files,
    }


def make_release(project, *, name="v1", version=1, status=ReleaseStatus.READY, **fields):
    release = Release.objects.create(
        project=project,
        name=name,
        version=version,
        status=status,
        manifest=_manifest() if status == ReleaseStatus.READY else None,
        ready_at=timezone.now() if status == ReleaseStatus.READY else None,
        **fields,
    )
    if status == ReleaseStatus.READY:
        default_storage.save(f"{release.prefix}/README.md", ContentFile(CARD.encode()))
    return release


def accept(project, lead, **change):
    """A pair whose standing answer is a lead's merge with one change."""
    pair = make_pair(project)
    resolution_record(pair_id=pair.pk, lead=lead, decision=Decision.MERGE, answer=answer(**change))
    pair.refresh_from_db()
    return pair


def _plan(**changes) -> dict:
    return {"name": "v1", "seed": "0", "val_fraction": "0.1", "test_fraction": "0.1"} | changes


def _field_errors(html: str, field: str) -> list[str]:
    """The error paragraphs of the form field whose input has id ``id_<field>``."""
    block = re.search(
        rf'<div class="field[^"]*">(?:(?!<div class="field).)*id="id_{field}"'
        r'(?:(?!<div class="field).)*',
        html,
        re.S,
    )
    return re.findall(r'<p class="field-error">(.*?)</p>', block.group(0)) if block else []


# --- the releases list ---------------------------------------------------------------------


def test_researchers_see_ready_releases_only_with_their_split_counts(client, project, researcher):
    make_release(project)
    make_release(project, name="v2", version=2, status=ReleaseStatus.BUILDING)
    make_release(project, name="v3", version=3, status=ReleaseStatus.FAILED, message="disk full")
    client.force_login(researcher)

    response = client.get(reverse("releases:releases", args=["cars"]))

    html = response.content.decode()
    assert response.status_code == 200
    names = re.findall(r'class="release-name"[^>]*>([^<]+)<', html)
    assert names == ["v1"]
    assert re.search(
        r"train</span> <b>2</b>.*val</span> <b>1</b>.*test</span> <b>1</b>", html, re.S
    )
    assert reverse("releases:release", args=[Release.objects.get(name="v1").pk]) in html
    assert "New release" not in html and "Build again" not in html


def test_leads_see_every_release_newest_first_with_progress_and_failures(client, project, lead):
    make_release(project)
    job = job_create(kind=JobKind.RELEASE, project=project, user=lead)
    job.status, job.total, job.done = JobStatus.RUNNING, 10, 4
    job.save()
    make_release(project, name="v2", version=2, status=ReleaseStatus.BUILDING, job=job)
    failed = make_release(
        project, name="v3", version=3, status=ReleaseStatus.FAILED, message="OSError: disk full"
    )
    client.force_login(lead)

    html = client.get(reverse("releases:releases", args=["cars"])).content.decode()

    assert html.index(">v3<") < html.index(">v2<") < html.index(">v1<")
    assert 'aria-valuenow="40"' in html and "4/10" in html  # the job's progress bar
    assert 'hx-trigger="every 2s"' in html  # the list refreshes while something builds
    assert "OSError: disk full" in html
    assert reverse("releases:release_retry", args=[failed.pk]) in html
    assert "New release" in html and 'value="v4"' in html  # the next name is suggested


def test_annotators_and_outsiders_do_not_reach_releases(client, project, annotator_1, outsider):
    url = reverse("releases:releases", args=["cars"])
    client.force_login(annotator_1)
    assert client.get(url).status_code == 403
    client.force_login(outsider)
    assert client.get(url).status_code == 404


def test_the_form_builds_a_release_and_redirects_back(
    client, project, lead, django_capture_on_commit_callbacks
):
    for _ in range(3):
        accept(project, lead)
    client.force_login(lead)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("releases:releases", args=["cars"]),
            _plan(seed="7", test_per_category="1", mincu_ratio="on"),
        )

    assert response.status_code == 302
    assert response["Location"] == reverse("releases:releases", args=["cars"])
    release = Release.objects.get()
    assert (release.name, release.version, release.created_by) == ("v1", 1, lead)
    assert release.plan == {
        "seed": 7,
        "val_fraction": 0.1,
        "test_fraction": 0.1,
        "test_per_category": 1,
        "test_ratio": [1, 2, 2],
    }
    assert release.status == ReleaseStatus.READY  # eager Celery: built once committed
    page = client.get(response["Location"]).content.decode()
    # the view answered before the commit (the test's capture), so it told of the build
    assert "Release v1 is building; it is listed below." in page
    assert f'href="{reverse("releases:release", args=[release.pk])}"' in page


def test_without_accepted_pairs_the_refusal_shows_next_to_the_name(client, project, lead):
    make_pair(project)
    client.force_login(lead)

    response = client.post(reverse("releases:releases", args=["cars"]), _plan())

    assert response.status_code == 400
    assert _field_errors(response.content.decode(), "name") == [
        "the project has no accepted pairs to release yet"
    ]
    assert not Release.objects.exists()


def test_a_taken_name_is_refused_next_to_the_name(client, project, lead):
    accept(project, lead)
    make_release(project)
    client.force_login(lead)

    response = client.post(reverse("releases:releases", args=["cars"]), _plan())

    assert response.status_code == 400
    [error] = _field_errors(response.content.decode(), "name")
    assert "exists already" in error
    assert Release.objects.count() == 1


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"val_fraction": "0.6", "test_fraction": "0.5"},
            "plan",
            "val and test fractions together must not exceed 1",
        ),
        ({"val_fraction": "1.5"}, "val_fraction", "Ensure this value is less than or equal to 1."),
        (
            {"ratio_easy": "1", "ratio_medium": "2"},
            "ratio_easy",
            "the difficulty ratio needs all three parts (easy, medium, hard), or none",
        ),
        (
            {"ratio_easy": "0", "ratio_medium": "0", "ratio_hard": "0"},
            "ratio_easy",
            "the difficulty ratio needs three non-negative parts (easy:medium:hard), not all zero",
        ),
        ({"name": ""}, "name", "This field is required."),
    ],
)
def test_a_bad_plan_is_explained_next_to_its_field(client, project, lead, changes, field, message):
    accept(project, lead)
    client.force_login(lead)

    response = client.post(reverse("releases:releases", args=["cars"]), _plan(**changes))

    assert response.status_code == 400
    html = response.content.decode()
    if field == "ratio_easy":  # the ratio's three inputs share one error line
        assert re.search(r'<fieldset class="ratio has-error">.*' + re.escape(message), html, re.S)
    elif field == "plan":  # about two fields: under their row
        assert f'<p class="field-error plan-error" role="alert">{message}</p>' in html
    else:
        assert _field_errors(html, field) == [message]
    assert not Release.objects.exists()


def test_researchers_cannot_build(client, project, researcher, lead):
    accept(project, lead)
    client.force_login(researcher)

    response = client.post(reverse("releases:releases", args=["cars"]), _plan())

    assert response.status_code == 403
    assert not Release.objects.exists()


def test_build_again_rebuilds_a_failed_release(
    client, project, lead, django_capture_on_commit_callbacks
):
    accept(project, lead)
    old_job = job_create(kind=JobKind.RELEASE, project=project, user=lead)
    failed = make_release(
        project,
        status=ReleaseStatus.FAILED,
        message="OSError: disk full",
        job=old_job,
        plan={"seed": 0, "val_fraction": 0.1, "test_fraction": 0.1},
    )
    client.force_login(lead)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("releases:release_retry", args=[failed.pk]))

    assert response.status_code == 302
    assert response["Location"] == reverse("releases:releases", args=["cars"])
    failed.refresh_from_db()
    assert failed.status == ReleaseStatus.READY and failed.message == ""
    assert failed.job_id != old_job.pk and failed.manifest["counts"]["total"] == 1


def test_build_again_on_a_ready_release_is_refused_with_a_message(client, project, lead):
    release = make_release(project)
    client.force_login(lead)

    response = client.post(reverse("releases:release_retry", args=[release.pk]), follow=True)

    assert "only a failed release can be built again" in response.content.decode()
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY


def test_researchers_cannot_retry(client, project, researcher):
    failed = make_release(project, status=ReleaseStatus.FAILED, message="boom")
    client.force_login(researcher)

    assert client.post(reverse("releases:release_retry", args=[failed.pk])).status_code == 403
    failed.refresh_from_db()
    assert failed.status == ReleaseStatus.FAILED


# --- one release ---------------------------------------------------------------------------


def test_the_release_page_shows_card_counts_agreement_files_and_the_api(
    client, project, researcher
):
    release = make_release(project)
    client.force_login(researcher)

    response = client.get(reverse("releases:release", args=[release.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Cars — v1 (version 1)</h1>" in html  # the card, rendered
    assert "<th>category</th>" in html  # its table, too
    # counts: split × category × difficulty, with the project's category names
    train = html[html.index(">train <") : html.index(">val <")]
    assert re.search(r"<td>Attribute</td><td class=\"num\">1</td>", train)
    assert '<th class="num">none</th>' in html  # a pair without a measurable box
    assert "0.812" in html and "CC BY 4.0" in html
    assert "attribute: 2 hard test pairs asked, only 1 accepted" in html
    # files: the main ones with size and sha256, the images summarised, none listed one by one
    assert f'href="/api/v1/releases/{release.pk}/files/benchmark.json"' in html
    assert "2.0\xa0KB" in html and 'title="' + "b" * 64 + '"' in html
    assert "3 images, 2.4\xa0MB" in html
    assert "images/1_a.png" not in html
    # the API snippet
    assert "Authorization: Token $DIFFMARK_TOKEN" in html
    assert f"http://testserver/api/v1/releases/{release.pk}/records/?split=test" in html


def test_the_card_shows_markup_as_text(client, project, lead):
    release = make_release(project)
    client.force_login(lead)

    html = client.get(reverse("releases:release", args=[release.pk])).content.decode()

    assert "&lt;script&gt;alert(&quot;card&quot;)&lt;/script&gt;" in html
    assert '<script>alert("card")' not in html


def test_a_real_build_escapes_the_project_description_in_the_card(
    client, project, lead, django_capture_on_commit_callbacks
):
    project.description = "<script>alert('x')</script> Cars that changed colour."
    project.save()
    accept(project, lead)
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("releases:releases", args=["cars"]), _plan())
    release = Release.objects.get()
    assert release.status == ReleaseStatus.READY, release.message

    html = client.get(reverse("releases:release", args=[release.pk])).content.decode()

    assert "&lt;script&gt;alert('x')&lt;/script&gt; Cars that changed colour." in html
    assert "<script>alert(" not in html
    assert "2 images, " in html  # the two sides of the one pair, summarised
    assert f"/api/v1/releases/{release.pk}/files/questions.jsonl" in html
    assert "manifest.json" in html


@pytest.mark.parametrize("status", [ReleaseStatus.BUILDING, ReleaseStatus.FAILED])
def test_researchers_get_404_for_a_release_that_is_not_ready(client, project, researcher, status):
    release = make_release(project, status=status)
    client.force_login(researcher)

    assert client.get(reverse("releases:release", args=[release.pk])).status_code == 404


def test_leads_see_a_release_that_is_still_building(client, project, lead):
    release = make_release(project, status=ReleaseStatus.BUILDING)
    client.force_login(lead)

    response = client.get(reverse("releases:release", args=[release.pk]))

    assert response.status_code == 200
    assert "The release is being built" in response.content.decode()


def test_annotators_and_outsiders_get_404_for_a_release(client, project, annotator_1, outsider):
    release = make_release(project)
    for user in (annotator_1, outsider):
        client.force_login(user)
        assert client.get(reverse("releases:release", args=[release.pk])).status_code == 404


# --- questions ------------------------------------------------------------------------------


def _questions(client, **query):
    return client.get(reverse("releases:questions", args=["cars"]), query).content.decode()


def test_the_questions_page_shows_each_accepted_pair_with_its_derived_negatives(
    client, project, lead
):
    pair = accept(project, lead)
    make_pair(project)  # not accepted: no question
    client.force_login(lead)

    html = _questions(client)

    assert "the true description, these two negatives and “no difference”" in html
    assert html.count('class="question-row') == 1
    assert reverse("annotator:pair_thumb", args=[pair.pk, "a"]) in html
    assert reverse("annotator:pair_thumb", args=[pair.pk, "b"]) in html
    assert "The patch changed from red to blue." in html and "Attribute" in html
    assert '<span class="badge q-derived">derived</span>' in html
    inputs = re.findall(r'name="negative_[12]" value="([^"]*)"', html)
    assert len(inputs) == 2 and all(inputs) and "The patch changed from red to blue." not in inputs


def test_saving_negatives_with_htmx_swaps_the_row(client, project, lead):
    pair = accept(project, lead)
    client.force_login(lead)

    response = client.post(
        reverse("releases:question", args=[pair.pk]),
        {"negative_1": "The patch changed from red to green.", "negative_2": "The patch vanished."},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert html.startswith(f'<li class="question-row card" id="q-{pair.pk}">')
    assert "<html" not in html
    assert "edited by lead" in html and "Saved." in html
    assert 'value="The patch changed from red to green."' in html
    edit = QuestionEdit.objects.get(pair=pair)
    assert edit.negatives == ["The patch changed from red to green.", "The patch vanished."]
    assert edit.description == "The patch changed from red to blue." and edit.edited_by == lead


def test_bad_negatives_come_back_in_place_with_what_was_typed(client, project, lead):
    pair = accept(project, lead)
    client.force_login(lead)

    response = client.post(
        reverse("releases:question", args=[pair.pk]),
        {"negative_1": "The patch changed from red to blue.", "negative_2": ""},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert response.status_code == 200  # htmx swaps only successful responses
    errors = re.findall(r'<p class="field-error" id="q\d+-n(\d)-error">(.*?)</p>', html)
    assert errors == [
        ("1", "this is the true description; a negative must be false"),
        ("2", "write a false description of the change"),
    ]
    assert 'value="The patch changed from red to blue."' in html
    assert not QuestionEdit.objects.exists()


def test_a_plain_post_saves_and_goes_back_to_its_page(client, project, lead):
    pair = accept(project, lead)
    client.force_login(lead)

    response = client.post(
        reverse("releases:question", args=[pair.pk]),
        {"negative_1": "A cat appeared.", "negative_2": "The patch moved left.", "page": "1"},
    )

    assert response.status_code == 302
    assert (
        response["Location"]
        == reverse("releases:questions", args=["cars"]) + f"?page=1#q-{pair.pk}"
    )
    assert QuestionEdit.objects.get(pair=pair).negatives == [
        "A cat appeared.",
        "The patch moved left.",
    ]


def test_a_plain_post_with_errors_shows_the_row_alone(client, project, lead):
    pair = accept(project, lead)
    client.force_login(lead)

    response = client.post(
        reverse("releases:question", args=[pair.pk]),
        {"negative_1": "Same thing.", "negative_2": "same thing"},
    )

    html = response.content.decode()
    assert response.status_code == 400
    assert "<html" in html and "← Back to the questions" in html
    assert "the two negatives must differ" in html
    assert not QuestionEdit.objects.exists()


def test_reset_goes_back_to_the_derived_negatives(client, project, lead):
    pair = accept(project, lead)
    client.force_login(lead)
    derived = re.findall(r'name="negative_[12]" value="([^"]*)"', _questions(client))
    QuestionEdit.objects.create(
        pair=pair,
        description="The patch changed from red to blue.",
        negatives=["One.", "Two."],
        edited_by=lead,
    )

    response = client.post(
        reverse("releases:question", args=[pair.pk]),
        {"action": "reset", "negative_1": "One.", "negative_2": "Two."},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert not QuestionEdit.objects.exists()
    assert re.findall(r'name="negative_[12]" value="([^"]*)"', html) == derived
    assert "Back to the derived negatives." in html and "Reset to derived" not in html


def test_edited_only_and_stale_edits(client, project, lead):
    kept = accept(project, lead)
    stale = accept(project, lead)
    accept(project, lead)
    QuestionEdit.objects.create(
        pair=kept, description="The patch changed from red to blue.", negatives=["A.", "B."]
    )
    QuestionEdit.objects.create(
        pair=stale, description="An older description.", negatives=["C.", "D."], edited_by=lead
    )
    client.force_login(lead)

    everything, edited = _questions(client), _questions(client, edited="1")

    assert everything.count('class="question-row') == 3
    assert edited.count('class="question-row') == 2
    assert 'name="edited" value="1"' in edited  # the filter survives a save
    assert edited.count("Out of date") == 1 and "An older description." in edited


def test_questions_come_25_to_a_page(client, project, lead):
    pairs = [accept(project, lead) for _ in range(26)]
    client.force_login(lead)

    first, second = _questions(client), _questions(client, page="2")

    assert first.count('class="question-row') == 25 and "Page 1 of 2" in first
    assert second.count('class="question-row') == 1 and f'id="q-{pairs[-1].pk}"' in second


def test_questions_are_for_leads_only(client, project, researcher, annotator_1, lead):
    pair = accept(project, lead)
    for user, status in ((researcher, 403), (annotator_1, 403)):
        client.force_login(user)
        assert client.get(reverse("releases:questions", args=["cars"])).status_code == status
        assert client.post(reverse("releases:question", args=[pair.pk]), {}).status_code == status
    assert not QuestionEdit.objects.exists()


def test_a_pair_that_is_not_accepted_has_no_question(client, project, lead):
    pair = make_pair(project)
    client.force_login(lead)

    response = client.post(
        reverse("releases:question", args=[pair.pk]), {"negative_1": "A.", "negative_2": "B."}
    )

    assert response.status_code == 404
    assert not QuestionEdit.objects.exists()
