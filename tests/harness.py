"""The generic assignment harness: grade every assignment's reference solution, untouched student notebook
and mutants (realistic wrong solutions) with nbgrader, in one ``nbgrader autograde`` run per assignment.

A new chapter adds ``solutions/<assignment>/*.ipynb`` and ``tests/mutants/<assignment>.yaml``; nothing here
changes. Results are cached under ``.cache/grading/`` keyed on everything that can change them (set
``SEQCOURSE_NO_CACHE=1`` to force a fresh run; CI starts from a clean clone anyway).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder import grading  # noqa: E402

MUTANTS = REPO / "tests" / "mutants"
CACHE = REPO / ".cache" / "grading"

FULL, ZERO, LESS = "full", "zero", "less"


@dataclass
class Mutant:
    id: str
    notebook: str
    cell: str
    why: str
    loses: list[str]
    replace: list[tuple[str, str]] | None = None
    source: str | None = None

    def apply(self, code: str) -> str:
        if self.source is not None:
            return self.source
        for old, new in self.replace or []:
            if old not in code:
                raise ValueError(f"mutant {self.id}: {old!r} does not occur in the solution of {self.cell}")
            code = code.replace(old, new)
        return code


def load_mutants(assignment: str) -> list[Mutant]:
    path = MUTANTS / f"{assignment}.yaml"
    if not path.exists():
        return []
    spec = yaml.safe_load(path.read_text())
    default_nb = spec.get("notebook")
    out = []
    for m in spec.get("mutants", []):
        out.append(Mutant(id=m["id"], notebook=m.get("notebook", default_nb), cell=m["cell"], why=m.get("why", ""),
                          loses=list(m["loses"]), replace=[tuple(r) for r in m.get("replace", [])] or None,
                          source=m.get("source")))
    ids = [m.id for m in out]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{path}: mutant ids repeat")
    return out


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


def _cache_key(assignment: str) -> str:
    h = hashlib.sha256()
    files = sorted((grading.SOLUTIONS / assignment).rglob("*"))
    files += [MUTANTS / f"{assignment}.yaml", Path(grading.__file__), Path(__file__)]
    files += sorted((REPO / "seqcourse").rglob("*.py"))
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(REPO)).encode())
            h.update(f.read_bytes())
    import torch
    import nbgrader

    h.update(f"{torch.__version__} {nbgrader.__version__} {sys.version}".encode())
    return h.hexdigest()[:16]


def grade_assignment(assignment: str, workdir: Path) -> dict:
    """Grade the solution, the blank notebook and packed mutants of one assignment.

    Returns ``{"points": {nb: {test: pts}}, "students": {student: {"expect": {nb: {test: FULL|ZERO|LESS}},
    "mutants": [...], "scores": {nb: {test: [score, max]}}, "submission": {nb: json}}}, "release": {nb: json}}``.
    ``submission`` holds the notebooks exactly as they were submitted, so that other graders (the course's own
    ``python -m autograder grade``, see ``tests/test_autograder_assignments.py``) grade the very same files and
    compare their scores with nbgrader's without grading anything twice.
    """
    key = _cache_key(assignment)
    cached = CACHE / f"{assignment}-{key}.json"
    if cached.exists() and not os.environ.get("SEQCOURSE_NO_CACHE"):
        return json.loads(cached.read_text())

    course = grading.Course.create(workdir / assignment, [assignment])
    release = course.generate(assignment)
    sources = {p.name: grading.load(p) for p in grading.source_notebooks(assignment)}
    points = {name: grading.test_points(nb) for name, nb in sources.items()}

    students: dict[str, dict] = {}
    students["solution"] = {
        "notebooks": {n: grading.submission(release[n], sources[n]) for n in release},
        "expect": {n: {t: FULL for t in points[n]} for n in release},
        "mutants": [],
    }
    students["blank"] = {
        "notebooks": dict(release),
        "expect": {n: {t: ZERO for t in points[n]} for n in release},
        "mutants": [],
    }
    for k, group in enumerate(pack(load_mutants(assignment)), start=1):
        expect = {n: {t: FULL for t in points[n]} for n in release}
        notebooks = {}
        for n in release:
            overrides = {}
            src_cells = {grading.nbgrader_meta(c)["grade_id"]: grading.student_code(c.source)
                         for c in sources[n].cells if grading.is_solution_cell(c)}
            for m in group:
                if m.notebook != n:
                    continue
                overrides[m.cell] = m.apply(src_cells[m.cell])
                for t in m.loses:
                    expect[n][t] = LESS
            notebooks[n] = grading.submission(release[n], sources[n], overrides)
        students[f"mutants-{k}"] = {"notebooks": notebooks, "expect": expect, "mutants": [m.id for m in group]}

    for student, info in students.items():
        notebooks = info.pop("notebooks")
        course.submit(student, assignment, notebooks)
        info["submission"] = {n: json.loads(nbformat.writes(nb)) for n, nb in notebooks.items()}
    course.autograde(assignment)
    scores = course.scores(assignment)
    for student, info in students.items():
        info["scores"] = {n: {t: list(v) for t, v in per.items()} for n, per in scores.get(student, {}).items()}

    result = {"points": points, "students": students,
              "release": {n: json.loads(grading.normalised(nb)) for n, nb in release.items()}}
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob(f"{assignment}-*.json"):
        old.unlink()
    cached.write_text(json.dumps(result))
    return result

