"""Read untrusted notebooks defensively and build what actually runs: the instructor's notebook, with the
student's answers in it.

The executed sequence is built from the INSTRUCTOR's source notebook, cell by cell:

- setup and other locked cells, and every autograded test cell (hidden tests included), come from the
  instructor's notebook, whatever the submission did to them (edited, deleted, duplicated, turned into
  markdown, renamed, points changed);
- each solution cell gets the student's code for that ``grade_id`` (the last copy if the student duplicated
  it, nothing if they deleted it: then the tests that need it fail, with a note);
- the student's own extra cells (scratch, helpers) run too, in their order, after the instructor cell they
  follow in the submission; a student cell that carries an instructor ``grade_id`` is not "extra", it is
  that instructor cell.

Points come from the gradebook (see :mod:`autograder.gradebook`), never from the submission's metadata, and the
kernelspec of the submission is ignored: the grader always runs the course's Python.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .instrument import strip_hidden


def is_test_cell(cell_type: str, nbgrader: dict) -> bool:
    """Whether a cell is an autograded test (nbgrader's ``grade`` without ``solution``, a code cell)."""
    return bool(nbgrader.get("grade")) and not nbgrader.get("solution") and cell_type == "code"


class InvalidNotebook(Exception):
    """The file is not a readable notebook; the message says why (for the student and the instructor)."""


@dataclass
class Cell:
    cell_type: str
    source: str
    grade_id: str | None = None
    nbgrader: dict = field(default_factory=dict)
    cell_id: str | None = None

    @property
    def is_solution(self) -> bool:
        return bool(self.nbgrader.get("solution"))

    @property
    def is_test(self) -> bool:
        return is_test_cell(self.cell_type, self.nbgrader)

    @property
    def points(self) -> float:
        try:
            return float(self.nbgrader.get("points", 0) or 0)
        except (TypeError, ValueError):
            return 0.0


@dataclass
class Notebook:
    cells: list
    kernel: str | None = None

    def by_grade_id(self) -> dict:
        return {c.grade_id: c for c in self.cells if c.grade_id}

    def tests(self) -> list:
        return [c for c in self.cells if c.is_test]


def _text(value, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "".join(value)
    raise InvalidNotebook(f"{what}: 'source' is neither text nor a list of lines")


def parse_notebook(data: bytes, *, max_bytes: int = 64 << 20) -> Notebook:
    """Parse notebook bytes; raises :class:`InvalidNotebook` with a precise, student-readable reason."""
    if len(data) > max_bytes:
        raise InvalidNotebook(f"the file is {len(data) / 2**20:.0f} MiB, more than the {max_bytes / 2**20:.0f} MiB "
                              "allowed (clear large outputs before submitting)")
    if not data.strip():
        raise InvalidNotebook("the file is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidNotebook(f"the file is not valid UTF-8 text (byte {exc.start}: {exc.reason}); "
                              "it may be damaged or not a notebook") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidNotebook(f"the file is not valid notebook JSON ({exc.msg} at line {exc.lineno}, column "
                              f"{exc.colno}); it may be truncated or edited by hand") from None
    except RecursionError:
        raise InvalidNotebook("the file's JSON is nested too deeply") from None
    if not isinstance(raw, dict):
        raise InvalidNotebook("the file is JSON but not a notebook (no top-level object)")
    major = raw.get("nbformat")
    if major == 3 or ("worksheets" in raw and "cells" not in raw):
        try:
            import nbformat

            raw = json.loads(nbformat.writes(nbformat.convert(nbformat.from_dict(raw), 4)))
        except Exception as exc:  # noqa: BLE001
            raise InvalidNotebook(f"an old (version 3) notebook that could not be converted: {exc}") from None
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise InvalidNotebook("the file is JSON but not a notebook (no list of cells)")
    out = []
    for i, c in enumerate(cells):
        if not isinstance(c, dict) or not isinstance(c.get("cell_type"), str):
            raise InvalidNotebook(f"cell {i + 1} is malformed (no cell type)")
        meta = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        nbg = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
        gid = nbg.get("grade_id") if isinstance(nbg.get("grade_id"), str) else None
        out.append(Cell(cell_type=c["cell_type"], source=_text(c.get("source", ""), f"cell {i + 1}"),
                        grade_id=gid, nbgrader=nbg if gid else {},
                        cell_id=c.get("id") if isinstance(c.get("id"), str) else None))
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    ks = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    return Notebook(cells=out, kernel=ks.get("name") if isinstance(ks.get("name"), str) else None)


@dataclass
class PlanCell:
    kind: str              # "student" | "instructor" | "test"
    source: str
    grade_id: str | None = None
    label: str = ""        # for messages: which cell this is


def _norm(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def assemble(instructor: Notebook, student: Notebook) -> tuple[list, list]:
    """``(plan cells, notes)``: what runs, and what was repaired or ignored in the submission."""
    inst = instructor.by_grade_id()
    notes: list[str] = []
    solutions: dict[str, str] = {}
    seen: dict[str, int] = {}
    attached: dict = {None: []}
    last = None
    for c in student.cells:
        gid = c.grade_id if c.grade_id in inst else None
        if gid is not None:
            seen[gid] = seen.get(gid, 0) + 1
            last = gid
            ic = inst[gid]
            if ic.is_solution:
                if c.cell_type == "code":
                    solutions[gid] = c.source
                elif gid not in solutions:
                    solutions[gid] = ""
                    notes.append(f"your answer cell {gid} is not a code cell: it was not run")
            elif ic.is_test:
                if c.cell_type != "code":
                    notes.append(f"test cell {gid} was turned into {c.cell_type}: the instructor's test ran")
                elif _norm(c.source) != _norm(strip_hidden(ic.source)) and _norm(c.source) != _norm(ic.source):
                    notes.append(f"test cell {gid} was edited: the instructor's version ran")
                if c.nbgrader.get("points") is not None and c.points != ic.points:
                    notes.append(f"points of {gid} were changed in the notebook: ignored")
            continue
        if c.cell_type == "code":
            attached.setdefault(last, []).append(c.source)
    for gid, n in seen.items():
        if n > 1:
            what = "answer cell" if inst[gid].is_solution else "cell"
            notes.append(f"{what} {gid} appears {n} times" + (": the last copy was used" if inst[gid].is_solution
                                                               else ": it ran once, as the instructor wrote it"))
    for c in instructor.tests():
        if c.grade_id not in seen:
            notes.append(f"test cell {c.grade_id} was missing: the instructor's test ran")
    if student.kernel and instructor.kernel and student.kernel != instructor.kernel:
        notes.append(f"kernel '{student.kernel}' ignored: graded with the course's Python")

    plan = [PlanCell("student", src, None, "your code at the top of the notebook") for src in attached[None]]
    for ic in instructor.cells:
        gid = ic.grade_id
        if ic.cell_type == "code" and gid:
            if ic.is_solution:
                if gid in solutions:
                    plan.append(PlanCell("student", solutions[gid], gid, f"your answer {gid}"))
                else:
                    notes.append(f"answer cell {gid} was missing")
            elif ic.is_test:
                plan.append(PlanCell("test", ic.source, gid, f"test {gid}"))
            else:
                plan.append(PlanCell("instructor", ic.source, gid, f"cell {gid}"))
        if gid:
            plan.extend(PlanCell("student", src, None, f"your cell after {gid}") for src in attached.pop(gid, []))
    return plan, notes
