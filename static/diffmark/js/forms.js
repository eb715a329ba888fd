// Form behaviour the pages once wrote as inline handlers, which the Content-Security-Policy
// (script-src 'self') no longer runs: a select that submits its form when changed, a form
// that asks before it submits, and a checkbox that ticks every box of its form named by
// data-tick-all. Delegated from the document, so htmx-swapped content works too.

document.addEventListener("change", (event) => {
  const field = event.target.closest("[data-autosubmit]");
  if (field && field.form) field.form.requestSubmit();
});

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});

document.addEventListener("change", (event) => {
  const all = event.target.closest("input[data-tick-all]");
  if (!all || !all.form) return;
  for (const box of all.form.querySelectorAll(`input[name="${all.dataset.tickAll}"]`)) {
    box.checked = all.checked;
  }
});
