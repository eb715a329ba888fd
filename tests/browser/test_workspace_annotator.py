"""What annotators expect of an annotation tool: progress in the workspace, a reason when
skipping, gold feedback right after submitting a gold pair, and their own box style."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.intake.gold import gold_answer_set
from annotator.models import Assignment, AssignmentState, PairEvent
from tests.browser.workspace import (
    describe_change,
    draw_box,
    log_in,
    make_pair,
    panel,
    start_annotating,
    submit,
    wait_for_workspace,
)

pytestmark = pytest.mark.browser


def test_progress_shows_and_a_skip_needs_a_reason_that_is_kept(page, project, annotator_1):
    for _ in range(3):
        make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    expect(page.locator("[data-progress]")).to_have_text("Pair 1 of 3 · 0 today")

    page.get_by_role("button", name="Skip pair…").click()
    dialog = page.locator("dialog[data-skip]")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Skip pair").click()
    expect(dialog.locator("[data-skip-error]")).to_have_text("Choose a reason.")
    dialog.get_by_label("I cannot see what changed").check()
    dialog.get_by_role("button", name="Skip pair").click()

    nxt = wait_for_workspace(page, not_assignment=config["assignment"])
    skipped = Assignment.objects.get(pk=config["assignment"])
    assert skipped.state == AssignmentState.SKIPPED
    event = PairEvent.objects.get(pair_id=skipped.pair_id, kind="skipped")
    assert event.detail == {"reason": "I cannot see what changed"}  # the lead reads it
    page.keyboard.press("4")
    submit(page)
    wait_for_workspace(page, not_assignment=nxt["assignment"])
    expect(page.locator("[data-progress]")).to_have_text("Pair 2 of 2 · 1 today")


def test_gold_feedback_shows_own_boxes_against_the_known_answer_after_submit(
    page, project, annotator_1
):
    project.gold_feedback = True
    project.gold_rate = 1.0
    project.save()
    gold = make_pair(project)
    gold_answer_set(
        pair=gold,
        changes=[
            {
                "category": "attribute",
                "description": "The square changed colour.",
                "entity_a": "square",
                "entity_b": "square",
                "boxes_a": [[60, 40, 140, 100]],
                "boxes_b": [[60, 40, 140, 100]],
            }
        ],
    )
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a = config["sides"]["a"]
    expect(page.locator("[data-gold-feedback]")).to_have_count(0)  # nothing said before submit
    draw_box(page, panel(page, 0, a, a), (60, 40), (140, 100))
    page.keyboard.press("c")
    describe_change(
        page, 0, category="attribute", description="A square changed.", entity_a="square"
    )
    page.keyboard.press("1")
    submit(page)

    feedback = page.locator("dialog[data-gold-feedback]")
    expect(feedback).to_be_visible()
    expect(feedback).to_contain_text("your answer against the known one")
    expect(feedback.locator("figcaption").first).to_contain_text("IoU")
    wait_for_workspace(page, not_assignment=config["assignment"])
    page.keyboard.press("Escape")
    expect(feedback).to_have_count(0)
    # The next, regular pair: no feedback after it.
    page.keyboard.press("4")
    submit(page)
    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    expect(page.locator("dialog[data-gold-feedback]")).to_have_count(0)


def test_box_opacity_and_line_width_are_the_persons_and_kept(page, project, annotator_1):
    make_pair(project)
    log_in(page, "annotator_1")
    start_annotating(page)
    page.get_by_text("Boxes", exact=True).click()
    opacity = page.locator("input[data-box-pref=opacity]")
    opacity.fill("0.4")
    page.locator("input[data-box-pref=width]").fill("3")
    page.reload()
    page.wait_for_selector("[data-workspace][data-ready]")
    expect(opacity).to_have_value("0.4")
    expect(page.locator("input[data-box-pref=width]")).to_have_value("3")
