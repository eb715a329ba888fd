// The side panel: one card per change (category, description, entity and box count / absent per
// side), the tier radios and defect checkboxes, and field errors in place. Cards are kept per
// change and updated in place, so typing never loses focus when the store re-renders.
import { changeColor } from "./scene.js";

const FIELDS = ["category", "description", "entity_a", "entity_b", "boxes_a", "boxes_b"];

function boxCount(c, side) {
  if (c[`absent_${side}`]) return "";
  const n = c[`boxes_${side}`].length;
  return n ? `${n} box${n > 1 ? "es" : ""}` : "no box";
}

/** Which slot an error path ("changes.0.boxes_b.1") belongs to: {change, slot} or {slot}. */
export function errorSlot(path) {
  const m = /^changes\.(\d+)(?:\.([a-z_]+))?/.exec(path);
  if (!m) return { slot: path.split(".")[0] || "_" };
  return { change: Number(m[1]), slot: FIELDS.includes(m[2]) ? m[2] : "_" };
}

/** Shift + 1…9, 0 picks the first ten categories (keys.js); the list shows each one's key. */
export function categoryLabel(name, index) {
  return index < 10 ? `${name}  ⇧${(index + 1) % 10}` : name;
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

function setValue(el, value) {
  if (el.value !== value && document.activeElement !== el) el.value = value;
}

/**
 * ctx: {store, config, onFrameBox(change, side), colorOf (change index → colour, optional),
 * reveal() (optional: show the panel when collapsed, before a field in it gets the focus),
 * focusStage() (optional: give the images the keys), draftOf(change) (optional: the drafted
 * description offered for a change, "" for none)}
 */
export function createPanel(root, ctx) {
  const { store, config } = ctx;
  const list = root.querySelector("[data-change-list]");
  const template = root.querySelector("template[data-change-template]");
  const cards = new Map();
  const categories = new Map(config.categories.map((c) => [c.slug, c]));
  const colorOf = ctx.colorOf ?? changeColor;

  function buildCard(change) {
    const card = template.content.firstElementChild.cloneNode(true);
    const id = `ws-change-${change.key}`;
    card.dataset.key = change.key;
    card.querySelectorAll("[data-id]").forEach((el) => {
      el.id = `${id}-${el.dataset.id}`;
    });
    card.querySelectorAll("label[data-for]").forEach((el) => {
      el.htmlFor = `${id}-${el.dataset.for}`;
    });
    const select = card.querySelector("[data-input=category]");
    config.categories.forEach((c, i) => select.add(new Option(categoryLabel(c.name, i), c.slug)));
    return card;
  }

  const indexOf = (card) => store.state.changes.findIndex((c) => String(c.key) === card.dataset.key);

  function renderCard(card, c, i, state) {
    const active = i === state.sel.change;
    const errorsHere = Object.entries(state.errors).filter(([k]) => errorSlot(k).change === i);
    card.classList.toggle("is-active", active);
    card.classList.toggle("has-error", errorsHere.length > 0);
    if (card.style.getPropertyValue("--change-color") !== colorOf(i)) card.style.setProperty("--change-color", colorOf(i));
    setAttr(card, "aria-label", `Change ${i + 1}`);
    setText(card.querySelector("[data-number]"), String(i + 1));
    setAttr(card.querySelector("[data-act=remove]"), "aria-label", `Remove change ${i + 1}`);
    setValue(card.querySelector("[data-input=category]"), c.category);
    setText(card.querySelector("[data-hint]"), categories.get(c.category)?.hint ?? "");
    setValue(card.querySelector("[data-input=description]"), c.description);
    const draft = active && ctx.draftOf ? ctx.draftOf(c) : "";
    const draftEl = card.querySelector("[data-draft]");
    if (draftEl) {
      setText(draftEl.querySelector("[data-draft-text]"), draft);
      draftEl.hidden = !draft || draft === c.description;
    }
    const name = (side) => (c[`absent_${side}`] ? "absent" : c[`entity_${side}`].trim() || "?");
    setText(card.querySelector("[data-summary]"), `${name("a")} → ${name("b")}`);
    for (const side of ["a", "b"]) {
      const row = card.querySelector(`[data-side-row=${side}]`);
      const absent = c[`absent_${side}`];
      row.classList.toggle("is-side", active && state.sel.side === side);
      row.classList.toggle("is-absent", absent);
      const entity = row.querySelector("[data-input^=entity]");
      setValue(entity, c[`entity_${side}`]);
      if (entity.disabled !== absent) entity.disabled = absent;
      setAttr(entity, "placeholder", absent ? "absent" : "Entity");
      setText(row.querySelector("[data-count]"), boxCount(c, side));
      const count = row.querySelector("[data-count]");
      if (count.disabled !== !c[`boxes_${side}`].length) count.disabled = !c[`boxes_${side}`].length;
      setAttr(row.querySelector("[data-act=absent]"), "aria-pressed", String(absent));
    }
    const link = card.querySelector("[data-act=link]");
    const linkable = !c.absent_a && !c.absent_b;
    if (link.disabled !== !linkable) link.disabled = !linkable;
    setAttr(link, "aria-pressed", String(linkable && c.linked));
    card.querySelector("[data-input=entity_b]").classList.toggle("is-linked", linkable && c.linked);
    const byslot = {};
    for (const [path, messages] of errorsHere) (byslot[errorSlot(path).slot] ??= []).push(...messages);
    card.querySelectorAll("[data-error]").forEach((el) => {
      setText(el, (byslot[el.dataset.error] ?? []).join(" "));
      if (el.hidden !== !byslot[el.dataset.error]) el.hidden = !byslot[el.dataset.error];
    });
  }

  function render() {
    const state = store.state;
    const keep = new Set(state.changes.map((c) => String(c.key)));
    for (const [key, card] of cards) {
      if (!keep.has(key)) {
        card.remove();
        cards.delete(key);
      }
    }
    state.changes.forEach((c, i) => {
      let card = cards.get(String(c.key));
      if (!card) {
        card = buildCard(c);
        cards.set(String(c.key), card);
      }
      if (list.children[i] !== card) list.insertBefore(card, list.children[i] ?? null);
      renderCard(card, c, i, state);
    });
    const empty = root.querySelector("[data-changes-empty]");
    if (empty.hidden !== state.changes.length > 0) empty.hidden = state.changes.length > 0;
    root.querySelectorAll("input[name=tier]").forEach((r) => {
      r.checked = r.value === state.tier;
    });
    root.querySelectorAll("input[name=defects]").forEach((r) => {
      r.checked = state.defects.includes(r.value);
    });
    // Top-level errors by name; any the page has no place for (or the change they name is gone)
    // go to the general slot, so no server message is ever dropped.
    const slots = new Set([...root.querySelectorAll("[data-error-for]")].map((el) => el.dataset.errorFor));
    const general = Object.entries(state.errors)
      .filter(([k]) => {
        const { change, slot } = errorSlot(k);
        return change === undefined ? !slots.has(slot) || slot === "_" : change >= state.changes.length;
      })
      .flatMap(([, m]) => m);
    root.querySelectorAll("[data-error-for]").forEach((el) => {
      const messages = el.dataset.errorFor === "_" ? general : state.errors[el.dataset.errorFor] ?? [];
      setText(el, messages.join(" "));
      if (el.hidden !== !messages.length) el.hidden = !messages.length;
    });
  }

  function activeCard() {
    return cards.get(String(store.activeChange()?.key));
  }

  // One undo step per typing session in a field, not per keystroke.
  list.addEventListener("input", (e) => {
    const card = e.target.closest("[data-key]");
    const field = e.target.dataset.input;
    if (!card || !field || field === "category") return;
    const i = indexOf(card);
    const coalesce = `text:${card.dataset.key}:${field}`;
    if (field.startsWith("entity_")) store.setEntity(i, field.slice(-1), e.target.value, coalesce);
    else store.updateChange(i, { [field]: e.target.value }, coalesce);
  });
  list.addEventListener("change", (e) => {
    const card = e.target.closest("[data-key]");
    if (card && e.target.dataset.input === "category") store.updateChange(indexOf(card), { category: e.target.value });
  });
  list.addEventListener("focusin", (e) => {
    const card = e.target.closest("[data-key]");
    if (!card) return;
    const i = indexOf(card);
    const row = e.target.closest("[data-side-row]");
    const side = row ? row.dataset.sideRow : store.state.sel.side;
    if (i !== store.state.sel.change || side !== store.state.sel.side) store.select(i, side, -1);
  });
  list.addEventListener("click", (e) => {
    const card = e.target.closest("[data-key]");
    const act = e.target.closest("[data-act]")?.dataset.act;
    if (!card) return;
    const i = indexOf(card);
    const side = e.target.closest("[data-side-row]")?.dataset.sideRow;
    if (act === "remove") store.removeChange(i);
    else if (act === "absent") store.toggleAbsent(side, i);
    else if (act === "link") store.toggleLink(i);
    else if (act === "side") store.select(i, side, -1);
    else if (act === "count") ctx.onFrameBox(i, side);
    else if (i !== store.state.sel.change) store.select(i, store.state.sel.side, -1);
  });
  root.querySelectorAll("input[name=tier]").forEach((r) => {
    r.addEventListener("change", () => r.checked && store.setTier(r.value));
  });
  root.querySelectorAll("input[name=defects]").forEach((r) => {
    r.addEventListener("change", () => store.toggleDefect(r.value, r.checked));
  });

  return {
    render,
    /**
     * Scroll to and focus the first field with an error: the field its message names (an
     * entity's message sits outside its row), the images for a missing box or change.
     */
    focusFirstError() {
      const el = root.querySelector(".ws-panel [data-error]:not([hidden]), .ws-panel [data-error-for]:not([hidden])");
      if (!el) return;
      ctx.reveal?.();
      el.scrollIntoView({ block: "nearest" });
      const card = el.closest("[data-key]");
      const slot = el.dataset.error ?? el.dataset.errorFor;
      let field = el.closest("[data-field]")?.querySelector("input:not([disabled]), select, textarea");
      if (!field && card && slot) field = card.querySelector(`[data-input=${slot}]:not([disabled])`);
      // A missing box or change is drawn on the images (or mirrored there with C): they take the keys.
      if (!field && (/^boxes_[ab]$/.test(slot) || slot === "changes")) return ctx.focusStage?.();
      (field ?? card?.querySelector("select"))?.focus({ preventScroll: true });
    },
    focusActive(field = "description") {
      ctx.reveal?.();
      activeCard()?.querySelector(`[data-input=${field}]`)?.focus();
    },
    scrollActive() {
      activeCard()?.scrollIntoView({ block: "nearest" });
    },
  };
}
