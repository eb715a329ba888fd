// What carries over from a decided pair to the next one: the decision, shown as a toast with
// Undo on the page that follows, and a guard against the second click of a slow double-click —
// the next pair's Accept button opens under the same cursor, and that click must not decide it.

const KEY = "diffmark:decided";
export const GUARD_MS = 1000; // clicks on decision buttons this soon after the page opened are ignored
const TOAST_MAX_AGE_MS = 5 * 60 * 1000; // an old note (a tab left for hours) is not shown

/** Remember a decision for the page that opens next. */
export function rememberDecision(storage, note) {
  try {
    storage?.setItem(KEY, JSON.stringify({ ...note, at: Date.now() }));
  } catch {
    // storage blocked: no toast, the decision itself is saved
  }
}

/** The decision made on the page before, once (it is removed as it is read), or null. */
export function takeDecision(storage, now = Date.now()) {
  let note = null;
  try {
    note = JSON.parse(storage?.getItem(KEY) ?? "null");
    storage?.removeItem(KEY);
  } catch {
    return null;
  }
  if (!note || typeof note.url !== "string" || !(now - note.at < TOAST_MAX_AGE_MS)) return null;
  return note;
}

/** True while a click on a decision button is too soon after the page opened to be meant. */
export function tooSoon(openedAt, now) {
  return now - openedAt < GUARD_MS;
}

/**
 * Show the toast for `note` ({pair, text, url (the decided pair's resolution URL), page (its
 * adjudication URL)}); Undo reopens that pair and goes back to it. ctx: {root, send, status}.
 */
export function showDecisionToast(note, { root, send, status }) {
  const toast = document.createElement("div");
  toast.className = "adj-toast";
  toast.setAttribute("role", "status");
  toast.dataset.toast = "";
  const text = document.createElement("p");
  text.textContent = `${note.pair}: ${note.text}`;
  const undo = Object.assign(document.createElement("button"), { type: "button", className: "ws-btn", textContent: "Undo" });
  undo.dataset.toastUndo = "";
  const close = Object.assign(document.createElement("button"), { type: "button", className: "ws-icon", textContent: "×" });
  close.setAttribute("aria-label", "Dismiss");
  toast.append(text, undo, close);
  root.append(toast);
  const timer = setTimeout(() => toast.remove(), 20000);
  close.addEventListener("click", () => toast.remove());
  undo.addEventListener("click", async () => {
    clearTimeout(timer);
    undo.disabled = true;
    text.textContent = `Undoing the decision on ${note.pair}…`;
    const result = await send("POST", note.url, { decision: "reopen", comment: "Undone right after the decision." });
    if (!result.ok) {
      undo.disabled = false;
      text.textContent = `Not undone — ${result.message ?? "the server refused"}. ${note.pair} still stands as decided.`;
      return;
    }
    status?.(`${note.pair} reopened`);
    window.location.assign(note.page);
  });
  return toast;
}
