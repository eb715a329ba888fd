import { test } from "node:test";
import assert from "node:assert/strict";
import {
  MIN_DRAWN_PX, boxFromPoints, fitScale, fitView, frameBox, growBox, handlePoints, hitTest, iou,
  isTooSmall, isValidBox,
  mirrorBox, moveBox, panBy, resizeBox, roundBox, toImage, toScreen, viewTransform, zoomAt,
  zoomLimits, zoomToPixelScale,
} from "../../static/canvas/js/box.js";

const A = { width: 640, height: 480 };
const B = { width: 1280, height: 960 };
const panel = { width: 660, height: 500 };
const close = (a, b, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

test("fit view shows the whole reference frame centred", () => {
  const t = viewTransform(fitView(), panel, A);
  const s = fitScale(panel, A);
  close(t.sx, s);
  const tl = toScreen(t, 0, 0);
  const br = toScreen(t, A.width, A.height);
  close((tl.x + br.x) / 2, panel.width / 2);
  close((tl.y + br.y) / 2, panel.height / 2);
  assert.ok(tl.x >= 0 && br.x <= panel.width && tl.y >= 0 && br.y <= panel.height);
});

test("screen and image coordinates round-trip", () => {
  const view = { cx: 0.3, cy: 0.7, zoom: 5.5 };
  for (const side of [A, B, { width: 333, height: 777 }]) {
    const t = viewTransform(view, panel, A, side);
    for (const [x, y] of [[0, 0], [12.5, 400], [side.width, side.height]]) {
      const s = toScreen(t, x, y);
      const back = toImage(t, s.x, s.y);
      close(back.x, x, 1e-6);
      close(back.y, y, 1e-6);
    }
  }
});

test("a side of another size shares the displayed rectangle (content aligned)", () => {
  const view = { cx: 0.42, cy: 0.61, zoom: 3 };
  const ta = viewTransform(view, panel, A, A);
  const tb = viewTransform(view, panel, A, B);
  const pa = toScreen(ta, 320, 240);
  const pb = toScreen(tb, 640, 480);
  close(pa.x, pb.x);
  close(pa.y, pb.y);
  close(tb.sx * 2, ta.sx);
});

test("zoom keeps the image point under the cursor fixed", () => {
  const view = { cx: 0.5, cy: 0.5, zoom: 1 };
  const at = { x: 123, y: 321 };
  const before = toImage(viewTransform(view, panel, A), at.x, at.y);
  const next = zoomAt(view, 4, at, panel, A);
  const after = toImage(viewTransform(next, panel, A), at.x, at.y);
  close(next.zoom, 4);
  close(after.x, before.x, 1e-6);
  close(after.y, before.y, 1e-6);
});

test("zoom is clamped to single-pixel scale and far out", () => {
  const { max, min } = zoomLimits(panel, A);
  const far = zoomAt(fitView(), 1e6, { x: 10, y: 10 }, panel, A);
  close(far.zoom, max);
  close(viewTransform(far, panel, A).sx, 64);
  assert.equal(zoomAt(fitView(), 1e-6, { x: 10, y: 10 }, panel, A).zoom, min);
  const one = zoomToPixelScale(fitView(), 1, panel, A);
  close(viewTransform(one, panel, A).sx, 1);
});

test("pan follows the pointer and keeps the centre on the image", () => {
  const view = { cx: 0.5, cy: 0.5, zoom: 2 };
  const t0 = viewTransform(view, panel, A);
  const p0 = toScreen(t0, 100, 100);
  const moved = panBy(view, 30, -20, panel, A);
  const p1 = toScreen(viewTransform(moved, panel, A), 100, 100);
  close(p1.x - p0.x, 30);
  close(p1.y - p0.y, -20);
  const far = panBy(view, -1e6, 1e6, panel, A);
  assert.deepEqual([far.cx, far.cy], [1, 0]);
});

test("frameBox centres a box and zooms so it fills about half the panel", () => {
  const v = frameBox([100, 100, 200, 140], A, panel, A);
  close(v.cx, 150 / 640);
  close(v.cy, 120 / 480);
  const t = viewTransform(v, panel, A);
  close(Math.max((100 * t.sx) / panel.width, (40 * t.sy) / panel.height), 0.5);
  assert.equal(frameBox([0, 0, 640, 480], A, panel, A).zoom, 1, "never below fit");
  close(viewTransform(frameBox([10, 10, 11, 11], A, panel, A), panel, A).sx, 8, 1e-9);
});

test("boxes snap to the nearest pixel edges, ordered and clamped", () => {
  const table = [
    [[10.4, 20.6, 30.5, 40.49], [10, 21, 31, 40]],
    [[30, 40, 10, 20], [10, 20, 30, 40]],
    [[-5, -3, 700, 500], [0, 0, 640, 480]],
    [[5.2, 5.2, 5.3, 5.3], [5, 5, 6, 6]],
    [[640, 480, 640, 480], [639, 479, 640, 480]],
  ];
  for (const [raw, want] of table) assert.deepEqual(roundBox(raw, A), want, JSON.stringify(raw));
  assert.deepEqual(boxFromPoints({ x: 99.7, y: 3.2 }, { x: 50.1, y: 60.5 }, A), [50, 3, 100, 61]);
});

test("move keeps the size and stops at the frame", () => {
  assert.deepEqual(moveBox([10, 10, 20, 30], 5.4, -3.6, A), [15, 6, 25, 26]);
  assert.deepEqual(moveBox([10, 10, 20, 30], -50, 1000, A), [0, 460, 10, 480]);
});

test("resize by handle, with flipping when dragged across", () => {
  const box = [100, 100, 200, 150];
  assert.deepEqual(resizeBox(box, "se", { x: 250.2, y: 170.7 }, A), [100, 100, 250, 171]);
  assert.deepEqual(resizeBox(box, "n", { x: 0, y: 90 }, A), [100, 90, 200, 150]);
  assert.deepEqual(resizeBox(box, "w", { x: 300, y: 0 }, A), [200, 100, 300, 150]);
  assert.deepEqual(resizeBox(box, "nw", { x: -10, y: -10 }, A), [0, 0, 200, 150]);
  assert.deepEqual(growBox(box, -200, 1000, A), [100, 100, 101, 480]);
});

test("validity follows the geometry rules", () => {
  assert.ok(isValidBox([0, 0, 640, 480], A));
  assert.ok(!isValidBox([0, 0, 641, 480], A));
  assert.ok(!isValidBox([5, 5, 5, 9], A));
  assert.ok(!isValidBox([1.5, 0, 3, 4], A));
  assert.ok(!isValidBox([1, 2, 3], A));
});

test("IoU", () => {
  close(iou([0, 0, 10, 10], [0, 0, 10, 10]), 1);
  close(iou([0, 0, 10, 10], [5, 0, 15, 10]), 50 / 150);
  close(iou([0, 0, 10, 10], [10, 10, 20, 20]), 0);
  close(iou([0, 0, 10, 10], [2, 3, 7, 9]), iou([2, 3, 7, 9], [0, 0, 10, 10]));
});

test("mirror scales a box to the other frame in whole pixels", () => {
  assert.deepEqual(mirrorBox([125, 73, 228, 183], A, A), [125, 73, 228, 183]);
  assert.deepEqual(mirrorBox([125, 73, 228, 183], A, B), [250, 146, 456, 366]);
  assert.deepEqual(mirrorBox([250, 147, 457, 366], B, A), [125, 74, 229, 183]);
  assert.deepEqual(mirrorBox([0, 0, 1, 1], B, A), [0, 0, 1, 1]);
  const odd = { width: 333, height: 101 };
  assert.ok(isValidBox(mirrorBox([600, 400, 640, 480], A, odd), odd));
});

test("hit test finds corners, edges, inside and misses", () => {
  const t = viewTransform({ cx: 0.5, cy: 0.5, zoom: 1 }, { width: 640, height: 480 }, A);
  const box = [100, 100, 300, 200];
  const at = (x, y) => hitTest(box, t, toScreen(t, x, y));
  assert.equal(at(100, 100), "nw");
  assert.equal(at(300, 200), "se");
  assert.equal(at(200, 100), "n");
  assert.equal(at(300, 150), "e");
  assert.equal(at(200, 150), "move");
  assert.equal(at(400, 400), null);
  assert.equal(handlePoints(box, t).length, 8);
  const tiny = [10, 10, 12, 12];
  assert.equal(hitTest(tiny, t, toScreen(t, 11, 11)), "move");
});

test("a drawn box under the minimum screen size is too small, whatever its image size", () => {
  const fit = { sx: 0.5, sy: 0.5 }; // zoomed out: 1 CSS px per 2 image px
  const zoomed = { sx: 32, sy: 32 }; // zoomed in far
  assert.equal(isTooSmall([0, 0, 10, 100], fit), true); // 5 CSS px wide
  assert.equal(isTooSmall([0, 0, 12, 12], fit), false); // 6 × 6 CSS px
  assert.equal(isTooSmall([5, 5, 7, 7], zoomed), false); // 2 × 2 image px, 64 CSS px: meant
  assert.equal(isTooSmall([0, 0, 100, 5], { sx: 1, sy: 1 }, MIN_DRAWN_PX), true);
});
