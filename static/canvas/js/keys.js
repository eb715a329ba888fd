// Keyboard shortcuts: one table feeds both the key handling and the help overlay, so the help
// never lies. Single keys are ignored while typing in a field; Ctrl+Enter and Esc always work.

export const SHORTCUTS = [
  ["Quality", [["1 2 3 4", "Tier: excellent · good · fair · poor"]]],
  ["Category", [["Shift + 1…9 0", "Category of the active change (its key is shown in the list)"]]],
  ["View", [
    ["B", "Side by side"],
    ["F", "Flicker (press again to show the other image)"],
    ["T", "Flicker on a timer, on / off"],
    ["W", "Swipe (drag the slider)"],
    ["D", "Difference heatmap |A − B|"],
    ["Plus −", "Zoom in / out (wheel: around the cursor)"],
    ["0", "Fit the image"],
    ["Z", "Actual pixels (1:1)"],
    ["Space + drag", "Pan (or drag with the middle button)"],
    ["H", "Hide / show boxes"],
    ["L", "A beside B / A above B (wide images start above)"],
    ["S", "Collapse / open the side panel"],
    ["M", "Full screen on / off"],
  ]],
  ["Changes and boxes", [
    ["drag", "Draw a box (Shift + drag: draw inside another box)"],
    ["Tab", "Switch the active side A ⇄ B (Shift + Tab leaves the images)"],
    ["Enter", "Edit the active change: its first empty field"],
    ["N", "New change"],
    ["[ ]", "Previous / next change"],
    ["C", "Mirror the selected box (or all boxes) to the other side"],
    ["X", "Mark the active side absent / present"],
    ["G", "Whole image on A and B (global changes: lighting, colour, noise)"],
    ["Delete", "Remove the selected box"],
    ["← ↑ → ↓", "Nudge the selected box 1 px (Shift: 10 px)"],
    ["Alt + arrows", "Resize the selected box 1 px (Shift: 10 px)"],
    ["click", "On a changed region: its box on A and B at once (R: the region under the pointer)"],
    ["A", "Accept the drafted description (and its entity and category)"],
    ["P", "Accept the model's suggestions"],
  ]],
  ["General", [
    ["Ctrl + Z", "Undo"],
    ["Ctrl + Shift + Z", "Redo (also Ctrl + Y)"],
    ["Ctrl + Enter", "Submit"],
    ["?", "This help"],
    ["Esc", "Close, leave a field, deselect"],
  ]],
];

const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
const SINGLE = {
  b: "mode-side", f: "mode-flicker", w: "mode-swipe", d: "mode-diff", t: "flicker-timer",
  g: "whole-image", n: "change-new", "[": "change-prev", "]": "change-next", c: "mirror", x: "absent",
  p: "predictions-accept", r: "box-region", a: "accept-draft", h: "boxes-toggle", l: "layout-toggle", s: "panel-toggle", m: "fullscreen", z: "zoom-1", 0: "zoom-fit",
  "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", _: "zoom-out", "?": "help",
  delete: "delete-box", backspace: "delete-box",
};

/** True when keys typed into `el` are text, so single-key shortcuts must not fire. */
export function isTyping(el) {
  if (!el) return false;
  if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  if (el.tagName !== "INPUT") return false;
  // A slider's arrow keys move the slider, not the selected box.
  return !["checkbox", "radio", "button", "submit", "reset", "color", "file"].includes(el.type);
}

/**
 * The action for a keydown: {action, arg?} or null. `typing`: focus is in a text field;
 * `onStage`: focus is on the images (or nowhere) — only there do Tab and Enter belong to the
 * workspace; elsewhere they keep moving focus and pressing buttons.
 */
export function actionFor(e, { typing = false, onStage = true } = {}) {
  const mod = e.ctrlKey || e.metaKey;
  const key = e.key.toLowerCase();
  if (mod && key === "enter") return { action: "submit" };
  if (key === "escape") return { action: "escape" };
  if (typing) return null;
  if (mod) {
    if (key === "z") return { action: e.shiftKey ? "redo" : "undo" };
    if (key === "y") return { action: "redo" };
    return null;
  }
  const digit = e.shiftKey ? /^Digit(\d)$/.exec(e.code ?? "")?.[1] : undefined;
  if (digit !== undefined) return { action: "category", arg: (Number(digit) + 9) % 10 }; // Shift+0 is the 10th
  if (e.key in ARROWS) {
    const [dx, dy] = ARROWS[e.key].map((v) => v * (e.shiftKey ? 10 : 1));
    return { action: e.altKey ? "grow-box" : "nudge", arg: [dx, dy] };
  }
  if (e.altKey) return null;
  if (key === "tab") return onStage && !e.shiftKey ? { action: "side-toggle" } : null;
  if (key === "enter") return onStage ? { action: "edit-change" } : null;
  if (["1", "2", "3", "4"].includes(key)) return { action: "tier", arg: Number(key) - 1 };
  const action = SINGLE[key];
  return action ? { action } : null;
}

/** Fill the help overlay's body from a shortcut table (the workspace's by default). */
// A lone "+" separates keys pressed together ("Shift + drag"); the plus key itself is written
// "Plus" in the table and shown as an ASCII "+" (a full-width "＋" is an empty box in many fonts).
const KEY_CAPS = { Plus: "+" };

export function renderHelp(container, table = SHORTCUTS) {
  container.replaceChildren(...table.map(([group, rows]) => {
    const section = document.createElement("section");
    const h = document.createElement("h3");
    h.textContent = group;
    const dl = document.createElement("dl");
    for (const [keys, label] of rows) {
      const dt = document.createElement("dt");
      for (const token of keys.split(" ")) {
        if (token === "+") {
          dt.append(" + ");
          continue;
        }
        const kbd = document.createElement("kbd");
        kbd.textContent = KEY_CAPS[token] ?? token;
        dt.append(kbd);
      }
      const dd = document.createElement("dd");
      dd.textContent = label;
      dl.append(dt, dd);
    }
    section.append(h, dl);
    return section;
  }));
}

const REPEATABLE = new Set(["nudge", "grow-box", "zoom-in", "zoom-out", "undo", "redo"]);

/**
 * Document-level key handling for one workspace; Space is held for panning (ui.spaceHeld).
 * `resolve(e, {typing, onStage})` maps a keydown to {action, arg} (default actionFor): a page
 * with shortcuts of its own puts them in front of the workspace's.
 *
 * Space pans wherever the focus is — on a tier, a panel button, the toolbar, a select. In a
 * text field it types a space (and a drag meanwhile still pans). On a button, radio or checkbox
 * the press is left to the control, so Space still works it from the keyboard: it acts on the
 * key's release, and a drag moves the focus to the images first, so after a pan the release
 * lands there and presses nothing. Were Space ignored on controls, Space+drag after clicking a
 * tier would draw a stray box.
 */
export function bindKeys({ root, stage, ui, run, signal, resolve = actionFor }) {
  const setSpace = (held) => {
    ui.spaceHeld = held;
    stage.classList.toggle("is-panning", held);
  };
  document.addEventListener("keydown", (e) => {
    if (!root.isConnected || document.querySelector("dialog[open]")) return; // a dialog handles its own keys
    const typing = isTyping(e.target);
    const onStage = e.target === stage || e.target === document.body;
    if (e.key === " " && (root.contains(e.target) || onStage)) {
      // In a text field Space types (a drag while it is held still pans, never draws); on a
      // button, radio or checkbox it is left to the control; elsewhere it must not scroll.
      const control = e.target.closest?.("button, a, input, summary");
      if (!control && !(typing && e.target.tagName !== "SELECT")) e.preventDefault();
      if (!ui.spaceHeld) setSpace(true);
      if (!typing || e.target.tagName === "SELECT") return;
    }
    const hit = resolve(e, { typing, onStage });
    if (!hit) return;
    e.preventDefault();
    if (!e.repeat || REPEATABLE.has(hit.action)) run(hit.action, hit.arg);
  }, { signal });
  document.addEventListener("keyup", (e) => e.key === " " && setSpace(false), { signal });
  window.addEventListener("blur", () => setSpace(false), { signal });
}
