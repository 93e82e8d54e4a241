"""Fast unit tests of the autograder's pieces (no sandbox, no notebook execution): reading untrusted
notebooks and archives, rebuilding the notebook that runs, instrumenting tests, and the judge's verdicts on
reports that a student's process could forge."""
from __future__ import annotations

import ast
import base64
import json
import os
import zipfile

import nbformat
import numpy as np
import pytest
import torch

import nbgrader_cli
from autograder.assemble import InvalidNotebook, assemble, parse_notebook
from autograder.records import StateStore, summarize, write_csv
from autograder.course import load_course, load_profile
from autograder.instrument import ImportMap, compile_cell, evaluate_literal, hidden_lines, is_literal, strip_hidden
from autograder.judge import Opaque, decode, judge_test
from autograder.submissions import collect, valid_student_id

NB = "ch01_sequence_configurations.ipynb"


def _nb(cells, kernel="python3"):
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
    return nbformat.writes(nb).encode()


def _cell(kind, source, **nbg):
    c = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
    if nbg:
        c.metadata["nbgrader"] = {"schema_version": 3, "locked": False, "solution": False, "grade": False, **nbg}
    return c


# ------------------------------------------------------------------------------------------- notebooks
@pytest.mark.parametrize("data, why", [
    (b"", "empty"),
    (b'{"cells": [', "not valid notebook JSON"),
    (b'{"cells": [], "x": "\xff"}', "not valid UTF-8"),
    (b"[1, 2]", "not a notebook"),
    (b'{"cells": "nope"}', "no list of cells"),
    (b'{"cells": [{"source": "x"}]}', "no cell type"),
    (b'{"cells": [{"cell_type": "code", "source": 3}]}', "neither text nor a list"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
])
def test_invalid_notebooks_say_why(data, why):
    with pytest.raises(InvalidNotebook, match=why):
        parse_notebook(data)


def test_assemble_restores_tests_and_uses_last_answer_copy():
    instructor = parse_notebook(_nb([
        _cell("code", "import math", grade_id="setup", locked=True),
        _cell("code", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", grade_id="ans", solution=True),
        _cell("code", "assert f() == 1\n### BEGIN HIDDEN TESTS\nassert f() + 1 == 2\n### END HIDDEN TESTS",
              grade_id="t", grade=True, locked=True, points=3),
    ]))
    student = parse_notebook(_nb([
        _cell("code", "import os  # edited setup", grade_id="setup", locked=True),
        _cell("code", "def f():\n    return 1", grade_id="ans", solution=True),
        _cell("code", "helper = 2"),
        _cell("code", "def f():\n    return 0", grade_id="ans", solution=True),
        _cell("markdown", "assert True", grade_id="t", grade=True, points=100),
    ], kernel="ir"))
    plan, notes = assemble(instructor, student)
    assert [(p.kind, p.source) for p in plan] == [
        ("instructor", "import math"),
        ("student", "def f():\n    return 0"),
        ("student", "helper = 2"),
        ("test", instructor.cells[2].source)]
    text = " ".join(notes)
    for part in ("appears 2 times: the last copy was used", "turned into markdown", "points of t were changed",
                 "kernel 'ir' ignored"):
        assert part in text


def test_assemble_on_the_real_exercise():
    src = parse_notebook((nbgrader_cli.SOLUTIONS / "ch01" / NB).read_bytes())
    rel = parse_notebook((nbgrader_cli.EXERCISES / "ch01" / NB).read_bytes())
    plan, notes = assemble(src, rel)
    assert notes == []
    tests = [p.grade_id for p in plan if p.kind == "test"]
    assert tests == [c.grade_id for c in src.tests()]
    assert all("### BEGIN HIDDEN TESTS" in p.source for p in plan if p.kind == "test" and p.grade_id != "ch01_test_majority_accuracy")


def test_hidden_regions():
    src = "a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\nc = 3\n"
    assert hidden_lines(src) == {2, 3, 4}
    assert strip_hidden(src) == "a = 1\nc = 3\n"


# ------------------------------------------------------------------------------------------- instrument + judge
IMPORTS = ImportMap()
IMPORTS.learn(ast.parse("import torch\nimport numpy as np\nfrom seqcourse.checks import assert_close, assert_shape"))


def _compile(src):
    return compile_cell(src, "<test t>", key="t", recorder_placeholder="RT", builtins_placeholder="B", imports=IMPORTS,
                        instructor_bound=set(), instrument=True, checkers=load_profile().checker_prefixes)


def test_literals_are_recognised_and_evaluated_by_the_judge():
    for text in ["torch.tensor([[0.5, -1.0]])", "30", "(2, 5, 3)", "np.array([1, 2], dtype=np.float32)",
                 "torch.float64"]:
        assert is_literal(ast.parse(text, mode="eval").body, IMPORTS), text
    for text in ["model(x)", "torch.tensor(x)", "len(y)", "f(1)"]:
        assert not is_literal(ast.parse(text, mode="eval").body, IMPORTS), text
    assert torch.equal(evaluate_literal("torch.tensor([[0.5, -1.0]])", dict(IMPORTS)), torch.tensor([[0.5, -1.0]]))


def _t(x: torch.Tensor):
    arr = x.detach().numpy()
    return ["tensor", f"torch.{str(x.dtype).split('.')[1]}", list(x.shape), arr.dtype.str,
            base64.b64encode(arr.tobytes()).decode()]


def _events(cc, checks, ok=True):
    evs = [{"ev": "check", "test": "t", **c} for c in checks]
    evs.append({"ev": "test_end", "test": "t", "ok": ok, "exc": None})
    return evs


def _judge(cc, events, reference=None):
    return judge_test("t", events, sites=cc.sites, nodes=cc.nodes, imports=dict(IMPORTS), reference=reference or {})


def test_judge_redoes_checks_on_plain_data():
    cc = _compile("out = model(x)\nassert_close(out, torch.tensor([1.0, 2.0]), atol=1e-4)\nassert len(out) == 2, 'len'")
    (s1, site1), (s2, site2) = sorted(cc.sites.items())
    good = _t(torch.tensor([1.0, 2.0]))
    bad = _t(torch.tensor([1.0, 2.5]))
    call = lambda v, k=True: {"site": s1, "node": {"t": "call", "id": site1["node"], "args": [v, _t(torch.tensor([9.0, 9.0]))],
                                                    "kw": [["atol", ["float", float.hex(1e9)]]], "k": k}}
    length = {"site": s2, "node": {"t": "cmp", "id": site2["node"], "vals": [["int", "2"], ["int", "2"]],
                                   "links": [True], "k": True}}
    assert _judge(cc, _events(cc, [call(good), length])).passed
    # the student's process claims success, but the value is wrong: the judge recomputes (and uses its own
    # literal expected value and tolerance, not the reported ones)
    v = _judge(cc, _events(cc, [call(bad), length]))
    assert not v.passed and "differ" in v.reason
    # an object that is not plain data (an always-equal object...) fails
    v = _judge(cc, _events(cc, [call(["opaque", "AlwaysEqual"]), length]))
    assert not v.passed and "not plain data" in v.reason
    # a forged literal operand in a comparison is replaced by the judge's own
    forged = {"site": s2, "node": {"t": "cmp", "id": site2["node"], "vals": [["int", "3"], ["int", "3"]],
                                   "links": [True], "k": True}}
    assert not _judge(cc, _events(cc, [call(good), forged])).passed
    # a check that did not run at all (skipped, or an exception swallowed) is missing against the reference
    v = _judge(cc, _events(cc, [call(good)]), reference={"counts": {s1: 1, s2: 1}})
    assert not v.passed and "fewer checks" in v.reason
    # no test_end: the notebook stopped
    assert "did not finish" in _judge(cc, [{"ev": "check", "test": "t", **call(good)}]).reason


def test_an_exception_is_hidden_only_by_its_own_cells_hidden_lines():
    """A visible line's error stays visible when ANOTHER test cell has a hidden check on the same line number
    (the notebook's sites are one dict for all cells: trial 22f's ch08 dot_attention error was filed as hidden
    because ch08_test_attend had a hidden check on line 26 of its own cell)."""
    mine = _compile("x = 1\nout = model(x)\nassert_close(out, torch.tensor([1.0]), atol=1e-4)")
    other = compile_cell("a = 1\n### BEGIN HIDDEN TESTS\nassert_close(a, torch.tensor([1.0]), atol=1e-4)\n"
                         "### END HIDDEN TESTS", "<test u>", key="u", recorder_placeholder="RT", builtins_placeholder="B",
                         imports=IMPORTS, instructor_bound=set(), instrument=True,
                         checkers=load_profile().checker_prefixes)
    assert any(s["hidden"] and s["line"] == 3 for s in other.sites.values())
    sites = {**mine.sites, **other.sites}
    crash = [{"ev": "test_end", "test": "t", "ok": False, "exc": {"type": "RuntimeError", "msg": "boom", "line": 3}}]
    for reference in ({}, {"hidden_lines": set()}):
        v = judge_test("t", crash, sites=sites, nodes={**mine.nodes, **other.nodes}, imports=dict(IMPORTS),
                       reference=reference)
        assert not v.passed and not v.hidden and "boom" in v.reason, (reference, v)
    # ... and an error on a line of the test's own hidden region is hidden
    v = judge_test("u", [{**crash[0], "test": "u"}], sites=sites, nodes={**mine.nodes, **other.nodes},
                   imports=dict(IMPORTS), reference={"hidden_lines": {2, 3, 4}})
    assert v.hidden
    v = judge_test("u", [{**crash[0], "test": "u"}], sites=sites, nodes={**mine.nodes, **other.nodes},
                   imports=dict(IMPORTS), reference={})
    assert v.hidden



def test_judge_keeps_the_message_of_a_visible_assert():
    """Trial 22 (record vs Jupyter): a plain `assert cond, message` that fails keeps the test's message in the
    instructor's detail (what the student saw in Jupyter), with the judge's re-evaluation beside it."""
    cc = _compile("out = model(x)\nassert len(out) == 2, 'build_vocab(min_freq=1) gave the wrong vocabulary'")
    (sid, site), = cc.sites.items()
    wrong = {"site": sid, "node": {"t": "cmp", "id": site["node"], "vals": [["int", "3"], ["int", "2"]],
                                   "links": [False], "k": False},
             "msg": "build_vocab(min_freq=1) gave the wrong vocabulary"}
    v = _judge(cc, _events(cc, [wrong], ok=False))
    assert not v.passed and v.reason.startswith("line 2: build_vocab(min_freq=1) gave the wrong vocabulary [the check"), v.reason
    assert "is false" in v.reason

def test_judge_short_circuit_cannot_be_forged():
    cc = _compile("assert isinstance(y, list) and len(y) == 30")
    (sid, site), = cc.sites.items()
    and_id = site["node"]
    prim_id, cmp_id = sorted((k for k in cc.nodes if k != and_id), key=lambda k: int(k.split("n")[-1]))
    ok_node = {"t": "and", "id": and_id, "k": True, "items": [{"t": "prim", "id": prim_id, "k": True},
                                                              {"t": "cmp", "id": cmp_id, "vals": [["int", "30"], ["int", "30"]],
                                                               "links": [True], "k": True}]}
    assert _judge(cc, _events(cc, [{"site": sid, "node": ok_node}])).passed
    cut = {**ok_node, "items": ok_node["items"][:1]}   # claims True but reports only the first operand
    assert not _judge(cc, _events(cc, [{"site": sid, "node": cut}])).passed


def test_instrumented_code_uses_pristine_builtins_and_constants():
    cc = _compile("n = len(y)\nassert n == 3\n")
    import marshal

    import dis

    code = marshal.loads(cc.code)
    lookups = [i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_NAME", "LOAD_GLOBAL")]
    assert "len" not in lookups, "builtins must come from the pristine copy, not a name lookup"
    assert "B" in code.co_consts and "RT" in {c for c in code.co_consts if isinstance(c, str)}


def test_decode_rejects_malformed_values():
    assert isinstance(decode(["opaque", "x"]), Opaque)
    assert decode(["tensor", "torch.float32", [2], "<f4", base64.b64encode(np.ones(2, "<f4").tobytes()).decode()]).sum() == 2
    for bad in [["tensor", "torch.float32", [3], "<f4", base64.b64encode(np.ones(2, "<f4").tobytes()).decode()],
                ["ndarray", "|O", [1], ""], ["tensor", "os.system", [1], "<f4", ""], ["nope"], "str"]:
        with pytest.raises((ValueError, TypeError, IndexError)):
            decode(bad)


# ------------------------------------------------------------------------------------------- input collection
def test_folder_collection_ignores_symlinks_and_other_files(tmp_path):
    sub = tmp_path / "submitted"
    (sub / "alice" / "ch01").mkdir(parents=True)
    (sub / "alice" / "ch01" / NB).write_bytes(b"{}")
    (sub / "alice" / "ch01" / "timestamp.txt").write_text("2024-01-02 03:04:05\n")
    (sub / "alice" / "ch01" / "torch.py").write_text("boom")
    secret = tmp_path / "gradebook.db"
    secret.write_text("secret")
    (sub / "mallory" / "ch01").mkdir(parents=True)
    os.symlink(secret, sub / "mallory" / "ch01" / NB)
    os.symlink(sub / "alice", sub / "eve")
    got = collect(tmp_path, "ch01")
    assert set(got) == {"alice", "mallory", "eve"}   # every student gets a row: eve's says why it is not graded
    assert got["alice"].files == {NB: b"{}"} and got["alice"].timestamp == "2024-01-02 03:04:05"
    assert got["mallory"].files == {} and "not a regular file" in got["mallory"].problems[0]
    assert "symbolic link" in got["mallory"].invalid and "symbolic link" in got["eve"].invalid
    assert got["eve"].files == {}


def test_archive_collection_follows_zip_collect_conventions(tmp_path):
    z = tmp_path / "lms.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(f"ch01_bitdiddle_attempt_2024-01-30-15-00-00_{NB}", b"old")
        zf.writestr(f"ch01_bitdiddle_attempt_2024-01-31-15-00-00_{NB}", b"new")
        zf.writestr(f"ch01_hacker_attempt_2024-01-30-15-00-00_{NB}", b"hack")
        zf.writestr(f"submitted/alyssa/ch01/{NB}", b"folder layout")
        zf.writestr("../../etc/evil.ipynb", b"x")
        info = zipfile.ZipInfo(f"ch01_link_attempt_2024-01-30-15-00-00_{NB}")
        info.external_attr = (0o120777 << 16)
        zf.writestr(info, "/etc/passwd")
    got = collect(z, "ch01")
    assert got["bitdiddle"].files == {NB: b"new"}
    assert got["hacker"].files == {NB: b"hack"}
    assert got["alyssa"].files == {NB: b"folder layout"}
    assert got["link"].files == {} and "symbolic link" in got["link"].invalid     # a row that says why
    unsafe = [s for s in got.values() if not s.identified]
    assert len(unsafe) == 1 and "unsafe" in unsafe[0].invalid and unsafe[0].student == "../../etc/evil.ipynb"
    assert all(valid_student_id(s.student) for s in got.values() if s.identified)


def test_state_store_survives_a_torn_line(tmp_path):
    p = tmp_path / "state.jsonl"
    p.write_text(json.dumps({"student": "a", "score": 1}) + "\n" + '{"student": "b", "sco')
    s = StateStore(p)
    assert set(s.records) == {"a"}
    s.append({"student": "b", "score": 2})
    s.close()
    assert StateStore(p).records["b"]["score"] == 2


def test_csv_and_course_config(tmp_path):
    write_csv(tmp_path / "g.csv", [{"student": "b", "assignment": "a", "score": 1.5, "max_score": 2.0, "status": "ok",
                                     "reason": 'has, "commas"'}])
    assert (tmp_path / "g.csv").read_text().splitlines() == ["student,assignment,score,max_score,status,reason",
                                                             'b,a,1.5,2,ok,"has, ""commas"""']
    course = load_course(nbgrader_cli.REPO / "autograder" / "nbgrader_config.py")
    assert course.root == nbgrader_cli.REPO and course.source_dir == nbgrader_cli.REPO / "solutions"
    assert course.db_url.endswith("gradebook.db?timeout=60")
    assert summarize([]) == ""
