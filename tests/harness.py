"""The generic assignment harness: grade every assignment's reference solution, untouched student notebook,
mutants (realistic wrong solutions) and alternatives (correct answers written another way) with nbgrader, in
one ``nbgrader autograde`` run per assignment.

A new chapter adds ``solutions/<assignment>/*.ipynb``, ``tests/mutants/<assignment>.yaml`` and
``tests/alternatives/<assignment>.yaml``; nothing here changes. Results are cached under ``.cache/grading/``
keyed on everything that can change them (set ``SEQCOURSE_NO_CACHE=1`` to force a fresh run; CI starts from
a clean clone anyway).

:func:`submissions` builds the packed submissions of an assignment (``solution``, ``blank``, ``mutants-k``,
``alternatives-k``, each with the score it must get per test) without grading them, so that other graders
(the course's own batch autograder) can be run on exactly the same notebooks.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbgrader_cli  # noqa: E402

MUTANTS = REPO / "tests" / "mutants"
ALTERNATIVES = REPO / "tests" / "alternatives"
CACHE = REPO / ".cache" / "grading"

FULL, ZERO, LESS = "full", "zero", "less"


def verdict(score: float, max_score: float) -> str:
    """FULL, ZERO or LESS for a test cell's score."""
    if abs(score - max_score) < 1e-9:
        return FULL
    return ZERO if score == 0 else LESS


def meets(want: str, have: str) -> bool:
    """Whether a verdict is the expected one (a mutant expected to lose points may lose all of them)."""
    return have == want or (want == LESS and have == ZERO)


@dataclass
class Mutant:
    id: str
    notebook: str
    cell: str
    why: str
    loses: list[str]
    replace: list[tuple[str, str]] | None = None
    source: str | None = None
    visible: str | None = None    # the test cell whose VISIBLE part catches the mutant (a mutant only)
    message: str | None = None    # a regular expression the message of that failure must match

    def apply(self, code: str) -> str:
        if self.source is not None:
            return self.source
        for old, new in self.replace or []:
            if old not in code:
                raise ValueError(f"mutant {self.id}: {old!r} does not occur in the solution of {self.cell}")
            code = code.replace(old, new)
        return code


def _load(path: Path, key: str, with_loses: bool) -> list[Mutant]:
    if not path.exists():
        return []
    spec = yaml.safe_load(path.read_text()) or {}
    default_nb = spec.get("notebook")
    out = []
    for m in spec.get(key, []):
        if with_loses and "loses" not in m:
            raise ValueError(f"{path}: {m.get('id')} has no `loses`")
        if not with_loses and "loses" in m:
            raise ValueError(f"{path}: alternative {m.get('id')} must not have `loses` (it keeps full marks)")
        if ("replace" in m) == ("source" in m):
            raise ValueError(f"{path}: {m.get('id')} needs exactly one of `replace` and `source`")
        if not with_loses and ("visible" in m or "message" in m):
            raise ValueError(f"{path}: alternative {m.get('id')} must not have `visible` or `message`")
        out.append(Mutant(id=m["id"], notebook=m.get("notebook", default_nb), cell=m["cell"], why=m.get("why", ""),
                          loses=list(m.get("loses", [])), replace=[tuple(r) for r in m.get("replace", [])] or None,
                          source=m.get("source"), visible=m.get("visible"), message=m.get("message")))
    ids = [m.id for m in out]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{path}: ids repeat")
    return out


def load_mutants(assignment: str) -> list[Mutant]:
    """The realistic wrong solutions of ``tests/mutants/<assignment>.yaml``."""
    return _load(MUTANTS / f"{assignment}.yaml", "mutants", with_loses=True)


def load_alternatives(assignment: str) -> list[Mutant]:
    """The correct answers written another way, ``tests/alternatives/<assignment>.yaml`` (same format as the
    mutants, list key ``alternatives``, no ``loses``: every test keeps full marks)."""
    return _load(ALTERNATIVES / f"{assignment}.yaml", "alternatives", with_loses=False)


def pack(mutants: list[Mutant]) -> list[list[Mutant]]:
    """Group mutants into as few submissions as possible such that, within one submission, no two mutants
    edit the same cell or are expected to break the same test; then every score can be attributed."""
    groups: list[tuple[list[Mutant], set, set]] = []
    for m in mutants:
        cells, tests = {(m.notebook, m.cell)}, {(m.notebook, t) for t in m.loses}
        for members, used_cells, used_tests in groups:
            if not (cells & used_cells) and not (tests & used_tests):
                members.append(m)
                used_cells |= cells
                used_tests |= tests
                break
        else:
            groups.append(([m], set(cells), set(tests)))
    return [g[0] for g in groups]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_THIS_CELL = re.compile(r"\[this cell: Cell In\[\d+\], line (\d+)\]")
_CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")


def failure(cell) -> dict | None:
    """What a graded test cell showed when it failed: ``{"ename", "evalue", "line", "hidden"}`` (``line``: the
    line of the test cell that raised, 1-based; ``hidden``: whether that line lies in a hidden-tests region, i.e.
    the visible part of the test passed), or None when the cell raised nothing."""
    from autograder.instrument import hidden_lines

    for out in cell.get("outputs", []):
        if out.get("output_type") != "error":
            continue
        evalue = out.get("evalue", "")
        text = _ANSI.sub("", "\n".join(out.get("traceback", [])))
        m = _THIS_CELL.search(evalue) or _THIS_CELL.search(text) or _CELL_LINE.search(text)
        line = int(m.group(1)) if m else None
        return {"ename": out.get("ename", ""), "evalue": evalue, "line": line,
                "hidden": line is not None and line in hidden_lines(cell.source)}
    return None


def failures(notebook) -> dict[str, dict]:
    """``{grade_id: failure}`` of the autograded test cells of a graded notebook that failed."""
    out = {}
    for cell in notebook.cells:
        if nbgrader_cli.is_autograded_test(cell):
            f = failure(cell)
            if f is not None:
                out[nbgrader_cli.nbgrader_meta(cell)["grade_id"]] = f
    return out


def _cache_key(assignment: str) -> str:
    h = hashlib.sha256()
    files = sorted((nbgrader_cli.SOLUTIONS / assignment).rglob("*"))
    files += [MUTANTS / f"{assignment}.yaml", ALTERNATIVES / f"{assignment}.yaml", Path(nbgrader_cli.__file__),
              Path(__file__)]
    files += sorted((REPO / "seqcourse").rglob("*.py"))
    files += sorted((REPO / "seqcourse" / "hint_data").glob("*.json"))   # the edit hints are part of the messages
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(REPO)).encode())
            h.update(f.read_bytes())
    import torch
    import nbgrader

    h.update(f"{torch.__version__} {nbgrader.__version__} {sys.version}".encode())
    return h.hexdigest()[:16]


def _release_from_exercises(assignment: str) -> dict:
    """The committed release notebooks (``exercises/<assignment>/``): what nbgrader generates, as
    ``tests/test_assignments.py`` checks."""
    return {p.name: nbgrader_cli.load(p) for p in sorted((nbgrader_cli.EXERCISES / assignment).glob("*.ipynb"))}


def submissions(assignment: str, release: dict | None = None) -> dict[str, dict]:
    """Every submission the harness grades for ``assignment``, packed, without grading them.

    Returns ``{student: {"notebooks": {file name: notebook}, "expect": {file name: {test: FULL|ZERO|LESS}},
    "mutants": [ids], "alternatives": [ids]}}`` for the students ``solution`` (full marks), ``blank`` (the
    release notebook untouched: zero on every test), ``mutants-k`` (a few mutants that edit different cells
    and break different tests: LESS on the tests they name, FULL elsewhere) and ``alternatives-k`` (a few
    alternatives that edit different cells: FULL everywhere). ``release`` defaults to the committed
    ``exercises/<assignment>/`` notebooks.
    """
    release = release if release is not None else _release_from_exercises(assignment)
    sources = {p.name: nbgrader_cli.load(p) for p in nbgrader_cli.source_notebooks(assignment)}
    points = {name: nbgrader_cli.test_points(nb) for name, nb in sources.items()}
    src_cells = {n: {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
                     for c in sources[n].cells if nbgrader_cli.is_solution_cell(c)} for n in sources}

    students: dict[str, dict] = {}
    students["solution"] = {
        "notebooks": {n: nbgrader_cli.submission(release[n], sources[n]) for n in release},
        "expect": {n: {t: FULL for t in points[n]} for n in release},
        "mutants": [], "alternatives": [],
    }
    students["blank"] = {
        "notebooks": dict(release),
        "expect": {n: {t: ZERO for t in points[n]} for n in release},
        "mutants": [], "alternatives": [],
    }

    def packed(group: list[Mutant]) -> tuple[dict, dict]:
        expect = {n: {t: FULL for t in points[n]} for n in release}
        notebooks = {}
        for n in release:
            overrides = {}
            for m in group:
                if m.notebook != n:
                    continue
                if m.cell not in src_cells[n]:
                    raise KeyError(f"{m.id}: {m.cell} is not a solution cell of {n}")
                overrides[m.cell] = m.apply(src_cells[n][m.cell])
                for t in m.loses:
                    expect[n][t] = LESS
            notebooks[n] = nbgrader_cli.submission(release[n], sources[n], overrides)
        return notebooks, expect

    for k, group in enumerate(pack(load_mutants(assignment)), start=1):
        notebooks, expect = packed(group)
        students[f"mutants-{k}"] = {"notebooks": notebooks, "expect": expect, "mutants": [m.id for m in group],
                                    "alternatives": []}
    for k, group in enumerate(pack(load_alternatives(assignment)), start=1):
        notebooks, expect = packed(group)
        students[f"alternatives-{k}"] = {"notebooks": notebooks, "expect": expect, "mutants": [],
                                         "alternatives": [m.id for m in group]}
    return students


def grade_assignment(assignment: str, workdir: Path) -> dict:
    """Grade the solution, the blank notebook, packed mutants and packed alternatives of one assignment.

    Returns ``{"points": {nb: {test: pts}}, "students": {student: {"expect": {nb: {test: FULL|ZERO|LESS}},
    "mutants": [...], "alternatives": [...], "scores": {nb: {test: [score, max]}}, "failures": {nb: {test:
    failure}}, "submission": {nb: json}}}, "release": {nb: json}}`` (``failure``: see :func:`failure`). ``submission`` holds the notebooks exactly as they were submitted, so that other
    graders (the course's own ``python -m autograder grade``, see ``tests/test_autograder_assignments.py``) grade
    the very same files and compare their scores with nbgrader's without grading anything twice.
    """
    key = _cache_key(assignment)
    cached = CACHE / f"{assignment}-{key}.json"
    if cached.exists() and not os.environ.get("SEQCOURSE_NO_CACHE"):
        return json.loads(cached.read_text())

    course = nbgrader_cli.ThrowawayCourse.create(workdir / assignment, [assignment])
    release = course.generate(assignment)
    sources = {p.name: nbgrader_cli.load(p) for p in nbgrader_cli.source_notebooks(assignment)}
    points = {name: nbgrader_cli.test_points(nb) for name, nb in sources.items()}
    students = submissions(assignment, release)

    for student, info in students.items():
        notebooks = info.pop("notebooks")
        course.submit(student, assignment, notebooks)
        info["submission"] = {n: json.loads(nbformat.writes(nb)) for n, nb in notebooks.items()}
    course.autograde(assignment)
    scores = course.scores(assignment)
    for student, info in students.items():
        info["scores"] = {n: {t: list(v) for t, v in per.items()} for n, per in scores.get(student, {}).items()}
        graded = course.root / "autograded" / student / assignment
        info["failures"] = {p.name: failures(nbgrader_cli.load(p)) for p in sorted(graded.glob("*.ipynb"))}

    result = {"points": points, "students": students,
              "release": {n: json.loads(nbgrader_cli.normalised(nb)) for n, nb in release.items()}}
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob(f"{assignment}-*.json"):
        old.unlink()
    cached.write_text(json.dumps(result))
    return result
