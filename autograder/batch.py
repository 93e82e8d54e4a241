"""Grade every submission of an assignment: the ``python -m autograder grade`` command.

One process, N worker threads, each driving one sandbox at a time (:mod:`autograder.sandbox`). Everything
durable is written by the main thread only, one submission at a time, as soon as it is graded:

1. ``state.jsonl`` (append-only, fsync'ed): the full result, keyed by a content hash of the submission, the
   assignment and the grader's settings. A re-run skips every submission whose hash is unchanged (after
   checking that the gradebook still holds its scores, and re-writing them if not), so a batch that was
   killed resumes where it stopped and loses nothing already graded;
2. the nbgrader gradebook (sqlite or any ``db_url``, e.g. PostgreSQL): auto scores of every autograded
   cell, the submission flagged when its status is not ``ok``. A single writer: no ``database is locked``;
3. ``grades.csv`` (rewritten atomically), the per-student feedback pages and the log.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
import queue
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from . import feedback
from .engine import AssignmentError, AssignmentGrader, worst
from .sandbox import Limits, PackageMismatch, Sandbox
from .submissions import CollectionError, Submission, collect, valid_student_id

log = logging.getLogger("autograder")
REPO = Path(__file__).resolve().parents[1]
GRADER_VERSION = "2"


# ---------------------------------------------------------------------------------------------- configuration
@dataclass
class Course:
    root: Path
    source_dir: Path
    db_url: str
    zip_regexp: str | None = None      # FileNameCollectorPlugin.named_regexp of the nbgrader config, if any


def load_course(config: Path | None = None, root: Path | None = None, source: str | None = None,
                db_url: str | None = None) -> Course:
    """Course folders and gradebook from an nbgrader config file (default: ``autograder/nbgrader_config.py``),
    overridden by explicit arguments."""
    cfg_root = cfg_source = cfg_db = cfg_regexp = None
    config = Path(config) if config else REPO / "autograder" / "nbgrader_config.py"
    if config.exists():
        from traitlets.config.loader import PyFileConfigLoader

        cfg = PyFileConfigLoader(config.name, path=str(config.parent)).load_config()
        cd = cfg.get("CourseDirectory", {})
        cfg_root = cd.get("root") if "root" in cd else None
        cfg_source = cd.get("source_directory") if "source_directory" in cd else None
        cfg_db = cd.get("db_url") if "db_url" in cd else None
        fc = cfg.get("FileNameCollectorPlugin", {})
        cfg_regexp = fc.get("named_regexp") if "named_regexp" in fc else None
    root = Path(root or cfg_root or Path.cwd()).resolve()
    source_dir = root / (source or cfg_source or "source")
    db_url = db_url or cfg_db or f"sqlite:///{root / 'gradebook.db'}"
    if db_url.startswith("sqlite:///") and "?" not in db_url:
        db_url += "?timeout=60"   # other nbgrader commands may hold the file; wait instead of failing
    return Course(root, source_dir, db_url, cfg_regexp or None)


# ---------------------------------------------------------------------------------------------- gradebook
class GradebookWriter:
    """The only object that touches the gradebook; used from the main thread only."""

    def __init__(self, db_url: str):
        from nbgrader.api import Gradebook

        self.db_url = db_url
        self.gb = Gradebook(db_url)

    def close(self):
        self.gb.close()

    def points(self, assignment: str) -> dict:
        """``{notebook file: {grade_id: max score}}`` of the autograded test cells."""
        from nbgrader.api import MissingEntry

        try:
            a = self.gb.find_assignment(assignment)
        except MissingEntry:
            raise AssignmentError(f"assignment {assignment!r} is not in the gradebook ({_safe_url(self.db_url)}): "
                                  f"run `nbgrader generate_assignment {assignment}` first") from None
        out = {}
        for nb in a.notebooks:
            manual = {c.name for c in nb.solution_cells}
            out[nb.name + ".ipynb"] = {g.name: float(g.max_score) for g in nb.grade_cells
                                       if g.cell_type == "code" and g.name not in manual}
        return out

    def students(self) -> list:
        return [s.id for s in self.gb.students]

    def stored(self, student: str, assignment: str) -> dict | None:
        from nbgrader.api import MissingEntry

        try:
            sub = self.gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        out = {}
        for nb in sub.notebooks:
            out[nb.name + ".ipynb"] = {g.name: g.auto_score for g in nb.grades}
        return out

    def record(self, rec: dict) -> None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbgrader's API triggers SQLAlchemy 'not in session' warnings
            self._record(rec)

    def _record(self, rec: dict) -> None:
        student, assignment = rec["student"], rec["assignment"]
        try:
            self.gb.update_or_create_student(student)
            kwargs = {}
            if rec.get("timestamp"):
                kwargs["timestamp"] = rec["timestamp"]
            try:
                self.gb.update_or_create_submission(assignment, student, **kwargs)
            except Exception:  # noqa: BLE001 - an unparsable timestamp must not lose the grade
                self.gb.db.rollback()
                self.gb.update_or_create_submission(assignment, student)
            for name, nb in rec["notebooks"].items():
                stem = name[: -len(".ipynb")]
                subnb = self.gb.find_submission_notebook(stem, assignment, student)
                subnb.flagged = nb["status"] != "ok"
                for gid, t in nb["tests"].items():
                    g = self.gb.find_grade(gid, stem, assignment, student)
                    g.auto_score = t["score"]
            self.gb.db.commit()
        except Exception:
            self.gb.db.rollback()
            raise

    def matches(self, rec: dict) -> bool:
        stored = self.stored(rec["student"], rec["assignment"])
        if stored is None:
            return False
        for name, nb in rec["notebooks"].items():
            have = stored.get(name, {})
            for gid, t in nb["tests"].items():
                if have.get(gid) is None or abs(float(have[gid]) - t["score"]) > 1e-9:
                    return False
        return True


def _safe_url(url: str) -> str:
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


# ---------------------------------------------------------------------------------------------- state
class StateStore:
    """Append-only JSON lines; the last line for a student wins; a torn last line is ignored."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.records: dict = {}
        if self.path.exists():
            with open(self.path, "rb") as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(rec, dict) and "student" in rec:
                        self.records[rec["student"]] = rec
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "ab")
        if self._f.tell() and not self.path.read_bytes().endswith(b"\n"):
            self._f.write(b"\n")  # end a line torn by a kill, so the next record starts on its own line

    def append(self, rec: dict) -> None:
        self._f.write(json.dumps(rec, sort_keys=True).encode() + b"\n")
        self._f.flush()
        os.fsync(self._f.fileno())
        self.records[rec["student"]] = rec

    def close(self):
        self._f.close()


# ---------------------------------------------------------------------------------------------- results
def make_record(student: str, assignment: str, content_hash: str, results: list, *, timestamp, seconds,
                problems: list, identified: bool = True) -> dict:
    """The durable result of one submission (a line of state.jsonl). ``reason`` fields are what the student
    may see; ``detail`` fields (tests) are the judge's full reasons, for the instructor only."""
    status = worst(r.status for r in results)
    score = sum(r.score for r in results)
    max_score = sum(r.max_score for r in results)
    return {"student": student, "assignment": assignment, "hash": content_hash, "status": status,
            "reason": summarize(results, problems), "score": round(score, 6), "max_score": round(max_score, 6),
            "timestamp": timestamp, "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(seconds, 2), "grader": GRADER_VERSION, "identified": identified,
            "notebooks": {r.name: {"status": r.status, "reason": r.reason, "detail": getattr(r, "detail", ""),
                                   "notes": r.notes,
                                   "submitted_as": r.submitted_as, "seconds": round(r.seconds, 2),
                                   "hidden_from": getattr(r, "tainted_from", None),
                                   "tests": {gid: {"score": t.score, "max_score": t.max_score, "passed": t.passed,
                                                   "reason": t.reason, "hidden": t.hidden,
                                                   "detail": getattr(t, "detail", "")}
                                             for gid, t in r.tests.items()}}
                          for r in results}}


@dataclass
class Graded:
    """What grading one submission produces: the durable record, and the feedback pages (HTML by notebook
    file name), which never hold hidden test code or anything made after a hidden test ran."""

    record: dict
    pages: dict = field(default_factory=dict)


def grade_submission(grader: AssignmentGrader, sub: Submission, content_hash: str, *, slot: int = 0) -> Graded:
    """Grade ONE student's submission: the single entry point that every way of running the grader calls
    (this batch's worker threads, or a task queue's workers). Writes nothing; never raises for a problem of
    the submission (a grader bug becomes a ``crashed`` record)."""
    start = time.monotonic()
    try:
        if sub.invalid:
            results = grader.invalid_results(sub.invalid)
        else:
            results = grader.grade_files(sub.files, slot=slot)
    except Exception as exc:  # noqa: BLE001 - a grader bug for one submission must not stop the others
        log.exception("%s: internal error while grading", sub.student)
        results = grader.invalid_results(f"internal grader error: {type(exc).__name__}: {exc}", status="crashed",
                                         test_reason="not graded")
    rec = make_record(sub.student, grader.assignment, content_hash, results, timestamp=sub.timestamp,
                      seconds=time.monotonic() - start, problems=sub.problems, identified=sub.identified)
    pages = {}
    for r in results:
        try:
            pages[r.name] = feedback.render(student=sub.student, assignment=grader.assignment, result=r,
                                            instructor_notebook=grader.notebooks[r.name].notebook,
                                            status=rec["status"], reason=rec["reason"])
        except Exception:  # noqa: BLE001 - a page that cannot be made must not lose the grade
            log.exception("%s: could not render feedback for %s", sub.student, r.name)
    return Graded(rec, pages)


def summarize(results: list, problems: list | None = None) -> str:
    parts = list(problems or [])
    for r in results:
        if r.status != "ok" and r.reason:
            parts.append(r.reason)
        elif r.reason:
            parts.append(r.reason)
        parts.extend(r.notes)
    for r in results:
        if r.status in ("missing", "invalid"):
            continue
        failed = [f"{gid} ({t.reason.splitlines()[0][:120] if t.reason else 'failed'})"
                  for gid, t in r.tests.items() if not t.passed]
        if failed:
            parts.append("failed: " + "; ".join(failed))
    text = " | ".join(p for p in parts if p)
    return text if len(text) <= 1500 else text[:1497] + "..."


CSV_FIELDS = ["student", "assignment", "score", "max_score", "status", "reason"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value) -> str:
    """A CSV cell that no spreadsheet runs as a formula: text that begins with = + - @, a tab or a carriage
    return gets a leading apostrophe (OWASP's advice for CSV injection); line breaks inside become spaces (one
    row per line, whatever reads the file)."""
    s = str(value)
    s = "'" + s if s.startswith(_FORMULA_START) else s
    return s.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def write_csv(path: Path, rows: list) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in sorted(rows, key=lambda r: r["student"]):
        w.writerow({**{k: spreadsheet_safe(r.get(k, "")) for k in ("student", "assignment", "status", "reason")},
                    "score": f"{r['score']:g}", "max_score": f"{r['max_score']:g}"})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(buf.getvalue())
    tmp.replace(path)


# ---------------------------------------------------------------------------------------------- the batch
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


def _setup_logging(out: Path) -> logging.Handler:
    out.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(out / "autograde.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


def _records_gradebook(rec: dict) -> bool:
    """Rows for something that names no student (an unsafe archive member...) stay out of the gradebook."""
    return rec.get("identified", True) and valid_student_id(rec["student"])


def run(opts: Options) -> Summary:
    """The whole batch. Every error that stops it is also written to ``autograde.log`` before it propagates."""
    t0 = time.monotonic()
    try:
        course = load_course(opts.config, opts.course_root, opts.source, opts.db_url)
    except Exception as exc:
        out = Path(opts.out) if opts.out else None
        if out is not None:
            handler = _setup_logging(out)
            handler.handle(log.makeRecord(log.name, logging.ERROR, __file__, 0,
                                          "stopped: the course configuration could not be read: %s", (exc,), None))
            log.removeHandler(handler)
            handler.close()
        raise
    out = Path(opts.out) if opts.out else course.root / "autograded" / "_autograder" / opts.assignment
    handler = _setup_logging(out)
    try:
        return _run(opts, course, out, t0)
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


def _run(opts: Options, course: Course, out: Path, t0: float) -> Summary:  # noqa: C901 - the batch, step by step
    feedback_dir = Path(opts.feedback_dir) if opts.feedback_dir else course.root / "feedback"
    summary = Summary(out=out, csv=out / "grades.csv")
    log.info("grading %s from %s (course %s, gradebook %s)", opts.assignment, opts.submissions, course.root,
             _safe_url(course.db_url))
    cache_dir = Path(opts.cache_dir) if opts.cache_dir else out / "cache"
    sandbox = Sandbox(opts.sandbox, cache_dir=cache_dir, warm=opts.warm)
    for w in sandbox.warnings:
        log.warning(w)
        summary.warnings.append(w)
        print(f"\n{'!' * 100}\nWARNING: {w}\n{'!' * 100}\n", file=sys.stderr)
    log.info("sandbox: %s", sandbox.mode)
    if sandbox.is_root:
        n = max(1, opts.workers or os.cpu_count() or 1)
        log.info("submissions run as user ids %d-%d", sandbox.uid_base, sandbox.uid_base + n - 1)
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
        todo = []
        for student, sub in sorted(subs.items()):
            h = hashlib.sha256((grader.fingerprint + settings + sub.content_hash()).encode()).hexdigest()
            prev = state.records.get(student)
            retry = opts.retry_failed and prev and prev.get("status") in ("timeout", "crashed")
            if prev and prev.get("hash") == h and not opts.force and not retry:
                summary.skipped += 1
                if _records_gradebook(prev) and not gb.matches(prev):
                    log.info("%s: unchanged; gradebook entry missing or different, re-written from the state",
                             student)
                    gb.record(prev)
                continue
            todo.append((student, sub, h))
        log.info("%d submission(s): %d to grade, %d unchanged (skipped), %d worker(s)", len(subs), len(todo),
                 summary.skipped, max(1, opts.workers or os.cpu_count() or 1))
        rows_path = out / "grades.csv"

        def rows():
            have = {s: r for s, r in state.records.items() if r.get("assignment") == opts.assignment}
            out_rows = list(have.values())
            for s in gb.students():
                if s not in have:
                    out_rows.append({"student": s, "assignment": opts.assignment, "score": 0.0,
                                     "max_score": sum(sum(p.values()) for p in points.values()),
                                     "status": "missing", "reason": "no submission"})
            return out_rows

        if opts.queue:   # distributed: workers on any machine grade; results come back here
            from . import distributed

            finished = distributed.grade_remotely(opts, course, grader, todo, settings)
        else:
            finished = _grade_locally(grader, todo, max(1, opts.workers or os.cpu_count() or 1))
        done_count = 0
        try:
            for student, sub, h, graded in finished:
                rec = graded.record
                state.append(rec)
                if _records_gradebook(rec):
                    try:
                        gb.record(rec)
                    except Exception:  # noqa: BLE001 - kept in the state; re-written on the next run
                        summary.failed_to_record += 1
                        log.exception("%s: could not write the gradebook (kept in state.jsonl; the next "
                                      "run writes it)", student)
                    _write_feedback(feedback_dir, student, opts.assignment, graded.pages)
                done_count += 1
                summary.graded += 1
                log.info("[%d/%d] %s: %g/%g %s%s (%.1f s)", done_count, len(todo), student,
                         rec["score"], rec["max_score"], rec["status"],
                         f" - {rec['reason'][:200]}" if rec["reason"] else "", rec["seconds"])
                write_csv(rows_path, rows())
        except KeyboardInterrupt:
            log.warning("interrupted: stopping; everything graded so far is saved")
            sandbox.abort()
            finished.close()
            raise
        summary.rows = rows()
        write_csv(rows_path, summary.rows)
        state.close()
        from . import instructor   # the class report, late penalties, the LMS file: never loses a grade
        instructor.after_grading(opts, course, out, subs)
    finally:
        gb.close()
        sandbox.close()
    summary.seconds = time.monotonic() - t0
    log.info("done: %d graded, %d unchanged, in %.1f s; grades: %s", summary.graded, summary.skipped,
             summary.seconds, rows_path)
    return summary


def _grade_locally(grader: AssignmentGrader, todo: list, workers: int):
    """Local mode: ``workers`` threads, each driving one sandbox slot, each calling :func:`grade_submission`;
    yields ``(student, submission, hash, Graded)`` as submissions finish."""
    slots: queue.Queue = queue.Queue()
    for i in range(workers):
        slots.put(i)

    def job(sub, h):
        slot = slots.get()
        try:
            return grade_submission(grader, sub, h, slot=slot)
        finally:
            slots.put(slot)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grader") as pool:
        pending = {pool.submit(job, sub, h): (s, sub, h) for s, sub, h in todo}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    student, sub, h = pending.pop(fut)
                    yield student, sub, h, fut.result()
        except KeyboardInterrupt:
            grader.sandbox.abort()   # before the pool waits for its running jobs
            raise
        finally:
            for f in pending:
                f.cancel()


def _write_feedback(root: Path, student: str, assignment: str, pages: dict) -> None:
    folder = root / student / assignment
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, page in pages.items():
            (folder / (name[: -len(".ipynb")] + ".html")).write_text(page, encoding="utf-8")
    except OSError:
        log.exception("%s: could not write feedback", student)
