// The answer being built: changes with boxes on both sides, absent flags, tier, defects, the
// selection and undo/redo. Every edit rewrites the hidden <textarea name="answer"> (the source of
// truth the autosave, submit and browser tests read); typing into it re-loads the store.
import { SIDES, emptyChange, fromDraft, suggestedChanges, toBody, toDraft, validate } from "./answer.js";
import { iou, mirrorBox, roundBox, wholeFrame } from "./box.js";
import { createHistory } from "./history.js";

export { SIDES };

export function otherSide(side) {
  return side === "a" ? "b" : "a";
}

/**
 * options: frames {a: {width, height}, b: {...}}, field (anything with a `value`, e.g. the
 * textarea), timeSpent () => ms, categories [slug] (optional), tiersNeedingChange [tier],
 * mapBox(box, from, to, frames) (optional): where a mirrored box lands on the other side (the
 * pair's alignment); null or absent falls back to scaling by the frames.
 */
export function createStore(options) {
  const { field = null, timeSpent = () => 0, categories = null, mapBox = () => null } = options;
  const tiersNeedingChange = options.tiersNeedingChange ?? ["excellent", "good"];
  let frames = options.frames;
  let data = { changes: [], tier: "", defects: [] };
  let sel = { change: -1, side: "a", box: -1 };
  let errors = {};
  let liveErrors = false; // errors from the page's own checks: re-checked after every edit
  let nextKey = 1;
  const history = createHistory();
  const listeners = new Set();

  const snapshot = () => JSON.stringify({ data, sel });
  const emit = (kind) => listeners.forEach((fn) => fn(kind));

  function restore(json) {
    ({ data, sel } = JSON.parse(json));
  }

  function write() {
    if (field) field.value = JSON.stringify(draft());
  }

  function commit(mutate, coalesce = null) {
    const before = history.opens(coalesce) ? snapshot() : null;
    mutate();
    history.record(before, coalesce);
    write();
    recheck();
    emit("data");
  }

  /**
   * Drop every error of the page's own checks that no longer holds, whatever edit fixed it ("needs
   * at least one change" goes once a change exists, not when the tier is touched again). Only
   * drops: new problems show on the next submit, not while the person is still working. The
   * server's errors stay until their own field is edited (the page cannot re-check those).
   */
  function recheck() {
    if (!liveErrors || !Object.keys(errors).length) return;
    const now = api.validate();
    for (const key of Object.keys(errors)) if (!now[key]) delete errors[key];
  }

  function travel(json) {
    if (json === null) return false;
    restore(json);
    write();
    recheck();
    emit("data");
    return true;
  }

  function clearErrors(prefix) {
    const keys = Object.keys(errors).filter((k) => k === prefix || k.startsWith(`${prefix}.`));
    keys.forEach((k) => delete errors[k]);
    return keys.length > 0;
  }

  const active = () => data.changes[sel.change] ?? null;

  function ensureChange() {
    if (!active()) {
      data.changes.push(emptyChange(nextKey++));
      sel = { ...sel, change: data.changes.length - 1, box: -1 };
    }
    return active();
  }

  const body = () => toBody(data, timeSpent());
  const draft = () => toDraft(data, sel, timeSpent());

  /** Replace everything with a draft (server, browser or the textarea); resets undo. */
  function load(value) {
    ({ data, sel } = fromDraft(value, () => nextKey++));
    history.reset();
    errors = {};
    write();
    emit("data");
  }

  const api = {
    get state() {
      return { ...data, sel, errors, canUndo: history.canUndo, canRedo: history.canRedo };
    },
    get frames() {
      return frames;
    },
    setFrames(next) {
      frames = next;
      emit("select");
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    toBody: body,
    toDraft: draft,
    load,
    validate: () => validate(data, { frames, categories, tiersNeedingChange }),
    write,
    activeChange: active,
    selectedBox() {
      const c = active();
      const box = c?.[`boxes_${sel.side}`]?.[sel.box];
      return box ? { change: sel.change, side: sel.side, index: sel.box, box } : null;
    },

    // Selection: no undo entry, no rewrite of the answer.
    select(change, side = sel.side, box = -1) {
      sel = { change, side, box };
      history.cut();
      emit("select");
    },
    setSide(side) {
      if (side !== sel.side) api.select(sel.change, side, -1);
    },
    cycleChange(step) {
      const n = data.changes.length;
      if (n) api.select((((sel.change + step) % n) + n) % n, sel.side, -1);
    },

    addChange(init = {}) {
      commit(() => {
        data.changes.push(emptyChange(nextKey++, init));
        sel = { ...sel, change: data.changes.length - 1, box: -1 };
      });
      return sel.change;
    },
    removeChange(index = sel.change) {
      if (!data.changes[index]) return;
      commit(() => {
        data.changes.splice(index, 1);
        sel = { ...sel, change: Math.min(index, data.changes.length - 1), box: -1 };
        clearErrors("changes");
      });
    },
    updateChange(index, patch, coalesce = null) {
      const c = data.changes[index];
      if (!c || Object.entries(patch).every(([k, v]) => c[k] === v)) return;
      commit(() => {
        Object.assign(c, patch);
        Object.keys(patch).forEach((k) => clearErrors(`changes.${index}.${k}`));
      }, coalesce);
    },

    /**
     * Set one side's entity. While the change is linked (the toggle between the two entity
     * fields; on for a new change) B shows A's name: in-place changes name the same thing
     * twice. Typing into B breaks the link and B keeps exactly what is in its field — its
     * old text plus the keystroke, never A's text added again.
     */
    setEntity(index, side, value, coalesce = null) {
      const c = data.changes[index];
      if (!c) return;
      const patch = { [`entity_${side}`]: value };
      if (side === "b") patch.linked = false;
      else if (c.linked && !c.absent_b) patch.entity_b = value;
      api.updateChange(index, patch, coalesce);
    },
    /** Link B's entity to A's (B takes A's name now and follows it) or unlink it. */
    toggleLink(index = sel.change) {
      const c = data.changes[index];
      if (!c) return;
      const linked = !c.linked;
      api.updateChange(index, linked && !c.absent_b ? { linked, entity_b: c.entity_a } : { linked });
    },

    /**
     * A global change (lighting, colour, noise): the whole frame boxed on both sides at once,
     * for the active change (a new one when there is none), replacing its boxes.
     */
    wholeImage() {
      commit(() => {
        const c = ensureChange();
        for (const side of SIDES) {
          c[`boxes_${side}`] = [wholeFrame(frames[side])];
          c[`absent_${side}`] = false;
          clearErrors(`changes.${sel.change}.boxes_${side}`);
        }
        sel = { ...sel, box: 0 };
      });
      return sel.change;
    },

    /** Add a box to the active change on `side` (creating a change when there is none). */
    addBox(side, box, coalesce = null) {
      commit(() => {
        const c = ensureChange();
        c[`boxes_${side}`].push(roundBox(box, frames[side]));
        c[`absent_${side}`] = false;
        sel = { ...sel, side, box: c[`boxes_${side}`].length - 1 };
        clearErrors(`changes.${sel.change}.boxes_${side}`);
      }, coalesce);
      return sel.box;
    },
    setBox(index, side, j, box, coalesce = null) {
      const boxes = data.changes[index]?.[`boxes_${side}`];
      if (!boxes?.[j]) return;
      const next = roundBox(box, frames[side]);
      if (next.every((v, k) => v === boxes[j][k])) return;
      commit(() => {
        boxes[j] = next;
        clearErrors(`changes.${index}.boxes_${side}.${j}`);
      }, coalesce);
    },
    removeBox(index, side, j) {
      const boxes = data.changes[index]?.[`boxes_${side}`];
      if (!boxes?.[j]) return;
      commit(() => {
        boxes.splice(j, 1);
        sel = { ...sel, box: -1 };
        clearErrors(`changes.${index}.boxes_${side}`);
      });
    },
    removeSelectedBox() {
      const s = api.selectedBox();
      if (s) api.removeBox(s.change, s.side, s.index);
      return Boolean(s);
    },

    /** Mark the side absent (clears its boxes and entity) or present again. */
    toggleAbsent(side = sel.side, index = sel.change) {
      commit(() => {
        if (!data.changes[index]) {
          ensureChange();
          index = sel.change;
        }
        const c = data.changes[index];
        const absent = !c[`absent_${side}`];
        c[`absent_${side}`] = absent;
        if (absent) {
          c[`boxes_${side}`] = [];
          c[`entity_${side}`] = "";
          if (sel.side === side) sel = { ...sel, box: -1 };
        } else if (c.linked && !c.absent_a && !c.absent_b) {
          c.entity_b = c.entity_a; // both sides present again: the link shows A's name on B
        }
        clearErrors(`changes.${index}.boxes_${side}`);
        clearErrors(`changes.${index}.entity_${side}`);
      });
    },

    /**
     * Copy the selected box — or, with none selected, all boxes of the active change on the
     * active side (replacing the other side's) — to the other side, scaled to its frame.
     * Returns how many boxes were mirrored.
     */
    mirror() {
      const c = active();
      if (!c) return 0;
      const from = sel.side;
      const to = otherSide(from);
      const picked = sel.box >= 0 && c[`boxes_${from}`][sel.box] ? [c[`boxes_${from}`][sel.box]] : c[`boxes_${from}`];
      if (!picked.length) return 0;
      const mirrored = picked.map((b) => mapBox(b, from, to, frames) ?? mirrorBox(b, frames[from], frames[to]));
      commit(() => {
        const target = c[`boxes_${to}`];
        if (picked.length === 1 && sel.box >= 0) {
          if (!target.some((b) => iou(b, mirrored[0]) === 1)) target.push(mirrored[0]);
        } else {
          c[`boxes_${to}`] = mirrored;
        }
        c[`absent_${to}`] = false;
        if (!c[`entity_${to}`].trim()) c[`entity_${to}`] = c[`entity_${from}`];
        clearErrors(`changes.${sel.change}.boxes_${to}`);
        clearErrors(`changes.${sel.change}.entity_${to}`);
      });
      return mirrored.length;
    },

    /**
     * A change the pixels found (click-to-box): a new change with its boxes on both sides, a
     * side with none marked absent. Returns the new change's index.
     */
    addFound(found) {
      commit(() => {
        const c = emptyChange(nextKey++);
        for (const side of SIDES) {
          c[`boxes_${side}`] = found[`boxes_${side}`].map((b) => roundBox(b, frames[side]));
          c[`absent_${side}`] = c[`boxes_${side}`].length === 0;
        }
        data.changes.push(c);
        sel = { ...sel, change: data.changes.length - 1, box: -1 };
        clearErrors("changes");
      });
      return sel.change;
    },
    /** Fill a change from a draft: its description, and its entity and category where empty. */
    applyDraft(index, draft) {
      const c = data.changes[index];
      if (!c) return false;
      const patch = { description: draft.description };
      if (draft.category && !c.category) patch.category = draft.category;
      if (draft.entity) {
        if (!c.absent_a && !c.entity_a.trim()) patch.entity_a = draft.entity;
        if (!c.absent_b && !c.entity_b.trim() && (c.linked || c.absent_a)) patch.entity_b = draft.entity;
      }
      api.updateChange(index, patch);
      return true;
    },

    setTier(tier) {
      if (tier === data.tier) return;
      commit(() => {
        data.tier = tier;
        clearErrors("tier");
        clearErrors("changes");
      });
    },
    toggleDefect(value, on = !data.defects.includes(value)) {
      if (on === data.defects.includes(value)) return;
      commit(() => {
        data.defects = on ? [...data.defects, value] : data.defects.filter((d) => d !== value);
        clearErrors("defects");
      });
    },

    /** Copy the model's suggested changes into the answer; skips ones already there. */
    acceptPredictions(predictions) {
      const incoming = suggestedChanges(predictions, data.changes, frames);
      if (!incoming.length) return 0;
      commit(() => {
        incoming.forEach((c) => data.changes.push(emptyChange(nextKey++, c)));
        sel = { ...sel, change: data.changes.length - incoming.length, box: -1 };
      });
      return incoming.length;
    },

    undo: () => travel(history.undo(snapshot())),
    redo: () => travel(history.redo(snapshot())),

    /** Show errors; `live`: they come from validate(), so edits that fix them clear them. */
    setErrors(fields, { live = false } = {}) {
      errors = { ...fields };
      liveErrors = live;
      emit("errors");
    },
    clearErrors(prefix) {
      if (clearErrors(prefix)) emit("errors");
    },
  };
  return api;
}
