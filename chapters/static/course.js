// Chapter pages are MyST notebooks (.md): Colab cannot open them, so drop their launch menu.
// Exercise pages (.ipynb) keep theirs. Chapter notebooks remain downloadable as .ipynb (download menu).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll('a[href*="colab.research.google.com"]').forEach(function (a) {
    if (/\.md$/.test(a.getAttribute("href"))) {
      var menu = a.closest(".dropdown-launch-buttons");
      (menu || a).remove();
    }
  });
});
