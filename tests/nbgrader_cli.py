"""For the tests: grade notebooks with nbgrader's real commands and a real sqlite gradebook, and build submissions.

This is the engine behind the course's assignment tests (``tests/test_assignments.py``, ``tests/harness.py``): it
sets up a throw-away course folder in nbgrader's layout (:class:`ThrowawayCourse`), runs ``nbgrader
generate_assignment`` and ``nbgrader autograde`` as subprocesses, and reads the scores back from the gradebook. The
course's own folders and gradebook are :class:`autograder.course.Course`'s.

Vocabulary:

- *source notebook*: ``solutions/<assignment>/<name>.ipynb``, with solutions and hidden tests;
- *release notebook*: what nbgrader generates for students (``exercises/<assignment>/<name>.ipynb``);
- *submission*: a release notebook whose solution cells a student has filled in.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.assemble import is_test_cell  # noqa: E402

SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"

# Per-cell limit while grading: generous, since a graded training cell may run for tens of seconds on a
# slow 2-core machine. nbgrader has no per-notebook limit of its own.
CELL_TIMEOUT_S = 240

_SOLUTION_REGION = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?",
                              re.DOTALL | re.MULTILINE)


def assignments() -> list[str]:
    """Assignment ids: the folders of ``solutions/`` that hold a notebook, sorted (only those named in
    ``SEQCOURSE_ASSIGNMENTS=ch01,ch07`` when it is set: a targeted run grades only those)."""
    found = sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))
    only = [a for a in os.environ.get("SEQCOURSE_ASSIGNMENTS", "").split(",") if a]
    return [a for a in found if a in only] if only else found


def source_notebooks(assignment: str) -> list[Path]:
    return sorted((SOLUTIONS / assignment).glob("*.ipynb"))


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def is_solution_cell(cell) -> bool:
    return bool(nbgrader_meta(cell).get("solution"))


def is_autograded_test(cell) -> bool:
    return is_test_cell(cell.get("cell_type"), nbgrader_meta(cell))


def test_points(nb) -> dict[str, float]:
    """``{grade_id: points}`` of the autograded test cells of a notebook."""
    return {nbgrader_meta(c)["grade_id"]: float(nbgrader_meta(c).get("points", 0))
            for c in nb.cells if is_autograded_test(c)}


def student_code(solution_source: str) -> str:
    """What a student who solved the cell would have written: the solution regions, markers removed."""
    return _SOLUTION_REGION.sub(lambda m: m.group(1), solution_source)


def submission(release_nb, source_nb, overrides: dict[str, str] | None = None):
    """A submission built from the release notebook: every solution cell gets the reference solution's code
    (or, for grade ids in ``overrides``, the given code). The rest of the release notebook is untouched."""
    overrides = overrides or {}
    solved = {nbgrader_meta(c)["grade_id"]: student_code(c.source) for c in source_nb.cells if is_solution_cell(c)}
    unknown = set(overrides) - set(solved)
    if unknown:
        raise KeyError(f"overrides name cells that are not solution cells: {sorted(unknown)}")
    nb = copy.deepcopy(release_nb)
    for cell in nb.cells:
        if is_solution_cell(cell):
            gid = nbgrader_meta(cell)["grade_id"]
            cell.source = overrides.get(gid, solved[gid])
    return nb


@dataclass
class ThrowawayCourse:
    """A throw-away nbgrader course folder (``source/``, ``release/``, ``submitted/``, gradebook)."""

    root: Path
    assignment_ids: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, root: Path, assignment_ids: list[str], cell_timeout: int = CELL_TIMEOUT_S) -> "ThrowawayCourse":
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        for a in assignment_ids:
            dst = root / "source" / a
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(SOLUTIONS / a, dst, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        (root / "nbgrader_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.root = {str(root)!r}\n"
            "c.CourseDirectory.course_id = 'seqcourse'\n"
            f"c.Execute.timeout = {int(cell_timeout)}\n"
            "c.Execute.startup_timeout = 120\n"
        )
        return cls(root, list(assignment_ids))

    def _env(self) -> dict:
        env = dict(os.environ)
        bindir = str(Path(sys.executable).parent)  # `nbgrader db` needs alembic on PATH
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.setdefault("SEQCOURSE_PROGRESS", "0")
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
        return env

    def nbgrader(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "nbgrader", *args]
        proc = subprocess.run(cmd, cwd=self.root, env=self._env(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[2:])} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def generate(self, assignment: str) -> dict[str, nbformat.NotebookNode]:
        """``nbgrader generate_assignment``: returns the release notebooks by file name."""
        self.nbgrader("generate_assignment", assignment, "--force")
        return {p.name: nbformat.read(str(p), as_version=4)
                for p in sorted((self.root / "release" / assignment).glob("*.ipynb"))}

    def submit(self, student: str, assignment: str, notebooks: dict[str, nbformat.NotebookNode]) -> None:
        folder = self.root / "submitted" / student / assignment
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for name, nb in notebooks.items():
            nbformat.write(nb, str(folder / name))

    def autograde(self, assignment: str) -> subprocess.CompletedProcess:
        """``nbgrader autograde`` for every submitted student of the assignment, in one run."""
        return self.nbgrader("autograde", assignment, "--force")

    def scores(self, assignment: str) -> dict[str, dict[str, dict[str, tuple[float, float]]]]:
        """``{student: {notebook: {grade_id: (score, max_score)}}}`` read from the gradebook.

        A notebook that failed to grade as a whole has no entry for that notebook.
        """
        from nbgrader.api import Gradebook, MissingEntry

        out: dict = {}
        with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}") as gb:
            for sub in gb.find_assignment(assignment).submissions:
                per_nb = {}
                for nb in sub.notebooks:
                    try:
                        per_nb[nb.name + ".ipynb"] = {g.name: (float(g.score), float(g.max_score))
                                           for g in nb.grades if g.cell_type == "code"}
                    except MissingEntry:
                        continue
                out[sub.student.id] = per_nb
        return out


def load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def normalised(nb) -> str:
    """A notebook as canonical JSON, for comparing generated files with committed ones."""
    return json.dumps(nbformat.from_dict(nb), sort_keys=True, indent=1)
