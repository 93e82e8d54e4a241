"""Every assignment, graded through nbgrader: the solution gets full marks, the untouched student notebook
gets zero on every autograded test, every mutant (a realistic wrong solution) loses the points of the
tests it breaks while the other tests keep theirs, fails the visible part of the test it names with a
message that names its cause, and every alternative (a correct answer written another way) keeps full marks. Plus the static checks: exercises/ is what nbgrader generates from solutions/, grade
ids are unique, every graded function has at least two mutants and three alternatives."""
from __future__ import annotations

import os
import re
import time
from collections import Counter

import nbformat
import pytest
from nbclient import NotebookClient

import harness
import nbgrader_cli
from conftest import ASSIGNMENTS, TIMINGS, result_of

pytestmark = pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments")


def _check_student(result, student):
    info = result["students"][student]
    problems = []
    for nb, expected in info["expect"].items():
        got = info["scores"].get(nb)
        if got is None:
            problems.append(f"{nb}: not graded at all (nbgrader failed on the whole notebook)")
            continue
        for test, want in expected.items():
            if test not in got:
                problems.append(f"{nb}:{test}: no grade recorded")
                continue
            score, max_score = got[test]
            if not harness.meets(want, harness.verdict(score, max_score)):
                problems.append(f"{nb}:{test}: expected {want}, got {score:g}/{max_score:g}")
    return problems


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_gets_full_marks(graded, assignment):
    problems = _check_student(result_of(graded, assignment), "solution")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_exercise_gets_zero(graded, assignment):
    problems = _check_student(result_of(graded, assignment), "blank")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_mutants_lose_points(graded, assignment):
    result = result_of(graded, assignment)
    problems = []
    for student, info in result["students"].items():
        if student.startswith("mutants-"):
            for p in _check_student(result, student):
                problems.append(f"[{', '.join(info['mutants'])}] {p}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_mutants_are_caught_by_a_visible_test_that_names_the_cause(graded, assignment):
    """What a student checking alone sees: every mutant fails the VISIBLE part of the test it names (the line
    that raised lies outside the hidden-tests regions, so the student's own run of the notebook fails there
    too), and the message of that failure matches the mutant's `message` (the cause, in the student's words)."""
    result = result_of(graded, assignment)
    mutants = {m.id: m for m in harness.load_mutants(assignment)}
    problems = []
    for student, info in result["students"].items():
        for mid in info.get("mutants", []):
            m = mutants[mid]
            got = info.get("failures", {}).get(m.notebook, {}).get(m.visible)
            if got is None:
                problems.append(f"[{mid}] {m.visible} did not fail")
            elif got["hidden"] or got["line"] is None:
                problems.append(f"[{mid}] {m.visible} failed in a hidden test (line {got['line']}), not in its visible "
                                f"part: {got['ename']}: {got['evalue'][:300]}")
            elif not re.search(m.message, f"{got['ename']}: {got['evalue']}"):
                problems.append(f"[{mid}] {m.visible}: the message does not match /{m.message}/: "
                                f"{got['ename']}: {got['evalue'][:400]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_mutant_names_its_visible_test_and_message(assignment):
    """Static (no grading): each mutant states the test whose visible part catches it (one of the tests it loses)
    and a regular expression for the message of that failure."""
    bad = []
    for m in harness.load_mutants(assignment):
        if not m.visible or m.visible not in m.loses:
            bad.append(f"{m.id}: `visible` must name one of its `loses` ({m.loses}), got {m.visible!r}")
        if not m.message:
            bad.append(f"{m.id}: no `message` (a regular expression the visible failure's message must match)")
        else:
            try:
                re.compile(m.message)
            except re.error as exc:
                bad.append(f"{m.id}: `message` is not a regular expression: {exc}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_alternatives_keep_full_marks(graded, assignment):
    result = result_of(graded, assignment)
    problems = []
    for student, info in result["students"].items():
        if student.startswith("alternatives-"):
            for p in _check_student(result, student):
                problems.append(f"[{', '.join(info['alternatives'])}] {p}")
    assert not problems, "correct answers written another way lost points:\n" + "\n".join(problems)


MIN_ALTERNATIVES = 3


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_slip_is_named_in_an_alternative(assignment):
    """The slips a failing message names first (seqcourse.calltrace.discarded_value) are never found in a correct
    answer written another way: each alternative runs, in one kernel per assignment, through the visible tests of its
    function as a student runs them, and the slips are asked for after each test cell (a slip found there would send a
    student with a mistake elsewhere to a right line). The visible tests must pass too."""
    (src_path,) = nbgrader_cli.source_notebooks(assignment)
    source = nbgrader_cli.load(src_path)
    release = nbgrader_cli.load(nbgrader_cli.EXERCISES / assignment / src_path.name)
    refs = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
            for c in source.cells if nbgrader_cli.is_solution_cell(c)}
    nb = nbgrader_cli.submission(release, source, {})
    tests_after, current = {}, None
    for cell in nb.cells:
        if nbgrader_cli.is_solution_cell(cell):
            current = nbgrader_cli.nbgrader_meta(cell)["grade_id"]
        elif nbgrader_cli.is_autograded_test(cell) and current:
            tests_after.setdefault(current, []).append(cell.source)
    base, extra = len(nb.cells), []
    for alt in harness.load_alternatives(assignment):
        extra.append(nbformat.v4.new_code_cell(alt.apply(refs[alt.cell])))
        for test in tests_after.get(alt.cell, []):
            extra += [nbformat.v4.new_code_cell(test), nbformat.v4.new_code_cell(
                "from seqcourse import calltrace as _calltrace\n_slip = _calltrace.discarded_value()\n"
                f"print({'SLIP IN ' + alt.id + ':'!r}, _slip) if _slip else None")]
        extra.append(nbformat.v4.new_code_cell(refs[alt.cell]))       # the reference again for the next one
    nb.cells = nb.cells + extra
    env_before = os.environ.get("NBGRADER_EXECUTION")
    os.environ["NBGRADER_EXECUTION"] = "validate"
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(src_path.parent)}}).execute()
    finally:
        if env_before is None:
            os.environ.pop("NBGRADER_EXECUTION", None)
        else:
            os.environ["NBGRADER_EXECUTION"] = env_before
    problems = []
    for cell in nb.cells[base:]:
        for out in cell.get("outputs", []):
            if "SLIP IN" in out.get("text", ""):
                problems.append(out["text"].strip()[:500])
            elif out.get("output_type") == "error":
                problems.append(f"{cell.source[:60]!r} raised {out.get('ename')}: {out.get('evalue', '')[:300]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_graded_function_has_three_alternatives(assignment):
    assert (harness.ALTERNATIVES / f"{assignment}.yaml").exists(), \
        f"tests/alternatives/{assignment}.yaml is missing: every assignment needs correct answers written another way"
    alternatives = harness.load_alternatives(assignment)
    per_cell = Counter((m.notebook, m.cell) for m in alternatives)
    missing = []
    for path in nbgrader_cli.source_notebooks(assignment):
        nb = nbgrader_cli.load(path)
        cells = {nbgrader_cli.nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_cli.is_solution_cell(c)}
        for gid in sorted(cells):
            if per_cell[(path.name, gid)] < MIN_ALTERNATIVES:
                missing.append(f"{path.name}:{gid} has {per_cell[(path.name, gid)]} alternative(s)")
        for m in alternatives:
            if m.notebook == path.name:
                assert m.cell in cells, f"alternative {m.id} names {m.cell}, not a solution cell of {path.name}"
    assert not missing, f"every solution cell needs at least {MIN_ALTERNATIVES} alternatives:\n" + "\n".join(missing)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_mutants_and_alternatives_apply(assignment):
    """Every `replace` of a mutant or alternative finds its text in the current solution, and the result is
    valid Python: a mutant that is a syntax error would lose its points for the wrong reason (fast, no grading)."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    subs = harness.submissions(assignment)
    assert "solution" in subs and "blank" in subs
    bad = []
    for path in nbgrader_cli.source_notebooks(assignment):
        solved = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
                  for c in nbgrader_cli.load(path).cells if nbgrader_cli.is_solution_cell(c)}
        for m in harness.load_mutants(assignment) + harness.load_alternatives(assignment):
            if m.notebook == path.name:
                try:
                    ast.parse(TransformerManager().transform_cell(m.apply(solved[m.cell])))
                except SyntaxError as exc:
                    bad.append(f"{m.id}: {exc}")
    assert not bad, "mutants/alternatives that are not valid Python:\n" + "\n".join(bad)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_graded_function_has_two_mutants(assignment):
    mutants = harness.load_mutants(assignment)
    per_cell = Counter((m.notebook, m.cell) for m in mutants)
    missing = []
    for path in nbgrader_cli.source_notebooks(assignment):
        nb = nbgrader_cli.load(path)
        tests = set(nbgrader_cli.test_points(nb))
        for cell in nb.cells:
            if nbgrader_cli.is_solution_cell(cell):
                gid = nbgrader_cli.nbgrader_meta(cell)["grade_id"]
                if per_cell[(path.name, gid)] < 2:
                    missing.append(f"{path.name}:{gid} has {per_cell[(path.name, gid)]} mutant(s)")
        for m in mutants:
            if m.notebook == path.name:
                unknown = set(m.loses) - tests
                assert not unknown, f"mutant {m.id} names unknown tests {sorted(unknown)}"
                assert m.loses, f"mutant {m.id} must break at least one test"
    assert not missing, "every solution cell needs at least two mutants:\n" + "\n".join(missing)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercises_match_nbgrader_output(graded, assignment):
    """exercises/ must be exactly what `nbgrader generate_assignment` makes of solutions/."""
    release = result_of(graded, assignment)["release"]
    committed = {p.name for p in (nbgrader_cli.EXERCISES / assignment).glob("*.ipynb")}
    assert committed == set(release), (
        f"exercises/{assignment} holds {sorted(committed)}, nbgrader generates {sorted(release)}; "
        "run `make exercises`")
    for name, generated in release.items():
        mine = nbgrader_cli.normalised(nbgrader_cli.load(nbgrader_cli.EXERCISES / assignment / name))
        assert mine == nbgrader_cli.normalised(generated), (
            f"exercises/{assignment}/{name} is out of sync with solutions/; run `make exercises` "
            "(never edit exercises/ by hand)")


def test_grade_ids_unique_across_course():
    seen = Counter()
    for a in ASSIGNMENTS:
        for path in nbgrader_cli.source_notebooks(a):
            for cell in nbgrader_cli.load(path).cells:
                gid = nbgrader_cli.nbgrader_meta(cell).get("grade_id")
                if gid:
                    seen[gid] += 1
    repeated = sorted(g for g, n in seen.items() if n > 1)
    assert not repeated, f"grade_id repeats (nbgrader aborts a whole batch on this): {repeated}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_test_cells_are_locked_and_score_points(assignment):
    for path in nbgrader_cli.source_notebooks(assignment):
        for cell in nbgrader_cli.load(path).cells:
            m = nbgrader_cli.nbgrader_meta(cell)
            if m.get("grade") and not m.get("solution"):
                assert m.get("locked"), f"{path.name}:{m['grade_id']} must be locked"
                assert m.get("points", 0) > 0, f"{path.name}:{m['grade_id']} has no points"


@pytest.mark.parametrize("path", [p for a in ASSIGNMENTS for p in nbgrader_cli.source_notebooks(a)],
                         ids=lambda p: p.name)
def test_solution_notebook_runs_top_to_bottom(path):
    """The instructor's notebook (solutions and hidden tests) runs start to end; the time is reported. After each
    test cell, the slips that a failing test's message would name first (seqcourse.calltrace.discarded_value) are
    asked of the reference code that cell ran: none may be found there, or a student with another mistake would be
    sent to a right line (ch06's `finished[b] = True` and ch05's `out if l == 0 else out + h` were)."""
    nb = nbgrader_cli.load(path)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if nbgrader_cli.is_autograded_test(cell):
            cells.append(nbformat.v4.new_code_cell(
                "from seqcourse import calltrace as _calltrace\n_slip = _calltrace.discarded_value()\n"
                f"print({'SLIP IN THE REFERENCE after ' + nbgrader_cli.nbgrader_meta(cell)['grade_id']!r}, _slip) "
                "if _slip else None"))
    nb.cells = cells
    env_before = os.environ.pop("NBGRADER_EXECUTION", None)
    try:
        start = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
        TIMINGS[f"{path.parent.name}/{path.name}"] = time.perf_counter() - start
    finally:
        if env_before is not None:
            os.environ["NBGRADER_EXECUTION"] = env_before
    slips = [o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if "SLIP IN THE REFERENCE" in o.get("text", "")]
    assert not slips, "\n".join(slips)
