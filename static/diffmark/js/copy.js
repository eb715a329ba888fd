// Copy buttons: <button data-copy="#selector"> copies the text of that element.
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Plain http on another host has no clipboard API; a hidden textarea still copies.
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const label = button.textContent;
  try {
    await copyText(source.textContent.trim());
    button.textContent = "Copied";
  } catch {
    button.textContent = "Select and copy by hand";
  }
  setTimeout(() => { button.textContent = label; }, 1600);
});
