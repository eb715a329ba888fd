// The adjudication screen's own shortcuts, put in front of the workspace's (keys.js) — one table
// feeds the help overlay, and the workspace's groups are taken from its table, so neither lies.
import { SHORTCUTS } from "../../canvas/js/keys.js";

const group = (name) => SHORTCUTS.find(([title]) => title === name)?.[1] ?? [];

// Shift + digit toggles a layer; matched by the physical key so it works whatever Shift makes of it.
export const LAYER_KEYS = { 1: "one", 2: "two", 3: "gold", 4: "current" };

export const ADJ_SHORTCUTS = [
  ["Decisions", [
    ["1", "Accept annotation 1 (press twice)"],
    ["2", "Accept annotation 2 (press twice)"],
    ["E", "Edit a merged answer"],
    ["R", "Reject: type the reason, then Ctrl + Enter"],
    ["Ctrl + Enter", "Submit the merged answer, or confirm the reject"],
    ["Esc", "Cancel a pressed decision, leave a field"],
  ]],
  ["Show", [
    ["Shift + 1", "Annotation 1 on / off"],
    ["Shift + 2", "Annotation 2 on / off"],
    ["Shift + 3", "Known answer on / off (gold pairs)"],
    ["Shift + 4", "Standing answer on / off"],
    ["H", "Hide / show all boxes"],
  ]],
  ["View", [
    ["drag", "Pan (until you edit a merged answer; then Space + drag)"],
    ...group("View").filter(([keys]) => !["H", "L", "S", "M"].includes(keys)), // workspace-only layout keys
  ]],
  ["Merged answer", group("Changes and boxes").filter(([keys]) => keys !== "P")],
  ["General", [
    ["Ctrl + Z", "Undo (merged answer)"],
    ["Ctrl + Shift + Z", "Redo (also Ctrl + Y)"],
    ["?", "This help"],
  ]],
];

/**
 * The adjudication action for a keydown, or null to let the workspace's table decide.
 * `editing`: a merged answer is being edited — then 1 and 2 no longer accept an annotation
 * (the merge would be thrown away by a stray key) and R does not open the reject.
 */
export function adjudicationAction(e, { typing = false, editing = false } = {}) {
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return null;
  const digit = /^Digit([1-4])$/.exec(e.code ?? "")?.[1] ?? (/^[1-4]$/.test(e.key) ? e.key : null);
  if (e.shiftKey) return digit ? { action: "layer-toggle", arg: LAYER_KEYS[digit] } : null;
  const key = e.key.toLowerCase();
  if (key === "e") return { action: "merge-start" };
  if (editing) return null;
  if (key === "1" || key === "2") return { action: "accept-key", arg: Number(key) };
  if (key === "r") return { action: "reject-open" };
  return null;
}
