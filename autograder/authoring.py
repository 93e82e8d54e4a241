"""Build nbgrader source notebooks (``solutions/<assignment>/<name>.ipynb``) from Python.

Authors may edit the notebooks in Jupyter with nbgrader's "Create Assignment" toolbar instead; this module
is a convenience for writing them as code, with the course's conventions built in:

- every graded or locked cell has a ``grade_id`` (unique in the whole course: prefix it with the chapter);
- solution cells carry ``### BEGIN SOLUTION`` / ``### END SOLUTION`` regions;
- test cells are locked, carry points, and may hold a ``### BEGIN HIDDEN TESTS`` region.

Example::

    nb = NotebookBuilder()
    nb.md("# Chapter 1 exercise")
    nb.readonly("ch01_setup", "import torch")
    nb.solution("ch01_many_to_one", "class ManyToOne(nn.Module):\\n    ### BEGIN SOLUTION\\n    ...")
    nb.test("ch01_test_many_to_one", 2, "assert ...\\n### BEGIN HIDDEN TESTS\\n...\\n### END HIDDEN TESTS")
    nb.write("solutions/ch01/ch01_sequence_configurations.ipynb")
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _clean(source: str) -> str:
    return textwrap.dedent(source).strip("\n")


class NotebookBuilder:
    def __init__(self) -> None:
        self.cells: list = []

    def md(self, source: str) -> None:
        """A plain markdown cell (not graded, editable)."""
        self.cells.append(new_markdown_cell(_clean(source)))

    def code(self, source: str) -> None:
        """A plain code cell (not graded, editable): demos, plots, scratch."""
        self.cells.append(new_code_cell(_clean(source)))

    def readonly(self, grade_id: str, source: str, markdown: bool = False) -> None:
        """A locked cell the student cannot edit (setup code or instructions)."""
        cell = new_markdown_cell(_clean(source)) if markdown else new_code_cell(_clean(source))
        cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": True,
                                     "schema_version": 3, "solution": False, "task": False}
        self.cells.append(cell)

    def solution(self, grade_id: str, source: str) -> None:
        """A code cell the student completes; its ``### BEGIN/END SOLUTION`` regions become stubs."""
        src = _clean(source)
        if "### BEGIN SOLUTION" not in src:
            raise ValueError(f"{grade_id}: a solution cell needs a '### BEGIN SOLUTION' region")
        cell = new_code_cell(src)
        cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False,
                                     "schema_version": 3, "solution": True, "task": False}
        self.cells.append(cell)

    def test(self, grade_id: str, points: float, source: str) -> None:
        """An autograded, locked test cell worth ``points``."""
        if points <= 0:
            raise ValueError(f"{grade_id}: a test cell needs positive points")
        cell = new_code_cell(_clean(source))
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "locked": True,
                                     "points": points, "schema_version": 3, "solution": False, "task": False}
        self.cells.append(cell)

    def write(self, path: str | Path) -> Path:
        nb = new_notebook(cells=self.cells)
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata["language_info"] = {"name": "python"}
        ids = [c.metadata["nbgrader"]["grade_id"] for c in self.cells if "nbgrader" in c.metadata]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate grade_id(s): {dupes}")
        for i, cell in enumerate(nb.cells):  # stable cell ids, so that rebuilding gives the same file
            cell["id"] = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell-{i:03d}").replace("_", "-")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.validate(nb)
        nbformat.write(nb, str(path))
        return path
