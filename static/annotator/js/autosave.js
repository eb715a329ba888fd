// Drafts: every edit is copied to localStorage at once (a closed tab or a dead network loses
// nothing) and PUT to the server after a pause; a keep-alive save renews the lease while the
// page is open. The local copy goes once the server holds that revision, and after a submit.

export const LOCAL_PREFIX = "diffmark:draft:";
const STALE_MS = 14 * 24 * 3600 * 1000;

const stamp = (draft) => Date.parse(draft?.saved_at ?? "") || 0;

/** localStorage, or an in-memory stand-in where it is unavailable (privacy modes). */
export function browserStorage() {
  try {
    window.localStorage.setItem("diffmark:probe", "1");
    window.localStorage.removeItem("diffmark:probe");
    return window.localStorage;
  } catch {
    const memory = new Map();
    return {
      get length() {
        return memory.size;
      },
      key: (i) => [...memory.keys()][i] ?? null,
      getItem: (k) => memory.get(k) ?? null,
      setItem: (k, v) => memory.set(k, String(v)),
      removeItem: (k) => memory.delete(k),
    };
  }
}

/** The newer of the server's and the browser's draft (by saved_at); either may be null. */
export function pickDraft(server, local) {
  if (!local) return server ?? null;
  if (!server) return local;
  return stamp(local) > stamp(server) ? local : server;
}

/** Retry delays after consecutive failures: 4 s, 8 s, 16 s … at most a minute. */
export function backoff(failures) {
  return Math.min(60000, 2000 * 2 ** Math.max(1, failures));
}

export function readLocal(storage, assignment) {
  try {
    return JSON.parse(storage.getItem(LOCAL_PREFIX + assignment) ?? "null");
  } catch {
    return null;
  }
}

/** Forget other assignments' local drafts older than two weeks. */
export function pruneLocal(storage, now = Date.now()) {
  try {
    for (let i = storage.length - 1; i >= 0; i--) {
      const key = storage.key(i);
      if (key?.startsWith(LOCAL_PREFIX) && now - stamp(JSON.parse(storage.getItem(key))) > STALE_MS) {
        storage.removeItem(key);
      }
    }
  } catch {
    // storage unavailable or a foreign value: nothing to prune
  }
}

/**
 * options: url, assignment, getDraft() (the body + ui), send(method, url, body) -> api result,
 * storage, onStatus({state: dirty|saving|saved|failed|stopped, ...}), debounceMs, keepAliveMs.
 */
export function createAutosave(options) {
  const { url, assignment, getDraft, send, storage, onStatus } = options;
  const debounceMs = options.debounceMs ?? 1500;
  const key = LOCAL_PREFIX + assignment;
  let timer = null;
  let inFlight = null;
  let revision = 0;
  let failures = 0;
  let stopped = false;

  const now = () => new Date().toISOString();
  const schedule = (ms) => {
    clearTimeout(timer);
    timer = setTimeout(save, ms);
  };

  function keepLocal() {
    try {
      storage.setItem(key, JSON.stringify({ ...getDraft(), saved_at: now() }));
    } catch {
      // quota or privacy mode: the server copy is all we have
    }
  }

  async function save() {
    clearTimeout(timer);
    if (stopped) return null;
    if (inFlight) {
      await inFlight;
      return stopped ? null : save();
    }
    const rev = revision;
    onStatus({ state: "saving" });
    inFlight = send("PUT", url, { ...getDraft(), saved_at: now() });
    const result = await inFlight;
    inFlight = null;
    if (stopped) return result;
    if (result.ok) {
      failures = 0;
      if (rev === revision) {
        try {
          storage.removeItem(key);
        } catch {
          // nothing to remove
        }
      } else {
        schedule(debounceMs);
      }
      onStatus({ state: "saved", savedAt: result.data?.saved_at ?? now(), expiresAt: result.data?.expires_at ?? null });
    } else if (result.kind === "conflict") {
      stopped = true; // submitted or skipped elsewhere: nothing more to save here
      onStatus({ state: "stopped", result });
    } else {
      failures += 1;
      keepLocal();
      onStatus({ state: "failed", result });
      schedule(backoff(failures));
    }
    return result;
  }

  const keepAlive = setInterval(() => inFlight || save(), options.keepAliveMs ?? 120000);

  return {
    /** Call after every edit of the answer. */
    changed() {
      if (stopped) return;
      revision += 1;
      keepLocal();
      onStatus({ state: "dirty" });
      schedule(debounceMs);
    },
    save,
    /** Retry now if the last attempt failed (back online, tab focused again). */
    retry() {
      if (!stopped && failures > 0 && !inFlight) save();
    },
    get failing() {
      return failures > 0;
    },
    get dirty() {
      return revision > 0 && readLocal(storage, assignment) !== null;
    },
    /** Stop saving (submit in progress or done); waits for a save in flight. */
    async pause() {
      stopped = true;
      clearTimeout(timer);
      if (inFlight) await inFlight;
    },
    resume() {
      stopped = false;
      if (readLocal(storage, assignment)) schedule(debounceMs);
    },
    clearLocal() {
      try {
        storage.removeItem(key);
      } catch {
        // nothing to clear
      }
    },
    keepLocal,
    dispose() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(keepAlive);
    },
  };
}
