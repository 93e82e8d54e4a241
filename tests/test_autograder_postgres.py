"""The autograder with a PostgreSQL gradebook (nbgrader's ``db_url``), against a real server started here on
loopback: the PostgreSQL server binaries (Debian: ``apt-get install postgresql``; ``.ci/run`` installs them)
and psycopg2 are needed, else the test is skipped and says why."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import harness
import nbgrader_cli
from autograder import grade_command
from autograder.__main__ import options as cli_options

NB = "ch01_sequence_configurations.ipynb"


def _pg_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(cands[-1]).parent if cands else None


def _skip_reason() -> str | None:
    if not (nbgrader_cli.SOLUTIONS / "ch01" / NB).exists():
        return "ch01 is not in the course"
    if _pg_bin() is None:
        return "PostgreSQL server binaries not found (Debian: apt-get install postgresql)"
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        return "psycopg2 is not installed (pip install psycopg2-binary)"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


@pytest.fixture(scope="module")
def postgres():
    """A throw-away PostgreSQL cluster on 127.0.0.1 (as the 'postgres' user when we are root)."""
    bindir = _pg_bin()
    base = Path(tempfile.mkdtemp(prefix="autograder-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    kwargs = {}
    if os.getuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pw = pwd.getpwnam("nobody")
        kwargs = {"user": pw.pw_uid, "group": pw.pw_gid}
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chown(sock, pw.pw_uid, pw.pw_gid)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
    subprocess.run([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "grader", "-E", "UTF8"],
                   check=True, capture_output=True, env=env, cwd=base, **kwargs)
    subprocess.run([str(bindir / "pg_ctl"), "-D", str(data), "-w", "-t", "60", "-l", str(base / "log"),
                    "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {sock} -c fsync=off", "start"],
                   check=True, capture_output=True, env=env, cwd=base, **kwargs)
    import psycopg2

    for _ in range(50):
        try:
            conn = psycopg2.connect(host="127.0.0.1", port=port, user="grader", dbname="postgres")
            break
        except psycopg2.OperationalError:
            time.sleep(0.2)
    conn.autocommit = True
    conn.cursor().execute("CREATE DATABASE gradebook")
    conn.close()
    yield f"postgresql+psycopg2://grader@127.0.0.1:{port}/gradebook"
    subprocess.run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True,
                   cwd=base, **kwargs)
    shutil.rmtree(base, ignore_errors=True)


def test_postgres_gradebook(postgres, tmp_path):
    root = tmp_path / "course"
    course = nbgrader_cli.ThrowawayCourse.create(root, ["ch01"])
    with open(root / "nbgrader_config.py", "a") as f:
        f.write(f"c.CourseDirectory.db_url = {postgres!r}\n")
    release = course.generate("ch01")[NB]        # nbgrader itself fills the PostgreSQL gradebook
    source = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / "ch01" / NB)
    m = {x.id: x for x in harness.load_mutants("ch01")}["m2o_mean_pool"]
    wrong = {m.cell: m.apply(nbgrader_cli.student_code(next(c.source for c in source.cells
                                                      if nbgrader_cli.nbgrader_meta(c).get("grade_id") == m.cell)))}
    course.submit("ada", "ch01", {NB: nbgrader_cli.submission(release, source)})
    course.submit("bob", "ch01", {NB: nbgrader_cli.submission(release, source, wrong)})
    (root / "submitted" / "eve" / "ch01").mkdir(parents=True)
    (root / "submitted" / "eve" / "ch01" / NB).write_text("{not json")
    args = ["grade", "ch01", "--submissions", str(root / "submitted"), "--config", str(root / "nbgrader_config.py"),
            "--db-url", postgres, "--workers", "2", "--out", str(tmp_path / "out"),
            "--cache-dir", str(nbgrader_cli.REPO / ".cache" / "autograder-tests")]
    summary = grade_command.run(cli_options(args))
    rows = {r["student"]: r for r in summary.rows}
    assert {s: (r["score"], r["status"]) for s, r in rows.items()} == {
        "ada": (15.0, "ok"), "bob": (13.0, "ok"), "eve": (0.0, "invalid")}
    from nbgrader.api import Gradebook

    with Gradebook(postgres) as gb:
        scores = {s.student.id: s.score for s in gb.find_assignment("ch01").submissions}
        flagged = {s.student.id: any(n.flagged for n in s.notebooks) for s in gb.find_assignment("ch01").submissions}
    assert scores == {"ada": 15.0, "bob": 13.0, "eve": 0.0}
    assert flagged == {"ada": False, "bob": False, "eve": True}
    again = grade_command.run(cli_options(args))
    assert (again.graded, again.skipped) == (0, 3)
