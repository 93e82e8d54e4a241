"""The distributed mode (Celery + Redis + PostgreSQL) survives its faults, on loopback with a real Redis and a
real PostgreSQL started here: 3 workers; one SIGKILLed in the middle of a submission (its task comes back);
the broker stopped for a few seconds; the submitting command killed midway and started again. Every student
ends with exactly one grade, equal to a local run's. Needs redis-server, the PostgreSQL server binaries,
celery and psycopg2 (``.ci/run`` installs them), else it is skipped and says why."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import harness
import nbgrader_cli
from autograder import grade_command
from autograder.__main__ import options as cli_options
from test_autograder_postgres import _skip_reason as _pg_skip_reason
from test_autograder_postgres import postgres  # noqa: F401 - the fixture

NB = "ch01_sequence_configurations.ipynb"
VISIBILITY = 20   # seconds before Redis hands out again the task of a killed worker


def _skip_reason() -> str | None:
    why = _pg_skip_reason()
    if why:
        return why
    if not shutil.which("redis-server"):
        return "redis-server not found (Debian: apt-get install redis-server)"
    try:
        import celery  # noqa: F401
        import redis  # noqa: F401
    except ImportError:
        return "celery[redis] is not installed (pip install -r requirements.txt)"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


class Redis:
    """A throw-away redis-server on 127.0.0.1 that persists every write (AOF), so it can be stopped and
    started again like a real broker restart."""

    def __init__(self, folder: Path):
        self.folder = folder
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "no"],
            stdout=open(self.folder / "redis.log", "ab"), stderr=subprocess.STDOUT)
        import redis

        for _ in range(100):
            try:
                redis.Redis(port=self.port, socket_connect_timeout=1).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start: " + (self.folder / "redis.log").read_text()[-500:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _sql(url: str, query: str, *args) -> list:
    import psycopg2

    dsn = url.replace("postgresql+psycopg2://", "postgresql://")
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(query, args)
        return cur.fetchall() if cur.description else []


def _wait(cond, timeout: float, what: str, step: float = 0.2):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def _state_lines(path: Path) -> list:
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


@pytest.fixture(scope="module")
def faults(postgres):  # noqa: F811 - the imported fixture
    base = Path(tempfile.mkdtemp(prefix="autograder-dist-"))
    timeline = []
    t_start = time.monotonic()

    def note(what):
        timeline.append(f"{time.monotonic() - t_start:6.1f} s  {what}")

    root = base / "course"
    course = nbgrader_cli.ThrowawayCourse.create(root, ["ch01"])
    with open(root / "nbgrader_config.py", "a") as f:
        f.write(f"c.CourseDirectory.db_url = {postgres!r}\n")
    release = course.generate("ch01")[NB]            # the PostgreSQL gradebook
    local_db = f"sqlite:///{base / 'local.db'}"
    course.nbgrader("generate_assignment", "ch01", "--force", f"--CourseDirectory.db_url={local_db}")
    source = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / "ch01" / NB)
    sol = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source) for c in source.cells
           if nbgrader_cli.is_solution_cell(c)}
    mutants = harness.load_mutants("ch01")
    import nbformat

    def nb(over=None, slow=0.0):
        n = nbgrader_cli.submission(release, source, over or {})
        n.cells = [c for c in n.cells if c.cell_type != "code" or "nbgrader" in c.metadata]  # no demo training
        if slow:
            n.cells.insert(1, nbformat.v4.new_code_cell(f"import time\ntime.sleep({slow})"))
        return n

    students = {"ok0": nb(), "ok1": nb()}            # twins: identical files (one grade each)
    students["ok2"] = nb()
    students["ok2"].cells.append(nbformat.v4.new_code_cell("extra = 1"))
    for i, m in enumerate(mutants[:3]):
        students[f"wrong{i}"] = nb({m.cell: m.apply(sol[m.cell])})
    students["slow"] = nb(slow=10.0)                # killed mid-submission: sleeps in its second cell
    m = mutants[3 % len(mutants)]
    students["slow-wrong"] = nb({m.cell: m.apply(sol[m.cell])}, slow=4.0)
    for s, n in students.items():
        course.submit(s, "ch01", {NB: n})
    (root / "submitted" / "broken" / "ch01").mkdir(parents=True)
    (root / "submitted" / "broken" / "ch01" / NB).write_text("{not json")
    cache = base / "cache"
    env = dict(os.environ, PYTHONPATH=str(nbgrader_cli.REPO), OMP_NUM_THREADS="1")

    # the local run, the reference for every grade (also fills the reference-run cache)
    note("local run")
    local = grade_command.run(cli_options(["grade", "ch01", "--submissions", str(root / "submitted"), "--config",
                                   str(root / "nbgrader_config.py"), "--db-url", local_db, "--workers", "2",
                                   "--out", str(base / "local-out"), "--feedback-dir", str(base / "local-fb"),
                                   "--cache-dir", str(cache)]))
    local_records = {r["student"]: r for r in _state_lines(base / "local-out" / "state.jsonl")}

    (base / "redis").mkdir()
    broker = Redis(base / "redis")
    broker.start()
    note(f"redis on {broker.port}")
    workers, logs = {}, {}

    def start_worker(name):
        logs[name] = open(base / f"{name}.log", "ab")
        workers[name] = subprocess.Popen(
            [sys.executable, "-m", "autograder", "worker", "--queue", broker.url, "--store-url", postgres,
             "--concurrency", "1", "--name", name, "--cache-dir", str(base / name),
             "--visibility-timeout", str(VISIBILITY)],
            cwd=nbgrader_cli.REPO, env=env, stdout=logs[name], stderr=subprocess.STDOUT, start_new_session=True)

    for i in range(3):
        start_worker(f"w{i}")
    out = base / "out"
    grade_args = ["grade", "ch01", "--submissions", str(root / "submitted"), "--config",
                  str(root / "nbgrader_config.py"), "--db-url", postgres, "--queue", broker.url,
                  "--out", str(out), "--cache-dir", str(cache)]

    def submitter(log_name):
        return subprocess.Popen([sys.executable, "-m", "autograder", *grade_args], cwd=nbgrader_cli.REPO, env=env,
                                stdout=open(base / log_name, "ab"), stderr=subprocess.STDOUT, start_new_session=True)

    first = submitter("submit1.log")
    note("submitter started")
    state = out / "state.jsonl"
    result = {"base": base, "local": local, "local_records": local_records, "out": out, "postgres": postgres,
              "students": sorted(list(students) + ["broken"]), "timeline": timeline, "workers": workers}
    try:
        # 1. SIGKILL the worker that is in the middle of the slow submission
        def slow_attempt():
            rows = _sql(postgres, "SELECT a.worker FROM autograder_attempts a JOIN autograder_submissions s "
                                  "ON s.key = a.key WHERE s.student = 'slow'") \
                if _sql(postgres, "SELECT to_regclass('autograder_attempts')")[0][0] else []
            return rows[0][0] if rows else None

        victim = _wait(slow_attempt, 600, "a worker to start grading 'slow'")
        time.sleep(2.0)
        workers[victim].send_signal(signal.SIGKILL)
        workers[victim].wait(timeout=30)
        note(f"SIGKILLed {victim} while it graded 'slow'")
        result["victim"] = victim
        # 2. the broker goes away for a few seconds (its data persisted), and comes back
        broker.stop()
        note("redis stopped")
        time.sleep(4)
        broker.start()
        note("redis started again")
        # 3. the submitting command killed midway, then started again
        _wait(lambda: len(_state_lines(state)) >= 3 or first.poll() is not None, 600, "3 recorded grades")
        recorded_before_kill = len(_state_lines(state))
        first_finished = first.poll() is not None
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        note(f"submitter SIGKILLed after {recorded_before_kill} recorded grades (finished already: {first_finished})")
        result["recorded_before_kill"] = recorded_before_kill
        result["first_finished"] = first_finished
        second = submitter("submit2.log")
        rc = second.wait(timeout=900)
        note(f"second submitter finished, rc {rc}")
        result["second_rc"] = rc
        result["records"] = _state_lines(state)
        result["rows"] = {r["student"]: r for r in
                          __import__("csv").DictReader(open(out / "grades.csv", newline=""))}
        result["attempts"] = _sql(postgres, "SELECT s.student, a.worker FROM autograder_attempts a JOIN "
                                            "autograder_submissions s ON s.key = a.key ORDER BY a.id")
        result["results"] = _sql(postgres, "SELECT student, worker FROM autograder_results")
        result["logs"] = {p.name: p.read_text(errors="replace")[-3000:] for p in base.glob("*.log")}
        yield result
    finally:
        for p in list(workers.values()) + [first]:
            if p.poll() is None:
                p.terminate()
        for p in workers.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        broker.stop()
        print("\n".join(timeline))
        shutil.rmtree(base, ignore_errors=True)


def _explain(faults) -> str:
    return "\n".join(faults["timeline"]) + "\n" + "\n".join(f"--- {k}\n{v}" for k, v in faults["logs"].items())


def test_faults_happened_as_planned(faults):
    assert faults["second_rc"] == 0, _explain(faults)
    assert not faults["first_finished"], "the first submitter finished before it could be killed\n" + _explain(faults)
    assert 3 <= faults["recorded_before_kill"] < len(faults["students"]), _explain(faults)


def test_every_student_exactly_one_grade_equal_to_local(faults):
    records = faults["records"]
    per_student = {}
    for r in records:
        per_student.setdefault(r["student"], []).append(r)
    assert sorted(per_student) == faults["students"]
    twice = {s: len(v) for s, v in per_student.items() if len(v) != 1}
    assert not twice, f"recorded more than once: {twice}\n" + _explain(faults)
    local = faults["local_records"]
    for s, (rec,) in per_student.items():
        want = local[s]
        assert (rec["score"], rec["status"], rec["hash"]) == (want["score"], want["status"], want["hash"]), s
        got_tests = {n: {g: t["score"] for g, t in nb["tests"].items()} for n, nb in rec["notebooks"].items()}
        want_tests = {n: {g: t["score"] for g, t in nb["tests"].items()} for n, nb in want["notebooks"].items()}
        assert got_tests == want_tests, s
    rows = faults["rows"]
    assert {s: (float(r["score"]), r["status"]) for s, r in rows.items()} == \
        {s: (r["score"], r["status"]) for s, r in local.items()}
    from nbgrader.api import Gradebook

    with Gradebook(faults["postgres"]) as gb:
        subs = gb.find_assignment("ch01").submissions
        scores = {x.student.id: x.score for x in subs}
    assert scores == {s: r["score"] for s, r in local.items()}


def test_killed_task_redelivered_and_nothing_graded_twice(faults):
    local = faults["local_records"]
    assert local["ok0"]["hash"] == local["ok1"]["hash"] != local["ok2"]["hash"]
    attempts = {}
    for student, worker in faults["attempts"]:
        attempts.setdefault(student, []).append(worker)
    victim = faults["victim"]
    assert attempts["slow"][0] == victim and len(attempts["slow"]) == 2 and attempts["slow"][1] != victim, attempts
    others = {s: w for s, w in attempts.items() if s != "slow" and len(w) != 1}
    assert not others, f"graded more than once: {others}\n" + _explain(faults)
    results = {}
    for student, worker in faults["results"]:
        results.setdefault(student, []).append(worker)
    assert all(len(w) == 1 for w in results.values()) and sorted(results) == faults["students"]
    assert results["slow"][0] != victim
    assert len({w for ws in results.values() for w in ws}) >= 2, "the work was not shared between workers"
