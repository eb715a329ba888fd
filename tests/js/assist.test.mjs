import { test } from "node:test";
import assert from "node:assert/strict";
import { alignmentNote, createAssist, mapBox } from "../../static/canvas/js/assist.js";
import { createStore } from "../../static/canvas/js/state.js";

const frames = { a: { width: 640, height: 480 }, b: { width: 600, height: 440 } };
// B is A cropped at (40, 30): A's (x, y) is B's (x − 40, y − 30).
const shifted = {
  alignment: { matrix: [[1, 0, -40], [0, 1, -30], [0, 0, 1]], kind: "translation", residual: 0.4 },
  drafts: true,
  components: [
    { kind: "colour", whole: false, boxes_a: [[100, 100, 150, 140]], boxes_b: [[60, 70, 110, 110]], zone_a: [100, 100, 150, 140], zone_b: [60, 70, 110, 110], draft: "The mug changed colour from white to red.", entity: "mug", category: "attribute" },
    { kind: "appear", whole: false, boxes_a: [], boxes_b: [[300, 200, 340, 250]], zone_a: [340, 230, 380, 280], zone_b: [300, 200, 340, 250], draft: "A cat appeared at the centre.", entity: "cat", category: "object" },
    { kind: "global:lighting", whole: true, boxes_a: [[0, 0, 640, 480]], boxes_b: [[0, 0, 600, 440]], zone_a: [0, 0, 640, 480], zone_b: [0, 0, 600, 440], draft: "The whole image became brighter.", entity: "image", category: "attribute" },
  ],
};

test("a box maps through the alignment, clipped to the other frame", () => {
  assert.deepEqual(mapBox(shifted.alignment.matrix, [100, 100, 150, 140], frames.b), [60, 70, 110, 110]);
  assert.deepEqual(mapBox(shifted.alignment.matrix, [0, 0, 60, 50], frames.b), [0, 0, 20, 20]);
  assert.equal(mapBox(shifted.alignment.matrix, [0, 0, 30, 20], frames.b), null);
});

test("a click picks the smallest local region under it, else the whole-image change", () => {
  const assist = createAssist(shifted);
  assert.equal(assist.pick("a", { x: 120, y: 120 }).kind, "colour");
  assert.equal(assist.pick("b", { x: 80, y: 90 }).kind, "colour");
  // The appearance is absent on A: its zone there is B's box brought over.
  assert.equal(assist.pick("a", { x: 350, y: 250 }).kind, "appear");
  assert.equal(assist.pick("a", { x: 600, y: 20 }).kind, "global:lighting");
  assert.equal(createAssist(null).pick("a", { x: 1, y: 1 }), null);
});

test("mirroring goes through the alignment, not the frame scale", () => {
  const assist = createAssist(shifted);
  const field = { value: "" };
  const store = createStore({ frames, field, mapBox: (b, from, to) => assist.mirror(b, from, to, frames) });
  store.addBox("a", [100, 100, 150, 140]);
  store.mirror();
  assert.deepEqual(store.state.changes[0].boxes_b, [[60, 70, 110, 110]]);
  store.select(0, "b", 0);
  store.addBox("b", [200, 200, 240, 230]);
  store.mirror();
  assert.deepEqual(store.state.changes[0].boxes_a.at(-1), [240, 230, 280, 260]);
});

test("a found change fills both sides, marks an empty side absent, and its draft applies", () => {
  const assist = createAssist(shifted);
  const store = createStore({ frames, field: { value: "" } });
  const i = store.addFound(assist.pick("b", { x: 320, y: 220 }));
  const c = store.state.changes[i];
  assert.equal(c.absent_a, true);
  assert.deepEqual(c.boxes_b, [[300, 200, 340, 250]]);
  const found = assist.match(c);
  store.applyDraft(i, { description: found.draft, entity: found.entity, category: found.category });
  const body = store.toBody();
  assert.deepEqual(body.changes[0], {
    category: "object", description: "A cat appeared at the centre.", entity_a: "", entity_b: "cat",
    boxes_a: [], boxes_b: [[300, 200, 340, 250]],
  });
});

test("without drafts offered, a change has no draft to accept", () => {
  const assist = createAssist({ ...shifted, drafts: false });
  assert.equal(assist.drafts, false);
});

test("the status line names a shift and where the alignment is poorest; nothing for a resize", () => {
  const grid = Array.from({ length: 8 }, () => Array(8).fill(0.5));
  grid[0][7] = 40;
  const note = alignmentNote({ ...shifted.alignment, grid });
  assert.match(note, /^B is shifted -40, -30 px against A/);
  assert.match(note, /poorest at the top right\)$/);
  assert.equal(alignmentNote({ kind: "scale", matrix: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], residual: 0 }), "");
  assert.equal(alignmentNote(null), "");
});
