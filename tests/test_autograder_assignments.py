"""Every assignment through the course's own class grader, exactly as an instructor runs it.

For each assignment (whatever ``solutions/`` holds: a new chapter is covered without editing this file), the
submissions that ``tests/harness.py`` graded with nbgrader (the reference solution, the untouched student
notebook, every packed group of mutants, and the alternative correct answers when the harness has them) are
graded again in ONE batch by ``python -m autograder grade``, in its bubblewrap sandbox when the machine has
one. Expected: the reference gets full marks, the untouched notebook zero, every mutant loses the points of
the tests it breaks (a failure its catalogue says a visible test catches is not filed as hidden), alternatives
keep full marks, every submission's status is ``ok``, and every test cell's score equals nbgrader's for the very
same file. Nothing is graded twice with nbgrader: the session's
``graded`` fixture (cached under ``.cache/grading/``) holds both the files and nbgrader's scores.

The gradebook entries that ``nbgrader generate_assignment`` would write (the autograded cells and their
points) are made with nbgrader's own API from the source notebook, which saves a ``generate_assignment``
start-up per assignment; the reference runs are cached in ``.cache/autograder-tests/`` between local runs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness
import nbgrader_cli
from conftest import ASSIGNMENTS, CLASS_BATCHES, REPORTS, result_of

CACHE = nbgrader_cli.REPO / ".cache" / "autograder-tests"
pytestmark = pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments")


def _gradebook(root: Path, assignment: str) -> str:
    """An nbgrader gradebook holding the assignment's autograded cells and points, as generate_assignment
    writes them."""
    from nbgrader.api import Gradebook

    url = f"sqlite:///{root / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.update_or_create_assignment(assignment)
        for path in nbgrader_cli.source_notebooks(assignment):
            nb = nbgrader_cli.load(path)
            stem = path.stem
            gb.update_or_create_notebook(stem, assignment)
            for cell in nb.cells:
                meta = nbgrader_cli.nbgrader_meta(cell)
                if nbgrader_cli.is_autograded_test(cell):
                    gb.update_or_create_grade_cell(meta["grade_id"], stem, assignment,
                                                   max_score=float(meta.get("points", 0)), cell_type="code")
    return url


def _batch(assignment: str, result: dict, root: Path) -> tuple[dict, float, subprocess.CompletedProcess]:
    """Grade the harness's submissions with the real command; ``({student: record}, seconds, process)``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.source_directory = {str(nbgrader_cli.SOLUTIONS)!r}\n"
        f"c.CourseDirectory.db_url = {_gradebook(root, assignment)!r}\n")
    for student, info in result["students"].items():
        files = info.get("submission")
        assert files, (f"the harness kept no submitted files for {student!r}: every student it grades must go "
                       "through the submit loop of harness.grade_assignment (which stores them)")
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, nb in files.items():
            (folder / name).write_text(json.dumps(nb))
    out = root / "out"
    cmd = [sys.executable, "-m", "autograder", "grade", assignment, "--submissions", str(root / "submitted"),
           "--config", str(root / "nbgrader_config.py"), "--out", str(out), "--feedback-dir", str(root / "feedback"),
           "--cache-dir", str(CACHE / assignment), "--workers", os.environ.get("SEQCOURSE_AUTOGRADER_WORKERS", "2")]
    env = dict(os.environ, PYTHONPATH=str(nbgrader_cli.REPO), OMP_NUM_THREADS="1")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=nbgrader_cli.REPO, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.monotonic() - t0
    records = {}
    state = out / "state.jsonl"
    if state.exists():
        for line in state.read_text().splitlines():
            rec = json.loads(line)
            records[rec["student"]] = rec
    return records, seconds, proc


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_class_grader_agrees_with_nbgrader(graded, assignment, tmp_path):
    result = result_of(graded, assignment)
    records, seconds, proc = _batch(assignment, result, tmp_path / assignment)
    log = (tmp_path / assignment / "out" / "autograde.log")
    assert proc.returncode == 0, (f"`python -m autograder grade {assignment}` failed ({proc.returncode}):\n"
                                  f"{proc.stderr[-3000:]}\n{log.read_text()[-3000:] if log.exists() else ''}")
    CLASS_BATCHES[assignment] = tmp_path / assignment   # reused by tests/test_autograder_report.py
    problems, table = [], {}
    catalogue = {m.id: m for m in harness.load_mutants(assignment)}
    for student, info in result["students"].items():
        rec = records.get(student)
        if rec is None:
            problems.append(f"{student}: not graded by the class grader")
            continue
        if rec["status"] != "ok":
            problems.append(f"{student}: status {rec['status']} ({rec['reason'][:300]})")
        ours_total = nb_total = 0.0
        for nb, expected in info["expect"].items():
            ours = rec["notebooks"].get(nb, {}).get("tests", {})
            theirs = info["scores"].get(nb)   # None: nbgrader could not grade this notebook at all
            for test, want in expected.items():
                if test not in ours:
                    problems.append(f"{student}: {nb}:{test}: no score")
                    continue
                score, max_score = ours[test]["score"], ours[test]["max_score"]
                ours_total += score
                if not harness.meets(want, harness.verdict(score, max_score)):
                    problems.append(f"{student} [{', '.join(info.get('mutants', []))}]: {nb}:{test}: expected "
                                    f"{want}, got {score:g}/{max_score:g} ({ours[test].get('detail', '')[:300]})")
                if theirs is not None and test in theirs:
                    nb_score = theirs[test][0]
                    nb_total += nb_score
                    if abs(nb_score - score) > 1e-9:
                        problems.append(f"{student}: {nb}:{test}: the class grader gives {score:g}, nbgrader "
                                        f"{nb_score:g} ({ours[test].get('detail', '')[:300]})")
        for mid in info.get("mutants", []):   # a visible test's failure must not be filed as a hidden one
            m = catalogue.get(mid)
            got = rec["notebooks"].get(m.notebook, {}).get("tests", {}).get(m.visible) if m and m.visible else None
            if got is not None and got.get("hidden"):
                problems.append(f"{student} [{mid}]: {m.notebook}:{m.visible}: the visible test catches it, but "
                                f"the record says a hidden test failed ({got.get('detail', '')[:300]})")
        table[student] = (ours_total, nb_total, sum(sum(p.values()) for p in result["points"].values()))
    REPORTS[f"class grader vs nbgrader: {assignment}"] = _summary(result, table, seconds)
    assert not problems, "\n".join(problems)


def _summary(result: dict, table: dict, seconds: float) -> str:
    def cell(student):
        ours, theirs, full = table.get(student, (float("nan"),) * 3)
        return f"{ours:g}/{theirs:g} of {full:g}"

    mutants = [s for s in table if s.startswith("mutants-")]
    others = [s for s in table if s not in ("solution", "blank") and s not in mutants]
    lower = sum(1 for s in mutants if table[s][0] < table[s][2])
    parts = [f"reference {cell('solution')}", f"untouched {cell('blank')}",
             f"{len(mutants)} mutant submissions ({sum(len(result['students'][s].get('mutants', [])) for s in mutants)} "
             f"mutants), {lower} below full, scores " + ", ".join(cell(s) for s in mutants)]
    if others:
        parts.append(", ".join(f"{s} {cell(s)}" for s in others))
    return "; ".join(parts) + f" (ours/nbgrader; batch {seconds:.0f} s)"
