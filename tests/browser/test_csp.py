"""The pages work under the Content-Security-Policy: no script is blocked, the filters that
submit themselves and the forms that ask first still do so (tests/browser/test_workspace.py and
test_adjudication.py run the two canvas screens under the same policy)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from annotator.leasing import assignment_lease_next
from annotator.submitting import annotation_submit
from projects.models import Membership
from tests.browser.workspace import log_in, make_pair
from tests.factories import answer

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/diffmark-csp")


def _csp_violations(page: Page) -> list[str]:
    found: list[str] = []
    page.on(
        "console",
        lambda message: (
            found.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return found


def test_the_lead_pages_run_under_the_policy(page, project, lead, annotator_1):
    make_pair(project)
    violations = _csp_violations(page)
    log_in(page, "lead")

    page.goto(f"/p/{project.slug}/")
    page.select_option("select[name=status]", "imported")  # submits itself (data-autosubmit)
    expect(page).to_have_url(re.compile(r"/p/cars/\?(q=&)?status=imported&"), timeout=5000)

    page.goto(f"/p/{project.slug}/members/")
    page.once("dialog", lambda dialog: dialog.dismiss())  # the confirm() comes up; say no
    page.locator(f"form[action$='/members/{annotator_1.pk}/remove/'] button").click()
    page.wait_for_timeout(300)
    assert Membership.objects.filter(project=project, user=annotator_1).exists()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"form[action$='/members/{annotator_1.pk}/remove/'] button").click()
    expect(page.locator(".messages")).to_be_visible()
    assert not Membership.objects.filter(project=project, user=annotator_1).exists()

    for url in ("/", f"/review/{project.slug}/dashboard/", "/api/v1/docs/"):
        page.goto(url)
        page.wait_for_load_state("networkidle")
    expect(page.locator(".swagger-ui")).to_be_visible()  # Swagger's start-up is a file now
    assert violations == []


def test_the_annotator_pair_page_shows_the_images_and_instruction_only(page, project, annotator_1):
    pair = make_pair(project)
    pair.instruction, pair.category_hint = "make the sky darker", "attribute"
    pair.metadata = {"edit": "add_noise", "sigma": 9.61}
    pair.save()
    lease = assignment_lease_next(project=project, user=annotator_1)
    annotation_submit(assignment_id=lease.pk, user=annotator_1, body=answer())
    violations = _csp_violations(page)
    log_in(page, "annotator_1")

    page.goto(f"/pairs/{pair.pk}/")

    expect(page.locator(".instruction")).to_contain_text("make the sky darker")
    expect(page.locator("img[alt='image A']")).to_be_visible()
    body = page.locator("main").inner_text()
    assert "add_noise" not in body and "Category hint" not in body and "In annotation" not in body
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "annotator-pair-page.png"), full_page=True)
    page.goto(f"/p/{project.slug}/")
    expect(page.locator(".statusbar")).to_have_count(0)  # no verdict counts either
    page.screenshot(path=str(SHOTS / "annotator-project-page.png"), full_page=True)
    assert violations == []
