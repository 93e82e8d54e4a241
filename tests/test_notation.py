"""The notation page and the chapters agree: a symbol the notation page defines is used only in the chapters
the page lists for it, and every bold symbol a chapter uses is on the page.

``chapters/notation.md`` lists each symbol in the first column of its tables and, in the last column, the
chapters where it appears. From the math of every chapter (``$...$``, ``$$...$$``; code is not math) the test
collects the symbols used:

- **bold** symbols (``\\mathbf{h}_t``, ``\\boldsymbol{\\delta}_t``): a vector is known by its letter (the index
  is a position: ``\\mathbf{h}_t``, ``\\mathbf{h}_s`` are one symbol); the matrices ``W`` and ``E`` and the
  biases ``b`` by their letter and subscript (``\\mathbf{W}_{hx}``, ``\\mathbf{b}_f``);
- the plain capitals, ``k``, and the Greek letters that the page lists (``L``, ``N``, ``K``, ``\\rho``, ...).

Then:

1. a listed symbol used in a chapter that its row does not list fails: a symbol turning up in another chapter
   is how a second meaning sneaks in (``\\mathbf{z}_t`` as the self-attention output in chapter 8, ``L`` as the
   number of layers in chapter 5, ``\\mathbf{u}_t`` in chapter 9 were such cases);
2. a bold symbol used in a chapter but missing from the page fails (define it there, or rename it);
3. a row that lists a chapter where none of its symbols appears fails (the list cannot rot).

Plain lower-case letters other than ``k`` (indices such as ``t``, ``s``, ``i``, ``j``) are not checked.
"""
from __future__ import annotations

import re
from pathlib import Path

from test_numbers import _prose_lines

REPO = Path(__file__).resolve().parents[1]
NOTATION = REPO / "chapters" / "notation.md"
CHAPTERS = sorted((REPO / "chapters").glob("ch*.md"))

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<![\\])\$", re.DOTALL)
BOLD = re.compile(r"\\(?:mathbf|boldsymbol)\{\\?([A-Za-z]+)\}'?(_\{[^{}]*\}|_\\?[A-Za-z0-9]+)?")
GREEK = ("alpha", "rho", "eta", "tau", "lambda", "delta", "Delta", "sigma", "epsilon")


def symbols(math: str) -> set[str]:
    """The symbols of one math span, as keys: ``bold h``, ``bold W_hx``, ``plain L``, ``greek rho``."""
    keys = set()
    for m in BOLD.finditer(math):
        letter, sub = m.group(1), re.sub(r"[{}\s_]", "", m.group(2) or "")
        if letter in ("W", "E", "b"):
            keys.add(f"bold {letter}" + (f"_{sub}" if sub else ""))
        else:
            keys.add(f"bold {letter}")
    # drop the bold symbols; a named matrix's subscript is part of its name, a vector's is an index that may
    # hold symbols of its own (h_{T_x})
    rest = BOLD.sub(lambda m: " " if m.group(1) in ("W", "E", "b") else " " + (m.group(2) or ""), math)
    rest = re.sub(r"\\(?:text|operatorname|mathrm|mathbb|begin|end)\{[^{}]*\}", " ", rest)
    keys |= {f"greek {g}" for g in re.findall(r"\\(" + "|".join(GREEK) + r")(?![A-Za-z])", rest)}
    rest = re.sub(r"\\[A-Za-z]+", " ", rest)
    keys |= {f"plain {c}" for c in re.findall(r"(?<![A-Za-z])([A-Z]|k)(?![A-Za-z])", rest)}
    return keys


def _chapters(cell: str) -> set[int]:
    out = set()
    for a, b in re.findall(r"(\d+)(?:\s*-\s*(\d+))?", cell):
        out |= set(range(int(a), int(b or a) + 1))
    return out


def notation_rows() -> list[tuple[set[str], set[int], str]]:
    """(symbols of the first column, chapters of the last column, the row) of every table on the page whose
    last column is "chapters"."""
    rows, has_chapters = [], False
    for line in NOTATION.read_text().splitlines():
        if not line.startswith("|"):
            has_chapters = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[-1] == "chapters":
            has_chapters = True
            continue
        if not has_chapters or set(cells[0]) <= set("- "):
            continue
        keys = set()
        for m in MATH.finditer(cells[0]):
            keys |= symbols(m.group(1) or m.group(2))
        if keys:  # rows of lower-case plain symbols only ($e_{t,s}$, $d_k$) have nothing to check
            rows.append((keys, _chapters(cells[-1]), cells[0]))
    return rows


def uses() -> dict[str, dict[int, str]]:
    """``{symbol: {chapter: an example of its use}}`` over the chapters' math."""
    found: dict[str, dict[int, str]] = {}
    for path in CHAPTERS:
        chapter = int(re.match(r"ch(\d+)", path.name).group(1))
        text = "\n".join(_prose_lines(path.read_text()))
        for m in MATH.finditer(text):
            math = m.group(1) or m.group(2)
            for key in symbols(math):
                found.setdefault(key, {}).setdefault(chapter, " ".join(math.split())[:70])
    return found


def test_the_page_has_tables_with_chapters():
    rows = notation_rows()
    assert len(rows) > 25, "the notation page's tables should list their symbols with a 'chapters' column"
    assert all(r[1] for r in rows), [r[2] for r in rows if not r[1]]


def test_notation_symbols_are_used_only_where_the_page_says():
    scope: dict[str, set[int]] = {}
    for keys, chapters, _ in notation_rows():
        for key in keys:
            scope.setdefault(key, set()).update(chapters)
    problems = []
    for key, where in sorted(uses().items()):
        if key in scope:
            for chapter, example in sorted(where.items()):
                if chapter not in scope[key]:
                    problems.append(f"{key}: used in chapter {chapter} (${example}$), which the notation "
                                    f"page does not list for it: another meaning? rename it, or add the "
                                    f"chapter to its row")
        elif key.startswith("bold "):
            problems.append(f"{key}: used in chapter(s) {sorted(where)} (${next(iter(where.values()))}$) but "
                            "not on the notation page")
    assert not problems, "\n".join(problems)


def test_every_listed_chapter_uses_the_row():
    used = uses()
    stale = []
    for keys, chapters, cell in notation_rows():
        for chapter in sorted(chapters):
            if not any(chapter in used.get(key, {}) for key in keys):
                stale.append(f"notation row {cell!r} lists chapter {chapter}, which uses none of {sorted(keys)}")
    assert not stale, "\n".join(stale)


def test_the_test_sees_a_second_meaning(tmp_path):
    """The symbols of a math span, as the checks above see them."""
    assert symbols(r"\mathbf{z}_t = \sum_s \alpha_{t,s}\mathbf{W}_V\mathbf{x}_s") == {
        "bold z", "greek alpha", "bold W_V", "bold x"}
    assert symbols(r"l = 1, \dots, L") == {"plain L"}
    assert symbols(r"\frac{1}{T_y^{\lambda}} \log P(y_t)") == {"plain T", "greek lambda", "plain P"}
    assert symbols(r"\mathbf{b}_{hx} + \mathbb{R}^{H \times 2H}") == {"bold b_hx", "plain H"}
    assert symbols(r"\mathbf{h}_{T_x}, \text{Dropout}") == {"bold h", "plain T"}
