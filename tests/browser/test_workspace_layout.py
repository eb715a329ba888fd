"""The workspace's layout on common screens: images as large as the space allows, a side panel
that collapses, A above B for wide images. DIFFMARK_SHOTS=DIR keeps screenshots to look at."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Page, expect

from annotator.services import PairInput, pair_create
from projects.models import Project
from tests.browser.workspace import log_in, start_annotating, wait_for_saved_draft
from tests.images import encode, photo

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("DIFFMARK_SHOTS")


def photo_pair(project: Project, size: tuple[int, int]) -> None:
    a = photo(size=size, offset=5)
    b = photo(size=size, offset=9)
    pair_create(project=project, pair_input=PairInput(encode(a), encode(b)))


def shown_images(page: Page) -> list[dict]:
    """Where each panel shows its image on screen (CSS px), from the live view and frames."""
    return page.evaluate(
        """() => {
          const ws = window.diffmarkWorkspace;
          const v = ws.getView(), a = ws.frames().a;
          return [...document.querySelectorAll('[data-view]')]
            .filter((el) => el.offsetParent !== null)
            .map((el) => {
              const r = el.querySelector('canvas').getBoundingClientRect();
              const k = Math.min(Math.round(r.width) / a.width, Math.round(r.height) / a.height)
                * 0.97 * v.zoom;
              return {width: a.width * k, height: a.height * k, top: r.top, left: r.left};
            });
        }"""
    )


def open_workspace(new_page, viewport, scheme="light") -> Page:
    page = new_page()
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    page.emulate_media(color_scheme=scheme)
    log_in(page, "annotator_1")
    page.config = start_annotating(page)
    return page


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/{name}.png")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_1366x768_each_image_is_at_least_600_px_wide_with_the_panel_collapsed(
    new_page, project, annotator_1, scheme
):
    photo_pair(project, (1024, 768))
    page = open_workspace(new_page, (1366, 768), scheme)
    shot(page, f"ws-1366-{scheme}-panel")
    page.keyboard.press("s")  # collapse the side panel
    expect(page.locator(".ws-panel")).to_be_hidden()
    left, right = shown_images(page)
    assert left["width"] >= 600 and right["width"] >= 600, (left, right)
    assert left["top"] == right["top"]  # side by side
    shot(page, f"ws-1366-{scheme}")

    # The choice holds for the next page; Enter (edit the change) shows the panel for that edit,
    # and Esc gives the images their room back.
    page.reload()
    page.wait_for_selector("[data-workspace][data-ready]")
    expect(page.locator(".ws-panel")).to_be_hidden()
    page.keyboard.press("n")
    page.keyboard.press("Enter")
    expect(page.locator("[data-change-list] [data-input=category]")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator(".ws-panel")).to_be_hidden()
    page.keyboard.press("s")
    expect(page.locator(".ws-panel")).to_be_visible()
    wait_for_saved_draft(page, page.config["assignment"])


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_1920x1080_the_panel_stays_and_images_are_larger(new_page, project, annotator_1, scheme):
    photo_pair(project, (1024, 768))
    page = open_workspace(new_page, (1920, 1080), scheme)
    expect(page.locator(".ws-panel")).to_be_visible()
    left, right = shown_images(page)
    assert left["width"] >= 700 and right["width"] >= 700, (left, right)
    shot(page, f"ws-1920-{scheme}")


def test_wide_images_are_shown_a_above_b_and_l_switches(new_page, project, annotator_1):
    photo_pair(project, (1280, 400))
    page = open_workspace(new_page, (1366, 768))
    expect(page.locator("[data-workspace]")).to_have_attribute("data-layout", "stacked")
    top, bottom = shown_images(page)
    assert bottom["top"] > top["top"]
    stacked_width = top["width"]
    shot(page, "ws-1366-wide-stacked")
    page.keyboard.press("l")
    expect(page.locator("[data-workspace]")).to_have_attribute("data-layout", "side")
    left, _ = shown_images(page)
    assert stacked_width > left["width"] * 1.3  # above each other, the images are much larger


def test_flicker_and_swipe_keep_the_side_by_side_scale(new_page, project, annotator_1):
    photo_pair(project, (1024, 768))
    page = open_workspace(new_page, (1366, 768))
    # Zoomed in on something (at fit, one image fills the whole stage instead: issue 27,
    # tests/browser/test_day_polish.py).
    at_fit = page.locator("[data-zoom-level]").text_content()
    page.keyboard.press("+")
    expect(page.locator("[data-zoom-level]")).not_to_have_text(at_fit or "")  # repainted
    [left, _] = shown_images(page)
    level = page.locator("[data-zoom-level]").text_content()
    for key in ("f", "w", "b"):
        page.keyboard.press(key)
        shown = shown_images(page)[0]
        assert abs(shown["width"] - left["width"]) < 1, (key, shown, left)
    expect(page.locator("[data-zoom-level]")).to_have_text(level)  # image px per CSS px, unchanged
