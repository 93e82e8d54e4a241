"""Accessible names for the theme's and myst-nb's disclosure widgets (WCAG 2.1: 4.1.2 name, 2.5.3 label in name).

Two pieces of markup that the course does not write itself fail axe-core's rules, so this extension mends
them while each page is rendered (``html-page-context``), in the HTML the server sends, not by script:

- the sidebar (pydata-sphinx-theme's ``generate_toctree_html``) folds a chapter's pages with a
  ``<summary>`` that holds only a chevron icon: no accessible name (``summary-name``). Each gets a
  visually hidden text, "Pages in <the chapter's title>";
- myst-nb folds hidden cell inputs and outputs with ``<summary aria-label="Toggle hidden content">`` around
  the visible words "Show code cell source": a name that differs from the visible label
  (``label-content-name-mismatch``). The ``aria-label`` is dropped, so the name is the visible text.

The search and theme buttons are fixed in the course's templates (``_templates/``). The checks:
``tests/test_browser_accessibility.py``.
"""
from __future__ import annotations

import html
import re

from markupsafe import Markup

HIDDEN_CELL_SUMMARY = '<summary aria-label="Toggle hidden content">'
# li.has-children > a.reference ... > details > summary > span.toctree-toggle (the chevron, no text)
SIDEBAR_FOLD = re.compile(
    r'(<a class="[^"]*reference internal[^"]*" href="[^"]*">(?P<title>(?:(?!<a\b|</a>).)*)</a>\s*'
    r'<details(?: open="open")?>\s*)'
    r'<summary>(?=\s*<span class="toctree-toggle")', re.DOTALL)


def _name_sidebar_folds(fragment: str) -> str:
    def label(m):
        title = html.unescape(re.sub(r"<[^>]+>", "", m.group("title"))).strip()
        return (f'{m.group(1)}<summary><span class="visually-hidden">Pages in '
                f'{html.escape(title)}</span>')
    return SIDEBAR_FOLD.sub(label, fragment)


def mend_page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = context["body"].replace(HIDDEN_CELL_SUMMARY, "<summary>")
    generate = context.get("generate_toctree_html")
    if generate is not None and not getattr(generate, "_course_mended", False):
        def generate_named(*args, **kwargs):
            return Markup(_name_sidebar_folds(str(generate(*args, **kwargs))))
        generate_named._course_mended = True
        context["generate_toctree_html"] = generate_named


def setup(app):
    # after the theme's own handler, which puts generate_toctree_html into the context
    app.connect("html-page-context", mend_page, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
