// Pure geometry for the workspace: the shared view, screen <-> image pixels, and box edits.
// Boxes are [x1, y1, x2, y2] in whole pixels of ONE side's displayed frame, 0 <= x1 < x2 <= width.
// A wrong rounding here silently shifts every stored box, so everything that produces a box
// goes through roundBox/clampBox and is pinned by tests/js/box.test.mjs.

export const MIN_PIXEL_SCALE = 0.02; // CSS px per image px, far beyond "fit" for huge images
export const MAX_PIXEL_SCALE = 64; // one image pixel = 64 CSS px: single pixels, crisp

/** The view shared by both panels: centre in normalised image coordinates, zoom relative to fit. */
export function fitView() {
  return { cx: 0.5, cy: 0.5, zoom: 1 };
}

/** CSS px per reference pixel that fits the reference frame into the panel (with a margin). */
export function fitScale(panel, ref, margin = 0.97) {
  return Math.min(panel.width / ref.width, panel.height / ref.height) * margin;
}

/**
 * Screen transform of one side in one panel. Both sides share the displayed rectangle of the
 * reference frame (A), so content stays aligned even when B has another size: B is stretched
 * onto A's rectangle exactly as the difference mode resamples it.
 */
export function viewTransform(view, panel, ref, side = ref) {
  const base = fitScale(panel, ref) * view.zoom;
  const dispW = ref.width * base;
  const dispH = ref.height * base;
  return {
    sx: dispW / side.width,
    sy: dispH / side.height,
    ox: panel.width / 2 - view.cx * dispW,
    oy: panel.height / 2 - view.cy * dispH,
  };
}

export function toImage(t, px, py) {
  return { x: (px - t.ox) / t.sx, y: (py - t.oy) / t.sy };
}

export function toScreen(t, x, y) {
  return { x: t.ox + x * t.sx, y: t.oy + y * t.sy };
}

export function clamp(value, lo, hi) {
  return Math.min(hi, Math.max(lo, value));
}

/** Zoom limits as view.zoom values for this panel: from far out to MAX_PIXEL_SCALE on A. */
export function zoomLimits(panel, ref) {
  const fit = fitScale(panel, ref);
  return { min: Math.min(0.25, MIN_PIXEL_SCALE / fit), max: Math.max(1, MAX_PIXEL_SCALE / fit) };
}

function clampCentre(view) {
  return { ...view, cx: clamp(view.cx, 0, 1), cy: clamp(view.cy, 0, 1) };
}

/** Zoom by `factor` keeping the image point under screen point `at` where it is. */
export function zoomAt(view, factor, at, panel, ref) {
  const { min, max } = zoomLimits(panel, ref);
  const zoom = clamp(view.zoom * factor, min, max);
  const before = fitScale(panel, ref) * view.zoom;
  const after = fitScale(panel, ref) * zoom;
  const dx = at.x - panel.width / 2;
  const dy = at.y - panel.height / 2;
  const u = view.cx + dx / (ref.width * before);
  const v = view.cy + dy / (ref.height * before);
  return clampCentre({ cx: u - dx / (ref.width * after), cy: v - dy / (ref.height * after), zoom });
}

/** Set the zoom so that one pixel of the reference frame is `scale` CSS px, around the centre. */
export function zoomToPixelScale(view, scale, panel, ref) {
  const target = scale / fitScale(panel, ref);
  const centre = { x: panel.width / 2, y: panel.height / 2 };
  return zoomAt(view, target / view.zoom, centre, panel, ref);
}

/** Move the view by a screen delta (the image follows the pointer). */
export function panBy(view, dx, dy, panel, ref) {
  const base = fitScale(panel, ref) * view.zoom;
  return clampCentre({ ...view, cx: view.cx - dx / (ref.width * base), cy: view.cy - dy / (ref.height * base) });
}

/**
 * Centre the view on a box of one side and zoom so it fills about half the panel: never below
 * fit, never beyond 8 screen px per pixel (enough to judge its edges).
 */
export function frameBox(box, side, panel, ref) {
  const [x1, y1, x2, y2] = box;
  const base = fitScale(panel, ref);
  const needed = Math.min(
    (0.5 * panel.width) / (((x2 - x1) / side.width) * ref.width * base),
    (0.5 * panel.height) / (((y2 - y1) / side.height) * ref.height * base),
  );
  const zoom = clamp(needed, 1, Math.max(1, 8 / base));
  return clampCentre({ zoom, cx: (x1 + x2) / 2 / side.width, cy: (y1 + y2) / 2 / side.height });
}

/** Order the corners, snap to the nearest pixel edges, keep inside the frame, at least 1×1. */
export function roundBox(raw, frame) {
  const [ax, ay, bx, by] = raw;
  const edges = (a, b, size) => {
    let lo = clamp(Math.round(Math.min(a, b)), 0, size);
    let hi = clamp(Math.round(Math.max(a, b)), 0, size);
    if (hi === lo) {
      if (hi < size) hi += 1;
      else lo -= 1;
    }
    return [lo, hi];
  };
  const [x1, x2] = edges(ax, bx, frame.width);
  const [y1, y2] = edges(ay, by, frame.height);
  return [x1, y1, x2, y2];
}

/** A box from two image points (a drag), in whole pixels. */
export function boxFromPoints(p, q, frame) {
  return roundBox([p.x, p.y, q.x, q.y], frame);
}

/** Shift a box by whole pixels, stopping at the frame's edges (the size never changes). */
export function moveBox(box, dx, dy, frame) {
  const [x1, y1, x2, y2] = box;
  const mx = clamp(Math.round(dx), -x1, frame.width - x2);
  const my = clamp(Math.round(dy), -y1, frame.height - y2);
  return [x1 + mx, y1 + my, x2 + mx, y2 + my];
}

/** Move the edges a handle names ("n", "se", ...) to an image point; flips when crossed. */
export function resizeBox(box, handle, point, frame) {
  let [x1, y1, x2, y2] = box;
  if (handle.includes("w")) x1 = point.x;
  if (handle.includes("e")) x2 = point.x;
  if (handle.includes("n")) y1 = point.y;
  if (handle.includes("s")) y2 = point.y;
  return roundBox([x1, y1, x2, y2], frame);
}

/** Grow or shrink the right/bottom edges by whole pixels (keyboard resize). */
export function growBox(box, dw, dh, frame) {
  const [x1, y1, x2, y2] = box;
  return [x1, y1, clamp(x2 + dw, x1 + 1, frame.width), clamp(y2 + dh, y1 + 1, frame.height)];
}

/**
 * Smallest box a drag may leave, in CSS px on screen (each side). A smaller one is a slip of the
 * hand — a click that moved, a pan whose Space came late — and stored it would count as a change
 * in the cross-check (a false dispute). Measured on screen, not in image pixels, so a 2×2 px
 * region is still drawable when zoomed in far enough to see it.
 */
export const MIN_DRAWN_PX = 6;

export function isTooSmall(box, t, min = MIN_DRAWN_PX) {
  return (box[2] - box[0]) * t.sx < min || (box[3] - box[1]) * t.sy < min;
}

/** The whole frame as a box (global changes: lighting, colour, noise). */
export function wholeFrame(frame) {
  return [0, 0, frame.width, frame.height];
}

/** True when the box is a valid box of the frame per the geometry rules. */
export function isValidBox(box, frame) {
  if (!Array.isArray(box) || box.length !== 4 || !box.every(Number.isInteger)) return false;
  const [x1, y1, x2, y2] = box;
  return x1 >= 0 && y1 >= 0 && x1 < x2 && y1 < y2 && x2 <= frame.width && y2 <= frame.height;
}

export function area(box) {
  return Math.max(0, box[2] - box[0]) * Math.max(0, box[3] - box[1]);
}

export function iou(a, b) {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  const inter = w > 0 && h > 0 ? w * h : 0;
  const union = area(a) + area(b) - inter;
  return union > 0 ? inter / union : 0;
}

/** The same region in another frame, scaled per axis: the common in-place change. */
export function mirrorBox(box, from, to) {
  const kx = to.width / from.width;
  const ky = to.height / from.height;
  return roundBox([box[0] * kx, box[1] * ky, box[2] * kx, box[3] * ky], to);
}

const HANDLES = ["nw", "n", "ne", "e", "se", "s", "sw", "w"];

/** Screen positions of the eight resize handles of a box. */
export function handlePoints(box, t) {
  const a = toScreen(t, box[0], box[1]);
  const b = toScreen(t, box[2], box[3]);
  const mx = (a.x + b.x) / 2;
  const my = (a.y + b.y) / 2;
  const at = { nw: [a.x, a.y], n: [mx, a.y], ne: [b.x, a.y], e: [b.x, my], se: [b.x, b.y], s: [mx, b.y], sw: [a.x, b.y], w: [a.x, my] };
  return HANDLES.map((name) => ({ name, x: at[name][0], y: at[name][1] }));
}

/**
 * What a pointer at screen point `p` grabs on a box: a handle name, an edge ("n", "e", ...),
 * "move" for the inside, or null. Corners win over edges.
 */
export function hitTest(box, t, p, tolerance = 6) {
  const a = toScreen(t, box[0], box[1]);
  const b = toScreen(t, box[2], box[3]);
  if (p.x < a.x - tolerance || p.x > b.x + tolerance || p.y < a.y - tolerance || p.y > b.y + tolerance) {
    return null;
  }
  const near = (v, w) => Math.abs(v - w) <= tolerance;
  const small = b.x - a.x < 3 * tolerance || b.y - a.y < 3 * tolerance;
  const inside = p.x > a.x && p.x < b.x && p.y > a.y && p.y < b.y;
  if (small && inside) return "move"; // a tiny box is grabbed by its handles from outside
  const corners = handlePoints(box, t).filter((h) => h.name.length === 2);
  const corner = corners.find((h) => near(p.x, h.x) && near(p.y, h.y));
  if (corner) return corner.name;
  if (near(p.y, a.y)) return "n";
  if (near(p.y, b.y)) return "s";
  if (near(p.x, a.x)) return "w";
  if (near(p.x, b.x)) return "e";
  return inside ? "move" : null;
}

export const HANDLE_CURSORS = {
  nw: "nwse-resize", se: "nwse-resize", ne: "nesw-resize", sw: "nesw-resize",
  n: "ns-resize", s: "ns-resize", e: "ew-resize", w: "ew-resize", move: "move",
};
