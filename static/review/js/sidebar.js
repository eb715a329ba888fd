// The read-only parts of the adjudication panel: the verdict and its reasons, the two annotations
// side by side (tier, defects, time), the change-by-change breakdown and the pair's history.
// Rebuilt from the config on demand; writes only the DOM.
import { formatDuration } from "../../canvas/js/clock.js";
import { allReasons, compareRows, defectsText, formatIou, formatPercent, formatWhen, reasonTarget } from "./breakdown.js";
import { canReopen, decisionDone, statusLabel } from "./decide.js";
import { LAYER_STYLES } from "./layers.js";

/** A tiny element builder: h("p", {class: "x"}, "text", child). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") Object.entries(v).forEach(([name, val]) => el.style.setProperty(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), val));
    else if (k.startsWith("data-") || k.startsWith("aria-") || k === "role" || k === "title" || k === "tabindex") el.setAttribute(k, v === true ? "" : String(v));
    else el[k] = v;
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

const swatch = (id) => h("span", { class: `adj-swatch adj-${id}`, style: { "--layer": LAYER_STYLES[id].color }, "aria-hidden": "true" });
const mark = (agrees) => {
  if (agrees === null || agrees === undefined) return h("span", { class: "adj-mark is-none" }, "");
  return h("span", { class: `adj-mark ${agrees ? "is-ok" : "is-bad"}`, title: agrees ? "agrees" : "differs" }, agrees ? "✓" : "✗");
};
const statusBadge = (status) => h("span", { class: `badge st-${status}` }, statusLabel(status));
const value = (text, empty = "—") => (String(text ?? "").trim() ? String(text) : h("span", { class: "adj-nil" }, empty));

/**
 * ctx: {root, config, onFocus(focus|null), onFrame(row, side), onReopen()}. render() redraws
 * everything from ctx.config (after a decision changes it).
 */
export function createSidebar(ctx) {
  const { root } = ctx;
  const $ = (s) => root.querySelector(s);

  function renderVerdict() {
    const { agreement } = ctx.config;
    const el = $("[data-verdict]");
    if (!agreement) {
      el.replaceChildren(h("p", { class: "adj-muted" }, "No agreement was computed for this pair: compare the annotations below."));
      return;
    }
    const reasons = allReasons(agreement);
    // Once a lead has decided, the rules' verdict is history: say whose word it is, so the panel
    // never reads "Disputed" under a pair shown as "Accepted".
    const overruled = ctx.config.status !== agreement.status;
    el.replaceChildren(
      h("p", { class: "adj-verdict-line" },
        overruled ? h("span", { class: "adj-muted" }, "The rules said") : null,
        h("span", { class: `adj-verdict st-${agreement.status}`, title: "The verdict of the agreement rules" }, statusLabel(agreement.status)),
        overruled ? h("span", { class: "adj-muted", "data-verdict-now": "" }, "· now ", statusBadge(ctx.config.status)) : null,
        h("span", { class: "adj-iou", title: "Mean IoU of the matched boxes" }, "mean IoU ", h("b", {}, formatIou(agreement.mean_iou)))),
      reasons.length
        ? h("ul", { class: "adj-reasons" }, reasons.map((r) => h("li", { "data-code": r.code, class: reasonTarget(r.code) ? "is-change" : "" }, r.text)))
        : h("p", { class: "adj-muted" }, "No reasons recorded."),
    );
  }

  function renderCompare() {
    const [a1, a2] = ctx.config.annotations ?? [];
    const el = $("[data-compare]");
    const cols = [a1, a2].filter(Boolean);
    if (!cols.length) {
      el.replaceChildren(h("p", { class: "adj-muted" }, "No annotations."));
      return;
    }
    const ids = ["one", "two"];
    const row = (label, fn) => h("tr", {}, h("th", { scope: "row" }, label), cols.map((a) => h("td", {}, fn(a))));
    const tierPill = (t) => h("span", { class: `adj-tier adj-tier-${t}` }, t || "—");
    el.replaceChildren(h("table", { class: "adj-compare" },
      h("thead", {}, h("tr", {}, h("td", {}),
        cols.map((a, i) => h("th", { scope: "col" }, swatch(ids[i]), " ", a.label || `Annotation ${i + 1}`,
          h("span", { class: "adj-who" }, a.annotator ?? ""))))),
      h("tbody", {},
        row("Tier", (a) => tierPill(a.tier)),
        row("Defects", (a) => {
          const text = defectsText(a.defects, ctx.config.defects);
          return value(text === "none" ? "" : text, "none");
        }),
        row("Time spent", (a) => (Number.isFinite(a.time_spent_ms) ? formatDuration(a.time_spent_ms) : "—")),
        row("Submitted", (a) => formatWhen(a.submitted_at) || "—"),
        row("Changes", (a) => String((a.changes ?? []).length))),
    ));
    if (ctx.config.gold) {
      el.append(h("p", { class: "adj-gold-note", title: "Shift + 3 shows or hides it" }, swatch("gold"), " Gold pair: the known answer is drawn dashed."));
    }
  }

  function sideRow(row, side) {
    const s = row.sides[side];
    const detail = [
      ...s.pairs.map((p) => `box ${p.box1 + 1} of 1 ↔ box ${p.box2 + 1} of 2: IoU ${formatIou(p.iou)}`),
      ...s.unmatched1.map((j) => `box ${j + 1} of annotation 1 has no counterpart`),
      ...s.unmatched2.map((j) => `box ${j + 1} of annotation 2 has no counterpart`),
    ].join("\n");
    const cells = [
      h("span", { class: "adj-k" }, `Boxes ${s.label}`),
      h("span", { class: "adj-v" }, s.count1 || h("span", { class: "adj-nil" }, "—")),
      h("span", { class: "adj-v" }, s.count2 || h("span", { class: "adj-nil" }, "—")),
      h("span", { class: `adj-side-verdict ${s.agrees === false ? "is-bad" : s.agrees ? "is-ok" : ""}` }, s.text, " ", mark(s.agrees)),
    ];
    return h("div", {
      class: "adj-row adj-side-row", role: "button", tabindex: "0", "data-side": side,
      title: `${detail ? `${detail}\n` : ""}Click to frame the boxes on ${s.label}`,
    }, cells);
  }

  function renderBreakdown() {
    const rows = compareRows(ctx.config);
    const el = $("[data-breakdown]");
    if (!rows.length) {
      el.replaceChildren(h("p", { class: "adj-muted" }, "Neither annotation has a change."));
      return;
    }
    el.replaceChildren(...rows.map((row, k) => {
      const state = row.agrees === null ? "" : row.agrees ? "is-agrees" : "is-differs";
      const chip = row.agrees === null ? null : row.agrees
        ? h("span", { class: "adj-chip is-ok" }, "agrees")
        : h("span", { class: "adj-chip is-bad" }, row.differs.length ? `differs: ${row.differs.join(", ")}` : "differs");
      const fieldCells = row.fields.flatMap((f) => [
        h("span", { class: "adj-k" }, f.label),
        h("span", { class: "adj-v" }, value(f.value1)),
        h("span", { class: "adj-v" }, value(f.value2)),
        h("span", { class: "adj-side-verdict" }, mark(f.agrees)),
      ]).map((cell) => cell);
      const grid = h("div", { class: "adj-grid" },
        h("span", {}), h("span", { class: "adj-colhead" }, swatch("one"), " 1"), h("span", { class: "adj-colhead" }, swatch("two"), " 2"), h("span", {}),
        // Field rows are plain grid cells; side rows are one focusable element spanning the grid.
        fieldCells,
        sideRow(row, "a"), sideRow(row, "b"));
      const d = row.description;
      const desc = h("div", { class: "adj-desc" },
        h("p", { class: "adj-desc-head" }, "Descriptions", d.similarity === null ? null
          : h("span", { class: "adj-sim", title: "Description similarity" },
            h("span", { class: "adj-bar" }, h("span", { style: { width: formatPercent(d.similarity) } })), ` ${formatPercent(d.similarity)} similar`)),
        d.value1 ? h("p", { class: "adj-quote" }, swatch("one"), h("span", {}, d.value1)) : null,
        d.value2 ? h("p", { class: "adj-quote" }, swatch("two"), h("span", {}, d.value2)) : null);
      const card = h("article", { class: `adj-cmp ${state}`, "data-row": k },
        h("header", {}, h("h3", {}, row.title), chip,
          row.geometry === null ? null : h("span", { class: "adj-geo", title: "Geometry score: matched IoU per side, averaged" }, `geometry ${formatIou(row.geometry)}`)),
        grid, desc);
      const focus = (side = null) => ctx.onFocus({ one: row.index1, two: row.index2, side });
      card.addEventListener("pointerenter", () => focus());
      card.addEventListener("pointerleave", () => ctx.onFocus(null));
      card.querySelectorAll("[data-side]").forEach((el2) => {
        const side = el2.dataset.side;
        el2.addEventListener("pointerenter", () => focus(side));
        el2.addEventListener("pointerleave", () => focus());
        el2.addEventListener("click", () => ctx.onFrame(row, side));
        el2.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            e.stopPropagation();
            ctx.onFrame(row, side);
          }
        });
        el2.addEventListener("focus", () => focus(side));
        el2.addEventListener("blur", () => ctx.onFocus(null));
      });
      return card;
    }));
  }

  function renderHistory() {
    const items = ctx.config.resolutions ?? [];
    const el = $("[data-history]");
    $("[data-history-count]").textContent = items.length ? String(items.length) : "";
    if (!items.length) {
      el.replaceChildren(h("p", { class: "adj-muted" }, "No decisions yet."));
      return;
    }
    el.replaceChildren(h("ol", { class: "adj-history" }, [...items].reverse().map((r) => h("li", {},
      h("p", { class: "adj-h-head" }, h("b", {}, decisionDone(r.decision)), " ",
        h("span", { class: "adj-muted" }, `by ${r.lead || "someone"} · `, h("time", { dateTime: r.created_at }, formatWhen(r.created_at)))),
      h("p", { class: "adj-h-status" }, statusBadge(r.status_before), h("span", { "aria-label": "to" }, " → "), statusBadge(r.status_after)),
      r.reason ? h("p", { class: "adj-h-text" }, h("span", { class: "adj-muted" }, "Reason: "), r.reason) : null,
      r.comment ? h("p", { class: "adj-h-text adj-h-comment" }, r.comment) : null,
    ))));
  }

  /** The line above the actions once the pair is decided: what stands, and Reopen. */
  function renderDecided() {
    const { status, resolutions = [] } = ctx.config;
    const el = $("[data-decided]");
    const open = status === "disputed";
    el.hidden = open;
    if (open) return;
    const last = resolutions.at(-1);
    const decided = status === "accepted" || status === "rejected";
    const text = last && last.status_after === status && last.decision !== "reopen"
      ? [statusBadge(status), ` ${decisionDone(last.decision)} by ${last.lead || "a lead"}, ${formatWhen(last.created_at)}.`]
      : [statusBadge(status), decided ? " by the agreement rules." : " — not open for a decision yet."];
    if (decided) text.push(h("span", { class: "adj-muted" }, " A new decision replaces it."));
    el.querySelector("[data-decided-text]").replaceChildren(...text);
    el.querySelector("[data-action=reopen]").hidden = !canReopen(status);
  }

  function render() {
    renderVerdict();
    renderCompare();
    renderBreakdown();
    renderHistory();
    renderDecided();
  }

  return { render, renderHistory, renderDecided };
}
