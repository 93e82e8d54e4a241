"""Every number in the book's prose comes from an output, or is a definition the text states.

The rule, page by page (``chapters/*.md``, the pages a reader reads; the exercise notebooks are tested by
their own tests):

1. The **prose** is what a reader reads as text: paragraphs, lists, tables, admonitions, headings, math,
   and the alternative texts of images (``![alt](...)`` and a code cell's ``mystnb: image: alt:``). Code is not prose: code cells, fenced code blocks, directives that show
   code (``literalinclude``), their options, inline code (```...```) and link targets are dropped.
2. In the prose, a **number** is a run of digits (``7``, ``2,908``, ``0.25``, ``10^{-18}``, with a ``%``
   or not) or a number word (``three`` .. ``thousand``, ``half``, ``third``, ``quarter``, ``twice``,
   ``double``, ``...fold``); ``one`` and ``two`` are not counted (``one vector``, ``two directions``).
3. A number is fine when it is
   a. **glued**: pasted by ``{glue:text}``/``{glue:md}``/``{glue}``, so the build computed it (a cell
      reads benchmark results from their committed files, or the page computes it) -- it is then not in
      the source at all;
   b. **part of a name**: digits inside a word (``H100``, ``float32``, ``CS224N``, ``U+202F``, ``13a``,
      ``ch07``), or after a capital letter and a hyphen (``UTF-8``, ``SHA-256``); a number after a lower-case
      word and a hyphen (``top-5``) or after another number and a hyphen (the parts of a date, ``2017-09-29``)
      is a number like any other;
   c. **a reference or a list marker**: a chapter's number in its title (``# 7. ...``), ``chapter 7``, ``exercise 3``, ``part 2``, ``section 4``, ``issue #43227``,
      ``arXiv:1406.1078``, the notation page's "chapters" column, the number of a numbered list item (``1. ...``, ``**2. ...**``), a year (1900-2029, as in ``Cho et al. (2014)``; not when a word follows, as in ``2000 pairs``), and everything in a
      ``**References.**`` paragraph or a ``## References`` section;
   d. **zero and one** anywhere (``exceeds 1``, ``near 0``); **an index or a small constant of an
      equation**: in math, a sub- or superscript of a symbol
      (``h_{t-1}``, ``W^2``) and an integer from 0 to 10 (``1 - z_t``, ``2H``, ``\\log 2``);
   e. **a definition the text chooses**, listed in ``tests/book_numbers.yaml``: per page, a category
      (``setting``: a size, a seed, a step count the page's code uses; ``example``: a value made up to
      illustrate; ``constant``: a fixed constant of a method, a format or a standard; ``quoted``: a figure
      reported by a cited paper or external project, with the citation beside it; ``structure``: counting
      the parts of a definition, such as the four blocks of an LSTM) and under it the exact snippets of
      prose that hold such numbers. Every number inside a listed snippet is accepted wherever that
      snippet occurs on that page.
4. Anything else fails: a result typed by hand (``reaches 97.3%``, ``four times slower``, ``about 500``)
   is neither glued nor a definition. A snippet in the list that no longer occurs on its page fails too,
   so the list cannot rot.

The failure message lists ``page:line: number  ...context...`` for every number that breaks the rule.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ALLOWED_FILE = REPO / "tests" / "book_numbers.yaml"
CATEGORIES = {"setting", "example", "constant", "quoted", "structure"}
PAGES = sorted((REPO / "chapters").glob("*.md"))

NUMBER_WORDS = ("three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
                "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
                "thousand|million|billion|half|halves|third|thirds|quarter|quarters|twice|thrice|double|"
                "triple|dozen|\\w+fold")
WORD_RE = re.compile(rf"\b({NUMBER_WORDS})s?\b", re.IGNORECASE)
# a number: digits with thousands commas and a decimal part, optionally a power (10^{-18}, 0.5^{40}); not
# the digits of a word (H100) nor those after a capital and a hyphen (UTF-8, SHA-256), which are names
DIGITS_RE = re.compile(r"(?<![\w.+/#:])(?<![A-Z]-)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\^\{?-?\d+\}?)?%?)(?![\w])")
REFERENCE_RE = re.compile(r"\b(?:chapters?|exercises?|parts?|sections?|figures?|issue|week|course|"
                          r"version|versions)\s+(?:\d+(?:\s*(?:,|and|to|-)\s*\d+)*)", re.IGNORECASE)
CODE_DIRECTIVES = ("code-cell", "literalinclude", "code", "code-block", "glue:figure", "glue:math", "glue",
                   "tableofcontents", "toctree", "raw")


def _prose_lines(text: str) -> list[str]:
    """The page's lines with everything that is not prose blanked (line numbers kept)."""
    lines = text.split("\n")
    out = [""] * len(lines)
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        i = lines.index("---", 1) + 1
    fence = None
    keep = False
    while i < len(lines):
        line = lines[i]
        opening = re.match(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\{([\w:-]+)\})?\s*(.*)$", line)
        if fence is None and opening:
            fence = opening.group(1)
            directive = opening.group(3)
            # fenced code without a directive (```python) and code directives are not prose
            keep = directive is not None and directive not in CODE_DIRECTIVES
            if keep and directive == "admonition":
                out[i] = opening.group(4)  # the admonition's title
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None:
            alt = re.match(r'^\s+alt:\s*"?(.*?)"?\s*$', line)
            if alt:
                out[i] = alt.group(1)  # a figure's alternative text (mystnb: image: alt:) is prose
            elif keep and not re.match(r"^\s*:[\w-]+:", line):  # directive options are not prose
                out[i] = line
        else:
            out[i] = line
        i += 1
    return out


def _drop_references(lines: list[str]) -> list[str]:
    """Blank ``## References`` sections and ``**References.**`` paragraphs (citations, not claims), and the
    last cell of table rows whose header's last cell is ``chapters`` (the notation page's chapter lists)."""
    out, in_section, in_paragraph, chapters_column = [], False, False, False
    for line in lines:
        if line.startswith("|"):
            cells = line.rstrip().rstrip("|").split("|")
            if cells[-1].strip() == "chapters":
                chapters_column = True
            elif chapters_column:
                line = "|".join(cells[:-1]) + "|"
        else:
            chapters_column = False
        if line.startswith("#"):
            in_section = line.lstrip("#").strip().lower() == "references"
        if line.startswith("**References.**"):
            in_paragraph = True
        elif not line.strip():
            in_paragraph = False
        out.append("" if in_section or in_paragraph else line)
    return out


def _math_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every $...$ and $$...$$ span of the text (one string, newlines included)."""
    pattern = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<![\\])\$", re.DOTALL)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


@dataclass
class Page:
    """A page's prose: ``flat`` is the text with code blanked and whitespace collapsed to single spaces
    (what the snippets of tests/book_numbers.yaml are matched against); ``numbers`` the occurrences that
    no automatic rule accepts, as (start, end) in ``flat`` and a line number in the source."""
    name: str
    flat: str
    numbers: list[tuple[int, int, int, str]]

    def context(self, start: int, end: int) -> str:
        return self.flat[max(0, start - 45):end + 35]


def read_page(path: Path) -> Page:
    """The page's prose and every number in it that rules 3a-3d of the module docstring do not accept."""
    text = "\n".join(_drop_references(_prose_lines(path.read_text())))
    # roles (glue and others: their content is not typed prose), inline code, link targets, comments,
    # MyST targets, references to chapters and the like, arXiv identifiers and issue numbers
    for pattern in (r"\{[\w:-]+\}`[^`]*`", r"``.*?``", r"`[^`\n]*`", r"\]\([^)\n]*\)", r"<!--.*?-->",
                    r"^\([\w-]+\)=\s*$", r"^# \d+\.", r"^\s*(?:\*\*)?\d+\.(?=\s|\*\*)", REFERENCE_RE.pattern, r"arXiv:\S+", r"#\d+"):
        flags = re.DOTALL | re.MULTILINE | (re.IGNORECASE if pattern == REFERENCE_RE.pattern else 0)
        for m in reversed(list(re.finditer(pattern, text, flags))):
            text = _blank(text, m.start(), m.end())
    in_math = bytearray(len(text))
    for start, end in _math_spans(text):
        in_math[start:end] = b"\x01" * (end - start)
    hits = []
    for m in DIGITS_RE.finditer(text):
        number = m.group(1)
        if re.fullmatch(r"19\d\d|20[0-2]\d", number) and (
                not re.match(r"\s*[A-Za-z]", text[m.end():])
                or re.search(r"(?:et al\.?,?|\(|\w's)\s*$", text[max(0, m.start() - 12):m.start()])):
            continue  # a year ("Cho et al. (2014)", "in 2014,"), not a count written like one ("2000 pairs")
        if number in ("0", "1"):
            continue  # zero and one: "exceeds 1", "near 0", "norm 1"
        if in_math[m.start()]:
            if re.search(r"[_^]\{?$|[_^]\{[^}$]*$", text[max(0, m.start() - 12):m.start()]):
                continue  # an index: h_{t-1}, W^2, T_{x}
            if re.fullmatch(r"\d+", number) and int(number) <= 10:
                continue  # a small constant of an equation
        hits.append((m.start(), m.end(), number))
    hits += [(m.start(), m.end(), m.group(1)) for m in WORD_RE.finditer(text)]
    # collapse whitespace, keeping a map from the source positions to the flat ones
    flat, where = [], []
    last_space = True
    for ch in text:
        where.append(len(flat))
        if ch.isspace():
            if not last_space:
                flat.append(" ")
                last_space = True
        else:
            flat.append(ch)
            last_space = False
    numbers = [(where[s], where[s] + (e - s), text.count("\n", 0, s) + 1, n) for s, e, n in sorted(hits)]
    return Page(path.name, "".join(flat), numbers)


def _allowed() -> dict[str, dict[str, list[str]]]:
    return yaml.safe_load(ALLOWED_FILE.read_text()) or {}


def _intervals(page: Page, snippets: list[str]) -> list[tuple[int, int, str]]:
    out = []
    for snippet in snippets:
        start = page.flat.find(snippet)
        while start >= 0:
            out.append((start, start + len(snippet), snippet))
            start = page.flat.find(snippet, start + 1)
    return out


def unexplained(page: Page, snippets: list[str]) -> list[tuple[int, int, int, str]]:
    """The page's numbers that lie inside none of the listed snippets."""
    spans = _intervals(page, snippets)
    return [n for n in page.numbers if not any(a <= n[0] and n[1] <= b for a, b, _ in spans)]


def test_allow_list_is_well_formed():
    """Known pages and categories; every snippet is on its page and holds a number that needs it."""
    problems = []
    for name, categories in _allowed().items():
        path = REPO / "chapters" / name
        if not path.exists():
            problems.append(f"{name}: no such page")
            continue
        page = read_page(path)
        for category, snippets in (categories or {}).items():
            if category not in CATEGORIES:
                problems.append(f"{name}: unknown category {category!r} (one of {sorted(CATEGORIES)})")
            for snippet in snippets or []:
                spans = _intervals(page, [snippet])
                if not spans:
                    problems.append(f"{name}: {snippet!r} is listed but not on the page (any more)")
                elif not any(a <= n[0] and n[1] <= b for a, b, _ in spans for n in page.numbers):
                    problems.append(f"{name}: {snippet!r} covers no number that needs it")
    assert not problems, "tests/book_numbers.yaml:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_every_prose_number_is_glued_or_a_definition(path):
    allowed = _allowed().get(path.name) or {}
    page = read_page(path)
    bad = unexplained(page, [s for group in allowed.values() for s in (group or [])])
    assert not bad, (f"{len(bad)} number(s) in the prose of {path.name} are neither glued nor listed as "
                     "definitions in tests/book_numbers.yaml (the rule: tests/test_numbers.py):\n"
                     + "\n".join(f"  line {line}: {n!r}  ...{page.context(a, b)}..." for a, b, line, n in bad))


def test_the_rule_catches_a_hand_typed_result(tmp_path):
    """A result typed into the prose fails; glued numbers, indices, small constants, references pass."""
    path = tmp_path / "page.md"
    path.write_text("# A page\n\nThe model reaches 97.3% accuracy, four times faster, after $10^{-18}$ and\n"
                    "$\\sigma(3) \\approx 0.95$, on 2,908 pairs.\n\n"
                    "Glued: {glue:text}`acc:.1%`. An index $h_{t-1}$, a constant $2H$, [chapter 7](ch07), 2014,\n"
                    "`max_len=25`, H100 and UTF-8.\n\n```{code-cell} ipython3\nx = 12345\n```\n")
    page = read_page(path)
    assert [n for *_, n in page.numbers] == ["97.3%", "four", "10^{-18}", "0.95", "2,908"]
    assert unexplained(page, ["after $10^{-18}$"]) == [n for n in page.numbers if n[3] != "10^{-18}"]


def test_a_step_number_is_a_number(tmp_path):
    """"At step 423" is a result as often as a reference: the step a run left a plateau, the step a curve
    peaked. The rule once skipped every number after "step", so such a result typed by hand passed unseen."""
    path = tmp_path / "page.md"
    path.write_text("# A page\n\nThe GRU left the plateau at step 423, the LSTM after steps 512 to 600.\n")
    assert [n for *_, n in read_page(path).numbers] == ["423", "512", "600"]


def test_a_count_written_like_a_year_is_a_number(tmp_path):
    """A number between 1900 and 2029 is a year only where it reads as one (after "et al.", in brackets, or not
    followed by a word): "2000 pairs" or "2024 sentences" is a count typed by hand and must be glued."""
    path = tmp_path / "page.md"
    path.write_text("# A page\n\nCho et al. (2014) and Jozefowicz et al. 2015 say so; in 2017, too. "
                    "We kept 2000 pairs and 1999 sentences.\n")
    assert [n for *_, n in read_page(path).numbers] == ["2000", "1999"]


def test_numbers_after_a_hyphen(tmp_path):
    """A hyphen hides a number only in a name written in capitals (UTF-8, SHA-256): the parts of a date and a
    number after a lower-case word are numbers (the rule once skipped every number after a word and a hyphen,
    so a hand-typed date passed unseen)."""
    path = tmp_path / "page.md"
    path.write_text("# A page\n\nThe file dated 2017-09-29 has top-5 accuracy, in UTF-8, with a SHA-256 sum.\n")
    assert [n for *_, n in read_page(path).numbers] == ["09", "29", "5"]
