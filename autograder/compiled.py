"""An instructor's notebook as the sandbox runs it: its rules checked (:mod:`autograder.expected`), its instructor
and test cells instrumented and compiled (:mod:`autograder.instrument`), twice: the *student's copy* (hidden parts
without their reference blocks and literal operands) and the *reference copy* (everything, for the reference run).
"""
from __future__ import annotations

import ast
import base64
from dataclasses import dataclass, field
from pathlib import Path

from .assemble import InvalidNotebook, Notebook, parse_notebook
from .course import AssignmentError, Profile
from .expected import Cell as RuleCell
from .expected import analyse
from .instrument import ImportMap, bound_names, compile_cell, hidden_lines, hidden_only_names, python_source
from .protocol import CellKind


@dataclass(frozen=True)
class Placeholders:
    """The constants that instrumented code holds instead of the recorder and the pristine builtins (random per
    grading run; the driver replaces them inside the compiled code, see autograder.instrument)."""

    recorder: str
    builtins: str


@dataclass
class CompiledCell:
    filename: str
    code_b64: str
    sites: dict
    nodes: dict
    hidden: set                 # line numbers inside hidden regions
    parts: list = field(default_factory=list)  # [{"code_b64", "hidden", "binds"}]: see instrument.Instrumented
    hide: list = field(default_factory=list)   # one-part cells with hidden lines: names only those lines bind
    # the same cell as the reference run executes it: its hidden parts WITH their reference blocks and literals
    # (``parts``/``code_b64`` are the student's copy: without them; see autograder.expected)
    ref_code_b64: str = ""
    ref_parts: list = field(default_factory=list)


@dataclass
class CompiledNotebook:
    name: str
    notebook: Notebook
    imports: dict
    cells: dict                 # grade_id -> CompiledCell (instructor and test cells)
    sites: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    points: dict = field(default_factory=dict)      # grade_id -> max score (from the gradebook)
    reference: dict = field(default_factory=dict)   # grade_id -> reference info for the judge (the reference run's)
    ref_seconds: dict = field(default_factory=dict)  # plan label -> seconds in the reference run

    def driver_cells(self, plan: list, reference: bool = False) -> list:
        """The plan's cells as messages for the driver; ``reference``: as the reference run executes them (see
        :class:`CompiledCell`)."""
        cells = []
        for pc in plan:
            if pc.kind == CellKind.STUDENT:
                cells.append({"kind": CellKind.STUDENT, "code": pc.source})
                continue
            cc = self.cells[pc.grade_id]
            cell = {"kind": pc.kind, "grade_id": pc.grade_id, "filename": cc.filename}
            if pc.kind == CellKind.TEST:   # sent part by part (a hidden part only once the parts before it passed)
                cell.update(parts=cc.ref_parts if reference else cc.parts, hide=cc.hide)
            else:
                cell["code_b64"] = cc.ref_code_b64 if reference else cc.code_b64
            cells.append(cell)
        return cells


def compile_notebook(path: Path, points: dict | None, *, assignment: str, profile: Profile,
                     placeholders: Placeholders) -> CompiledNotebook:
    """Read, check and compile one instructor notebook; ``points``: its test cells' points from the gradebook."""
    try:
        nb = parse_notebook(path.read_bytes())
    except InvalidNotebook as exc:
        raise AssignmentError(f"{path}: {exc}") from None
    tests = {c.grade_id: c for c in nb.tests()}
    if points is None:
        raise AssignmentError(f"{path.name} is not in the gradebook for {assignment}: run "
                              f"`nbgrader generate_assignment {assignment}` first")
    if set(points) != set(tests):
        raise AssignmentError(f"{path.name}: the gradebook's autograded cells {sorted(points)} differ from the "
                              f"notebook's test cells {sorted(tests)}; regenerate the assignment")
    py, imports = _python_sources(path, nb)
    trees = _check_rules(path, nb, py, imports, profile)
    compiled, sites, nodes = {}, {}, {}
    instructor_bound: set = set()
    for c in nb.cells:
        if c.grade_id not in py:
            continue
        fname = f"<{'test' if c.is_test else 'cell'} {c.grade_id}>"
        copies = {mode: compile_cell(py[c.grade_id], fname, key=c.grade_id, recorder_placeholder=placeholders.recorder,
                                     builtins_placeholder=placeholders.builtins, imports=imports,
                                     instructor_bound=instructor_bound, instrument=True, original_source=c.source,
                                     tree=trees[c.grade_id], mode=mode, checkers=profile.checker_prefixes)
                  for mode in ("student", "reference")}
        cc, rc = copies["student"], copies["reference"]
        parts = _b64_parts(cc)
        hide = sorted(hidden_only_names(c.source)) if c.is_test and len(parts) == 1 else []
        compiled[c.grade_id] = CompiledCell(fname, _b64(cc.code), cc.sites, cc.nodes, hidden_lines(c.source), parts,
                                            hide, _b64(rc.code), _b64_parts(rc))
        sites.update(cc.sites)
        nodes.update(cc.nodes)
        if not c.is_test:
            instructor_bound |= bound_names(py[c.grade_id])
    return CompiledNotebook(path.name, nb, dict(imports), compiled, sites, nodes,
                            points={k: float(v) for k, v in points.items()})


def _python_sources(path: Path, nb: Notebook) -> tuple:
    """``({grade_id: plain Python}, imports)`` of the instructor's cells (setup and tests, not answers)."""
    imports = ImportMap()
    py = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.grade_id and not c.is_solution:
            py[c.grade_id] = python_source(c.source)
            try:
                imports.learn(ast.parse(py[c.grade_id]))
            except SyntaxError as exc:
                raise AssignmentError(f"{path.name}:{c.grade_id}: syntax error: {exc}") from None
    return py, imports


def _check_rules(path: Path, nb: Notebook, py: dict, imports: ImportMap, profile: Profile) -> dict:
    """The rules of hidden parts (no expected value in the student's process), checked over the whole notebook
    before anyone is graded; returns the cells' trees, annotated for the instrumenter."""
    trees, rule_cells = {}, []
    for c in nb.cells:
        if c.cell_type != "code" or not c.grade_id:
            continue
        if c.is_solution:
            rule_cells.append(RuleCell(c.grade_id, "solution", None, bound=bound_names(python_source(c.source))))
        elif c.grade_id in py:
            trees[c.grade_id] = ast.parse(py[c.grade_id])
            rule_cells.append(RuleCell(c.grade_id, "test" if c.is_test else "setup", trees[c.grade_id],
                                       hidden_lines(c.source)))
    broken = analyse(rule_cells, imports, profile)
    if broken:
        raise AssignmentError(
            f"{path.name}: the hidden tests must keep their expected values out of the student's process (compute "
            f"them inside `with reference():` ({profile.reference_marker or 'the course reference marker'}); see "
            "autograder/expected.py): " + "; ".join(broken[:12])
            + (f"; and {len(broken) - 12} more" if len(broken) > 12 else ""))
    return trees


def _b64(code: bytes) -> str:
    return base64.b64encode(code).decode()


def _b64_parts(instrumented) -> list:
    return [{"code_b64": _b64(pt["code"]), "hidden": pt["hidden"], "binds": pt["binds"]} for pt in instrumented.parts]
