// Assists from the pair's precomputed pixels (pairdiff/assist, docs/assists.md): which changed
// region a click lands in, the A→B alignment a mirrored box goes through, and the drafted
// description of a change. Pure functions of the workspace config's `assist` (null: by hand).
import { iou, roundBox } from "./box.js";

const inside = (zone, p, tol) => p.x >= zone[0] - tol && p.x <= zone[2] + tol && p.y >= zone[1] - tol && p.y <= zone[3] + tol;
const area = (b) => (b[2] - b[0]) * (b[3] - b[1]);

function invert(m) {
  const [[a, b, c], [d, e, f], [g, h, i]] = m;
  const A = e * i - f * h;
  const B = -(d * i - f * g);
  const C = d * h - e * g;
  const det = a * A + b * B + c * C;
  if (!det) return null;
  return [
    [A / det, -(b * i - c * h) / det, (b * f - c * e) / det],
    [B / det, (a * i - c * g) / det, -(a * f - c * d) / det],
    [C / det, -(a * h - b * g) / det, (a * e - b * d) / det],
  ];
}

/** The box through a 3×3 matrix: the extent of its mapped corners, clipped to `frame`; null when nothing of it lands inside. */
export function mapBox(m, box, frame) {
  const pts = [[box[0], box[1]], [box[2], box[1]], [box[0], box[3]], [box[2], box[3]]].map(([x, y]) => {
    const w = m[2][0] * x + m[2][1] * y + m[2][2];
    return [(m[0][0] * x + m[0][1] * y + m[0][2]) / w, (m[1][0] * x + m[1][1] * y + m[1][2]) / w];
  });
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const out = [Math.max(0, Math.min(...xs)), Math.max(0, Math.min(...ys)), Math.min(frame.width, Math.max(...xs)), Math.min(frame.height, Math.max(...ys))];
  if (out[2] - out[0] < 1 || out[3] - out[1] < 1) return null;
  return roundBox(out, frame);
}

/**
 * assist: {alignment: {matrix, kind, residual}, components: [{boxes_a, boxes_b, zone_a, zone_b,
 * whole, draft?, entity?, category?}], drafts} or null.
 */
export function createAssist(assist) {
  const components = assist?.components ?? [];
  // The frame scale is what mirroring does without an assist (box.js mirrorBox, exactly).
  const forward = assist?.alignment?.kind === "scale" ? null : assist?.alignment?.matrix ?? null;
  const backward = forward ? invert(forward) : null;
  return {
    available: components.length > 0,
    drafts: Boolean(assist?.drafts),
    alignment: assist?.alignment ?? null,
    /** The component a point (image px of `side`) falls in: the smallest local one, else a whole-image one. */
    pick(side, p, tolerance = 3) {
      const hits = components.filter((c) => inside(c[`zone_${side}`], p, tolerance));
      const local = hits.filter((c) => !c.whole).sort((x, y) => area(x[`zone_${side}`]) - area(y[`zone_${side}`]));
      return local[0] ?? hits[0] ?? null;
    },
    /** A box of side `from` mapped to side `to` through the alignment; null without one. */
    mirror(box, from, to, frames) {
      const m = from === "a" ? forward : backward;
      return m ? mapBox(m, box, frames[to]) : null;
    },
    /** The component whose boxes best match a change's (for its draft), null when none overlaps. */
    match(change) {
      let best = null;
      let bestScore = 0;
      for (const c of components) {
        let score = 0;
        for (const side of ["a", "b"]) {
          for (const box of change[`boxes_${side}`]) {
            for (const other of c[`boxes_${side}`]) score = Math.max(score, iou(box, other));
          }
        }
        if (score > bestScore) {
          best = c;
          bestScore = score;
        }
      }
      return bestScore >= 0.3 ? best : null;
    },
  };
}

const ROWS = ["top", "", "bottom"];
const COLS = ["left", "", "right"];

/**
 * What the status line says of a pair's alignment when it is more than a resize: how B sits on
 * A, its residual (grey levels) and where it is poorest; "" for the frame scale or none.
 */
export function alignmentNote(alignment) {
  if (!alignment || alignment.kind === "scale") return "";
  const m = alignment.matrix;
  const how = alignment.kind === "translation"
    ? `shifted ${Math.round(m[0][2])}, ${Math.round(m[1][2])} px`
    : "cropped or rescaled (affine)";
  let worst = null;
  (alignment.grid ?? []).forEach((row, i) => row.forEach((v, j) => {
    if (v !== null && (!worst || v > worst.v)) worst = { v, i, j };
  }));
  const n = alignment.grid?.length ?? 0;
  let where = "";
  if (worst && worst.v > 3 * alignment.residual + 10 && n) {
    const part = (k) => Math.min(2, Math.floor((3 * k) / n));
    where = `, poorest at the ${[ROWS[part(worst.i)], COLS[part(worst.j)]].filter(Boolean).join(" ") || "centre"}`;
  }
  return `B is ${how} against A: C mirrors through it (residual ${alignment.residual} grey levels${where})`;
}
