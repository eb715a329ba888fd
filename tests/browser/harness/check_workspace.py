"""Front-end smoke check of the annotation workspace against a running dev server.

Not a pytest module (the browser tests live beside it): a script a front-end change is checked
with by eye and by numbers. It logs in as the demo annotator, draws boxes with the mouse at fit
and zoomed to 8 px per pixel, mirrors one, reads the hidden answer field and compares the pixel
coordinates with what was drawn, then screenshots every view mode.

    DEBUG=1 .venv/bin/python manage.py demo --pairs 12
    DEBUG=1 .venv/bin/python manage.py runserver 127.0.0.1:8765
    .venv/bin/python tests/browser/harness/check_workspace.py --out /tmp/diffmark-shots

Exit code 0 when every coordinate matched, 1 otherwise. Uses Debian's Chromium; never runs
`playwright install`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def answer(page: Page) -> dict:
    return json.loads(page.eval_on_selector("textarea[name=answer]", "e => e.value"))


def start_pair(page: Page, base: str, user: str) -> dict:
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", f"{user}-demo")
    page.click("button[type=submit]")
    page.goto(f"{base}/")
    page.locator("form[action*='/next/'] button").first.click()
    page.wait_for_selector("[data-workspace][data-ready]")  # set once main.js has mounted it
    page.wait_for_function(
        "[...document.querySelectorAll('img[data-source]')].every(i => i.complete)"
    )
    return json.loads(page.inner_text("#ws-config"))


def drag(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Shift + drag always draws a new box, even over boxes a resumed draft already has."""
    page.keyboard.down("Shift")
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=6)
    page.mouse.up()
    page.keyboard.up("Shift")


def panel_mapper(page: Page, index: int, ref: dict, side: dict, scale: float | None, centre):
    """Image point -> screen point for one panel, computed independently of the page's code."""
    box = page.locator(f"[data-view='{index}'] canvas").bounding_box()
    width, height = round(box["width"]), round(box["height"])
    base = scale if scale is not None else min(width / ref["width"], height / ref["height"]) * 0.97
    disp_w, disp_h = ref["width"] * base, ref["height"] * base
    ox = box["x"] + width / 2 - centre[0] * disp_w
    oy = box["y"] + height / 2 - centre[1] * disp_h
    return lambda x, y: (ox + x * disp_w / side["width"], oy + y * disp_h / side["height"])


def check(label: str, got, want, failures: list[str], tolerance: int = 0) -> None:
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        good = all(abs(g - w) <= tolerance for g, w in zip(got, want, strict=True))
    else:
        good = got == want
    print(f"{'ok ' if good else 'BAD'} {label}: {got}" + ("" if good else f" (expected {want})"))
    if not good:
        failures.append(label)


def run(base: str, out: Path, size: tuple[int, int], user: str, failures: list[str]) -> None:
    width, height = size
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        config = start_pair(page, base, user)
        ref, side_b = config["sides"]["a"], config["sides"]["b"]
        page.locator("[data-stage]").focus()
        page.keyboard.press("0")

        # At fit one screen px is about one image px and the browser may round the mouse
        # position, so allow one pixel here; the zoomed check below is exact.
        at_a = panel_mapper(page, 0, ref, ref, None, (0.5, 0.5))
        drag(page, at_a(41.1, 30.9), at_a(120.9, 91.1))
        # A resumed pair may hold earlier boxes: the new one is the last of the active change.
        change = answer(page)["ui"]["active"]
        drawn = answer(page)["changes"][change]["boxes_a"][-1]
        check(f"{width}: box on A at fit", drawn, [41, 31, 121, 91], failures, tolerance=1)
        page.keyboard.press("c")
        kx, ky = side_b["width"] / ref["width"], side_b["height"] / ref["height"]
        x1, y1, x2, y2 = drawn
        mirrored = [round(x1 * kx), round(y1 * ky), round(x2 * kx), round(y2 * ky)]
        check(
            f"{width}: mirrored to B",
            answer(page)["changes"][change]["boxes_b"][-1],
            mirrored,
            failures,
        )

        # 1:1 then whole steps up to 8 px per pixel, centred: fractional pixels must land exactly.
        page.keyboard.press("z")
        for _ in range(5):
            page.keyboard.press("+")
        page.wait_for_timeout(100)
        at_a8 = panel_mapper(page, 0, ref, ref, 8.0, (0.5, 0.5))
        cx, cy = ref["width"] / 2, ref["height"] / 2
        drag(page, at_a8(cx + 10.4, cy + 5.3), at_a8(cx + 30.6, cy + 20.45))
        want = [round(cx + 10.4), round(cy + 5.3), round(cx + 30.6), round(cy + 20.45)]
        check(
            f"{width}: box on A at 800%",
            answer(page)["changes"][change]["boxes_a"][-1],
            want,
            failures,
        )
        page.screenshot(path=str(out / f"zoom-{width}.png"))

        page.keyboard.press("0")
        for key, name in (("d", "difference"), ("w", "swipe"), ("f", "flicker"), ("b", "side")):
            page.keyboard.press(key)
            page.wait_for_timeout(400)
            page.screenshot(path=str(out / f"mode-{name}-{width}.png"))
        page.keyboard.press("Control+Enter")
        page.wait_for_timeout(300)
        page.screenshot(path=str(out / f"errors-{width}.png"))
        page.keyboard.press("Shift+?")
        page.screenshot(path=str(out / f"help-{width}.png"))
        check(f"{width}: no page errors", errors, [], failures)
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8765")
    parser.add_argument("--out", type=Path, default=Path("/tmp/diffmark-shots"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for size, user in (((1440, 900), "annotator1"), ((1280, 720), "annotator2")):
        run(args.base, args.out, size, user, failures)
    print(f"screenshots in {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
