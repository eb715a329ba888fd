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

// The skip link lands past the project navigation where a page has one (#content), else on
// <main>; without scripts it goes to <main>.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a.skip-link");
  const target = link && (document.getElementById("content") || document.getElementById("main"));
  if (!target) return;
  event.preventDefault();
  target.focus();
  target.scrollIntoView({ block: "start" });
});

// A button that starts long work (a release, a pre-annotation) says so at once and cannot be
// pressed twice: <form data-busy="Starting the build…">.
document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-busy]");
  if (!form || event.defaultPrevented) return;
  const button = event.submitter || form.querySelector("button[type=submit]");
  form.setAttribute("aria-busy", "true");
  if (button) {
    // Disabled after the submit is under way, so the button's own name/value still goes.
    setTimeout(() => { button.disabled = true; button.textContent = form.dataset.busy; });
  }
});
