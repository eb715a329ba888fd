// The agreement of two annotations as something a lead reads at a glance: per compared change,
// which field differs and, per side, which boxes matched with which IoU. Pure (no DOM); the
// sidebar renders what this returns. Indices in the agreement are 0-based positions in each
// annotation's changes and boxes; everything shown to people counts from 1.

const list = (v) => (Array.isArray(v) ? v : []);

/** "change 1: IoU 0.41 on B is below 0.5" → "Change 1: IoU 0.41 on B is below 0.5." */
export function sentence(message) {
  const text = String(message ?? "").trim();
  if (!text) return "";
  const head = text[0].toUpperCase() + text.slice(1);
  return /[.!?]$/.test(head) ? head : `${head}.`;
}

export function formatIou(value) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(2) : "—";
}

export function formatPercent(value) {
  return typeof value === "number" && Number.isFinite(value) ? `${Math.round(value * 100)}%` : "—";
}

/** A stable label for a code: "iou_below_threshold" → "IoU below threshold". */
export function humanise(code) {
  const text = String(code ?? "").replace(/_/g, " ").trim();
  return text ? text[0].toUpperCase() + text.slice(1) : "";
}

/** The change index a reason code is about: {annotation: 1|2, index} or null (tiers, counts). */
export function reasonTarget(code) {
  const m = /^change(_2)?\[(\d+)\]/.exec(String(code ?? ""));
  return m ? { annotation: m[1] ? 2 : 1, index: Number(m[2]) } : null;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function boxCount(change, side) {
  if (!change) return "";
  const n = list(change[`boxes_${side}`]).length;
  return n ? plural(n, "box", "boxes") : "absent";
}

/**
 * One side of a compared change: counts for each annotation, the matched box pairs with their
 * IoU against the threshold, the boxes left over, and a short verdict text.
 */
export function sideSummary(side, agreement, c1, c2, threshold) {
  const s = agreement ?? {};
  const pairs = list(s.matched).map(([i, j, iou]) => ({ box1: i, box2: j, iou, ok: iou >= threshold }));
  const unmatched1 = list(s.unmatched_1);
  const unmatched2 = list(s.unmatched_2);
  const n1 = c1 ? list(c1[`boxes_${side}`]).length : 0;
  const n2 = c2 ? list(c2[`boxes_${side}`]).length : 0;
  const nullMismatch = s.null_consistent === false;
  let text;
  if (!c1 || !c2) text = "no counterpart";
  else if (nullMismatch) text = `absent in ${n1 ? 2 : 1} only`;
  else if (!n1 && !n2) text = "absent in both";
  else if (pairs.length === 1 && !unmatched1.length && !unmatched2.length) text = `IoU ${formatIou(pairs[0].iou)}`;
  else {
    const parts = [];
    if (pairs.length) parts.push(`IoU ${pairs.map((p) => formatIou(p.iou)).join(" · ")}`);
    const left = unmatched1.length + unmatched2.length;
    if (left) parts.push(`${plural(left, "box", "boxes")} unmatched`);
    text = parts.join(", ");
  }
  const agrees = typeof s.agrees === "boolean" ? s.agrees : null;
  return {
    side, label: side.toUpperCase(), agrees, nullMismatch, pairs, unmatched1, unmatched2,
    count1: boxCount(c1, side), count2: boxCount(c2, side), text,
  };
}

/**
 * The rows of the breakdown: one per compared change (the agreement's order), or — with no
 * agreement — the two annotations' changes side by side by position, with nothing judged.
 * Each row: {key, index1, index2, title, agrees, geometry, fields: [{name, label, value1, value2,
 * agrees}], sides: {a, b}, description: {value1, value2, similarity}, differs: [label],
 * reasons: [sentence]}.
 */
export function compareRows(config) {
  const [ann1, ann2] = list(config.annotations);
  const changes1 = list(ann1?.changes);
  const changes2 = list(ann2?.changes);
  const agreement = config.agreement;
  const threshold = Number(agreement?.policy?.iou_threshold ?? agreement?.iou_threshold ?? 0.5);
  const categoryName = new Map(list(config.categories).map((c) => [c.slug, c.name]));
  const cat = (c) => (c ? categoryName.get(c.category) ?? c.category ?? "" : "");
  const reasonsByChange = new Map();
  for (const r of list(agreement?.reasons)) {
    const t = reasonTarget(r.code);
    if (!t) continue;
    const key = `${t.annotation}:${t.index}`;
    reasonsByChange.set(key, [...(reasonsByChange.get(key) ?? []), sentence(r.message)]);
  }

  const entries = agreement
    ? list(agreement.changes)
    : Array.from({ length: Math.max(changes1.length, changes2.length) }, (_, i) => ({
      index_1: i < changes1.length ? i : null,
      index_2: i < changes2.length ? i : null,
    }));

  return entries.map((entry, k) => {
    const i1 = Number.isInteger(entry.index_1) ? entry.index_1 : null;
    const i2 = Number.isInteger(entry.index_2) ? entry.index_2 : null;
    const c1 = i1 === null ? null : changes1[i1] ?? null;
    const c2 = i2 === null ? null : changes2[i2] ?? null;
    const judged = Boolean(agreement) && c1 !== null && c2 !== null;
    const flag = (name) => (judged && typeof entry[name] === "boolean" ? entry[name] : null);
    const fields = [
      { name: "category", label: "Category", value1: cat(c1), value2: cat(c2), agrees: flag("category_agrees") },
      { name: "entity_a", label: "Entity A", value1: c1?.entity_a ?? "", value2: c2?.entity_a ?? "", agrees: flag("entity_a_agrees") },
      { name: "entity_b", label: "Entity B", value1: c1?.entity_b ?? "", value2: c2?.entity_b ?? "", agrees: flag("entity_b_agrees") },
    ];
    const sides = {
      a: sideSummary("a", agreement ? entry.side_a : null, c1, c2, threshold),
      b: sideSummary("b", agreement ? entry.side_b : null, c1, c2, threshold),
    };
    if (!judged) {
      sides.a.agrees = null;
      sides.b.agrees = null;
    }
    const differs = [
      ...fields.filter((f) => f.agrees === false).map((f) => f.label),
      ...Object.values(sides).filter((s) => s.agrees === false).map((s) => (s.nullMismatch ? `absent ${s.label}` : `boxes ${s.label}`)),
    ];
    let title;
    if (c1 && c2) title = i1 === i2 ? `Change ${i1 + 1}` : `Change ${i1 + 1} ↔ ${i2 + 1}`;
    else if (c1) title = `Change ${i1 + 1} of annotation 1 only`;
    else title = `Change ${i2 + 1} of annotation 2 only`;
    const reasons = [
      ...(i1 !== null ? reasonsByChange.get(`1:${i1}`) ?? [] : []),
      ...(i2 !== null && i1 === null ? reasonsByChange.get(`2:${i2}`) ?? [] : []),
    ];
    return {
      key: `${i1 ?? "-"}:${i2 ?? "-"}:${k}`,
      index1: i1, index2: i2, title,
      agrees: agreement ? (c1 && c2 ? Boolean(entry.agrees) : false) : null,
      geometry: typeof entry.geometry === "number" ? entry.geometry : null,
      fields, sides,
      description: {
        value1: c1?.description ?? "", value2: c2?.description ?? "",
        similarity: judged && typeof entry.description_similarity === "number" ? entry.description_similarity : null,
      },
      differs, reasons,
    };
  });
}

/** The verdict's reasons that are not about one change (tiers, change counts), as sentences. */
export function generalReasons(agreement) {
  return list(agreement?.reasons).filter((r) => !reasonTarget(r.code)).map((r) => sentence(r.message));
}

/** Every reason as a sentence, in the verdict's order. */
export function allReasons(agreement) {
  return list(agreement?.reasons).map((r) => ({ code: r.code, text: sentence(r.message) }));
}

/** Defects by the project's labels (a code without one: "artefacts" → "Artefacts"); none → "none". */
export function defectsText(defects, labels = []) {
  const byValue = new Map(list(labels).map((d) => [d.value, d.label]));
  const items = list(defects).map((d) => byValue.get(d) ?? humanise(d)).filter(Boolean);
  return items.length ? items.join(", ") : "none";
}

/** A moment for people: "12 Mar, 14:02" (the year when it is not this one). */
export function formatWhen(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const sameYear = d.getFullYear() === now.getFullYear();
  const day = d.toLocaleDateString("en-GB", { day: "numeric", month: "short", ...(sameYear ? {} : { year: "numeric" }) });
  const time = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
  return `${day}, ${time}`;
}
