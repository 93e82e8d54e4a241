"""Grade one student's notebooks of one assignment: assemble, run in the sandbox, judge. No gradebook, no files.

:class:`AssignmentGrader` is built once per assignment: it compiles the instructor's notebooks
(:mod:`autograder.compiled`), takes the *reference trace* (:mod:`autograder.reference`: the instructor's own solution
run under the same instrumentation, in which every test must pass and every checked value must be plain data; it
says how many checks each test runs, what their hidden operands are and how long each cell takes), then grades
submissions, thread-safely, one sandbox each, and returns one :class:`NotebookResult` per notebook.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import logging
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import judge as judge_mod
from .assemble import InvalidNotebook, assemble, parse_notebook
from .compiled import CompiledNotebook, Placeholders, compile_notebook
from .course import AssignmentError
from .jail import Limits, package_files
from .protocol import CellKind, Event, Failure, Status
from .reference import ReferenceTrace
from .sandbox import Sandbox
from .session import Outcome

log = logging.getLogger("autograder")

# the code that decides a grade: part of the fingerprint (a cached reference run, a queue worker's grader)
GRADER_FILES = ["_driver.py", "_zygote.py", "assemble.py", "assignment.py", "compiled.py", "course.py", "expected.py",
                "instrument.py", "jail.py", "judge.py", "proctree.py", "protocol.py", "reference.py", "sandbox.py",
                "session.py", "warm.py"]
AFTER_HIDDEN = ("details are hidden once a hidden test has run; run the test in your notebook (Kernel, Restart & "
                "Run All) to see them")


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
    status: Status
    reason: str = ""
    notes: list = field(default_factory=list)
    tests: dict = field(default_factory=dict)     # grade_id -> TestResult
    cells: list = field(default_factory=list)     # executed cells, for feedback
    submitted_as: str | None = None
    seconds: float = 0.0
    hidden_from: str | None = None    # label of the first cell whose hidden part was sent to the sandbox
    detail: str = ""                  # the full reason and notes, for the instructor only (state.jsonl)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests.values())

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests.values())


def public_reason(v, after_hidden: bool) -> str:
    """What a student may read about a failed test (feedback page, grades.csv), from a judge's verdict.

    Before any hidden part was sent to the sandbox, the full reason (values, messages: all from visible tests).
    From then on (``after_hidden``), the student's code may have read a hidden test, so nothing it chose may reach
    the student: a test is only passed, failed, or not finished; no line, check, exception type or value (the
    instructor's ``detail`` keeps everything). A hidden part's failure says only that a hidden test failed.
    """
    if v.passed:
        return ""
    if v.kind == Failure.UNFINISHED:
        return v.reason
    if v.hidden:
        return "a hidden test failed"
    if not after_hidden:
        return v.reason
    return f"the test failed ({AFTER_HIDDEN})"


def coarse_reason(status: Status) -> str:
    """How a notebook ended, in words that carry nothing but its status."""
    return {Status.OK: "", Status.TIMEOUT: f"the notebook was stopped for time ({AFTER_HIDDEN})",
            Status.CRASHED: f"the notebook's process ended abnormally ({AFTER_HIDDEN})"}.get(status, status)


class AssignmentGrader:
    def __init__(self, assignment: str, source_dir: Path, points: dict, *, sandbox: Sandbox, limits: Limits,
                 reference_limits: Limits | None = None, time_factor: float = 5.0, cache_dir: Path | None = None,
                 extra_files: dict | None = None):
        """``points``: ``{notebook file name: {grade_id: max score}}`` from the gradebook. The course's profile is
        the sandbox's (what the sandbox imports and protects is what the checks are compiled for)."""
        self.assignment = assignment
        self.source_dir = Path(source_dir)
        self.sandbox = sandbox
        self.profile = sandbox.profile
        self.limits = limits
        self.reference_limits = reference_limits or Limits(
            cell_seconds=max(600.0, limits.cell_seconds), notebook_seconds=max(3600.0, limits.notebook_seconds),
            memory_bytes=limits.memory_bytes, tree_rss_bytes=limits.tree_rss_bytes, nproc=limits.nproc,
            disk_bytes=limits.disk_bytes)
        self.time_factor = time_factor
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.placeholders = Placeholders(recorder="__autograder_rt_" + secrets.token_hex(8) + "__",
                                         builtins="__autograder_builtins_" + secrets.token_hex(8) + "__")
        paths = sorted(p for p in self.source_dir.glob("*.ipynb"))
        if not paths:
            raise AssignmentError(f"no notebooks in {self.source_dir}")
        self.files = extra_files if extra_files is not None else self._assignment_files()
        self.notebooks: dict[str, CompiledNotebook] = {
            p.name: compile_notebook(p, points.get(p.name), assignment=assignment, profile=self.profile,
                                     placeholders=self.placeholders) for p in paths}
        self.fingerprint = self._fingerprint(paths, points)
        self.reference_trace: ReferenceTrace | None = None

    def _fingerprint(self, paths: list, points: dict) -> str:
        """What decides the grades: the notebooks, the files they ship, the points, the grader's code, the course's
        profile and packages (their files), torch's and Python's versions."""
        h = hashlib.sha256()
        for p in paths:
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        for name, data in sorted(self.files.items()):
            h.update(name.encode() + b"\0" + data)
        for f in GRADER_FILES:
            h.update((Path(__file__).parent / f).read_bytes())
        h.update(json.dumps(points, sort_keys=True).encode())
        h.update(json.dumps(self.profile.as_dict(), sort_keys=True).encode())
        for name in self.profile.packages:   # the course package the tests import (checks, data, edit hints)
            spec = importlib.util.find_spec(name)
            roots = (spec.submodule_search_locations or [spec.origin]) if spec else []
            for rel, data in sorted(package_files(roots, "*").items()):
                h.update(rel.encode() + b"\0" + data)
        try:
            import torch

            h.update(torch.__version__.encode())
        except ImportError:
            pass
        h.update(sys.version.encode())
        return h.hexdigest()

    def _assignment_files(self) -> dict:
        """Files the assignment ships beside its notebooks (data...): copied into every working folder."""
        out = {}
        for p in sorted(self.source_dir.rglob("*")):
            rel = p.relative_to(self.source_dir)
            if (p.is_file() and not p.is_symlink() and p.suffix != ".ipynb"
                    and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts)):
                out[str(rel)] = p.read_bytes()
        return out

    def _files_for(self, name: str, student_bytes: bytes | None) -> dict:
        files = {k: base64.b64encode(v).decode() for k, v in self.files.items()}
        if student_bytes is not None:
            files[name] = base64.b64encode(student_bytes).decode()
        return files

    def _run(self, cnb: CompiledNotebook, plan: list, data: bytes | None, *, slot: int,
             reference: bool = False) -> Outcome:
        """Run a plan in the sandbox: as the reference run (the instructor's notebook, its reference copies, generous
        limits) or as a submission's (the student's copies, each cell's limit from the reference run's time)."""
        limits = self.reference_limits if reference else self.limits
        cell_limits = None if reference else [
            max(limits.cell_seconds, self.time_factor * cnb.ref_seconds[pc.label]) if pc.label in cnb.ref_seconds
            else limits.cell_seconds for pc in plan]
        return self.sandbox.run(cnb.driver_cells(plan, reference=reference), files=self._files_for(cnb.name, data),
                                workdir_name=self.assignment, limits=limits, slot=slot,
                                recorder_placeholder=self.placeholders.recorder,
                                builtins_placeholder=self.placeholders.builtins, cell_limits=cell_limits,
                                labels=None if reference else [pc.label for pc in plan])

    # ------------------------------------------------------------------ the reference trace
    def prepare_reference(self) -> None:
        """Take the reference trace from the cache (by fingerprint), else run the instructor's notebooks and cache
        it; every test must pass."""
        trace = ReferenceTrace.load(self.cache_dir, self.fingerprint)
        if trace is not None and set(trace.notebooks) >= set(self.notebooks):
            log.info("reference run: cached (%s)", ReferenceTrace.path(self.cache_dir, self.fingerprint).name)
        else:
            trace = self.run_reference()
            trace.save(self.cache_dir, self.fingerprint)
        self.use_reference(trace)

    def run_reference(self) -> ReferenceTrace:
        """Run the instructor's notebooks once; raises :class:`AssignmentError` unless every test passes."""
        trace = ReferenceTrace()
        for name, cnb in self.notebooks.items():
            plan, _ = assemble(cnb.notebook, cnb.notebook)
            t0 = time.monotonic()
            out = self._run(cnb, plan, None, slot=0, reference=True)
            self._check_reference(name, cnb, plan, out)
            trace.add(name, out.events, {plan[i].label: s for i, s in out.cell_seconds.items() if i < len(plan)})
            log.info("reference run of %s: all %d tests pass (%.1f s)", name, len(cnb.points), time.monotonic() - t0)
        return trace

    def _check_reference(self, name: str, cnb: CompiledNotebook, plan: list, out: Outcome) -> None:
        """The reference run must end, every test pass, every checked value be plain data: else the assignment is
        broken, and the error says where."""
        if out.status != Status.OK:
            tail = out.output.strip()[-2000:]
            raise AssignmentError(f"the instructor's notebook {name} did not run to its end under the autograder "
                                  f"({out.status}): {out.reason}" + (f"\n{tail}" if tail else ""))
        failures, unrepresentable = [], []
        for gid in cnb.points:
            v = judge_mod.judge_test(gid, out.events, sites=cnb.sites, nodes=cnb.nodes, imports=cnb.imports,
                                     reference={"check_tamper": False, "own_values": True})
            if v.passed:
                continue
            if v.kind == Failure.OPAQUE:
                src = v.src if len(v.src) <= 160 else v.src[:157] + "..."
                unrepresentable.append(f"test cell {gid}, line {v.line}: `{src}` compares a value of type {v.what}")
            else:
                failures.append(f"{gid}: {v.reason}")
        if unrepresentable:
            raise AssignmentError(
                f"{name}: the autograder cannot transfer some values these checks compare out of the student's "
                "process, so it could not recompute them: " + "; ".join(unrepresentable) + ". Make each check "
                "compare plain values (numbers, strings, bytes, None, booleans, tuples, lists, sets and dicts of "
                "them, tensors, numpy arrays, dtypes, devices, torch.Size), e.g. `x.tolist()`, `sorted(x)`, "
                "`type(x).__name__ == ...`, or check the object with isinstance().")
        if failures:
            errors = [e for e in out.events if e.get("ev") == Event.CELL_END and e.get("error")]
            detail = "; ".join(f"cell {e['i']} ({plan[e['i']].label if e['i'] < len(plan) else '?'}): "
                               f"{e['error'].get('type')}: {e['error'].get('msg')}" for e in errors)[:2000]
            raise AssignmentError(f"the instructor's solution {name} does not pass its own tests when the "
                                  "autograder runs it (every test must pass before anyone is graded): "
                                  + "; ".join(failures) + (f" (errors: {detail})" if detail else ""))

    def use_reference(self, trace: ReferenceTrace) -> None:
        """Grade against this trace (the judge's reference: check counts, hidden operands, fingerprints)."""
        self.reference_trace = trace
        for name, cnb in self.notebooks.items():
            info = trace.notebooks[name]
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

    # ------------------------------------------------------------------ one submission
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

    def grade_notebook(self, name: str, data: bytes | None, *, slot: int = 0,
                       submitted_as: str | None = None) -> NotebookResult:
        cnb = self.notebooks[name]
        res = NotebookResult(name, Status.OK, submitted_as=submitted_as)
        if data is None:
            return self._not_run(res, cnb, Status.MISSING, f"{name} was not submitted", "notebook not submitted")
        try:
            student = parse_notebook(data)
        except InvalidNotebook as exc:
            return self._not_run(res, cnb, Status.INVALID, f"{submitted_as or name}: {exc}",
                                 "notebook could not be read")
        plan, res.notes = assemble(cnb.notebook, student)
        out = self._run(cnb, plan, data, slot=slot)
        res.seconds, res.status = out.wall, out.status
        # From the moment the first hidden part of a test is SENT to the sandbox, student code may hold what it
        # contains (frames, gc, the pipe). Nothing made from that cell on reaches what the student sees: no
        # printed output, no error messages, no values in failure messages (see public_reason). A test whose
        # visible part fails never gets its hidden part sent.
        hidden_from = out.hidden_from
        if hidden_from is not None:
            res.hidden_from = plan[hidden_from].label
        self._judge(res, cnb, plan, out)
        res.detail = self._explain(out, plan)
        # Once a hidden part was sent, how the notebook ended (which cell, a signal or exit code, timings...) may be
        # chosen by code that read it: the student sees the status only.
        res.reason = res.detail if hidden_from is None else coarse_reason(out.status)
        self._add_notes(res, plan, out)
        res.cells = self._cells_for_feedback(plan, out)
        return res

    @staticmethod
    def _not_run(res: NotebookResult, cnb: CompiledNotebook, status: Status, reason: str, test_reason: str):
        res.status, res.reason = status, reason
        res.tests = {gid: TestResult(gid, pts, 0.0, False, test_reason) for gid, pts in cnb.points.items()}
        return res

    def _judge(self, res: NotebookResult, cnb: CompiledNotebook, plan: list, out: Outcome) -> None:
        """Every test's verdict, and what of it the student may read (see :func:`public_reason`)."""
        index_of = {pc.grade_id: i for i, pc in enumerate(plan) if pc.kind == CellKind.TEST}
        for gid, pts in cnb.points.items():
            v = judge_mod.judge_test(gid, out.events, sites=cnb.sites, nodes=cnb.nodes, imports=cnb.imports,
                                     reference=cnb.reference.get(gid, {}))
            after_hidden = out.hidden_from is not None and index_of.get(gid, len(plan)) >= out.hidden_from
            res.tests[gid] = TestResult(gid, pts, pts if v.passed else 0.0, v.passed, public_reason(v, after_hidden),
                                        v.hidden, detail=v.reason)

    def _add_notes(self, res: NotebookResult, plan: list, out: Outcome) -> None:
        """Forged report lines and library objects restored before the tests: in the student's notes while
        nothing hidden was sent, else in the instructor's detail only; what the sandbox could not do: in the
        instructor's detail."""
        if out.forged:
            res.notes.append(f"{out.forged} forged or garbled report line(s) ignored")
        if out.forged_after_hidden:
            res.detail += f"; {out.forged_after_hidden} forged or garbled report line(s) after a hidden test was sent"
        for e in out.events:   # what the sandbox could not do (sent before any student code ran): the instructor's
            if e.get("ev") == Event.READY and isinstance(e.get("notes"), list):
                res.detail += "".join(f"; sandbox: {n}" for n in e["notes"] if isinstance(n, str))
        index_of = {pc.grade_id: i for i, pc in enumerate(plan) if pc.kind == CellKind.TEST}
        tamper, later = set(), False
        for e in out.events:
            if e.get("ev") == Event.TEST_END:
                names = {x for x in e.get("restored", []) if isinstance(x, str)}
                # (restored at a test's start: the test whose hidden part comes first still chose nothing)
                if out.hidden_from is not None and index_of.get(e.get("test"), len(plan)) > out.hidden_from:
                    later |= bool(names)   # the student's code chose these names after a hidden test: not shown
                else:
                    tamper |= names
        if tamper:
            res.notes.append("library objects replaced by the notebook were restored before the tests: "
                             + ", ".join(sorted(tamper)[:5]) + ("..." if len(tamper) > 5 else ""))
        if later:
            res.detail += "; library objects replaced by the notebook were restored before later tests"

    @staticmethod
    def _cells_for_feedback(plan: list, out: Outcome) -> list:
        ends = {e.get("i"): e for e in out.events if e.get("ev") == Event.CELL_END}
        cells = []
        for i, pc in enumerate(plan):
            e = ends.get(i) or {}
            cells.append({"kind": pc.kind, "label": pc.label, "grade_id": pc.grade_id,
                          "after_hidden": out.hidden_from is not None and i >= out.hidden_from,
                          "source": pc.source if pc.kind != CellKind.TEST else None,
                          "ran": bool(e), "error": e.get("error"),
                          "stdout": e.get("stdout") or "", "stderr": e.get("stderr") or "",
                          "stdout_chars": e.get("stdout_chars", 0), "stderr_chars": e.get("stderr_chars", 0),
                          "seconds": out.cell_seconds.get(i)})
        return cells

    @staticmethod
    def _label(plan: list, i) -> str:
        return plan[i].label if isinstance(i, int) and 0 <= i < len(plan) else f"cell {i}"

    _NOTABLE = {"MemoryError": "memory limit", "BlockingIOError": "process limit", "SystemExit": "the cell stopped",
                "RecursionError": "recursion limit", "KeyboardInterrupt": "time limit"}

    def _explain(self, out: Outcome, plan: list) -> str:
        parts = [out.reason] if out.reason else []
        for e in out.events:
            if e.get("ev") != Event.CELL_END or not isinstance(e.get("i"), int):
                continue
            i = e["i"]
            err = e.get("error") if isinstance(e.get("error"), dict) else None
            kind = plan[i].kind if 0 <= i < len(plan) else CellKind.STUDENT
            if err and kind == CellKind.STUDENT and err.get("type") in self._NOTABLE and i not in out.interrupted:
                parts.append(f"{self._label(plan, i)}: {err['type']} ({self._NOTABLE[err['type']]})")
            if (e.get("stdout_chars", 0) or 0) + (e.get("stderr_chars", 0) or 0) > 10 * self.limits.output_chars:
                parts.append(f"very large output in {self._label(plan, i)} (truncated)")
        return "; ".join(parts)

    def invalid_results(self, reason: str, *, status: Status = Status.INVALID, test_reason: str = "not graded") -> list:
        """Results for a submission that is not run at all (refused input, or a grader error): every test 0."""
        return [self._not_run(NotebookResult(name, status), cnb, status, reason, test_reason)
                for name, cnb in self.notebooks.items()]

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
