"""A graded run read back from what ``python -m autograder grade`` wrote: ``state.jsonl`` (every result in
full, for the instructor) and ``grades.csv`` (one row per student, students without a submission included).

The class report, the LMS export and the late penalties are made from these files only (not from the
grader's internals), so that they can be made again at any time with ``python -m autograder report``. Both
files are read without trusting them: a torn line, a foreign assignment or an empty class is a
:class:`RunError` with one line that says what to do.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from .records import FORMULA_START   # what spreadsheet_safe prefixes with an apostrophe


class RunError(ValueError):
    """The graded run cannot be read as asked (one line for the terminal)."""


@dataclass
class Run:
    assignment: str
    out: Path
    records: dict = field(default_factory=dict)    # student -> the last complete record of state.jsonl
    rows: list = field(default_factory=list)       # grades.csv rows (dicts), as written
    torn: int = 0                                  # incomplete lines that a later run superseded

    def row(self, student: str) -> dict | None:
        return next((r for r in self.rows if r.get("student") == student), None)

    @property
    def max_score(self) -> float:
        for rec in self.records.values():
            return float(rec.get("max_score", 0) or 0)
        for r in self.rows:
            return number(r.get("max_score"))
        return 0.0


def number(x) -> float:
    """A CSV cell or record field as a float (0 when empty or not a number)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def load(out: Path, assignment: str) -> Run:
    """The run of ``assignment`` in folder ``out`` (the grade command's ``--out``)."""
    out = Path(out)
    state = out / "state.jsonl"
    if not out.is_dir():
        raise RunError(f"no graded run of {assignment} in {out} (that folder does not exist): grade it first with "
                       f"`python -m autograder grade {assignment} --submissions ...`, or give its --out")
    if not state.is_file():
        raise RunError(f"{state} does not exist: grade {assignment} first (`python -m autograder grade "
                       f"{assignment} --submissions ...`), or give the --out folder that grade wrote")
    run = Run(assignment, out)
    data = state.read_bytes()
    lines = data.split(b"\n")
    others: set = set()
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            ok = isinstance(rec, dict) and isinstance(rec.get("student"), str) and isinstance(rec.get("notebooks"), dict)
        except ValueError:
            ok = False
        if not ok:
            if i == len(lines):   # the last line, with no newline after it: a run was stopped while writing
                raise RunError(f"{state}, line {i}, is incomplete: the last grading run of {assignment} was stopped "
                               "while writing it; run the same grade command again to finish (nothing is regraded "
                               "twice)")
            run.torn += 1   # torn by a kill, then ended by the run that resumed (and regraded that student)
            continue
        if rec.get("assignment") != assignment:
            others.add(str(rec.get("assignment")))
            continue
        run.records[rec["student"]] = rec
    grades = out / "grades.csv"
    if grades.is_file():
        with open(grades, newline="", encoding="utf-8") as f:
            run.rows = [r for r in csv.DictReader(f) if r.get("assignment") == assignment]
        for r in run.rows:   # undo spreadsheet_safe's apostrophe, so that rows and records name students alike
            s = r.get("student") or ""
            if s.startswith("'") and s[1:].startswith(FORMULA_START):
                r["student"] = s[1:]
    if not run.records and not run.rows:
        if others:
            raise RunError(f"{state} holds grades of {', '.join(sorted(others))}, not of {assignment}: give the "
                           f"--out folder of {assignment}'s run")
        raise RunError(f"nothing to report for {assignment}: {state} holds no graded submission (an empty class?)")
    return run
