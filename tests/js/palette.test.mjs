// The box colours stay apart for people with colour-vision deficiencies: the colour difference
// (CIELAB ΔE, 1976) of every pair within each set, in normal vision and under simulated
// deuteranopia and protanopia (Machado, Oliveira & Fernandes 2009, severity 1.0, applied to
// linear RGB). The old palette put change 1 (orange) and change 4 (lime) at ΔE 7.8 for a
// deuteranope: the same colour to them.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CHANGE_PALETTE, ERROR, FEEDBACK_COLORS, LAYER_COLORS, MERGE_PALETTE, SUGGESTION,
} from "../../static/canvas/js/palette.js";

const MACHADO = {
  normal: null,
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
};

const linear = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const rgb = (hex) => [1, 3, 5].map((i) => linear(parseInt(hex.slice(i, i + 2), 16) / 255));

function lab([r, g, b]) {
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

function seen(hex, matrix) {
  const c = rgb(hex);
  if (!matrix) return lab(c);
  return lab(matrix.map((row) => Math.min(1, Math.max(0, row.reduce((s, k, j) => s + k * c[j], 0)))));
}

/** The closest pair of the set under each kind of vision: {vision: [ΔE, a, b]}. */
export function closest(colors) {
  const out = {};
  for (const [vision, matrix] of Object.entries(MACHADO)) {
    let worst = [Infinity, "", ""];
    for (let i = 0; i < colors.length; i++) {
      for (let j = i + 1; j < colors.length; j++) {
        const d = Math.hypot(...seen(colors[i], matrix).map((v, k) => v - seen(colors[j], matrix)[k]));
        if (d < worst[0]) worst = [d, colors[i], colors[j]];
      }
    }
    out[vision] = worst;
  }
  return out;
}

const MIN_DELTA_E = 20;
const assertApart = (colors, min = MIN_DELTA_E) => {
  for (const [vision, [d, a, b]] of Object.entries(closest(colors))) {
    assert.ok(d >= min, `${vision}: ${a} and ${b} are only ΔE ${d.toFixed(1)} apart`);
  }
};

test("the old palette failed: change 1 and change 4 look alike to a deuteranope", () => {
  const old = ["#ffb020", "#22d3ee", "#f472b6", "#a3e635", "#a78bfa", "#fb923c"];
  const [d, a, b] = closest(old).deuteranopia;
  assert.ok(d < 10);
  assert.deepEqual([a, b], ["#ffb020", "#a3e635"]);
});

test("change colours stay apart, and apart from the error and suggestion colours", () => {
  assertApart([...CHANGE_PALETTE, ERROR, SUGGESTION]);
});

test("annotation 1, annotation 2, the known answer and the standing answer stay apart", () => {
  assertApart([...Object.values(LAYER_COLORS), ERROR, SUGGESTION]);
});

test("a merged box never passes for a layer's", () => {
  assertApart(MERGE_PALETTE, 15); // among themselves they also carry their change number
  for (const m of MERGE_PALETTE) for (const l of Object.values(LAYER_COLORS)) assertApart([m, l]);
});

test("gold feedback: the annotator's boxes and the known answer stay apart", () => {
  assertApart(Object.values(FEEDBACK_COLORS));
});
