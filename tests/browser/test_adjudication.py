"""A lead adjudicating a disputed pair in a real browser: the merged answer is drawn with the
workspace's tools, stored as a Resolution in whole pixels of each image's frame, and the two
annotations it was made from are never touched."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Pair
from annotator.submitting import annotation_submit
from review.agreement import agreement_compute
from review.models import Resolution
from tests.browser.workspace import (
    answer,
    change_card,
    drag,
    log_in,
    make_pair,
    mouse_at,
    panel,
    zoom_to,
)
from tests.factories import answer as answer_body

pytestmark = pytest.mark.browser

# Both annotators box the same region on A; on B the second one's box is off by 20 × 15 px, an
# IoU of 300 / 2100 ≈ 0.14 — far below the 0.5 threshold, so the pair is disputed. Near the
# middle of the 320×240 frame, so they stay in view when zoomed in around the centre.
BOX_A = [130, 95, 170, 125]
FIRST = answer_body(boxes_a=[BOX_A], boxes_b=[[130, 95, 170, 125]])
SECOND = answer_body(boxes_a=[BOX_A], boxes_b=[[150, 110, 190, 140]])


def _annotate(project, user, body) -> Annotation:
    assignment = assignment_lease_next(project=project, user=user)
    assert assignment is not None
    return annotation_submit(assignment_id=assignment.pk, user=user, body=body)[0]


def disputed_pair(project, annotator_1, annotator_2, first=FIRST, second=SECOND) -> Pair:
    pair = make_pair(project)
    _annotate(project, annotator_1, first)
    _annotate(project, annotator_2, second)
    agreement = agreement_compute(pair_id=pair.pk)
    pair.refresh_from_db()
    assert agreement is not None
    assert (pair.status, agreement.status) == ("disputed", "disputed")
    return pair


def stored_annotations(pair: Pair) -> list[tuple]:
    """Everything an annotation holds, to compare before and after the lead's decision."""
    return [
        (
            a.pk,
            a.annotator_id,
            a.tier,
            a.defects,
            a.time_spent_ms,
            list(
                a.changes.order_by("position").values(
                    "category", "description", "entity_a", "entity_b", "boxes_a", "boxes_b"
                )
            ),
        )
        for a in Annotation.objects.filter(pair=pair).order_by("pk")
    ]


def open_adjudication(page: Page, pair: Pair) -> dict:
    """The lead's adjudication page, mounted, with both images decoded; returns its config."""
    page.goto(reverse("review:adjudicate", args=[pair.pk]))
    page.wait_for_function(
        """() => {
          const root = document.querySelector('[data-adjudication][data-ready]');
          return root && [...root.querySelectorAll('img[data-source]')]
            .every(i => i.complete && i.naturalWidth);
        }"""
    )
    return json.loads(page.locator("#adj-config").text_content() or "")


def test_a_lead_resolves_a_dispute_by_editing_a_merged_box(
    page, project, annotator_1, annotator_2, lead
):
    pair = disputed_pair(project, annotator_1, annotator_2)
    before = stored_annotations(pair)
    log_in(page, "lead")
    config = open_adjudication(page, pair)
    a = config["sides"]["a"]

    # The breakdown says what the agreement found: B's boxes, and with which IoU.
    expect(page.locator("[data-verdict]")).to_contain_text(
        "Change 1: IoU 0.1429 on B is below 0.5."
    )
    breakdown = page.locator("[data-breakdown] .adj-cmp").first
    expect(breakdown.locator("[data-side=b]")).to_contain_text("IoU 0.14")
    expect(breakdown.locator("[data-side=a]")).to_contain_text("IoU 1.00")

    # A merged answer starts from annotation 1 (there is no consensus for a disputed pair).
    page.get_by_role("button", name="Edit a merged answer").click()
    expect(change_card(page, 0).locator("[data-input=description]")).to_have_value(
        FIRST["changes"][0]["description"]
    )
    assert answer(page)["changes"] == FIRST["changes"]

    # Zoomed in to 4 CSS px per pixel around the centre: a mouse on whole CSS px is within 1/8
    # of an image pixel of the point aimed at, so the stored box must be exact (at fit, about
    # 1.4 CSS px per pixel, an edge near a half pixel could round either way: ±1).
    zoom_to(page, 400, presses=3)
    on_a = panel(page, 0, a, a, pixel_scale=4)
    # Move: grab the box inside and drag it by exactly 40 × 32 CSS px = 10 × 8 pixels.
    drag(page, mouse_at(on_a, 150.1, 110.1), mouse_at(on_a, 160.1, 118.1))
    assert answer(page)["changes"][0]["boxes_a"] == [[140, 103, 180, 133]]
    # Resize: the bottom-right handle to a quarter pixel off whole edges (186, 140).
    drag(page, mouse_at(on_a, 180, 133), mouse_at(on_a, 186.25, 139.75))
    held = answer(page)["changes"]
    assert held[0]["boxes_a"] == [[140, 103, 186, 140]]

    page.locator("[data-comment]").fill("Annotation 1, its box on A tightened.")
    page.keyboard.press("Control+Enter")

    # No other dispute is waiting: the page stays and shows the outcome.
    expect(page.locator("[data-pair-status]")).to_have_text("Accepted")
    expect(page.locator("[data-banner]")).to_contain_text(
        "Merged answer accepted — the pair is now accepted."
    )
    expect(page.locator("[data-history]")).to_contain_text("Merged answer accepted by lead")
    resolution = Resolution.objects.get(pair=pair)
    assert (resolution.decision, resolution.lead, resolution.comment) == (
        "merge",
        lead,
        "Annotation 1, its box on A tightened.",
    )
    assert (resolution.status_before, resolution.status_after) == ("disputed", "accepted")
    [merged] = resolution.answer["changes"]
    assert merged["boxes_a"] == [[140, 103, 186, 140]]
    assert merged["boxes_b"] == FIRST["changes"][0]["boxes_b"]  # B was left as annotation 1 had it
    assert resolution.answer["changes"] == held
    pair.refresh_from_db()
    assert pair.status == "accepted"
    assert stored_annotations(pair) == before


def test_errors_show_in_place_and_the_merged_drawing_is_kept(
    page, project, annotator_1, annotator_2, lead
):
    pair = disputed_pair(project, annotator_1, annotator_2)
    log_in(page, "lead")
    open_adjudication(page, pair)

    # Reject needs a reason: checked in the page, nothing sent.
    page.keyboard.press("r")
    expect(page.locator("[data-reason]")).to_be_focused()
    page.keyboard.press("Control+Enter")
    expect(page.locator("[data-decision-error=reason]")).to_have_text(
        "Say why the pair is rejected."
    )
    page.get_by_role("button", name="Cancel").click()

    # A merged answer only the server refuses: a description over its 1,000 characters (the
    # field's maxlength stops typing, so it comes in through the answer field scripts may write).
    page.keyboard.press("e")
    page.evaluate(
        """() => {
          const field = document.querySelector('textarea[name=answer]');
          const value = JSON.parse(field.value);
          value.changes[0].description = 'x'.repeat(1001);
          field.value = JSON.stringify(value);
          field.dispatchEvent(new Event('input'));
        }"""
    )
    drawn = answer(page)["changes"]
    page.get_by_role("button", name="Submit merged answer").click()
    card = change_card(page, 0)
    expect(card.locator("[data-error=description]")).to_contain_text("1000")
    expect(page.locator("[data-submit-state]")).to_have_text("Not saved")
    assert answer(page)["changes"] == drawn
    assert not Resolution.objects.exists()

    # A reload (a lost log-in, a closed tab) brings the unsent merge back from this browser.
    page.reload()
    page.wait_for_selector("[data-adjudication][data-ready]")
    expect(page.locator("[data-banner]")).to_contain_text("unsent merged answer")
    assert answer(page)["changes"] == drawn

    change_card(page, 0).locator("[data-input=description]").fill("The patch turned blue.")
    page.keyboard.press("Control+Enter")
    expect(page.locator("[data-pair-status]")).to_have_text("Accepted")
    resolution = Resolution.objects.get(pair=pair)
    assert resolution.decision == "merge"
    assert resolution.answer["changes"][0]["description"] == "The patch turned blue."
    assert resolution.answer["changes"][0]["boxes_a"] == drawn[0]["boxes_a"]


def test_a_key_accepts_only_when_pressed_twice_and_a_decided_pair_can_be_reopened(
    page, project, annotator_1, annotator_2, lead
):
    pair = disputed_pair(project, annotator_1, annotator_2)
    log_in(page, "lead")
    open_adjudication(page, pair)
    accept_2 = page.locator("[data-decide] [data-decision=accept_2]")

    page.keyboard.press("2")
    expect(accept_2).to_contain_text("Press 2 again to confirm")
    page.keyboard.press("Escape")
    expect(accept_2).to_contain_text("Accept annotation 2")
    assert not Resolution.objects.exists()
    page.keyboard.press("2")
    page.keyboard.press("2")

    expect(page.locator("[data-pair-status]")).to_have_text("Accepted")
    accepted = Resolution.objects.get(pair=pair)
    assert accepted.decision == "accept_2"
    assert accepted.answer["changes"] == SECOND["changes"]

    # Reopened, the agreement rules decide again: the pair is disputed once more.
    page.get_by_role("button", name="Reopen").click()
    expect(page.locator("[data-pair-status]")).to_have_text("Disputed")
    expect(page.locator("[data-history] li")).to_have_count(2)
    reopened = Resolution.objects.filter(pair=pair).latest("created_at")
    assert (reopened.decision, reopened.status_before, reopened.status_after) == (
        "reopen",
        "accepted",
        "disputed",
    )
    pair.refresh_from_db()
    assert pair.status == "disputed"
