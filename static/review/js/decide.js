// A lead's decision as data: the REST body, what is checked before sending, where the server's
// field errors go, and how the outcome reads. Pure (no DOM, no fetch).

export const DECISIONS = {
  accept_1: "Accept annotation 1",
  accept_2: "Accept annotation 2",
  merge: "Accept an edited answer",
  reject: "Reject",
  reopen: "Reopen",
};

export const DONE = {
  accept_1: "Annotation 1 accepted",
  accept_2: "Annotation 2 accepted",
  merge: "Merged answer accepted",
  reject: "Pair rejected",
  reopen: "Pair reopened",
};

/** "Annotation 1 accepted", "Merged answer accepted"… for history lines and notices. */
export function decisionDone(decision) {
  return DONE[decision] ?? DECISIONS[decision] ?? String(decision ?? "");
}

export const STATUS_LABELS = {
  imported: "Imported", pre_annotated: "Pre-annotated", in_annotation: "In annotation",
  accepted: "Accepted", disputed: "Disputed", rejected: "Rejected",
};

export function statusLabel(status) {
  return STATUS_LABELS[status] ?? String(status ?? "");
}

/**
 * A lead decides a disputed pair, and may decide again on a decided one (a spot-check of an
 * auto-accepted pair, a second look): the latest decision stands. A decided pair can also be
 * reopened, which hands it back to the agreement rules.
 */
export function canDecide(status) {
  return status === "disputed" || status === "accepted" || status === "rejected";
}

export function canReopen(status) {
  return status === "accepted" || status === "rejected";
}

/** The POST body: the answer only for a merge, the reason only for a reject. */
export function resolutionBody(decision, { changes = [], reason = "", comment = "" } = {}) {
  const body = { decision, comment: comment.trim() };
  if (decision === "merge") body.answer = { changes };
  if (decision === "reject") body.reason = reason.trim();
  return body;
}

/** Checks before sending: {field: [message]} with fields named like the server's. */
export function checkDecision(decision, { reason = "", changes = [] } = {}) {
  const out = {};
  if (decision === "reject" && !reason.trim()) out.reason = ["Say why the pair is rejected."];
  if (decision === "merge" && !changes.length) {
    out["answer.changes"] = ["A merged answer needs at least one change — add one (N), or reject the pair."];
  }
  return out;
}

/**
 * The merged answer's checks from the workspace store (state.js `validate`), without the tier —
 * a lead's answer has none — and with the rule that it holds at least one change.
 */
export function mergeErrors(storeErrors, changeCount) {
  const out = Object.fromEntries(Object.entries(storeErrors).filter(([k]) => k !== "tier" && k !== "changes"));
  if (!changeCount) out.changes = ["A merged answer needs at least one change — add one (N), or reject the pair."];
  return out;
}

/**
 * The server's field errors sorted by where they are shown: `answer` (paths of the merged answer
 * as the store names them, "changes.0.boxes_b.1"), `reason`, `comment`, and `general` (messages
 * with no place of their own, never dropped).
 */
export function sortServerErrors(fields, message = "") {
  const out = { answer: {}, reason: [], comment: [], general: [] };
  for (const [path, raw] of Object.entries(fields ?? {})) {
    const messages = (Array.isArray(raw) ? raw : [raw]).map(String);
    if (path === "answer" || path === "answer.changes") out.answer.changes = [...(out.answer.changes ?? []), ...messages];
    else if (path.startsWith("answer.")) out.answer[path.slice("answer.".length)] = messages;
    else if (path === "reason" || path === "comment") out[path].push(...messages);
    else out.general.push(...messages.map((m) => (path && path !== "_" && path !== "non_field_errors" ? `${path}: ${m}` : m)));
  }
  const placed = Object.keys(out.answer).length + out.reason.length + out.comment.length + out.general.length;
  if (!placed && message) out.general.push(message);
  return out;
}

/** "Merged answer accepted — the pair is now accepted." */
export function outcomeText(resolution, pair) {
  const what = DONE[resolution?.decision] ?? "Decision recorded";
  const status = pair?.status ?? resolution?.status_after;
  return status ? `${what} — the pair is now ${statusLabel(status).toLowerCase()}.` : `${what}.`;
}

/** The standing answer after a decision: its answer, or for a reopen the consensus (if any). */
export function standingAfter(resolution, consensus) {
  if (resolution?.answer) return resolution.answer;
  if (resolution?.decision === "reopen" && consensus) return { changes: consensus };
  return null;
}

/** True when `next` names the page we are on (a stale "next" must not reload this pair). */
export function isSamePage(next, here) {
  if (!next) return true;
  try {
    const a = new URL(next, here);
    const b = new URL(here);
    return a.origin === b.origin && a.pathname.replace(/\/+$/, "") === b.pathname.replace(/\/+$/, "");
  } catch {
    return false;
  }
}
