"""Grade one submission of one assignment: assemble, run in the sandbox, judge. No gradebook, no files.

:class:`AssignmentGrader` is built once per assignment: it compiles the instructor's notebooks (test cells
instrumented), runs them once as the *reference* (the instructor's own solution under the same
instrumentation: every test must pass, every checked value must be plain data, and the trace says how many
checks each test runs and how long each cell takes), then grades submissions, thread-safely, one sandbox each.
"""
from __future__ import annotations

import ast
import base64
import hashlib
import json
import logging
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import judge as judge_mod
from .assemble import InvalidNotebook, Notebook, PlanCell, assemble, parse_notebook
from .expected import Cell as RuleCell
from .expected import analyse
from .instrument import ImportMap, bound_names, compile_cell, hidden_lines, hidden_only_names, python_source
from .sandbox import Limits, Outcome, Sandbox

log = logging.getLogger("autograder")

STATUS_ORDER = ["invalid", "missing", "crashed", "timeout", "ok"]   # worst first
ENGINE_FILES = ["_driver.py", "instrument.py", "judge.py", "assemble.py", "engine.py", "sandbox.py", "_zygote.py",
                "warm.py", "expected.py"]


class AssignmentError(Exception):
    """The assignment itself cannot be graded (the instructor must fix something)."""


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
    reference: dict = field(default_factory=dict)   # grade_id -> reference info for the judge
    ref_seconds: dict = field(default_factory=dict)  # plan label -> seconds in the reference run


@dataclass
class TestResult:
    grade_id: str
    max_score: float
    score: float
    passed: bool
    reason: str = ""            # what the student may see (feedback, grades.csv): see public_reason()
    hidden: bool = False
    detail: str = ""            # the full reason, for the instructor only (state.jsonl)


@dataclass
class NotebookResult:
    name: str
    status: str
    reason: str = ""
    notes: list = field(default_factory=list)
    tests: dict = field(default_factory=dict)     # grade_id -> TestResult
    cells: list = field(default_factory=list)     # executed cells, for feedback
    submitted_as: str | None = None
    seconds: float = 0.0
    tainted_from: str | None = None   # label of the first hidden test sent to the sandbox (see grade_notebook)
    detail: str = ""                  # the full reason and notes, for the instructor only (state.jsonl)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests.values())

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests.values())


AFTER_HIDDEN = ("details are hidden once a hidden test has run; run the test in your notebook (Kernel, Restart & "
                "Run All) to see them")


def public_reason(v, tainted: bool) -> str:
    """What a student may read about a failed test (feedback page, grades.csv), from a judge's verdict.

    Before any hidden part was sent to the sandbox, the full reason (values, messages: all from visible tests).
    From then on (``tainted``), the student's code may have read a hidden test, so nothing it chose may reach the
    student: a test is only passed, failed, or not finished; no line, check, exception type or value (the
    instructor's ``detail`` keeps everything). A hidden part's failure says only that a hidden test failed.
    """
    if v.passed:
        return ""
    if v.kind == "unfinished":
        return v.reason
    if v.hidden:
        return "a hidden test failed"
    if not tainted:
        return v.reason
    return f"the test failed ({AFTER_HIDDEN})"


def worst(statuses) -> str:
    statuses = list(statuses) or ["ok"]
    return min(statuses, key=STATUS_ORDER.index)


class AssignmentGrader:
    def __init__(self, assignment: str, source_dir: Path, points: dict, *, sandbox: Sandbox, limits: Limits,
                 reference_limits: Limits | None = None, time_factor: float = 5.0, cache_dir: Path | None = None,
                 extra_files: dict | None = None):
        """``points``: ``{notebook file name: {grade_id: max score}}`` from the gradebook."""
        self.assignment = assignment
        self.source_dir = Path(source_dir)
        self.sandbox = sandbox
        self.limits = limits
        self.reference_limits = reference_limits or Limits(
            cell_seconds=max(600.0, limits.cell_seconds), notebook_seconds=max(3600.0, limits.notebook_seconds),
            memory_bytes=limits.memory_bytes, tree_rss_bytes=limits.tree_rss_bytes, nproc=limits.nproc,
            disk_bytes=limits.disk_bytes)
        self.time_factor = time_factor
        self.rt = "__autograder_rt_" + secrets.token_hex(8) + "__"
        self.bt = "__autograder_builtins_" + secrets.token_hex(8) + "__"
        paths = sorted(p for p in self.source_dir.glob("*.ipynb"))
        if not paths:
            raise AssignmentError(f"no notebooks in {self.source_dir}")
        self.files = extra_files if extra_files is not None else self._assignment_files()
        self.notebooks: dict[str, CompiledNotebook] = {}
        for p in paths:
            self.notebooks[p.name] = self._compile(p, points.get(p.name))
        h = hashlib.sha256()
        for p in paths:
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        for name, data in sorted(self.files.items()):
            h.update(name.encode() + b"\0" + data)
        for f in ENGINE_FILES:
            h.update((Path(__file__).parent / f).read_bytes())
        h.update(json.dumps(points, sort_keys=True).encode())
        try:
            import torch

            h.update(torch.__version__.encode())
        except ImportError:
            pass
        h.update(sys.version.encode())
        self.fingerprint = h.hexdigest()
        self.cache_dir = Path(cache_dir) if cache_dir else None

    # ------------------------------------------------------------------ compile
    def _assignment_files(self) -> dict:
        """Files the assignment ships beside its notebooks (data...): copied into every working folder."""
        out = {}
        for p in sorted(self.source_dir.rglob("*")):
            rel = p.relative_to(self.source_dir)
            if (p.is_file() and not p.is_symlink() and p.suffix != ".ipynb"
                    and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts)):
                out[str(rel)] = p.read_bytes()
        return out

    def _compile(self, path: Path, points: dict | None) -> CompiledNotebook:
        try:
            nb = parse_notebook(path.read_bytes())
        except InvalidNotebook as exc:
            raise AssignmentError(f"{path}: {exc}") from None
        tests = {c.grade_id: c for c in nb.tests()}
        if points is None:
            raise AssignmentError(f"{path.name} is not in the gradebook for {self.assignment}: run "
                                  f"`nbgrader generate_assignment {self.assignment}` first")
        if set(points) != set(tests):
            raise AssignmentError(f"{path.name}: the gradebook's autograded cells {sorted(points)} differ from the "
                                  f"notebook's test cells {sorted(tests)}; regenerate the assignment")
        imports = ImportMap()
        py = {}
        for c in nb.cells:
            if c.cell_type == "code" and c.grade_id and not c.is_solution:
                py[c.grade_id] = python_source(c.source)
                try:
                    import ast

                    imports.learn(ast.parse(py[c.grade_id]))
                except SyntaxError as exc:
                    raise AssignmentError(f"{path.name}:{c.grade_id}: syntax error: {exc}") from None
        # the rules of hidden parts (no expected value in the student's process), checked over the whole notebook
        # before anyone is graded; the trees come back annotated for the instrumenter
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
        broken = analyse(rule_cells, imports)
        if broken:
            raise AssignmentError(
                f"{path.name}: the hidden tests must keep their expected values out of the student's process (compute "
                "them inside `with reference():` from seqcourse.checks; see autograder/expected.py): "
                + "; ".join(broken[:12]) + (f"; and {len(broken) - 12} more" if len(broken) > 12 else ""))
        instructor_bound: set = set()
        compiled = {}
        sites, nodes = {}, {}

        def b64parts(cc):
            return [{"code_b64": base64.b64encode(pt["code"]).decode(), "hidden": pt["hidden"], "binds": pt["binds"]}
                    for pt in cc.parts]

        for i, c in enumerate(nb.cells):
            if c.grade_id not in py:
                continue
            fname = f"<{'test' if c.is_test else 'cell'} {c.grade_id}>"
            copies = {mode: compile_cell(py[c.grade_id], fname, key=c.grade_id, rt_placeholder=self.rt,
                                         builtins_placeholder=self.bt, imports=imports,
                                         instructor_bound=instructor_bound, instrument=True, original_source=c.source,
                                         tree=trees[c.grade_id], mode=mode)
                      for mode in ("student", "reference")}
            cc, rc = copies["student"], copies["reference"]
            parts = b64parts(cc)
            hide = sorted(hidden_only_names(c.source)) if c.is_test and len(parts) == 1 else []
            compiled[c.grade_id] = CompiledCell(fname, base64.b64encode(cc.code).decode(), cc.sites, cc.nodes,
                                                hidden_lines(c.source), parts, hide,
                                                base64.b64encode(rc.code).decode(), b64parts(rc))
            sites.update(cc.sites)
            nodes.update(cc.nodes)
            if not c.is_test:
                instructor_bound |= bound_names(py[c.grade_id])
        return CompiledNotebook(path.name, nb, dict(imports), compiled, sites, nodes,
                                points={k: float(v) for k, v in points.items()})

    def _driver_cells(self, cnb: CompiledNotebook, plan: list, reference: bool = False) -> tuple[list, list]:
        """The cells for the driver; ``reference``: as the reference run executes them (see CompiledCell)."""
        cells, limits = [], []
        for pc in plan:
            if pc.kind == "student":
                cells.append({"kind": "student", "code": pc.source})
            else:
                cc = cnb.cells[pc.grade_id]
                code = cc.ref_code_b64 if reference else cc.code_b64
                cell = {"kind": pc.kind, "grade_id": pc.grade_id, "code_b64": code, "filename": cc.filename}
                if pc.kind == "test":   # sent part by part (a hidden part only once the parts before it passed)
                    cell.update(parts=cc.ref_parts if reference else cc.parts, hide=cc.hide)
                    del cell["code_b64"]
                cells.append(cell)
            ref = cnb.ref_seconds.get(pc.label)
            lim = self.limits.cell_seconds
            if ref is not None:
                lim = max(lim, self.time_factor * ref)
            limits.append(lim)
        return cells, limits

    # ------------------------------------------------------------------ reference
    def prepare_reference(self) -> None:
        """Run the instructor's notebooks once (cached by fingerprint); every test must pass."""
        cache = self.cache_dir / f"reference-{self.fingerprint[:16]}.json" if self.cache_dir else None
        if cache and cache.exists():
            data = json.loads(cache.read_text())
            for name, info in data.items():
                self._load_reference(self.notebooks[name], info)
            log.info("reference run: cached (%s)", cache.name)
            return
        data = {}
        for name, cnb in self.notebooks.items():
            plan, _ = assemble(cnb.notebook, cnb.notebook)
            cells, _ = self._driver_cells(cnb, plan, reference=True)
            t0 = time.monotonic()
            out = self.sandbox.run(cells, files=self._files_for(name, None), workdir_name=self.assignment,
                                   limits=self.reference_limits, slot=0, rt_placeholder=self.rt,
                                   builtins_placeholder=self.bt)
            if out.status != "ok":
                tail = out.output.strip()[-2000:]
                raise AssignmentError(f"the instructor's notebook {name} did not run to its end under the autograder "
                                      f"({out.status}): {out.reason}" + (f"\n{tail}" if tail else ""))
            failures, unrepresentable = [], []
            for gid in cnb.points:
                v = judge_mod.judge_test(gid, out.events, sites=cnb.sites, nodes=cnb.nodes, imports=cnb.imports,
                                         reference={"check_tamper": False, "own_values": True})
                if v.passed:
                    continue
                if v.kind == "opaque":
                    src = v.src if len(v.src) <= 160 else v.src[:157] + "..."
                    unrepresentable.append(f"test cell {gid}, line {v.line}: `{src}` compares a value of type "
                                           f"{v.what}")
                else:
                    failures.append(f"{gid}: {v.reason}")
            if unrepresentable:
                raise AssignmentError(
                    f"{name}: the autograder cannot transfer some values these checks compare out of the student's "
                    "process, so it could not recompute them: " + "; ".join(unrepresentable) + ". Make each check "
                    "compare plain values (numbers, strings, bytes, None, booleans, tuples, lists, sets and dicts of "
                    "them, tensors, numpy arrays, dtypes, devices, torch.Size), e.g. `x.tolist()`, `sorted(x)`, "
                    "`type(x).__name__ == ...`, or check the object with isinstance().")
            errors = [e for e in out.events if e.get("ev") == "cell_end" and e.get("error")]
            if failures:
                detail = "; ".join(f"cell {e['i']} ({plan[e['i']].label if e['i'] < len(plan) else '?'}): "
                                   f"{e['error'].get('type')}: {e['error'].get('msg')}" for e in errors)[:2000]
                raise AssignmentError(f"the instructor's solution {name} does not pass its own tests when the "
                                      "autograder runs it (every test must pass before anyone is graded): "
                                      + "; ".join(failures) + (f" (errors: {detail})" if detail else ""))
            seconds = {plan[i].label: s for i, s in out.cell_seconds.items() if i < len(plan)}
            info = {"events": [e for e in out.events if e.get("ev") in ("check", "test_end", "refblock")],
                    "seconds": seconds}
            data[name] = info
            self._load_reference(cnb, info)
            log.info("reference run of %s: all %d tests pass (%.1f s)", name, len(cnb.points), time.monotonic() - t0)
        if cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(cache)

    def _load_reference(self, cnb: CompiledNotebook, info: dict) -> None:
        events = info["events"]
        counts = judge_mod.site_counts(events)
        # library objects that the instructor's own run changed while any test ran (lazy initialisation, e.g.
        # torch wrapping an optimizer's step on first use) are not evidence of tampering in any test
        tamper = set().union(*judge_mod.tamper_names(events).values())
        cnb.ref_seconds = info.get("seconds", {})
        checks, blocks = judge_mod.reference_checks(events), judge_mod.reference_blocks(events)
        for gid in cnb.points:
            cnb.reference[gid] = {"counts": dict(counts.get(gid, {})), "tamper": tamper,
                                  "hidden_lines": cnb.cells[gid].hidden, "checks": checks.get(gid, {}),
                                  "blocks": blocks.get(gid, {})}

    def _files_for(self, name: str, student_bytes: bytes | None) -> dict:
        files = {k: base64.b64encode(v).decode() for k, v in self.files.items()}
        if student_bytes is not None:
            files[name] = base64.b64encode(student_bytes).decode()
        return files

    # ------------------------------------------------------------------ one submission
    def grade_notebook(self, name: str, data: bytes | None, *, slot: int = 0,
                       submitted_as: str | None = None) -> NotebookResult:
        cnb = self.notebooks[name]
        res = NotebookResult(name, "ok", submitted_as=submitted_as)
        zero = {gid: TestResult(gid, pts, 0.0, False) for gid, pts in cnb.points.items()}
        if data is None:
            res.status, res.reason, res.tests = "missing", f"{name} was not submitted", zero
            for t in zero.values():
                t.reason = "notebook not submitted"
            return res
        try:
            student = parse_notebook(data)
        except InvalidNotebook as exc:
            res.status, res.reason, res.tests = "invalid", f"{submitted_as or name}: {exc}", zero
            for t in zero.values():
                t.reason = "notebook could not be read"
            return res
        plan, notes = assemble(cnb.notebook, student)
        res.notes = notes
        cells, cell_limits = self._driver_cells(cnb, plan)
        out: Outcome = self.sandbox.run(cells, files=self._files_for(name, data), workdir_name=self.assignment,
                                        limits=self.limits, slot=slot, rt_placeholder=self.rt,
                                        builtins_placeholder=self.bt, cell_limits=cell_limits,
                                        labels=[pc.label for pc in plan])
        res.seconds = out.wall
        # From the moment the first hidden part of a test is SENT to the sandbox, student code may hold what it
        # contains (frames, gc, the pipe). Nothing made from that cell on reaches what the student sees: no
        # printed output, no error messages, no values in failure messages (see public_reason). A test whose
        # visible part fails never gets its hidden part sent.
        taint_from = out.hidden_sent_at
        if taint_from is not None:
            res.tainted_from = plan[taint_from].label
        index_of = {pc.grade_id: i for i, pc in enumerate(plan) if pc.kind == "test"}
        for gid, pts in cnb.points.items():
            v = judge_mod.judge_test(gid, out.events, sites=cnb.sites, nodes=cnb.nodes, imports=cnb.imports,
                                     reference=cnb.reference.get(gid, {}))
            tainted = taint_from is not None and index_of.get(gid, len(plan)) >= taint_from
            res.tests[gid] = TestResult(gid, pts, pts if v.passed else 0.0, v.passed, public_reason(v, tainted),
                                        v.hidden, detail=v.reason)
        res.status = out.status
        full = self._explain(out, plan)
        res.detail = full
        if out.forged:
            res.notes.append(f"{out.forged} forged or garbled report line(s) ignored")
        if out.forged_after_hidden:
            res.detail += f"; {out.forged_after_hidden} forged or garbled report line(s) after a hidden test was sent"
        # Once a hidden part was sent, how the notebook ended (which cell, a signal or exit code, timings...) may be
        # chosen by code that read it: the student sees the status only.
        res.reason = full if taint_from is None else self._coarse(out.status)
        ends = {e.get("i"): e for e in out.events if e.get("ev") == "cell_end"}
        tamper, later = set(), False
        for e in out.events:
            if e.get("ev") == "test_end":
                names = {x for x in e.get("restored", []) if isinstance(x, str)}
                # (restored at a test's start: the test whose hidden part comes first still chose nothing)
                if taint_from is not None and index_of.get(e.get("test"), len(plan)) > taint_from:
                    later |= bool(names)   # the student's code chose these names after a hidden test: not shown
                else:
                    tamper |= names
        if tamper:
            res.notes.append("library objects replaced by the notebook were restored before the tests: "
                             + ", ".join(sorted(tamper)[:5]) + ("..." if len(tamper) > 5 else ""))
        if later:
            res.detail += "; library objects replaced by the notebook were restored before later tests"
        for i, pc in enumerate(plan):
            e = ends.get(i)
            res.cells.append({"kind": pc.kind, "label": pc.label, "grade_id": pc.grade_id,
                              "tainted": taint_from is not None and i >= taint_from,
                              "source": pc.source if pc.kind != "test" else None,
                              "ran": e is not None, "error": e.get("error") if e else None,
                              "stdout": (e.get("stdout") or "") if e else "", "stderr": (e.get("stderr") or "") if e else "",
                              "stdout_chars": e.get("stdout_chars", 0) if e else 0,
                              "stderr_chars": e.get("stderr_chars", 0) if e else 0,
                              "seconds": out.cell_seconds.get(i)})
        return res

    @staticmethod
    def _coarse(status: str) -> str:
        """How a notebook ended, in words that carry nothing but its status."""
        return {"ok": "", "timeout": f"the notebook was stopped for time ({AFTER_HIDDEN})",
                "crashed": f"the notebook's process ended abnormally ({AFTER_HIDDEN})"}.get(status, status)

    @staticmethod
    def _label(plan: list, i) -> str:
        return plan[i].label if isinstance(i, int) and 0 <= i < len(plan) else f"cell {i}"

    _NOTABLE = {"MemoryError": "memory limit", "BlockingIOError": "process limit", "SystemExit": "the cell stopped",
                "RecursionError": "recursion limit", "KeyboardInterrupt": "time limit"}

    def _explain(self, out: Outcome, plan: list) -> str:
        parts = [out.reason] if out.reason else []
        for e in out.events:
            if e.get("ev") != "cell_end" or not isinstance(e.get("i"), int):
                continue
            i = e["i"]
            err = e.get("error") if isinstance(e.get("error"), dict) else None
            kind = plan[i].kind if 0 <= i < len(plan) else "student"
            if err and kind == "student" and err.get("type") in self._NOTABLE and i not in out.interrupted:
                parts.append(f"{self._label(plan, i)}: {err['type']} ({self._NOTABLE[err['type']]})")
            if (e.get("stdout_chars", 0) or 0) + (e.get("stderr_chars", 0) or 0) > 10 * self.limits.output_chars:
                parts.append(f"very large output in {self._label(plan, i)} (truncated)")
        return "; ".join(parts)

    def invalid_results(self, reason: str, *, status: str = "invalid", test_reason: str = "not graded") -> list:
        """Results for a submission that is not run at all (refused input, or a grader error): every test 0."""
        out = []
        for name, cnb in self.notebooks.items():
            r = NotebookResult(name, status, reason)
            r.tests = {gid: TestResult(gid, pts, 0.0, False, test_reason) for gid, pts in cnb.points.items()}
            out.append(r)
        return out

    def grade_files(self, files: dict, *, slot: int = 0) -> list:
        """Grade one student's files (``{name: bytes}``): one :class:`NotebookResult` per assignment notebook."""
        results = []
        unclaimed = {n: d for n, d in files.items() if n.endswith(".ipynb") and n not in self.notebooks}
        for name, cnb in self.notebooks.items():
            data, submitted_as = files.get(name), None
            if data is None and unclaimed:
                submitted_as = self._match_renamed(cnb, unclaimed)
                if submitted_as is not None:
                    data = unclaimed.pop(submitted_as)
            r = self.grade_notebook(name, data, slot=slot, submitted_as=submitted_as)
            if submitted_as:
                r.notes.insert(0, f"graded {submitted_as} as {name} (renamed notebook)")
            results.append(r)
        return results

    def _match_renamed(self, cnb: CompiledNotebook, candidates: dict) -> str | None:
        ids = {c.grade_id for c in cnb.notebook.cells if c.grade_id}
        best, best_score = None, 0
        for n, d in sorted(candidates.items()):
            try:
                nb = parse_notebook(d)
            except InvalidNotebook:
                continue
            score = len(ids & {c.grade_id for c in nb.cells if c.grade_id})
            if score > best_score:
                best, best_score = n, score
        if best is None and len(candidates) == 1 and len(self.notebooks) == 1:
            return next(iter(candidates))  # the only file, unreadable: graded as 'invalid' rather than 'missing'
        return best
