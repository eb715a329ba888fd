"""The screening gate: flagged pairs wait for a lead before any annotator sees them."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.models import Pair, PairEvent, PairStatus, Prediction
from annotator.preannotation import preannotate_run
from annotator.predictions import predictions_import
from annotator.screening import project_screen, screening_counts
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind
from tests.conftest import PASSWORD
from tests.factories import make_pair, make_pairs
from tests.pairdiff.test_vlm import FakeEndpoint, endpoint  # noqa: F401 (fixture)


def _flag(pair: Pair, *flags: str, model: str = "screen") -> None:
    row = {"pair": pair.pk, "model": model, "flags": list(flags), "changes": []}
    report = predictions_import(project=pair.project, data=json.dumps(row).encode())
    assert report.errors == []


def _hold(project, *flags):
    project.screening_flags = list(flags)
    project.save(update_fields=["screening_flags"])


def test_a_flagged_pair_is_held_out_of_every_queue_until_a_lead_accepts_it(
    project, annotator_1, lead, client
):
    _hold(project, "no_visible_change")
    flagged, clean = make_pairs(project, 2)
    _flag(flagged, "no_visible_change")
    _flag(clean, "scattered_changes")  # not a flag this project acts on

    first = assignment_lease_next(project=project, user=annotator_1)
    assert first.pair_id == clean.pk
    assert first.pair_id != flagged.pk
    flagged.refresh_from_db()
    assert flagged.status == PairStatus.SCREENED_OUT
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("console:screening", args=[project.slug]))
    assert page.status_code == 200 and str(flagged).encode() in page.content
    assert b"No visible change (pixeldiff)" in page.content

    response = client.post(
        reverse("console:screening", args=[project.slug]),
        {"action": "accept", "pairs": [flagged.pk]},
    )

    assert response.status_code == 302
    flagged.refresh_from_db()
    assert flagged.status == PairStatus.PRE_ANNOTATED
    from annotator.submitting import annotation_submit
    from tests.factories import answer

    annotation_submit(assignment_id=first.pk, user=annotator_1, body=answer())
    assert assignment_lease_next(project=project, user=annotator_1).pair_id == flagged.pk
    # a rerun of the screener does not hold a pair a lead accepted
    Pair.objects.filter(pk=flagged.pk).update(n_taken=0, status=PairStatus.PRE_ANNOTATED)
    _flag(flagged, "no_visible_change", model="screen-2")
    flagged.refresh_from_db()
    assert flagged.status == PairStatus.PRE_ANNOTATED


def test_rejected_pairs_are_final_and_counted_as_removed(project, lead, client):
    _hold(project, "change_too_large", "scattered_changes")
    pairs = make_pairs(project, 4)
    for pair in pairs[:2]:
        _flag(pair, "change_too_large")
    _flag(pairs[2], "scattered_changes")
    client.login(username=lead.username, password=PASSWORD)

    client.post(
        reverse("console:screening", args=[project.slug]),
        {"action": "reject", "pairs": [pairs[0].pk, pairs[1].pk, pairs[3].pk]},
    )

    statuses = [Pair.objects.get(pk=p.pk).status for p in pairs]
    assert statuses == ["rejected", "rejected", "screened_out", "imported"]
    assert screening_counts(project) == {
        "held": 3,
        "waiting": 1,
        "accepted": 0,
        "rejected": 2,
        "removed": 3,
        "percent": 75.0,
    }
    dashboard = client.get(reverse("review:dashboard", args=[project.slug]))
    assert b"Screening removed <b>75.0 %</b>" in dashboard.content


def test_started_and_gold_pairs_are_never_held(project, annotator_1):
    _hold(project, "no_visible_change")
    started, gold = make_pairs(project, 2)
    gold_answer_set(pair=gold, changes=[])
    assignment_lease_next(project=project, user=annotator_1)  # takes `started` (regular first)

    _flag(started, "no_visible_change")
    _flag(gold, "no_visible_change")

    assert Pair.objects.get(pk=started.pk).status == PairStatus.IN_ANNOTATION
    assert Pair.objects.get(pk=gold.pk).status != PairStatus.SCREENED_OUT


def test_choosing_flags_later_holds_pairs_that_already_have_them(project, lead, client):
    pair = make_pair(project)
    _flag(pair, "scattered_changes")
    assert Pair.objects.get(pk=pair.pk).status == PairStatus.PRE_ANNOTATED
    client.login(username=lead.username, password=PASSWORD)
    form = client.get(reverse("console:project_settings", args=[project.slug])).context["form"]
    data = {k: v for k, v in form.initial.items() if v is not None and k != "categories"}
    data.update(
        {
            "categories_text": form["categories_text"].value(),
            "gold_percent": 0,
            "screening_flags": ["scattered_changes"],
            "lease_order": "import",
            "judge_prompt": "",
        }
    )

    response = client.post(reverse("console:project_settings", args=[project.slug]), data)

    assert response.status_code == 302, response.context["form"].errors
    project.refresh_from_db()
    assert project.screening_flags == ["scattered_changes"]
    assert Pair.objects.get(pk=pair.pk).status == PairStatus.SCREENED_OUT
    assert project_screen(project=project) == 0  # nothing left to hold


def test_the_vlm_judge_holds_pairs_with_its_reasons(
    project,
    lead,
    client,
    settings,
    endpoint: FakeEndpoint,  # noqa: F811
):
    settings.DIFFMARK_VLM_URL = endpoint.url
    project.judge_prompt = "Was {instruction} done, and nothing else?"
    _hold(project, "unrelated_changes")
    pair = make_pair(project, instruction="Make the patch blue.")
    endpoint.answer(
        json.dumps(
            {
                "instruction_followed": True,
                "edit_correct": True,
                "unrelated_changes": True,
                "reasons": {"unrelated_changes": "The sky is darker in B."},
            }
        )
    )
    job = job_create(kind=JobKind.PREANNOTATE, project=project, params={"backend": "vlm-judge"})

    preannotate_run(job=job)

    pair.refresh_from_db()
    prediction = Prediction.objects.get(pair=pair)
    assert pair.status == PairStatus.SCREENED_OUT
    assert prediction.model_name == "vlm-judge"
    assert prediction.flags == ["unrelated_changes"]
    assert prediction.reasons == {"unrelated_changes": "The sky is darker in B."}
    sent = endpoint.requests[0].body["messages"][0]["content"][4]["text"]
    assert sent.startswith("Was Make the patch blue. done, and nothing else?")
    event = PairEvent.objects.get(pair=pair, kind="screened_out")
    assert event.detail["reasons"] == {"unrelated_changes": "The sky is darker in B."}
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("console:screening", args=[project.slug]))
    assert b"The sky is darker in B." in page.content


# --- the vlm backends without a model server: refused before any job exists ------------------


@pytest.mark.parametrize("backend", ["vlm", "vlm-judge"])
def test_vlm_without_a_url_is_refused_on_the_page_the_api_and_the_command(
    project, lead, client, settings, backend
):
    settings.DIFFMARK_VLM_URL = ""
    client.login(username=lead.username, password=PASSWORD)
    api = APIClient()
    api.force_authenticate(lead)

    page = client.post(
        reverse("console:preannotate", args=[project.slug]), {"backend": backend}, follow=True
    )
    rest = api.post(f"/api/v1/projects/{project.slug}/preannotate/", {"backend": backend})
    with pytest.raises(CommandError, match="DIFFMARK_VLM_URL"):
        call_command("preannotate", "--project", project.slug, "--backend", backend)

    assert b"needs DIFFMARK_VLM_URL" in page.content
    assert rest.status_code == 400 and "DIFFMARK_VLM_URL" in rest.json()["error"]["message"]
    assert not Job.objects.exists()  # no zombie "running" job anywhere


def test_the_jobs_page_marks_vlm_backends_that_are_not_configured(project, lead, client, settings):
    settings.DIFFMARK_VLM_URL = ""
    client.login(username=lead.username, password=PASSWORD)

    page = client.get(reverse("console:jobs", args=[project.slug]))

    assert b'<option value="vlm" disabled>vlm (needs DIFFMARK_VLM_URL)</option>' in page.content
    assert b'<option value="pixeldiff">pixeldiff</option>' in page.content
