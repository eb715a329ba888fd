// Named actions shared by the keyboard, the toolbar buttons and the panel: one place that says
// what "mirror" or "zoom in" does, so a key and its button can never disagree.
import { fitView, growBox, moveBox, panBy, viewTransform, zoomToPixelScale } from "./box.js";
import { otherSide } from "./state.js";

// Zoom steps as CSS px per image pixel; whole numbers above 1:1 keep pixels evenly sized.
const STEPS = [0.05, 0.1, 0.15, 0.25, 0.33, 0.5, 0.67, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

export function nextZoomStep(scale, direction) {
  if (direction > 0) return STEPS.find((s) => s > scale * 1.01) ?? STEPS.at(-1);
  return [...STEPS].reverse().find((s) => s < scale / 1.01) ?? STEPS[0];
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "es"}`;

/**
 * The kit's actions, for any screen the kit mounts. canvas: what they read and call, all set
 * when the kit is mounted (mount.js) — {root, stage, config, store, modes, panel, ui, assist,
 * getView(), setView(view), size(), ref(), setFlag(name, value), status(text), openDialog(name)}.
 * A screen's own actions (submit, skip, its layout) are registered with the kit (registry.js).
 */
export function createActions(canvas) {
  const { store, modes } = canvas;
  const flip = () => store.setSide(otherSide(store.state.sel.side));

  function zoomStep(direction) {
    const size = canvas.size();
    const scale = viewTransform(canvas.getView(), size, canvas.ref()).sx;
    canvas.setView(zoomToPixelScale(canvas.getView(), nextZoomStep(scale, direction), size, canvas.ref()));
  }

  function editSelected(make, coalesce) {
    const s = store.selectedBox();
    if (!s) return false;
    const frame = store.frames[s.side];
    store.setBox(s.change, s.side, s.index, make(s.box, frame), `${coalesce}:${s.change}:${s.side}:${s.index}`);
    return true;
  }

  return {
    tier: (i) => canvas.config.tiers[i] && store.setTier(canvas.config.tiers[i].value),
    "mode-side": () => modes.setMode("side"),
    "mode-flicker": () => (modes.mode === "flicker" ? flip() : modes.setMode("flicker")),
    "mode-swipe": () => modes.setMode("swipe"),
    "mode-diff": () => modes.setMode("diff"),
    "flicker-timer": () => modes.toggleTimer(),
    "side-toggle": flip,
    "side-a": () => store.setSide("a"),
    "side-b": () => store.setSide("b"),
    "change-new": () => {
      store.addChange();
      canvas.panel.scrollActive();
      canvas.status("New change: draw its box on A or B");
    },
    "change-prev": () => store.cycleChange(-1),
    "change-next": () => store.cycleChange(1),
    mirror: () => {
      const { side } = store.state.sel;
      const n = store.mirror();
      canvas.status(n ? `Mirrored ${plural(n, "box")} to ${otherSide(side).toUpperCase()}` : "Nothing to mirror: draw or select a box first");
    },
    absent: () => store.toggleAbsent(),
    "whole-image": () => {
      const i = store.wholeImage();
      canvas.status(`Change ${i + 1} covers the whole image on A and B`);
    },
    category: (i) => {
      const category = canvas.config.categories[i];
      if (!category) return canvas.status(`This project has no category ${(i + 1) % 10}`);
      const { change } = store.state.sel;
      if (!store.activeChange()) return canvas.status("Draw a box first, or press N for a new change");
      store.updateChange(change, { category: category.slug });
      canvas.status(`Change ${change + 1}: ${category.name}`);
    },
    "delete-box": () => store.removeSelectedBox() || canvas.status("Select a box first (click it)"),
    undo: () => store.undo() || canvas.status("Nothing to undo"),
    redo: () => store.redo() || canvas.status("Nothing to redo"),
    "zoom-in": () => zoomStep(1),
    "zoom-out": () => zoomStep(-1),
    "zoom-fit": () => canvas.setView(fitView()),
    "zoom-1": () => canvas.setView(zoomToPixelScale(canvas.getView(), 1, canvas.size(), canvas.ref())),
    nudge: ([dx, dy]) => {
      if (!editSelected((box, frame) => moveBox(box, dx, dy, frame), "nudge")) {
        canvas.setView(panBy(canvas.getView(), -dx * 8, -dy * 8, canvas.size(), canvas.ref()));
      }
    },
    "grow-box": ([dx, dy]) => editSelected((box, frame) => growBox(box, dx, dy, frame), "grow"),
    "predictions-accept": () => {
      if (!canvas.config.predictions.length) return canvas.status("This pair has no model suggestions");
      const n = store.acceptPredictions(canvas.config.predictions);
      canvas.setFlag("showPredictions", false);
      canvas.status(n ? `Accepted ${n} suggested change${n === 1 ? "" : "s"} — check them` : "The suggestions are already in your answer");
    },
    "predictions-toggle": () => canvas.setFlag("showPredictions", !canvas.ui.showPredictions),
    "boxes-toggle": () => canvas.setFlag("showBoxes", !canvas.ui.showBoxes),
    "box-region": (at = canvas.ui.pointer) => {
      // Click-to-box: the changed region under the pointer, boxed on A and B at once.
      if (!canvas.assist?.available || !at) return false;
      const found = canvas.assist.pick(at.side, at);
      if (!found) return false;
      const t0 = performance.now();
      const i = store.addFound(found);
      const what = found.boxes_a.length && found.boxes_b.length ? "A and B" : found.boxes_a.length ? "A (absent on B)" : "B (absent on A)";
      const accept = canvas.assist.drafts && found.draft ? " · A accepts the draft" : "";
      canvas.status(`Change ${i + 1}: boxed on ${what}${accept}`);
      canvas.ui.lastAssistMs = performance.now() - t0;
      return true;
    },
    "accept-draft": () => {
      const c = store.activeChange();
      if (!c) return canvas.status("Click a changed region first");
      const found = canvas.assist?.drafts ? canvas.assist.match(c) : null;
      if (!found?.draft) return canvas.status("No draft for this change: describe it in your own words");
      store.applyDraft(store.state.sel.change, { description: found.draft, entity: found.entity, category: found.category });
      return canvas.status(`Change ${store.state.sel.change + 1}: draft accepted — edit it if it is not right`);
    },
    "edit-change": () => {
      const c = store.activeChange();
      if (!c) return canvas.status("Draw a box first, or press N for a new change");
      const side = store.state.sel.side;
      // While B is linked to A, B's name is A's: the field to fill is A's (typing into B
      // would unlink it and leave A empty). Otherwise the active side's, or the other one's
      // when the active side is absent or named already.
      const linked = c.linked && !c.absent_a && !c.absent_b;
      const entity = (linked ? ["a"] : [side, otherSide(side)])
        .filter((s) => !c[`absent_${s}`])
        .map((s) => `entity_${s}`)
        .find((f) => !String(c[f]).trim()) ?? null;
      const empty = ["category", "description", entity].find((f) => f && !String(c[f]).trim());
      canvas.panel.focusActive(empty ?? "description");
    },
    help: () => canvas.openDialog("help"),
    guidelines: () => canvas.openDialog("guidelines"),
    /** Focus back to the images (true), or else the selected box unselected (false). */
    escape: () => {
      const el = document.activeElement;
      if (el && el !== document.body && canvas.root.contains(el) && el !== canvas.stage) {
        canvas.stage.focus();
        return true;
      }
      if (store.state.sel.box >= 0) store.select(store.state.sel.change, store.state.sel.side, -1);
      return false;
    },
  };
}
