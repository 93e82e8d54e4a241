"""The book builds with warnings as errors, every chapter's cells ran, and only student notebooks
(never solutions) are published."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _toc_files() -> list[str]:
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                files.append(e["file"])
            walk(e.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return files


def test_book_builds_with_warnings_as_errors(book):
    rc, log, html = book
    assert rc == 0, "jupyter-book build -W failed:\n" + log[-6000:]
    assert "build succeeded" in log


def test_every_toc_page_is_in_the_site(book):
    _, _, html = book
    missing = [f for f in _toc_files() if not (html / f"{f}.html").exists()]
    assert not missing, f"pages missing from the site: {missing}"


def test_chapter_cells_ran_without_errors(book):
    _, _, html = book
    for f in _toc_files():
        if f.startswith("chapters/"):
            page = (html / f"{f}.html").read_text()
            assert "Traceback (most recent call last)" not in page, f"{f}: a cell raised"
            assert 'class="output traceback' not in page, f"{f}: a cell raised"


def test_exercises_are_published_unexecuted_and_solutions_never(book):
    _, _, html = book
    for f in _toc_files():
        if f.startswith("exercises/"):
            page = (html / f"{f}.html").read_text()
            assert "NotImplementedError" in page, f"{f}: the student stubs should be shown"
            assert "BEGIN SOLUTION" not in page and "BEGIN HIDDEN TESTS" not in page, f"{f}: leaks a solution"
            assert not re.search(r'class="cell_output', page), f"{f}: exercise pages must not be executed"
    assert not (html / "solutions").exists(), "solutions/ must never be part of the site"
    for page in html.rglob("*.html"):
        text = page.read_text(errors="replace")
        assert "### BEGIN SOLUTION" not in text, f"{page.relative_to(html)} shows solution code"
