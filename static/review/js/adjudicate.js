// Entry point of the adjudication page: mounts every [data-adjudication] root (and again when
// htmx swaps one in); instances whose root left the document are disposed.
import { mountAdjudication } from "./adjudication.js";

const mounted = new Map();

function mountAll(scope = document) {
  for (const [root, instance] of mounted) {
    if (!root.isConnected) {
      instance.dispose();
      mounted.delete(root);
    }
  }
  const roots = [...(scope.matches?.("[data-adjudication]") ? [scope] : []), ...scope.querySelectorAll("[data-adjudication]")];
  for (const root of roots) {
    if (mounted.has(root)) continue;
    try {
      mounted.set(root, mountAdjudication(root));
    } catch (error) {
      console.error("diffmark: the adjudication screen failed to start", error);
      root.insertAdjacentHTML("afterbegin", '<p class="ws-banner" data-tone="error" role="alert">The adjudication screen failed to start. Reload the page.</p>');
    }
  }
  // For browser tests and debugging: the live instance. It answers to the workspace's name too
  // (getView, frames, store), so the workspace's browser-test helpers drive this viewer as well.
  const live = [...mounted.values()].at(-1) ?? null;
  window.diffmarkAdjudication = live;
  window.diffmarkWorkspace = live;
}

document.addEventListener("htmx:load", (e) => mountAll(e.detail?.elt ?? document));
mountAll();
