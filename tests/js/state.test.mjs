import { test } from "node:test";
import assert from "node:assert/strict";
import { createStore } from "../../static/canvas/js/state.js";

const frames = { a: { width: 640, height: 480 }, b: { width: 1280, height: 960 } };
const make = (extra = {}) => {
  const field = { value: "" };
  const store = createStore({ frames, field, timeSpent: () => 41200.4, categories: ["attribute", "object"], ...extra });
  return { store, field, written: () => JSON.parse(field.value) };
};

test("drawing a box creates a change and writes the answer field", () => {
  const { store, written } = make();
  store.addBox("a", [125.2, 730.4, 228, 783].map((v) => v / 2));
  const body = written();
  assert.equal(body.changes.length, 1);
  assert.deepEqual(body.changes[0].boxes_a, [[63, 365, 114, 392]]);
  assert.deepEqual(body.changes[0].boxes_b, []);
  assert.equal(body.time_spent_ms, 41200);
  assert.deepEqual(store.state.sel, { change: 0, side: "a", box: 0 });
});

test("submit body matches the contract exactly", () => {
  const { store } = make();
  store.addBox("a", [125, 330, 228, 383]);
  store.mirror();
  store.updateChange(0, { category: "attribute", description: "  The car changed colour. " });
  store.setEntity(0, "a", "car ");
  store.setTier("excellent");
  assert.deepEqual(store.toBody(), {
    tier: "excellent", defects: [], time_spent_ms: 41200,
    changes: [{
      category: "attribute", description: "The car changed colour.", entity_a: "car", entity_b: "car",
      boxes_a: [[125, 330, 228, 383]], boxes_b: [[250, 660, 456, 766]],
    }],
  });
});

test("mirror with nothing selected replaces the other side with all boxes", () => {
  const { store } = make();
  store.addBox("b", [0, 0, 100, 100]);
  store.addBox("b", [200, 200, 300, 300]);
  store.select(0, "b", -1);
  assert.equal(store.mirror(), 2);
  assert.deepEqual(store.state.changes[0].boxes_a, [[0, 0, 50, 50], [100, 100, 150, 150]]);
  store.select(0, "b", 0);
  assert.equal(store.mirror(), 1);
  assert.equal(store.state.changes[0].boxes_a.length, 2, "an identical box is not added twice");
});

test("absent clears the side and drawing there again un-marks it", () => {
  const { store, written } = make();
  store.addBox("a", [10, 10, 20, 20]);
  store.updateChange(0, { entity_a: "cup" });
  store.toggleAbsent("a");
  let draft = written();
  assert.deepEqual(draft.changes[0].boxes_a, []);
  assert.equal(draft.changes[0].entity_a, "");
  assert.deepEqual(draft.ui.absent_a, [true]);
  store.addBox("a", [1, 1, 5, 5]);
  draft = written();
  assert.deepEqual(draft.ui.absent_a, [false]);
});

test("undo and redo restore data and selection; typing coalesces", () => {
  const { store } = make();
  store.addBox("a", [10, 10, 20, 20]);
  store.updateChange(0, { description: "T" }, "text:0:description");
  store.updateChange(0, { description: "Th" }, "text:0:description");
  store.updateChange(0, { description: "The" }, "text:0:description");
  store.undo();
  assert.equal(store.state.changes[0].description, "");
  store.undo();
  assert.equal(store.state.changes.length, 0);
  assert.equal(store.undo(), false);
  store.redo();
  assert.deepEqual(store.state.changes[0].boxes_a, [[10, 10, 20, 20]]);
  store.redo();
  assert.equal(store.state.changes[0].description, "The");
  assert.equal(store.redo(), false);
});

test("one drag is one undo step", () => {
  const { store } = make();
  store.addBox("a", [10, 10, 20, 20], "g1");
  store.setBox(0, "a", 0, [10, 10, 30, 30], "g1");
  store.setBox(0, "a", 0, [10, 10, 40, 40], "g1");
  store.setBox(0, "a", 0, [12, 10, 40, 40], "g2");
  store.undo();
  assert.deepEqual(store.state.changes[0].boxes_a, [[10, 10, 40, 40]]);
  store.undo();
  assert.equal(store.state.changes.length, 0);
});

test("a draft round-trips through load, absent flags included", () => {
  const { store, written } = make();
  store.addBox("a", [10, 10, 20, 20]);
  store.toggleAbsent("b");
  store.updateChange(0, { category: "object", description: "A cup appeared.", entity_a: "cup" });
  store.toggleDefect("artefacts");
  store.setTier("good");
  const draft = written();
  const other = make();
  other.store.load(draft);
  assert.deepEqual(other.written(), draft);
  assert.equal(other.store.state.canUndo, false);
});

test("load tolerates nulls and junk", () => {
  const { store } = make();
  store.load(null);
  assert.deepEqual(store.toBody().changes, []);
  store.load({ changes: [{ boxes_a: [[1, 2, 3, 4]] }], ui: { active: 9 } });
  assert.equal(store.state.sel.change, 0);
});

test("client validation names fields like the server does", () => {
  const { store } = make();
  assert.deepEqual(Object.keys(store.validate()), ["tier"]);
  store.setTier("excellent");
  assert.ok(store.validate().changes);
  store.addBox("a", [10, 10, 20, 20]);
  const errors = store.validate();
  assert.deepEqual(Object.keys(errors).sort(), [
    "changes.0.boxes_b", "changes.0.category", "changes.0.description", "changes.0.entity_a",
  ]);
  store.toggleAbsent("b");
  store.updateChange(0, { category: "object", description: "A cup appeared.", entity_a: "cup" });
  assert.deepEqual(store.validate(), {});
  store.toggleAbsent("a");
  assert.ok(store.validate()["changes.0.boxes_a"]);
});

test("validation flags a box outside its frame", () => {
  const { store } = make();
  store.load({ tier: "fair", changes: [{ category: "object", description: "x", entity_a: "a", entity_b: "b",
    boxes_a: [[0, 0, 700, 10]], boxes_b: [[0, 0, 10, 10]] }] });
  assert.deepEqual(Object.keys(store.validate()), ["changes.0.boxes_a.0"]);
});

test("editing a field clears its error", () => {
  const { store } = make();
  store.addBox("a", [10, 10, 20, 20]);
  store.setErrors({ "changes.0.entity_a": ["x"], "changes.0.boxes_a.0": ["y"], tier: ["z"] });
  store.updateChange(0, { entity_a: "car" });
  store.setBox(0, "a", 0, [11, 10, 20, 20]);
  assert.deepEqual(Object.keys(store.state.errors), ["tier"]);
});

test("predictions become changes once, with absent sides", () => {
  const { store } = make();
  const predictions = [{ model: "pixeldiff 1", changes: [
    { category: "object", description: "", boxes_a: [], boxes_b: [[10.4, 10, 50, 50.6]] },
  ] }];
  assert.equal(store.acceptPredictions(predictions), 1);
  assert.equal(store.acceptPredictions(predictions), 0);
  const c = store.toDraft();
  assert.deepEqual(c.changes[0].boxes_b, [[10, 10, 50, 51]]);
  assert.deepEqual(c.ui.absent_a, [true]);
});

test("changes cycle and removal keeps a valid selection", () => {
  const { store } = make();
  store.addChange();
  store.addChange();
  store.addChange();
  store.cycleChange(1);
  assert.equal(store.state.sel.change, 0);
  store.cycleChange(-1);
  assert.equal(store.state.sel.change, 2);
  store.removeChange(2);
  assert.equal(store.state.sel.change, 1);
  store.removeChange(0);
  store.removeChange(0);
  assert.equal(store.state.sel.change, -1);
});

test("a linked B shows A's entity; typing into B unlinks it and never adds A's text again", () => {
  const { store } = make();
  store.addBox("a", [10, 10, 20, 20]);
  store.setEntity(0, "a", "ca");
  store.setEntity(0, "a", "car");
  assert.equal(store.state.changes[0].entity_b, "car", "linked by default: B mirrors A");
  store.setEntity(0, "b", "cars"); // the field held "car"; one keystroke added "s"
  assert.deepEqual([store.state.changes[0].entity_a, store.state.changes[0].entity_b], ["car", "cars"]);
  assert.equal(store.state.changes[0].linked, false);
  store.setEntity(0, "a", "cart");
  assert.equal(store.state.changes[0].entity_b, "cars", "unlinked: B keeps its own name");
  store.toggleLink(0);
  assert.equal(store.state.changes[0].entity_b, "cart", "linked again: B takes A's name");
  store.toggleAbsent("b", 0);
  assert.equal(store.state.changes[0].entity_b, "");
  store.toggleAbsent("b", 0);
  assert.equal(store.state.changes[0].entity_b, "cart", "present again and still linked");
});

test("whole image boxes the full frame on both sides of the active change", () => {
  const { store } = make();
  store.wholeImage();
  const [c] = store.state.changes;
  assert.deepEqual(c.boxes_a, [[0, 0, store.frames.a.width, store.frames.a.height]]);
  assert.deepEqual(c.boxes_b, [[0, 0, store.frames.b.width, store.frames.b.height]]);
  store.toggleAbsent("a", 0);
  store.wholeImage();
  assert.equal(store.state.changes.length, 1, "the active change, not a new one");
  assert.equal(store.state.changes[0].absent_a, false);
});
