import { test } from "node:test";
import assert from "node:assert/strict";
import { createRegistry } from "../../static/canvas/js/registry.js";

test("a screen's actions are added beside the kit's, and replace one of the same name", () => {
  const calls = [];
  const actions = createRegistry({ undo: () => calls.push("kit undo"), escape: () => "kit escape" });
  actions.register({ submit: (arg) => calls.push(`submit ${arg}`), escape: () => `screen, then ${actions.canvas.escape()}` });
  actions.run("undo");
  actions.run("submit", 1);
  assert.deepEqual(calls, ["kit undo", "submit 1"]);
  assert.equal(actions.run("escape"), "screen, then kit escape");
  assert.equal(actions.has("submit"), true);
  assert.equal(actions.has("skip"), false);
  assert.equal(actions.run("skip"), undefined); // nothing registered: nothing runs, nothing throws
});

test("a guard drops the actions it refuses", () => {
  const calls = [];
  const actions = createRegistry({ mirror: () => calls.push("mirror"), "zoom-in": () => calls.push("zoom") });
  let editing = false;
  actions.guard((name) => name !== "mirror" || editing);
  actions.run("mirror");
  actions.run("zoom-in");
  editing = true;
  actions.run("mirror");
  assert.deepEqual(calls, ["zoom", "mirror"]);
});

test("the kit's own actions cannot be rewritten through the registry", () => {
  const actions = createRegistry({ undo: () => "kit" });
  assert.throws(() => {
    "use strict";
    actions.canvas.undo = () => "changed";
  }, TypeError);
  assert.equal(actions.canvas.undo(), "kit");
});
