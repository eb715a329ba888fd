import { test } from "node:test";
import assert from "node:assert/strict";
import { absentNotes, changeColor } from "../../static/canvas/js/scene.js";
import { emptyChange } from "../../static/canvas/js/answer.js";

test("an absent side is named on that side's image, with the change's number and colour", () => {
  const state = {
    sel: { change: 1, side: "a", box: -1 },
    changes: [
      emptyChange(1, { absent_a: true, entity_b: "dog", boxes_b: [[1, 1, 5, 5]] }),
      emptyChange(2, { absent_b: true, entity_a: "cup", boxes_a: [[1, 1, 5, 5]] }),
      emptyChange(3, { boxes_a: [[1, 1, 5, 5]], boxes_b: [[1, 1, 5, 5]] }),
    ],
  };
  assert.deepEqual(absentNotes(state, "a"), [
    { text: "1 dog: absent on A (added in B)", color: changeColor(0), active: false },
  ]);
  assert.deepEqual(absentNotes(state, "b"), [
    { text: "2 cup: absent on B (removed in B)", color: changeColor(1), active: true },
  ]);
});
