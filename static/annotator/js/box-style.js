// How boxes are drawn, as the person likes them: opacity and line width, from the header's
// "Boxes" sliders, kept in this browser for every pair.

const KEY = "diffmark:boxes";
export const DEFAULT_STYLE = { opacity: 1, width: 1.5 };
const LIMITS = { opacity: [0.2, 1], width: [1, 4] };

/** A style with every value a number inside its limits (storage may hold anything). */
export function cleanStyle(raw) {
  const out = { ...DEFAULT_STYLE };
  for (const [name, [lo, hi]] of Object.entries(LIMITS)) {
    const v = Number(raw?.[name]);
    if (Number.isFinite(v)) out[name] = Math.min(hi, Math.max(lo, v));
  }
  return out;
}

/** Wire the sliders ([data-box-pref]); onChange(style) on every move. Returns the style now. */
export function bindBoxStyle({ root, storage, onChange, signal }) {
  let style = DEFAULT_STYLE;
  try {
    style = cleanStyle(JSON.parse(storage?.getItem(KEY) ?? "{}"));
  } catch {
    // unreadable: the defaults
  }
  const sliders = [...root.querySelectorAll("input[data-box-pref]")];
  for (const input of sliders) {
    input.value = String(style[input.dataset.boxPref]);
    input.addEventListener("input", () => {
      style = cleanStyle({ ...style, [input.dataset.boxPref]: input.value });
      try {
        storage?.setItem(KEY, JSON.stringify(style));
      } catch {
        // storage full: the style lasts for this page
      }
      onChange(style);
    }, { signal });
  }
  return style;
}
