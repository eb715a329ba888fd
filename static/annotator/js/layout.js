// How the workspace uses the screen: the side panel open or collapsed, A beside or above B, and
// full screen. Choices persist in this browser; "auto" puts A above B when that shows the images
// larger (wide images), so a 16:9 pair is not shrunk to half the stage's width.
import { fitScale } from "../../canvas/js/box.js";

const KEY = "diffmark:layout";
const ARRANGEMENTS = ["auto", "side", "stacked"];

/** "side" or "stacked": whichever shows `frame` larger in a stage of `width` × `height`. */
export function bestArrangement(frame, width, height, gap = 6) {
  const side = fitScale({ width: (width - gap) / 2, height }, frame);
  const stacked = fitScale({ width, height: (height - gap) / 2 }, frame);
  return stacked > side * 1.05 ? "stacked" : "side";
}

function read(storage) {
  try {
    const saved = JSON.parse(storage?.getItem(KEY) ?? "{}");
    return {
      panel: saved.panel === "closed" ? "closed" : "open",
      arrange: ARRANGEMENTS.includes(saved.arrange) ? saved.arrange : "auto",
    };
  } catch {
    return { panel: "open", arrange: "auto" };
  }
}

/**
 * ctx: {root, stage, storage, frame() (A's frame), onChange() (the stage's panels changed size)}.
 * The panel may "peek": opened by an action that needs it (Enter, a refused submit) while the
 * person keeps it collapsed, and closed again when the focus goes back to the images.
 */
export function createLayout({ root, stage, storage, frame, onChange }) {
  const prefs = read(storage);
  let peeking = false;

  function save() {
    try {
      storage?.setItem(KEY, JSON.stringify(prefs));
    } catch {
      // storage full or blocked: the choice lasts for this page only
    }
  }

  function arrangement() {
    if (prefs.arrange !== "auto") return prefs.arrange;
    const style = getComputedStyle(stage);
    const width = stage.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const height = stage.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    return width > 0 && height > 0 ? bestArrangement(frame(), width, height) : "side";
  }

  function apply() {
    const open = prefs.panel === "open" || peeking;
    root.classList.toggle("is-panel-closed", !open);
    root.dataset.layout = arrangement();
    root.querySelectorAll("[data-action=panel-toggle]").forEach((b) => b.setAttribute("aria-pressed", String(open)));
    root.querySelectorAll("[data-action=layout-toggle]").forEach((b) => {
      b.setAttribute("aria-pressed", String(root.dataset.layout === "stacked"));
    });
    root.querySelectorAll("[data-action=fullscreen]").forEach((b) => {
      b.setAttribute("aria-pressed", String(document.fullscreenElement === root));
    });
  }

  function changed() {
    apply();
    onChange();
  }

  return {
    apply,
    get panelOpen() {
      return prefs.panel === "open" || peeking;
    },
    togglePanel() {
      peeking = false;
      prefs.panel = prefs.panel === "open" ? "closed" : "open";
      save();
      changed();
    },
    /** Show the panel for one edit without changing the saved choice. */
    peek() {
      if (prefs.panel === "open" || peeking) return;
      peeking = true;
      changed();
    },
    unpeek() {
      if (!peeking) return;
      peeking = false;
      changed();
    },
    toggleArrangement() {
      prefs.arrange = arrangement() === "stacked" ? "side" : "stacked";
      save();
      changed();
    },
    toggleFullscreen() {
      const request = document.fullscreenElement === root
        ? document.exitFullscreen()
        : root.requestFullscreen?.({ navigationUI: "hide" });
      Promise.resolve(request).catch(() => {}).finally(changed);
    },
  };
}
