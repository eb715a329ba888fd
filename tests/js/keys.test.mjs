import { test } from "node:test";
import assert from "node:assert/strict";
import { SHORTCUTS, actionFor, isTyping } from "../../static/canvas/js/keys.js";

const key = (k, mods = {}) => ({ key: k, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });

test("single keys map to actions", () => {
  const table = {
    1: ["tier", 0], 4: ["tier", 3], b: ["mode-side"], F: ["mode-flicker"], w: ["mode-swipe"], d: ["mode-diff"],
    t: ["flicker-timer"], n: ["change-new"], "[": ["change-prev"], "]": ["change-next"], c: ["mirror"],
    x: ["absent"], Delete: ["delete-box"], Backspace: ["delete-box"], p: ["predictions-accept"],
    "+": ["zoom-in"], "=": ["zoom-in"], "-": ["zoom-out"], 0: ["zoom-fit"], z: ["zoom-1"], "?": ["help"],
    Escape: ["escape"], Tab: ["side-toggle"], Enter: ["edit-change"],
  };
  for (const [k, [action, arg]] of Object.entries(table)) {
    assert.deepEqual(actionFor(key(k)), arg === undefined ? { action } : { action, arg }, k);
  }
  assert.equal(actionFor(key("q")), null);
});

test("modifier combinations", () => {
  assert.deepEqual(actionFor(key("z", { ctrlKey: true })), { action: "undo" });
  assert.deepEqual(actionFor(key("Z", { ctrlKey: true, shiftKey: true })), { action: "redo" });
  assert.deepEqual(actionFor(key("y", { metaKey: true })), { action: "redo" });
  assert.deepEqual(actionFor(key("Enter", { ctrlKey: true })), { action: "submit" });
  assert.equal(actionFor(key("c", { ctrlKey: true })), null, "copy stays copy");
  assert.deepEqual(actionFor(key("ArrowLeft")), { action: "nudge", arg: [-1, 0] });
  assert.deepEqual(actionFor(key("ArrowDown", { shiftKey: true })), { action: "nudge", arg: [0, 10] });
  assert.deepEqual(actionFor(key("ArrowRight", { altKey: true })), { action: "grow-box", arg: [1, 0] });
});

test("typing keeps single keys for the text, but Ctrl+Enter and Esc still work", () => {
  assert.equal(actionFor(key("n"), { typing: true }), null);
  assert.equal(actionFor(key("1"), { typing: true }), null);
  assert.equal(actionFor(key("z", { ctrlKey: true }), { typing: true }), null, "the field's own undo");
  assert.deepEqual(actionFor(key("Enter", { ctrlKey: true }), { typing: true }), { action: "submit" });
  assert.deepEqual(actionFor(key("Escape"), { typing: true }), { action: "escape" });
});

test("Tab and Enter belong to the workspace only on the images", () => {
  assert.equal(actionFor(key("Tab"), { onStage: false }), null);
  assert.equal(actionFor(key("Enter"), { onStage: false }), null);
  assert.equal(actionFor(key("Tab", { shiftKey: true })), null, "Shift+Tab leaves the images");
});

test("isTyping", () => {
  assert.ok(isTyping({ tagName: "TEXTAREA" }));
  assert.ok(isTyping({ tagName: "SELECT" }));
  assert.ok(isTyping({ tagName: "INPUT", type: "text" }));
  assert.ok(isTyping({ tagName: "DIV", isContentEditable: true }));
  assert.ok(!isTyping({ tagName: "INPUT", type: "checkbox" }));
  assert.ok(!isTyping({ tagName: "INPUT", type: "radio" }));
  assert.ok(!isTyping({ tagName: "BUTTON" }));
  assert.ok(!isTyping(null));
});

test("the help lists every group", () => {
  assert.deepEqual(SHORTCUTS.map(([g]) => g), ["Quality", "Category", "View", "Changes and boxes", "General"]);
});

test("Shift + digit picks a category by its place in the list, Shift + 0 the tenth", () => {
  assert.deepEqual(actionFor(key("!", { shiftKey: true, code: "Digit1" })), { action: "category", arg: 0 });
  assert.deepEqual(actionFor(key("(", { shiftKey: true, code: "Digit9" })), { action: "category", arg: 8 });
  assert.deepEqual(actionFor(key(")", { shiftKey: true, code: "Digit0" })), { action: "category", arg: 9 });
  assert.deepEqual(actionFor(key("1", { code: "Digit1" })), { action: "tier", arg: 0 }, "plain digits stay tiers");
  assert.equal(actionFor(key("!", { shiftKey: true, code: "Digit1" }), { typing: true }), null);
  assert.deepEqual(actionFor(key("g")), { action: "whole-image" });
});
