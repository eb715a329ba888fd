"""The annotation workspace in a real browser: boxes drawn with the mouse end up as the right
whole pixels of each image's own frame in the stored answer, and nothing drawn is ever lost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from playwright.sync_api import expect

from annotator.models import Annotation, Assignment, AssignmentState, Change
from tests.browser.workspace import (
    BLACK,
    FLAT,
    MAGENTA,
    PATCH,
    SHOWN,
    SQUARE,
    WHITE,
    answer,
    black_and_white_pair,
    change_card,
    describe_change,
    draw_box,
    exif_rotated_pair,
    expect_colour,
    log_in,
    make_pair,
    mirrored,
    mouse_at,
    panel,
    start_annotating,
    submit,
    view,
    wait_for_saved_draft,
    wait_for_workspace,
    within,
    zoom_to,
)

pytestmark = pytest.mark.browser


def stored_changes(assignment_id: int) -> list[Mapping[str, Any]]:
    return list(
        Change.objects.filter(annotation__assignment_id=assignment_id)
        .order_by("position")
        .values("category", "description", "entity_a", "entity_b", "boxes_a", "boxes_b")
    )


def test_boxes_drawn_on_a_and_b_are_stored_and_the_next_pair_loads_in_place(
    page, project, annotator_1
):
    make_pair(project)
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]

    drawn_a = draw_box(page, panel(page, 0, a, a), (40.3, 30.6), (150.2, 110.4))
    drawn_b = draw_box(page, panel(page, 1, a, b), (60.5, 45.5), (141.7, 99.2))
    describe_change(
        page,
        0,
        category="attribute",
        description="The jacket turned from white to blue.",
        entity_a="jacket",
        entity_b="jacket",
    )
    page.keyboard.press("1")  # tier: excellent
    expect(page.locator("input[name=tier][value=excellent]")).to_be_checked()
    page.get_by_label("Artefacts").check()
    page.evaluate("window.__sameDocument = true")  # a full page load would drop it
    submit(page)

    # The next pair arrives as a fragment: same document, the new assignment's URL pushed.
    nxt = wait_for_workspace(page, not_assignment=config["assignment"])
    assert page.evaluate("window.__sameDocument") is True
    assert page.url.endswith(f"/a/{nxt['assignment']}/")
    annotation = Annotation.objects.get(assignment_id=config["assignment"])
    assert (annotation.annotator, annotation.tier, annotation.defects) == (
        annotator_1,
        "excellent",
        ["artefacts"],
    )
    assert Assignment.objects.get(pk=config["assignment"]).state == AssignmentState.SUBMITTED
    [change] = stored_changes(config["assignment"])
    assert {k: v for k, v in change.items() if not k.startswith("boxes")} == {
        "category": "attribute",
        "description": "The jacket turned from white to blue.",
        "entity_a": "jacket",
        "entity_b": "jacket",
    }
    # At fit one image pixel is a fractional number of CSS px (about 1.45 here) and the pointer
    # travels through Chromium as float32, so an edge that falls near a pixel's half-way mark may
    # round either way: ±1 px. The zoomed-in test below pins exact coordinates.
    [box_a], [box_b] = change["boxes_a"], change["boxes_b"]
    assert within(box_a, drawn_a, 1), (box_a, drawn_a)
    assert within(box_b, drawn_b, 1), (box_b, drawn_b)
    assert all(isinstance(v, int) for v in box_a + box_b)


def test_a_mirrored_box_and_an_absent_side_are_stored(page, project, annotator_1):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]

    # Change 1, in place: a box on A, mirrored to B with C.
    draw_box(page, panel(page, 0, a, a), (60.2, 40.2), (140.4, 100.3))
    page.keyboard.press("c")
    describe_change(
        page,
        0,
        category="attribute",
        description="The square changed colour.",
        entity_a="square",
        entity_b="square",
    )
    # Change 2, removed in B: a new change (N), a box on A, then B (Tab) marked absent (X).
    page.keyboard.press("n")
    draw_box(page, panel(page, 0, a, a), (200.2, 150.2), (290.4, 220.3))
    page.keyboard.press("Tab")
    page.keyboard.press("x")
    expect(change_card(page, 1).locator("[data-side-row=b] [data-act=absent]")).to_have_attribute(
        "aria-pressed", "true"
    )
    describe_change(page, 1, category="object", description="The lamp is gone.", entity_a="lamp")
    held = answer(page)["changes"]
    page.keyboard.press("2")  # tier: good
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("button", name="Submit").click()

    # Nothing left for this annotator: the "nothing left" fragment replaces the workspace.
    expect(page.locator("#workspace.queue-empty")).to_contain_text("Nothing left for you in Cars")
    assert page.evaluate("window.__sameDocument") is True
    assert Annotation.objects.get(assignment_id=config["assignment"]).tier == "good"
    first, second = stored_changes(config["assignment"])
    [box_a] = first["boxes_a"]
    assert box_a == held[0]["boxes_a"][0]
    assert first["boxes_b"] == [mirrored(box_a, a, b)]
    assert (second["boxes_a"], second["boxes_b"]) == (held[1]["boxes_a"], [])
    assert (second["entity_a"], second["entity_b"]) == ("lamp", "")


def test_the_draft_comes_back_after_a_reload_and_in_another_browser(
    page, new_page, project, annotator_1
):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]
    status = page.locator("[data-save-status]")
    description = change_card(page, 0).locator("[data-input=description]")

    draw_box(page, panel(page, 0, a, a), (60.2, 40.2), (140.4, 100.3))
    description.fill("The square changed colour.")
    page.keyboard.press("Escape")
    held = answer(page)["changes"]
    wait_for_saved_draft(page, config["assignment"])  # after a pause in editing
    draft = Assignment.objects.get(pk=config["assignment"]).draft
    assert draft["changes"][0]["boxes_a"] == held[0]["boxes_a"]
    assert draft["changes"][0]["description"] == "The square changed colour."

    page.reload()
    wait_for_workspace(page)
    expect(status).to_have_text("Draft restored")
    expect(description).to_have_value("The square changed colour.")
    assert answer(page)["changes"] == held

    # An edit the server has not seen yet (the save waits for a pause in typing), then a reload
    # at once: the browser's copy wins over the server's older one, and is then saved.
    draw_box(page, panel(page, 1, a, b), (62.2, 42.2), (138.4, 98.3))
    held = answer(page)["changes"]
    assert held[0]["boxes_b"]
    page.reload()
    wait_for_workspace(page)
    assert answer(page)["changes"] == held
    # Restored from this browser and saved again — or, when the parting save the page sends as
    # it goes landed first, restored from the server: either way the server holds the edit now.
    page.wait_for_function(
        """id => {
          const s = document.querySelector('[data-save-status]');
          return (s.dataset.state === 'saved' && !localStorage.getItem(`diffmark:draft:${id}`))
            || (s.dataset.state === 'restored' && s.textContent === 'Draft restored');
        }""",
        arg=config["assignment"],
    )
    draft = Assignment.objects.get(pk=config["assignment"]).draft
    assert [c["boxes_b"] for c in draft["changes"]] == [c["boxes_b"] for c in held]

    # Another browser (or the tab closed for good): the server's draft is all there is.
    other = new_page()
    log_in(other, "annotator_1")
    other.get_by_role("button", name="Resume").click()
    wait_for_workspace(other)
    expect(other.locator("[data-save-status]")).to_have_text("Draft restored")
    expect(change_card(other, 0).locator("[data-input=description]")).to_have_value(
        "The square changed colour."
    )
    assert answer(other)["changes"] == held
    describe_change(
        other,
        0,
        category="attribute",
        description="The square changed colour.",
        entity_a="square",
        entity_b="square",
    )
    other.keyboard.press("1")
    submit(other)

    expect(other.locator("#workspace.queue-empty")).to_be_visible()
    [change] = stored_changes(config["assignment"])
    assert (change["boxes_a"], change["boxes_b"]) == (held[0]["boxes_a"], held[0]["boxes_b"])


def zoom_with_keys(page, a):
    """Z for 1:1, then "+" through the whole steps 2, 3, 4, 6, 8: 8 CSS px per pixel, centred."""
    page.keyboard.press("z")
    for _ in range(5):
        page.keyboard.press("+")
    expect(page.locator("[data-zoom-level]")).to_have_text("800%")
    assert (view(page)["cx"], view(page)["cy"]) == (0.5, 0.5)
    return 8.0, (a["width"] / 2, a["height"] / 2)


def zoom_with_the_wheel(page, a):
    """Two wheel notches over an off-centre point of A: that point stays under the pointer."""
    anchor = (100, 80)
    at_fit = panel(page, 0, a, a)
    pointer = mouse_at(at_fit, *anchor)
    page.mouse.move(*pointer)
    for _ in range(2):
        before = view(page)["zoom"]
        page.mouse.wheel(0, -500)
        page.wait_for_function("z => window.diffmarkWorkspace.getView().zoom !== z", arg=before)
    zoomed = panel(page, 0, a, a)
    assert within(zoomed.image(*pointer), at_fit.image(*pointer), 1e-6)
    assert zoomed.sx >= 4  # far enough in for whole-px mouse positions to pick exact pixels
    return None, anchor


@pytest.mark.parametrize("zoom", [zoom_with_keys, zoom_with_the_wheel], ids=["keys", "wheel"])
def test_boxes_drawn_zoomed_in_are_stored_exactly(page, project, annotator_1, zoom):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]
    scale, (x, y) = zoom(page, a)
    x, y = int(x), int(y)

    # At 4 CSS px per pixel or more, a mouse on whole CSS px is within 1/8 of an image pixel of
    # the point aimed at; aiming at quarter pixels leaves no doubt which pixel edge is nearest,
    # so the stored box must be exact.
    on_a = panel(page, 0, a, a, pixel_scale=scale)
    draw_box(page, on_a, (x - 9.75, y - 9.75), (x + 12.75, y + 13.75))
    on_b = panel(page, 1, a, b, pixel_scale=scale)
    draw_box(page, on_b, (x - 4.25, y - 5.75), (x + 8.25, y + 8.75))
    describe_change(
        page,
        0,
        category="attribute",
        description="The jacket turned blue.",
        entity_a="jacket",
        entity_b="jacket",
    )
    page.keyboard.press("1")
    submit(page)

    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    [change] = stored_changes(config["assignment"])
    assert change["boxes_a"] == [[x - 10, y - 10, x + 13, y + 14]]
    assert change["boxes_b"] == [[x - 4, y - 6, x + 8, y + 9]]


def test_a_box_on_an_exif_rotated_photo_is_stored_in_the_displayed_frame(
    page, project, annotator_1
):
    pair = exif_rotated_pair(project)
    assert (pair.width_a, pair.height_a) == SHOWN
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]
    # The browser turns the photo upright itself and agrees with the server on its frame.
    assert page.evaluate("() => window.diffmarkWorkspace.frames().a") == {
        "width": 240,
        "height": 400,
    }
    expect(page.locator("[data-banner]")).to_be_hidden()
    on_a = panel(page, 0, a, a)
    x1, y1, x2, y2 = PATCH
    middle = ((x1 + x2) / 2, (y1 + y2) / 2)
    for index, side in ((0, a), (1, b)):  # the patch is on screen where the displayed frame says
        expect_colour(page, index, panel(page, index, a, side).screen(*middle), MAGENTA)

    drawn = draw_box(page, on_a, (x1, y1), (x2, y2))  # around the patch where it is displayed
    page.keyboard.press("c")
    describe_change(
        page,
        0,
        category="attribute",
        description="A magenta square.",
        entity_a="square",
        entity_b="square",
    )
    page.keyboard.press("3")
    submit(page)

    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    [change] = stored_changes(config["assignment"])
    [box_a] = change["boxes_a"]
    assert within(box_a, drawn, 1) and within(box_a, list(PATCH), 1), box_a
    assert change["boxes_b"] == [box_a]  # B is the same picture, upright without EXIF


def test_a_and_b_of_different_sizes_keep_boxes_in_their_own_frames(page, project, annotator_1):
    make_pair(project, size_b=(200, 160))  # B smaller, and squarer: each axis scales apart
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]
    assert (b["width"], b["height"]) == (200, 160)
    zoom_to(page, 400, presses=3)  # 1:1, then 2, 3, 4 CSS px per pixel of A

    # Change 1, in place: a box on A, mirrored to B with C.
    draw_box(page, panel(page, 0, a, a, pixel_scale=4), (130.25, 95.25), (185.75, 140.75))
    page.keyboard.press("c")
    describe_change(
        page,
        0,
        category="attribute",
        description="The jacket turned blue.",
        entity_a="jacket",
        entity_b="jacket",
    )
    # Change 2, added in B: a box drawn on B (6.4 × 6 CSS px per pixel of B), A marked absent.
    page.keyboard.press("n")
    draw_box(page, panel(page, 1, a, b, pixel_scale=4), (70.25, 50.25), (125.75, 110.75))
    page.keyboard.press("Tab")
    page.keyboard.press("x")
    describe_change(page, 1, category="object", description="A hat appeared.", entity_b="hat")
    page.keyboard.press("1")
    submit(page)

    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    first, second = stored_changes(config["assignment"])
    assert first["boxes_a"] == [[130, 95, 186, 141]]
    assert first["boxes_b"] == [mirrored([130, 95, 186, 141], a, b)] == [[81, 63, 116, 94]]
    assert (second["boxes_a"], second["boxes_b"]) == ([], [[70, 50, 126, 111]])


def test_validation_errors_show_in_place_and_keep_the_drawing(page, project, annotator_1):
    make_pair(project)
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a = config["sides"]["a"]
    card = change_card(page, 0)
    draw_box(page, panel(page, 0, a, a), (60.2, 40.2), (140.4, 100.3))
    drawn = answer(page)["changes"]

    # Checked in the page: no tier, no category, no description, B neither drawn nor absent.
    submit(page)
    expect(page.locator("[data-error-for=tier]")).to_have_text("Choose a quality tier (keys 1–4).")
    expect(card.locator("[data-error=category]")).to_have_text("Choose a category.")
    expect(card.locator("[data-error=description]")).to_have_text(
        "Describe the change in one sentence."
    )
    expect(card.locator("[data-error=boxes_b]")).to_have_text(
        "Draw a box on B or mark B absent (X)."
    )
    assert answer(page)["changes"] == drawn
    expect(card.locator("[data-side-row=a] [data-count]")).to_have_text("1 box")

    # Fixed; then checked by the server only: a description over its 1,000 characters (the
    # field's maxlength stops typing there, so it comes in through the answer field, which any
    # script may rewrite). The refused submit put the focus on its first error (the category):
    # Esc gives the keys back to the images.
    expect(card.locator("[data-input=category]")).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press("c")
    describe_change(
        page,
        0,
        category="attribute",
        description="The square changed colour.",
        entity_a="square",
        entity_b="square",
    )
    page.keyboard.press("3")
    for slot in ("tier", "_"):
        expect(page.locator(f"[data-error-for={slot}]")).to_be_hidden()
    expect(card.locator(".ws-err:visible")).to_have_count(0)
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
    submit(page)
    expect(card.locator("[data-error=description]")).to_have_text("at most 1000 characters")
    expect(page.locator("[data-submit-state]")).to_have_text("Not submitted")
    assert answer(page)["changes"] == drawn
    assert not Annotation.objects.exists()
    assert Assignment.objects.get(pk=config["assignment"]).state == AssignmentState.LEASED

    card.locator("[data-input=description]").fill("The square changed colour.")
    expect(card.locator("[data-error=description]")).to_be_hidden()
    submit(page)

    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    [change] = stored_changes(config["assignment"])
    assert change["description"] == "The square changed colour."
    assert change["boxes_a"] == drawn[0]["boxes_a"]


def test_view_modes_show_the_right_image_and_draw_on_the_side_shown(page, project, annotator_1):
    black_and_white_pair(project, size_b=(200, 160))
    log_in(page, "annotator_1")
    config = start_annotating(page)
    a, b = config["sides"]["a"], config["sides"]["b"]
    x1, y1, x2, y2 = SQUARE
    square = ((x1 + x2) / 2, (y1 + y2) / 2)  # in A's frame; B is stretched onto the same place
    root = page.locator("[data-workspace]")

    # Difference (D): |A − B| as a heatmap, brightest where black met white, dim grey elsewhere.
    page.keyboard.press("d")
    expect(root).to_have_attribute("data-mode", "diff")
    on_screen = panel(page, 0, a, a)
    expect_colour(page, 0, on_screen.screen(*square), (252, 255, 164), tolerance=12)
    expect_colour(page, 0, on_screen.screen(*FLAT), (36, 36, 36), tolerance=6)  # A's grey, dim

    # Swipe (W): A left of the slider, B right of it; the slider's End key shows A everywhere.
    page.keyboard.press("w")
    expect(root).to_have_attribute("data-mode", "swipe")
    on_screen = panel(page, 0, a, a)
    expect_colour(page, 0, on_screen.screen(*square), WHITE)  # right of the middle: B
    page.locator("[data-swipe-grip]").press("End")
    expect_colour(page, 0, on_screen.screen(*square), BLACK)

    # Flicker (F, F again): one image at a time, and a box drawn goes to the side shown.
    page.keyboard.press("f")
    expect(root).to_have_attribute("data-mode", "flicker")
    on_screen = panel(page, 0, a, a)
    expect_colour(page, 0, on_screen.screen(*square), BLACK)
    page.keyboard.press("f")
    expect(page.locator("[data-view='0'] [data-tag] b")).to_have_text("B")
    expect_colour(page, 0, on_screen.screen(*square), WHITE)
    kx, ky = b["width"] / a["width"], b["height"] / a["height"]
    on_b = panel(page, 0, a, b)
    drawn = draw_box(page, on_b, (x1 * kx, y1 * ky), (x2 * kx, y2 * ky))
    [[box_b]] = [c["boxes_b"] for c in answer(page)["changes"]]
    assert within(box_b, drawn, 1), (box_b, drawn)  # ±1: at fit, as in the first test
    assert answer(page)["changes"][0]["boxes_a"] == []

    # Side by side again (B); the help overlay (?) opens and Esc closes it.
    page.keyboard.press("b")
    expect(root).to_have_attribute("data-mode", "side")
    page.keyboard.press("Shift+?")
    expect(page.locator("dialog[data-help]")).to_be_visible()
    expect(page.locator("dialog[data-help]")).to_contain_text("Mirror the selected box")
    page.keyboard.press("Escape")
    expect(page.locator("dialog[data-help]")).to_be_hidden()
    expect(page.locator("[data-stage]")).to_be_focused()

    page.keyboard.press("c")  # B is still the active side: its box mirrored to A
    describe_change(
        page,
        0,
        category="attribute",
        description="The black square turned white.",
        entity_a="square",
        entity_b="square",
    )
    page.keyboard.press("2")
    submit(page)

    expect(page.locator("#workspace.queue-empty")).to_be_visible()
    [change] = stored_changes(config["assignment"])
    assert change["boxes_b"] == [box_b]
    assert change["boxes_a"] == [mirrored(box_b, b, a)]
