"""LMS downloads by name (Canvas, Moodle, nbgrader's zip_collect), never merging or renaming students, refusing
unsafe names and links with a row that says why; spreadsheet-safe grades.csv; and the sandbox importing what the
grader resolved. The formats follow the LMSs' own code: Canvas's ``ContentZipper`` (``<name>[_LATE]_<user
id>_<file id>_<file>``, ``-N`` before the extension for a re-upload), Moodle's ``download_submissions``
(``<Full Name>_<participant id>_assignsubmission_file_/<file>``, ``_`` in names replaced by spaces)."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import zipfile

import pytest

import autograder_synth as synth
import nbgrader_cli
from autograder.records import spreadsheet_safe, write_csv
from autograder.submissions import CollectionError, collect, valid_student_id

NB = "zz06.ipynb"
NOTEBOOKS = [NB]


def _zip(path, members, links=(), times=None):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(times or {}).get(name, (2024, 1, 2, 3, 4, 5)))
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
        for name, target in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            zf.writestr(info, target)
    return path


# ------------------------------------------------------------------------------------------- nbgrader names
def test_nbgrader_ids_with_underscores_are_never_merged(tmp_path):
    ids = [f"a{i:02d}_x" for i in range(37)] + ["bit_did_dle", "b", "x"]
    z = _zip(tmp_path / "lms.zip", {f"zz06_{s}_attempt_2024-01-30-15-00-00_{NB}": s.encode() for s in ids})
    got = collect(z, "zz06")
    assert sorted(got) == sorted(ids)          # 40 students in, 40 out, named as in the archive
    assert all(got[s].files == {NB: s.encode()} for s in ids)


def test_a_pattern_that_cuts_ids_short_is_refused(tmp_path):
    z = _zip(tmp_path / "lms.zip", {f"zz06_a01_x_attempt_2024-01-30-15-00-00_{NB}": b"1",
                                    f"zz06_a02_x_attempt_2024-01-30-15-00-00_{NB}": b"2"})
    with pytest.raises(CollectionError, match="same student id 'x'.*a01_x.*a02_x"):
        collect(z, "zz06", r".*_(?P<student_id>[^_]+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>.+)")


def test_resubmissions_newest_wins_and_the_log_says_so(tmp_path, caplog):
    z = _zip(tmp_path / "lms.zip", {f"zz06_bob_attempt_2024-01-30-15-00-00_{NB}": b"old",
                                    f"zz06_bob_attempt_2024-01-31-15-00-00_{NB}": b"new"})
    with caplog.at_level("INFO", logger="autograder"):
        got = collect(z, "zz06")
    assert got["bob"].files == {NB: b"new"}
    assert "2024-01-31 15:00:00" in caplog.text and "2024-01-30 15:00:00" in caplog.text and "newer" in caplog.text


def test_unsafe_names_links_and_bad_ids_get_a_row(tmp_path):
    z = _zip(tmp_path / "lms.zip", {
        f"../../zz06_evil_attempt_2024-01-30-15-00-00_{NB}": b"x",          # zip slip: names a student
        f"/abs/root_attempt_2024-01-30-15-00-00_{NB}": b"x",                # absolute, names no one
        f"zz06_.._attempt_2024-01-30-15-00-00_{NB}": b"x",                  # '..' as a student id
        f"zz06_ok_attempt_2024-01-30-15-00-00_{NB}": b"fine",
        "notes.txt": b"not a student",
    }, links=[(f"zz06_linky_attempt_2024-01-30-15-00-00_{NB}", "/etc/passwd")])
    got = collect(z, "zz06")
    assert got["ok"].files == {NB: b"fine"} and got["ok"].invalid is None
    assert got["evil"].invalid and "unsafe" in got["evil"].invalid and not got["evil"].files
    assert got["linky"].invalid and "symbolic link" in got["linky"].invalid
    assert got[".."].invalid and "not a valid student id" in got[".."].invalid and not got[".."].identified
    absolute = [s for s in got.values() if s.student.startswith("/abs")]
    assert len(absolute) == 1 and "absolute" in absolute[0].invalid and not absolute[0].identified
    assert "notes.txt" not in got


def test_folder_symlinked_student_gets_a_row(tmp_path):
    sub = tmp_path / "submitted"
    (sub / "alice" / "zz06").mkdir(parents=True)
    (sub / "alice" / "zz06" / NB).write_bytes(b"{}")
    os.symlink(sub / "alice", sub / "eve")
    (sub / "mallory" / "zz06").mkdir(parents=True)
    os.symlink("/etc/passwd", sub / "mallory" / "zz06" / NB)
    got = collect(tmp_path, "zz06")
    assert set(got) == {"alice", "eve", "mallory"}
    assert "symbolic link" in got["eve"].invalid
    assert got["mallory"].invalid and "symbolic link" in got["mallory"].invalid


# ------------------------------------------------------------------------------------------- Canvas, Moodle
def test_canvas_download_submissions(tmp_path, caplog):
    z = _zip(tmp_path / "submissions.zip", {
        f"doejane_1234_987_{NB}": b"jane",
        f"smithjohn_LATE_5678_988_{NB}": b"john late",
        "o_neillmary_42_989_zz06-1.ipynb": b"mary second upload",      # a name with '_', a re-upload
        f"o_neillmary_42_990_{NB}": b"mary first upload",
        "doejane_1234_991_report.pdf": b"%PDF",
        f"anon_Xy12Z_992_{NB}": b"anonymous",
        f"LATE_anon_Ab34C_993_{NB}": b"anonymous late",
        f"doejane_77_994_{NB}": b"another Jane Doe",                     # same name, another user
    })
    with caplog.at_level("INFO", logger="autograder"):
        got = collect(z, "zz06", lms="canvas", notebooks=NOTEBOOKS)
    assert set(got) == {"1234", "5678", "42", "anon_Xy12Z", "anon_Ab34C", "77"}
    assert got["1234"].files == {NB: b"jane"} and got["77"].files == {NB: b"another Jane Doe"}
    assert got["5678"].files == {NB: b"john late"} and "late" in got["5678"].display
    assert got["42"].files == {NB: b"mary second upload"}   # upload #2 (-1) over #1, by Canvas's numbering
    assert "upload #2" in caplog.text
    assert any("report.pdf ignored" in p for p in got["1234"].problems)


def test_moodle_download_all_submissions(tmp_path):
    z = _zip(tmp_path / "moodle.zip", {
        f"Jane Doe_1201_assignsubmission_file_/{NB}": b"jane",
        f"John Smith_1202_assignsubmission_file_/sub/{NB}": b"john",
        "John Smith_1202_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
        f"Mary O Neill_1203_assignsubmission_file_{NB}": b"mary flat",   # the flat layout of older Moodles
        f"Participant_1204_assignsubmission_file_/{NB}": b"blind",
        f"Jane Doe_1205_assignsubmission_file_/{NB}": b"the other Jane",
    })
    got = collect(z, "zz06", lms="moodle", notebooks=NOTEBOOKS)
    assert set(got) == {"1201", "1202", "1203", "1204", "1205"}
    assert got["1202"].files == {NB: b"john"} and got["1203"].files == {NB: b"mary flat"}
    assert got["1201"].files == {NB: b"jane"} and got["1205"].files == {NB: b"the other Jane"}


def test_two_copies_without_a_newer_one_are_refused(tmp_path):
    z = _zip(tmp_path / "moodle.zip", {f"Jane Doe_1201_assignsubmission_file_/a/{NB}": b"1",
                                       f"Jane Doe_1201_assignsubmission_file_/b/{NB}": b"2"})
    got = collect(z, "zz06", lms="moodle", notebooks=NOTEBOOKS)
    assert got["1201"].invalid and "nothing tells which is newer" in got["1201"].invalid and not got["1201"].files
    z = _zip(tmp_path / "moodle2.zip", {f"Jane Doe_1201_assignsubmission_file_/a/{NB}": b"1",
                                        f"Jane Doe_1201_assignsubmission_file_/b/{NB}": b"2"},
             times={f"Jane Doe_1201_assignsubmission_file_/b/{NB}": (2024, 5, 1, 0, 0, 0)})
    got = collect(z, "zz06", lms="moodle", notebooks=NOTEBOOKS)
    assert got["1201"].files == {NB: b"2"} and got["1201"].invalid is None


# ------------------------------------------------------------------------------------------- grades.csv
def test_csv_cells_cannot_be_formulas(tmp_path):
    rows = [{"student": s, "assignment": "a", "score": 1.0, "max_score": 2.0, "status": "ok", "reason": s}
            for s in ["=1+2", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "a=b"]]
    write_csv(tmp_path / "g.csv", rows)
    with open(tmp_path / "g.csv", newline="") as f:
        read = list(csv.DictReader(f))
    for r in read:
        assert not r["student"].startswith(("=", "+", "-", "@", "\t", "\r")), r
        assert not r["reason"].startswith(("=", "+", "-", "@", "\t", "\r")), r
    assert {r["student"] for r in read} >= {"'=1+2", "'+cmd", "'-2+3", "'@SUM(A1)", "plain", "a=b"}
    assert spreadsheet_safe("1.5") == "1.5" and spreadsheet_safe("-x") == "'-x"


# ------------------------------------------------------------------------------------------- the whole command
def _tiny(nb):
    nb.readonly("zz06_setup", "import math")
    nb.solution("zz06_f", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
    nb.test("zz06_test_f", 1, "assert f() == 1\n")


def test_every_student_of_an_archive_has_a_row(tmp_path):
    """Through the real command: honest and refused members of one archive, each in grades.csv (refused ones
    never in the gradebook), with a formula-looking id neutralised."""
    folder = synth.course(tmp_path, "zz06", _tiny)
    good = synth.submission(folder)[NB]
    z = _zip(tmp_path / "lms.zip", {
        f"zz06_a01_x_attempt_2024-01-30-15-00-00_{NB}": good,
        f"zz06_a02_x_attempt_2024-01-30-15-00-00_{NB}": good,
        f"zz06_=1+2_attempt_2024-01-30-15-00-00_{NB}": good,
        f"../../zz06_evil_attempt_2024-01-30-15-00-00_{NB}": good,
        f"zz06_.._attempt_2024-01-30-15-00-00_{NB}": good,
    }, links=[(f"zz06_linky_attempt_2024-01-30-15-00-00_{NB}", "/etc/passwd")])
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "zz06", "--submissions", str(z), "--config",
                           str(tmp_path / "nbgrader_config.py"), "--out", str(tmp_path / "out"), "--workers", "2"],
                          cwd=nbgrader_cli.REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {r["student"]: r for r in csv.DictReader(open(tmp_path / "out" / "grades.csv", newline=""))}
    assert (rows["a01_x"]["score"], rows["a01_x"]["status"]) == ("1", "ok")
    assert (rows["a02_x"]["score"], rows["a02_x"]["status"]) == ("1", "ok")
    assert (rows["'=1+2"]["score"], rows["'=1+2"]["status"]) == ("1", "ok")
    assert rows["evil"]["status"] == "invalid" and "unsafe" in rows["evil"]["reason"]
    assert rows["linky"]["status"] == "invalid" and "symbolic link" in rows["linky"]["reason"]
    assert rows[".."]["status"] == "invalid"
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        ids = {s.id for s in gb.students}
    assert ids == {"a01_x", "a02_x", "=1+2", "evil", "linky"}
    assert all(valid_student_id(s) for s in ids)


# ------------------------------------------------------------------------------------------- the sandbox's imports
def test_sandbox_refuses_a_course_package_that_differs_from_the_graders(tmp_path):
    """As in a second checkout whose environment imports the first checkout's package: the interpreter that
    runs submissions would import another copy of seqcourse than the grader. Same files: mounted; different:
    a clear error naming both."""
    import shutil

    from autograder.jail import PackageMismatch
    from autograder.sandbox import Sandbox

    other = tmp_path / "other-checkout"
    shutil.copytree(nbgrader_cli.REPO / "seqcourse", other / "seqcourse", ignore=shutil.ignore_patterns("__pycache__"))
    box = Sandbox("auto", cache_dir=tmp_path / "cache", env={"PYTHONPATH": str(other)})
    assert box.jail.package_paths["seqcourse"] == [str(other / "seqcourse")]   # what it will import is mounted
    (other / "seqcourse" / "checks.py").write_text("# another version\n")
    with pytest.raises(PackageMismatch) as e:
        Sandbox("auto", cache_dir=tmp_path / "cache", env={"PYTHONPATH": str(other)})
    assert str(other / "seqcourse") in str(e.value) and str(nbgrader_cli.REPO / "seqcourse") in str(e.value)

