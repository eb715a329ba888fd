import { test } from "node:test";
import assert from "node:assert/strict";
import { nextZoomStep } from "../../static/canvas/js/actions.js";
import { createClock, formatDuration } from "../../static/canvas/js/clock.js";
import { differencePixels, heatLut } from "../../static/canvas/js/modes.js";
import { errorSlot } from "../../static/canvas/js/panel.js";
import { panelSide } from "../../static/canvas/js/scene.js";

test("zoom steps are whole pixel scales above 1:1", () => {
  assert.equal(nextZoomStep(0.94, 1), 1);
  assert.equal(nextZoomStep(1, 1), 2);
  assert.equal(nextZoomStep(6, 1), 8);
  assert.equal(nextZoomStep(64, 1), 64);
  assert.equal(nextZoomStep(8, -1), 6);
  assert.equal(nextZoomStep(1.3, -1), 1);
  assert.equal(nextZoomStep(0.05, -1), 0.05);
});

test("time counts only while visible, and continues from a draft", () => {
  let now = 0;
  let visible = true;
  const clock = createClock({ initialMs: 5000, now: () => now, isVisible: () => visible });
  now = 1000;
  assert.equal(clock.elapsed(), 6000);
  visible = false;
  clock.update();
  now = 60000;
  assert.equal(clock.elapsed(), 6000);
  visible = true;
  clock.update();
  now = 61500;
  assert.equal(clock.elapsed(), 7500);
  assert.equal(formatDuration(65000), "1:05");
  assert.equal(formatDuration(3723000), "1:02:03");
});

test("the difference heatmap: black where equal, bright where different, A dimly beneath", () => {
  const a = new Uint8ClampedArray([200, 200, 200, 255, 10, 10, 10, 255, 0, 0, 0, 255]);
  const b = new Uint8ClampedArray([200, 200, 200, 255, 250, 10, 10, 255, 3, 0, 0, 255]);
  const out = differencePixels(a, b);
  assert.deepEqual([...out.slice(0, 4)], [56, 56, 56, 255], "equal: grey context only");
  assert.ok(out[4] > 200 && out[5] > 150, "a large difference is bright");
  assert.ok(out[8] > 0 && out[8] < 120, "a faint difference still shows");
  const lut = heatLut();
  assert.deepEqual([...lut.slice(0, 3)], [0, 0, 4]);
  assert.deepEqual([...lut.slice(765)], [252, 255, 164]);
});

test("error paths land in the right slot", () => {
  assert.deepEqual(errorSlot("changes.0.boxes_b.1"), { change: 0, slot: "boxes_b" });
  assert.deepEqual(errorSlot("changes.12.entity_a"), { change: 12, slot: "entity_a" });
  assert.deepEqual(errorSlot("changes.3"), { change: 3, slot: "_" });
  assert.deepEqual(errorSlot("changes.3.weird"), { change: 3, slot: "_" });
  assert.deepEqual(errorSlot("tier"), { slot: "tier" });
  assert.deepEqual(errorSlot(""), { slot: "_" });
});

test("panels edit a fixed side only side by side", () => {
  assert.equal(panelSide("side", 0, "b"), "a");
  assert.equal(panelSide("side", 1, "a"), "b");
  assert.equal(panelSide("flicker", 0, "b"), "b");
  assert.equal(panelSide("diff", 0, "a"), "a");
});

test("a preloaded next pair is used only while its lease has a minute left", async () => {
  const { usable } = await import("../../static/annotator/js/prefetch.js");
  const now = Date.parse("2026-01-01T10:00:00Z");
  const ahead = { html: "<section id=workspace></section>", url: "/a/2/", expires_at: "2026-01-01T10:05:00Z" };
  assert.equal(usable(ahead, now), ahead);
  assert.equal(usable({ ...ahead, expires_at: "2026-01-01T10:00:30Z" }, now), null);
  assert.equal(usable({ ...ahead, html: "" }, now), null);
  assert.equal(usable(null, now), null);
});
