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

// Search results with snippets, also when the book is opened from disk: Sphinx's search page fetches every
// result page to cut a snippet from it, which browsers refuse for file:// pages. The build writes the
// pages' prose to _static/search_pages.js (see _ext/search_snippets.py); answer those requests from it.
(function () {
  if (!/search\.html$/.test(window.location.pathname)) return;
  var root = (document.documentElement.dataset.content_root || "./");
  var loaded = new Promise(function (resolve) {
    var s = document.createElement("script");
    s.src = root + "_static/search_pages.js";
    s.onload = resolve;
    s.onerror = resolve;
    document.head.appendChild(s);
  });
  var originalFetch = window.fetch ? window.fetch.bind(window) : null;
  window.fetch = function (url, options) {
    return loaded.then(function () {
      var pages = window.SEQCOURSE_PAGES || {};
      var key = String(url).split(/[?#]/)[0].replace(/^(\.\/)+/, "");
      if (key.indexOf(root) === 0) key = key.slice(root.length);
      if (Object.prototype.hasOwnProperty.call(pages, key)) {
        return new Response(pages[key], {headers: {"Content-Type": "text/html"}});
      }
      return originalFetch(url, options);
    });
  };
})();

// Exercise pages show notebooks generated from the solutions: wrap their long lines rather than cut them.
if (/\/exercises\//.test(window.location.pathname)) {
  document.documentElement.classList.add("seqcourse-exercise");
}
