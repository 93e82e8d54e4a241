"""Search results with a snippet of the page's text, also when the book is opened from disk (file://).

Sphinx's search page fetches every result page to cut a snippet out of it. Browsers refuse such requests
for pages opened from disk, so the results then show titles only; and from a server, the snippet often
came from the page's table of contents. After the HTML build, this extension writes
``_static/search_pages.js``: for each page, its article's sections and prose (no code, no outputs, no
navigation), and ``course.js`` answers the search page's requests from it.
"""
from __future__ import annotations

import json
from pathlib import Path

try:                               # lxml comes with sacrebleu (requirements.txt)
    from lxml import html as lhtml
except ImportError:                # without it, search keeps Sphinx's own snippets (served sites only)
    lhtml = None

DROP_TAGS = ("pre", "script", "style", "img", "svg", "nav", "button", "form")
DROP_CLASSES = ("cell_output", "headerlink", "prev-next-area", "bd-sidebar-secondary", "highlight")


def _xpath_class(name: str) -> str:
    return f".//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"


def _simplify(el) -> str:
    """The element as minimal HTML: <section id=..> kept (search anchors), everything else as text."""
    parts = []
    if el.tag == "section" and el.get("id"):
        parts.append(f'<section id="{el.get("id")}">')
    if el.text:
        parts.append(_esc(el.text))
    for child in el:
        parts.append(_simplify(child))
        if child.tail:
            parts.append(_esc(child.tail))
    if el.tag in ("p", "li", "h1", "h2", "h3", "h4", "dt", "dd", "div"):
        parts.append(" ")
    if el.tag == "section" and el.get("id"):
        parts.append("</section>")
    return "".join(parts)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_pages(app, exception):
    if exception is not None or app.builder.format != "html" or lhtml is None:
        return
    out = Path(app.outdir)
    pages = {}
    for docname in sorted(app.env.found_docs):
        path = out / f"{docname}.html"
        if not path.exists():
            continue
        tree = lhtml.fromstring(path.read_bytes())
        found = tree.xpath("//article[contains(concat(' ', normalize-space(@class), ' '), ' bd-article ')]")
        found = found or tree.xpath("//*[@role='main']")
        if not found:
            continue
        article = found[0]
        queries = [f".//{tag}" for tag in DROP_TAGS] + [_xpath_class(c) for c in DROP_CLASSES]
        for query in queries:
            for el in article.xpath(query):
                if el.getparent() is not None:
                    el.drop_tree()
        text = " ".join(_simplify(article).split())
        pages[f"{docname}.html"] = f'<div role="main">{text}</div>'
    static = out / "_static"
    static.mkdir(exist_ok=True)
    (static / "search_pages.js").write_text("window.SEQCOURSE_PAGES = " + json.dumps(pages) + ";\n")


def setup(app):
    app.connect("build-finished", write_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
