// Paints one panel: image layers (optionally clipped, for swipe), a pixel grid when zoomed far
// in, boxes with labels and handles, and a ghost cursor. Knows nothing about the answer; the
// scene (scene.js) says what to paint where. Canvas backing store follows devicePixelRatio.
import { handlePoints, toImage, toScreen } from "./box.js";

const GRID_FROM = 12; // CSS px per image pixel from which pixel edges are drawn

export function createViewer(canvas) {
  const ctx = canvas.getContext("2d", { alpha: false });
  let width = 0;
  let height = 0;
  let dpr = 1;

  function resize() {
    const rect = canvas.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    width = Math.max(1, Math.round(rect.width));
    height = Math.max(1, Math.round(rect.height));
    const w = Math.round(width * dpr);
    const h = Math.round(height * dpr);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
  }

  // Snap a CSS coordinate to the device pixel grid so 2px lines stay sharp.
  const snap = (v) => Math.round(v * dpr) / dpr;

  /** Draw only the visible part of the source, pixel-aligned with toScreen(). */
  function drawLayer({ source, t, frame, clip, alpha = 1 }) {
    // An image still loading (or broken) has no pixels yet; drawImage would throw on a broken one.
    if (!source || source.naturalWidth === 0) return;
    const a = toImage(t, 0, 0);
    const b = toImage(t, width, height);
    const x0 = Math.max(0, Math.floor(a.x));
    const y0 = Math.max(0, Math.floor(a.y));
    const x1 = Math.min(frame.width, Math.ceil(b.x));
    const y1 = Math.min(frame.height, Math.ceil(b.y));
    if (x1 <= x0 || y1 <= y0) return;
    // The source may be a canvas in another frame (the difference heatmap is in A's frame).
    const kx = (source.naturalWidth || source.width) / frame.width;
    const ky = (source.naturalHeight || source.height) / frame.height;
    const p = toScreen(t, x0, y0);
    const q = toScreen(t, x1, y1);
    ctx.save();
    if (clip) {
      ctx.beginPath();
      ctx.rect(clip.x0, 0, clip.x1 - clip.x0, height);
      ctx.clip();
    }
    ctx.globalAlpha = alpha;
    // Above 1:1 show the original pixels as crisp squares; below, average them.
    ctx.imageSmoothingEnabled = t.sx * dpr < 1 || t.sy * dpr < 1;
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(source, x0 * kx, y0 * ky, (x1 - x0) * kx, (y1 - y0) * ky, p.x, p.y, q.x - p.x, q.y - p.y);
    ctx.restore();
  }

  function drawGrid(t, frame) {
    if (t.sx < GRID_FROM || t.sy < GRID_FROM) return;
    const a = toImage(t, 0, 0);
    const b = toImage(t, width, height);
    ctx.save();
    ctx.strokeStyle = "rgba(128,128,128,.28)";
    ctx.lineWidth = 1 / dpr;
    ctx.beginPath();
    for (let x = Math.max(0, Math.ceil(a.x)); x <= Math.min(frame.width, b.x); x++) {
      const sx = snap(toScreen(t, x, 0).x) + 0.5 / dpr;
      ctx.moveTo(sx, Math.max(0, t.oy));
      ctx.lineTo(sx, Math.min(height, t.oy + frame.height * t.sy));
    }
    for (let y = Math.max(0, Math.ceil(a.y)); y <= Math.min(frame.height, b.y); y++) {
      const sy = snap(toScreen(t, 0, y).y) + 0.5 / dpr;
      ctx.moveTo(Math.max(0, t.ox), sy);
      ctx.lineTo(Math.min(width, t.ox + frame.width * t.sx), sy);
    }
    ctx.stroke();
    ctx.restore();
  }

  // Above the box's top edge (inside when there is no room); `below`: under its bottom edge.
  function drawLabel(text, x, y, color, below = false) {
    ctx.font = "600 11px system-ui, sans-serif";
    const w = Math.ceil(ctx.measureText(text).width) + 8;
    const top = below ? (y + 16 <= height ? y : y - 16) : y - 16 >= 0 ? y - 16 : y;
    const left = Math.max(1, Math.min(x, width - w + 1)); // a box at the right edge keeps its label readable
    ctx.fillStyle = color;
    ctx.fillRect(snap(left) - 1, snap(top), w, 16);
    ctx.fillStyle = "#0b0e14";
    ctx.fillText(text, snap(left) + 3, snap(top) + 12);
  }

  // The person's box style (opacity, line width): set per paint from the scene.
  let style = { opacity: 1, width: 1.5 };

  function drawBox(item) {
    const { box, t, color, dashed, faint, selected, label, fill, labelBelow } = item;
    const p = toScreen(t, box[0], box[1]);
    const q = toScreen(t, box[2], box[3]);
    const x = snap(p.x);
    const y = snap(p.y);
    const w = snap(q.x) - x;
    const h = snap(q.y) - y;
    ctx.save();
    ctx.globalAlpha = (faint ? 0.55 : 1) * style.opacity;
    if (fill) {
      ctx.fillStyle = fill;
      ctx.fillRect(x, y, w, h);
    }
    ctx.setLineDash(dashed ? [6, 4] : []);
    ctx.lineWidth = (selected ? 0.5 : 0) + style.width + 2;
    ctx.strokeStyle = "rgba(6,8,12,.6)"; // dark halo: readable on bright and dark photos
    ctx.strokeRect(x, y, w, h);
    ctx.lineWidth = (selected ? 0.5 : 0) + style.width;
    ctx.strokeStyle = color;
    ctx.strokeRect(x, y, w, h);
    ctx.setLineDash([]);
    if (label) drawLabel(label, x, labelBelow ? y + h : y, color, labelBelow);
    if (selected && Math.min(w, h) >= 16) {
      // Small on screen: corners only, so the handles do not hide the box.
      const handles = handlePoints(box, t).filter((hp) => Math.min(w, h) >= 36 || hp.name.length === 2);
      for (const hp of handles) {
        ctx.fillStyle = "#fff";
        ctx.strokeStyle = color;
        ctx.lineWidth = 1.5;
        ctx.fillRect(snap(hp.x) - 4, snap(hp.y) - 4, 8, 8);
        ctx.strokeRect(snap(hp.x) - 4, snap(hp.y) - 4, 8, 8);
      }
    }
    ctx.restore();
  }

  // A pill at the top of the image (inside the panel), one row per note, dashed when inactive.
  function drawNote({ text, color, active }, row, t) {
    ctx.save();
    ctx.font = "600 13px system-ui, sans-serif";
    const w = Math.ceil(ctx.measureText(text).width) + 20;
    const x = snap(Math.max(4, Math.min(width - w - 4, (t ? t.ox : 0) + 10)));
    const y = snap(Math.max(4, (t ? t.oy : 0) + 10) + row * 28);
    ctx.globalAlpha = active ? 1 : 0.8;
    ctx.fillStyle = "rgba(10,12,18,.82)";
    ctx.fillRect(x, y, w, 22);
    ctx.setLineDash(active ? [] : [4, 3]);
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.strokeRect(x + 1, y + 1, w - 2, 20);
    ctx.fillStyle = "#fff";
    ctx.fillText(text, x + 10, y + 15);
    ctx.restore();
  }

  function drawCursor({ x, y }) {
    ctx.save();
    ctx.strokeStyle = "rgba(255,255,255,.85)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(snap(x) - 9, snap(y) + 0.5);
    ctx.lineTo(snap(x) + 10, snap(y) + 0.5);
    ctx.moveTo(snap(x) + 0.5, snap(y) - 9);
    ctx.lineTo(snap(x) + 0.5, snap(y) + 10);
    ctx.stroke();
    ctx.restore();
  }

  function drawDivider(x) {
    ctx.save();
    ctx.fillStyle = "rgba(6,8,12,.6)";
    ctx.fillRect(snap(x) - 2, 0, 4, height);
    ctx.fillStyle = "#fff";
    ctx.fillRect(snap(x) - 1, 0, 2, height);
    ctx.restore();
  }

  /** scene: {layers, grid: {t, frame}, boxes ({box, t, color, dashed, faint, selected, label,
   * labelBelow, fill}), cursor, divider, message} */
  function paint(scene) {
    style = { opacity: 1, width: 1.5, ...scene.style };
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#161a22";
    ctx.fillRect(0, 0, width, height);
    for (const layer of scene.layers ?? []) drawLayer(layer);
    if (scene.grid) drawGrid(scene.grid.t, scene.grid.frame);
    if (scene.divider != null) drawDivider(scene.divider);
    for (const item of scene.boxes ?? []) drawBox(item);
    (scene.notes ?? []).forEach((note, i) => drawNote(note, i, scene.t));
    if (scene.cursor) drawCursor(scene.cursor);
    if (scene.message) {
      ctx.fillStyle = "#c9d1e3";
      ctx.font = "14px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.fillText(scene.message, width / 2, height / 2);
      ctx.textAlign = "start";
    }
  }

  return {
    canvas,
    resize,
    paint,
    get size() {
      return { width, height };
    },
  };
}
