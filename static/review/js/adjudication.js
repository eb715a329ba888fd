// One adjudication screen: the workspace's viewer, modes, pointer editing, change cards and
// shortcuts (the canvas kit, static/canvas/js/mount.js), with both annotations painted as
// read-only layers, the agreement breakdown, and the lead's decisions, registered with the kit as
// its actions. The merged answer lives in the canvas store, which writes the hidden
// <textarea name="answer"> (the source of truth, as in the workspace); it exists only while the
// lead edits one.
import { sendJson } from "../../canvas/js/api.js";
import { frameBox } from "../../canvas/js/box.js";
import { actionFor } from "../../canvas/js/keys.js";
import { mountCanvas } from "../../canvas/js/mount.js";
import { ADJ_SHORTCUTS, adjudicationAction } from "./adj-keys.js";
import { canDecide, mergeErrors, standingAfter, statusLabel } from "./decide.js";
import { availableLayers, initialVisibility, mergeColor, referenceBoxes, unionBox } from "./layers.js";
import { createMerge } from "./merge.js";
import { showDecisionToast, takeDecision, tooSoon } from "./handoff.js";
import { createResolver } from "./resolve.js";
import { createSidebar, h } from "./sidebar.js";

// Workspace actions that edit the merged answer: refused until the lead starts one.
const EDIT_ACTIONS = new Set([
  "change-new", "change-prev", "change-next", "mirror", "absent", "delete-box", "undo", "redo",
  "grow-box", "edit-change", "side-a", "side-b", "whole-image",
]);
// Workspace keys with no meaning here (tiers, model suggestions).
const IGNORED = new Set(["tier", "category", "predictions-accept", "predictions-toggle"]);

export function mountAdjudication(root) {
  const $ = (s) => root.querySelector(s);
  const config = {
    categories: [], vocabulary: [], annotations: [], resolutions: [], agreement: null,
    consensus: null, gold: null, current: null,
    ...JSON.parse($("#adj-config").textContent),
  };
  const data = root.dataset;
  const urls = {
    image_a: data.urlImageA, image_b: data.urlImageB, resolution: data.urlResolution,
    queue: data.urlQueue || null, next: data.urlNext || null,
  };
  const send = (method, url, body) => sendJson(method, url, body, { csrf: data.csrf });
  const mergeRoot = $("[data-merge]");

  let layers = availableLayers(config);
  const openedAt = performance.now();
  const kit = mountCanvas(root, {
    // What the kit's actions read of the config (actions.js): no tiers, no model suggestions.
    config: { ...config, tiers: [], predictions: [] },
    field: mergeRoot.querySelector("[data-answer]"),
    store: { tiersNeedingChange: [] },
    ui: { visible: initialVisibility(layers, config.status), focus: null, editing: false },
    panelRoot: mergeRoot,
    panel: { colorOf: mergeColor },
    scene: () => ({
      colorOf: mergeColor,
      referenceBoxes: (side) => referenceBoxes(layers, ui.visible, side, { editing: ui.editing, focus: ui.focus }),
    }),
    // Until a merged answer is being edited, a drag pans and nothing can be picked.
    editable: () => ui.editing,
    resolveKey: (e, opts) => adjudicationAction(e, { ...opts, editing: ui.editing }) ?? actionFor(e, opts),
    shortcuts: ADJ_SHORTCUTS,
    acceptClick(button) {
      const decides = ["accept-1", "accept-2"].includes(button.dataset.action); // one click decides
      if (decides && tooSoon(openedAt, performance.now())) {
        // The second click of a double-click that decided the pair before: not meant for this one.
        chrome.status("Click ignored: this pair has just opened — click again to decide it");
        return false;
      }
      return true;
    },
  });
  const { store, ui, chrome, panel, modes, stage, frames, signal, invalidate, actions } = kit;

  const sidebar = createSidebar({
    root, config,
    onFocus(focus) {
      ui.focus = focus;
      invalidate();
    },
    onFrame(row, side) {
      const [first, second] = config.annotations;
      const boxes = [
        ...(row.index1 === null ? [] : first?.changes?.[row.index1]?.[`boxes_${side}`] ?? []),
        ...(row.index2 === null ? [] : second?.changes?.[row.index2]?.[`boxes_${side}`] ?? []),
      ];
      const union = unionBox(boxes);
      if (!union) return chrome.status(`No boxes on ${side.toUpperCase()} in this change`);
      if (modes.single) store.setSide(side);
      kit.setView(frameBox(union, frames[side], kit.size(), frames.a));
      return null;
    },
  });

  // Layers: toggles in the toolbar (and Shift + 1…4).
  function renderLayerToggles() {
    const holder = $("[data-layer-toggles]");
    holder.replaceChildren(...layers.map((l, i) => h("button", {
      type: "button", class: `adj-layer${l.dashed ? " is-dashed" : ""}`, "data-action": "layer-toggle", "data-layer": l.id,
      "aria-pressed": String(Boolean(ui.visible[l.id])),
      title: `${l.label}${l.who ? ` (${l.who})` : ""}: show / hide — Shift + ${{ one: 1, two: 2, gold: 3, current: 4 }[l.id] ?? i + 1}`,
      style: { "--layer": l.color },
    }, h("span", { class: "adj-swatch", "aria-hidden": "true" }), h("span", {}, l.short), l.who ? h("span", { class: "adj-layer-who" }, l.who) : null)));
  }
  function toggleLayer(id) {
    const layer = layers.find((l) => l.id === id);
    if (!layer) return chrome.status(id === "gold" ? "This pair has no known answer" : "Nothing to show for that key here");
    ui.visible = { ...ui.visible, [id]: !ui.visible[id] };
    root.querySelector(`[data-layer="${id}"]`)?.setAttribute("aria-pressed", String(ui.visible[id]));
    chrome.status(`${layer.label} ${ui.visible[id] ? "shown" : "hidden"}`);
    invalidate();
    return null;
  }

  // The merged answer.
  function setEditing(on) {
    ui.editing = on;
    root.classList.toggle("is-editing", on);
    mergeRoot.hidden = !on;
    $("[data-decide]").hidden = on || !canDecide(config.status);
    $("[data-merge-actions]").hidden = !on;
    if (on) closeReject(false);
    $("[data-status-hint]").textContent = on
      ? "Drag to draw a box · drag a box to move it, its edges to resize · Space + drag to pan · wheel to zoom"
      : "Drag to pan · wheel to zoom · E edits a merged answer";
    panel.render();
    invalidate();
  }
  const merge = createMerge({
    root, config, store, panel, chrome, stage, signal,
    isEditing: () => ui.editing,
    setEditing,
    beforeStart: () => resolver.disarm(),
  });

  // Reject: a reason first.
  const rejectEl = $("[data-reject]");
  function openReject() {
    if (!canDecide(config.status)) return chrome.status(`This pair is ${statusLabel(config.status).toLowerCase()}: there is nothing to decide yet`);
    if (ui.editing) return chrome.status("Submit or discard the merged answer first");
    resolver.disarm();
    rejectEl.hidden = false;
    $("[data-action=reject-open]").setAttribute("aria-expanded", "true");
    $("[data-reason]").focus();
    return null;
  }
  function closeReject(focusStage = true) {
    rejectEl.hidden = true;
    $("[data-action=reject-open]").setAttribute("aria-expanded", "false");
    resolver.clearFieldErrors("reason");
    if (focusStage) stage.focus({ preventScroll: true });
  }

  function updateStatus() {
    root.dataset.status = config.status;
    // Only an annotation the pair has can be accepted (a pair cross-checked with overlap 1 has one).
    $("[data-decide] [data-decision=accept_1]").hidden = !config.annotations[0];
    $("[data-decide] [data-decision=accept_2]").hidden = !config.annotations[1];
    const badge = $("[data-pair-status]");
    badge.className = `badge st-${config.status}`;
    badge.textContent = statusLabel(config.status);
    $("[data-decide]").hidden = ui.editing || !canDecide(config.status);
    sidebar.renderDecided();
  }

  const session = (() => {
    try {
      return window.sessionStorage;
    } catch {
      return null;
    }
  })();
  const resolver = createResolver({
    root, urls, send, chrome, storage: session, pairLabel: $("h1")?.textContent.trim() || `Pair ${config.pair}`,
    status: (text) => chrome.status(text),
    merge: {
      changes: () => store.toBody().changes,
      validate: () => mergeErrors(store.validate(), store.state.changes.length),
      setErrors: (errors) => store.setErrors(errors),
      focusFirstError: () => panel.focusFirstError(),
    },
    onResolved(result) {
      const { resolution, pair } = result;
      config.status = pair?.status ?? resolution?.status_after ?? config.status;
      if (resolution) config.resolutions = [...config.resolutions, resolution];
      config.current = standingAfter(resolution, config.consensus);
      const before = ui.visible;
      layers = availableLayers(config);
      ui.visible = { ...initialVisibility(layers, config.status), ...Object.fromEntries(Object.entries(before).filter(([k]) => k !== "current")) };
      if (ui.editing) merge.clear();
      closeReject(false);
      merge.fillSources();
      renderLayerToggles();
      sidebar.render();
      updateStatus();
      invalidate();
    },
  });

  const own = {
    "accept-key": (n) => resolver.arm(`accept_${n}`, String(n)),
    "accept-1": () => resolver.decide("accept_1"),
    "accept-2": () => resolver.decide("accept_2"),
    "merge-start": () => merge.start(),
    "merge-discard": (button) => merge.discard(button instanceof HTMLElement ? button : null),
    "merge-submit": () => resolver.decide("merge"),
    "reject-open": () => openReject(),
    "reject-cancel": () => closeReject(),
    "reject-confirm": () => resolver.decide("reject"),
    reopen: () => resolver.decide("reopen"),
    "layer-toggle": (arg) => toggleLayer(typeof arg === "string" ? arg : arg?.dataset?.layer),
    submit: () => {
      if (!rejectEl.hidden) return resolver.decide("reject");
      if (ui.editing) return resolver.decide("merge");
      if (resolver.armed) return resolver.decide(resolver.armed);
      return chrome.status("Choose a decision first: 1, 2, E or R");
    },
    escape: () => {
      resolver.disarm();
      actions.canvas.escape();
    },
  };
  actions.register(own);
  actions.guard((name) => {
    if (own[name]) return true;
    if (IGNORED.has(name)) return false;
    if (EDIT_ACTIONS.has(name) && !ui.editing) {
      chrome.status("Press E to edit a merged answer first");
      return false;
    }
    return true;
  });

  kit.start({ onStoreChange: (kind) => merge.changed(kind), failed: "Reload the page." });

  merge.fillSources();
  renderLayerToggles();
  sidebar.render();
  updateStatus();
  setEditing(false);
  kit.fit();

  merge.restore(); // an unsent merged answer from an earlier visit comes back
  const decided = takeDecision(session);
  if (decided) showDecisionToast(decided, { root, send, status: (text) => chrome.status(text) });
  kit.focusStage();

  const instance = {
    root, store,
    getView: kit.getView,
    frames: () => frames,
    get editing() {
      return ui.editing;
    },
    dispose: () => kit.dispose(),
  };
  root.dataset.ready = ""; // browser tests wait for [data-adjudication][data-ready]
  return instance;
}
