// Undo/redo over snapshots (strings). Edits that share a coalesce key — one drag, one typing
// session in a field, a run of arrow-key nudges — make a single undo step.

export function createHistory(limit = 200) {
  let past = [];
  let future = [];
  let lastKey = null;
  return {
    get canUndo() {
      return past.length > 0;
    },
    get canRedo() {
      return future.length > 0;
    },
    /** True when an edit with this key needs a snapshot of the state before it. */
    opens(key) {
      return !key || key !== lastKey;
    },
    /** Call after an edit: `before` is the snapshot taken when opens(key) said so, else null. */
    record(before, key) {
      if (before !== null) {
        past.push(before);
        if (past.length > limit) past.shift();
      }
      lastKey = key;
      future = [];
    },
    /** Break the current coalescing run (a selection change, for instance). */
    cut() {
      lastKey = null;
    },
    undo(current) {
      if (!past.length) return null;
      future.push(current);
      lastKey = null;
      return past.pop();
    },
    redo(current) {
      if (!future.length) return null;
      past.push(current);
      lastKey = null;
      return future.pop();
    },
    reset() {
      past = [];
      future = [];
      lastKey = null;
    },
  };
}
