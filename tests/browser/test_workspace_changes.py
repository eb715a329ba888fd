"""Fewer keystrokes per change: category by Shift + digit, B's entity linked to A's, and a whole
image box on both sides at once."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.models import Change
from tests.browser.workspace import (
    answer,
    change_card,
    draw_box,
    log_in,
    make_pair,
    panel,
    start_annotating,
    submit,
    wait_for_saved_draft,
)

pytestmark = pytest.mark.browser


def test_shift_digits_pick_the_category_shown_next_to_it_and_digits_stay_tiers(
    page, project, annotator_1
):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a = config["sides"]["a"]
    categories = config["categories"]
    assert len(categories) >= 2
    draw_box(page, panel(page, 0, a, a), (60, 40), (140, 100))

    page.keyboard.press("Shift+Digit2")
    assert answer(page)["changes"][0]["category"] == categories[1]["slug"]
    select = change_card(page, 0).locator("[data-input=category]")
    expect(select).to_have_value(categories[1]["slug"])
    # The list says which key picks which category.
    options = select.locator("option").all_text_contents()
    assert options[1].startswith(categories[0]["name"]) and options[1].endswith("⇧1")
    assert options[2].endswith("⇧2")
    page.keyboard.press("Shift+Digit1")
    assert answer(page)["changes"][0]["category"] == categories[0]["slug"]
    page.keyboard.press("2")  # a plain digit is still a tier
    assert answer(page)["tier"] == "good"
    assert answer(page)["changes"][0]["category"] == categories[0]["slug"]
    # The help overlay lists the keys.
    page.keyboard.press("?")
    expect(page.locator("[data-help-body]")).to_contain_text("Category of the active change")
    wait_for_saved_draft(page, config["assignment"])


def test_whole_image_boxes_both_sides_at_once_and_is_stored(page, project, annotator_1):
    make_pair(project, size_b=(400, 300))
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]

    page.keyboard.press("g")
    [change] = answer(page)["changes"]
    assert change["boxes_a"] == [[0, 0, a["width"], a["height"]]]
    assert change["boxes_b"] == [[0, 0, b["width"], b["height"]]]
    page.get_by_role("button", name="Whole image").click()  # the button does the same, once
    assert len(answer(page)["changes"]) == 1

    page.keyboard.press("Shift+Digit1")
    card = change_card(page, 0)
    card.locator("[data-input=description]").fill("The whole picture got darker.")
    card.locator("[data-input=entity_a]").fill("scene")
    page.keyboard.press("Escape")
    page.keyboard.press("1")
    submit(page)
    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    stored = Change.objects.get(annotation__assignment_id=config["assignment"])
    assert (stored.boxes_a, stored.boxes_b) == ([[0, 0, 320, 240]], [[0, 0, 400, 300]])
    assert (stored.entity_a, stored.entity_b) == ("scene", "scene")  # linked: B took A's name


def test_b_follows_a_visibly_while_linked_and_typing_into_b_never_doubles_the_text(
    page, project, annotator_1
):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a = config["sides"]["a"]
    draw_box(page, panel(page, 0, a, a), (60, 40), (140, 100))
    page.keyboard.press("c")
    card = change_card(page, 0)
    entity_a = card.locator("[data-input=entity_a]")
    entity_b = card.locator("[data-input=entity_b]")
    link = card.locator("[data-act=link]")

    entity_a.press_sequentially("car")
    expect(entity_b).to_have_value("car")
    expect(link).to_have_attribute("aria-pressed", "true")
    expect(entity_b).to_have_class("is-linked")

    entity_b.click()
    page.keyboard.press("End")
    page.keyboard.type("s")
    expect(entity_b).to_have_value("cars")
    expect(link).to_have_attribute("aria-pressed", "false")
    entity_a.fill("truck")
    expect(entity_b).to_have_value("cars")
    assert [answer(page)["changes"][0][k] for k in ("entity_a", "entity_b")] == ["truck", "cars"]

    link.click()
    expect(entity_b).to_have_value("truck")
    expect(link).to_have_attribute("aria-pressed", "true")
    wait_for_saved_draft(page, config["assignment"])
