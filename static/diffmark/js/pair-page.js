// Pair page toggles: actual pixels (1 image pixel = 1 CSS pixel, crisp) and the known answer.
const root = document.querySelector(".compare[data-pair]");
const actual = document.getElementById("actual-pixels");
const gold = document.getElementById("show-gold");

if (root && actual) {
  actual.addEventListener("change", () => root.classList.toggle("actual", actual.checked));
}
if (root && gold) {
  gold.addEventListener("change", () => root.classList.toggle("hide-overlay", !gold.checked));
}
