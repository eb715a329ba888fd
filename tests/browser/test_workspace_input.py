"""Pointer and keyboard input in the workspace that must never leave a stray box: Space+drag pans
wherever the focus is, and a box too small to be meant is not kept."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.workspace import (
    answer,
    drag,
    log_in,
    make_pair,
    mouse_at,
    panel,
    start_annotating,
    view,
    wait_for_saved_draft,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def workspace(page, project, annotator_1):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    yield page, config["sides"]["a"]
    if answer(page)["changes"]:  # the autosave finishes before the database goes away
        wait_for_saved_draft(page, config["assignment"])


@pytest.mark.parametrize(
    "focus",
    ["tier", "panel button", "category select"],
)
def test_space_drag_pans_and_stores_no_box_wherever_the_focus_is(workspace, focus):
    page, a = workspace
    if focus == "tier":
        page.locator("label.ws-tier-good").click()
        expect(page.locator("input[name=tier][value=good]")).to_be_focused()
    elif focus == "panel button":
        page.get_by_role("button", name="+ New change").click()
        page.get_by_role("button", name="+ New change").focus()
    else:
        page.get_by_role("button", name="+ New change").click()
        page.locator("[data-change-list] [data-input=category]").first.focus()
    before = answer(page)
    centre = view(page)
    p = panel(page, 0, a, a)

    page.keyboard.down(" ")
    drag(page, mouse_at(p, 60, 40), mouse_at(p, 180, 140))
    page.keyboard.up(" ")

    assert answer(page)["changes"] == before["changes"]
    assert answer(page)["tier"] == before["tier"]
    moved = view(page)
    assert (moved["cx"], moved["cy"]) != (centre["cx"], centre["cy"])


def test_space_pressed_during_a_drag_turns_it_into_a_pan_and_drops_the_box(workspace):
    page, a = workspace
    p = panel(page, 0, a, a)
    page.mouse.move(*mouse_at(p, 60, 40))
    page.mouse.down()
    page.mouse.move(*mouse_at(p, 140, 100), steps=4)
    assert answer(page)["changes"][0]["boxes_a"]  # a box is being drawn
    page.keyboard.down(" ")
    page.mouse.move(*mouse_at(p, 180, 140), steps=4)
    page.mouse.up()
    page.keyboard.up(" ")
    assert answer(page)["changes"] == []


def test_a_box_under_the_minimum_size_is_not_kept_and_the_reason_is_shown(workspace):
    page, a = workspace
    p = panel(page, 0, a, a)
    start = mouse_at(p, 100, 100)
    drag(page, start, (start[0] + 5, start[1] + 30))  # 5 CSS px wide: a slip, not a box
    assert answer(page)["changes"] == []
    expect(page.locator("[data-status-hint]")).to_contain_text("Box not kept")

    drag(page, start, (start[0] + 12, start[1] + 12))  # big enough: kept
    [change] = answer(page)["changes"]
    assert len(change["boxes_a"]) == 1


def test_stale_errors_clear_as_soon_as_the_answer_is_valid(workspace):
    page, a = workspace
    page.keyboard.press("1")  # excellent, and no change yet
    page.keyboard.press("Control+Enter")
    changes_error = page.locator("[data-error-for=changes]")
    expect(changes_error).to_contain_text("needs at least one change")
    expect(page.locator("[data-submit-state]")).to_have_text("Fix the marked fields")

    # Drawing a box makes a change: that error goes at once, before any other edit or submit.
    page.locator("[data-stage]").focus()
    drag(page, mouse_at(panel(page, 0, a, a), 60, 40), mouse_at(panel(page, 0, a, a), 140, 100))
    expect(changes_error).to_be_hidden()
    # The new change's own problems are not shouted before the next submit.
    card = page.locator("[data-change-list] .ws-change").first
    expect(card.locator(".ws-err:visible")).to_have_count(0)

    page.keyboard.press("Control+Enter")
    expect(card.locator("[data-error=boxes_b]")).to_be_visible()
    # The refused submit focused its first error (the category); Esc gives the images the keys.
    expect(card.locator("[data-input=category]")).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press("c")  # mirrored to B: that error goes too
    expect(card.locator("[data-error=boxes_b]")).to_be_hidden()
    card.locator("[data-input=category]").select_option("attribute")
    card.locator("[data-input=description]").fill("The square changed colour.")
    card.locator("[data-input=entity_a]").fill("square")
    card.locator("[data-input=entity_b]").fill("square")
    expect(card.locator(".ws-err:visible")).to_have_count(0)
    expect(page.locator("[data-submit-state]")).to_be_hidden()
