// The stage both comparison screens share: sizing it to the viewport, and the two images whose
// decoded size is the frame every box is measured in (EXIF orientation applied by the browser).

/**
 * Fill the viewport below the page header and repaint on any resize; returns {fit, observer}.
 * `arrange()` (optional) lays the panels out for the stage's new size before they are measured.
 */
export function fitStage(root, stage, views, invalidate, arrange = () => {}) {
  const fit = () => {
    root.style.setProperty("--ws-top", `${Math.max(0, root.getBoundingClientRect().top + window.scrollY)}px`);
    arrange();
    views.forEach((v) => v.viewer.resize());
    invalidate();
  };
  const observer = new ResizeObserver(fit);
  observer.observe(stage);
  return { fit, observer };
}

/**
 * Call onLoaded() once each image has decoded; when the browser's size differs from the
 * server's, trust what the person sees (boxes follow it) and say so.
 * ctx: {images, frames, store, chrome, on, pair, onLoaded, failed (the error banner text)}.
 */
export function watchImages({ images, frames, store, chrome, on, pair, onLoaded, failed }) {
  for (const side of ["a", "b"]) {
    const img = images[side];
    const loaded = () => {
      if (!img.naturalWidth) return;
      const natural = { width: img.naturalWidth, height: img.naturalHeight };
      if (natural.width !== frames[side].width || natural.height !== frames[side].height) {
        chrome.banner(`Image ${side.toUpperCase()} is ${natural.width}×${natural.height} in this browser but ${frames[side].width}×${frames[side].height} on the server; boxes follow the image you see — please report pair ${pair}.`, "warn");
        frames[side] = natural;
        store.setFrames({ ...frames });
      }
      onLoaded();
    };
    if (img.complete) loaded();
    else on(img, "load", loaded);
    on(img, "error", () => chrome.banner(`Image ${side.toUpperCase()} did not load. ${failed}`, "error"));
  }
}
