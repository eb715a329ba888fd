// Entry point: mounts every [data-workspace] root on the page, and again whenever htmx swaps in
// new content (the next pair arrives as a fresh #workspace fragment). Instances whose root left
// the document are disposed, so timers and window listeners never pile up across pairs.
import { mountWorkspace } from "./workspace.js";

const mounted = new Map();

function sweep() {
  for (const [root, instance] of mounted) {
    if (!root.isConnected) {
      instance.dispose();
      mounted.delete(root);
    }
  }
}

function mountAll(scope = document) {
  sweep();
  const roots = [...(scope.matches?.("[data-workspace]") ? [scope] : []), ...scope.querySelectorAll("[data-workspace]")];
  for (const root of roots) {
    if (mounted.has(root)) continue;
    try {
      mounted.set(root, mountWorkspace(root));
    } catch (error) {
      console.error("diffmark: the workspace failed to start", error);
      root.insertAdjacentHTML("afterbegin", '<p class="ws-banner" data-tone="error" role="alert">The workspace failed to start. Reload the page; your saved draft is kept.</p>');
    }
  }
  // For browser tests and debugging: the live instance.
  window.diffmarkWorkspace = [...mounted.values()].at(-1) ?? null;
}

// Back/forward to an earlier pair reloads it from the server instead of restoring a stale copy
// of the page (that pair is submitted; the server says where to go). Paired with hx-history="false"
// on the fragment, which also keeps answers out of htmx's localStorage history cache.
if (window.htmx) window.htmx.config.refreshOnHistoryMiss = true;

document.addEventListener("htmx:load", (e) => mountAll(e.detail?.elt ?? document));
document.addEventListener("htmx:afterSwap", sweep);
mountAll();
