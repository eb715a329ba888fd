// The answer as data: the REST body and the draft built from the store's changes, a draft read
// back into changes, and the client-side checks named like the server's field errors
// ("changes.0.entity_a"), so both kinds of error land in the same place in the panel.
import { iou, isValidBox, roundBox } from "./box.js";

export const SIDES = ["a", "b"];
const MAX_TIME_MS = 24 * 3600 * 1000; // the server's ceiling; a tab left open for days stays valid

export function emptyChange(key, init = {}) {
  return {
    key, category: "", description: "", entity_a: "", entity_b: "",
    boxes_a: [], boxes_b: [], absent_a: false, absent_b: false, linked: true, ...init,
  };
}

/** The submit body. An absent side is sent as no boxes and no entity. */
export function toBody(data, timeSpentMs) {
  return {
    tier: data.tier,
    defects: [...data.defects],
    time_spent_ms: Math.min(MAX_TIME_MS, Math.max(0, Math.round(timeSpentMs))),
    changes: data.changes.map((c) => ({
      category: c.category,
      description: c.description.trim(),
      entity_a: c.absent_a ? "" : c.entity_a.trim(),
      entity_b: c.absent_b ? "" : c.entity_b.trim(),
      boxes_a: c.absent_a ? [] : c.boxes_a.map((b) => [...b]),
      boxes_b: c.absent_b ? [] : c.boxes_b.map((b) => [...b]),
    })),
  };
}

/** The draft: the body plus what only the UI needs (absent flags, the active change and side). */
export function toDraft(data, sel, timeSpentMs) {
  return {
    ...toBody(data, timeSpentMs),
    ui: {
      absent_a: data.changes.map((c) => c.absent_a),
      absent_b: data.changes.map((c) => c.absent_b),
      linked: data.changes.map((c) => c.linked),
      active: sel.change,
      side: sel.side,
    },
  };
}

const text = (v) => (typeof v === "string" ? v : "");
const boxes = (v) => (Array.isArray(v) ? v.filter(Array.isArray).map((b) => [...b]) : []);

/** {data, sel} from a draft of any origin (server, browser, textarea); tolerates junk. */
export function fromDraft(draft, nextKey) {
  const ui = draft?.ui ?? {};
  const list = Array.isArray(draft?.changes) ? draft.changes : [];
  const data = {
    tier: text(draft?.tier),
    defects: Array.isArray(draft?.defects) ? draft.defects.filter((d) => typeof d === "string") : [],
    changes: list.map((c, i) => emptyChange(nextKey(), {
      category: text(c?.category),
      description: text(c?.description),
      entity_a: text(c?.entity_a),
      entity_b: text(c?.entity_b),
      boxes_a: boxes(c?.boxes_a),
      boxes_b: boxes(c?.boxes_b),
      absent_a: Boolean(ui.absent_a?.[i]),
      absent_b: Boolean(ui.absent_b?.[i]),
      // Drafts from before the link toggle: linked when both sides already say the same.
      linked: typeof ui.linked?.[i] === "boolean" ? ui.linked[i] : text(c?.entity_a) === text(c?.entity_b),
    })),
  };
  const active = Number.isInteger(ui.active) ? ui.active : 0;
  const sel = {
    change: data.changes.length ? Math.min(Math.max(active, 0), data.changes.length - 1) : -1,
    side: ui.side === "b" ? "b" : "a",
    box: -1,
  };
  return { data, sel };
}

/**
 * What can be checked before sending: {path: [message]}. rules: {frames, categories (slugs or
 * null), tiersNeedingChange}.
 */
export function validate(data, rules) {
  const out = {};
  const add = (key, message) => (out[key] ??= []).push(message);
  if (!data.tier) add("tier", "Choose a quality tier (keys 1–4).");
  if (!data.changes.length && rules.tiersNeedingChange.includes(data.tier)) {
    add("changes", `A pair scored ${data.tier} needs at least one change — press N to add one.`);
  }
  data.changes.forEach((c, i) => {
    const path = `changes.${i}`;
    if (!c.category) add(`${path}.category`, "Choose a category.");
    else if (rules.categories && !rules.categories.includes(c.category)) add(`${path}.category`, "Choose a category of this project.");
    if (!c.description.trim()) add(`${path}.description`, "Describe the change in one sentence.");
    if (c.absent_a && c.absent_b) add(`${path}.boxes_a`, "A change cannot be absent on both sides.");
    for (const side of SIDES) {
      if (c[`absent_${side}`]) continue;
      const label = side.toUpperCase();
      const list = c[`boxes_${side}`];
      if (!list.length) add(`${path}.boxes_${side}`, `Draw a box on ${label} or mark ${label} absent (X).`);
      else if (!c[`entity_${side}`].trim()) add(`${path}.entity_${side}`, `Name what the box on ${label} shows.`);
      list.forEach((box, j) => {
        if (!isValidBox(box, rules.frames[side])) add(`${path}.boxes_${side}.${j}`, `Box ${j + 1} lies outside image ${label}.`);
      });
    }
  });
  return out;
}

function sameBoxes(a, b) {
  return a.length === b.length && a.every((box) => b.some((other) => iou(box, other) >= 0.9));
}

/**
 * The predictions' changes as answer changes (boxes rounded into each frame, an empty side marked
 * absent), leaving out those whose boxes the answer already has on both sides.
 */
export function suggestedChanges(predictions, existing, frames) {
  return predictions.flatMap((p) => p.changes ?? []).map((c) => {
    const side = (s) => boxes(c[`boxes_${s}`]).filter((b) => b.length === 4).map((b) => roundBox(b, frames[s]));
    const [a, b] = [side("a"), side("b")];
    return {
      category: text(c.category), description: text(c.description),
      entity_a: text(c.entity_a), entity_b: text(c.entity_b),
      boxes_a: a, boxes_b: b, absent_a: !a.length, absent_b: !b.length,
      linked: text(c.entity_a) === text(c.entity_b),
    };
  }).filter((c) => !existing.some((have) => SIDES.every((s) => sameBoxes(have[`boxes_${s}`], c[`boxes_${s}`]))));
}
