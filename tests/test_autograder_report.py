"""The instructor's day after the deadline: the class report, similar submissions, grades in the LMS's format.

- The **class report** of real graded batches (ch02, ch05, ch09: the reference, the untouched notebook, the
  packed mutants and alternatives that ``tests/test_autograder_assignments.py`` grades anyway; nothing is
  graded twice, see ``conftest.class_batch``): its numbers agree with grades.csv and state.jsonl, it is
  self-contained, and in Chromium it loads nothing from outside and passes axe-core's WCAG 2.1 A/AA rules.
- **Similar submissions** on a planted class (``tests/planted_class.py``): every copy pair flagged, no two
  independent answers flagged, a side-by-side page per flagged pair with the shared code marked.
- **LMS export** round trips: a Canvas and a Moodle download (archives shaped as the LMSs write them) graded
  with ``--export``, ``--late-penalty``, ``--missing``: the import file is keyed by the ids of the download.
- Student-facing files (feedback pages, grades.csv) gain nothing from the report or the similarity run.
- Every bad input of the new commands: one line on stderr, a non-zero exit, never a traceback.
"""
from __future__ import annotations

import csv
import hashlib
import html.parser
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from browser_tools import ARGS, AXE_RUN, CHROMIUM, TAGS, axe_source

import autograder_synth as synth
import harness
import nbgrader_cli
from autograder.records import CSV_FIELDS
from autograder.lms_export import CANVAS_HEADER

REPORTED = ["ch02", "ch05", "ch09"]


def _cli(*args, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(nbgrader_cli.REPO), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=nbgrader_cli.REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _rows(path: Path) -> list:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _state(path: Path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        out[rec["student"]] = rec
    return out


class _Page(html.parser.HTMLParser):
    """The report's machine-readable parts: ids' text, and the data-* attributes of every element."""

    def __init__(self):
        super().__init__()
        self.by_id, self.data, self.stack, self.external = {}, [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith(("#", "data:")) and "://" in a[key]:
                self.external.append(a[key])
        if tag in ("link", "script", "img", "iframe", "object"):
            self.external.append(f"<{tag}>")
        self.data.append((tag, {k[5:]: v for k, v in a.items() if k.startswith("data-")}, a.get("class", "")))
        self.stack.append(a.get("id"))

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, text):
        for i in self.stack:
            if i:
                self.by_id[i] = self.by_id.get(i, "") + text


def _parse(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    return p


# ------------------------------------------------------------------------------------------- the class report
@pytest.mark.parametrize("assignment", REPORTED)
def test_report_of_a_real_batch_agrees_with_grades_csv(class_batch, assignment):
    out = class_batch(assignment) / "out"
    page_text = (out / "report.html").read_text()       # written by the grade run itself
    page = _parse(page_text)
    rows = _rows(out / "grades.csv")
    state = _state(out / "state.jsonl")
    assert "For the instructor only" in page_text and not page.external, page.external
    present = [float(r["score"]) for r in rows if r["status"] != "missing"]
    mx = float(rows[0]["max_score"])
    assert page.by_id["students"].strip() == str(len(rows))
    assert page.by_id["submitted"].strip() == str(len(present))
    assert math.isclose(float(page.by_id["mean-score"]), statistics.fmean(present), abs_tol=0.006)
    assert math.isclose(float(page.by_id["median-score"]), statistics.median(present), abs_tol=0.006)
    assert page.by_id["full-marks"].strip() == str(sum(1 for s in present if abs(s - mx) < 1e-9))
    # the histogram: every bar's count is the number of grades.csv scores in its bin, and all are counted
    bars = [d for tag, d, cls in page.data if tag == "rect" and "lo" in d and "hi" in d]
    assert bars and sum(int(d["count"]) for d in bars) == len(present)
    top = max(float(d["hi"]) for d in bars)
    for d in bars:
        lo, hi = float(d["lo"]), float(d["hi"])
        want = sum(1 for s in present if lo - 1e-9 <= s < hi - 1e-9 or (hi == top and abs(s - hi) < 1e-9))
        assert int(d["count"]) == want, (d, sorted(present))
    # per test: passed, mean, discrimination, and every failure in exactly one cause group
    attempted = {s: r for s, r in state.items() if r["status"] in ("ok", "timeout", "crashed")}
    rows_by_test = {d["test"]: d for tag, d, cls in page.data if tag == "tr" and "test" in d}
    passed_cells = [d for tag, d, cls in page.data if tag == "td" and "passed" in d]
    means = [d for tag, d, cls in page.data if tag == "td" and "mean" in d]
    nb_tests = [(nb, gid) for nb, info in next(iter(state.values()))["notebooks"].items() for gid in info["tests"]]
    assert list(rows_by_test) == [gid for _, gid in nb_tests]
    for k, (nb, gid) in enumerate(nb_tests):
        scores = [r["notebooks"][nb]["tests"][gid]["score"] for r in attempted.values()]
        passed = sum(r["notebooks"][nb]["tests"][gid]["passed"] for r in attempted.values())
        assert int(passed_cells[k]["passed"]) == passed, gid
        assert math.isclose(float(means[k]["mean"]), statistics.fmean(scores), rel_tol=1e-5), gid
        causes = next((d for tag, d, cls in page.data if tag == "table" and d.get("test") == gid), None)
        assert (causes is not None) == (passed < len(attempted)), gid
    counts = sum(int(d["count"]) for tag, d, cls in page.data if tag == "td" and "count" in d)
    failures = sum(not r["notebooks"][nb]["tests"][gid]["passed"] for r in attempted.values() for nb, gid in nb_tests)
    assert counts == failures
    # the mutants' checks name causes; the untouched notebook's failures are one group, "raised
    # NotImplementedError" (shown where it is among a test's 8 largest groups: with many mutants of one test, each
    # a group of one, it may not be)
    from autograder.report import cause

    assert "Likely cause:" in page_text
    blank = [cause(r["notebooks"][nb]["tests"][gid]["detail"]) for s, r in attempted.items() if s == "blank"
             for nb, gid in nb_tests if not r["notebooks"][nb]["tests"][gid]["passed"]]
    assert blank and all(c == ("exception", "raised NotImplementedError") for c in blank), blank
    # the edit hints (seqcourse/hint_data/) are read in the sandbox as in Jupyter: where the catalogue has mutants
    # whose visible message names the one edit of the reference they are, the records name such edits too
    if any(m.message and "what you get with" in m.message for m in harness.load_mutants(assignment)):
        assert any("your values are what you get with" in r["notebooks"][nb]["tests"][gid]["detail"]
                   for r in attempted.values() for nb, gid in nb_tests)
    # two example students per cause (the others are counted, above): every test that failed names at least one
    # student who failed it
    for nb, gid in nb_tests:
        failed = [s for s, r in attempted.items() if not r["notebooks"][nb]["tests"][gid]["passed"]]
        assert not failed or any(s in page_text for s in failed), gid


def test_discrimination_index_is_the_point_biserial_correlation():
    from autograder.report import DISCRIMINATION_FLAG, point_biserial

    item = [1, 1, 1, 0, 0, 1, 0, 1]
    rest = [9, 8, 7, 3, 2, 6, 4, 5]
    assert math.isclose(point_biserial(item, rest), statistics.correlation(item, rest))
    assert point_biserial([1, 1, 1, 1], [3, 2, 1, 0]) is None       # nobody failed: cannot separate
    assert point_biserial([1, 0, 1, 0], [0, 9, 1, 8]) < DISCRIMINATION_FLAG


def _course_with_records(tmp_path: Path, records: list, rows: list) -> Path:
    out = tmp_path / "out"
    out.mkdir(parents=True)
    (out / "state.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return out


def _record(student, status, scores, *, seconds=1.0, timestamp=None, detail="line 3: boom"):
    tests = {gid: {"score": s, "max_score": 1.0, "passed": s == 1.0, "reason": "", "hidden": False,
                   "detail": "" if s == 1.0 else detail} for gid, s in scores.items()}
    return {"student": student, "assignment": "zz09", "status": status, "score": float(sum(scores.values())),
            "max_score": float(len(scores)), "reason": f"{status} reason of {student}", "seconds": seconds,
            "timestamp": timestamp, "hash": student, "notebooks": {"zz09.ipynb": {"tests": tests}}}


def _synthetic_class(tmp_path: Path) -> Path:
    recs = [_record("ann", "ok", {"t1": 1.0, "t2": 1.0}, timestamp="2026-03-01 10:00:00"),
            _record("bob", "ok", {"t1": 1.0, "t2": 0.0}, timestamp="2026-03-03 09:00:00",
                    detail="line 4: output: 3 of 8 entries differ. Likely cause: the two halves are swapped"),
            _record("cid", "timeout", {"t1": 0.0, "t2": 0.0}, seconds=120.0, detail="the test did not finish"),
            _record("dee", "crashed", {"t1": 1.0, "t2": 0.0}, detail="MemoryError (line 2): out of memory"),
            _record("eve", "invalid", {"t1": 0.0, "t2": 0.0}, seconds=0.0, detail="notebook could not be read")]
    rows = [{**{k: r[k] for k in ("student", "assignment", "score", "max_score", "status", "reason")}} for r in recs]
    rows.append({"student": "fay", "assignment": "zz09", "score": 0, "max_score": 2, "status": "missing",
                  "reason": "no submission"})
    return _course_with_records(tmp_path, recs, rows)


def test_statuses_late_penalties_and_names_in_the_report(tmp_path):
    out = _synthetic_class(tmp_path)
    before = (out / "grades.csv").read_text()
    proc = _cli("report", "zz09", "--out", out, "--late-penalty", "25%/day,max=50%", "--due", "2026-03-01T12:00")
    assert proc.returncode == 0, proc.stderr
    page = (out / "report.html").read_text()
    for student, status in [("cid", "timeout"), ("dee", "crashed"), ("eve", "invalid")]:
        assert f"<tr data-status='{status}'>" in page and f"{status} reason of {student}" in page
    assert "<tr data-status='missing'>" in page and "fay" in page and "no submission" in page
    assert "Likely cause: the two halves are swapped" in page and "raised MemoryError" in page
    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert list(_rows(out / "grades.csv")[0]) == CSV_FIELDS + ["submitted_at", "late_by", "penalty", "final_score"]
    # bob: 1 day 21 hours late: two days begun, 25% of 2 points each = 1 point, but he only has 1
    assert (rows["bob"]["late_by"], rows["bob"]["penalty"], rows["bob"]["final_score"]) == ("1d 21h", "1", "0")
    assert (rows["ann"]["penalty"], rows["ann"]["final_score"], rows["ann"]["late_by"]) == ("0", "2", "")
    assert rows["fay"]["penalty"] == "0" and rows["eve"]["penalty"] == "0"
    assert "data-penalty='1'" in page and "1d 21h" in page
    assert before.splitlines()[0] == ",".join(CSV_FIELDS)


def test_late_policy_syntax():
    from autograder.late import LateError, parse_policy

    p = parse_policy("10%/day,max=50%,grace=15m")
    assert (p.rate, p.percent, p.unit, p.cap, p.grace) == (10, True, "day", 50, 900)
    assert p.units(899) == 0 and p.units(901) == 1 and p.units(86400 * 2 + 1) == 3
    assert p.penalty(7, 10, 10) == 5.0 and p.penalty(1, 0.5, 10) == 0.5     # capped; never below zero
    q = parse_policy("2pt/hour")
    assert q.penalty(3, 10, 10) == 6.0 and q.describe().startswith("2 point(s) per hour")
    for bad in ["10", "10%/week", "ten%/day", "10%/day,max=lots", "10%/day,foo=1"]:
        with pytest.raises(LateError):
            parse_policy(bad)


def test_due_date_defaults_to_the_gradebooks(tmp_path):
    from datetime import datetime, timezone

    from nbgrader.api import Gradebook

    from autograder.late import due_from_gradebook

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.update_or_create_assignment("zz08", duedate=datetime(2026, 3, 1, 22, 59))
        gb.update_or_create_assignment("zz09")
    assert due_from_gradebook(url, "zz08") == datetime(2026, 3, 1, 22, 59, tzinfo=timezone.utc)   # nbgrader: UTC
    assert due_from_gradebook(url, "zz09") is None and due_from_gradebook(url, "nope") is None


# ------------------------------------------------------------------------------------------- in Chromium
def _chromium_pages(paths: list) -> dict:
    """Open each page from disk; ``{path: (axe violations, console errors, requests that left the file)}``."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium)")
    axe = axe_source()
    results = {}
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        for path in paths:
            page = context.new_page()
            errors, outside = [], []
            page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
            page.on("request", lambda r, o=outside, u=path.as_uri(): o.append(r.url) if r.url != u else None)
            page.goto(path.as_uri(), wait_until="load")
            page.add_script_tag(content=axe)
            found = [f"{v['id']}: {v['help']} ({len(v['nodes'])})" for v in page.evaluate(AXE_RUN, TAGS)]
            results[path] = (found, errors, outside)
            page.close()
        browser.close()
    return results


@pytest.mark.parametrize("assignment", REPORTED)
def test_report_and_similarity_pages_pass_axe_in_chromium(class_batch, assignment, tmp_path):
    import planted_class

    root = class_batch(assignment)
    submitted = tmp_path / "submitted"
    shutil.copytree(root / "submitted", submitted)
    source = submitted / "alternatives-1" / assignment      # and one disguised copy, for a side-by-side page
    copy = submitted / "copier" / assignment
    copy.mkdir(parents=True)
    for nb_path in source.glob("*.ipynb"):
        nb = nbformat.read(nb_path, as_version=4)
        for cell in nb.cells:
            if nbgrader_cli.is_solution_cell(cell) and planted_class._changed(assignment, nb_path.name,
                                                                         nbgrader_cli.nbgrader_meta(cell)["grade_id"],
                                                                         cell.source):
                cell.source = planted_class.disguise(cell.source, "all")
        nbformat.write(nb, copy / nb_path.name)
    made = _cli("similar", assignment, "--submissions", submitted, "--out", tmp_path / "out")
    assert made.returncode == 0, made.stderr
    pairs = sorted((tmp_path / "out" / "similarity").glob("pair-*.html"))
    assert any("alternatives-1-copier" in p.name for p in pairs), [p.name for p in pairs]
    pages = [root / "out" / "report.html", tmp_path / "out" / "similarity" / "index.html", pairs[0]]
    for path, (violations, errors, outside) in _chromium_pages(pages).items():
        assert not violations, f"{path.name}: {violations}"
        assert not errors and not outside, (path.name, errors, outside)


# ------------------------------------------------------------------------------------------- similar submissions
def _write_class(root: Path, assignment: str, students: dict) -> Path:
    for student, notebooks in students.items():
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, nb in notebooks.items():
            (folder / name).write_text(nbformat.writes(nb))
    return root / "submitted"


@pytest.mark.parametrize("assignment", REPORTED)
def test_similar_flags_every_planted_copy_and_no_independent_answer(assignment, tmp_path):
    import planted_class

    students, origin = planted_class.planted(assignment)
    assert sum(s.startswith("copy-") for s in students) >= 11
    proc = _cli("similar", assignment, "--submissions", _write_class(tmp_path, assignment, students),
                "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "out" / "similarity"
    flagged = {frozenset((r["student_a"], r["student_b"])): r for r in _rows(folder / "pairs.csv")
               if r["flagged"] == "yes"}
    missed, wrong = [], []
    for a, b in itertools.combinations(sorted(students), 2):
        same = origin[a] == origin[b]
        if same and frozenset((a, b)) not in flagged:
            missed.append((a, b))
        if not same and frozenset((a, b)) in flagged:
            wrong.append((a, b, flagged[frozenset((a, b))]["score"]))
    assert not missed and not wrong, (missed, wrong)
    for r in flagged.values():      # a side-by-side page each, the shared code marked on both sides
        page = (folder / r["page"]).read_text()
        assert page.count("<mark>") >= 2 and r["student_a"] in page and r["student_b"] in page


def test_similarity_ignores_the_reference_and_the_handed_out_notebook(tmp_path):
    """Two students who both wrote the reference solution, or left the notebook untouched, share nothing."""
    import harness

    base = harness.submissions("ch02")
    students = {"ref1": base["solution"]["notebooks"], "ref2": base["solution"]["notebooks"],
                "blank1": base["blank"]["notebooks"], "blank2": base["blank"]["notebooks"]}
    proc = _cli("similar", "ch02", "--submissions", _write_class(tmp_path, "ch02", students), "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    assert _rows(tmp_path / "o" / "similarity" / "pairs.csv") == []


# ------------------------------------------------------------------------------------------- LMS round trips
def _tiny(nb):
    nb.readonly("zz07_setup", "import math")
    nb.solution("zz07_f", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
    nb.test("zz07_test_f", 1, "assert f() == 1\n")
    nb.solution("zz07_g", "def g(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION")
    nb.test("zz07_test_g", 1, "assert g(3) == 6\n")


def _zip(path: Path, members: dict, times: dict | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(times or {}).get(name, (2026, 3, 1, 10, 0, 0)))
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
    return path


def _add_students(root: Path, assignment: str, ids: list) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for s in ids:
            gb.update_or_create_student(s)


def _snapshot(*folders: Path) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for f in folders if f.exists()
            for p in sorted(f.rglob("*")) if p.is_file()}


def test_canvas_round_trip_late_missing_and_student_files(tmp_path):
    """A Canvas 'Download Submissions' archive -> grade --export canvas -> the gradebook import file, keyed by
    the Canvas user ids of the file names; LATE marks charged; missing and invalid rows as --missing says; and
    feedback pages and grades.csv untouched by `report` and `similar` afterwards."""
    NB = "zz07.ipynb"
    folder = synth.course(tmp_path, "zz07", _tiny)
    good = synth.submission(folder)[NB]
    half = synth.submission(folder, {"zz07_g": "def g(x):\n    return x + x + 1\n"})[NB]
    _add_students(tmp_path, "zz07", ["1001", "1002", "1003", "1004", "1005"])   # the roster, with no-shows
    z = _zip(tmp_path / "submissions.zip", {
        f"doejane_1001_501_{NB}": good,
        f"smithjohn_LATE_1002_502_{NB}": good,          # late: Canvas says so, not how late
        f"o_neillmary_1003_503_{NB}": half,
        f"leeann_1004_504_{NB}": b"{ not json",         # invalid
        f"anon_Xy12Z_505_{NB}": good,                   # anonymous grading: not importable
    })
    out, feedback = tmp_path / "out", tmp_path / "feedback"
    proc = _cli("grade", "zz07", "--submissions", z, "--lms", "canvas", "--config", tmp_path / "nbgrader_config.py",
                "--out", out, "--feedback-dir", feedback, "--workers", "2", "--export", "canvas",
                "--export-column", "Chapter 7 (4711)", "--late-penalty", "10%/day,max=30%", "--missing", "blank")
    assert proc.returncode == 0, proc.stderr[-3000:]
    exported = list(csv.reader(open(out / "canvas-import.csv", newline="")))
    assert exported[0] == CANVAS_HEADER + ["Chapter 7 (4711)"]
    got = {r[1]: r for r in exported[1:]}
    assert set(got) == {"1001", "1002", "1003", "1004", "1005"}                  # ids from the download and roster
    assert got["1001"][0] == "doejane" and got["1001"][5] == "2"
    assert got["1002"][5] == "1.8"                                               # 2 - 10% of 2 (one unit)
    assert got["1003"][5] == "1" and got["1004"][5] == "" and got["1005"][5] == ""
    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert (rows["1002"]["penalty"], rows["1002"]["final_score"], rows["1002"]["late_by"]) == \
        ("0.2", "1.8", "late (time unknown)")
    report = (out / "report.html").read_text()
    assert "anon_Xy12Z" in report and "not a Canvas user id" in report and "late (time unknown)" in report
    # again without grading, --missing zero; the download and --lms canvas are the grade run's (graded-from.json)
    assert _cli("report", "zz07", "--config", tmp_path / "nbgrader_config.py", "--out", out, "--export", "canvas",
                "--missing", "zero", "--late-penalty", "10%/day").returncode == 0
    again = {r[1]: r for r in list(csv.reader(open(out / "canvas-import.csv", newline="")))[1:]}
    assert again["1004"][5] == "0" and again["1005"][5] == "0" and again["1002"][5] == "1.8"   # still LATE
    # student-facing files: nothing of the report or the similarity run, before or after
    pages = sorted(p.relative_to(feedback).as_posix() for p in feedback.rglob("*") if p.is_file())
    assert pages and all(p.endswith(f"/zz07/{NB[:-6]}.html") for p in pages), pages
    assert not any("instructor only" in (feedback / p).read_text().lower() for p in pages)
    before = _snapshot(feedback) | {"grades": hashlib.sha256((out / "grades.csv").read_bytes()).hexdigest()}
    assert _cli("report", "zz07", "--config", tmp_path / "nbgrader_config.py", "--out", out).returncode == 0
    assert _cli("similar", "zz07", "--config", tmp_path / "nbgrader_config.py", "--out", out).returncode == 0
    after = _snapshot(feedback) | {"grades": hashlib.sha256((out / "grades.csv").read_bytes()).hexdigest()}
    assert before == after
    assert (out / "similarity" / "index.html").exists() and not (feedback / "similarity").exists()


def test_moodle_round_trip_with_timestamps(tmp_path):
    """A Moodle 'Download all submissions' archive -> grade -> report --export moodle -> the grading worksheet
    that 'Upload grading worksheet' reads: 'Participant <id>' identifiers, Grade, Last modified (grade); the
    lateness from the archive's times."""
    NB = "zz07.ipynb"
    folder = synth.course(tmp_path, "zz07", _tiny)
    good = synth.submission(folder)[NB]
    z = _zip(tmp_path / "moodle.zip", {
        f"Jane Doe_1201_assignsubmission_file_/{NB}": good,
        f"John Smith_1202_assignsubmission_file_/{NB}": good,
    }, times={f"John Smith_1202_assignsubmission_file_/{NB}": (2026, 3, 3, 11, 0, 0)})   # 2 days and 1 hour late
    out, cfg = tmp_path / "out", tmp_path / "nbgrader_config.py"
    # a penalty without any due date (none given, none in the gradebook): graded all the same, with a warning
    proc = _cli("grade", "zz07", "--submissions", z, "--lms", "moodle", "--config", cfg, "--out", out,
                "--feedback-dir", tmp_path / "feedback", "--workers", "2", "--late-penalty", "10%/day")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WARNING: late penalty NOT applied" in proc.stderr and "needs a due date" in proc.stderr
    assert list(_rows(out / "grades.csv")[0]) == CSV_FIELDS and (out / "report.html").exists()
    # then the policy, with its due date, and the worksheet: without grading again
    proc = _cli("report", "zz07", "--submissions", z, "--lms", "moodle", "--config", cfg, "--out", out,
                "--export", "moodle", "--due", "2026-03-01T10:00", "--late-penalty", "10%/day")
    assert proc.returncode == 0, proc.stderr[-3000:]
    sheet = _rows(out / "moodle-grading-worksheet.csv")
    assert {"Identifier", "Grade", "Last modified (grade)"} <= set(sheet[0])     # what Moodle's importer needs
    got = {r["Identifier"]: r for r in sheet}
    assert set(got) == {"Participant 1201", "Participant 1202"}
    assert got["Participant 1201"]["Grade"] == "2" and got["Participant 1201"]["Full name"] == "Jane Doe"
    assert got["Participant 1202"]["Grade"] == "1.4"                               # 3 days begun: 30% of 2
    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert rows["1202"]["late_by"] == "2d 1h" and rows["1202"]["submitted_at"].startswith("2026-03-03 11:00")


# ------------------------------------------------------------------------------------------- bad input
def _one_line_error(proc):
    assert proc.returncode not in (0, None), proc.stdout
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def _in_process(capsys, *args):
    """The command's ``main`` in this process (as the CLI runs it, minus starting Python and importing torch)."""
    from autograder.__main__ import main

    capsys.readouterr()
    rc = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, rc, "", capsys.readouterr().err)


def test_bad_input_gives_one_line_and_a_non_zero_exit(tmp_path, capsys):
    """A few through a real process (nothing but one line on stderr, whatever Python prints), the rest through
    the same ``main`` in this process."""
    out = _synthetic_class(tmp_path)
    run = lambda *a: _in_process(capsys, *a)  # noqa: E731
    cfg = ["--config", tmp_path / "nope.py", "--course-root", tmp_path]
    assert "does not exist" in _one_line_error(_cli("report", "zz09", *cfg, "--out", tmp_path / "none"))
    assert "no graded run of ch99" in _one_line_error(run("report", "ch99", *cfg))          # unknown assignment
    (tmp_path / "empty").mkdir()
    assert "state.jsonl does not exist" in _one_line_error(run("report", "zz09", "--out", tmp_path / "empty"))
    assert "holds grades of zz09, not of zz10" in _one_line_error(run("report", "zz10", "--out", out))
    torn = tmp_path / "torn"
    shutil.copytree(out, torn)
    with open(torn / "state.jsonl", "ab") as f:
        f.write(b'{"student": "gus", "assign')
    assert "incomplete" in _one_line_error(_cli("report", "zz09", "--out", torn))
    with open(torn / "state.jsonl", "ab") as f:      # a later run ended the torn line and went on: fine
        f.write(b"\n" + json.dumps(_record("gus", "ok", {"t1": 1.0, "t2": 1.0})).encode() + b"\n")
    assert run("report", "zz09", "--out", torn).returncode == 0
    assert "incomplete line(s) of state.jsonl skipped" in (torn / "report.html").read_text()
    empty = tmp_path / "class0"
    empty.mkdir()
    (empty / "state.jsonl").write_text("")
    assert "no graded submission" in _one_line_error(run("report", "zz09", "--out", empty))
    for bad, words in [(["--late-penalty", "ten%/day"], "RATE/UNIT"), (["--due", "tomorrow"], "ISO 8601"),
                       (["--late-penalty", "10%/day"], "needs a due date"),
                       (["--export", "canvas"], "needs a class graded from a Canvas download")]:
        assert words in _one_line_error(run("report", "zz09", "--out", out, *bad)), bad
    assert not (out / "canvas-import.csv").exists()
    assert "RATE/UNIT" in _one_line_error(_cli("grade", "zz09", "--submissions", tmp_path, "--late-penalty", "x"))
    # similar
    assert "does not exist" in _one_line_error(_cli("similar", "ch02", "--submissions", tmp_path / "nowhere"))
    (tmp_path / "subs" / "ann" / "ch99").mkdir(parents=True)
    assert "unknown assignment 'ch99'" in _one_line_error(run("similar", "ch99", "--submissions", tmp_path / "subs",
                                                              "--out", tmp_path / "o"))
    assert "nothing to compare" in _one_line_error(run("similar", "ch02", "--submissions", tmp_path / "subs",
                                                       "--out", tmp_path / "o"))
