// Pointer input on one panel: create, select, move and resize boxes; pan with Space+drag or the
// middle button; zoom with the wheel around the cursor (the view is shared, so both panels
// follow). Every box goes through box.js rounding, so stored coordinates are whole pixels of the
// side's own frame whatever the zoom.
import { HANDLE_CURSORS, MIN_DRAWN_PX, boxFromPoints, hitTest, isTooSmall, moveBox, panBy, resizeBox, toImage, zoomAt } from "./box.js";

const DRAG_THRESHOLD = 3; // CSS px before a press becomes a new box

let gestures = 0;

/** The box under the pointer: the selected one first, then the active change, then the rest. */
export function pickBox(state, side, t, p) {
  const { sel, changes } = state;
  const order = [];
  const active = changes[sel.change];
  if (active) {
    const boxes = active[`boxes_${side}`];
    if (sel.side === side && boxes[sel.box]) order.push([sel.change, sel.box]);
    for (let j = boxes.length - 1; j >= 0; j--) order.push([sel.change, j]);
  }
  changes.forEach((c, i) => {
    if (i !== sel.change) c[`boxes_${side}`].forEach((_, j) => order.push([i, j]));
  });
  for (const [change, index] of order) {
    const handle = hitTest(changes[change][`boxes_${side}`][index], t, p);
    if (handle) return { change, index, handle };
  }
  return null;
}

/**
 * Pointer editing on one panel (`element`), its options grouped by who answers them:
 * - store, modes, signal (every listener hangs on it);
 * - panel: this panel — {index, sideAt() (the side it shows now), transform(side), size()};
 * - view: the view both panels share — {get(), set(view), frames(), ref()};
 * - input: what the rest of the screen says about input — {panning()} (a drag pans: Space held,
 *   or nothing may be edited), {picking()} (boxes may be picked: shown and editable);
 * - handlers: what the screen does about it — focus(); pointer(info|null) as the pointer moves;
 *   notice(text) (optional): why a drawn box was not kept; click(side, point) (optional): a
 *   click (no drag) on the image at `point` (image px), true when it made something.
 */
export function attachPointer(element, { store, modes, signal, panel, view, input, handlers }) {
  let gesture = null;
  // The panel's place on the page when the gesture began: it does not move during one, and
  // reading it again at the gesture's end would force a layout of what the gesture just changed
  // (the new change's card, the status line) in the middle of the click.
  let rect = null;

  const local = (e, r = element.getBoundingClientRect()) => ({ x: e.clientX - r.left, y: e.clientY - r.top });

  function report(p) {
    const side = panel.sideAt();
    const frame = view.frames()[side];
    const q = toImage(panel.transform(side), p.x, p.y);
    handlers.pointer({ panel: panel.index, side, x: q.x, y: q.y, nx: q.x / frame.width, ny: q.y / frame.height });
  }

  function hover(p) {
    if (input.panning()) {
      element.style.cursor = "grab";
      return;
    }
    const side = panel.sideAt();
    const hit = input.picking() ? pickBox(store.state, side, panel.transform(side), p) : null;
    element.style.cursor = hit ? HANDLE_CURSORS[hit.handle] : "crosshair";
  }

  element.addEventListener("pointerdown", (e) => {
    if (e.button === 2 || gesture) return;
    e.preventDefault();
    handlers.focus();
    rect = element.getBoundingClientRect();
    const p = local(e, rect);
    if (e.button === 1 || input.panning()) {
      gesture = { kind: "pan", last: p };
      element.style.cursor = "grabbing";
    } else if (e.button === 0) {
      const side = panel.sideAt();
      store.setSide(side);
      const t = panel.transform(side);
      const start = toImage(t, p.x, p.y);
      const hit = !e.shiftKey && input.picking() ? pickBox(store.state, side, t, p) : null;
      const id = `g${++gestures}`;
      if (hit) {
        store.select(hit.change, side, hit.index);
        const orig = store.state.changes[hit.change][`boxes_${side}`][hit.index];
        gesture = { kind: hit.handle === "move" ? "move" : "resize", ...hit, side, orig, start, id };
      } else {
        gesture = { kind: "create", side, start, startScreen: p, created: false, id };
      }
      modes.setHold(true);
    } else {
      return;
    }
    element.setPointerCapture(e.pointerId);
  }, { signal });

  element.addEventListener("pointermove", (e) => {
    const p = local(e);
    report(p);
    if (!gesture) {
      hover(p);
      return;
    }
    if (gesture.kind !== "pan" && input.panning()) {
      // Space went down mid-drag: the person wants to pan, so what the drag drew is undone.
      undoGesture();
      modes.setHold(false);
      gesture = { kind: "pan", last: p };
      element.style.cursor = "grabbing";
    }
    if (gesture.kind === "pan") {
      view.set(panBy(view.get(), p.x - gesture.last.x, p.y - gesture.last.y, panel.size(), view.ref()));
      gesture.last = p;
      return;
    }
    const { side, id } = gesture;
    const frame = view.frames()[side];
    const q = toImage(panel.transform(side), p.x, p.y);
    if (gesture.kind === "create") {
      const far = Math.hypot(p.x - gesture.startScreen.x, p.y - gesture.startScreen.y) >= DRAG_THRESHOLD;
      if (!gesture.created && !far) return;
      const box = boxFromPoints(gesture.start, q, frame);
      if (!gesture.created) {
        gesture.index = store.addBox(side, box, id);
        gesture.change = store.state.sel.change;
        gesture.created = true;
      } else {
        store.setBox(gesture.change, side, gesture.index, box, id);
      }
    } else if (gesture.kind === "move") {
      store.setBox(gesture.change, side, gesture.index, moveBox(gesture.orig, q.x - gesture.start.x, q.y - gesture.start.y, frame), id);
    } else {
      store.setBox(gesture.change, side, gesture.index, resizeBox(gesture.orig, gesture.handle, q, frame), id);
    }
  }, { signal });

  // A gesture's edits share one undo step (its id), so undoing it removes exactly what it drew.
  // A move or resize that changed nothing recorded no step, so there is nothing to undo.
  function undoGesture() {
    if (gesture.kind === "create") {
      if (gesture.created) store.undo();
      return;
    }
    const box = store.state.changes[gesture.change]?.[`boxes_${gesture.side}`][gesture.index];
    if (box && box.some((v, k) => v !== gesture.orig[k])) store.undo();
  }

  const end = (e) => {
    if (!gesture) return;
    const at = local(e, rect ?? undefined);
    if (gesture.kind === "create" && !gesture.created) {
      // A click on the image: the changed region under it boxed on both sides (click-to-box),
      // or, where the pixels found nothing, deselect.
      if (!handlers.click?.(gesture.side, gesture.start)) store.select(store.state.sel.change, gesture.side, -1);
    } else if (gesture.kind === "create" || gesture.kind === "resize") {
      const box = store.state.changes[gesture.change]?.[`boxes_${gesture.side}`][gesture.index];
      if (box && isTooSmall(box, panel.transform(gesture.side))) {
        undoGesture();
        handlers.notice?.(`Box not kept: smaller than ${MIN_DRAWN_PX} screen px — zoom in to mark tiny regions`);
      }
    }
    gesture = null;
    modes.setHold(false);
    if (element.hasPointerCapture?.(e.pointerId)) element.releasePointerCapture(e.pointerId);
    rect = null;
    hover(at);
  };
  element.addEventListener("pointerup", end, { signal });
  element.addEventListener("pointercancel", end, { signal });
  element.addEventListener("pointerleave", () => gesture || handlers.pointer(null), { signal });
  element.addEventListener("contextmenu", (e) => e.preventDefault(), { signal });
  element.addEventListener("auxclick", (e) => e.button === 1 && e.preventDefault(), { signal });

  element.addEventListener("wheel", (e) => {
    e.preventDefault();
    const step = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 1 : 0.0015;
    const factor = Math.exp(-e.deltaY * step);
    view.set(zoomAt(view.get(), factor, local(e), panel.size(), view.ref()));
    report(local(e));
  }, { signal, passive: false });
}
