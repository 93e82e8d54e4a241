"""The autograder's layout holds (issue 21): imports flow one way (no circle in ``autograder/``), no function is long
without saying why, course knowledge lives in the profile only, the README's map names every module, and the wire
between the grader and the driver is ONE vocabulary: the driver (which runs alone in the sandbox from a single file
and keeps its own copy), the warm sandbox's server, the instrumenter and the judge are held to
:mod:`autograder.protocol` here, by reading their source and by round-tripping values through the driver's encoder
and the judge's decoder. Fast: no sandbox, no notebook."""
from __future__ import annotations

import ast
import collections
import operator
import runpy
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder import judge, protocol
from autograder.instrument import ImportMap, compile_cell
from autograder.protocol import (CELL_FIELDS, EVENT_FIELDS, LIMIT_FIELDS, RECORDER_METHODS, SETUP_FIELDS, Event,
                                 Node, Value, ZygoteReply)

PKG = Path(__file__).resolve().parents[1] / "autograder"
MODULES = sorted(PKG.glob("*.py"))
MAX_LINES = 150
LONG_BECAUSE = "Long because"   # what a longer function's docstring says, with the reason


def _tree(name: str) -> ast.Module:
    return ast.parse((PKG / name).read_text(), filename=name)


def _imports(path: Path) -> set:
    """The modules of ``autograder`` that a module imports, at its top or inside functions."""
    mods = {p.stem for p in MODULES}
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                out.add(node.module.split(".")[0])
            elif node.level == 1 or node.module == "autograder":
                out.update(a.name for a in node.names if a.name in mods)
            elif node.module and node.module.startswith("autograder."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("autograder."))
    return out - {path.stem}


def test_imports_flow_one_way():
    graph = {p.stem: _imports(p) for p in MODULES}
    unknown = {m: sorted(d - set(graph)) for m, d in graph.items() if d - set(graph)}
    assert not unknown, f"imports of modules that do not exist: {unknown}"
    state, stack, circles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == "open":
                circles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_no_function_is_long_without_a_reason():
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES and LONG_BECAUSE not in (ast.get_docstring(node) or ""):
                    long.append(f"{path.name}:{node.lineno} {node.name} ({n} lines)")
    assert not long, f"functions over {MAX_LINES} lines without '{LONG_BECAUSE}: ...' in their docstring: {long}"


def _code_strings(tree: ast.Module) -> list:
    """String constants of a module that are not docstrings."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_course_knowledge_is_in_the_profile_only():
    """The course package, its checkers and its reference marker are named in nbgrader_config.py, nowhere in code."""
    leaks = [f"{p.name}: {s[:80]!r}" for p in MODULES if p.name != "nbgrader_config.py"
             for s in _code_strings(ast.parse(p.read_text())) if "seqcourse" in s.lower()]
    assert not leaks, leaks
    config = (PKG / "nbgrader_config.py").read_text()
    assert "c.Autograder.packages" in config and "c.Autograder.reference_marker" in config


def _readme_map() -> tuple:
    """``(text of the README's opening, [(file, its imports column), ...] of the map's table, in order)``."""
    lines = (PKG / "README.md").read_text().splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("## ")]
    opening = lines[: heads[1]] if len(heads) > 1 else lines
    rows = []
    for ln in opening:
        cols = [c.strip() for c in ln.strip().strip("|").split("|")]
        if ln.startswith("| `") and len(cols) == 3:
            rows.append((cols[0].strip("`"), cols[2]))
    return "\n".join(opening), rows


def test_the_readme_opens_with_a_map_of_every_module():
    text, rows = _readme_map()
    missing = [p.name for p in MODULES if p.name != "__init__.py" and f"`{p.name}`" not in text]
    assert not missing, f"autograder/README.md's opening map does not name {missing}"
    graph = {p.stem: _imports(p) for p in MODULES}
    order = [f[: -len(".py")] for f, _ in rows]
    for i, (f, column) in enumerate(rows):
        stem = f[: -len(".py")]
        above = set(order[:i]) & graph[stem]
        assert not above, f"{f} imports {sorted(above)}, listed above it in the map (imports flow down the table)"
        said = {w for w in column.replace(",", " ").split() if w in graph}
        assert said <= graph[stem], f"the map says {f} imports {sorted(said - graph[stem])}: it does not"


# ------------------------------------------------------------------------------------------- the driver's copy
def _dicts_with(tree: ast.AST, key: str) -> list:
    """``(value of key, other keys)`` of every dict literal in ``tree`` whose ``key`` is a string constant."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Constant):
                    out.append((v.value, set(keys) - {key}))
    return out


def _subscripted(tree: ast.AST, name: str) -> set:
    """Constant keys read from a variable ``name``: ``name["k"]``, ``name.get("k")``, ``name.pop("k")``."""
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name
                and isinstance(node.slice, ast.Constant)):
            out.add(node.slice.value)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop")
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.args
                and isinstance(node.args[0], ast.Constant)):
            out.add(node.args[0].value)
    return out


def test_driver_emits_the_protocols_events():
    emitted = _dicts_with(_tree("_driver.py"), "ev")
    assert {k for k, _ in emitted} == set(Event)
    for kind, keys in emitted:
        assert keys <= EVENT_FIELDS[Event(kind)], (kind, keys - EVENT_FIELDS[Event(kind)])


def test_driver_reads_only_the_protocols_messages():
    tree = _tree("_driver.py")
    assert _subscripted(tree, "plan") <= SETUP_FIELDS, _subscripted(tree, "plan") - SETUP_FIELDS
    assert _subscripted(tree, "limits") <= LIMIT_FIELDS
    assert _subscripted(tree, "cell") <= CELL_FIELDS, _subscripted(tree, "cell") - CELL_FIELDS
    kinds = {n.comparators[0].value for n in ast.walk(tree) if isinstance(n, ast.Compare)
             and isinstance(n.left, ast.Name) and n.left.id == "kind" and isinstance(n.comparators[0], ast.Constant)}
    assert kinds == set(protocol.CellKind)


def test_the_grader_sends_only_the_protocols_messages(tmp_path):
    from autograder.jail import Jail, Limits, Started
    from autograder.session import _MESSAGE_KEYS

    assert set(_MESSAGE_KEYS) | {"i", "tok", "part", "last", "hidden", "binds", "end"} <= CELL_FIELDS
    jail = Jail("none", cache_dir=tmp_path)
    setup = jail.setup(Started(None, 3, "/h"), slot=0, workdir_name="w", files={}, limits=Limits())
    assert set(setup) | {"tok", "recorder_placeholder", "builtins_placeholder"} <= SETUP_FIELDS
    assert set(setup["limits"]) == LIMIT_FIELDS


def test_driver_reports_the_protocols_check_nodes_and_recorder():
    tree = _tree("_driver.py")
    junctions = {n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr == "_junction"}   # and_ / or_
    assert {k for k, _ in _dicts_with(tree, "t")} | junctions == set(Node)
    recorder = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "_Recorder")
    methods = {f.name for f in recorder.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")}
    slots = next(ast.literal_eval(s.value) for s in recorder.body if isinstance(s, ast.Assign)
                 and s.targets[0].id == "__slots__")
    assert methods | {s for s in slots if not s.startswith("_")} == RECORDER_METHODS


def test_driver_compares_as_the_protocol_says():
    tree = _tree("_driver.py")
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_COMPARE")
    table = eval(compile(ast.Expression(node.value), "_driver.py", "eval"), {"operator": operator})  # noqa: S307
    assert set(table) == set(protocol.COMPARE) and judge.COMPARE is protocol.COMPARE
    samples = [(1, 2), (2, 2), (3, 2), ("a", "abc"), (2, [1, 2]), (5, {1: 0}), (1.5, 1.5)]
    for op in table:
        for a, b in samples:
            try:
                want = protocol.COMPARE[op](a, b)
            except TypeError:
                with pytest.raises(TypeError):
                    table[op](a, b)
                continue
            assert table[op](a, b) == want, (op, a, b)


def test_zygote_replies_are_the_protocols():
    assert {k for k, _ in _dicts_with(_tree("_zygote.py"), "ev")} == set(ZygoteReply)


def test_instrumenter_calls_only_the_recorders_methods():
    called = set()
    for node in ast.walk(_tree("instrument.py")):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("_rt", "recorder_method") and node.args
                and isinstance(node.args[0], ast.Constant)):
            called.add(node.args[0].value)
    assert called | {"and_", "or_", "check_call", "hidden_check_call"} == RECORDER_METHODS
    imports = ImportMap()
    imports.learn(ast.parse("import torch\nfrom m import assert_close"))
    cc = compile_cell("assert isinstance(x, int) and not (a < b <= c)\nassert torch.allclose(x, y) or v\n"
                      "assert_close(x, y)\n", "<t>", key="t", recorder_placeholder="RT", builtins_placeholder="B",
                      imports=imports, instructor_bound=set(), instrument=True, checkers=("m.assert_",))
    assert {n["t"] for n in cc.nodes.values()} == set(Node)


def test_the_judge_decodes_every_value_the_driver_encodes():
    """The driver's own encoder (loaded from its file, as the zygote loads its preload) and the judge's decoder agree
    on every tag of the protocol."""
    driver = runpy.run_path(str(PKG / "_driver.py"), run_name="driver_under_test")
    readers = driver["_type_readers"](torch, np)
    ch = types.SimpleNamespace(short=lambda s, n=2000: str(s)[:n], describe=lambda e: {"type": "E", "msg": str(e)})
    values = driver["_value_encoder"]({}, readers, ch)
    samples = [None, True, 3, 1.5, 2j, "s", b"b", [1, "x"], (1,), {1}, frozenset({2}), {"a": 1},
               collections.OrderedDict(b=2), range(1, 5, 2), slice(1, None), Ellipsis, np.float32(1.5),
               np.dtype("<f4"), np.arange(3), torch.arange(4.0).reshape(2, 2), torch.float16, torch.device("cpu"),
               torch.Size([2, 3]), torch.strided, int, object(), values.placeholder]
    tags = set()
    for v in samples:
        enc = values.ser(v)
        tags.add(enc[0])
        if enc[0] == Value.PLACEHOLDER:
            continue
        got = judge.decode(enc)
        if enc[0] == Value.OPAQUE:
            assert isinstance(got, judge.Opaque)
        elif enc[0] == Value.TYPE:
            assert got == judge.TypeRef("builtins", "int")
        elif isinstance(v, (torch.Tensor, np.ndarray)):
            assert type(got) is type(v) and (got == v).all()
        elif isinstance(v, torch.Size):   # a tuple subclass: reported as the tuple it is
            assert got == v and type(got) is tuple
        else:
            assert got == v and type(got) is type(v), (v, got)
    assert tags == set(Value)


def test_driver_names_the_namespace_fallback_as_the_protocol_does():
    """The grader empties a user id's keyrings after a submission whose ready event says it ran without private
    namespaces: the driver's copy of those words must be the protocol's."""
    driver = runpy.run_path(str(PKG / "_driver.py"), run_name="driver_under_test")
    assert driver["_NO_PRIVATE_NAMESPACES"] == protocol.NO_PRIVATE_NAMESPACES
