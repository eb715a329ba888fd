// One workspace instance: reads the fragment's config, mounts the canvas kit
// (static/canvas/js/mount.js), registers the workspace's own actions with it (submit, skip, the
// layout) and adds the workspace's own parts: the draft and its autosave, the save status, the
// clock, the layout, box style, submit and prefetch. dispose() undoes it all, which htmx swaps
// rely on.
import { alignmentNote } from "../../canvas/js/assist.js";
import { bindBoxStyle } from "./box-style.js";
import { sendJson } from "../../canvas/js/api.js";
import { browserStorage, createAutosave, pickDraft, pruneLocal, readLocal } from "./autosave.js";
import { createClock, formatDuration } from "../../canvas/js/clock.js";
import { createLayout } from "./layout.js";
import { mountCanvas } from "../../canvas/js/mount.js";
import { prefetchNext } from "./prefetch.js";
import { createSaveStatus } from "./save-status.js";
import { createSubmitter } from "./submit.js";

export function mountWorkspace(root) {
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

  // The newer of the server's and this browser's draft wins (a failed save left a newer local one).
  const storage = browserStorage();
  pruneLocal(storage);
  const local = readLocal(storage, config.assignment);
  const draft = pickDraft(config.draft, local);
  const clock = createClock({ initialMs: Number(draft?.time_spent_ms) || 0 });

  let layout = null;
  const kit = mountCanvas(root, {
    config, keepScale: true,
    store: { timeSpent: clock.elapsed },
    ui: { showPredictions: config.predictions.length > 0 },
    panel: { reveal: () => layout.peek() },
    scene: () => ({ predictions: config.predictions, showPredictions: kit.ui.showPredictions }),
    onFlag: () => root.querySelectorAll("input[data-action=predictions-toggle]").forEach((b) => {
      b.checked = kit.ui.showPredictions;
    }),
  });
  const { store, ui, chrome, panel, images, stage, signal, on, invalidate, actions } = kit;
  store.load(draft);

  layout = createLayout({
    root, stage, storage: browserStorage(), frame: () => kit.frames.a,
    onChange: () => kit.fit(),
  });

  ui.boxStyle = bindBoxStyle({
    root, storage, signal,
    onChange: (style) => {
      ui.boxStyle = style;
      invalidate();
    },
  });

  on(root, "change", (e) => {
    if (e.target.dataset.action === "predictions-toggle") kit.setFlag("showPredictions", e.target.checked);
  });
  on(root.querySelector("[data-panel]"), "submit", (e) => {
    e.preventDefault();
    actions.run("submit");
  });

  // Autosave, time, lease.
  const saveStatus = createSaveStatus({
    root, chrome, urls, retry: () => autosave.save(), next: () => submitter.loadNext(),
  });
  const autosave = createAutosave({
    url: urls.draft, assignment: config.assignment, storage, send,
    getDraft: () => store.toDraft(),
    onStatus: saveStatus,
  });
  const submitter = createSubmitter({
    root, store, urls, config, send, autosave, panel, csrf: data.csrf, ahead: { take: () => prefetcher?.take() },
    banner: (...args) => chrome.banner(...args),
    status: (text) => chrome.submitState(text),
  });
  actions.register({
    submit: () => submitter.submit(),
    "skip-ask": () => kit.openDialog("skip"),
    skip: () => submitter.skip(),
    "panel-toggle": () => layout.togglePanel(),
    "layout-toggle": () => layout.toggleArrangement(),
    fullscreen: () => layout.toggleFullscreen(),
    // Back to the images; a panel only peeking out (layout.js) tucks itself away again.
    escape: () => actions.canvas.escape() && layout.unpeek(),
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

  kit.start({
    onStoreChange: (kind) => kind === "data" && autosave.changed(),
    arrange: () => layout.apply(),
    failed: "Reload the page; your work is kept.",
  });
  on(document, "fullscreenchange", () => kit.fit());

  // The next pair's images load in the background once this pair's are in.
  const imagesIn = () => Promise.all(Object.values(images).map((img) => (img.complete
    ? null
    : new Promise((resolve) => {
      img.addEventListener("load", resolve, { once: true });
      img.addEventListener("error", resolve, { once: true });
    }))));
  const prefetcher = urls.ahead ? prefetchNext({ url: urls.ahead, send, ready: imagesIn, signal }) : null;

  kit.fit();
  kit.focusStage();
  const note = alignmentNote(config.assist?.alignment);
  if (note) chrome.status(note);
  panel.render();
  chrome.clock(formatDuration(clock.elapsed()));
  const fromBrowser = Boolean(draft) && draft === local && local !== config.draft;
  if (draft) saveStatus({ state: "restored", source: fromBrowser ? "browser" : "server" });
  if (fromBrowser) autosave.save(); // the server has an older copy (or none): bring it up to date

  root.dataset.ready = ""; // browser tests wait for [data-workspace][data-ready]
  return {
    root,
    store,
    getView: kit.getView,
    frames: () => kit.frames,
    dispose() {
      kit.dispose();
      clearInterval(ticker);
      autosave.dispose();
    },
  };
}
