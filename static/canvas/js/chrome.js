// Everything around the canvases: toolbar states, panel tags, the status line, the banner, the
// clock and the swipe slider. Reads the screen; writes only the DOM.
import { viewTransform } from "./box.js";
import { MODES } from "./modes.js";

/** canvas: {root, store, modes, ui, getView(), size(), ref()} (mount.js). */
export function createChrome(canvas) {
  const { root, store, modes } = canvas;
  const $ = (selector) => root.querySelector(selector);
  const bannerEl = $("[data-banner]");
  const grip = $("[data-swipe-grip]");
  const swipe = $("[data-swipe]");
  let bannerSource = null;
  let hintTimer = null;

  // Every paint calls update(): it writes only what differs, so a frame whose toolbar and
  // status did not change adds no DOM work (style and layout) of its own to the canvases'.
  const setText = (el, text) => {
    if (el.textContent !== text) el.textContent = text;
  };
  const setAttr = (el, name, value) => {
    if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  };
  const press = (action, on) => root.querySelectorAll(`[data-action="${action}"]`).forEach((b) => {
    setAttr(b, "aria-pressed", String(on));
  });
  const tagShown = new WeakMap(); // tag → what it shows ("A 320×240"), rebuilt only when that changes

  function banner(text, tone = "error", action = null, source = null) {
    bannerSource = text ? source : null;
    bannerEl.hidden = !text;
    bannerEl.dataset.tone = tone;
    $("[data-banner-text]").textContent = text ?? "";
    const button = $("[data-banner-action]");
    button.hidden = !action;
    button.textContent = action?.label ?? "";
    button.onclick = action ? () => action.run() : null;
  }

  const HINT = $("[data-status-hint]").textContent;
  /** Flash `text` in the status line for a few seconds; null puts the hint back at once. */
  function status(text) {
    const hint = $("[data-status-hint]");
    if (text == null) {
      clearTimeout(hintTimer);
      hint.classList.remove("is-flash");
      hint.textContent = HINT;
      return;
    }
    hint.textContent = text;
    hint.classList.add("is-flash");
    clearTimeout(hintTimer);
    hintTimer = setTimeout(() => {
      hint.classList.remove("is-flash");
      hint.textContent = HINT;
    }, 4000);
  }

  function submitState(text) {
    $("[data-submit-state]").textContent = text;
  }

  function tags() {
    const { sel } = store.state;
    const frames = store.frames;
    root.querySelectorAll("[data-view]").forEach((el, i) => {
      const tag = el.querySelector("[data-tag]");
      let side = i === 0 ? "a" : "b";
      let extra = `${frames[side].width}×${frames[side].height}`;
      if (modes.mode === "flicker") {
        side = sel.side;
        extra = modes.timer ? "flicker on a timer · T stops" : "F shows the other image";
      } else if (modes.mode === "diff") {
        side = null;
        extra = `|A − B| · boxes of ${sel.side.toUpperCase()}`;
      }
      if (tag.hidden !== (modes.mode === "swipe")) tag.hidden = modes.mode === "swipe";
      el.classList.toggle("is-active", modes.mode === "side" ? sel.side === side : true);
      const shown = `${side ?? ""}|${extra}`;
      if (tagShown.get(tag) === shown) return;
      tagShown.set(tag, shown);
      tag.replaceChildren(...(side ? [Object.assign(document.createElement("b"), { textContent: side.toUpperCase() }), " "] : []), extra);
    });
  }

  function update() {
    const state = store.state;
    const active = store.activeChange();
    for (const mode of Object.keys(MODES)) press(`mode-${mode}`, modes.mode === mode);
    press("flicker-timer", modes.timer);
    press("side-a", state.sel.side === "a");
    press("side-b", state.sel.side === "b");
    press("absent", Boolean(active?.[`absent_${state.sel.side}`]));
    const setDisabled = (el, off) => {
      if (el.disabled !== off) el.disabled = off;
    };
    setDisabled($("[data-action=undo]"), !state.canUndo);
    setDisabled($("[data-action=redo]"), !state.canRedo);
    const t = viewTransform(canvas.getView(), canvas.size(), canvas.ref());
    setText($("[data-zoom-level]"), `${Math.round(t.sx * 100)}%`);
    root.classList.toggle("is-boxes-hidden", !canvas.ui.showBoxes);
    tags();
    const s = store.selectedBox();
    setText($("[data-status-box]"), s
      ? `Change ${s.change + 1} · box ${s.index + 1} on ${s.side.toUpperCase()}: ${s.box[0]}, ${s.box[1]} → ${s.box[2]}, ${s.box[3]} (${s.box[2] - s.box[0]} × ${s.box[3] - s.box[1]} px)`
      : "");
    if (grip.style.left !== `${modes.swipe * 100}%`) grip.style.left = `${modes.swipe * 100}%`;
    setAttr(grip, "aria-valuenow", String(Math.round(modes.swipe * 100)));
  }

  function pointer(info) {
    const frame = info && store.frames[info.side];
    const inside = info && info.x >= 0 && info.y >= 0 && info.x < frame.width && info.y < frame.height;
    setText($("[data-status-pointer]"), inside ? `${info.side.toUpperCase()} · x ${Math.floor(info.x)}, y ${Math.floor(info.y)}` : "");
  }

  function applyMode() {
    root.dataset.mode = modes.mode;
    swipe.hidden = modes.mode !== "swipe";
  }

  // The swipe slider: drag the grip (or click anywhere on the line), arrows move it by 2%.
  grip.addEventListener("pointerdown", (e) => {
    e.preventDefault();
    grip.setPointerCapture(e.pointerId);
    const move = (ev) => {
      const r = swipe.getBoundingClientRect();
      modes.setSwipe((ev.clientX - r.left) / r.width);
    };
    const up = () => {
      grip.removeEventListener("pointermove", move);
      grip.removeEventListener("pointerup", up);
    };
    grip.addEventListener("pointermove", move);
    grip.addEventListener("pointerup", up);
  });
  grip.addEventListener("keydown", (e) => {
    const step = { ArrowLeft: -0.02, ArrowRight: 0.02, Home: -1, End: 1 }[e.key];
    if (step === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    modes.setSwipe(modes.swipe + step);
  });

  return {
    banner, status, submitState, update, pointer, applyMode,
    /** What the banner shows about (the `source` it was given), or null. */
    bannerSource: () => bannerSource,
    clock(text) {
      $("[data-clock]").textContent = text;
    },
  };
}
