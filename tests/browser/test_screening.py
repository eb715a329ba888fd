"""A lead clears the screening gate in a real browser: tick all, accept, and the pairs are
back in the queue."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from annotator.models import Pair, PairStatus
from annotator.predictions import predictions_import
from tests.browser.workspace import log_in
from tests.factories import make_pairs

pytestmark = pytest.mark.browser


def test_a_lead_accepts_every_held_pair_at_once(page: Page, project, lead):
    project.screening_flags = ["no_visible_change"]
    project.save(update_fields=["screening_flags"])
    held = make_pairs(project, 3)
    rows = [{"pair": p.pk, "model": "screen", "flags": ["no_visible_change"]} for p in held]
    predictions_import(project=project, data="\n".join(map(json.dumps, rows)).encode())
    assert {p.status for p in Pair.objects.all()} == {PairStatus.SCREENED_OUT}

    log_in(page, lead.username)
    page.goto(f"/p/{project.slug}/screening/")
    expect(page.locator(".screening-table tbody tr")).to_have_count(3)
    page.get_by_label("All on this page").check()
    page.get_by_role("button", name="Accept into the queue").click()

    expect(page.get_by_text("3 pairs accepted back into the queue.")).to_be_visible()
    expect(page.get_by_text("Nothing is waiting for screening.")).to_be_visible()
    assert {p.status for p in Pair.objects.all()} == {PairStatus.PRE_ANNOTATED}
