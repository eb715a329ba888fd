"""Browser tests: Debian's Chromium driven by Playwright's sync API against pytest-django's live
server. One browser for the session, a fresh context (cookies, localStorage) per test."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import ViewportSize, expect, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Wide enough for both panels and the answer panel side by side, as on an annotator's screen.
VIEWPORT: ViewportSize = {"width": 1400, "height": 900}
SHOTS = Path("/tmp/diffmark-browser-failures")

expect.set_options(timeout=10_000)

_reports = pytest.StashKey[dict]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so the page fixture knows whether the test failed."""
    report = yield
    item.stash.setdefault(_reports, {})[report.when] = report
    return report


def pytest_collection_modifyitems(config, items):
    """Browser tests run last: the browser (and the event loop below) stays up until the session
    ends, and no other test should run beside that loop or inherit its environment."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        # Never skip: a silently skipped browser suite is a suite that never runs. CI installs
        # the Debian package first; Playwright's own browser downloads are not used.
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's Chromium "
            "(`apt-get install chromium`).",
            pytrace=False,
        )
    with pytest.MonkeyPatch.context() as env, sync_playwright() as p:
        # Playwright's sync API registers an asyncio event loop as running in the main thread for
        # as long as the browser is open, so Django takes every ORM call from a test body or a
        # fixture for a call from async code and raises SynchronousOnlyOperation. The loop only
        # drives the browser and no Django code runs on it: the calls are synchronous and safe.
        # Set here, not at import, so that tests run before this one (and the subprocesses they
        # start: `manage.py check --deploy` fails on async.E001 when it sees this) are unaffected.
        env.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser, live_server, request):
    """Pages in fresh browser contexts (a second one is another tab's closed, or another machine);
    uncaught script errors fail the test, and a failed test leaves screenshots in SHOTS."""
    contexts = []
    errors: list[str] = []

    def make():
        context = browser.new_context(viewport=VIEWPORT, base_url=live_server.url)
        context.set_default_timeout(10_000)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
        contexts.append(context)
        return page

    yield make
    call = request.node.stash.get(_reports, {}).get("call")
    if call is not None and call.failed:
        SHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        for i, context in enumerate(contexts):
            for j, page in enumerate(context.pages):
                with contextlib.suppress(PlaywrightError):  # a crashed page has nothing to show
                    page.screenshot(path=str(SHOTS / f"{name}-{i}-{j}.png"), full_page=True)
    for context in contexts:
        context.close()
    _wait_for_requests_in_flight()
    assert not errors, f"uncaught script errors: {errors}"


def _wait_for_requests_in_flight(timeout: float = 10.0) -> None:
    """A closed page may have left a request (a debounced draft save) that the live server is
    still handling; the database flush after the test must not run beside it, or the request
    writes into rows being deleted (on SQLite a foreign key failure at the flush's commit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        handling = [
            thread
            for thread in threading.enumerate()
            if getattr(getattr(thread, "_target", None), "__name__", "") == "process_request_thread"
        ]
        if not handling:
            return
        for thread in handling:
            thread.join(max(0.0, deadline - time.monotonic()))


@pytest.fixture
def page(new_page):
    return new_page()
