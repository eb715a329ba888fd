// Right after a gold pair is submitted (in projects that show it): the annotator's own boxes
// against the known answer, per side, in a dialog that stays while the next pair loads. Asked
// of the server after every submit — the page never knows beforehand which pairs are gold.
import { iou } from "../../canvas/js/box.js";
import { FEEDBACK_COLORS } from "../../canvas/js/palette.js";

const YOURS = FEEDBACK_COLORS.yours; // solid
const KNOWN = FEEDBACK_COLORS.known; // dashed: told apart by pattern as well as by colour
const WIDTH = 380;

/** Per side, how well the known boxes were found: the best IoU of each with one of yours. */
export function sideScores(yours, known, side) {
  const mine = yours.flatMap((c) => c[`boxes_${side}`] ?? []);
  return known.flatMap((c) => c[`boxes_${side}`] ?? []).map((k) => Math.max(0, ...mine.map((b) => iou(b, k))));
}

function drawSide(canvas, src, frame, groups) {
  const k = WIDTH / frame.width;
  canvas.width = WIDTH;
  canvas.height = Math.round(frame.height * k);
  const ctx = canvas.getContext("2d");
  const img = new Image();
  img.onload = () => {
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    for (const { boxes, color, dashed } of groups) {
      ctx.setLineDash(dashed ? [7, 4] : []);
      for (const [x1, y1, x2, y2] of boxes) {
        ctx.lineWidth = 4;
        ctx.strokeStyle = "rgba(0,0,0,.55)";
        ctx.strokeRect(x1 * k, y1 * k, (x2 - x1) * k, (y2 - y1) * k);
        ctx.lineWidth = 2;
        ctx.strokeStyle = color;
        ctx.strokeRect(x1 * k, y1 * k, (x2 - x1) * k, (y2 - y1) * k);
      }
    }
  };
  img.src = src;
}

function el(tag, attrs = {}, ...children) {
  const node = Object.assign(document.createElement(tag), attrs);
  node.append(...children);
  return node;
}

/** Fetch the feedback; show it when there is some (a 404 means: not a gold pair). */
export async function showGoldFeedback(url, send) {
  const result = await send("GET", url);
  if (!result.ok || !result.data) return null;
  const { yours, known, sides, images } = result.data;
  const dialog = el("dialog", { className: "ws-dialog ws-gold" });
  dialog.dataset.goldFeedback = "";
  const close = el("button", { type: "button", className: "ws-icon", textContent: "×" });
  close.setAttribute("aria-label", "Close");
  close.addEventListener("click", () => dialog.close());
  const row = el("div", { className: "ws-gold-sides" });
  for (const side of ["a", "b"]) {
    const canvas = el("canvas");
    const scores = sideScores(yours, known, side);
    const mine = yours.flatMap((c) => c[`boxes_${side}`] ?? []);
    const caption = scores.length
      ? `Best overlap (IoU) with the known box${scores.length > 1 ? "es" : ""}: ${scores.map((s) => s.toFixed(2)).join(", ")}`
      : mine.length ? "The known answer has nothing here (absent side)." : "Nothing here in either answer: right.";
    drawSide(canvas, images[side], sides[side], [
      { boxes: known.flatMap((c) => c[`boxes_${side}`] ?? []), color: KNOWN, dashed: true },
      { boxes: mine, color: YOURS, dashed: false },
    ]);
    row.append(el("figure", {}, canvas, el("figcaption", {}, el("b", { textContent: side.toUpperCase() }), ` ${caption}`)));
  }
  const legend = el("p", { className: "ws-gold-legend" },
    el("span", { className: "ws-gold-yours", textContent: "your boxes" }), " ",
    el("span", { className: "ws-gold-known", textContent: "known answer (dashed)" }));
  dialog.append(
    el("div", { className: "ws-dialog-head" }, el("h2", { textContent: "That was a gold pair: your answer against the known one" }), close),
    legend, row,
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}
