"""What a pair costs a trained annotator, in keystrokes, clicks, drags and seconds, with the
assists off (today's taught keyboard path) and on (click-to-box and drafts), side by side.

    .venv/bin/python bench/annotate_keystrokes.py [--pairs 20] [--seed 0] [--port 8131]
                                                  [--synthesized] [--json FILE]

Set-up: a fresh SQLite database under a temporary folder; two projects (VDiff-Bench categories,
overlap 1) with the same `--pairs` pairs from the demo generator (pairdiff.synth.make_pair:
real photos, programmatic edits of twelve kinds, known answers; with --synthesized, pairs of all
ten VDiff-Bench categories made from photos the demo never edits, as bench/pixeldiff.py does),
the project vocabulary the known entities, one with the assists
precomputed as the worker does after an import and drafts on, one without (by hand). The app is
served by `manage.py runserver` (DEBUG=1, no broker) on 127.0.0.1:`--port`; Debian's Chromium
(headless, 1400×900) is driven by Playwright as an annotator who knows each pair's answer:

- off: per change, drag the known box on A (or X: absent), Tab, drag it on B (or X), Shift+digit
  for the category, Enter and type the known description, Enter and type the entity (A's field;
  B follows while linked), Esc; G instead of the drags for a whole-image change; then the tier
  and Ctrl+Enter. The drags land on the known boxes, so their IoU is that of the screen's
  rounding: a person's hand is less exact.
- on: per change, one click on the centre of the known box (on B when A is absent; anywhere for a
  whole-image change), A to accept the draft, C (mirror) when the click left a side absent
  where the known answer has a box, X when it boxed a side the answer has absent (Tab first
  when the other side is active), Shift+digit only when the drafted category is not the known
  one, Enter and type the entity only when the draft has none; then the tier and Ctrl+Enter.
  Boxes are not redrawn: a poor box shows in the IoU. When the click finds no region the
  annotator falls back to the off path. The drafted description is kept as it is.

Counted: every key press (a character needing Shift counts two, Ctrl+Enter and Shift+digit two),
every click, every drag. Seconds by the keystroke-level model (Card, Moran & Newell 1980) with
K = 0.28 s (an average 40 wpm typist), P = 1.1 s to point, B = 0.1 s per button press or
release (a click = P + 2B), a drag = P + B + P + B = 2.4 s, H = 0.4 s to move a hand between
mouse and keyboard, M = 1.35 s of mental preparation before each click, drag, typed string,
category, draft check, tier and submit. IoU per side: each known box's best IoU with a box of
the submitted answer on that side (absent sides excluded). The page also times each click from
the press to the first frame painted with the boxes (p95 printed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.keystroke_model import Cost  # noqa: E402

USER, PASSWORD = "annotator", "bench-only-password-1"


def seed(n: int, seed_: int, synthesized: bool = False) -> dict:
    """Two projects with the same pairs; returns {pair id: its known changes}."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from annotator.assists import pairs_assist_compute
    from annotator.models import PairAssist
    from annotator.services import PairInput, pair_create
    from pairdiff.synth import TWINS, make_pair
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import DraftDescriptions, Preset, Role

    if synthesized:
        from bench.pixeldiff import bench_photos, synthesized_pairs

        skipped: list[str] = []
        made_pairs = synthesized_pairs(bench_photos(None), 4, range(seed_, seed_ + 1), skipped)
        pairs = [p for _, p in zip(range(n), made_pairs, strict=False)]
    else:
        pairs = [make_pair(i * TWINS, seed_) for i in range(n)]  # one per kind, as before twins
    vocabulary = sorted(
        {e for p in pairs for c in p.changes for e in (c.entity_a, c.entity_b) if e}
    )
    user = user_ensure(username=USER, password=PASSWORD)
    known = {}
    for slug in ("off", "on"):
        project = project_create(slug=slug, name=f"Assists {slug}", preset=Preset.VDIFF, overlap=1)
        project.entity_vocabulary = vocabulary
        project.draft_descriptions = DraftDescriptions.ON
        project.save()
        membership_set(project=project, user=user, role=Role.ANNOTATOR)
        made = []
        for p in pairs:
            made.append(
                pair_create(
                    project=project,
                    pair_input=PairInput(
                        p.image_a, p.image_b, external_id=p.key, instruction=p.instruction
                    ),
                )
            )
            known[made[-1].pk] = [
                {
                    "kind": c.kind,
                    "category": c.category,
                    "description": c.description,
                    "entity_a": c.entity_a,
                    "entity_b": c.entity_b,
                    "boxes_a": [list(b) for b in c.boxes_a],
                    "boxes_b": [list(b) for b in c.boxes_b],
                }
                for c in p.changes
            ]
        if slug == "on":
            pairs_assist_compute([m.pk for m in made])
        else:
            PairAssist.objects.filter(pair__project=project).delete()
    return known


def iou(p, q) -> float:
    ix = max(0.0, min(p[2], q[2]) - max(p[0], q[0]))
    iy = max(0.0, min(p[3], q[3]) - max(p[1], q[1]))
    inter = ix * iy
    union = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter
    return inter / union if union else 0.0


def run(page, slug: str, known: dict, assists: bool) -> list[dict]:
    from tests.browser.workspace import wait_for_workspace

    page.goto("/")
    page.locator(f"form[action='/p/{slug}/next/'] button[type=submit]").click()
    config = wait_for_workspace(page)
    page.evaluate(TIMER)
    rows = []
    while True:
        changes = known[config["pair"]]
        categories = [c["slug"] for c in config["categories"]]
        cost = Cost()
        for i, change in enumerate(changes):
            done = False
            if assists:
                done = _assisted(page, config, change, i, categories, cost)
            if not done:
                _by_hand(page, config, change, i, categories, cost)
        page.keyboard.press("1")
        cost.keys(1)
        answer = json.loads(page.locator("textarea[name=answer]").input_value())
        page.keyboard.press("Control+Enter")
        cost.keys(2)
        rows.append(
            {
                "pair": config["pair"],
                "kind": changes[0]["kind"],
                "keystrokes": cost.keystrokes,
                "clicks": cost.clicks,
                "drags": cost.drags,
                "seconds": cost.seconds(),
                **_ious(changes, answer["changes"]),
            }
        )
        old = config["assignment"]
        page.wait_for_function(
            """old => document.querySelector('#workspace.queue-empty')
              || (document.querySelector('[data-workspace][data-ready]')
                && document.querySelector('[data-workspace]').dataset.assignment
                  !== String(old))""",
            arg=old,
        )
        if page.locator("#workspace.queue-empty").count():
            break
        config = wait_for_workspace(page, not_assignment=old)
    rows[0]["click_ms"] = page.evaluate("() => window.clickTimes || []")
    return rows


# The page times each click from the press to the second frame after the store changed.
TIMER = """() => {
  window.clickTimes = [];
  let pressed = null;
  document.addEventListener('pointerdown', (e) => { pressed = e.timeStamp; }, { capture: true });
  const hook = () => {
    const ws = window.diffmarkWorkspace;
    if (!ws || ws.__timed) return;
    ws.__timed = true;
    ws.store.subscribe(() => {
      if (pressed === null) return;
      const t0 = pressed; pressed = null;
      const done = () => window.clickTimes.push(performance.now() - t0);
      requestAnimationFrame(() => requestAnimationFrame(done));
    });
  };
  hook();
  document.addEventListener('htmx:load', () => setTimeout(hook, 0));
}"""


def _centre(box):
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _assisted(page, config, change, i, categories, cost) -> bool:
    from tests.browser.workspace import mouse_at, panel

    a = config["sides"]["a"]
    whole = change["kind"] in ("lighting", "global_colour", "downscale") or (
        change["boxes_a"] == [[0, 0, a["width"], a["height"]]]
    )
    before = len(json.loads(page.locator("textarea[name=answer]").input_value())["changes"])
    if whole:
        side, index, point = "a", 0, (a["width"] * 0.5, a["height"] * 0.02)
    elif change["boxes_a"]:
        side, index, point = "a", 0, _centre(change["boxes_a"][0])
    else:
        side, index, point = "b", 1, _centre(change["boxes_b"][0])
    p = panel(page, index, a, config["sides"][side])
    page.mouse.click(*mouse_at(p, *point))
    cost.click()
    now = json.loads(page.locator("textarea[name=answer]").input_value())["changes"]
    if len(now) == before:
        return False
    page.keyboard.press("a")  # accept the draft (after reading it: M)
    cost.keys(1)
    got = json.loads(page.locator("textarea[name=answer]").input_value())["changes"][i]
    # A side the click got wrong: boxed where nothing is (X marks it absent), or absent where
    # the thing is (C mirrors the other side's box there through the alignment).
    for fix in ("a", "b"):
        other = "b" if fix == "a" else "a"
        wrong_absent = change[f"boxes_{fix}"] and not got[f"boxes_{fix}"] and got[f"boxes_{other}"]
        wrong_boxed = not change[f"boxes_{fix}"] and got[f"boxes_{fix}"]
        if not (wrong_absent or wrong_boxed):
            continue
        active = page.evaluate("() => window.diffmarkWorkspace.store.state.sel.side")
        want = other if wrong_absent else fix  # C works from the other side, X on this one
        if active != want:
            page.keyboard.press("Tab")
            cost.keys(1, mental=False)
        page.keyboard.press("c" if wrong_absent else "x")
        cost.keys(1)
        got = json.loads(page.locator("textarea[name=answer]").input_value())["changes"][i]
    if got["category"] != change["category"]:
        k = categories.index(change["category"])
        page.keyboard.press(f"Shift+Digit{(k + 1) % 10}")
        cost.keys(2)
    entity = change["entity_a"] or change["entity_b"]
    named = got["entity_a"] if change["boxes_a"] else got["entity_b"]
    if entity and not named:
        page.keyboard.press("Enter")
        cost.keys(1)
        page.keyboard.type(entity)
        cost.typed(entity)
        page.keyboard.press("Escape")
        cost.keys(1, mental=False)
    return True


def _by_hand(page, config, change, i, categories, cost) -> None:
    from tests.browser.workspace import drag, mouse_at, panel

    a = config["sides"]["a"]
    if i > 0:
        page.keyboard.press("n")
        cost.keys(1)
    whole = change["boxes_a"] == [[0, 0, a["width"], a["height"]]]
    if whole:
        page.keyboard.press("g")
        cost.keys(1)
    else:
        for side, index in (("a", 0), ("b", 1)):
            if side == "b":
                page.keyboard.press("Tab")
                cost.keys(1, mental=False)
            boxes = change[f"boxes_{side}"]
            if not boxes:
                page.keyboard.press("x")
                cost.keys(1)
            for box in boxes:
                p = panel(page, index, a, config["sides"][side])
                drag(page, mouse_at(p, box[0], box[1]), mouse_at(p, box[2], box[3]))
                cost.drag()
    k = categories.index(change["category"])
    page.keyboard.press(f"Shift+Digit{(k + 1) % 10}")
    cost.keys(2)
    page.keyboard.press("Enter")
    cost.keys(1, mental=False)
    page.keyboard.type(change["description"])
    cost.typed(change["description"])
    page.keyboard.press("Escape")
    cost.keys(1, mental=False)
    entity = change["entity_a"] or change["entity_b"]
    page.keyboard.press("Enter")
    cost.keys(1, mental=False)
    page.keyboard.type(entity)
    cost.typed(entity)
    page.keyboard.press("Escape")
    cost.keys(1, mental=False)


def _ious(known: list[dict], answered: list[dict]) -> dict:
    out = {}
    for side in ("a", "b"):
        values = []
        for change in known:
            for box in change[f"boxes_{side}"]:
                mine = [q for c in answered for q in c[f"boxes_{side}"]]
                values.append(max((iou(box, q) for q in mine), default=0.0))
        out[f"iou_{side}"] = values
    return out


def summary(rows: list[dict]) -> dict:
    def med(key):
        return statistics.median(r[key] for r in rows)

    ious = {s: [v for r in rows for v in r[f"iou_{s}"]] for s in ("a", "b")}
    return {
        "pairs": len(rows),
        "keystrokes": med("keystrokes"),
        "keys_range": (min(r["keystrokes"] for r in rows), max(r["keystrokes"] for r in rows)),
        "clicks": med("clicks"),
        "drags": med("drags"),
        "seconds": med("seconds"),
        "seconds_mean": statistics.fmean(r["seconds"] for r in rows),
        "iou_a": statistics.fmean(ious["a"]),
        "iou_b": statistics.fmean(ious["b"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=8131)
    parser.add_argument(
        "--synthesized",
        action="store_true",
        help="pairs as `manage.py synthesize` makes them (all ten VDiff-Bench categories) from "
        "scikit-image photos the demo never edits, instead of the demo generator's",
    )
    parser.add_argument("--json", type=Path, help="write every pair's figures here")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="diffmark-keystrokes-"))
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        "DEBUG": "1",
        "MEDIA_ROOT": str(workdir / "media"),
        "STATIC_BUNDLE_DIR": str(workdir / "bundles"),
        "LOG_LEVEL": "WARNING",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    os.environ.update(env)
    os.environ.pop("CELERY_BROKER_URL", None)
    t0 = time.monotonic()
    known = seed(args.pairs, args.seed, args.synthesized)
    print(f"seeded {args.pairs} pairs × 2 projects in {time.monotonic() - t0:.1f} s", flush=True)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{args.port}", "--noreload"],
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(args.port)
        results = _drive(args.port, known)
    finally:
        os.killpg(server.pid, 15)
        server.wait()
    _report(results, args)


def _wait_for(port: int) -> None:
    import http.client

    for _ in range(200):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/login/")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def _drive(port: int, known: dict) -> dict:
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for slug, assists in (("off", False), ("on", True)):
            context = browser.new_context(viewport=VIEWPORT, base_url=f"http://127.0.0.1:{port}")
            page = context.new_page()
            page.goto("/login/")
            page.fill("#id_username", USER)
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url("**/")
            try:
                results[slug] = run(page, slug, known, assists)
            except Exception:
                shot = Path(tempfile.gettempdir()) / f"annotate-keystrokes-{slug}.png"
                page.screenshot(path=str(shot))
                print(f"stopped; the page is in {shot}", file=sys.stderr)
                raise
            context.close()
        browser.close()
    return results


def _report(results: dict, args) -> None:
    off, on = summary(results["off"]), summary(results["on"])
    clicks = sorted(results["on"][0].get("click_ms", []))
    p95 = clicks[max(0, int(0.95 * len(clicks)) - 1)] if clicks else float("nan")
    source = (
        "synthesized (pairdiff.synth.custom)" if args.synthesized else "pairdiff.synth.make_pair"
    )
    print(f"\n{args.pairs} pairs ({source}, seed {args.seed}), medians per pair:")
    print("| | keystrokes (range) | clicks | drags | seconds (KLM; mean) | IoU A | IoU B |")
    print("|---|---|---|---|---|---|---|")
    for name, s in (("assists off", off), ("assists on", on)):
        lo, hi = s["keys_range"]
        print(
            f"| {name} | {s['keystrokes']:g} ({lo}–{hi}) | {s['clicks']:g} | {s['drags']:g} "
            f"| {s['seconds']:.1f} ({s['seconds_mean']:.1f}) "
            f"| {s['iou_a']:.3f} | {s['iou_b']:.3f} |"
        )
    if clicks:
        print(
            f"\nclick → both boxes painted, in the page: median {statistics.median(clicks):.1f} ms,"
            f" p95 {p95:.1f} ms over {len(clicks)} clicks"
        )
    print("\nper pair (off | on): kind, keystrokes, drags, seconds, IoU A/B")
    for x, y in zip(results["off"], results["on"], strict=True):
        fmt = lambda r: (  # noqa: E731
            f"{r['keystrokes']:3d} {r['drags']} {r['seconds']:5.1f} "
            f"{_mean(r['iou_a'])}/{_mean(r['iou_b'])}"
        )
        print(f"  {x['kind']:16s} {fmt(x)} | {fmt(y)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.2f}" if values else "  – "


if __name__ == "__main__":
    main()
