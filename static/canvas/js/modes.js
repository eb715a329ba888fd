// View modes: side by side, flicker (A/B by key or on a timer), swipe (a slider over the
// overlay) and difference (a heatmap of |A−B| computed from the original pixels).

export const MODES = {
  side: "Side by side",
  flicker: "Flicker",
  swipe: "Swipe",
  diff: "Difference",
};

export const FLICKER_MS = 500;

/**
 * onChange() after any mode change; onFlick() each timer tick (the caller shows the other side).
 * The timer holds while `hold` is set (a box is being drawn on the shown side).
 */
export function createModes({ onChange, onFlick }) {
  const state = { mode: "side", timer: false, swipe: 0.5, hold: false };
  let handle = null;

  function stopTimer() {
    clearInterval(handle);
    handle = null;
    state.timer = false;
  }

  const api = {
    get mode() {
      return state.mode;
    },
    get timer() {
      return state.timer;
    },
    get swipe() {
      return state.swipe;
    },
    get single() {
      return state.mode !== "side";
    },
    setMode(mode) {
      if (!(mode in MODES)) return;
      if (mode !== "flicker") stopTimer();
      state.mode = mode;
      onChange();
    },
    toggleTimer() {
      if (state.timer) {
        stopTimer();
      } else {
        state.mode = "flicker";
        state.timer = true;
        handle = setInterval(() => state.hold || onFlick(), FLICKER_MS);
      }
      onChange();
    },
    setHold(hold) {
      state.hold = hold;
    },
    setSwipe(fraction) {
      state.swipe = Math.min(1, Math.max(0, fraction));
      onChange();
    },
    dispose: stopTimer,
  };
  return api;
}

// An inferno-like ramp: black for "identical", through purple and red to pale yellow.
const STOPS = [
  [0, [0, 0, 4]], [0.25, [66, 10, 104]], [0.5, [147, 38, 103]],
  [0.75, [221, 81, 58]], [0.9, [252, 165, 10]], [1, [252, 255, 164]],
];

/** 256 RGB triples indexed by the (sqrt-compressed) difference. */
export function heatLut() {
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const v = i / 255;
    let k = 1;
    while (k < STOPS.length - 1 && STOPS[k][0] < v) k++;
    const [v0, c0] = STOPS[k - 1];
    const [v1, c1] = STOPS[k];
    const f = (v - v0) / (v1 - v0);
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(c0[c] + (c1[c] - c0[c]) * f);
  }
  return lut;
}

/**
 * RGBA pixels of the heatmap from two RGBA buffers of the same size. The difference of a pixel is
 * the largest channel difference; a square root makes faint, low-level changes (noise, JPEG
 * artefacts) visible. A dim grey copy of A underneath keeps the scene recognisable.
 */
export function differencePixels(a, b, out = new Uint8ClampedArray(a.length), lut = heatLut()) {
  const index = new Uint8Array(256);
  for (let d = 0; d < 256; d++) index[d] = Math.round(Math.sqrt(d / 255) * 255);
  for (let p = 0; p < a.length; p += 4) {
    const d = Math.max(Math.abs(a[p] - b[p]), Math.abs(a[p + 1] - b[p + 1]), Math.abs(a[p + 2] - b[p + 2]));
    const grey = ((a[p] * 77 + a[p + 1] * 150 + a[p + 2] * 29) >> 8) * 0.28;
    const i = index[d] * 3;
    out[p] = Math.max(lut[i], grey);
    out[p + 1] = Math.max(lut[i + 1], grey);
    out[p + 2] = Math.max(lut[i + 2], grey);
    out[p + 3] = 255;
  }
  return out;
}

/** The heatmap as a canvas in A's frame; B is resampled onto A's frame when sizes differ. */
export function computeDifference(imageA, imageB, frameA) {
  const { width, height } = frameA;
  const read = (image) => {
    const canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(image, 0, 0, width, height);
    return { canvas, ctx, pixels: ctx.getImageData(0, 0, width, height) };
  };
  const a = read(imageA);
  const b = read(imageB);
  differencePixels(a.pixels.data, b.pixels.data, a.pixels.data);
  a.ctx.putImageData(a.pixels, 0, 0);
  return a.canvas;
}
