"""Hidden stays hidden, the judge understands the values tests compare, and instructor-side patches are not
tampering: the autograder on small synthetic assignments, in its sandbox, through ``AssignmentGrader``.

The probes are the ones of issue 12, each run as a student would:

1. before any test ran, an answer cell searches ``gc.get_objects()`` for the grader's plan (test cells' code,
   their constants, the run's token) and prints what it finds;
2. a function called by a hidden test reads its caller's frame (code names and constants) and a later cell
   prints them, and ``dis.dis`` of a hidden helper left in the globals;
3. an exception raised inside a hidden test, its message made of the caller's values;

plus what a student could do with what (2) found: print it, put it in an exception, or return it as the values
of a later visible test so that the failure message shows it. Nothing of the hidden tests may reach the
feedback page, the reason (grades.csv) or the printed output, and the page must say why output is missing.
"""
from __future__ import annotations

import textwrap

import pytest

import autograder_synth as synth
from autograder.jail import bwrap_works

BWRAP_OK, BWRAP_INFO = bwrap_works()
# Constants that appear only in the hidden tests: none of them may reach anything the student sees.
SECRETS = ["31337", "62674", "271828", "543656", "424242", "1234567", "3703701", "_zz_hidden_helper",
           "_SECRET_CASES", "secret_marker_zz"]

SETUP = """
import contextlib
import math

import numpy as np
import torch
from torch import nn
from seqcourse.checks import assert_close, reference


@contextlib.contextmanager
def forbidden(owner, name, why):
    \"\"\"While the block runs, calling owner.name fails (a rule of the exercise); restored afterwards.\"\"\"
    original = owner.__dict__[name]

    def refuse(*args, **kwargs):
        raise AssertionError(why)

    setattr(owner, name, refuse)
    try:
        yield
    finally:
        setattr(owner, name, original)
"""

GRU_STEP = """
def gru_step(cell, x, h):
    ### BEGIN SOLUTION
    gi = x @ cell.weight_ih.T + cell.bias_ih
    gh = h @ cell.weight_hh.T + cell.bias_hh
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h
    ### END SOLUTION
"""


def build_probe(nb):
    nb.readonly("zz03_setup", SETUP)
    nb.solution("zz03_double", "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION")
    nb.test("zz03_test_double", 2, """
        vis_value = double(2)
        assert vis_value == 4
        ### BEGIN HIDDEN TESTS
        def _zz_hidden_helper():
            return 424242  # secret_marker_zz

        _SECRET_CASES = [31337, 271828]
        for _i, _x in enumerate(_SECRET_CASES):
            with reference():   # the expected values: never in the student's process
                _want = [62674, 543656][_i]
            assert double(_x) == _want, f"double({_x})"
        vis_value = double(_zz_hidden_helper())
        assert vis_value == 848484
        ### END HIDDEN TESTS
        """)
    nb.solution("zz03_triple", "def triple(x):\n    ### BEGIN SOLUTION\n    return 3 * x\n    ### END SOLUTION")
    nb.test("zz03_test_triple", 2, """
        assert triple(2) == 6
        ### BEGIN HIDDEN TESTS
        assert triple(1234567) == 3703701
        ### END HIDDEN TESTS
        """)
    nb.solution("zz03_quad", "def quad(x):\n    ### BEGIN SOLUTION\n    return 4 * x\n    ### END SOLUTION")
    nb.test("zz03_test_quad", 1, """
        assert_close(quad(torch.tensor([1.0, 2.0])), torch.tensor([4.0, 8.0]), name="quad")
        """)
    nb.solution("zz03_gru", GRU_STEP)
    nb.test("zz03_test_gru", 2, """
        from torch.utils.flop_counter import FlopCounterMode

        torch.manual_seed(0)
        cell = nn.GRUCell(3, 4)
        x, h = torch.randn(2, 3), torch.randn(2, 4)
        want = cell(x, h).detach()
        with forbidden(nn.GRUCell, "forward", "gru_step must compute the GRU itself, not call nn.GRUCell"):
            with FlopCounterMode(display=False) as counter:
                got = gru_step(cell, x, h)
        assert_close(got, want, atol=1e-5, name="h")
        assert counter.get_total_flops() < 10 ** 6
        """)


PROBE_GC = """
import gc, marshal, base64, types
_found = []
for _o in gc.get_objects():
    try:
        if isinstance(_o, dict) and ("code_b64" in _o or "cells" in _o):
            _blobs = [_o.get("code_b64")] + [c.get("code_b64") for c in _o.get("cells", []) if isinstance(c, dict)]
            for _b in _blobs:
                if _b:
                    _code = marshal.loads(base64.b64decode(_b))
                    _found.append(repr(_code.co_consts)[:3000])
            if "token" in _o or "tok" in _o:
                _found.append("token " + str(_o.get("token") or _o.get("tok")))
        elif isinstance(_o, types.CodeType) and _o.co_filename.startswith("<test"):
            _found.append(repr(_o.co_consts)[:3000])
        elif isinstance(_o, types.FunctionType) and _o.__code__.co_filename.startswith("<test"):
            _found.append(repr(_o.__code__.co_consts)[:3000])
    except Exception:
        pass
print("gc probe found", len(_found), "things:", _found)
"""

PROBE_FRAME_DOUBLE = """
import sys, types
STOLEN = []
def _flatten(c, out, depth=0):
    for k in list(c.co_consts) + list(c.co_names):
        if isinstance(k, types.CodeType) and depth < 6:
            _flatten(k, out, depth + 1)
        elif isinstance(k, (tuple, frozenset)):
            stack = [k]
            while stack:
                t = stack.pop()
                for x in t:
                    (stack.append(x) if isinstance(x, (tuple, frozenset)) else out.append(x))
        else:
            out.append(k)
def double(x):
    f = sys._getframe(1)
    while f is not None:   # every test frame up the stack: its code, its constants, its names
        if f.f_code.co_filename.startswith("<test"):
            _flatten(f.f_code, STOLEN)
            STOLEN.extend(sorted(k for k in f.f_globals if k.startswith("_")))
        f = f.f_back
    return 2 * x
"""

PROBE_PRINT_AFTER = """
import dis
print("stolen:", STOLEN)
_name = "_zz_" + "hidden_helper"   # (spelt so that the name itself is not in the student's code)
try:
    dis.dis(globals()[_name])
except KeyError as e:
    print("no helper:", e)
print("secret cases:", globals().get("_SECRET" + "_CASES"), "vis_value:", globals().get("vis_value"))
import sys
print("stolen on stderr:", STOLEN, file=sys.stderr)
raise ValueError("leak through an error message: " + repr(STOLEN))
"""

PROBE_TRIPLE_RAISES = """
def triple(x):
    if x > 100:
        raise ValueError("hidden test called triple with " + repr(x) + " " + repr(STOLEN))
    return 3 * x
"""

PROBE_QUAD_ENCODES = """
def quad(x):
    stolen = [float(c) for c in STOLEN if type(c) is int and c > 1000]
    return torch.tensor((stolen + [0.0, 0.0])[:2])
"""

# The namespace a student's cell sees after a test: what the released notebook gives (vis_value == 4), and
# no helper that only a hidden test defined. Graded through `triple`, which is right only then.
NAMESPACE_CHECK = """
_ok = vis_value == 4 and "_zz_hidden_helper" not in globals() and "_SECRET_CASES" not in globals() \\
    and "_x" not in globals()
def triple(x):
    return 3 * x if _ok else 0
"""

GRU_CALLS_CELL = """
def gru_step(cell, x, h):
    return cell(x, h)
"""

GRU_TAMPERS = """
def gru_step(cell, x, h):
    # dodges the rule: a __call__ on nn.GRUCell itself (shadowing nn.Module's) that never calls forward
    real = torch._VF.gru_cell
    nn.GRUCell.__call__ = lambda self, x, h: real(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
    return cell(x, h)
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    root = tmp_path_factory.mktemp("hidden")
    folder = synth.write_assignment(root, "zz03", build_probe)
    return folder, synth.grader(folder, root / "cache")


def _grade(probe, answers=None, extra=None):
    folder, g = probe
    (res,) = g.grade_files(synth.submission(folder, answers, extra))
    from autograder.feedback import render

    page = synth.visible_text(render(student="s", assignment="zz03", result=res,
                                     instructor_notebook=g.notebooks[res.name].notebook, status=res.status,
                                     reason=res.reason))
    from autograder.records import summarize

    return res, page, summarize([res])


def _no_secrets(*texts):
    for text in texts:
        leaked = [s for s in SECRETS if s in text]
        assert not leaked, f"hidden test content reached the student: {leaked} in:\n{text[:3000]}"


def test_reference_and_honest_submission(probe):
    res, page, reason = _grade(probe)
    assert res.status == "ok" and res.score == res.max_score == 7, reason
    assert reason == ""
    _no_secrets(page, reason)


def test_probe_1_gc_finds_no_test_before_it_runs(probe):
    """Before any test ran, nothing of any test cell is in the student's process (and its output is shown)."""
    res, page, reason = _grade(probe, answers={"zz03_double": PROBE_GC + "\ndef double(x):\n    return 2 * x\n"})
    assert res.score == 7, reason
    assert "gc probe found 0 things" in page, page[:3000]
    _no_secrets(page, reason)


def test_probe_2_frames_and_dis_never_reach_the_student(probe):
    res, page, reason = _grade(probe, answers={"zz03_double": PROBE_FRAME_DOUBLE},
                               extra={"zz03_test_double": PROBE_PRINT_AFTER})
    assert res.tests["zz03_test_double"].passed and res.tests["zz03_test_triple"].passed, reason
    _no_secrets(page, reason, res.reason, " ".join(res.notes))
    for printed in ("stolen: [", "no helper: ", "secret cases: None", "vis_value: 4", "leak through an error message: ["):
        assert printed not in page, printed   # the cell's output and its error message (its code is shown)
    assert "Hidden tests ran from" in page and "test zz03_test_double" in page   # and the page says why
    # nor whether the cell ran or raised: after a hidden test, nothing the student's code chose is shown
    assert "This cell raised" not in page and "Not shown after a hidden test has run" in page
    # the instructor still has everything in the record's details (state.jsonl), e.g. nothing hidden here
    assert res.hidden_from == "test zz03_test_double"


def test_probe_3_exception_in_hidden_test_reported_by_type_only(probe):
    res, page, reason = _grade(probe, answers={"zz03_double": PROBE_FRAME_DOUBLE, "zz03_triple": PROBE_TRIPLE_RAISES})
    t = res.tests["zz03_test_triple"]
    assert not t.passed and t.hidden
    assert t.reason == "a hidden test failed", t.reason   # not even the exception's type (the student chose it)
    assert "1234567" in t.detail   # the instructor's record keeps the whole message
    _no_secrets(page, reason)


def test_stolen_values_through_a_later_visible_test_are_not_shown(probe):
    res, page, reason = _grade(probe, answers={"zz03_double": PROBE_FRAME_DOUBLE, "zz03_quad": PROBE_QUAD_ENCODES})
    t = res.tests["zz03_test_quad"]
    assert not t.passed and not t.hidden
    assert any(x in t.detail for x in SECRETS[:5]), t.detail   # the student's values did encode secrets
    # after a hidden test: passed or failed, nothing more (which check failed would be the student's choice too)
    assert t.reason.startswith("the test failed (details are hidden") and "assert_close" not in t.reason, t.reason
    _no_secrets(page, reason)


def test_visible_failure_before_any_hidden_test_keeps_its_values(probe):
    res, page, reason = _grade(probe, answers={"zz03_double": "def double(x):\n    return 3 * x\n"})
    t = res.tests["zz03_test_double"]
    assert not t.passed and not t.hidden and "6" in t.reason, t.reason   # the visible part failed: no hidden part sent
    assert res.hidden_from is None or res.hidden_from != "test zz03_test_double"
    _no_secrets(page, reason)


def test_student_cells_see_the_released_namespace(probe):
    res, page, reason = _grade(probe, answers={"zz03_triple": NAMESPACE_CHECK})
    assert res.tests["zz03_test_triple"].passed, res.tests["zz03_test_triple"].detail


def test_instructor_patches_are_not_tampering_but_a_students_are(probe):
    res, _, reason = _grade(probe)
    assert res.tests["zz03_test_gru"].passed, res.tests["zz03_test_gru"].detail
    res, _, reason = _grade(probe, answers={"zz03_gru": GRU_CALLS_CELL})
    t = res.tests["zz03_test_gru"]
    assert not t.passed and "must compute the GRU itself" in t.detail, t.detail
    res, _, reason = _grade(probe, answers={"zz03_gru": GRU_TAMPERS})
    t = res.tests["zz03_test_gru"]
    assert not t.passed and "GRUCell.__call__" in t.detail, t.detail


# the driver's own globals are protected like a library's: found through gc and replaced while the test runs
GRU_TAMPERS_WITH_THE_DRIVER = GRU_STEP.replace("    ### BEGIN SOLUTION\n", """    import gc
    own = next(d for d in gc.get_objects() if type(d) is dict and "_main" in d and "_Recorder" in d)
    own["_text"] = lambda e, n=2000: "forged"
""").replace("    ### END SOLUTION\n", "")


def test_the_drivers_own_globals_are_protected(probe):
    res, _, reason = _grade(probe, answers={"zz03_gru": GRU_TAMPERS_WITH_THE_DRIVER})
    t = res.tests["zz03_test_gru"]
    assert not t.passed and "autograder._driver._text" in t.detail, t.detail


GRU_LEAKS_BY_NAME = GRU_STEP.replace("    ### BEGIN SOLUTION\n", """    for c in STOLEN:   # attribute names chosen from what a hidden test held
        if type(c) is int and c > 1000:
            setattr(nn.GRUCell, f"leak_{c}", 1)
""").replace("    ### END SOLUTION\n", "")


def test_names_chosen_after_a_hidden_test_are_not_shown(probe):
    """Tampering is detected, but the names of what was replaced are the student's choice: not shown."""
    res, page, reason = _grade(probe, answers={"zz03_double": PROBE_FRAME_DOUBLE, "zz03_gru": GRU_LEAKS_BY_NAME})
    t = res.tests["zz03_test_gru"]
    assert not t.passed and "leak_" in t.detail, t.detail
    assert t.reason.startswith("the test failed (details are hidden"), t.reason   # not even 'replaced'
    _no_secrets(page, reason)


# ------------------------------------------------------------------------------------------- values
def build_values(nb):
    nb.readonly("zz01_setup", """
        import collections
        import numpy as np
        import torch
        """)
    nb.solution("zz01_values", '''
        def values():
            """Values of every kind the judge must understand."""
            ### BEGIN SOLUTION
            Pair = collections.namedtuple("Pair", "a b")
            return {
                "set": {"i", "f", "g", "o"}, "frozenset": frozenset({1, 2}), "tuple": (1, (2.5, "x"), None),
                "dict": {(1, "a"): [1, 2], None: True, 3.5: b"xy", frozenset({1}): "fs"},
                "none": None, "bool": True, "bytes": b"\\x00\\xff", "complex": 1 + 2j,
                "npscalar": np.float32(1.5), "npint": np.int64(7), "ndarray": np.arange(6).reshape(2, 3),
                "tensor": torch.arange(4), "dtype": torch.float64, "npdtype": np.dtype("float32"),
                "device": torch.device("cpu"), "size": torch.Size([2, 3]), "layout": torch.strided,
                "nested": [{"a": (1, {2, 3})}, [torch.Size([1]), {"k": frozenset({"z"})}]],
                "keys": {"a": 1, "b": 2}.keys(), "namedtuple": Pair(1, 2), "odict": collections.OrderedDict(x=1),
                "range": range(3), "counter": collections.Counter("aab"),
            }
            ### END SOLUTION
        ''')
    nb.test("zz01_test_containers", 1, """
        v = values()
        assert isinstance(v["set"], set) and v["set"] == {"i", "f", "g", "o"}
        assert set(v["set"]) == set(("i", "f", "g", "o"))
        assert v["frozenset"] == frozenset({1, 2})
        assert v["tuple"] == (1, (2.5, "x"), None)
        assert v["dict"] == {(1, "a"): [1, 2], None: True, 3.5: b"xy", frozenset({1}): "fs"}
        assert v["keys"] == {"a", "b"} and sorted(v["keys"]) == ["a", "b"]
        assert v["namedtuple"] == (1, 2) and v["odict"] == {"x": 1} and v["range"] == range(3)
        assert v["counter"] == {"a": 2, "b": 1}
        assert v["nested"] == [{"a": (1, {2, 3})}, [torch.Size([1]), {"k": frozenset({"z"})}]]
        """)
    nb.test("zz01_test_scalars", 1, """
        v = values()
        assert v["none"] is None and v["none"] == None
        assert v["bool"] is True and v["bool"] == True
        assert v["bytes"] == b"\\x00\\xff" and v["complex"] == 1 + 2j
        assert v["npscalar"] == np.float32(1.5) and v["npint"] == 7
        """)
    nb.test("zz01_test_arrays", 1, """
        v = values()
        assert np.array_equal(v["ndarray"], np.arange(6).reshape(2, 3))
        assert torch.equal(v["tensor"], torch.arange(4))
        assert v["size"] == torch.Size([2, 3]) and v["size"] == (2, 3)
        assert v["dtype"] == torch.float64 and v["npdtype"] == np.dtype("float32")
        assert v["device"] == torch.device("cpu") and v["layout"] == torch.strided
        """)


WRONG_VALUES = '''
def values():
    Pair = collections.namedtuple("Pair", "a b")
    return {
        "set": {"i", "f", "g"}, "frozenset": frozenset({1, 2}), "tuple": (1, (2.5, "x"), None),
        "dict": {}, "none": 0, "bool": 1, "bytes": b"", "complex": 0j, "npscalar": np.float32(1.5), "npint": 7,
        "ndarray": np.zeros((2, 3)), "tensor": torch.zeros(4), "dtype": torch.float32, "npdtype": np.dtype("f8"),
        "device": torch.device("meta"), "size": torch.Size([3, 2]), "layout": torch.sparse_coo,
        "nested": [], "keys": {}.keys(), "namedtuple": Pair(2, 1), "odict": {}, "range": range(2),
        "counter": {},
    }
'''

# Subclasses whose __eq__/__iter__ lie: reported by what they really hold, so every check still fails.
LYING_VALUES = '''
class _Set(set):
    def __eq__(self, other):
        return True
    __hash__ = None
class _Tuple(tuple):
    def __eq__(self, other):
        return True
    def __iter__(self):
        return iter((1, (2.5, "x"), None))
class _Int(int):
    def __eq__(self, other):
        return True
class _AlwaysEqual:
    def __eq__(self, other):
        return True
    shape = (2, 3)
def values():
    eq = _AlwaysEqual()
    return {"set": _Set({"x"}), "frozenset": eq, "tuple": _Tuple((9,)), "dict": eq, "none": None, "bool": True,
            "bytes": eq, "complex": eq, "npscalar": eq, "npint": _Int(8), "ndarray": eq, "tensor": eq,
            "dtype": eq, "npdtype": eq, "device": eq, "size": eq, "layout": eq, "nested": eq, "keys": eq,
            "namedtuple": eq, "odict": eq, "range": eq, "counter": eq}
'''


@pytest.fixture(scope="module")
def values_grader(tmp_path_factory):
    root = tmp_path_factory.mktemp("values")
    folder = synth.write_assignment(root, "zz01", build_values)
    return folder, synth.grader(folder, root / "cache")   # the reference must pass: every value was understood


def test_judge_understands_the_values_tests_compare(values_grader):
    folder, g = values_grader
    (res,) = g.grade_files(synth.submission(folder))
    assert res.score == 3, {k: t.detail for k, t in res.tests.items()}
    (res,) = g.grade_files(synth.submission(folder, {"zz01_values": WRONG_VALUES}))
    assert res.score == 0, {k: t.detail for k, t in res.tests.items()}
    (res,) = g.grade_files(synth.submission(folder, {"zz01_values": LYING_VALUES}))
    assert res.score == 0, {k: t.detail for k, t in res.tests.items()}
    assert "not plain data" in res.tests["zz01_test_arrays"].detail


@pytest.mark.skipif(not BWRAP_OK, reason=f"needs bubblewrap: {BWRAP_INFO}")
def test_sandbox_is_real(values_grader):
    assert values_grader[1].sandbox.mode == "bwrap"


def test_unrepresentable_check_names_cell_line_type_and_fix(tmp_path):
    """A check on a value that cannot be plain data stops the command with a message for the author."""
    from autograder.course import AssignmentError

    def build(nb):
        nb.readonly("zz02_setup", "import enum\nclass Colour(enum.Enum):\n    RED = 1\n")
        nb.solution("zz02_pick", "def pick():\n    ### BEGIN SOLUTION\n    return Colour.RED\n    ### END SOLUTION")
        nb.test("zz02_test_pick", 1, "c = pick()\nassert c == Colour.RED\n")

    folder = synth.write_assignment(tmp_path, "zz02", build)
    with pytest.raises(AssignmentError) as e:
        synth.grader(folder, tmp_path / "cache")
    msg = str(e.value)
    for part in ("zz02.ipynb", "test cell zz02_test_pick, line 2", "`assert c == Colour.RED`", "Colour",
                 "Make each check compare plain values"):
        assert part in msg, msg
    assert "reference solution gave a plain value" not in msg and "fails its own tests" not in msg


def test_cli_fatal_error_is_one_line_and_in_the_log(tmp_path):
    import subprocess
    import sys

    import nbgrader_cli

    def build(nb):
        nb.readonly("zz05_setup", "import math")
        nb.solution("zz05_f", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
        nb.test("zz05_test_f", 1, "assert f() == 2, 'f() must be 2'\n")   # the reference itself fails

    synth.course(tmp_path, "zz05", build)
    (tmp_path / "submitted" / "a" / "zz05").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "zz05", "--submissions",
                           str(tmp_path / "submitted"), "--config", str(tmp_path / "nbgrader_config.py"),
                           "--out", str(tmp_path / "out")], cwd=nbgrader_cli.REPO, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 2
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "does not pass its own tests" in errors[0] and "f() must be 2" in errors[0], proc.stderr
    log = (tmp_path / "out" / "autograde.log").read_text()
    assert "stopped: the instructor's solution zz05.ipynb does not pass its own tests" in log, log


def test_textwrap_helpers_are_clean():
    assert textwrap.dedent(SETUP).startswith("\nimport contextlib")
