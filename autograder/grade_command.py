"""Grade every submission of an assignment: the ``python -m autograder grade`` command.

The grading itself is done by a *runner*: the local mode's threads, one sandbox slot each
(:func:`autograder.grade_one.grade_locally`), or, with ``--queue``, workers on any machines
(:func:`autograder.distributed.grade_remotely`); both grade each submission with
:func:`autograder.grade_one.grade_submission`. Everything durable is written here, by the main thread only, one
submission at a time, as soon as it is graded:

1. ``state.jsonl`` (append-only, fsync'ed: :mod:`autograder.records`): the full result, keyed by a content hash of the
   submission, the assignment and the grader's settings. A re-run skips every submission whose hash is unchanged
   (after checking that the gradebook still holds its scores, and re-writing them if not), so a batch that was
   killed resumes where it stopped and loses nothing already graded;
2. the nbgrader gradebook (:mod:`autograder.gradebook`): auto scores of every autograded cell, the submission flagged
   when its status is not ``ok``. A single writer: no ``database is locked``;
3. ``grades.csv`` (rewritten atomically), the per-student feedback pages and the log; at the end, the class report
   and what else the instructor asked for (:mod:`autograder.instructor`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .assignment import AssignmentGrader
from .course import AssignmentError, Course, load_course, safe_url
from .grade_one import grade_locally
from .gradebook import GradebookWriter, in_gradebook
from .jail import Limits, PackageMismatch
from .protocol import Status
from .records import GRADER_VERSION, StateStore, write_csv
from .sandbox import Sandbox
from .submissions import CollectionError, collect

log = logging.getLogger("autograder")


@dataclass
class Options:
    assignment: str
    submissions: Path
    workers: int = 0
    db_url: str | None = None
    config: Path | None = None
    course_root: Path | None = None
    source: str | None = None
    out: Path | None = None
    force: bool = False
    retry_failed: bool = False
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    time_factor: float = 5.0
    zip_regexp: str | None = None      # default: the nbgrader config's FileNameCollectorPlugin.named_regexp
    lms: str = "nbgrader"              # nbgrader | canvas | moodle (see autograder.submissions)
    students: list | None = None
    feedback_dir: Path | None = None
    cache_dir: Path | None = None
    queue: str | None = None          # broker URL (redis://...): distributed mode, see autograder/distributed.py
    store_url: str | None = None      # distributed mode's shared store (default: the gradebook's db_url)
    warm: bool = True                 # warm sandboxes: libraries imported once per slot, a fork per submission
    extras: object = None             # autograder.instructor.Extras: late penalty, due date, LMS export

    @property
    def slots(self) -> int:
        return max(1, self.workers or os.cpu_count() or 1)


@dataclass
class Summary:
    graded: int = 0
    skipped: int = 0
    failed_to_record: int = 0
    rows: list = field(default_factory=list)
    out: Path | None = None
    csv: Path | None = None
    warnings: list = field(default_factory=list)
    seconds: float = 0.0


def _log_to(out: Path) -> logging.Handler:
    out.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(out / "autograde.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


def run(opts: Options) -> Summary:
    """The whole batch. Every error that stops it is also written to ``autograde.log`` before it propagates."""
    t0 = time.monotonic()
    try:
        course = load_course(opts.config, opts.course_root, opts.source, opts.db_url)
    except Exception as exc:
        if opts.out:
            handler = _log_to(Path(opts.out))
            handler.handle(log.makeRecord(log.name, logging.ERROR, __file__, 0,
                                          "stopped: the course configuration could not be read: %s", (exc,), None))
            log.removeHandler(handler)
            handler.close()
        raise
    out = Path(opts.out) if opts.out else course.root / "autograded" / "_autograder" / opts.assignment
    handler = _log_to(out)
    try:
        return _grade_class(opts, course, out, t0)
    except KeyboardInterrupt:
        log.warning("interrupted: everything graded so far is saved")
        raise
    except Exception as exc:
        # into the log file only: the command prints its own one-line message on the terminal
        known = isinstance(exc, (AssignmentError, CollectionError, PackageMismatch))
        handler.handle(log.makeRecord(log.name, logging.ERROR, __file__, 0, "stopped: %s", (exc,),
                                      None if known else sys.exc_info()))
        raise
    finally:
        log.removeHandler(handler)
        handler.close()


def _grade_class(opts: Options, course: Course, out: Path, t0: float) -> Summary:
    """Prepare (sandbox, gradebook, the assignment and its reference run, the submissions), grade what is new or
    changed, record each result as it comes, then make the instructor's files."""
    summary = Summary(out=out, csv=out / "grades.csv")
    log.info("grading %s from %s (course %s, gradebook %s)", opts.assignment, opts.submissions, course.root,
             safe_url(course.db_url))
    cache_dir = Path(opts.cache_dir) if opts.cache_dir else out / "cache"
    sandbox = Sandbox(opts.sandbox, profile=course.profile, cache_dir=cache_dir, warm=opts.warm)
    sandbox.jail.announce(opts.slots)
    summary.warnings.extend(sandbox.warnings)
    gb = GradebookWriter(course.db_url)
    try:
        points = gb.points(opts.assignment)
        grader = AssignmentGrader(opts.assignment, course.source_dir / opts.assignment, points, sandbox=sandbox,
                                  limits=opts.limits, time_factor=opts.time_factor, cache_dir=cache_dir)
        grader.prepare_reference()
        subs = collect(Path(opts.submissions), opts.assignment, opts.zip_regexp or course.zip_regexp, lms=opts.lms,
                       notebooks=list(grader.notebooks))
        if opts.students:
            subs = {k: v for k, v in subs.items() if k in set(opts.students)}
        state = StateStore(out / "state.jsonl")
        settings = json.dumps({"limits": opts.limits.as_dict(), "time_factor": opts.time_factor,
                               "sandbox": sandbox.mode, "grader": GRADER_VERSION}, sort_keys=True)
        todo = _to_grade(opts, subs, state, gb, grader.fingerprint + settings, summary)
        log.info("%d submission(s): %d to grade, %d unchanged (skipped), %d worker(s)", len(subs), len(todo),
                 summary.skipped, opts.slots)
        if opts.queue:   # distributed: workers on any machine grade; results come back here
            from . import distributed

            finished = distributed.grade_remotely(opts, course, grader, todo, settings)
        else:
            finished = grade_locally(grader, todo, opts.slots)
        outputs = _Outputs(opts, course, state, gb, points, summary)
        try:
            for student, _sub, _h, graded in finished:
                outputs.record(student, graded, len(todo))
        except KeyboardInterrupt:
            log.warning("interrupted: stopping; everything graded so far is saved")
            sandbox.abort()
            finished.close()
            raise
        summary.rows = outputs.rows()
        write_csv(summary.csv, summary.rows)
        state.close()
        from . import instructor   # the class report, late penalties, the LMS file: never loses a grade
        instructor.after_grading(opts, course, out, subs)
    finally:
        gb.close()
        sandbox.close()
    summary.seconds = time.monotonic() - t0
    log.info("done: %d graded, %d unchanged, in %.1f s; grades: %s", summary.graded, summary.skipped,
             summary.seconds, summary.csv)
    return summary


def _to_grade(opts: Options, subs: dict, state: StateStore, gb: GradebookWriter, key: str, summary: Summary) -> list:
    """``[(student, submission, hash)]`` of the submissions that are new or changed (or asked for again); an
    unchanged one whose gradebook entry was lost gets it back from the state."""
    todo = []
    for student, sub in sorted(subs.items()):
        h = hashlib.sha256((key + sub.content_hash()).encode()).hexdigest()
        prev = state.records.get(student)
        retry = opts.retry_failed and prev and prev.get("status") in (Status.TIMEOUT, Status.CRASHED)
        if prev and prev.get("hash") == h and not opts.force and not retry:
            summary.skipped += 1
            if in_gradebook(prev) and not gb.matches(prev):
                log.info("%s: unchanged; gradebook entry missing or different, re-written from the state", student)
                gb.record(prev)
            continue
        todo.append((student, sub, h))
    return todo


class _Outputs:
    """Where each graded submission goes, as it comes: the state, the gradebook, the feedback pages, grades.csv."""

    def __init__(self, opts: Options, course: Course, state: StateStore, gb: GradebookWriter, points: dict,
                 summary: Summary):
        self.assignment, self.state, self.gb, self.summary = opts.assignment, state, gb, summary
        self.feedback_dir = Path(opts.feedback_dir) if opts.feedback_dir else course.root / "feedback"
        self.max_score = sum(sum(p.values()) for p in points.values())

    def record(self, student: str, graded, total: int) -> None:
        rec = graded.record
        self.state.append(rec)
        if in_gradebook(rec):
            try:
                self.gb.record(rec)
            except Exception:  # noqa: BLE001 - kept in the state; re-written on the next run
                self.summary.failed_to_record += 1
                log.exception("%s: could not write the gradebook (kept in state.jsonl; the next run writes it)",
                              student)
            self._feedback(student, graded.pages)
        self.summary.graded += 1
        log.info("[%d/%d] %s: %g/%g %s%s (%.1f s)", self.summary.graded, total, student, rec["score"],
                 rec["max_score"], rec["status"], f" - {rec['reason'][:200]}" if rec["reason"] else "",
                 rec["seconds"])
        write_csv(self.summary.csv, self.rows())

    def rows(self) -> list:
        """grades.csv's rows: every graded student of the assignment, and a ``missing`` row for every student of
        the gradebook without a submission."""
        have = {s: r for s, r in self.state.records.items() if r.get("assignment") == self.assignment}
        rows = list(have.values())
        for s in self.gb.students():
            if s not in have:
                rows.append({"student": s, "assignment": self.assignment, "score": 0.0, "max_score": self.max_score,
                             "status": Status.MISSING, "reason": "no submission"})
        return rows

    def _feedback(self, student: str, pages: dict) -> None:
        folder = self.feedback_dir / student / self.assignment
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, page in pages.items():
                (folder / (name[: -len(".ipynb")] + ".html")).write_text(page, encoding="utf-8")
        except OSError:
            log.exception("%s: could not write feedback", student)
