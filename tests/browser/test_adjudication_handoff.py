"""Deciding a pair and moving on: the next pair's page says what was decided (with Undo), ignores
the second click of a slow double-click, and a decided pair's panel never contradicts itself."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from review.models import Resolution
from tests.browser.test_adjudication import disputed_pair, open_adjudication
from tests.browser.workspace import log_in

pytestmark = pytest.mark.browser


def test_a_double_click_decides_one_pair_and_the_toast_undoes_it(
    page, project, annotator_1, annotator_2, lead
):
    first = disputed_pair(project, annotator_1, annotator_2)
    second = disputed_pair(project, annotator_1, annotator_2)
    log_in(page, "lead")
    open_adjudication(page, first)
    accept = page.locator("[data-decide] [data-decision=accept_1]")
    box = accept.bounding_box()
    where = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    page.wait_for_timeout(1100)  # past the guard, as a lead who looked at the pair first
    page.mouse.click(*where)
    page.wait_for_url(f"**{reverse('review:adjudicate', args=[second.pk])}")
    page.wait_for_selector("[data-adjudication][data-ready]")
    # The second click of a slow double-click lands on the next pair's Accept button.
    assert page.locator("[data-decide] [data-decision=accept_1]").bounding_box() == box
    page.mouse.click(*where)
    expect(page.locator("[data-status-hint]")).to_contain_text("Click ignored")
    second.refresh_from_db()
    assert second.status == "disputed"
    assert list(Resolution.objects.values_list("pair_id", "decision")) == [(first.pk, "accept_1")]

    toast = page.locator("[data-toast]")
    expect(toast).to_contain_text("Annotation 1 accepted — the pair is now accepted.")
    toast.get_by_role("button", name="Undo").click()
    page.wait_for_url(f"**{reverse('review:adjudicate', args=[first.pk])}")
    first.refresh_from_db()
    assert first.status == "disputed"
    assert list(Resolution.objects.order_by("pk").values_list("pair_id", "decision")) == [
        (first.pk, "accept_1"),
        (first.pk, "reopen"),
    ]
    expect(page.locator("[data-pair-status]")).to_have_text("Disputed")


def test_a_decided_pair_does_not_say_disputed_under_accepted(
    page, project, annotator_1, annotator_2, lead
):
    pair = disputed_pair(project, annotator_1, annotator_2)
    log_in(page, "lead")
    open_adjudication(page, pair)
    page.wait_for_timeout(1100)  # past the guard against a double-click from the page before
    page.locator("[data-decide] [data-decision=accept_2]").click()
    expect(page.locator("[data-pair-status]")).to_have_text("Accepted")
    verdict = page.locator("[data-verdict] .adj-verdict-line")
    expect(verdict).to_contain_text("The rules said")
    expect(verdict.locator("[data-verdict-now]")).to_contain_text("Accepted")
