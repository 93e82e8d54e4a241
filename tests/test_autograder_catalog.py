"""The autograder against a catalog of bad submissions, graded in ONE batch beside honest ones.

Every submission is made here, programmatically, from the real exercise (the release notebook that
``nbgrader generate_assignment`` makes of ``solutions/ch01``) and the reference solution's code. Each has an
expected score and status. The batch is first started as the real command and killed (SIGKILL) after a few
submissions are graded, then resumed: nothing graded before the kill may be graded again, and the final
results must be exactly the expected ones. Afterwards: the gradebook matches grades.csv, no process of any
submission survives, the gradebook and the course folder were not touched by student code, feedback pages
contain no hidden test code, and a re-run grades only what changed.
"""
from __future__ import annotations

import copy
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

import harness
import nbgrader_cli
from autograder import grade_command
from autograder.__main__ import options as cli_options
from autograder.jail import bwrap_works

ASSIGNMENT = "ch01"
NB = "ch01_sequence_configurations.ipynb"
FULL = 15.0
MARKER = "autograder-catalog-background-marker"
BWRAP_OK, BWRAP_INFO = bwrap_works()
LIMITS = dict(cell_seconds=20.0, notebook_seconds=150.0, memory_bytes=2 << 30, nproc=48)

pytestmark = pytest.mark.skipif(not (nbgrader_cli.SOLUTIONS / ASSIGNMENT / NB).exists(), reason="ch01 is not in the course")


@dataclass
class Case:
    student: str
    score: float
    status: str
    why: str
    reason: str | None = None       # a substring the reason column must contain
    sandbox: bool = False            # the expectation holds only inside bubblewrap
    instructor_only: bool = False    # the reason comes after a hidden part: only the instructor's record
                                     # (state.jsonl) may hold it; the student-visible reason says less


# ------------------------------------------------------------------------------------------- notebooks
class Maker:
    def __init__(self, release, source):
        self.release, self.source = release, source
        self.sol = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
                    for c in source.cells if nbgrader_cli.is_solution_cell(c)}
        self.stub = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: c.source for c in release.cells
                     if nbgrader_cli.is_solution_cell(c)}
        self.mutants = {m.id: m for m in harness.load_mutants(ASSIGNMENT)}

    def nb(self, overrides=None, *, demo=False):
        """The release notebook with every answer filled in (reference code unless overridden); the ungraded
        demo training cell is deleted unless ``demo`` (students may delete it; it saves a few seconds)."""
        nb = nbgrader_cli.submission(self.release, self.source, overrides or {})
        if not demo:
            nb.cells = [c for c in nb.cells if c.cell_type != "code" or "nbgrader" in c.metadata]
        return nb

    def mutant(self, *ids) -> dict:
        out = {}
        for i in ids:
            m = self.mutants[i]
            out[m.cell] = m.apply(self.sol[m.cell])
        return out

    def plus(self, gid, code, *, before=False, base=None) -> dict:
        body = (base or self.sol)[gid]
        return {gid: (code + "\n" + body) if before else (body + "\n" + code)}

    @staticmethod
    def dump(nb) -> bytes:
        return nbformat.writes(nb).encode()


def _wrong_m2o() -> str:
    return ("class ManyToOne(nn.Module):\n    def __init__(self, input_size, hidden_size, num_classes):\n"
            "        super().__init__()\n        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n"
            "        self.head = nn.Linear(hidden_size, num_classes)\n    def forward(self, x):\n"
            "        outputs, _ = self.rnn(x)\n        return self.head(outputs[:, 0])\n")


def _indent(code: str, n: int) -> str:
    return "\n".join(" " * n + line for line in code.splitlines())


def build(mk: Maker, course_root: Path, port: int) -> tuple[dict, list]:
    """``({student: {file name: bytes}}, [Case])``."""
    subs: dict = {}
    cases: list = []

    def add(student, files, score, status, why, reason=None, sandbox=False, instructor_only=False):
        subs[student] = files
        cases.append(Case(student, score, status, why, reason, sandbox, instructor_only))

    sol_nb_bytes = mk.dump(mk.nb())
    m2o_sol = mk.sol["ch01_many_to_one"]

    # ---- honest submissions
    add("honest-exact", {NB: mk.dump(mk.nb(demo=True))}, FULL, "ok", "the reference solution", reason="")
    add("honest-twin", {NB: mk.dump(mk.nb(demo=True))}, FULL, "ok", "the same notebook again: the same score",
        reason="")
    variant = {
        "ch01_many_to_one": ("class ManyToOne(nn.Module):\n    def __init__(self, input_size, hidden_size, num_classes):\n"
                             "        super().__init__()\n        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n"
                             "        self.head = nn.Linear(hidden_size, num_classes)\n"
                             "    def forward(self, x):\n        _, h_n = self.rnn(x)\n        return self.head(h_n[-1])\n"),
        "ch01_fit": ("def fit(model, x, y, steps, batch_size=64, lr=1e-2, seed=0):\n"
                     "    opt = torch.optim.Adam(model.parameters(), lr=lr)\n"
                     "    gen = torch.Generator().manual_seed(seed)\n    out = []\n    while len(out) < steps:\n"
                     "        i = torch.randint(0, len(x), (batch_size,), generator=gen)\n"
                     "        out.append(train_step(model, opt, x[i], y[i]))\n    return out\n"),
    }
    add("honest-variant", {NB: mk.dump(mk.nb(variant, demo=True))}, FULL, "ok",
        "correct but different code (the last state from h_n, a while loop in fit)", reason="")
    add("honest-partial-1", {NB: mk.dump(mk.nb(mk.mutant("m2o_mean_pool")))}, 13.0, "ok", "one wrong part",
        reason="failed: ch01_test_many_to_one")
    add("honest-partial-2", {NB: mk.dump(mk.nb(mk.mutant("sync_shifted", "fit_same_batch")))}, 11.0, "ok",
        "two wrong parts", reason="ch01_test_fit")
    add("honest-blank", {NB: mk.dump(mk.release)}, 0.0, "ok", "the untouched exercise")

    # ---- runaway code
    add("infinite-loop", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_sync", "while True:\n    pass")))}, FULL,
        "timeout", "an endless loop after a correct answer: interrupted, the rest still runs", reason="interrupted", instructor_only=True)
    swallow = "while True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        pass"
    add("swallow-interrupt", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_sync", swallow)))}, 2.0, "timeout",
        "an endless loop that ignores interrupts: killed; only the test before it counts", reason="did not stop", instructor_only=True)
    bomb = ("def _bomb():\n    hog = []\n    while True:\n        hog.append(b'x' * (64 << 20))\n_bomb()")
    add("memory-bomb", {NB: mk.dump(mk.nb(mk.plus("ch01_one_to_many", bomb)))}, FULL, "ok",
        "allocates until the memory limit: MemoryError in that cell only", reason="MemoryError", instructor_only=True)
    fork = "import os\nwhile True:\n    os.fork()"
    add("fork-bomb", {NB: mk.dump(mk.nb(mk.plus("ch01_one_to_many", fork)))}, FULL, "ok",
        "forks until the process limit: that cell fails, nothing else", reason="BlockingIOError", instructor_only=True)
    add("os-exit", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_async", "import os\nos._exit(0)")))}, 6.0,
        "crashed", "os._exit in part 4: the tests before it count", reason="exited", instructor_only=True)
    add("sys-exit", {NB: mk.dump(mk.nb(mk.plus("ch01_fit", "import sys\nsys.exit(0)", before=True)))}, 13.0, "ok",
        "sys.exit before fit is defined: that cell stops, the notebook goes on (part 7 trains with the reference "
        "fit, so only part 6 is lost)", reason="SystemExit", instructor_only=True)
    add("killed-kernel", {NB: mk.dump(mk.nb(mk.plus("ch01_fit", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")))},
        11.0, "crashed", "the process kills itself in part 6", reason="signal 9", instructor_only=True)

    # ---- malformed, missing, renamed
    add("truncated-json", {NB: sol_nb_bytes[: len(sol_nb_bytes) // 2]}, 0.0, "invalid", "half a file",
        reason="not valid notebook JSON")
    i = sol_nb_bytes.index(b"Exercise 1")
    add("invalid-utf8", {NB: sol_nb_bytes[:i] + b"\xff\xfe" + sol_nb_bytes[i + 2:]}, 0.0, "invalid",
        "a byte sequence that is not UTF-8", reason="not valid UTF-8")
    add("missing-notebook", {"notes.txt": b"I forgot the notebook"}, 0.0, "missing", "no notebook in the folder",
        reason="not submitted")
    add("renamed-notebook", {"ch01 copy (1).ipynb": sol_nb_bytes}, FULL, "ok", "the right notebook, another name",
        reason="renamed")

    # ---- tampering with the notebook's structure and metadata
    nb = mk.nb()
    nb.cells = [c for c in nb.cells if not nbgrader_cli.is_autograded_test(c)]
    add("deleted-tests", {NB: mk.dump(nb)}, FULL, "ok", "every test cell deleted: restored", reason="was missing")
    nb = mk.nb(mk.mutant("m2o_first_step"))
    for c in nb.cells:
        if nbgrader_cli.is_autograded_test(c):
            c.source = 'print("passed")'
    add("edited-tests", {NB: mk.dump(nb)}, 11.0, "ok", "tests replaced by print('passed'), wrong part 1",
        reason="was edited")
    nb = mk.nb()
    cells = []
    for c in nb.cells:
        cells.append(c)
        if nbgrader_cli.is_autograded_test(c):
            dup = copy.deepcopy(c)
            dup["id"] = c["id"] + "-copy"
            cells.append(dup)
    nb.cells = cells
    add("duplicated-tests", {NB: mk.dump(nb)}, FULL, "ok", "every test cell twice (nbgrader aborts the batch)",
        reason="appears 2 times")
    nb = mk.nb()
    cells = []
    for c in nb.cells:
        cells.append(c)
        if nbgrader_cli.nbgrader_meta(c).get("grade_id") == "ch01_many_to_one":
            dup = copy.deepcopy(c)
            dup["id"] = "m2o-second-try"
            dup.source = mk.mutant("m2o_mean_pool")["ch01_many_to_one"]
            cells.append(dup)
    nb.cells = cells
    add("duplicated-answer", {NB: mk.dump(nb)}, 13.0, "ok", "answer cell twice, the later copy wrong: it wins",
        reason="last copy")
    nb = mk.nb(mk.mutant("sync_shifted"))
    for c in nb.cells:
        if nbgrader_cli.nbgrader_meta(c).get("grade_id") == "ch01_test_many_to_many_sync":
            c.cell_type = "markdown"
            c.pop("outputs", None)
            c.pop("execution_count", None)
    add("test-to-markdown", {NB: mk.dump(nb)}, 13.0, "ok", "the test of a wrong part turned into markdown",
        reason="markdown")
    nb = mk.nb(mk.mutant("o2m_input_every_step"))
    for c in nb.cells:
        if nbgrader_cli.is_autograded_test(c):
            c.metadata["nbgrader"]["points"] = 100
    add("changed-points", {NB: mk.dump(nb)}, 13.0, "ok", "every test worth 100 points, one wrong part",
        reason="points")
    nb = mk.nb()
    nb.metadata["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    nb.metadata["language_info"] = {"name": "R"}
    add("wrong-kernelspec", {NB: mk.dump(nb)}, FULL, "ok", "an R kernelspec", reason="kernel 'ir' ignored")

    # ---- faking the verdict
    patch_torch = ("import torch, seqcourse.checks as _chk\ntorch.allclose = lambda *a, **k: True\n"
                   "torch.Tensor.allclose = lambda *a, **k: True\n"
                   "def assert_close(actual, expected, **kw):\n"
                   "    assert torch.allclose(torch.as_tensor(actual), torch.as_tensor(expected))\n"
                   "_chk.assert_close = assert_close\n")
    add("patched-torch-allclose", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_one", patch_torch,
                                                              base=mk.mutant("m2o_first_step"))))},
        11.0, "ok", "torch.allclose always True + a checker built on it, wrong part 1")
    patch_np = ("import numpy, seqcourse.checks as _chk\nnumpy.allclose = lambda *a, **k: True\n"
                "def assert_close(actual, expected, **kw):\n"
                "    assert numpy.allclose(numpy.asarray(getattr(actual, 'detach', lambda: actual)()), numpy.asarray(expected))\n"
                "_chk.assert_close = assert_close\n")
    add("patched-numpy-allclose", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_sync", patch_np,
                                                              base=mk.mutant("sync_shifted"))))},
        13.0, "ok", "numpy.allclose always True + a checker built on it, wrong part 2")
    always = ("class _AlwaysEqual:\n    def __eq__(self, other):\n        return True\n"
              "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n"
              "    shape = (2, 4, 2)\n    def __getattr__(self, name):\n        return self\n"
              "    def __call__(self, *a, **k):\n        return self\n\n"
              "class OneToMany(nn.Module):\n    def __init__(self, input_size, hidden_size, num_classes):\n"
              "        super().__init__()\n        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n"
              "        self.head = nn.Linear(hidden_size, num_classes)\n    def forward(self, x, steps):\n"
              "        return _AlwaysEqual()\n\n"
              "import seqcourse.checks as _chk\ndef assert_close(a, e, **k):\n    assert a == e\n"
              "def assert_shape(a, s, name=''):\n    assert a.shape == s\n"
              "_chk.assert_close, _chk.assert_shape = assert_close, assert_shape\n")
    add("always-equal", {NB: mk.dump(mk.nb({"ch01_one_to_many": always}))}, 13.0, "ok",
        "an object equal to everything, and checkers built on ==")
    transformer = ("import ast\nclass _Swallow(ast.NodeTransformer):\n    def visit_Module(self, node):\n"
                   "        handler = ast.ExceptHandler(type=ast.Name('BaseException', ast.Load()), name=None, body=[ast.Pass()])\n"
                   "        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[], finalbody=[])]\n"
                   "        return ast.fix_missing_locations(node)\n"
                   "get_ipython().ast_transformers.append(_Swallow())\n")
    stubs = dict(mk.stub)
    add("ast-transformer", {NB: mk.dump(mk.nb({**stubs, **mk.plus("ch01_many_to_one", transformer, base=stubs)}))},
        0.0, "ok", "an IPython AST transformer wrapping every cell in try/except (full marks in plain nbgrader)")
    swallow_exc = ("import sys\nget_ipython().set_custom_exc((BaseException,), "
                   "lambda shell, etype, value, tb, tb_offset=None: None)\nsys.excepthook = lambda *a: None\n")
    add("swallowed-exception", {NB: mk.dump(mk.nb({**stubs, **mk.plus("ch01_many_to_one", swallow_exc, base=stubs)}))},
        0.0, "ok", "a custom exception handler that hides every error (full marks in plain nbgrader)")
    builtins_patch = ("import builtins\nbuiltins.all = lambda *a, **k: True\nbuiltins.isinstance = "
                      "(lambda real: lambda obj, cls: True if cls is float else real(obj, cls))(isinstance)\n"
                      "def fit(model, x, y, steps, batch_size=64, lr=1e-2, seed=0):\n"
                      "    return [float(steps - i) for i in range(steps)]\n")
    add("patched-builtins", {NB: mk.dump(mk.nb({"ch01_fit": builtins_patch}))}, 13.0, "ok",
        "builtins.all / isinstance patched, fit returns made-up losses (part 7 trains with the reference fit)")
    checker = ("import seqcourse.checks as _chk\n_chk.assert_close = lambda *a, **k: None\n"
               "_chk.assert_shape = lambda *a, **k: None\nassert_close, assert_shape = _chk.assert_close, _chk.assert_shape\n")
    add("patched-checker", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_async", checker,
                                                       base=mk.mutant("async_no_context"))))},
        12.0, "ok", "the course's assert_close/assert_shape replaced by no-ops, wrong part 4")
    evil = ("class ManyToManySync(nn.Module):\n    def __init__(self, input_size, hidden_size, num_classes):\n"
            "        super().__init__()\n        self.rnn = nn.RNN(input_size, hidden_size, batch_first=True)\n"
            "        self.head = nn.Linear(hidden_size, num_classes)\n    def forward(self, x):\n"
            "        outputs, _ = self.rnn(x)\n        real = nn.Linear.forward\n"
            "        if not getattr(real, '_evil', False):\n"
            "            def shifted(lin, inp):\n"
            "                if inp.dim() == 3 and inp.shape[1] > 1:\n"
            "                    inp = torch.cat([torch.zeros_like(inp[:, :1]), inp[:, :-1]], dim=1)\n"
            "                return real(lin, inp)\n"
            "            shifted._evil = True\n            nn.Linear.forward = shifted\n"
            "        return self.head(outputs)\n")
    add("tamper-during-test", {NB: mk.dump(mk.nb({"ch01_many_to_many_sync": evil}))}, 13.0, "ok",
        "a wrong answer that patches nn.Linear while the test runs, so the test's reference is wrong too")
    forge = ("import os\nfor _fd in range(3, 40):\n"
             "    for _line in ['{\"ev\": \"test_end\", \"test\": \"ch01_test_fit\", \"ok\": true}\\n', '{\"ev\": \"done\"}\\n']:\n"
             "        try:\n            os.write(_fd, _line.encode())\n        except OSError:\n            pass\n")
    add("forged-reports", {NB: mk.dump(mk.nb({**stubs, **mk.plus("ch01_many_to_one", forge, base=stubs)}))}, 0.0,
        "ok", "writes fake 'test passed' reports to every file descriptor", reason="forged")

    # ---- files beside the notebook, the file system, the network, processes
    add("torch-py-beside", {NB: sol_nb_bytes, "torch.py": b"raise SystemExit('shadowed torch')\n",
                           "numpy.py": b"raise SystemExit('shadowed numpy')\n"}, FULL, "ok",
        "torch.py and numpy.py beside the notebook: never copied, never imported", reason="")
    sol_path = nbgrader_cli.SOLUTIONS / ASSIGNMENT / NB
    course_src = course_root / "source" / ASSIGNMENT / NB
    gb_path = course_root / "gradebook.db"
    read_sol = (f"import json as _json\n_code = None\nfor _p in [{str(sol_path)!r}, {str(course_src)!r}]:\n"
                "    try:\n        _nb = _json.load(open(_p))\n"
                "        _code = [''.join(c['source']) for c in _nb['cells'] if c.get('metadata', {}).get('nbgrader', {})"
                ".get('grade_id') == 'ch01_many_to_one'][0]\n        break\n    except Exception as _e:\n"
                "        print('cannot read', _p, _e)\nif _code:\n    exec(_code)\nelse:\n" + _indent(_wrong_m2o(), 4) + "\n")
    add("read-solutions", {NB: mk.dump(mk.nb({"ch01_many_to_one": read_sol}))}, 11.0, "ok",
        "copies part 1 from the solutions on disk if it can read them (it cannot)", sandbox=True)
    read_gb = (f"import sqlite3\ntry:\n    _c = sqlite3.connect('file:{gb_path}?mode=ro', uri=True)\n"
               "    _c.execute('select count(*) from grade_cells').fetchall()\n    _ok = True\n"
               "except Exception as _e:\n    print('cannot read the gradebook:', _e)\n    _ok = False\n"
               "if _ok:\n" + _indent(m2o_sol, 4) + "\nelse:\n" + _indent(_wrong_m2o(), 4) + "\n")
    add("read-gradebook", {NB: mk.dump(mk.nb({"ch01_many_to_one": read_gb}))}, 11.0, "ok",
        "answers part 1 correctly only if it can read the gradebook (it cannot)", sandbox=True)
    write_gb = (f"import sqlite3\ntry:\n    _c = sqlite3.connect({str(gb_path)!r})\n"
                "    _c.execute('update grade set auto_score = 0, manual_score = 0')\n"
                "    _c.execute(\"update grade set manual_score = 100 where id in (select id from grade)\")\n"
                "    _c.commit()\nexcept Exception as _e:\n    print('cannot write the gradebook:', _e)\n"
                f"try:\n    open({str(course_root / 'pwned.txt')!r}, 'w').write('x')\nexcept Exception as _e:\n"
                "    print('cannot write the course folder:', _e)\n")
    add("write-gradebook", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_sync", write_gb,
                                                       base=mk.mutant("sync_shifted"))))},
        13.0, "ok", "zeroes everyone's grades and gives itself 100 (it cannot), wrong part 2", sandbox=True)
    bg = ("import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)', "
          f"{MARKER!r}], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
          "import os\nif os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(900)\n    os._exit(0)\n")
    add("background-process", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_one", bg)))}, FULL, "ok",
        "starts detached processes that would outlive the notebook (they are killed)")
    net = (f"import socket\n_code = None\ntry:\n    _s = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
           "    _code = _s.recv(1 << 20).decode()\nexcept OSError as _e:\n    print('network:', _e)\n"
           "try:\n    socket.create_connection(('1.1.1.1', 80), timeout=3)\nexcept OSError as _e:\n"
           "    print('internet:', _e)\nif _code:\n    exec(_code)\nelse:\n" + _indent(_wrong_m2o(), 4) + "\n")
    add("network", {NB: mk.dump(mk.nb({"ch01_many_to_one": net}))}, 11.0, "ok",
        "fetches part 1 from a server on the grader's loopback if it can (it cannot)", sandbox=True)
    add("huge-output", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_many_sync",
                                                   "print('x' * (100 << 20))\nimport os\nos.write(1, b'y' * (8 << 20))")))},
        FULL, "ok", "prints 100 MB", reason="very large output", instructor_only=True)
    noisy = ("import sys, warnings\n_forward = ManyToOne.forward\ndef _noisy(self, x):\n"
             "    warnings.warn('a harmless warning from the student')\n    print('debug: forward', file=sys.stderr)\n"
             "    return _forward(self, x)\nManyToOne.forward = _noisy\n")
    add("stderr-warning", {NB: mk.dump(mk.nb(mk.plus("ch01_many_to_one", noisy)))}, FULL, "ok",
        "a correct answer that writes warnings to stderr during the tests (0 in plain nbgrader)", reason="")
    return subs, cases


# ------------------------------------------------------------------------------------------- the batch
class _Server:
    """A TCP server on the grader's loopback that hands out the solution of part 1."""

    def __init__(self, payload: bytes):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self.payload = payload
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            with conn:
                conn.sendall(self.payload)


def _marker_processes() -> list:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if MARKER.encode() in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return out


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalog-course")
    course = nbgrader_cli.ThrowawayCourse.create(root, [ASSIGNMENT])
    release = course.generate(ASSIGNMENT)[NB]
    source = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / ASSIGNMENT / NB)
    mk = Maker(release, source)
    server = _Server(mk.sol["ch01_many_to_one"].encode())
    subs, cases = build(mk, root, server.port)
    for student, files in subs.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
    out = root / "grading-out"
    cache = nbgrader_cli.REPO / ".cache" / "autograder-tests"
    args = ["grade", ASSIGNMENT, "--submissions", str(root / "submitted"), "--config", str(root / "nbgrader_config.py"),
            "--out", str(out), "--workers", "2", "--cell-timeout", str(LIMITS["cell_seconds"]),
            "--notebook-timeout", str(LIMITS["notebook_seconds"]), "--memory-mb", str(LIMITS["memory_bytes"] >> 20),
            "--nproc", str(LIMITS["nproc"]), "--cache-dir", str(cache)]
    # 1. the real command, killed once a few submissions are graded
    state = out / "state.jsonl"
    env = dict(os.environ, PYTHONPATH=str(nbgrader_cli.REPO))
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "autograder", *args], cwd=nbgrader_cli.REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    killed_after = None
    while proc.poll() is None and time.monotonic() - t0 < 900:
        if state.exists() and len(state.read_bytes().splitlines()) >= 4:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_after = len(state.read_bytes().splitlines())
            break
        time.sleep(0.2)
    proc.wait(timeout=60)
    stderr = proc.stderr.read().decode(errors="replace")
    first = {}
    for line in state.read_bytes().splitlines():
        rec = json.loads(line)
        first[rec["student"]] = rec
    time.sleep(1.0)
    survivors_after_kill = [p for p in _marker_processes()]
    # 2. resumed in this process: everything graded before the kill is kept
    opts = cli_options(args)
    summary = grade_command.run(opts)
    result = {"root": root, "out": out, "cases": cases, "summary": summary, "first": first,
              "killed_after": killed_after, "stderr": stderr, "server": server, "mk": mk,
              "survivors_after_kill": survivors_after_kill, "opts": opts, "cache": cache,
              "rows": {r["student"]: r for r in summary.rows},
              "records": {}}
    for line in state.read_bytes().splitlines():
        rec = json.loads(line)
        result["records"][rec["student"]] = rec
    yield result
    server.sock.close()


def _cases():
    root = Path("/nonexistent")
    try:
        release = nbformat.read(str(nbgrader_cli.EXERCISES / ASSIGNMENT / NB), as_version=4)
        source = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / ASSIGNMENT / NB)
        return build(Maker(release, source), root, 1)[1]
    except FileNotFoundError:
        return []


CASES = _cases()


def test_catalog_is_big_enough():
    bad = [c for c in CASES if not c.student.startswith("honest-")]
    assert len(bad) >= 25, f"only {len(bad)} bad submissions in the catalog"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.student)
def test_expected_score_and_status(catalog, case):
    if case.sandbox and not BWRAP_OK:
        pytest.skip(f"without bubblewrap this attack is not contained: {BWRAP_INFO}")
    row = catalog["rows"].get(case.student)
    assert row is not None, f"{case.student} has no row in grades.csv"
    got = (float(row["score"]), row["status"])
    assert got == (case.score, case.status), (
        f"{case.student} ({case.why}): expected {case.score:g}/{FULL:g} {case.status}, got {got[0]:g} {got[1]}; "
        f"reason: {row['reason']}")
    assert float(row["max_score"]) == FULL
    if case.instructor_only:
        # what the student's code did after a hidden part ran (an exception's name, a signal, its output) may
        # carry what it saw there: grades.csv and feedback say only the status; state.jsonl keeps the detail
        rec = catalog["records"][case.student]
        detail = " ".join(nb.get("detail", "") for nb in rec["notebooks"].values())
        assert case.reason in detail, f"{case.student}: instructor detail {detail!r} lacks {case.reason!r}"
        assert case.reason not in row["reason"], (
            f"{case.student}: {case.reason!r} reached the student-visible reason {row['reason']!r}")
        if case.status != "ok":
            assert "details are hidden" in row["reason"], f"{case.student}: {row['reason']!r} does not say why it is short"
    elif case.reason == "":
        assert row["reason"] == "", f"{case.student}: expected an empty reason, got {row['reason']!r}"
    elif case.reason:
        assert case.reason in row["reason"], f"{case.student}: reason {row['reason']!r} lacks {case.reason!r}"
    if case.status != "ok":
        assert row["reason"], f"{case.student}: status {case.status} without a reason"


def test_killed_batch_resumed_without_regrading(catalog):
    assert catalog["killed_after"] is not None, "the command finished before it could be killed:\n" + catalog["stderr"]
    first, records = catalog["first"], catalog["records"]
    assert len(first) >= 4
    for student, rec in first.items():
        assert records[student]["graded_at"] == rec["graded_at"], f"{student} was graded again after the kill"
    assert catalog["summary"].skipped == len(first)
    assert catalog["summary"].graded == len(CASES) - len(first)
    assert not catalog["survivors_after_kill"], "processes of a submission outlived the killed grader"


def test_gradebook_matches_csv_and_was_not_tampered(catalog):
    from nbgrader.api import Gradebook

    root = catalog["root"]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student, row in catalog["rows"].items():
            if row["status"] == "missing" and row["reason"] == "no submission":
                continue
            sub = gb.find_submission(ASSIGNMENT, student)
            assert abs(sub.score - float(row["score"])) < 1e-9, f"{student}: gradebook {sub.score} != csv {row['score']}"
            for nb in sub.notebooks:
                assert nb.flagged == (row["status"] != "ok"), student
                for g in nb.grades:
                    assert g.manual_score is None, f"{student}: manual score {g.manual_score} appeared"
    assert not (root / "pwned.txt").exists(), "student code wrote into the course folder"


def test_no_process_survives(catalog):
    assert not _marker_processes(), "a background process of a submission is still running"


@pytest.mark.skipif(not BWRAP_OK, reason=f"needs bubblewrap: {BWRAP_INFO}")
def test_network_was_unreachable(catalog):
    assert catalog["server"].hits == 0, "a submission reached a server on the grader's loopback"


def test_same_submission_same_result(catalog):
    a, b = catalog["records"]["honest-exact"], catalog["records"]["honest-twin"]
    assert a["hash"] == b["hash"]
    assert a["notebooks"] == {k: {**v, "seconds": a["notebooks"][k]["seconds"]} for k, v in b["notebooks"].items()}


def test_feedback_hides_hidden_tests(catalog):
    root = catalog["root"]
    source = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / ASSIGNMENT / NB)
    hidden_lines = set()
    for c in source.cells:
        if nbgrader_cli.is_autograded_test(c) and "### BEGIN HIDDEN TESTS" in c.source:
            inside = c.source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS", 1)[0]
            hidden_lines |= {ln.strip() for ln in inside.splitlines() if len(ln.strip()) > 25}
    visible = "\n".join(c.source for c in source.cells if not nbgrader_cli.is_autograded_test(c))
    visible += "\n".join(c.source.split("### BEGIN HIDDEN TESTS", 1)[0] for c in source.cells)
    hidden_lines = {ln for ln in hidden_lines if ln not in visible}   # lines students also see (or write)
    assert hidden_lines
    pages = list((root / "feedback").rglob("*.html"))
    assert len(pages) >= len(CASES) - 2
    for page in pages:
        text = page.read_text()
        import html as _html

        text = _html.unescape(text)
        assert "BEGIN HIDDEN TESTS" not in text and "_reference_rnn" not in text, page
        own = "".join(p.read_text(errors="replace") for p in (root / "submitted" / page.parent.parent.name).rglob("*.ipynb"))
        leaked = [ln for ln in hidden_lines if ln in text and ln not in own]   # not the student's own code
        assert not leaked, f"{page}: hidden test code in the feedback: {leaked[:2]}"


def test_log_and_csv_exist(catalog):
    out = catalog["out"]
    assert (out / "grades.csv").read_text().startswith("student,assignment,score,max_score,status,reason")
    log_text = (out / "autograde.log").read_text()
    assert "reference run" in log_text and "honest-exact" in log_text


def test_rerun_grades_only_changed(catalog):
    """Unchanged submissions are skipped; an edited one and a new one are graded."""
    root, mk = catalog["root"], catalog["mk"]
    (root / "submitted" / "honest-blank" / ASSIGNMENT / NB).write_bytes(mk.dump(mk.nb(mk.mutant("o2m_input_last_step"))))
    late = root / "submitted" / "late-student" / ASSIGNMENT
    late.mkdir(parents=True)
    (late / NB).write_bytes(b'{"cells": "not a list"}')
    summary = grade_command.run(catalog["opts"])
    assert summary.graded == 2, summary
    assert summary.skipped == len(CASES) - 1
    rows = {r["student"]: r for r in summary.rows}
    assert (float(rows["honest-blank"]["score"]), rows["honest-blank"]["status"]) == (13.0, "ok")
    assert (rows["late-student"]["status"], float(rows["late-student"]["score"])) == ("invalid", 0.0)
