// Time spent on the pair: counts only while the page is visible, and continues from a draft.

export function createClock({
  initialMs = 0,
  now = () => performance.now(),
  isVisible = () => document.visibilityState === "visible",
} = {}) {
  let total = initialMs;
  let since = isVisible() ? now() : null;
  return {
    elapsed: () => total + (since === null ? 0 : now() - since),
    /** Call on visibilitychange. */
    update() {
      if (isVisible()) {
        if (since === null) since = now();
      } else if (since !== null) {
        total += now() - since;
        since = null;
      }
    },
    reset(ms) {
      total = ms;
      since = isVisible() ? now() : null;
    },
  };
}

/** "1:05", "12:00", "1:02:03". */
export function formatDuration(ms) {
  const s = Math.floor(ms / 1000);
  const two = (n) => String(n).padStart(2, "0");
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}
