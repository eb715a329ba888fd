// What each panel shows for the current mode: which image layers, which side's boxes and in
// which style. Pure apart from reading the objects it is given; viewer.js does the painting.
import { toScreen, viewTransform } from "./box.js";
import { otherSide } from "./state.js";

import { CHANGE_PALETTE, ERROR, SUGGESTION } from "./palette.js";

export const PALETTE = CHANGE_PALETTE;

/** Which side a panel edits: fixed in side-by-side, the active side in the single-view modes. */
export function panelSide(mode, panelIndex, activeSide) {
  if (mode === "side") return panelIndex === 0 ? "a" : "b";
  return activeSide;
}

export function changeColor(index) {
  return PALETTE[index % PALETTE.length];
}

function hexAlpha(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${alpha})`;
}

function answerBoxes(state, side, t, showAll, colorOf = changeColor) {
  const out = [];
  const { sel, errors } = state;
  state.changes.forEach((c, i) => {
    const activeChange = i === sel.change;
    if (!activeChange && !showAll) return;
    c[`boxes_${side}`].forEach((box, j) => {
      const bad = Boolean(errors[`changes.${i}.boxes_${side}.${j}`]);
      const color = bad ? ERROR : colorOf(i);
      const entity = c[`entity_${side}`].trim();
      out.push({
        box, t, color,
        faint: !activeChange,
        selected: activeChange && sel.side === side && sel.box === j,
        fill: activeChange ? hexAlpha(color, 0.1) : null,
        label: `${i + 1}${entity ? ` ${entity}` : ""}${bad ? " !" : ""}`,
      });
    });
  });
  // Active change last: painted on top and hit-tested first.
  return out.sort((p, q) => Number(!p.faint) - Number(!q.faint));
}

/**
 * Changes with nothing on `side`, said on the image itself: an absent side has no box to see,
 * and a reader of the panel alone would miss that the object was added or removed.
 */
export function absentNotes(state, side, colorOf = changeColor) {
  const what = side === "a" ? "added in B" : "removed in B";
  return state.changes.flatMap((c, i) => (c[`absent_${side}`] && !c[`absent_${otherSide(side)}`]
    ? [{ text: `${i + 1}${c[`entity_${otherSide(side)}`].trim() ? ` ${c[`entity_${otherSide(side)}`].trim()}` : ""}: absent on ${side.toUpperCase()} (${what})`,
      color: colorOf(i), active: i === state.sel.change }]
    : []));
}

/**
 * ctx: {state, mode, swipe, view, ref, frames, images {a, b}, diff (canvas|null), predictions,
 * showPredictions, showBoxes, pointer {panel, nx, ny} | null}. Returns the viewer scene.
 * Optional: colorOf (change index → colour of the answer's boxes; default changeColor) and
 * referenceBoxes (side → [{box, color, dashed, faint, label, fill}] in that side's frame): read-only
 * boxes painted beneath the answer — other people's answers, say — which draw.js never picks.
 */
export function buildScene(ctx, panelIndex, size) {
  const { state, mode, view, ref, frames, images } = ctx;
  const side = panelSide(mode, panelIndex, state.sel.side);
  const t = viewTransform(view, size, ref, frames[side]);
  const scene = { layers: [], boxes: [], grid: { t, frame: frames[side] }, side, t };
  if (mode === "swipe") {
    const x = ctx.swipe * size.width;
    const ta = viewTransform(view, size, ref, frames.a);
    const tb = viewTransform(view, size, ref, frames.b);
    scene.layers.push({ source: images.a, t: ta, frame: frames.a, clip: { x0: 0, x1: x } });
    scene.layers.push({ source: images.b, t: tb, frame: frames.b, clip: { x0: x, x1: size.width } });
    scene.divider = x;
  } else if (mode === "diff") {
    if (ctx.diff) scene.layers.push({ source: ctx.diff, t: viewTransform(view, size, ref, frames.a), frame: frames.a });
    else scene.message = ctx.diffError || "Computing the difference…";
    scene.grid = null;
  } else {
    scene.layers.push({ source: images[side], t, frame: frames[side] });
    if (!images[side]?.naturalWidth) scene.message = `Loading image ${side.toUpperCase()}…`;
  }
  if (ctx.showPredictions) {
    ctx.predictions.forEach((p) => p.changes.forEach((c) => (c[`boxes_${side}`] ?? []).forEach((box) => {
      scene.boxes.push({ box, t, color: SUGGESTION, dashed: true, label: p.model || "suggestion" });
    })));
  }
  if (ctx.showBoxes) {
    for (const item of ctx.referenceBoxes?.(side) ?? []) scene.boxes.push({ ...item, t });
    if (mode !== "side") {
      // Ghost of the active change on the other side: where the mirror would land.
      const other = otherSide(side);
      const to = viewTransform(view, size, ref, frames[other]);
      const c = state.changes[state.sel.change];
      (c?.[`boxes_${other}`] ?? []).forEach((box) => {
        scene.boxes.push({ box, t: to, color: "#cbd5e1", dashed: true, faint: true });
      });
    }
    scene.boxes.push(...answerBoxes(state, side, t, true, ctx.colorOf));
  }
  if (ctx.showBoxes && mode !== "diff" && mode !== "swipe") scene.notes = absentNotes(state, side, ctx.colorOf);
  if (ctx.pointer && ctx.pointer.panel !== panelIndex && mode === "side") {
    scene.cursor = toScreen(t, ctx.pointer.nx * frames[side].width, ctx.pointer.ny * frames[side].height);
  }
  return scene;
}
