"""Small synthetic assignments for the autograder's tests: an nbgrader source notebook written with
``autograder.authoring``, its gradebook points, and submissions made from it by replacing answer cells."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

import nbgrader_cli
from autograder.authoring import NotebookBuilder
from autograder.assignment import AssignmentGrader
from autograder.instrument import strip_hidden
from autograder.jail import Limits
from autograder.sandbox import Sandbox

LIMITS = Limits(cell_seconds=60.0, notebook_seconds=300.0, memory_bytes=3 << 30, nproc=48)


def write_assignment(root: Path, assignment: str, build) -> Path:
    """``build(NotebookBuilder)`` fills the notebook; returns the source folder ``root/source/<assignment>``."""
    nb = NotebookBuilder()
    build(nb)
    folder = Path(root) / "source" / assignment
    nb.write(folder / f"{assignment}.ipynb")
    return folder


def points_of(folder: Path) -> dict:
    return {p.name: nbgrader_cli.test_points(nbgrader_cli.load(p)) for p in sorted(folder.glob("*.ipynb"))}


def submission(folder: Path, answers: dict | None = None, extra: dict | None = None) -> dict:
    """``{file name: bytes}``: the released notebook (hidden tests cut out) with the reference answers, except
    ``answers`` (grade id -> code); ``extra`` (grade id -> code) adds a student cell after that cell."""
    answers, extra = answers or {}, extra or {}
    out = {}
    for path in sorted(folder.glob("*.ipynb")):
        nb = nbgrader_cli.load(path)
        cells = []
        for c in nb.cells:
            c = copy.deepcopy(c)
            meta = nbgrader_cli.nbgrader_meta(c)
            gid = meta.get("grade_id")
            if nbgrader_cli.is_solution_cell(c):
                c.source = answers.get(gid, nbgrader_cli.student_code(c.source))
            elif nbgrader_cli.is_autograded_test(c):
                c.source = strip_hidden(c.source)
            cells.append(c)
            if gid in extra:
                cells.append(nbformat.v4.new_code_cell(extra[gid]))
        nb.cells = cells
        out[path.name] = nbformat.writes(nb).encode()
    return out


def grader(folder: Path, cache: Path, **sandbox_kwargs) -> AssignmentGrader:
    sandbox = Sandbox("auto", cache_dir=cache, **sandbox_kwargs)
    g = AssignmentGrader(folder.name, folder, points_of(folder), sandbox=sandbox, limits=LIMITS, cache_dir=cache)
    g.prepare_reference()
    return g


def course(root: Path, assignment: str, build) -> Path:
    """A whole course folder for the real command: source notebook, gradebook with its points, config."""
    from nbgrader.api import Gradebook

    root = Path(root)
    folder = write_assignment(root, assignment, build)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(assignment)
        for name, pts in points_of(folder).items():
            stem = name[: -len(".ipynb")]
            gb.update_or_create_notebook(stem, assignment)
            for gid, p in pts.items():
                gb.update_or_create_grade_cell(gid, stem, assignment, max_score=p, cell_type="code")
    (root / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\nc.CourseDirectory.source_directory = 'source'\n")
    return folder


def visible_text(html: str) -> str:
    import html as _html

    return _html.unescape(re.sub(r"<[^>]+>", " ", html))
