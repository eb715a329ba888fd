import { test } from "node:test";
import assert from "node:assert/strict";
import { adjudicationAction } from "../../static/review/js/adj-keys.js";
import { compareRows, generalReasons, reasonTarget, sentence, sideSummary } from "../../static/review/js/breakdown.js";
import {
  canDecide, checkDecision, isSamePage, mergeErrors, outcomeText, resolutionBody, sortServerErrors, standingAfter,
} from "../../static/review/js/decide.js";
import {
  LAYER_STYLES, availableLayers, draftFrom, initialVisibility, mergeColor, mergeSources, referenceBoxes, unionBox,
} from "../../static/review/js/layers.js";
import { buildScene, changeColor } from "../../static/canvas/js/scene.js";
import { createStore } from "../../static/canvas/js/state.js";
import { fitView } from "../../static/canvas/js/box.js";

const change = (over = {}) => ({
  category: "attribute", description: "The car turned blue.", entity_a: "car", entity_b: "car",
  boxes_a: [[10, 10, 50, 40]], boxes_b: [[10, 10, 50, 40]], ...over,
});
const side = (matched, extra = {}) => ({
  side: "a", matched, unmatched_1: [], unmatched_2: [], agrees: true, null_consistent: true, ...extra,
});

function config(over = {}) {
  return {
    pair: 3, status: "disputed",
    sides: { a: { width: 100, height: 80 }, b: { width: 200, height: 160 } },
    categories: [{ slug: "attribute", name: "Attribute" }, { slug: "object", name: "Object" }],
    annotations: [
      { label: "Annotation 1", annotator: "ann1", tier: "excellent", changes: [change(), change({ category: "object", boxes_b: [], entity_b: "" })] },
      { label: "Annotation 2", annotator: "ann2", tier: "good", changes: [change({ entity_b: "truck", boxes_b: [[30, 30, 70, 60]] }), change({ category: "object" })] },
    ],
    agreement: {
      status: "disputed", mean_iou: 0.41, policy: { iou_threshold: 0.5 },
      reasons: [
        { code: "tier:one_good", message: "tiers excellent and good: the tier rule sends the pair to a lead" },
        { code: "change[0].entity_b", message: "change 1: the entity labels on B differ" },
        { code: "change[0].side_b.iou_below_threshold", message: "change 1: IoU 0.2 on B is below 0.5" },
        { code: "change[1].side_b.null_mismatch", message: "change 2: B is absent in one annotation only" },
      ],
      changes: [
        {
          index_1: 0, index_2: 0, category_agrees: true, entity_a_agrees: true, entity_b_agrees: false,
          side_a: side([[0, 0, 0.82]]), side_b: side([[0, 0, 0.2]], { side: "b", agrees: false }),
          description_similarity: 0.7, agrees: false, geometry: 0.51,
        },
        {
          index_1: 1, index_2: 1, category_agrees: true, entity_a_agrees: true, entity_b_agrees: true,
          side_a: side([[0, 0, 1]]), side_b: side([], { side: "b", unmatched_2: [0], agrees: false, null_consistent: false }),
          description_similarity: 1, agrees: false, geometry: 0.5,
        },
      ],
    },
    consensus: null, gold: null, resolutions: [], current: null,
    ...over,
  };
}

test("reasons read as sentences, and name the change they are about", () => {
  assert.equal(sentence("change 1: IoU 0.41 on B is below 0.5"), "Change 1: IoU 0.41 on B is below 0.5.");
  assert.equal(sentence("Done."), "Done.");
  assert.equal(sentence(""), "");
  assert.deepEqual(reasonTarget("change[2].side_b.iou_below_threshold"), { annotation: 1, index: 2 });
  assert.deepEqual(reasonTarget("change_2[0].unmatched"), { annotation: 2, index: 0 });
  assert.equal(reasonTarget("tier:one_good"), null);
  assert.deepEqual(generalReasons(config().agreement), ["Tiers excellent and good: the tier rule sends the pair to a lead."]);
});

test("the breakdown says which field and which side differ, with the IoU of each match", () => {
  const [first, second] = compareRows(config());
  assert.equal(first.title, "Change 1");
  assert.equal(first.agrees, false);
  assert.deepEqual(first.differs, ["Entity B", "boxes B"]);
  assert.deepEqual(first.fields.map((f) => [f.label, f.value1, f.value2, f.agrees]), [
    ["Category", "Attribute", "Attribute", true],
    ["Entity A", "car", "car", true],
    ["Entity B", "car", "truck", false],
  ]);
  assert.equal(first.sides.a.text, "IoU 0.82");
  assert.equal(first.sides.a.agrees, true);
  assert.deepEqual(first.sides.b.pairs, [{ box1: 0, box2: 0, iou: 0.2, ok: false }]);
  assert.equal(first.description.similarity, 0.7);
  assert.deepEqual(first.reasons, ["Change 1: the entity labels on B differ.", "Change 1: IoU 0.2 on B is below 0.5."]);
  assert.equal(second.sides.b.text, "absent in 1 only");
  assert.equal(second.sides.b.nullMismatch, true);
  assert.equal(second.sides.b.count1, "absent");
  assert.equal(second.sides.b.count2, "1 box");
  assert.deepEqual(second.differs, ["absent B"]);
});

test("several boxes: every matched IoU and the unmatched count", () => {
  const s = sideSummary("a", side([[0, 1, 0.9], [1, 0, 0.456]], { unmatched_1: [2] }),
    { boxes_a: [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]] }, { boxes_a: [[0, 0, 1, 1], [0, 0, 1, 1]] }, 0.5);
  assert.equal(s.text, "IoU 0.90 · 0.46, 1 box unmatched");
  assert.deepEqual(s.pairs.map((p) => p.ok), [true, false]);
  assert.equal(s.count1, "3 boxes");
});

test("a change of one annotation only, and no agreement at all", () => {
  const only = config();
  only.agreement.changes = [{
    index_1: null, index_2: 0, category_agrees: false, entity_a_agrees: false, entity_b_agrees: false,
    side_a: side([], { unmatched_2: [0], agrees: false }), side_b: side([], { side: "b", unmatched_2: [0], agrees: false }),
    description_similarity: 0, agrees: false, geometry: 0,
  }];
  const [row] = compareRows(only);
  assert.equal(row.title, "Change 1 of annotation 2 only");
  assert.equal(row.sides.a.text, "no counterpart");
  assert.equal(row.fields[0].agrees, null); // nothing to compare with: no ✗ either
  const rows = compareRows(config({ agreement: null }));
  assert.equal(rows.length, 2);
  assert.equal(rows[0].agrees, null);
  assert.equal(rows[0].sides.b.agrees, null);
  assert.equal(rows[0].sides.b.text, "");
});

test("layers: both annotations, the known answer when gold, the standing answer once decided", () => {
  const layers = availableLayers(config({ gold: [change()], current: { changes: [change()] } }));
  assert.deepEqual(layers.map((l) => l.id), ["one", "two", "gold", "current"]);
  assert.deepEqual(initialVisibility(layers, "disputed"), { one: true, two: true, gold: true, current: false });
  assert.equal(initialVisibility(layers, "accepted").current, true);
  assert.notEqual(layers[0].color, layers[1].color);
  assert.ok(layers[2].dashed);
  // The merged answer's colours are none of the layers'.
  for (let i = 0; i < 8; i++) assert.ok(!layers.some((l) => l.color === mergeColor(i)));
});

test("reference boxes: per side, labelled, faint and unlabelled while a merge is edited, focus brings one change forward", () => {
  const layers = availableLayers(config());
  const visible = { one: true, two: true };
  const onB = referenceBoxes(layers, visible, "b");
  assert.deepEqual(onB.map((r) => [r.layer, r.change, r.box, r.label]), [
    ["one", 0, [10, 10, 50, 40], "1·1 car"],
    ["two", 0, [30, 30, 70, 60], "2·1 truck"],
    ["two", 1, [10, 10, 50, 40], "2·2 car"],
  ]);
  assert.ok(onB.every((r) => !r.faint));
  assert.ok(onB.filter((r) => r.layer === "two").every((r) => r.labelBelow));
  assert.deepEqual(referenceBoxes(layers, { one: false, two: true }, "b").map((r) => r.layer), ["two", "two"]);
  const editing = referenceBoxes(layers, visible, "a", { editing: true });
  assert.ok(editing.every((r) => r.faint && r.label === ""));
  // The same box in two layers: one label for both, not one painted over the other.
  const withGold = availableLayers(config({ gold: [change()] }));
  const onA = referenceBoxes(withGold, { one: true, two: true, gold: true }, "a");
  assert.deepEqual(onA.filter((r) => r.change === 0 && r.layer !== "two").map((r) => [r.layer, r.label]), [
    ["one", "1·1 1·2 ★ car"], ["gold", ""], // change 2 of annotation 1 has that box on A too
  ]);
  const focused = referenceBoxes(layers, visible, "b", { focus: { one: 0, two: 0, side: "b" } });
  assert.deepEqual(focused.filter((r) => !r.faint).map((r) => [r.layer, r.change]), [["one", 0], ["two", 0]]);
  assert.ok(focused.at(-1).fill); // focused ones painted last
});

test("the scene paints the reference boxes beneath the merged answer, in the merge colours", () => {
  const store = createStore({ frames: config().sides });
  store.load(draftFrom([change()]));
  const layers = availableLayers(config());
  const ctx = {
    state: store.state, mode: "side", swipe: 0.5, view: fitView(), ref: config().sides.a, frames: config().sides,
    images: { a: null, b: null }, predictions: [], showPredictions: false, showBoxes: true, pointer: null,
    colorOf: mergeColor, referenceBoxes: (s) => referenceBoxes(layers, { one: true, two: true }, s, { editing: true }),
  };
  const scene = buildScene(ctx, 1, { width: 400, height: 300 });
  assert.deepEqual(scene.boxes.map((b) => b.color), [LAYER_STYLES.one.color, LAYER_STYLES.two.color, LAYER_STYLES.two.color, mergeColor(0)]);
  assert.ok(scene.boxes.every((b) => b.t === scene.t));
  // Without the options the workspace's scene is what it was.
  const plain = buildScene({ ...ctx, colorOf: undefined, referenceBoxes: undefined }, 1, { width: 400, height: 300 });
  assert.deepEqual(plain.boxes.map((b) => b.color), [changeColor(0)]);
});

test("a merge starts from the consensus when there is one, else annotation 1; empty sides become absent", () => {
  assert.deepEqual(mergeSources(config()).map((s) => s.id), ["one", "two"]);
  assert.deepEqual(mergeSources(config({ consensus: [change()], gold: [change()] })).map((s) => s.id), ["consensus", "one", "two", "gold"]);
  const source = [change({ boxes_b: [], entity_b: "" })];
  const draft = draftFrom(source);
  assert.deepEqual(draft.ui.absent_b, [true]);
  assert.deepEqual(draft.ui.absent_a, [false]);
  draft.changes[0].boxes_a[0][0] = 99;
  assert.equal(source[0].boxes_a[0][0], 10); // a copy: the annotation is never touched
  const store = createStore({ frames: config().sides, tiersNeedingChange: [] });
  store.load(draftFrom(source));
  assert.deepEqual(mergeErrors(store.validate(), store.state.changes.length), {});
  assert.deepEqual(Object.keys(mergeErrors(store.validate(), 0)), ["changes"]);
  assert.deepEqual(unionBox([[10, 10, 20, 20], [5, 15, 12, 30]]), [5, 10, 20, 30]);
  assert.equal(unionBox([]), null);
});

test("decision bodies carry the answer only for a merge and the reason only for a reject", () => {
  assert.deepEqual(resolutionBody("accept_1", { comment: " ok ", changes: [change()], reason: "x" }), { decision: "accept_1", comment: "ok" });
  assert.deepEqual(resolutionBody("merge", { changes: [change()] }), { decision: "merge", comment: "", answer: { changes: [change()] } });
  assert.deepEqual(resolutionBody("reject", { reason: " blurry " }), { decision: "reject", comment: "", reason: "blurry" });
  assert.deepEqual(checkDecision("reject", { reason: "  " }), { reason: ["Say why the pair is rejected."] });
  assert.deepEqual(checkDecision("reject", { reason: "blurry" }), {});
  assert.deepEqual(Object.keys(checkDecision("merge", { changes: [] })), ["answer.changes"]);
  assert.ok(canDecide("disputed") && canDecide("accepted") && !canDecide("in_annotation"));
});

test("server errors land where they belong; none is dropped", () => {
  const sorted = sortServerErrors({
    "answer.changes.0.boxes_b.1": ["box outside image B"], "answer.changes": ["at least one change"],
    reason: ["say why"], comment: "too long", decision: ["not a choice"],
  });
  assert.deepEqual(sorted.answer, { "changes.0.boxes_b.1": ["box outside image B"], changes: ["at least one change"] });
  assert.deepEqual(sorted.reason, ["say why"]);
  assert.deepEqual(sorted.comment, ["too long"]);
  assert.deepEqual(sorted.general, ["decision: not a choice"]);
  assert.deepEqual(sortServerErrors({}, "The answer is not valid.").general, ["The answer is not valid."]);
});

test("outcome, standing answer and the next page", () => {
  assert.equal(outcomeText({ decision: "merge" }, { status: "accepted" }), "Merged answer accepted — the pair is now accepted.");
  assert.equal(outcomeText({ decision: "reopen", status_after: "disputed" }), "Pair reopened — the pair is now disputed.");
  assert.deepEqual(standingAfter({ decision: "accept_2", answer: { changes: [change()] } }), { changes: [change()] });
  assert.equal(standingAfter({ decision: "reject", answer: null }, [change()]), null);
  assert.deepEqual(standingAfter({ decision: "reopen", answer: null }, [change()]), { changes: [change()] });
  assert.equal(isSamePage("/review/pairs/3/", "http://x/review/pairs/3"), true);
  assert.equal(isSamePage("/review/pairs/4/", "http://x/review/pairs/3/"), false);
  assert.equal(isSamePage(null, "http://x/"), true);
});

test("shortcuts: 1 and 2 accept (not while a merge is edited), E, R, Shift + digit toggles a layer", () => {
  const key = (k, extra = {}) => ({ key: k, code: "", ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...extra });
  assert.deepEqual(adjudicationAction(key("1")), { action: "accept-key", arg: 1 });
  assert.equal(adjudicationAction(key("1"), { editing: true }), null);
  assert.deepEqual(adjudicationAction(key("e"), { editing: true }), { action: "merge-start" });
  assert.deepEqual(adjudicationAction(key("R")), { action: "reject-open" });
  assert.equal(adjudicationAction(key("r"), { editing: true }), null);
  assert.deepEqual(adjudicationAction(key("!", { shiftKey: true, code: "Digit1" })), { action: "layer-toggle", arg: "one" });
  assert.deepEqual(adjudicationAction(key("£", { shiftKey: true, code: "Digit3" })), { action: "layer-toggle", arg: "gold" });
  assert.equal(adjudicationAction(key("?", { shiftKey: true, code: "Slash" })), null); // help: the workspace's key
  assert.equal(adjudicationAction(key("1"), { typing: true }), null);
  assert.equal(adjudicationAction(key("1", { ctrlKey: true })), null);
});

test("a decision note is read once, and an old one is not shown", async () => {
  const { rememberDecision, takeDecision, tooSoon, GUARD_MS } = await import("../../static/review/js/handoff.js");
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v), removeItem: (k) => store.delete(k) };
  rememberDecision(storage, { pair: "p1", text: "Annotation 1 accepted.", url: "/api/v1/pairs/1/resolution/", page: "/review/pairs/1/" });
  const note = takeDecision(storage);
  assert.equal(note.pair, "p1");
  assert.equal(takeDecision(storage), null, "read once");
  rememberDecision(storage, { pair: "p1", text: "x", url: "/u", page: "/p" });
  assert.equal(takeDecision(storage, Date.now() + 6 * 60 * 1000), null, "too old");
  assert.equal(tooSoon(1000, 1000 + GUARD_MS - 1), true);
  assert.equal(tooSoon(1000, 1000 + GUARD_MS), false);
});
