// The next pair, loaded while this one is answered: the server leases the pair after this one
// (annotators may only fetch images of pairs leased to them) and sends its workspace fragment;
// the browser keeps the image bytes (cacheable, privately). After submit the fragment is swapped
// in at once and draws from the cache, instead of two more round trips and megabytes of
// originals. `take()` hands the fragment out once, and only while its lease is comfortably live.

export const PREFETCH_DELAY_MS = 1500; // this pair's own images and first paint go first

const MARGIN_MS = 60 * 1000; // a lease this close to its end is left to `next` to renew

/** The fragment while its lease has a minute left, else null. */
export function usable(ahead, now = Date.now()) {
  if (!ahead?.html || !ahead.url) return null;
  const ends = Date.parse(ahead.expires_at);
  return Number.isFinite(ends) && ends - now > MARGIN_MS ? ahead : null;
}

/**
 * Start once; returns {images, take()}. ctx: {url (the lease-ahead URL), send(method, url,
 * body), ready() (a promise: this pair's images are in), signal}.
 */
export function prefetchNext({ url, send, ready, signal, delay = PREFETCH_DELAY_MS }) {
  const held = []; // decoded images, kept referenced so the memory cache keeps them
  let timer = null;
  let ahead = null;
  const run = async () => {
    if (signal.aborted) return;
    const result = await send("POST", url, {});
    if (!result.ok || signal.aborted) return;
    ahead = result.data;
    for (const src of result.data?.images ?? []) {
      const img = new Image();
      img.decoding = "async";
      img.src = src;
      held.push(img);
      img.decode().catch(() => {}); // a failure only means the next pair loads the usual way
    }
  };
  Promise.resolve(ready()).then(() => {
    if (!signal.aborted) timer = setTimeout(run, delay);
  });
  signal.addEventListener("abort", () => clearTimeout(timer));
  return {
    images: held,
    take() {
      const ready = usable(ahead);
      ahead = null;
      return ready;
    },
  };
}
