"""The built book as a reader sees it, in headless Chromium (Debian's `chromium`, driven by Playwright).

Opens every page of the site served on 127.0.0.1 and checks: no console errors beyond known noise, math
rendered wherever the source has math, every image loaded, every internal link resolves (file and
anchor), every exercise page offers its notebook for download and an "open in Colab" link, no code block
and no display equation is wider than its box at 1280 px (nothing cut off at the right edge), one search
box per page, and search finds a term and shows a snippet of the page's text, also when the book is opened
from disk (file://). Saves screenshots of a few pages into the build folder (``_build/screenshots``).
"""
from __future__ import annotations

from urllib.parse import unquote, urljoin, urlparse

import pytest
from browser_tools import ARGS, CHROMIUM

playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (tests/requirements.txt)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")

# Console messages that every Jupyter Book 1.x page logs and that do not affect the reader.
KNOWN_NOISE = ("Identifier 'THEBE_JS_URL' has already been declared",)

# Pages whose code is not yet wrapped to the column width, with the branch that owns them. Every other page
# must show every code line and every display equation whole at 1280 px.
OVERFLOW_PENDING: dict[str, str] = {}  # page -> why its overflow is allowed for now (none)

SCREENSHOTS = {  # page -> file name
    "chapters/intro.html": "landing.png",
    "chapters/ch01_sequence_configurations.html": "chapter.png",
    "exercises/ch01/ch01_sequence_configurations.html": "exercise.png",
}


@pytest.fixture(scope="module")
def pages(site):
    """Visit every page once; collect what the checks need."""
    base, html = site
    results = {}
    shots = html.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        for path in sorted(html.rglob("*.html")):
            rel = path.relative_to(html).as_posix()
            if rel.startswith(("_static/", "_sources/", "reports/")) or rel in ("genindex.html", "index.html"):
                continue
            page = context.new_page()
            errors: list[str] = []
            page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
            failed: list[str] = []
            page.on("requestfailed", lambda r, f=failed: f.append(r.url))
            page.goto(base + rel, wait_until="load")
            if rel != "search.html":
                page.wait_for_function("() => !window.MathJax || !window.MathJax.startup || "
                                       "window.MathJax.startup.promise", timeout=15000)
                page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
            info = page.evaluate("""() => ({
                mathSource: document.querySelectorAll('.math, span.math, div.math').length,
                mathRendered: document.querySelectorAll('mjx-container').length,
                text: document.querySelector('article') ? document.querySelector('article').innerText : document.body.innerText,
                images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0})),
                links: Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href')),
                launch: Array.from(document.querySelectorAll('a[href*="colab.research.google.com"]')).map(a => a.getAttribute('href')),
                ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
                // code blocks (cells, outputs, listings) whose content is wider than their box
                wideCode: Array.from(document.querySelectorAll('article pre'))
                    .filter(pre => pre.offsetParent !== null && pre.scrollWidth > pre.clientWidth + 1)
                    .map(pre => pre.innerText.split(String.fromCharCode(10)).reduce((a, b) => a.length >= b.length ? a : b, '').slice(0, 100)),
                // display equations wider than the column
                wideMath: Array.from(document.querySelectorAll('article mjx-container[display="true"]'))
                    .filter(m => m.offsetParent !== null && (m.scrollWidth > m.clientWidth + 1
                        || m.getBoundingClientRect().right > document.querySelector('article').getBoundingClientRect().right + 1))
                    .map(m => (m.querySelector('mjx-assistive-mml') || m).textContent.slice(0, 80)),
                searchBoxes: Array.from(document.querySelectorAll('.search-button-field, input[type="search"]'))
                    .filter(e => e.offsetParent !== null).length,
            })""")
            if rel in SCREENSHOTS:
                page.screenshot(path=str(shots / SCREENSHOTS[rel]), full_page=False)
            info.update(errors=[e for e in errors if not any(n in e for n in KNOWN_NOISE)], failed=failed)
            results[rel] = info
            page.close()
        # search: type a term into the search page and wait for results (with their snippets), served and
        # opened from disk, where browsers refuse the requests Sphinx's search makes for snippets
        for key, url in [("__search__", base + "search.html?q=recurrent"),
                         ("__search_file__", (html / "search.html").as_uri() + "?q=recurrent")]:
            page = context.new_page()
            page.goto(url, wait_until="load")
            page.wait_for_selector("#search-results li", timeout=15000)
            page.wait_for_function("() => document.querySelectorAll('#search-results li p.context').length > 0",
                                   timeout=15000)
            results[key] = page.evaluate("""() => Array.from(document.querySelectorAll('#search-results li'))
                .map(li => (li.querySelector('p.context') || {}).innerText || '')""")
            page.close()
        browser.close()
    return results


def _pages(pages):
    return {k: v for k, v in pages.items() if not k.startswith("__")}


def test_no_console_errors(pages):
    bad = {p: v["errors"] for p, v in _pages(pages).items() if v["errors"]}
    assert not bad, f"console errors: {bad}"


def test_no_failed_requests(pages):
    """Offline-complete: nothing the page asks for fails (no CDN is reachable from a test machine)."""
    bad = {p: v["failed"] for p, v in _pages(pages).items() if v["failed"]}
    assert not bad, f"requests that failed: {bad}"


def test_math_rendered_everywhere(pages):
    for p, v in _pages(pages).items():
        if v["mathSource"]:
            assert v["mathRendered"] >= v["mathSource"] * 0.9, f"{p}: {v['mathRendered']} of {v['mathSource']} formulas rendered"
        for raw in ("\\(", "\\[", "$$"):
            assert raw not in v["text"], f"{p}: raw math delimiter {raw!r} left in the text"


def test_every_image_loaded(pages):
    for p, v in _pages(pages).items():
        broken = [i["src"] for i in v["images"] if not i["ok"]]
        assert not broken, f"{p}: images not loaded: {broken}"


def test_every_internal_link_resolves(pages, site):
    base, html = site
    ids = {p: set(v["ids"]) for p, v in _pages(pages).items()}
    problems = []
    for p, v in _pages(pages).items():
        for href in v["links"]:
            url = urlparse(urljoin(base + p, href))
            if url.scheme not in ("http", "") or url.netloc != urlparse(base).netloc:
                continue  # external (not checked offline) or mailto
            target = unquote(url.path.lstrip("/")) or "index.html"
            if target.endswith("/"):
                target += "index.html"
            if not (html / target).exists():
                problems.append(f"{p}: {href} -> missing {target}")
            elif url.fragment and target in ids and url.fragment not in ids[target]:
                problems.append(f"{p}: {href} -> no anchor #{url.fragment}")
    assert not problems, "\n".join(problems)


def test_exercise_pages_offer_download_and_colab(pages, site):
    _, html = site
    exercise_pages = [p for p in _pages(pages) if p.startswith("exercises/")]
    assert exercise_pages, "no exercise pages in the site"
    for p in exercise_pages:
        links = pages[p]["links"]
        notebook = p[: -len(".html")] + ".ipynb"
        downloads = [h for h in links if h.endswith(".ipynb") and "_sources" in h]
        assert downloads, f"{p}: no download link for the notebook"
        assert (html / "_sources" / notebook).exists(), f"{p}: the downloadable notebook is missing"
        colab = pages[p]["launch"]
        assert colab and colab[0].endswith(notebook), f"{p}: no 'open in Colab' link to {notebook}"
    for p in _pages(pages):
        broken = [h for h in pages[p]["launch"] if not h.endswith(".ipynb")]
        assert not broken, f"{p}: Colab cannot open {broken}"
        if p.startswith("chapters/ch"):
            ex = [h for h in pages[p]["links"] if "exercises/" in h]
            assert ex, f"{p}: the chapter does not link to its exercise"


def test_search_finds_a_term(pages):
    assert len(pages["__search__"]) > 0


@pytest.mark.parametrize("key", ["__search__", "__search_file__"])
def test_search_results_show_snippets_of_the_text(pages, key):
    """Each result has a snippet of the page's prose around the term (not only its title, not its table of
    contents), from a server and from disk."""
    snippets = pages[key]
    with_term = [s for s in snippets if "recurren" in s.lower()]
    assert len(with_term) >= max(1, len(snippets) // 2), f"{key}: snippets {snippets[:5]}"


def test_one_search_box_per_page(pages):
    bad = {p: v["searchBoxes"] for p, v in _pages(pages).items() if p != "search.html" and v["searchBoxes"] != 1}
    assert not bad, f"pages with other than one visible search box at 1280 px: {bad}"


def test_code_and_equations_fit_the_column(pages):
    """At 1280 px, no code line and no display equation is cut off at the right edge of the text column."""
    problems = []
    for p, v in _pages(pages).items():
        if p in OVERFLOW_PENDING:
            continue
        problems += [f"{p}: code wider than its box: {line!r}" for line in v["wideCode"]]
        problems += [f"{p}: equation wider than the column: {eq!r}" for eq in v["wideMath"]]
    assert not problems, "\n".join(problems[:40]) + (f"\n... {len(problems)} in all" if len(problems) > 40 else "")
