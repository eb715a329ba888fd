// One workspace instance: reads the fragment's config, builds the store and the viewers, wires
// pointer, keyboard, panel, autosave and submit, and paints on demand. dispose() undoes it all
// (every listener hangs on one AbortSignal), which htmx swaps rely on.
import { createActions } from "../../canvas/js/actions.js";
import { bindBoxStyle } from "./box-style.js";
import { fitStage, watchImages } from "../../canvas/js/stage.js";
import { sendJson } from "../../canvas/js/api.js";
import { browserStorage, createAutosave, pickDraft, pruneLocal, readLocal } from "./autosave.js";
import { fitView, frameBox, viewTransform, zoomToPixelScale } from "../../canvas/js/box.js";
import { createClock, formatDuration } from "../../canvas/js/clock.js";
import { attachPointer } from "../../canvas/js/draw.js";
import { createChrome } from "../../canvas/js/chrome.js";
import { bindKeys, renderHelp } from "../../canvas/js/keys.js";
import { computeDifference, createModes } from "../../canvas/js/modes.js";
import { createLayout } from "./layout.js";
import { createPanel } from "../../canvas/js/panel.js";
import { prefetchNext } from "./prefetch.js";
import { buildScene, panelSide } from "../../canvas/js/scene.js";
import { createStore, otherSide } from "../../canvas/js/state.js";
import { createSubmitter } from "./submit.js";
import { createViewer } from "../../canvas/js/viewer.js";

export function mountWorkspace(root) {
  const controller = new AbortController();
  const { signal } = controller;
  const on = (target, type, fn, opts = {}) => target.addEventListener(type, fn, { signal, ...opts });
  const config = {
    categories: [], vocabulary: [], tiers: [], defects: [], predictions: [], draft: null,
    ...JSON.parse(root.querySelector("#ws-config").textContent),
  };
  config.predictions = (config.predictions ?? []).map((p) => ({ ...p, changes: p.changes ?? [] }));
  const data = root.dataset;
  const urls = {
    image_a: data.urlImageA, image_b: data.urlImageB, draft: data.urlDraft,
    submit: data.urlSubmit, skip: data.urlSkip, next: data.urlNext, home: data.urlHome, ahead: data.urlAhead,
  };
  const send = (method, url, body, opts = {}) => sendJson(method, url, body, { csrf: data.csrf, ...opts });
  const images = { a: root.querySelector("img[data-source=a]"), b: root.querySelector("img[data-source=b]") };
  const frames = { a: { ...config.sides.a }, b: { ...config.sides.b } };
  const stage = root.querySelector("[data-stage]");

  // The newer of the server's and this browser's draft wins (a failed save left a newer local one).
  const storage = browserStorage();
  pruneLocal(storage);
  const local = readLocal(storage, config.assignment);
  const draft = pickDraft(config.draft, local);
  const clock = createClock({ initialMs: Number(draft?.time_spent_ms) || 0 });
  const store = createStore({
    frames, field: root.querySelector("[data-answer]"), timeSpent: clock.elapsed,
    categories: config.categories.map((c) => c.slug),
  });
  store.load(draft);
  // The textarea is the source of truth: whoever rewrites it (a test, a script) reloads the store.
  const field = root.querySelector("[data-answer]");
  on(field, "input", () => {
    try {
      store.load(JSON.parse(field.value));
    } catch {
      store.write(); // not JSON: put the current answer back
    }
  });

  let view = fitView();
  const ui = { showBoxes: true, showPredictions: config.predictions.length > 0, pointer: null, diff: null, diffError: null, spaceHeld: false };
  const views = [...root.querySelectorAll("[data-view]")].map((el, index) => ({
    el, index, viewer: createViewer(el.querySelector("canvas")),
  }));
  const visibleViews = () => (modes.single ? views.slice(0, 1) : views);

  let requested = false;
  function invalidate() {
    if (requested || signal.aborted) return;
    requested = true;
    requestAnimationFrame(paint);
  }

  const ws = {
    root, stage, config, urls, store, ui,
    getView: () => view,
    setView(next) {
      view = next;
      invalidate();
    },
    size: () => views[0].viewer.size,
    ref: () => frames.a,
    setFlag(name, value) {
      ui[name] = value;
      root.querySelectorAll(`input[data-action=predictions-toggle]`).forEach((b) => { b.checked = ui.showPredictions; });
      invalidate();
    },
    status: (text) => chrome.status(text),
    openDialog(name) {
      const dialog = root.querySelector(`dialog[data-${name}]`);
      if (dialog && !dialog.open) dialog.showModal();
    },
  };

  const modes = createModes({
    onChange: () => {
      // The same scale in every mode: switching side by side ⇄ flicker or swipe keeps each
      // image pixel the same size on screen (and the same point in the middle), so what was
      // being compared does not jump. 0 fits the new panel.
      const before = views[0].viewer.size;
      const scale = viewTransform(view, before, frames.a).sx;
      chrome.applyMode();
      views.forEach((v) => v.viewer.resize());
      const after = views[0].viewer.size;
      if (after.width !== before.width || after.height !== before.height) {
        view = zoomToPixelScale(view, scale, after, frames.a);
      }
      if (modes.mode === "diff") ensureDiff();
      invalidate();
    },
    onFlick: () => store.setSide(otherSide(store.state.sel.side)),
  });
  ws.modes = modes;
  const chrome = createChrome(ws);
  const layout = createLayout({
    root, stage, storage: browserStorage(), frame: () => frames.a,
    onChange: () => fit(),
  });
  ws.layout = layout;
  const panel = createPanel(root, {
    store, config, reveal: () => layout.peek(),
    onFrameBox(change, side) {
      const box = store.state.changes[change]?.[`boxes_${side}`][0];
      if (!box) return;
      store.select(change, side, 0);
      ws.setView(frameBox(box, frames[side], ws.size(), frames.a));
    },
  });
  ws.panel = panel;

  function paint() {
    requested = false;
    const state = store.state;
    const ctx = {
      state, mode: modes.mode, swipe: modes.swipe, view, ref: frames.a, frames, images,
      diff: ui.diff, diffError: ui.diffError, predictions: config.predictions,
      showPredictions: ui.showPredictions, showBoxes: ui.showBoxes, pointer: ui.pointer,
    };
    for (const v of visibleViews()) v.viewer.paint({ ...buildScene(ctx, v.index, v.viewer.size), style: ui.boxStyle });
    chrome.update();
  }

  function ensureDiff() {
    if (ui.diff || ui.diffError || !images.a.complete || !images.b.complete) return;
    setTimeout(() => {
      try {
        ui.diff = computeDifference(images.a, images.b, frames.a);
      } catch {
        ui.diffError = "The difference cannot be computed for these images.";
      }
      invalidate();
    }, 30); // let "Computing…" paint first
  }

  // Pointer input on each panel.
  for (const v of views) {
    attachPointer(v.el, {
      store, modes, signal, panelIndex: v.index,
      sideAt: () => panelSide(modes.mode, v.index, store.state.sel.side),
      transform: (side) => viewTransform(view, v.viewer.size, frames.a, frames[side]),
      frames: () => frames,
      ref: () => frames.a,
      size: () => v.viewer.size,
      getView: () => view,
      setView: ws.setView,
      spaceHeld: () => ui.spaceHeld,
      showBoxes: () => ui.showBoxes,
      focus: () => stage.focus({ preventScroll: true }),
      notice: (text) => chrome.status(text),
      onPointer(info) {
        ui.pointer = info;
        chrome.pointer(info);
        invalidate();
      },
    });
  }

  ui.boxStyle = bindBoxStyle({
    root, storage, signal,
    onChange: (style) => {
      ui.boxStyle = style;
      invalidate();
    },
  });

  const actions = createActions(ws);
  const run = (name, arg) => actions[name]?.(arg);

  bindKeys({ root, stage, ui, run, signal });

  // Buttons with data-action (toolbar, panel, header); toolbar clicks keep the focus where it was.
  on(root, "click", (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button || button.type === "submit") return;
    run(button.dataset.action, button);
  });
  on(root, "change", (e) => {
    if (e.target.dataset.action === "predictions-toggle") ws.setFlag("showPredictions", e.target.checked);
  });
  on(root.querySelector(".ws-toolbar"), "mousedown", (e) => e.target.closest("button") && e.preventDefault());
  on(root.querySelector("[data-panel]"), "submit", (e) => {
    e.preventDefault();
    run("submit");
  });
  root.querySelectorAll("dialog").forEach((dialog) => {
    on(dialog, "click", (e) => {
      if (e.target === dialog || e.target.closest("[data-close]")) dialog.close();
    });
    on(dialog, "close", () => stage.focus({ preventScroll: true }));
  });
  renderHelp(root.querySelector("[data-help-body]"));

  // Autosave, time, lease.
  const autosave = createAutosave({
    url: urls.draft, assignment: config.assignment, storage, send,
    getDraft: () => store.toDraft(),
    onStatus: (s) => chrome.saveStatus(s),
  });
  ws.autosave = autosave;
  store.subscribe((kind) => {
    if (kind === "data") autosave.changed();
    invalidate();
    panel.render();
  });
  ws.submitter = createSubmitter({
    root, store, urls, config, send, autosave, panel, csrf: data.csrf, ahead: { take: () => prefetcher?.take() },
    banner: (...args) => chrome.banner(...args),
    status: (text) => chrome.submitState(text),
  });
  on(document, "visibilitychange", () => {
    clock.update();
    if (document.visibilityState === "visible") autosave.retry();
  });
  on(window, "online", () => autosave.retry());
  on(window, "focus", () => autosave.retry());
  on(window, "pagehide", () => {
    if (autosave.dirty) send("PUT", urls.draft, { ...store.toDraft(), saved_at: new Date().toISOString() }, { keepalive: true });
  });
  const ticker = setInterval(() => chrome.clock(formatDuration(clock.elapsed())), 1000);

  const { fit, observer } = fitStage(root, stage, views, invalidate, () => layout.apply());
  on(document, "fullscreenchange", () => fit());

  // The images' own decoded size is the frame boxes are measured in (EXIF orientation applied).
  watchImages({
    images, frames, store, chrome, on, pair: config.pair, failed: "Reload the page; your work is kept.",
    onLoaded: () => {
      if (modes.mode === "diff") ensureDiff();
      invalidate();
    },
  });

  // The next pair's images load in the background once this pair's are in.
  const imagesIn = () => Promise.all(Object.values(images).map((img) => (img.complete
    ? null
    : new Promise((resolve) => {
      img.addEventListener("load", resolve, { once: true });
      img.addEventListener("error", resolve, { once: true });
    }))));
  const prefetcher = urls.ahead ? prefetchNext({ url: urls.ahead, send, ready: imagesIn, signal }) : null;

  chrome.applyMode();
  fit();
  if (!root.contains(document.activeElement)) stage.focus({ preventScroll: true }); // keys work at once
  panel.render();
  chrome.clock(formatDuration(clock.elapsed()));
  const fromBrowser = Boolean(draft) && draft === local && local !== config.draft;
  if (draft) chrome.saveStatus({ state: "restored", source: fromBrowser ? "browser" : "server" });
  if (fromBrowser) autosave.save(); // the server has an older copy (or none): bring it up to date

  root.dataset.ready = ""; // browser tests wait for [data-workspace][data-ready]
  return {
    root,
    store,
    getView: () => view,
    frames: () => frames,
    dispose() {
      controller.abort();
      observer.disconnect();
      clearInterval(ticker);
      modes.dispose();
      autosave.dispose();
    },
  };
}
