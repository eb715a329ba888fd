// The canvas kit's mount, which both comparison screens share (the workspace and the adjudication
// screen): the store behind the answer textarea, the viewers and their paint loop, modes, chrome,
// the change panel, pointer editing, keys, buttons, dialogs, the stage's size and the two images.
// mountCanvas runs the named steps below in order; each screen keeps only its own mount and flow,
// hands its differences in as options and registers its own actions (registry.js). Every
// listener hangs on one AbortSignal, so dispose() undoes it all (htmx swaps rely on that).
import { createActions } from "./actions.js";
import { createAssist } from "./assist.js";
import { fitView, frameBox, viewTransform, zoomToPixelScale } from "./box.js";
import { createChrome } from "./chrome.js";
import { attachPointer } from "./draw.js";
import { bindKeys, renderHelp } from "./keys.js";
import { computeDifference, createModes } from "./modes.js";
import { createPanel } from "./panel.js";
import { createRegistry } from "./registry.js";
import { buildScene, panelSide } from "./scene.js";
import { fitStage, watchImages } from "./stage.js";
import { createStore, otherSide } from "./state.js";
import { createViewer } from "./viewer.js";

/**
 * Build a comparison screen inside `root`. Options:
 * - config ({sides, categories, pair, …}; what actions, chrome and the panel read);
 * - field: the answer <textarea> (default root's [data-answer]); store: extra createStore options;
 * - ui: extra view flags; panelRoot (default root) and panel: extra createPanel options;
 * - scene(): extra buildScene context for each paint (predictions, colorOf, reference boxes…);
 * - editable(): false while the answer may not be edited — a drag then pans and no box is picked;
 * - keepScale: switching modes keeps each image pixel the same size on screen;
 * - onFlag(name, value): after kit.setFlag; resolveKey and shortcuts: the screen's own keys and
 *   help; acceptClick(button): false drops a button click.
 * Returns the kit; the screen registers its actions (kit.actions.register), adds its own parts,
 * then calls start().
 */
export function mountCanvas(root, options) {
  const canvas = readPage(root, options.config);
  canvas.store = bindStore(canvas, options);
  const paint = createPaintLoop(canvas, options.scene ?? (() => ({})));
  canvas.invalidate = paint.invalidate;
  canvas.modes = createViewModes(canvas, paint, options.keepScale ?? false);
  canvas.chrome = createChrome(canvas.screen);
  canvas.panel = createChangePanel(canvas, options);
  canvas.actions = createRegistry(createActions({ ...canvas.screen, panel: canvas.panel }));
  attachPointers(canvas, options.editable ?? (() => true));
  bindControls(canvas, options);
  return kitOf(canvas, paint);
}

/**
 * The page's parts: the images, their frames (the size boxes are measured in), the stage, one
 * viewer per [data-view]; the shared view and flags; and `screen`, what actions.js and chrome.js
 * read (all of it set before either is made, none of it written by them).
 */
function readPage(root, config) {
  const controller = new AbortController();
  const { signal } = controller;
  const on = (target, type, fn, opts = {}) => target.addEventListener(type, fn, { signal, ...opts });
  const frames = { a: { ...config.sides.a }, b: { ...config.sides.b } };
  const views = [...root.querySelectorAll("[data-view]")].map((el, index) => ({
    el, index, viewer: createViewer(el.querySelector("canvas")),
  }));
  const canvas = {
    root, config, controller, signal, on, frames, views,
    images: { a: root.querySelector("img[data-source=a]"), b: root.querySelector("img[data-source=b]") },
    stage: root.querySelector("[data-stage]"),
    assist: createAssist(config.assist),
    view: fitView(),
    ui: null,
    store: null, invalidate: null, modes: null, chrome: null, panel: null, actions: null,
  };
  const setView = (next) => {
    canvas.view = next;
    canvas.invalidate();
  };
  canvas.screen = {
    root, config, stage: canvas.stage, assist: canvas.assist,
    get store() {
      return canvas.store;
    },
    get modes() {
      return canvas.modes;
    },
    get ui() {
      return canvas.ui;
    },
    getView: () => canvas.view,
    setView,
    size: () => views[0].viewer.size,
    ref: () => frames.a,
    setFlag: (name, value) => canvas.setFlag(name, value),
    status: (text) => canvas.chrome.status(text),
    openDialog(name) {
      const dialog = root.querySelector(`dialog[data-${name}]`);
      if (dialog && !dialog.open) dialog.showModal();
    },
  };
  return canvas;
}

/** The store behind the answer textarea, which stays the source of truth; and the view flags. */
function bindStore(canvas, { field = canvas.root.querySelector("[data-answer]"), store: extra = {}, ui = {}, onFlag = () => {} }) {
  const { frames, assist } = canvas;
  const store = createStore({
    frames, field, categories: canvas.config.categories.map((c) => c.slug),
    mapBox: (box, from, to) => assist.mirror(box, from, to, frames), ...extra,
  });
  // Whoever rewrites the textarea (a test, a script) reloads the store.
  canvas.on(field, "input", () => {
    try {
      store.load(JSON.parse(field.value));
    } catch {
      store.write(); // not JSON: put the current answer back
    }
  });
  canvas.ui = { showBoxes: true, pointer: null, diff: null, diffError: null, spaceHeld: false, ...ui };
  canvas.setFlag = (name, value) => {
    canvas.ui[name] = value;
    onFlag(name, value);
    canvas.invalidate();
  };
  return store;
}

/** One paint per animation frame, whatever asked for it; the difference image on demand. */
function createPaintLoop(canvas, scene) {
  const { images, frames, views, signal } = canvas;
  let requested = false;
  function invalidate() {
    if (requested || signal.aborted) return;
    requested = true;
    requestAnimationFrame(paint);
  }
  function paint() {
    requested = false;
    const { store, modes, ui } = canvas;
    const ctx = {
      state: store.state, mode: modes.mode, swipe: modes.swipe, view: canvas.view, ref: frames.a, frames, images,
      diff: ui.diff, diffError: ui.diffError, predictions: [], showPredictions: false,
      showBoxes: ui.showBoxes, pointer: ui.pointer, ...scene(),
    };
    const shown = modes.single ? views.slice(0, 1) : views;
    for (const v of shown) v.viewer.paint({ ...buildScene(ctx, v.index, v.viewer.size), style: ui.boxStyle });
    canvas.chrome.update();
  }
  function ensureDiff() {
    const { ui } = canvas;
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
  return { invalidate, ensureDiff };
}

/** Side by side, flicker, swipe, difference. */
function createViewModes(canvas, paint, keepScale) {
  const { views, frames } = canvas;
  const modes = createModes({
    onChange: () => {
      // With keepScale, switching side by side ⇄ flicker or swipe keeps each image pixel the
      // same size on screen (and the same point in the middle), so what was being compared
      // does not jump. A view still at fit fits again: one image then fills the whole stage.
      const { view } = canvas;
      const before = views[0].viewer.size;
      const scale = viewTransform(view, before, frames.a).sx;
      const atFit = view.zoom === 1 && view.cx === 0.5 && view.cy === 0.5;
      canvas.chrome.applyMode();
      views.forEach((v) => v.viewer.resize());
      const after = views[0].viewer.size;
      if (keepScale && !atFit && (after.width !== before.width || after.height !== before.height)) {
        canvas.view = zoomToPixelScale(view, scale, after, frames.a);
      }
      if (modes.mode === "diff") paint.ensureDiff();
      paint.invalidate();
    },
    onFlick: () => canvas.store.setSide(otherSide(canvas.store.state.sel.side)),
  });
  return modes;
}

/** The change cards (panel.js); a card's frame button zooms the view onto its box. */
function createChangePanel(canvas, { panelRoot = canvas.root, panel: extra = {} }) {
  const { store, config, stage, assist, frames, screen } = canvas;
  return createPanel(panelRoot, {
    store, config,
    focusStage: () => stage.focus({ preventScroll: true }),
    draftOf: (change) => (assist.drafts ? assist.match(change)?.draft ?? "" : ""),
    onFrameBox(change, side) {
      const box = store.state.changes[change]?.[`boxes_${side}`][0];
      if (!box) return;
      store.select(change, side, 0);
      screen.setView(frameBox(box, frames[side], screen.size(), frames.a));
    },
    ...extra,
  });
}

/** Pointer editing on each panel; while the answer is not editable a drag pans and nothing is picked. */
function attachPointers(canvas, editable) {
  const { store, modes, signal, frames, stage, ui, chrome, screen } = canvas;
  const view = { get: () => canvas.view, set: screen.setView, frames: () => frames, ref: () => frames.a };
  for (const v of canvas.views) {
    attachPointer(v.el, {
      store, modes, signal, view,
      panel: {
        index: v.index,
        sideAt: () => panelSide(modes.mode, v.index, store.state.sel.side),
        transform: (side) => viewTransform(canvas.view, v.viewer.size, frames.a, frames[side]),
        size: () => v.viewer.size,
      },
      input: {
        panning: () => ui.spaceHeld || !editable(),
        picking: () => ui.showBoxes && editable(),
      },
      handlers: {
        focus: () => stage.focus({ preventScroll: true }),
        notice: (text) => chrome.status(text),
        click: (side, point) => editable() && canvas.actions.run("box-region", { side, x: point.x, y: point.y }),
        pointer(info) {
          ui.pointer = info;
          chrome.pointer(info);
          canvas.invalidate();
        },
      },
    });
  }
}

/** Keys, buttons with data-action (toolbar, panel, header), dialogs and the help's shortcuts. */
function bindControls(canvas, { resolveKey, shortcuts, acceptClick = () => true }) {
  const { root, stage, ui, signal, on, actions } = canvas;
  bindKeys({ root, stage, ui, run: actions.run, signal, resolve: resolveKey });
  on(root, "click", (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button || button.disabled || button.type === "submit" || !acceptClick(button)) return;
    actions.run(button.dataset.action, button);
  });
  // Toolbar clicks keep the focus where it was.
  on(root.querySelector(".ws-toolbar"), "mousedown", (e) => e.target.closest("button") && e.preventDefault());
  root.querySelectorAll("dialog").forEach((dialog) => {
    on(dialog, "click", (e) => {
      if (e.target === dialog || e.target.closest("[data-close]")) dialog.close();
    });
    on(dialog, "close", () => stage.focus({ preventScroll: true }));
  });
  renderHelp(root.querySelector("[data-help-body]"), shortcuts);
}

/** What a screen gets: the parts, the registry of actions, start() and dispose(). */
function kitOf(canvas, paint) {
  const { root, stage, store, modes, chrome, panel, images, frames, screen } = canvas;
  let observer = null;
  const kit = {
    root, stage, store, modes, chrome, panel, images, frames,
    config: canvas.config, ui: canvas.ui, views: canvas.views, actions: canvas.actions,
    signal: canvas.signal, on: canvas.on, invalidate: paint.invalidate,
    getView: screen.getView, setView: screen.setView, size: screen.size,
    setFlag: screen.setFlag, openDialog: screen.openDialog,
    fit: () => {},
    /**
     * Repaint on every store change (after onStoreChange(kind)), size the stage (arrange() lays
     * the panels out first) and watch the images (`failed`: what the error banner advises).
     */
    start({ onStoreChange = () => {}, arrange, failed }) {
      store.subscribe((kind) => {
        onStoreChange(kind);
        paint.invalidate();
        panel.render();
      });
      const stageFit = fitStage(root, stage, canvas.views, paint.invalidate, arrange);
      observer = stageFit.observer;
      kit.fit = stageFit.fit;
      // The images' own decoded size is the frame boxes are measured in (EXIF orientation applied).
      watchImages({
        images, frames, store, chrome, on: canvas.on, pair: canvas.config.pair, failed,
        onLoaded: () => {
          if (modes.mode === "diff") paint.ensureDiff();
          paint.invalidate();
        },
      });
      chrome.applyMode();
    },
    focusStage() {
      // Keys work at once, unless the person is already in the screen (an htmx swap).
      if (!root.contains(document.activeElement)) stage.focus({ preventScroll: true });
    },
    dispose() {
      canvas.controller.abort();
      observer?.disconnect();
      modes.dispose();
    },
  };
  return kit;
}
