// Sending a decision: checks first, one request at a time, errors in place (the merged drawing,
// the comment and the reason are never cleared by a failure), then the next disputed pair — or,
// with none left, the outcome shown on this page.
import { checkDecision, isSamePage, outcomeText, resolutionBody, sortServerErrors } from "./decide.js";
import { rememberDecision } from "./handoff.js";

const KIND_MESSAGES = {
  auth: "Not saved — your log-in expired. Log in again in another tab, then try again; your merged answer is kept in this browser.",
  network: "Not saved — the connection failed. Nothing is lost; try again when you are back online.",
  server: "Not saved — the server had a problem. Nothing is lost; try again in a moment.",
};

/**
 * ctx: {root, urls, send(method, url, body), chrome, merge: {changes(), validate(), setErrors(),
 * focusFirstError()}, onResolved(data), status(text), pairLabel, storage (sessionStorage)}
 */
export function createResolver(ctx) {
  const { root, urls, chrome } = ctx;
  const $ = (s) => root.querySelector(s);
  const comment = $("[data-comment]");
  const reason = $("[data-reason]");
  let busy = false;
  let armed = null; // {decision, timer}

  function showFieldErrors(errors) {
    root.querySelectorAll("[data-decision-error]").forEach((el) => {
      const messages = errors[el.dataset.decisionError] ?? [];
      el.textContent = messages.join(" ");
      el.hidden = !messages.length;
    });
  }

  function clearFieldErrors(name = null) {
    root.querySelectorAll("[data-decision-error]").forEach((el) => {
      if (name && el.dataset.decisionError !== name) return;
      el.textContent = "";
      el.hidden = true;
    });
  }

  function setBusy(on, label) {
    busy = on;
    root.classList.toggle("is-busy", on);
    root.querySelectorAll("[data-decide] button, [data-merge-actions] button, [data-reject] button, [data-action=reopen]").forEach((b) => {
      b.disabled = on;
    });
    if (label !== undefined) ctx.status(label);
  }

  function disarm() {
    if (!armed) return;
    clearTimeout(armed.timer);
    ctx.status(null); // "press 2 again to confirm" must not outlive the armed button
    root.querySelectorAll("[data-decide] .is-armed").forEach((b) => {
      b.classList.remove("is-armed");
      b.querySelector("[data-label]").textContent = b.dataset.labelText;
    });
    armed = null;
  }

  /** A single key must not decide by accident: the first press arms, the second decides. */
  function arm(decision, key) {
    if (armed?.decision === decision) {
      disarm();
      return decide(decision);
    }
    disarm();
    const button = $(`[data-decide] [data-decision="${decision}"]`);
    if (!button || button.disabled || button.closest("[hidden]")) return null;
    button.dataset.labelText ??= button.querySelector("[data-label]").textContent;
    button.querySelector("[data-label]").textContent = `Press ${key} again to confirm`;
    button.classList.add("is-armed");
    armed = { decision, timer: setTimeout(disarm, 3000) };
    ctx.status(`${button.dataset.labelText}: press ${key} again to confirm`);
    return null;
  }

  async function decide(decision) {
    if (busy) return;
    disarm();
    const changes = decision === "merge" ? ctx.merge.changes() : [];
    const errors = checkDecision(decision, { reason: reason.value, changes });
    if (decision === "merge") {
      const merged = ctx.merge.validate();
      ctx.merge.setErrors(merged);
      if (Object.keys(merged).length) {
        chrome.submitState("Fix the marked fields of the merged answer");
        ctx.merge.focusFirstError();
        return;
      }
    }
    showFieldErrors(errors);
    if (Object.keys(errors).length) {
      chrome.submitState(errors.reason ? "A reason is needed to reject" : "Not sent");
      if (errors.reason) reason.focus();
      return;
    }
    chrome.banner(null);
    // The note of the decision before (handoff.js) is about another pair: not through this one.
    root.querySelectorAll("[data-toast]").forEach((toast) => toast.remove());
    setBusy(true);
    chrome.submitState("Saving the decision…");
    const body = resolutionBody(decision, { changes, reason: reason.value, comment: comment.value });
    const result = await ctx.send("POST", urls.resolution, body);
    if (!result.ok) {
      fail(result, decision);
      return;
    }
    const data = result.data ?? {};
    const text = outcomeText(data.resolution, data.pair);
    const next = decision !== "reopen" && urls.next && !isSamePage(urls.next, window.location.href) ? urls.next : null;
    ctx.onResolved(data, body);
    comment.value = "";
    reason.value = "";
    if (next) {
      rememberDecision(ctx.storage, { pair: ctx.pairLabel, text, url: urls.resolution, page: window.location.pathname });
      chrome.submitState(`${text} Opening the next disputed pair…`);
      window.location.assign(next);
      return; // stay busy: the page is going
    }
    setBusy(false);
    chrome.submitState("Saved ✓");
    const queue = urls.queue ? { label: "Back to the queue", run: () => window.location.assign(urls.queue) } : null;
    chrome.banner(decision === "reopen" ? `${text} Decide again below.` : `${text} No other disputed pair is waiting.`, "ok", decision === "reopen" ? null : queue);
  }

  function fail(result, decision) {
    setBusy(false);
    chrome.submitState("Not saved");
    if (result.kind === "invalid" || (result.kind === "error" && Object.keys(result.fields ?? {}).length)) {
      const sorted = sortServerErrors(result.fields, result.message);
      if (Object.keys(sorted.answer).length) {
        ctx.merge.setErrors(sorted.answer);
        ctx.merge.focusFirstError();
      }
      showFieldErrors({ reason: sorted.reason, comment: sorted.comment, _: sorted.general });
      if (sorted.reason.length) reason.focus();
      return;
    }
    if (result.kind === "conflict") {
      // Someone else decided first, or the pair moved on: what stands is on the server.
      chrome.banner(`Not saved — ${result.message} Reload to see the pair as it is now${decision === "merge" ? "; your merged answer is kept in this browser" : ""}.`, "error",
        { label: "Reload", run: () => window.location.reload() });
      return;
    }
    chrome.banner(KIND_MESSAGES[result.kind] ?? `Not saved — ${result.message}`, "error");
  }

  reason.addEventListener("input", () => clearFieldErrors("reason"));
  comment.addEventListener("input", () => clearFieldErrors("comment"));

  return {
    decide, arm, disarm, clearFieldErrors,
    get busy() {
      return busy;
    },
    get armed() {
      return armed?.decision ?? null;
    },
  };
}
