// Form behaviour the pages once wrote as inline handlers, which the Content-Security-Policy
// (script-src 'self') no longer runs: a select that submits its form when changed, a form
// that asks before it submits, and a box that ticks every box of a name (data-check-all). Delegated from the document, so htmx-swapped content works too.

document.addEventListener("change", (event) => {
  const field = event.target.closest("[data-autosubmit]");
  if (field && field.form) field.form.requestSubmit();
  const all = event.target.closest("input[data-check-all]");
  if (all) {
    const boxes = document.querySelectorAll(`input[name="${CSS.escape(all.dataset.checkAll)}"]`);
    for (const box of boxes) box.checked = all.checked;
  }
});

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});
