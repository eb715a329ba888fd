// Submit (idempotent, errors shown in place, the drawing kept), skip, and loading the next pair
// into #workspace with htmx without a full page reload.
import { csrfToken } from "../../canvas/js/api.js";
import { showGoldFeedback } from "./gold-feedback.js";

const FIX_FIELDS = "Fix the marked fields";

const KIND_MESSAGES = {
  auth: "Not submitted — your log-in expired. Log in again in another tab, then submit again; your work is kept in this browser.",
  network: "Not submitted — the connection failed. Your work is kept in this browser; submit again when you are back online.",
  server: "Not submitted — the server had a problem. Your work is kept; try again in a moment.",
};

/**
 * ctx: {root, store, urls, config, send, autosave, panel, banner(text|null, tone), status(text),
 * csrf, ahead ({take()}: the next pair's fragment, preloaded — prefetch.js; optional)}
 */
export function createSubmitter(ctx) {
  const { root, store, urls, config, send, autosave, panel, banner } = ctx;
  let busy = false;
  let refused = false; // the submit state says "fix the fields": cleared when no error is left

  store.subscribe(() => {
    if (refused && !busy && !Object.keys(store.state.errors).length) {
      refused = false;
      ctx.status("");
    }
  });

  const buttons = () => root.querySelectorAll("[data-action=submit], [data-action=skip], [data-action=skip-ask]");
  function setBusy(on, label) {
    busy = on;
    root.classList.toggle("is-busy", on);
    buttons().forEach((b) => {
      b.disabled = on;
    });
    if (label !== undefined) ctx.status(label);
  }

  function failedNext() {
    if (!root.isConnected) return; // the next pair is in: this was some later request
    setBusy(false, "");
    banner("The next pair did not load. Reload the page to continue.", "warn", { label: "Reload", run: () => window.location.reload() });
  }

  function loadNext() {
    setBusy(true, "Loading the next pair…");
    const ahead = window.htmx ? ctx.ahead?.take() : null;
    if (ahead) {
      // The next pair is already here (leased, fragment and images preloaded): no round trip.
      window.htmx.swap("#workspace", ahead.html, { swapStyle: "outerHTML" });
      window.history.pushState({}, "", ahead.url);
      return;
    }
    const token = csrfToken(ctx.csrf);
    if (!window.htmx) {
      // No htmx: the same endpoint as a plain form POST redirects to the next workspace page.
      const form = Object.assign(document.createElement("form"), { method: "post", action: urls.next });
      form.append(Object.assign(document.createElement("input"), { type: "hidden", name: "csrfmiddlewaretoken", value: token }));
      document.body.append(form);
      form.submit();
      return;
    }
    document.addEventListener("htmx:responseError", failedNext, { once: true });
    document.addEventListener("htmx:sendError", failedNext, { once: true });
    // htmx swaps the fragment (or the "nothing left" one) and pushes the URL the server names.
    window.htmx.ajax("POST", urls.next, { target: "#workspace", swap: "outerHTML", headers: { "X-CSRFToken": token } })
      .catch(failedNext);
  }

  async function fail(result) {
    autosave.resume();
    setBusy(false, "Not submitted");
    if (result.kind === "invalid") {
      refused = true;
      store.setErrors(Object.keys(result.fields).length ? result.fields : { _: [result.message] });
      panel.focusFirstError();
      return;
    }
    if (result.kind === "conflict" && result.code === "already_submitted") {
      autosave.clearLocal();
      loadNext();
      return;
    }
    if (result.kind === "conflict") {
      const text = result.code === "lease_lost"
        ? "Your lease on this pair expired and it went to other annotators, so it cannot be submitted. Your answer is kept in this browser."
        : result.message;
      banner(text, "error", { label: "Take the next pair", run: loadNext });
      return;
    }
    banner(KIND_MESSAGES[result.kind] ?? `Not submitted — ${result.message}`, "error");
  }

  async function submit() {
    if (busy) return;
    const errors = store.validate();
    store.setErrors(errors, { live: true });
    if (Object.keys(errors).length) {
      refused = true;
      ctx.status(FIX_FIELDS);
      panel.focusFirstError();
      return;
    }
    setBusy(true, "Submitting…");
    await autosave.pause();
    autosave.keepLocal(); // until the server confirms, the browser holds the answer
    const result = await send("POST", urls.submit, store.toBody(), {
      headers: { "Idempotency-Key": config.idempotency_key },
    });
    if (!result.ok) {
      await fail(result);
      return;
    }
    autosave.clearLocal();
    banner(null);
    ctx.status("Submitted ✓");
    if (config.gold_feedback) showGoldFeedback(config.gold_feedback, send); // shown over the next pair
    loadNext();
  }

  /** Skip with the reason chosen in the skip dialog (the lead reads it); none chosen: say so. */
  async function skip() {
    if (busy) return;
    const dialog = root.querySelector("dialog[data-skip]");
    const picked = dialog.querySelector("input[name=skip-reason]:checked");
    const reason = picked?.value === "other" ? dialog.querySelector("[data-skip-other]").value.trim() : picked?.value ?? "";
    const error = dialog.querySelector("[data-skip-error]");
    error.hidden = Boolean(reason);
    if (!reason) {
      error.textContent = picked ? "Say why in a few words." : "Choose a reason.";
      return;
    }
    dialog.close();
    setBusy(true, "Skipping…");
    await autosave.pause();
    const result = await send("POST", urls.skip, { reason });
    if (!result.ok && !(result.kind === "conflict")) {
      autosave.resume();
      setBusy(false, "Not skipped");
      banner(KIND_MESSAGES[result.kind] ?? `Not skipped — ${result.message}`, "error");
      return;
    }
    autosave.clearLocal();
    loadNext();
  }

  return { submit, skip, loadNext, get busy() { return busy; } };
}
