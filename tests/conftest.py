"""Shared fixtures: the course's assignments graded once per test session, and timing reports."""
from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("SEQCOURSE_PROGRESS", "0")

import harness  # noqa: E402
import nbgrader_cli  # noqa: E402

ASSIGNMENTS = nbgrader_cli.assignments()
TIMINGS: dict[str, float] = {}
REPORTS: dict[str, str] = {}   # one line per key, printed at the end of the session (e.g. the class grader's batches)


@pytest.fixture(scope="session")
def graded():
    """``{assignment: result or Exception}`` from :func:`harness.grade_assignment`, graded in parallel."""
    from concurrent.futures import ThreadPoolExecutor
    import tempfile

    workdir = Path(tempfile.mkdtemp(prefix="seqcourse-grading-"))
    workers = int(os.environ.get("SEQCOURSE_GRADING_WORKERS", str(min(2, os.cpu_count() or 1))))
    out = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {a: pool.submit(harness.grade_assignment, a, workdir) for a in ASSIGNMENTS}
        for a, f in futures.items():
            try:
                out[a] = f.result()
            except Exception as exc:  # noqa: BLE001 - reported by the tests of that assignment only
                out[a] = exc
    return out


CLASS_BATCHES: dict = {}   # assignment -> folder of a class-grader batch graded in this session (see class_batch)


@pytest.fixture(scope="session")
def class_batch(request, tmp_path_factory):
    """``get(assignment) -> folder``: where ``python -m autograder grade`` graded the harness's submissions of that
    assignment (``out/``: state.jsonl, grades.csv, report.html; ``submitted/``; ``feedback/``;
    ``nbgrader_config.py``). It is the batch that ``tests/test_autograder_assignments.py`` grades anyway (CI grades
    nothing twice); only when that test did not run in this session is the batch graded here, once."""
    def get(assignment):
        if assignment not in CLASS_BATCHES:
            from test_autograder_assignments import _batch

            root = tmp_path_factory.mktemp(f"class-{assignment}") / assignment
            graded = request.getfixturevalue("graded")   # only now: nbgrader grades every assignment once
            _, _, proc = _batch(assignment, result_of(graded, assignment), root)
            assert proc.returncode == 0, proc.stderr[-3000:]
            CLASS_BATCHES[assignment] = root
        return CLASS_BATCHES[assignment]
    return get


def result_of(graded, assignment):
    r = graded[assignment]
    if isinstance(r, Exception):
        raise r
    return r


def pytest_terminal_summary(terminalreporter):
    if REPORTS:
        terminalreporter.section("reports")
        for name, line in sorted(REPORTS.items()):
            terminalreporter.write_line(f"{name}: {line}")
    if TIMINGS:
        terminalreporter.section("solution notebooks, top to bottom (seconds, this machine)")
        for name, seconds in sorted(TIMINGS.items()):
            terminalreporter.write_line(f"{name:60s} {seconds:7.1f}")


# ---------------------------------------------------------------------------------------------------------
# The book build is the slowest single step and mostly waits on notebook kernels: start it when the session
# starts, in the background, so that it overlaps with grading; tests/test_book.py waits for it.
BOOK: dict = {}


def pytest_collection_finish(session):
    if os.environ.get("SEQCOURSE_BOOK_HTML"):
        return  # a book built beforehand (see the book fixture)
    if any("book" in getattr(item, "fixturenames", ()) for item in session.items):
        import subprocess
        import tempfile

        out = Path(tempfile.mkdtemp(prefix="seqcourse-book-"))
        log = open(out / "build.log", "w")
        cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(REPO), "--all", "-W",
               "--keep-going", "--path-output", str(out)]
        env = dict(os.environ, SEQCOURSE_PROGRESS="0", OMP_NUM_THREADS="1")
        BOOK.update(out=out, log_path=out / "build.log", cmd=cmd,
                    proc=subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env))


def pytest_sessionfinish(session):
    proc = BOOK.get("proc")
    if proc is not None and proc.poll() is None:
        proc.kill()


@pytest.fixture(scope="session")
def book():
    """``(returncode, log text, html folder)`` of one full book build with warnings as errors.

    ``SEQCOURSE_BOOK_HTML=path/to/_build/html`` tests that folder instead (while working on the browser
    tests, with a book built beforehand); CI never sets it."""
    prebuilt = os.environ.get("SEQCOURSE_BOOK_HTML")
    if prebuilt:
        return 0, "build succeeded (built beforehand: SEQCOURSE_BOOK_HTML)", Path(prebuilt)
    if "proc" not in BOOK:
        pytest.skip("book build not started")
    rc = BOOK["proc"].wait(timeout=1800)
    return rc, BOOK["log_path"].read_text(errors="replace"), BOOK["out"] / "_build" / "html"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site(book):
    """``(base URL, html folder)``: the built book served on 127.0.0.1 for the browser tests."""
    rc, log, html = book
    if rc != 0:
        pytest.fail("the book did not build; see test_book.py")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", html
    finally:
        server.shutdown()
