// The merged answer's lifecycle: start from a source (the consensus, an annotation…), start over
// from another, discard, and a copy in this browser until the decision is saved — a failed
// request, a reload or an expired log-in never costs the lead the drawing.
import { canDecide, statusLabel } from "./decide.js";
import { draftFrom, mergeSources } from "./layers.js";

function readBackup(key) {
  try {
    const value = JSON.parse(window.localStorage.getItem(key) ?? "null");
    return Array.isArray(value?.draft?.changes) ? value : null;
  } catch {
    return null;
  }
}

function writeBackup(key, value) {
  try {
    if (value) window.localStorage.setItem(key, JSON.stringify(value));
    else window.localStorage.removeItem(key);
  } catch {
    // Storage full or blocked: the merged answer is still on the page.
  }
}

/**
 * ctx: {root, config, store, panel, chrome, stage, signal, isEditing(), setEditing(on),
 * beforeStart()}. The store is the workspace's (state.js); it is empty while nothing is edited.
 */
export function createMerge(ctx) {
  const { root, config, store, panel, chrome, signal } = ctx;
  const select = root.querySelector("[data-merge-source]");
  const key = `diffmark:merge:${config.pair}`;

  function fillSources() {
    select.replaceChildren(...mergeSources(config).map((s) => new Option(s.label[0].toUpperCase() + s.label.slice(1), s.id)));
  }

  function start(sourceId = null) {
    if (!canDecide(config.status)) return chrome.status(`This pair is ${statusLabel(config.status).toLowerCase()}: there is nothing to decide yet`);
    if (ctx.isEditing() && !sourceId) {
      panel.scrollActive();
      return chrome.status("You are editing the merged answer");
    }
    const sources = mergeSources(config);
    const source = sources.find((s) => s.id === sourceId) ?? sources[0];
    if (!source) return chrome.status("There is nothing to start a merged answer from");
    ctx.beforeStart();
    store.load(draftFrom(source.changes));
    store.select(store.state.changes.length ? 0 : -1, "a", -1);
    select.value = source.id;
    ctx.setEditing(true);
    root.querySelector(".adj-panel").scrollTop = 0;
    chrome.status(`Editing a merged answer, starting from ${source.label}`);
    return null;
  }

  /** Leave editing and forget the merged answer (after a decision, or on request). */
  function clear() {
    ctx.setEditing(false); // first: emptying the store must not leave an empty backup behind
    writeBackup(key, null);
    store.load(draftFrom([]));
    store.setErrors({});
  }

  /** Discard, asking first (a second click) when something was edited. */
  function discard(button = null) {
    if (store.state.canUndo && button && !button.classList.contains("is-armed")) {
      button.classList.add("is-armed");
      button.textContent = "Discard the edits?";
      setTimeout(() => {
        button.classList.remove("is-armed");
        button.textContent = "Discard";
      }, 3000);
      return;
    }
    if (button) {
      button.classList.remove("is-armed");
      button.textContent = "Discard";
    }
    clear();
    chrome.banner(null);
    ctx.stage.focus({ preventScroll: true });
  }

  /** Call on every store change: keeps this browser's copy of the merge up to date. */
  function changed(kind) {
    if (kind === "data" && ctx.isEditing()) writeBackup(key, { saved_at: new Date().toISOString(), draft: store.toDraft() });
  }

  /** At load: an unsent merged answer from an earlier visit comes back. */
  function restore() {
    const backup = canDecide(config.status) ? readBackup(key) : null;
    if (!backup) {
      writeBackup(key, null);
      return false;
    }
    store.load(backup.draft);
    ctx.setEditing(true);
    chrome.banner("Your unsent merged answer from this browser is restored.", "warn", { label: "Discard it", run: () => discard() });
    return true;
  }

  select.addEventListener("focus", () => {
    select.dataset.current = select.value;
  }, { signal });
  select.addEventListener("change", () => {
    if (store.state.canUndo && !window.confirm("Start again? Your edits of the merged answer are replaced.")) {
      select.value = select.dataset.current ?? select.value;
      return;
    }
    start(select.value);
  }, { signal });

  return { start, clear, discard, changed, restore, fillSources };
}
