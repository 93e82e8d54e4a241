"""``python -m autograder grade ASSIGNMENT --submissions DIR|ARCHIVE.zip [options]`` (from the repository root);
``python -m autograder worker --queue redis://HOST/0 --store-url postgresql+psycopg2://...`` (distributed mode);
``python -m autograder report ASSIGNMENT`` (the class report, late penalties, the LMS import file, again);
``python -m autograder similar ASSIGNMENT --submissions ...`` (pairs of students whose answers look copied).

See README.md ("Grading a whole class safely") and :mod:`autograder` for the design and the threat model.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .course import AssignmentError, load_course
from .jail import Limits, PackageMismatch
from .submissions import CollectionError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade every submission of an assignment (isolated, parallel, resumable)")
    g.add_argument("assignment")
    g.add_argument("--submissions", required=True, type=Path,
                   help="nbgrader's submitted/ folder (<student>/<assignment>/*.ipynb), or an LMS download (.zip, "
                        "or the folder it was extracted to; see --lms)")
    g.add_argument("--lms", choices=["nbgrader", "canvas", "moodle"], default="nbgrader",
                   help="how file names say whose they are: nbgrader (its folder layout, or zip_collect's "
                        "--zip-regexp), canvas ('Download Submissions'), moodle ('Download all submissions')")
    g.add_argument("--workers", type=int, default=0, help="parallel sandboxes (default: the CPU count)")
    g.add_argument("--db-url", help="gradebook URL (default: the nbgrader config's, else sqlite:///<root>/gradebook.db)")
    g.add_argument("--config", type=Path, help="nbgrader config file (default: autograder/nbgrader_config.py)")
    g.add_argument("--course-root", type=Path, help="course root (default: from the config)")
    g.add_argument("--source", help="source folder name under the root (default: from the config)")
    g.add_argument("--out", type=Path,
                   help="grades.csv, log and state (default: <root>/autograded/_autograder/<assignment>)")
    g.add_argument("--feedback-dir", type=Path, help="feedback pages (default: <root>/feedback)")
    g.add_argument("--cache-dir", type=Path, help="reference runs and font cache (default: <out>/cache)")
    g.add_argument("--force", action="store_true", help="regrade every submission, even unchanged ones")
    g.add_argument("--retry-failed", action="store_true", help="regrade unchanged submissions that timed out or crashed")
    g.add_argument("--sandbox", choices=["auto", "bwrap", "none"], default="auto",
                   help="auto: bubblewrap if it works, else a loud warning and no filesystem/network isolation")
    g.add_argument("--require-sandbox", action="store_true", help="refuse to grade without bubblewrap")
    g.add_argument("--students", help="comma-separated student ids to grade (default: all)")
    g.add_argument("--zip-regexp", help="with --lms nbgrader: named regexp for archive member names, as nbgrader's "
                                        "FileNameCollectorPlugin.named_regexp (default: the config's, else "
                                        "<assignment>_<student>_attempt_<timestamp>_<file>)")
    d = Limits()
    g.add_argument("--cell-timeout", type=float, default=d.cell_seconds,
                   help=f"seconds per cell (default {d.cell_seconds:g}; at least TIME_FACTOR x the reference run's)")
    g.add_argument("--notebook-timeout", type=float, default=d.notebook_seconds,
                   help=f"seconds per notebook (default {d.notebook_seconds:g})")
    g.add_argument("--time-factor", type=float, default=5.0)
    g.add_argument("--memory-mb", type=int, default=d.memory_bytes >> 20, help="address space per process")
    g.add_argument("--nproc", type=int, default=d.nproc, help="processes and threads per submission")
    g.add_argument("--cold", action="store_true",
                   help="start a fresh interpreter for every submission instead of forking it from a warm sandbox "
                        "that imported torch and the course package once (slower; same results)")
    g.add_argument("--queue", metavar="URL", default=os.environ.get("AUTOGRADER_QUEUE"),
                   help="distributed mode: the Celery broker (redis://HOST:6379/0); `python -m autograder worker` "
                        "processes grade, this command enqueues, waits and records (env AUTOGRADER_QUEUE)")
    g.add_argument("--store-url", metavar="URL", default=os.environ.get("AUTOGRADER_STORE_URL"),
                   help="distributed mode: PostgreSQL database for bundles, submissions and results "
                        "(default: the gradebook's db_url; env AUTOGRADER_STORE_URL)")
    _instructor_options(g)
    r = sub.add_parser("report", help="the class report (and late penalties, LMS import file) of a graded run, "
                                      "from its state.jsonl and grades.csv; no grading")
    r.add_argument("assignment")
    _course_options(r)
    r.add_argument("--submissions", type=Path, help="the graded download, for the LMS's names and LATE marks "
                                                     "(default: what the last grade run read)")
    r.add_argument("--lms", choices=["nbgrader", "canvas", "moodle"], help="default: the last grade run's")
    r.add_argument("--zip-regexp")
    _instructor_options(r)
    m = sub.add_parser("similar", help="rank pairs of students by how much of their answer cells they share "
                                       "(the handed-out notebook and the reference solution do not count)")
    m.add_argument("assignment")
    m.add_argument("--submissions", type=Path, help="as for grade (default: what the last grade run read)")
    m.add_argument("--lms", choices=["nbgrader", "canvas", "moodle"], help="default: the last grade run's")
    m.add_argument("--zip-regexp")
    _course_options(m)
    from .similarity import MIN_TOKENS, THRESHOLD
    m.add_argument("--threshold", type=float, default=THRESHOLD,
                   help=f"flag a pair when one student's own code is at least this share in the other's (default {THRESHOLD})")
    m.add_argument("--min-tokens", type=int, default=MIN_TOKENS,
                   help=f"and they share at least this many characters of tokenized code (default {MIN_TOKENS})")
    w = sub.add_parser("worker", help="distributed mode: grade the submissions that `grade --queue` enqueues")
    w.add_argument("--queue", metavar="URL", default=os.environ.get("AUTOGRADER_QUEUE"),
                   help="the Celery broker, e.g. redis://HOST:6379/0 (env AUTOGRADER_QUEUE)")
    w.add_argument("--store-url", metavar="URL", default=os.environ.get("AUTOGRADER_STORE_URL"),
                   help="the PostgreSQL store the submitter uses (env AUTOGRADER_STORE_URL)")
    w.add_argument("--concurrency", type=int, default=0, help="parallel sandboxes (default: the CPU count)")
    w.add_argument("--sandbox", choices=["auto", "bwrap", "none"], default="auto")
    w.add_argument("--require-sandbox", action="store_true", help="refuse to start without bubblewrap")
    w.add_argument("--cold", action="store_true", help="no warm sandboxes (see grade --cold)")
    w.add_argument("--cache-dir", type=Path, help="bundles, reference traces, font cache (default: a temp folder)")
    w.add_argument("--name", help="worker name in logs and the store (default: autograder-PID@HOST)")
    w.add_argument("--visibility-timeout", type=float, default=3600.0,
                   help="seconds after which Redis hands an unacknowledged task (its worker died) to another "
                        "worker; must exceed the longest grading (default 3600)")
    w.add_argument("--loglevel", default="INFO")
    return p


def _course_options(p) -> None:
    p.add_argument("--config", type=Path, help="nbgrader config file (default: autograder/nbgrader_config.py)")
    p.add_argument("--course-root", type=Path, help="course root (default: from the config)")
    p.add_argument("--source", help="source folder name under the root (default: from the config)")
    p.add_argument("--out", type=Path, help="the grade run's folder (default: <root>/autograded/_autograder/<assignment>)")


def _instructor_options(p) -> None:
    p.add_argument("--late-penalty", metavar="RATE/UNIT[,max=CAP][,grace=D]",
                   help="take late submissions' points off, e.g. '10%%/day,max=50%%' or '2pt/hour,grace=15m' (every "
                        "unit begun counts); shown in grades.csv (penalty, final_score), the report and the export")
    p.add_argument("--due", help="due date, ISO 8601 (2026-03-01T23:59[+01:00]); default: the gradebook's")
    p.add_argument("--export", choices=["canvas", "moodle"],
                   help="also write the LMS's grade import file (Canvas gradebook CSV, Moodle grading worksheet) "
                        "beside grades.csv, keyed by the ids of its download")
    p.add_argument("--missing", choices=["zero", "blank"], default="zero",
                   help="the export's grade for a missing or invalid submission (blank: leave the LMS's grade)")
    p.add_argument("--export-column", help="Canvas's assignment column, e.g. 'Chapter 2 (12345)' (default: the "
                                           "assignment's name)")


def _extras(args):
    from .instructor import Extras

    extras = Extras(late_penalty=args.late_penalty, due=args.due, export=args.export, missing=args.missing,
                    export_column=args.export_column)
    extras.check()
    return extras


def options(argv=None):
    """The :class:`autograder.grade_command.Options` that a command line stands for."""
    args = _parser().parse_args(argv)
    return _options(args)


def _options(args):
    from .grade_command import Options

    limits = Limits(cell_seconds=args.cell_timeout, notebook_seconds=args.notebook_timeout,
                    memory_bytes=args.memory_mb << 20, tree_rss_bytes=max(args.memory_mb << 20, 6 << 30),
                    nproc=args.nproc)
    opts = Options(
        assignment=args.assignment, submissions=args.submissions, workers=args.workers or (os.cpu_count() or 1),
        db_url=args.db_url, config=args.config, course_root=args.course_root, source=args.source, out=args.out,
        force=args.force, retry_failed=args.retry_failed,
        sandbox="bwrap" if args.require_sandbox else args.sandbox, limits=limits, time_factor=args.time_factor,
        zip_regexp=args.zip_regexp, lms=args.lms,
        students=args.students.split(",") if args.students else None, feedback_dir=args.feedback_dir,
        cache_dir=args.cache_dir, queue=args.queue, store_url=args.store_url, warm=not args.cold,
        extras=_extras(args))
    return opts


def _one_line(exc: BaseException) -> str:
    """A fatal error as ONE line for the terminal; ``autograde.log`` has all of it."""
    text = str(exc).strip() or type(exc).__name__
    known = isinstance(exc, (AssignmentError, CollectionError, PackageMismatch, ValueError, OSError))
    first = text.splitlines()[0]
    if not known:
        first = f"{type(exc).__name__}: {first}"
    cut = len(text.splitlines()) > 1 or len(first) > 600
    return (first if len(first) <= 600 else first[:597] + "...") + (" (the rest is in autograde.log)" if cut else "")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    import logging

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if args.command == "worker":
        return _worker(args)
    if args.command in ("report", "similar"):
        return _instructor_command(args)
    try:
        opts = _options(args)
    except ValueError as exc:   # a late policy, due date or export option that cannot work: before grading
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    from .grade_command import run
    try:
        summary = run(opts)
    except KeyboardInterrupt:
        print("interrupted; graded submissions are saved; run the same command again to resume", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one clear line; the log has the whole message (and a traceback)
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    counts: dict = {}
    for r in summary.rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"{summary.graded} graded, {summary.skipped} unchanged; statuses: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f"\ngrades: {summary.csv}\nlog: "
          f"{summary.out / 'autograde.log'}"
          + (f"\nclass report: {summary.out / 'report.html'}" if (summary.out / "report.html").exists() else ""))
    if summary.warnings:
        print("WARNING: graded WITHOUT a sandbox (see the log)", file=sys.stderr)
    return 1 if summary.failed_to_record else 0


def _instructor_command(args) -> int:
    """``report`` and ``similar``: one line on the terminal for every problem, never a traceback."""
    try:
        course = load_course(args.config, args.course_root, args.source)
        out = Path(args.out) if args.out else course.root / "autograded" / "_autograder" / args.assignment
        from .instructor import saved_inputs

        saved = saved_inputs(out, args.assignment)
        if args.submissions is None and saved.get("submissions") and Path(saved["submissions"]).exists():
            args.submissions, args.zip_regexp = Path(saved["submissions"]), args.zip_regexp or saved.get("zip_regexp")
        args.lms = args.lms or saved.get("lms") or "nbgrader"
        if args.command == "similar" and args.submissions is None:
            raise ValueError(f"similar needs --submissions (no grade run of {args.assignment} in {out} to take it from)")
        subs = None
        if args.submissions:
            from .submissions import collect

            subs = collect(Path(args.submissions), args.assignment, args.zip_regexp or course.zip_regexp,
                           lms=args.lms, notebooks=[p.name for p in (course.source_dir / args.assignment).glob("*.ipynb")])
        if args.command == "similar":
            from . import similarity

            made = similarity.run(args.assignment, course.source_dir / args.assignment, subs, out / "similarity",
                                  threshold=args.threshold, min_tokens=args.min_tokens)
            print(f"{made['students']} students, {made['pairs']} pairs share code, {made['flagged']} flagged "
                  f"(threshold {args.threshold:g}, at least {args.min_tokens} tokens)\nranked list: {made['index']}")
            return 0
        from . import instructor
        from .results import load

        extras = _extras(args)
        made = instructor.produce(load(out, args.assignment), extras, lms=args.lms, subs=subs, db_url=course.db_url)
        print(f"class report: {made['report']}" + (f"\nLMS import file: {made['export']}" if made.get("export") else ""))
        return 0
    except Exception as exc:  # noqa: BLE001 - one clear line
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2


def _worker(args) -> int:
    if not args.queue or not args.store_url:
        print("error: a worker needs --queue redis://HOST:6379/0 and --store-url postgresql+psycopg2://...",
              file=sys.stderr)
        return 2
    from . import distributed

    try:
        return distributed.run_worker(queue_url=args.queue, store_url=args.store_url,
                                      concurrency=args.concurrency or (os.cpu_count() or 1),
                                      sandbox_mode="bwrap" if args.require_sandbox else args.sandbox,
                                      cache_dir=args.cache_dir, name=args.name,
                                      visibility_timeout=args.visibility_timeout, loglevel=args.loglevel,
                                      warm=not args.cold)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
