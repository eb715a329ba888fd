"""The two canvas screens load their code as one script each (config/staticbundles.py): the
bundle, never the modules it was built from, and the screen mounts from it under the CSP."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.test_adjudication import disputed_pair, open_adjudication
from tests.browser.workspace import log_in, make_pair, start_annotating

pytestmark = pytest.mark.browser


def _scripts(page: Page) -> list[str]:
    """The static paths of every script and stylesheet the page requests from now on."""
    requested: list[str] = []
    page.on(
        "request",
        lambda request: (
            requested.append(request.url.split("/static/", 1)[1])
            if request.resource_type in ("script", "stylesheet") and "/static/" in request.url
            else None
        ),
    )
    return requested


def test_the_workspace_runs_from_its_bundle(page, project, annotator_1):
    make_pair(project)
    log_in(page, "annotator_1")
    requested = _scripts(page)
    start_annotating(page)  # waits for the mounted workspace ([data-ready]): the bundle ran

    # The home page, then the workspace: the shared files twice, the workspace's own once.
    assert set(requested) == {
        "canvas/css/canvas.css",
        "annotator/js/main.bundle.js",
        "diffmark/app.css",
        "diffmark/js/forms.js",
        "django_htmx/htmx-2.min.js",
    }
    assert requested.count("annotator/js/main.bundle.js") == 1


def test_the_adjudication_screen_runs_from_its_bundle(
    page, project, annotator_1, annotator_2, lead
):
    pair = disputed_pair(project, annotator_1, annotator_2)
    log_in(page, "lead")
    requested = _scripts(page)
    open_adjudication(page, pair)

    assert [path for path in requested if path.endswith(".js")] == [
        "django_htmx/htmx-2.min.js",
        "diffmark/js/forms.js",
        "review/js/adjudicate.bundle.js",
    ]
