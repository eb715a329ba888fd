import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { LOCAL_PREFIX, backoff, createAutosave, pickDraft, pruneLocal, readLocal } from "../../static/annotator/js/autosave.js";

function memoryStorage() {
  const m = new Map();
  return {
    get length() { return m.size; },
    key: (i) => [...m.keys()][i] ?? null,
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
  };
}

test("the newer draft wins, by saved_at", () => {
  const server = { saved_at: "2026-01-01T10:00:00Z", tier: "good" };
  const local = { saved_at: "2026-01-01T10:05:00Z", tier: "fair" };
  assert.equal(pickDraft(server, local), local);
  assert.equal(pickDraft({ ...server, saved_at: "2026-01-01T11:00:00Z" }, local).tier, "good");
  assert.equal(pickDraft(null, local), local);
  assert.equal(pickDraft(server, null), server);
  assert.equal(pickDraft(null, null), null);
  assert.equal(pickDraft({ tier: "x" }, local), local, "a server draft without a time loses");
});

test("backoff grows and is capped", () => {
  assert.deepEqual([1, 2, 3, 4, 10].map(backoff), [4000, 8000, 16000, 32000, 60000]);
});

test("old local drafts are pruned, fresh ones kept", () => {
  const s = memoryStorage();
  const now = Date.parse("2026-03-01T00:00:00Z");
  s.setItem(`${LOCAL_PREFIX}1`, JSON.stringify({ saved_at: "2026-01-01T00:00:00Z" }));
  s.setItem(`${LOCAL_PREFIX}2`, JSON.stringify({ saved_at: "2026-02-27T00:00:00Z" }));
  s.setItem("other", "x");
  pruneLocal(s, now);
  assert.equal(s.getItem(`${LOCAL_PREFIX}1`), null);
  assert.ok(s.getItem(`${LOCAL_PREFIX}2`));
  assert.equal(s.getItem("other"), "x");
});

function setup(responses) {
  const storage = memoryStorage();
  const sent = [];
  const statuses = [];
  let draft = { tier: "", changes: [] };
  const autosave = createAutosave({
    url: "/draft/", assignment: 7, storage,
    getDraft: () => draft,
    send: async (method, url, body) => {
      sent.push({ method, url, body });
      return responses.shift() ?? { ok: true, status: 200, data: { saved_at: "t", expires_at: "e" } };
    },
    onStatus: (s) => statuses.push(s.state),
    debounceMs: 1000, keepAliveMs: 120000,
  });
  return { storage, sent, statuses, autosave, setDraft: (d) => { draft = d; } };
}

const flush = () => new Promise((r) => setImmediate(r));

test("edits are kept locally at once and saved after a pause; success clears the local copy", async () => {
  mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  try {
    const { storage, sent, autosave, setDraft } = setup([]);
    setDraft({ tier: "good", changes: [] });
    autosave.changed();
    assert.equal(readLocal(storage, 7).tier, "good");
    autosave.changed();
    mock.timers.tick(999);
    assert.equal(sent.length, 0);
    mock.timers.tick(1);
    await flush();
    assert.equal(sent.length, 1, "debounced into one save");
    assert.equal(sent[0].method, "PUT");
    assert.ok(sent[0].body.saved_at);
    assert.equal(readLocal(storage, 7), null);
    autosave.dispose();
  } finally {
    mock.timers.reset();
  }
});

test("a failed save keeps the local copy and retries with backoff", async () => {
  mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  try {
    const { storage, sent, statuses, autosave } = setup([{ ok: false, kind: "auth", status: 403 }, { ok: false, kind: "network", status: 0 }]);
    autosave.changed();
    mock.timers.tick(1000);
    await flush();
    assert.equal(statuses.at(-1), "failed");
    assert.ok(readLocal(storage, 7));
    mock.timers.tick(4000);
    await flush();
    assert.equal(sent.length, 2);
    mock.timers.tick(8000);
    await flush();
    assert.equal(sent.length, 3);
    assert.equal(statuses.at(-1), "saved");
    assert.equal(readLocal(storage, 7), null);
    autosave.dispose();
  } finally {
    mock.timers.reset();
  }
});

test("keep-alive saves renew the lease while the page is open", async () => {
  mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  try {
    const { sent, autosave } = setup([]);
    mock.timers.tick(120000);
    await flush();
    mock.timers.tick(120000);
    await flush();
    assert.equal(sent.length, 2);
    autosave.dispose();
    mock.timers.tick(120000);
    await flush();
    assert.equal(sent.length, 2, "nothing after dispose");
  } finally {
    mock.timers.reset();
  }
});

test("a conflict (already submitted) stops autosaving", async () => {
  mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  try {
    const { sent, statuses, autosave } = setup([{ ok: false, kind: "conflict", status: 409, code: "already_submitted" }]);
    autosave.changed();
    mock.timers.tick(1000);
    await flush();
    assert.equal(statuses.at(-1), "stopped");
    autosave.changed();
    mock.timers.tick(5000);
    await flush();
    assert.equal(sent.length, 1);
    autosave.dispose();
  } finally {
    mock.timers.reset();
  }
});
