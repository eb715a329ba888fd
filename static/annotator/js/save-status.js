// The draft's save status beside the clock, and the banner when a save fails or the lease ran
// out: the workspace's own part of the chrome (its autosave, autosave.js).

const SAVE_BANNERS = {
  auth: "Not saved — log in again in another tab; your work is kept in this browser.",
  network: "Not saved — the connection is down. Your work is kept in this browser and saved as soon as the connection is back.",
  server: "Not saved — the server had a problem. Your work is kept in this browser; retrying.",
};

const clockTime = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
};

/**
 * root: the workspace; chrome: the kit's (its banner); urls.home: where a log-in returns to;
 * retry(): save again now; next(): take the next pair. Returns saveStatus(status), the
 * autosave's onStatus.
 */
export function createSaveStatus({ root, chrome, urls, retry, next }) {
  const saveEl = root.querySelector("[data-save-status]");
  return function saveStatus(s) {
    saveEl.dataset.state = s.state;
    if (s.state === "dirty") saveEl.textContent = "Unsaved changes";
    else if (s.state === "saving") saveEl.textContent = "Saving…";
    else if (s.state === "restored") saveEl.textContent = `Draft restored${s.source === "browser" ? " from this browser" : ""}`;
    else if (s.state === "saved") {
      saveEl.textContent = `Draft saved ${clockTime(s.savedAt)}`;
      saveEl.title = s.expiresAt ? `Your lease on this pair runs until ${clockTime(s.expiresAt)}; saving renews it.` : "";
      if (chrome.bannerSource() === "save") chrome.banner(null);
      if (!s.expiresAt) {
        chrome.banner("Your lease on this pair expired, so it may go to someone else. Your draft is kept — submit soon.", "warn", null, "lease");
      } else if (chrome.bannerSource() === "lease") {
        chrome.banner(null);
      }
    } else if (s.state === "failed") {
      saveEl.textContent = "Not saved";
      const { kind, message } = s.result;
      const text = SAVE_BANNERS[kind] ?? `Not saved — ${message} Your work is kept in this browser.`;
      const action = kind === "auth"
        ? { label: "Open the log-in page", run: () => window.open(`/login/?next=${encodeURIComponent(urls.home)}`, "_blank") }
        : { label: "Retry now", run: () => retry() };
      chrome.banner(text, "error", action, "save");
    } else if (s.state === "stopped") {
      saveEl.textContent = "Not saved";
      chrome.banner(`${s.result.message} — this pair is closed for you.`, "warn", { label: "Take the next pair", run: () => next() }, "save");
    }
  };
}
