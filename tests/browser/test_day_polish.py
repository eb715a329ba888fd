"""What a day of annotating and leading found, fixed where a browser can show it: the toast after a
decision stays out of the way and goes with the next decision, no stale "press 2 again", the dark
theme keeps lead forms readable, delete buttons show their label, a skip link on every page."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.browser.test_adjudication import disputed_pair, open_adjudication
from tests.browser.workspace import log_in

pytestmark = pytest.mark.browser


def _width(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None
    return box["width"]


def _overlap(a: Any, b: Any) -> bool:
    assert a is not None and b is not None
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_the_toast_covers_no_decision_button_and_goes_with_the_next_decision(
    page: Page, project, annotator_1, annotator_2, lead
):
    first = disputed_pair(project, annotator_1, annotator_2)
    second = disputed_pair(project, annotator_1, annotator_2)
    page.set_viewport_size({"width": 1180, "height": 800})  # a laptop's screen
    log_in(page, "lead")
    open_adjudication(page, first)
    page.wait_for_timeout(1100)  # past the guard against a double-click
    page.locator("[data-decide] [data-decision=accept_1]").click()
    page.wait_for_url(f"**{reverse('review:adjudicate', args=[second.pk])}")
    page.wait_for_selector("[data-adjudication][data-ready]")

    toast = page.locator("[data-toast]")
    expect(toast).to_be_visible()
    edit = page.locator("[data-decide] [data-action=merge-start]")
    assert not _overlap(toast.bounding_box(), edit.bounding_box())
    edit.click()
    discard = page.locator("[data-merge-actions] [data-action=merge-discard]")
    expect(discard).to_be_visible()
    assert not _overlap(toast.bounding_box(), discard.bounding_box())
    assert not _overlap(
        toast.bounding_box(), page.locator("[data-action=merge-submit]").bounding_box()
    )
    discard.click()

    # A key arms; left alone, the button and the status line both forget it.
    page.locator("[data-stage]").first.focus()
    page.keyboard.press("2")
    hint = page.locator("[data-status-hint]")
    expect(hint).to_contain_text("press 2 again to confirm")
    expect(hint).not_to_contain_text("again to confirm", timeout=3500)
    # Armed again and confirmed: the decision's own words, nothing stale, and the toast (about
    # the pair before) gone with this decision.
    page.keyboard.press("2")
    expect(hint).to_contain_text("press 2 again to confirm")
    page.keyboard.press("2")
    expect(page.locator("[data-pair-status]")).to_have_text("Accepted")
    expect(hint).not_to_contain_text("again to confirm")
    expect(toast).to_have_count(0)


# The contrast of an element's text on what is painted behind it (WCAG 2), from computed styles;
# colours are read back through a canvas, so any CSS colour syntax (color-mix too) is understood.
CONTRAST = """(el, prop) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const cx = canvas.getContext("2d", { willReadFrequently: true });
  const rgba = (colour) => {
    cx.clearRect(0, 0, 1, 1);
    cx.fillStyle = "rgba(0,0,0,0)";
    cx.fillStyle = colour;
    cx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = cx.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  };
  const layers = [];
  // An outline is drawn outside the element, over what is behind it.
  const start = prop === "outlineColor" ? el.parentElement : el;
  for (let node = start; node; node = node.parentElement) {
    const layer = rgba(getComputedStyle(node).backgroundColor);
    if (layer[3] > 0) layers.push(layer);
    if (layer[3] >= 1) break;
  }
  const over = ([r, g, b, a], under) => [r, g, b].map((v, i) => v * a + under[i] * (1 - a));
  let bg = [255, 255, 255];
  for (const layer of layers.reverse()) bg = over(layer, bg);
  const fg = over(rgba(getComputedStyle(el)[prop]), bg);
  const linear = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const lum = (c) => {
    const [R, G, B] = c.map(linear);
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}"""


def _readable(page: Page, selector: str, *, at_least: float = 4.5) -> None:
    """Every element matching ``selector`` shows its text with at least this contrast."""
    elements = page.locator(selector)
    assert elements.count(), f"nothing matches {selector}"
    for i in range(elements.count()):
        element = elements.nth(i)
        if (
            element.evaluate("e => e.tagName") in ("INPUT", "TEXTAREA")
            and not element.input_value()
        ):
            element.fill("Some text")  # what a lead types must be readable
        ratio = element.evaluate(CONTRAST, "color")
        assert ratio >= at_least, f"{selector} #{i}: contrast {ratio:.2f}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_lead_forms_and_delete_buttons_are_readable_in_both_themes(
    page: Page, project, annotator_1, annotator_2, lead, scheme
):
    from accounts.services import token_create
    from tests.factories import answer, make_accepted

    make_accepted(project, [annotator_1, annotator_2], [answer()])
    token_create(user=lead, name="laptop")
    page.emulate_media(color_scheme=scheme)
    log_in(page, "lead")

    page.goto(reverse("console:project_settings", args=[project.slug]))
    _readable(page, "#id_name")
    _readable(page, "#id_guidelines")
    page.goto(reverse("console:members", args=[project.slug]))
    _readable(page, "form input[name=username]")
    _readable(page, "button:text-is('Change')")
    _readable(page, "button:text-is('Remove')")
    page.goto(reverse("releases:questions", args=[project.slug]))
    _readable(page, "input[name=negative_1], input[name=negative_2]")
    _readable(page, "button[value=verify], button[value=reset], button[value=unverify]")
    page.goto(reverse("accounts:tokens"))
    _readable(page, "button:text-is('Revoke')")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_adjudication_accept_buttons_are_readable(
    page: Page, project, annotator_1, annotator_2, lead, scheme
):
    pair = disputed_pair(project, annotator_1, annotator_2)
    page.emulate_media(color_scheme=scheme)
    log_in(page, "lead")
    open_adjudication(page, pair)
    _readable(page, "[data-decide] .adj-accept [data-label]")
    _readable(page, "[data-decide] [data-action=merge-start] [data-label]")


def test_a_skip_link_leads_past_the_project_navigation(page: Page, project, lead):
    log_in(page, "lead")
    page.goto(reverse("console:members", args=[project.slug]))
    page.keyboard.press("Tab")
    skip = page.locator("a.skip-link")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#content")).to_be_focused()
    page.keyboard.press("Tab")  # the page's first control, not the navigation's 14 links
    assert page.evaluate("() => !document.activeElement.closest('nav, header')")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_focused_text_field_shows_a_clear_ring(page: Page, project, lead, scheme):
    page.emulate_media(color_scheme=scheme)
    log_in(page, "lead")
    page.goto(reverse("console:project_settings", args=[project.slug]))
    field = page.locator("#id_name")
    field.focus()
    style = "e => [getComputedStyle(e).outlineStyle, parseFloat(getComputedStyle(e).outlineWidth)]"
    ring = field.evaluate(style)
    assert ring[0] == "solid" and ring[1] >= 2
    assert field.evaluate(CONTRAST, "outlineColor") >= 3  # WCAG's minimum for a focus ring


def test_single_image_views_use_the_whole_stage_until_zoomed(page: Page, project, annotator_1):
    from tests.browser.workspace import make_pair, start_annotating, view

    make_pair(project)
    log_in(page, "annotator_1")
    start_annotating(page)
    canvas = page.locator("[data-view='0'] canvas")
    side_width = _width(canvas)
    for key in ("f", "w", "d"):
        page.keyboard.press(key)
        assert _width(canvas) > 1.8 * side_width  # one image, the whole stage
        assert view(page) == {"cx": 0.5, "cy": 0.5, "zoom": 1}  # fitted to it, not half of it
    page.keyboard.press("b")
    page.keyboard.press("+")  # zoomed in: the scale is kept, as before
    zoom = view(page)["zoom"]
    page.keyboard.press("f")
    assert view(page)["zoom"] != zoom


def test_the_shortcuts_show_the_plus_key_and_entity_fields_fit_a_label(
    page: Page, project, annotator_1
):
    from tests.browser.workspace import make_pair, start_annotating

    make_pair(project)
    log_in(page, "annotator_1")
    start_annotating(page)
    page.keyboard.press("Shift+?")
    row = page.locator("dialog[data-help] dd", has_text="Zoom in / out")
    keys = row.locator("xpath=preceding-sibling::dt[1]").locator("kbd").all_text_contents()
    assert keys == ["+", "−"]  # ASCII plus: every font has it
    page.keyboard.press("Escape")

    page.keyboard.press("g")  # a change over the whole of both images
    for side in "ab":
        field = page.locator(f"[data-input=entity_{side}]").first
        field.fill("spacesuit sleeve")
        assert field.evaluate("e => e.scrollWidth <= e.clientWidth"), side


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_running_job_s_stop_button_is_styled_like_the_app_s(page: Page, project, lead, scheme):
    """It was the browser's bare button (its own font, glued under the progress bar)."""
    from jobs.lifecycle import job_create
    from jobs.models import JobKind, JobStatus

    job = job_create(kind=JobKind.PREANNOTATE, project=project, params={"backend": "pixeldiff"})
    job.status = JobStatus.RUNNING
    job.save(update_fields=["status"])
    page.emulate_media(color_scheme=scheme)
    log_in(page, "lead")
    url = reverse("console:job", args=[job.pk])
    page.goto(url)
    # The section polls every second and is swapped whole: hold it still to measure it.
    page.route(f"**{url}", lambda route: route.abort())
    stop = page.locator("button:text-is('Stop this job')")
    expect(stop).to_be_visible()
    _readable(page, "button:text-is('Stop this job')")
    body_font = page.locator("body").evaluate("e => getComputedStyle(e).fontFamily")
    expect(stop).to_have_css("font-family", body_font)
    if scheme == "dark":  # the bar's empty track is no white stripe on the dark card
        track = page.locator("#job-progress .bar").evaluate(
            "e => getComputedStyle(e).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)"
        )
        assert max(track) < 100, track
    bar, button = page.locator("#job-progress .bar").bounding_box(), stop.bounding_box()
    assert bar is not None and button is not None
    assert button["y"] - (bar["y"] + bar["height"]) >= 8  # not glued to the bar
