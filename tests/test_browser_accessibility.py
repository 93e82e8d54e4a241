"""Every page of the built book passes axe-core's WCAG 2.0/2.1 A and AA rules, as readers meet it.

axe-core (Deque, MPL-2.0) is vendored in ``tests/vendor/axe-core`` as its single JavaScript file, checked
against its SHA-256 here. Every HTML page of the site (chapters, exercises, the landing, notation, search
and index pages) is opened in headless Chromium (Playwright, as in ``test_browser.py``) at 1280 px and at
390 px (a phone), in the light and in the dark theme, and axe runs with the tags ``wcag2a``, ``wcag2aa``,
``wcag21a`` and ``wcag21aa``: 0 violations. Besides axe:

- every image in an article has an alternative text that is not a file name;
- headings go down one level at a time (no ``h2`` followed by an ``h4``);
- every folded element (``details`` answers, hidden cell inputs and outputs, the sidebar's sections) opens
  from the keyboard: it can be focused with Tab, and Enter or Space toggles it.

The book build is the one ``tests/conftest.py`` starts for the session (this file's name sorts it after
``test_book.py``, so that the grading tests run while the book builds). Each page is loaded once per width,
and axe runs on it in the light and then the dark theme; the whole test costs a few minutes.
"""
from __future__ import annotations

import asyncio
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from browser_tools import ARGS, AXE, AXE_RUN, AXE_SHA256, CHROMIUM, TAGS, axe_source

async_api = pytest.importorskip("playwright.async_api", reason="pip install playwright (tests/requirements.txt)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")

PAGE_SECONDS = int(os.environ.get("SEQCOURSE_AXE_PAGE_SECONDS", "600"))   # one page at one width, both themes
CONFIGS = [(1280, 900, "light"), (1280, 900, "dark"), (390, 844, "light"), (390, 844, "dark")]
# the theme reads the reader's choice from localStorage before it paints (pydata-sphinx-theme)
THEME_SCRIPT = "localStorage.setItem('mode', '%s'); localStorage.setItem('theme', '%s');"


def _site_pages(html: Path) -> list[str]:
    pages = []
    for path in sorted(html.rglob("*.html")):
        rel = path.relative_to(html).as_posix()
        if rel.startswith(("_static/", "_sources/", "reports/")) or rel == "index.html":
            continue  # index.html only redirects to the landing page
        pages.append(rel)
    return pages


def test_vendored_axe_is_the_released_file():
    axe_source()
    assert (AXE.parent / "LICENSE").exists(), "axe-core's licence (MPL-2.0) must be shipped beside it"


# the reader's choice of theme, made with the theme's own button (it cycles auto, light, dark)
SET_THEME = """async (theme) => {
    const button = document.querySelector('.theme-switch-button');
    for (let i = 0; i < 3 && document.documentElement.dataset.mode !== theme; i++) button.click();
    // every wait is bounded: a page the browser does not paint gets no animation frame, and an endless
    // animation (a spinner) never finishes
    const atMost = (ms, p) => Promise.race([p, new Promise(r => setTimeout(r, ms))]);
    await atMost(500, new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));
    // colours fade from one theme to the other (CSS transitions): judge them once they have settled
    const finite = document.getAnimations().filter(a => {
        const end = a.effect && a.effect.getComputedTiming().endTime;
        return Number.isFinite(end);
    });
    await atMost(3000, Promise.all(finite.map(a => a.finished.catch(() => null))));
    return document.documentElement.dataset.theme;
}"""


@pytest.fixture(scope="module")
def audit(site):
    """``{(page, width, theme): {"violations": [...], "checks": {...}, "theme": ...}}`` for every page and
    configuration, and ``"__keyboard__"``: the folds that the keyboard cannot open. Each page is loaded once
    per width; axe runs in the light theme, then in the dark one (switched with the theme's button).
    Pages are audited ``SEQCOURSE_AXE_WORKERS`` at a time (default: one per CPU core, at most 4)."""
    base, html = site
    workers = int(os.environ.get("SEQCOURSE_AXE_WORKERS", str(min(4, os.cpu_count() or 1))))
    results, keyboard = asyncio.run(_audit(base, html, max(1, workers)))
    results["__keyboard__"] = keyboard
    _write_report(results, html.parent / "accessibility.json")
    return results


async def _audit(base, html, workers):
    axe_js = axe_source()
    results, keyboard = {}, []
    limit = asyncio.Semaphore(workers)
    async with async_api.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)

        async def one(context, rel, width):
            async with limit:
                try:    # a page that hangs fails the audit instead of stopping the test run
                    await asyncio.wait_for(_one(context, rel, width), PAGE_SECONDS)
                except asyncio.TimeoutError:
                    for theme in ("light", "dark"):
                        results[(rel, width, theme)] = {
                            "violations": [{"id": f"audit-not-finished-in-{PAGE_SECONDS}s", "nodes": [rel]}],
                            "checks": None, "theme": theme}

        async def _one(context, rel, width):
            page = await context.new_page()
            await page.goto(base + rel, wait_until="load")
            await page.evaluate("() => window.MathJax && MathJax.startup ? Promise.race([MathJax.startup.promise, "
                                "new Promise(r => setTimeout(r, 20000))]) : null")
            await page.evaluate(axe_js)
            checks = await page.evaluate(CHECKS_JS) if width == 1280 else None
            for theme in ("light", "dark"):
                shown = await page.evaluate(SET_THEME, theme)
                results[(rel, width, theme)] = {"violations": await page.evaluate(AXE_RUN, TAGS),
                                                "checks": checks if theme == "light" else None,
                                                "theme": shown}
            if width == 1280:
                await page.evaluate(SET_THEME, "light")
                keyboard.extend(await _keyboard_problems(page, rel))
            await page.close()

        for width, height in sorted({(w, h) for w, h, _ in CONFIGS}, reverse=True):
            context = await browser.new_context(viewport={"width": width, "height": height})
            await context.add_init_script(THEME_SCRIPT % ("light", "light"))
            await asyncio.gather(*(one(context, rel, width) for rel in _site_pages(html)))
            await context.close()
        await browser.close()
    return results, sorted(keyboard)


# What axe cannot judge: alternative texts that are file names, heading levels, folded content.
CHECKS_JS = r"""() => {
    const article = document.querySelector('article') || document.body;
    const images = Array.from(article.querySelectorAll('img')).map(i => ({
        src: (i.getAttribute('src') || '').split('/').pop(), alt: i.getAttribute('alt')}));
    const headings = Array.from(document.querySelectorAll('main h1, main h2, main h3, main h4, main h5, main h6'))
        .map(h => ({level: +h.tagName[1], text: h.textContent.trim().slice(0, 60)}));
    return {images, headings};
}"""


async def _keyboard_problems(page, rel):
    """Every fold of the page (``details`` answers and hidden cells, the sidebar's sections, toggle
    buttons) that is shown: reachable with Tab, and opened or closed by Enter."""
    problems = []
    toggles = await page.evaluate("""() => {
        const found = [];
        document.querySelectorAll('details > summary').forEach((s, k) => {
            s.setAttribute('data-kbd-test', 's' + k);
            found.push({key: 's' + k, kind: 'summary', text: s.textContent.trim().slice(0, 50)});
        });
        document.querySelectorAll('button.toggle-button, .toggle-button button').forEach((b, k) => {
            b.setAttribute('data-kbd-test', 'b' + k);
            found.push({key: 'b' + k, kind: 'button',
                        text: (b.getAttribute('aria-label') || b.textContent).trim().slice(0, 50)});
        });
        return found;
    }""")
    state = """(sel) => {
        const e = document.querySelector(sel);
        const d = e.closest('details');
        return {open: d ? d.open : e.getAttribute('aria-expanded'), tabindex: e.tabIndex};
    }"""
    for t in toggles:
        sel = f"[data-kbd-test='{t['key']}']"
        element = page.locator(sel)
        if not await element.is_visible():
            continue  # inside a folded sidebar section: checked once its parent is open
        before = await page.evaluate(state, sel)
        if before["tabindex"] < 0:
            problems.append(f"{rel}: {t['kind']} {t['text']!r} cannot be reached with Tab")
            continue
        await element.focus()
        await page.keyboard.press("Enter")
        if (await page.evaluate(state, sel))["open"] == before["open"]:
            problems.append(f"{rel}: {t['kind']} {t['text']!r} does not open or close with Enter")
    return problems


def _write_report(results, path):
    """Counts per rule and per page view, beside the build (``_build/accessibility.json``)."""
    import json

    per_rule, views = Counter(), {}
    for key, v in results.items():
        if key == "__keyboard__":
            continue
        rel, width, theme = key
        for violation in v["violations"]:
            per_rule[violation["id"]] += len(violation["nodes"])
        views[f"{rel} @{width}px {theme}"] = {x["id"]: len(x["nodes"]) for x in v["violations"]}
    pages = {k[0] for k in results if k != "__keyboard__"}
    failing = {k[0] for k, v in results.items() if k != "__keyboard__" and v["violations"]}
    path.write_text(json.dumps({"axe": AXE_SHA256[:12], "tags": TAGS, "pages": len(pages),
                                "pages_failing": len(failing), "views": len(views),
                                "nodes_per_rule": dict(per_rule), "per_view": views,
                                "keyboard": results["__keyboard__"]}, indent=1))


def _violations(audit):
    return {k: v for k, v in audit.items() if k != "__keyboard__" and v["violations"]}


def test_theme_switch_took_effect(audit):
    wrong = [k for k, v in audit.items() if k != "__keyboard__" and v["theme"] != k[2]]
    assert not wrong, f"pages not shown in the theme asked for: {wrong[:5]}"


def test_axe_finds_no_wcag_violation(audit):
    bad = _violations(audit)
    if bad:
        per_rule = Counter()
        lines = []
        for (rel, width, theme), v in sorted(bad.items()):
            for violation in v["violations"]:
                per_rule[violation["id"]] += len(violation["nodes"])
                node = violation["nodes"][0]
                lines.append(f"{rel} @{width}px {theme}: {violation['id']} ({violation['impact']}, "
                             f"{len(violation['nodes'])} nodes): {violation['help']}; e.g. {node['target']} "
                             f"{node['html'][:100]}")
        pytest.fail(f"axe-core: {sum(per_rule.values())} violating nodes on {len(bad)} page views; per rule "
                    f"{dict(per_rule)}\n" + "\n".join(lines[:60]))


def _page_checks(audit):
    """(page, checks) of every page: the checks of CHECKS_JS, made once per page (1280 px, light)."""
    return [(key[0], v["checks"]) for key, v in audit.items() if key != "__keyboard__" and v["checks"]]


def test_every_figure_has_a_real_alternative_text(audit):
    bad = []
    for rel, checks in _page_checks(audit):
        for img in checks["images"]:
            alt = (img["alt"] or "").strip()
            name = img["src"]
            if len(alt) < 15 or re.search(r"\.(png|svg|jpe?g)$|^[0-9a-f]{16,}", alt) or alt == name:
                bad.append(f"{rel}: {name} has alt {alt!r}")
    assert not bad, "images whose alternative text does not say what they show:\n" + "\n".join(bad)


def test_headings_go_down_one_level_at_a_time(audit):
    bad = []
    for rel, checks in _page_checks(audit):
        levels = checks["headings"]
        if levels and levels[0]["level"] != 1:
            bad.append(f"{rel}: the first heading is h{levels[0]['level']} {levels[0]['text']!r}")
        for a, b in zip(levels, levels[1:]):
            if b["level"] > a["level"] + 1:
                bad.append(f"{rel}: h{a['level']} {a['text']!r} is followed by h{b['level']} {b['text']!r}")
    assert not bad, "\n".join(bad)


def test_every_fold_opens_from_the_keyboard(audit):
    assert not audit["__keyboard__"], "\n".join(audit["__keyboard__"])
