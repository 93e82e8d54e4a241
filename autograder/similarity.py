"""Similar submissions: ``python -m autograder similar ASSIGNMENT`` compares the students' answer cells, pair
by pair, and ranks the pairs that share most code the students wrote themselves.

What is compared: each student's SOLUTION cells only (the cells the instructor marked ``### BEGIN/END
SOLUTION``, found by their nbgrader ``grade_id`` in the submitted notebook, as the grader finds them). What is
not evidence: the handed-out notebook (nbgrader's stub, ``# YOUR CODE HERE`` / ``raise NotImplementedError()``)
and the reference solution are *boilerplate*: a student who writes the reference's code, or leaves a cell
untouched, shares nothing with anyone.

How: copydetect (winnowing, as MOSS: Schleimer, Wilkerson and Aiken, SIGMOD 2003), chosen over Dolos by
measurement on a planted class (``benchmarks/similarity_bench.py``, ``benchmarks/results/similarity.txt``).
copydetect's tokenizer replaces every name by one letter and drops comments and spacing, so renaming,
re-formatting, comments and reordering whole functions change nothing but the edges of a function; each answer
cell is fingerprinted on its own (a k-gram across two cells would be a fingerprint that no boilerplate
removes), and boilerplate fingerprints are removed here (copydetect 0.5's own removal keeps repeated
fingerprints: ``np.intersect1d(..., assume_unique=True)`` on a list with repeats).

A pair's *similarity* is, for each of the two students, the share of their own fingerprinted code (boilerplate
removed) that the other one has too; the pair's score is the larger share, so that a copier who added code of
their own is still found through the copied student's side. A pair is *flagged* when its score reaches
``--threshold`` (default 0.4) and the shared code is at least ``--min-tokens`` characters of tokenized code (default
110: a few lines in common are not evidence). The defaults sit between the two groups of the planted class
(``benchmarks/results/similarity.txt``: every copy pair scored at least 0.54 with at least 166 characters shared;
no independent pair with 100 or more shared scored above 0.28, none with a score of 0.4 or more shared over 71).

Limits: honest answers to a short function look alike (two students who write the same 6-line loop share 71
characters of it in the planted class), so a copy of a submission whose only own code is ONE short answer
cannot be told from that, and is not flagged; a copy in which the copier rewrote the logic (another algorithm)
is not a copy this finds. A flag is a reason to read both submissions side by side, never a verdict.

Output, into ``<out>/similarity/`` beside ``state.jsonl`` (an instructor's folder, never the feedback folder):
``pairs.csv`` (every pair that shares anything, ranked), ``index.html`` (the ranked list), and one side-by-side
page per flagged pair with the shared code marked. Nothing of this reaches a student's file: the similarity
run reads submissions and writes only there.
"""
from __future__ import annotations

import csv
import io
import itertools
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from .feedback import _e   # HTML-escape, as the feedback pages do

log = logging.getLogger("autograder")

K = 25                   # copydetect's noise threshold: k-grams of 25 tokenized characters
WINDOW = 1               # winnowing window: every k-gram kept (classes are small; exact beats compact)
THRESHOLD = 0.4
MIN_TOKENS = 110
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"   # nbgrader's ClearSolutions.code_stub for Python
_SOLUTION_REGION = re.compile(r"^([ \t]*)### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?",
                              re.DOTALL | re.MULTILINE)


class SimilarityError(ValueError):
    """The similarity check cannot run as asked (the message says why, in one line)."""


# ---------------------------------------------------------------------------------------------- answers
def reference_and_stub(source: str) -> tuple[str, str]:
    """The reference solution a student would write (markers removed) and the stub nbgrader hands out."""
    ref = _SOLUTION_REGION.sub(lambda m: m.group(2), source)
    stub = _SOLUTION_REGION.sub(lambda m: "".join(m.group(1) + line + "\n" for line in STUB.splitlines()), source)
    return ref, stub


def answers_of(files: dict, instructor: dict) -> list:
    """``[(notebook, grade_id, code)]`` of a submission's solution cells, in the instructor's order.
    ``files``: ``{notebook file: bytes}``; ``instructor``: ``{notebook file: assemble.Notebook}``. A notebook
    submitted under another name is found by its cells' grade ids, as the grader finds it; one that cannot be
    read contributes nothing (the grader reports it)."""
    from .assemble import InvalidNotebook, parse_notebook

    parsed = {}
    for name, data in files.items():
        try:
            nb = parse_notebook(data)
        except InvalidNotebook:
            continue
        mine = {}
        for c in nb.cells:   # the last copy of a duplicated cell, as the grader runs it
            if c.grade_id and c.cell_type == "code":
                mine[c.grade_id] = c.source
        parsed[name] = mine
    out = []
    for name, inb in instructor.items():
        wanted = [c.grade_id for c in inb.cells if c.is_solution and c.cell_type == "code"]
        mine = parsed.get(name)
        if mine is None:   # renamed: the submitted file that holds most of this notebook's answer cells
            best = max(parsed.items(), key=lambda kv: sum(g in kv[1] for g in wanted), default=(None, {}))
            mine = best[1] if any(g in best[1] for g in wanted) else {}
        out.extend((name, g, mine[g]) for g in wanted if g in mine)
    return out


# ---------------------------------------------------------------------------------------------- fingerprints
@dataclass
class Print:
    """One answer cell's fingerprints (copydetect's), boilerplate removed."""

    notebook: str
    grade_id: str
    code: str
    fp: object            # copydetect.CodeFingerprint
    hashes: set


@dataclass
class Student:
    name: str
    prints: list = field(default_factory=list)
    hashes: set = field(default_factory=set)
    coverage: float = 0.0  # tokenized characters covered by the student's own fingerprints


def _fingerprint(code: str):
    from copydetect import CodeFingerprint

    return CodeFingerprint("answer.py", K, WINDOW, fp=io.StringIO(code), language="python")


def boilerplate_hashes(instructor: dict) -> set:
    """Fingerprints of the reference solutions and of the handed-out stubs of every solution cell."""
    out: set = set()
    for inb in instructor.values():
        for c in inb.cells:
            if c.is_solution:
                for text in reference_and_stub(c.source):
                    if text.strip():
                        out |= _fingerprint(text).hashes
    return out


def student_print(name: str, answers: list, boilerplate: set) -> Student:
    from copydetect.utils import get_token_coverage

    s = Student(name)
    for notebook, gid, code in answers:
        if not code.strip():
            continue
        fp = _fingerprint(code)
        for h in fp.hashes & boilerplate:
            del fp.hash_idx[h]
        fp.hashes = fp.hashes - boilerplate
        if not fp.hashes:
            continue
        fp.token_coverage = get_token_coverage(fp.hash_idx, K, len(fp.filtered_code))
        s.prints.append(Print(notebook, gid, code, fp, fp.hashes))
        s.hashes |= fp.hashes
        s.coverage += fp.token_coverage
    return s


# ---------------------------------------------------------------------------------------------- pairs
@dataclass
class Pair:
    a: str
    b: str
    shared_a: int          # tokenized characters of a's own code that b has too
    shared_b: int
    sim_a: float
    sim_b: float
    marks_a: dict = field(default_factory=dict)   # (notebook, grade_id) -> [(start, end)] in the raw code
    marks_b: dict = field(default_factory=dict)

    @property
    def score(self) -> float:
        return max(self.sim_a, self.sim_b)

    @property
    def shared(self) -> int:
        return max(self.shared_a, self.shared_b)

    def flagged(self, threshold: float = THRESHOLD, min_tokens: int = MIN_TOKENS) -> bool:
        return self.score >= threshold and self.shared >= min_tokens


def _marks(student: Student, common: set) -> tuple[int, dict]:
    """Tokenized characters of ``student``'s answers covered by the ``common`` fingerprints, and where they lie
    in the raw code of each answer."""
    import numpy as np
    from copydetect.utils import get_copied_slices

    total, marks = 0, {}
    for p in student.prints:
        hit = p.hashes & common
        if not hit:
            continue
        idx = np.concatenate([np.array(p.fp.hash_idx[h]) for h in hit])
        slices = get_copied_slices(idx, K)
        total += int(np.sum(slices[1] - slices[0]))
        offsets = p.fp.offsets
        if len(offsets) > 0:   # filtered positions back to the raw code, as copydetect.compare_files does
            slices = slices + offsets[:, 1][np.clip(np.searchsorted(offsets[:, 0], slices), 0, offsets.shape[0] - 1)]
        marks[(p.notebook, p.grade_id)] = [(int(a), int(b)) for a, b in zip(slices[0], slices[1])]
    return total, marks


def compare(students: list) -> list:
    """Every pair of students that shares at least one fingerprint, best first. Pairs that share nothing are
    never compared (an inverted index from fingerprint to students)."""
    index: dict = {}
    for i, s in enumerate(students):
        for h in s.hashes:
            index.setdefault(h, []).append(i)
    candidates = set()
    for owners in index.values():
        if len(owners) > 1:
            candidates.update(itertools.combinations(owners, 2))
    pairs = []
    for i, j in candidates:
        a, b = students[i], students[j]
        common = a.hashes & b.hashes
        shared_a, marks_a = _marks(a, common)
        shared_b, marks_b = _marks(b, common)
        pairs.append(Pair(a.name, b.name, shared_a, shared_b, shared_a / a.coverage if a.coverage else 0.0,
                          shared_b / b.coverage if b.coverage else 0.0, marks_a, marks_b))
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs


# ---------------------------------------------------------------------------------------------- the command
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1b1b1b;margin:0 auto;max-width:90rem;padding:1rem}
.private{border:2px solid #a4001d;background:#fff4f5;padding:.6rem .9rem;border-radius:6px}
table{border-collapse:collapse}th,td{border:1px solid #d0d0d0;padding:.3rem .5rem;text-align:left}
th{background:#f1f3f5}td.num{text-align:right}.flag{color:#a4001d;font-weight:700}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
pre{background:#f6f8fa;padding:.5rem;white-space:pre-wrap;word-break:break-word;font-size:.85rem}
mark{background:#ffe066;color:#1b1b1b}h3{font-size:1rem;margin:.8rem 0 .2rem}
"""
_PRIVATE = ("<p class='private'><strong>For the instructor only.</strong> Similar code is a reason to look, not "
            "proof of copying: read both sides before talking to anyone.</p>")


def _page(title: str, body: str) -> str:

    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{_CSS}</style></head><body><main><h1>{_e(title)}</h1>{_PRIVATE}{body}</main></body></html>")


def _marked(code: str, spans: list) -> str:

    out, pos = [], 0
    for a, b in sorted(spans):
        a, b = max(a, pos), min(b, len(code))
        if b <= a:
            continue
        out.append(_e(code[pos:a]) + "<mark>" + _e(code[a:b]) + "</mark>")
        pos = b
    out.append(_e(code[pos:]))
    return "".join(out)


def _side(student: Student, marks: dict) -> str:

    parts = [f"<section aria-label='{_e(student.name)}'><h2>{_e(student.name)}</h2>"]
    for p in student.prints:
        spans = marks.get((p.notebook, p.grade_id), [])
        parts.append(f"<h3>{_e(p.grade_id)}{' (shared code marked)' if spans else ''}</h3>"
                     f"<pre>{_marked(p.code, spans)}</pre>")
    return "".join(parts) + "</section>"


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s)[:60]


def run(assignment: str, source: Path, subs: dict, out: Path, *, threshold: float = THRESHOLD,
        min_tokens: int = MIN_TOKENS) -> dict:
    """Compare the answer cells of ``subs`` (``{student: Submission}``, as collected for grading) and write
    ``pairs.csv``, ``index.html`` and one page per flagged pair into ``out``."""
    from .assemble import InvalidNotebook, parse_notebook

    source = Path(source)
    instructor = {}
    for p in sorted(source.glob("*.ipynb")) if source.is_dir() else []:
        try:
            instructor[p.name] = parse_notebook(p.read_bytes())
        except InvalidNotebook as exc:
            raise SimilarityError(f"the source notebook {p} cannot be read: {exc}") from None
    if not instructor:
        raise SimilarityError(f"unknown assignment {assignment!r}: no source notebook in {source}")
    boilerplate = boilerplate_hashes(instructor)
    students = [student_print(s, answers_of(sub.files, instructor), boilerplate)
                for s, sub in sorted(subs.items()) if sub.identified and sub.files]
    if len(students) < 2:
        raise SimilarityError(f"{len(students)} submission(s) of {assignment} with answers: nothing to compare")
    by_name = {s.name: s for s in students}
    pairs = compare(students)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("pair-*.html"):
        old.unlink()
    flagged = [p for p in pairs if p.flagged(threshold, min_tokens)]
    flagged_ids = {id(p) for p in flagged}
    pairs = flagged + [p for p in pairs if id(p) not in flagged_ids]   # the flagged ones first, best first
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "student_a", "student_b", "score", "share_of_a", "share_of_b", "shared_tokens", "flagged",
                "page"])
    rows = []
    for k, p in enumerate(pairs, start=1):
        page = ""
        if id(p) in flagged_ids:
            page = f"pair-{k:04d}-{_slug(p.a)}-{_slug(p.b)}.html"
            body = (f"<p>Score {p.score:.2f}: {p.sim_a:.0%} of {_e(p.a)}'s own code is also in {_e(p.b)}'s, "
                    f"{p.sim_b:.0%} of {_e(p.b)}'s in {_e(p.a)}'s ({p.shared} characters of tokenized code). "
                    "Marked: the code they share, names, spacing and comments aside. Cells equal to the reference "
                    "solution or the handed-out notebook are left out.</p><div class='side'>"
                    + _side(by_name[p.a], p.marks_a) + _side(by_name[p.b], p.marks_b) + "</div>"
                    "<p><a href='index.html'>All pairs</a></p>")
            (out / page).write_text(_page(f"{assignment}: {p.a} and {p.b}", body), encoding="utf-8")
        w.writerow([k, p.a, p.b, f"{p.score:.4f}", f"{p.sim_a:.4f}", f"{p.sim_b:.4f}", p.shared,
                    "yes" if page else "no", page])
        if page or k <= 50:
            rows.append(f"<tr><td class='num'>{k}</td><td>{_e(p.a)}</td><td>{_e(p.b)}</td>"
                        f"<td class='num'>{p.score:.2f}</td><td class='num'>{p.shared}</td><td>"
                        + (f"<a class='flag' href='{_e(page)}'>flagged: {_e(p.a)} and {_e(p.b)} side by side</a>" if page
                           else "") + "</td></tr>")
    (out / "pairs.csv").write_text(buf.getvalue(), encoding="utf-8")
    body = (f"<p>{len(students)} students compared; {len(pairs)} pairs share some code; "
            f"<strong>{len(flagged)} flagged</strong> (score at least {threshold:g} and at least {min_tokens} "
            "characters of tokenized code shared). Score: the larger of the two shares of a student's own code "
            "(answer cells, the reference solution and the handed-out notebook removed) found in the other's. "
            "All pairs are in <code>pairs.csv</code>.</p>"
            "<table><caption>Pairs: the flagged ones, then the most similar of the others (every flagged one, and "
            "50 in all at least)</caption><thead><tr>"
            "<th scope='col'>rank</th><th scope='col'>student</th><th scope='col'>student</th>"
            "<th scope='col'>score</th><th scope='col'>shared</th><th scope='col'>page</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")
    (out / "index.html").write_text(_page(f"Similar submissions: {assignment}", body), encoding="utf-8")
    log.info("similarity: %d students, %d pairs share code, %d flagged; %s", len(students), len(pairs), len(flagged),
             out / "index.html")
    return {"students": len(students), "pairs": len(pairs), "flagged": len(flagged), "index": out / "index.html",
            "flagged_pairs": [(p.a, p.b) for p in flagged], "all": pairs}
