// The wiring both comparison screens share (the workspace and the adjudication screen): the
// store behind the answer textarea, the viewers and their paint loop, modes, chrome, the change
// panel, pointer editing, keys, buttons, dialogs, the stage's size and the two images. Each screen
// keeps only its own mount and flow and hands its differences in as options; every listener hangs
// on one AbortSignal, so dispose() undoes it all (htmx swaps rely on that).
import { createActions } from "./actions.js";
import { createAssist } from "./assist.js";
import { fitView, frameBox, viewTransform, zoomToPixelScale } from "./box.js";
import { createChrome } from "./chrome.js";
import { attachPointer } from "./draw.js";
import { bindKeys, renderHelp } from "./keys.js";
import { computeDifference, createModes } from "./modes.js";
import { createPanel } from "./panel.js";
import { buildScene, panelSide } from "./scene.js";
import { fitStage, watchImages } from "./stage.js";
import { createStore, otherSide } from "./state.js";
import { createViewer } from "./viewer.js";

/**
 * Build a comparison screen inside `root`. Options:
 * - config ({sides, categories, pair, …}; what actions, chrome and the panel read), urls;
 * - field: the answer <textarea> (default root's [data-answer]); store: extra createStore options;
 * - ui: extra view flags; panelRoot (default root) and panel: extra createPanel options;
 * - scene(): extra buildScene context for each paint (predictions, colorOf, reference boxes…);
 * - editable(): false while the answer may not be edited — a drag then pans and no box is picked;
 * - keepScale: switching modes keeps each image pixel the same size on screen;
 * - onFlag(name, value): after ws.setFlag; run(name, arg): the screen's action dispatcher (called
 *   only after mounting, so it may use what the screen builds afterwards); resolveKey and
 *   shortcuts: the screen's own keys and help; acceptClick(button): false drops a button click.
 * Returns the kit; the screen adds its own parts, then calls start().
 */
export function mountCanvas(root, {
  config, urls, field = root.querySelector("[data-answer]"), store: storeOptions = {}, ui: uiExtra = {},
  panelRoot = root, panel: panelOptions = {}, scene = () => ({}), editable = () => true,
  keepScale = false, onFlag = () => {}, run, resolveKey, shortcuts, acceptClick = () => true,
}) {
  const controller = new AbortController();
  const { signal } = controller;
  const on = (target, type, fn, opts = {}) => target.addEventListener(type, fn, { signal, ...opts });
  const images = { a: root.querySelector("img[data-source=a]"), b: root.querySelector("img[data-source=b]") };
  const frames = { a: { ...config.sides.a }, b: { ...config.sides.b } };
  const stage = root.querySelector("[data-stage]");

  const assist = createAssist(config.assist);
  const store = createStore({
    frames, field, categories: config.categories.map((c) => c.slug),
    mapBox: (box, from, to) => assist.mirror(box, from, to, frames), ...storeOptions,
  });
  // The textarea is the source of truth: whoever rewrites it (a test, a script) reloads the store.
  on(field, "input", () => {
    try {
      store.load(JSON.parse(field.value));
    } catch {
      store.write(); // not JSON: put the current answer back
    }
  });

  let view = fitView();
  const ui = { showBoxes: true, pointer: null, diff: null, diffError: null, spaceHeld: false, ...uiExtra };
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

  // "The workspace" as actions.js and chrome.js see it.
  const ws = {
    root, stage, config, urls, store, ui, assist,
    getView: () => view,
    setView(next) {
      view = next;
      invalidate();
    },
    size: () => views[0].viewer.size,
    ref: () => frames.a,
    setFlag(name, value) {
      ui[name] = value;
      onFlag(name, value);
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
      // With keepScale, switching side by side ⇄ flicker or swipe keeps each image pixel the
      // same size on screen (and the same point in the middle), so what was being compared
      // does not jump. A view still at fit fits again: one image then fills the whole stage.
      const before = views[0].viewer.size;
      const scale = viewTransform(view, before, frames.a).sx;
      const atFit = view.zoom === 1 && view.cx === 0.5 && view.cy === 0.5;
      chrome.applyMode();
      views.forEach((v) => v.viewer.resize());
      const after = views[0].viewer.size;
      if (keepScale && !atFit && (after.width !== before.width || after.height !== before.height)) {
        view = zoomToPixelScale(view, scale, after, frames.a);
      }
      if (modes.mode === "diff") ensureDiff();
      invalidate();
    },
    onFlick: () => store.setSide(otherSide(store.state.sel.side)),
  });
  ws.modes = modes;
  const chrome = createChrome(ws);
  const panel = createPanel(panelRoot, {
    store, config,
    focusStage: () => stage.focus({ preventScroll: true }),
    draftOf: (change) => (assist.drafts ? assist.match(change)?.draft ?? "" : ""),
    onFrameBox(change, side) {
      const box = store.state.changes[change]?.[`boxes_${side}`][0];
      if (!box) return;
      store.select(change, side, 0);
      ws.setView(frameBox(box, frames[side], ws.size(), frames.a));
    },
    ...panelOptions,
  });
  ws.panel = panel;

  function paint() {
    requested = false;
    const ctx = {
      state: store.state, mode: modes.mode, swipe: modes.swipe, view, ref: frames.a, frames, images,
      diff: ui.diff, diffError: ui.diffError, predictions: [], showPredictions: false,
      showBoxes: ui.showBoxes, pointer: ui.pointer, ...scene(),
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

  // Pointer input on each panel; while the answer is not editable a drag pans and nothing is picked.
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
      spaceHeld: () => ui.spaceHeld || !editable(),
      showBoxes: () => ui.showBoxes && editable(),
      focus: () => stage.focus({ preventScroll: true }),
      notice: (text) => chrome.status(text),
      onClick: (side, point) => editable() && actions["box-region"]({ side, x: point.x, y: point.y }),
      onPointer(info) {
        ui.pointer = info;
        chrome.pointer(info);
        invalidate();
      },
    });
  }

  const actions = createActions(ws);
  bindKeys({ root, stage, ui, run, signal, resolve: resolveKey });

  // Buttons with data-action (toolbar, panel, header); toolbar clicks keep the focus where it was.
  on(root, "click", (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button || button.disabled || button.type === "submit" || !acceptClick(button)) return;
    run(button.dataset.action, button);
  });
  on(root.querySelector(".ws-toolbar"), "mousedown", (e) => e.target.closest("button") && e.preventDefault());
  root.querySelectorAll("dialog").forEach((dialog) => {
    on(dialog, "click", (e) => {
      if (e.target === dialog || e.target.closest("[data-close]")) dialog.close();
    });
    on(dialog, "close", () => stage.focus({ preventScroll: true }));
  });
  renderHelp(root.querySelector("[data-help-body]"), shortcuts);

  let observer = null;
  const kit = {
    root, stage, config, urls, store, ui, views, images, frames, ws, modes, chrome, panel, actions,
    signal, on, invalidate,
    getView: () => view,
    fit: () => {},
    /**
     * Repaint on every store change (after onStoreChange(kind)), size the stage (arrange() lays
     * the panels out first) and watch the images (`failed`: what the error banner advises).
     */
    start({ onStoreChange = () => {}, arrange, failed }) {
      store.subscribe((kind) => {
        onStoreChange(kind);
        invalidate();
        panel.render();
      });
      const stageFit = fitStage(root, stage, views, invalidate, arrange);
      observer = stageFit.observer;
      kit.fit = stageFit.fit;
      // The images' own decoded size is the frame boxes are measured in (EXIF orientation applied).
      watchImages({
        images, frames, store, chrome, on, pair: config.pair, failed,
        onLoaded: () => {
          if (modes.mode === "diff") ensureDiff();
          invalidate();
        },
      });
      chrome.applyMode();
    },
    focusStage() {
      // Keys work at once, unless the person is already in the screen (an htmx swap).
      if (!root.contains(document.activeElement)) stage.focus({ preventScroll: true });
    },
    dispose() {
      controller.abort();
      observer?.disconnect();
      modes.dispose();
    },
  };
  return kit;
}
