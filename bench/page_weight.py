"""What a browser transfers to open the workspace, served as in production.

    .venv/bin/python bench/page_weight.py [--port 8322] [--screenshot workspace.png]

Production settings (DEBUG=0, `collectstatic` into a throwaway STATIC_ROOT, WhiteNoise, gunicorn)
on a throwaway SQLite database with one project and one pair; Debian's Chromium logs in, leases
the pair and opens the workspace. Counted from the browser's network log: requests, bytes over
the wire (compressed bodies plus headers) and raw bytes (decoded bodies), split into HTML, JS/CSS
and the rest (the pair's images and the icon). A second visit from the same browser shows what
the caches spare: static files have hashed names and are cached for a year, so only the page and
the images should go to the network.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import gunicorn_start, server_env  # noqa: E402

HOST = "127.0.0.1"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
USER, PASSWORD = "weigher", "page-weight-password"


def _environment(workdir: Path, host: str) -> dict[str, str]:
    database_url = f"sqlite:///{workdir / 'db.sqlite3'}"
    return server_env(os.environ, workdir, database_url=database_url, hosts=host)


def _seed() -> str:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("collectstatic", verbosity=0, interactive=False)
    from annotator.services import PairInput, pair_create
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import Role
    from tests.images import edited_pair

    project = project_create(slug="weight", name="Page weight", overlap=1)
    a, b = edited_pair(size=(640, 480))
    pair_create(project=project, pair_input=PairInput(a, b, external_id="p0"))
    user = user_ensure(username=USER, password=PASSWORD)
    membership_set(project=project, user=user, role=Role.ANNOTATOR)
    return project.slug


class NetworkLog:
    """Every request a page makes, from the DevTools protocol: what went over the wire
    (encodedDataLength: headers and the body as sent) and what the body decoded to."""

    def __init__(self, page) -> None:
        self.requests: dict[str, dict] = {}
        session = page.context.new_cdp_session(page)
        session.send("Network.enable")
        session.on("Network.requestWillBeSent", self._sent)
        session.on("Network.responseReceived", self._received)
        session.on("Network.dataReceived", self._data)
        session.on("Network.loadingFinished", self._finished)
        session.on("Network.requestServedFromCache", self._from_cache)

    def _sent(self, event: dict) -> None:
        self.requests[event["requestId"]] = {
            "url": event["request"]["url"],
            "type": event.get("type", "Other"),
            "raw": 0,
            "wire": 0,
            "cached": False,
            "encoding": "",
        }

    def _received(self, event: dict) -> None:
        entry = self.requests.get(event["requestId"])
        if entry is not None:
            response = event["response"]
            entry["cached"] = response.get("fromDiskCache") or response.get("fromMemoryCache")
            headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
            entry["encoding"] = headers.get("content-encoding", "")
            entry["cache_control"] = headers.get("cache-control", "")

    def _from_cache(self, event: dict) -> None:
        if event["requestId"] in self.requests:
            self.requests[event["requestId"]]["cached"] = True

    def _data(self, event: dict) -> None:
        if event["requestId"] in self.requests:
            self.requests[event["requestId"]]["raw"] += event["dataLength"]

    def _finished(self, event: dict) -> None:
        if event["requestId"] in self.requests:
            self.requests[event["requestId"]]["wire"] = int(event["encodedDataLength"])


def _kind(entry: dict) -> str:
    path = entry["url"].split("?", 1)[0]
    if entry["type"] == "Document":
        return "HTML"
    if path.endswith((".js", ".css")):
        return "JS/CSS"
    return "other"


def _report(title: str, log: NetworkLog) -> None:
    print(title)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for entry in log.requests.values():
        if entry["cached"]:
            continue
        total = totals[_kind(entry)]
        total[0] += 1
        total[1] += entry["wire"]
        total[2] += entry["raw"]
    for kind in ("HTML", "JS/CSS", "other"):
        n, wire, raw = totals[kind]
        print(
            f"  {kind:7} {n:3} requests  "
            f"{wire / 1000:7.1f} KB transferred  {raw / 1000:7.1f} KB raw"
        )
    page = [totals["HTML"][i] + totals["JS/CSS"][i] for i in range(3)]
    print(
        f"  HTML + JS/CSS: {page[0]} requests, {page[1] / 1000:.1f} KB transferred, "
        f"{page[2] / 1000:.1f} KB raw"
    )
    cached = sum(1 for entry in log.requests.values() if entry["cached"])
    if cached:
        print(f"  {cached} more answered from the browser's cache")


def _files(log: NetworkLog) -> None:
    for entry in sorted(log.requests.values(), key=lambda e: -e["raw"]):
        if _kind(entry) == "JS/CSS":
            name = entry["url"].split("/static/", 1)[-1]
            print(
                f"    {name:55} {entry['wire']:7,} B  {entry['raw']:7,} B raw  "
                f"{entry['encoding'] or 'identity':8} {entry['cache_control']}"
            )


def _measure(base: str, slug: str, screenshot: str | None) -> None:
    from playwright.sync_api import ViewportSize, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        viewport: ViewportSize = {"width": 1400, "height": 900}
        signed_in = browser.new_context(base_url=base, viewport=viewport)
        login = signed_in.new_page()
        login.goto("/login/")
        login.fill("#id_username", USER)
        login.fill("#id_password", PASSWORD)
        login.click("button[type=submit]")
        login.wait_for_load_state("networkidle")
        csrf = next(c["value"] for c in signed_in.cookies() if c["name"] == "csrftoken")
        leased = signed_in.request.post(
            f"/p/{slug}/next/", headers={"X-CSRFToken": csrf, "Referer": base + "/"}
        )
        url = leased.url
        # The session, not the cache: the first visit starts from an empty cache.
        context = browser.new_context(
            base_url=base, viewport=viewport, storage_state=signed_in.storage_state()
        )
        signed_in.close()
        for title in ("first visit, empty cache", "second visit, same browser"):
            page = context.new_page()
            log = NetworkLog(page)
            page.goto(url, wait_until="networkidle")
            # Set by the workspace's script once mounted: the bundle ran, not just arrived.
            page.wait_for_selector("[data-workspace][data-ready]", state="attached")
            _report(f"workspace {url}, {title} (Chromium {browser.version}):", log)
            if title.startswith("first"):
                _files(log)
                if screenshot:
                    page.screenshot(path=screenshot)
            page.close()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8322, help="a free port of your own")
    parser.add_argument("--screenshot", help="save the workspace of the first visit as this PNG")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="diffmark-weight-") as tmp:
        env = _environment(Path(tmp), HOST)
        os.environ.update(env)
        slug = _seed()
        server = gunicorn_start(ROOT, env, host=HOST, port=args.port, workers=1)
        try:
            _measure(f"http://{HOST}:{args.port}", slug, args.screenshot)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
