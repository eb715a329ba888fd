// The read-only answers a lead compares — annotation 1, annotation 2, the known answer of a gold
// pair, the answer that stands now — as layers of boxes over both images, and the answer a merge
// starts from. Pure: no DOM, so tests/js/adjudicate.test.mjs pins it.

// short: the legend's name; tag: the box labels' prefix (with the change number when several).
import { LAYER_COLORS, MERGE_PALETTE } from "../../canvas/js/palette.js";

export { MERGE_PALETTE };

export const LAYER_STYLES = {
  one: { color: LAYER_COLORS.one, short: "1", tag: "1·" },
  two: { color: LAYER_COLORS.two, short: "2", tag: "2·", labelBelow: true }, // under its boxes: 1's sit above
  gold: { color: LAYER_COLORS.gold, short: "Known", tag: "★", dashed: true },
  current: { color: LAYER_COLORS.current, short: "Standing", tag: "✓", dashed: true },
};
// The merged answer's own colours (MERGE_PALETTE): none of them is a layer's, so a merged box
// never passes for one of the annotations it was made from.

export function mergeColor(index) {
  return MERGE_PALETTE[index % MERGE_PALETTE.length];
}

const list = (v) => (Array.isArray(v) ? v : []);

/** The layers this pair has, in a fixed order: [{id, label, short, color, dashed, changes}]. */
export function availableLayers(config) {
  const [first, second] = list(config.annotations);
  const layers = [];
  const add = (id, label, changes, extra = {}) => {
    layers.push({ id, label, changes: list(changes), dashed: false, ...LAYER_STYLES[id], ...extra });
  };
  if (first) add("one", first.label || "Annotation 1", first.changes, { who: first.annotator });
  if (second) add("two", second.label || "Annotation 2", second.changes, { who: second.annotator });
  if (config.gold) add("gold", "Known answer", config.gold);
  if (config.current) add("current", "Standing answer", config.current.changes);
  return layers;
}

/** Which layers show at first: both annotations and the known answer; the standing answer once
 * the pair is decided (while disputed it is at most the consensus, shown on demand). */
export function initialVisibility(layers, status) {
  return Object.fromEntries(layers.map((l) => [l.id, l.id !== "current" || status !== "disputed"]));
}

/**
 * The boxes of the visible layers on one side: [{box, color, dashed, faint, label, fill, layer,
 * change}]. While a merged answer is edited they are faint and unlabelled — a reference under the
 * lead's own boxes. `focus` {one: change index|null, two: ..., side|null} (a row of the breakdown
 * under the pointer) brings those boxes forward and dims the rest.
 */
export function referenceBoxes(layers, visible, side, { editing = false, focus = null } = {}) {
  const out = [];
  for (const layer of layers) {
    if (!visible[layer.id]) continue;
    const many = layer.changes.length > 1;
    layer.changes.forEach((change, i) => {
      const focused = focus !== null && focus[layer.id] === i && (!focus.side || focus.side === side);
      const dim = editing || (focus !== null && !focused);
      list(change[`boxes_${side}`]).forEach((box, j) => {
        const entity = String(change[`entity_${side}`] ?? "").trim();
        const name = many ? `${layer.tag}${i + 1}` : layer.tag.replace("·", "");
        out.push({
          box, color: layer.color, dashed: layer.dashed, faint: dim, labelBelow: Boolean(layer.labelBelow),
          label: editing ? "" : `${name}${entity ? ` ${entity}` : ""}`,
          name, entity,
          fill: focused ? hexAlpha(layer.color, 0.16) : null,
          layer: layer.id, change: i, index: j,
        });
      });
    });
  }
  // The same box in two layers (an annotator who matched the known answer exactly, the standing
  // answer that is annotation 1) would paint one label over the other: they share the first one.
  const groups = new Map();
  for (const item of out) {
    if (!item.label || item.labelBelow) continue;
    const key = item.box.join(",");
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  for (const [first, ...rest] of groups.values()) {
    if (!rest.length) continue;
    const all = [first, ...rest];
    first.label = all.every((i) => i.entity === first.entity)
      ? `${all.map((i) => i.name).join(" ")}${first.entity ? ` ${first.entity}` : ""}`
      : all.map((i) => i.label).join(" · ");
    rest.forEach((i) => {
      i.label = "";
    });
  }
  // Focused boxes last: painted on top.
  return out.sort((p, q) => Number(Boolean(p.fill)) - Number(Boolean(q.fill)));
}

export function hexAlpha(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${alpha})`;
}

/** Where a merged answer may start, best first: the consensus when there is one, then the
 * annotations, the standing answer and the known answer. [{id, label, changes}] */
export function mergeSources(config) {
  const [first, second] = list(config.annotations);
  const out = [];
  if (config.consensus) out.push({ id: "consensus", label: "the consensus", changes: config.consensus });
  if (first) out.push({ id: "one", label: first.label || "annotation 1", changes: first.changes });
  if (second) out.push({ id: "two", label: second.label || "annotation 2", changes: second.changes });
  if (config.current) out.push({ id: "current", label: "the standing answer", changes: config.current.changes });
  if (config.gold) out.push({ id: "gold", label: "the known answer", changes: config.gold });
  return out.map((s) => ({ ...s, changes: list(s.changes) }));
}

/**
 * A draft the workspace store loads (state.js `load`): a deep copy of the source's changes, with
 * each empty side marked absent — in a submitted answer an empty side *is* the absent side, and
 * without the flag the store would ask for a box there.
 */
export function draftFrom(changes) {
  const copy = list(changes).map((c) => ({
    category: String(c.category ?? ""),
    description: String(c.description ?? ""),
    entity_a: String(c.entity_a ?? ""),
    entity_b: String(c.entity_b ?? ""),
    boxes_a: list(c.boxes_a).map((b) => [...b]),
    boxes_b: list(c.boxes_b).map((b) => [...b]),
  }));
  return {
    tier: "", defects: [], changes: copy,
    ui: {
      absent_a: copy.map((c) => c.boxes_a.length === 0),
      absent_b: copy.map((c) => c.boxes_b.length === 0),
      active: 0, side: "a",
    },
  };
}

/** The union of some boxes (to frame them together), or null. */
export function unionBox(boxes) {
  if (!boxes.length) return null;
  return [
    Math.min(...boxes.map((b) => b[0])), Math.min(...boxes.map((b) => b[1])),
    Math.max(...boxes.map((b) => b[2])), Math.max(...boxes.map((b) => b[3])),
  ];
}
