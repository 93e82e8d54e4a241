"""Turn the instructor's test cells into code that *reports* its checks instead of judging them.

Runs in the grader's own (trusted) process. For every test cell:

- every ``assert EXPR, MSG`` becomes ``RT.check(site, lambda: <node>, lambda: MSG)`` where ``<node>`` mirrors
  the structure of ``EXPR`` (``and``/``or``/``not``, comparison chains, calls of known predicates such as
  ``torch.allclose``, ``isinstance``) so that every operand is reported as plain data and the comparison
  can be redone outside the student's process (:mod:`autograder.judge`);
- every statement that calls a known checking function (``assert_close(...)`` of the course package,
  ``torch.testing.assert_close``, ``numpy.testing.assert_allclose``...) becomes ``RT.check_call(...)``, which
  reports the arguments and then makes the call;
- builtins the cell uses (``len``, ``isinstance``, ``sum``...) are taken from a pristine copy, not from
  names the student may have rebound;
- ``RT`` and that copy are *constants* in the compiled code (placeholder strings replaced inside the sandbox
  by :mod:`autograder._driver`), so student code cannot reach them through any namespace.

Operands that are literals in the test source (``torch.tensor([[0.1, 0.2]])``, ``30``, ``atol=1e-4``) are
marked: the judge evaluates those itself and never uses what the student's process reported for them.

The result is a marshalled code object (same interpreter on both sides) plus a table of *sites* (one per
check) and *nodes* (one per sub-expression) that the judge uses to interpret the reported events. The recorder's
method names and the node kinds are :mod:`autograder.protocol`'s; which functions are the course's own checking
functions is the course's profile's (:class:`autograder.course.Profile`).
"""
from __future__ import annotations

import ast
import builtins
import copy
import marshal
import re
from dataclasses import dataclass, field

from .protocol import CallKind, Node

# Checking functions called as statements: the call is made in the student's process (so that a failing
# check stops the cell, as students expect) AND redone by the judge on the reported arguments (besides these, the
# course's own: the profile's ``checker_prefixes``).
ASSERT_FUNCTIONS = {
    "torch.testing.assert_close", "torch.testing.assert_allclose",
    "numpy.testing.assert_allclose", "numpy.testing.assert_array_equal", "numpy.testing.assert_equal",
    "numpy.testing.assert_array_almost_equal", "numpy.testing.assert_almost_equal",
    "numpy.testing.assert_array_less",
}


def is_checking_function(qual: str | None, prefixes: tuple) -> bool:
    """Whether a qualified name is a known checking function: torch's or numpy's testing functions, or the course's
    (its qualified name starts with one of ``prefixes``)."""
    return bool(qual) and (qual in ASSERT_FUNCTIONS or qual.startswith(tuple(prefixes)))

# Predicates inside ``assert`` expressions that the judge can recompute from plain data.
PREDICATES = {
    "torch.allclose", "torch.equal", "torch.is_tensor", "numpy.allclose", "numpy.array_equal",
    "numpy.array_equiv", "math.isclose", "math.isfinite", "math.isnan",
}

# Python names never rewritten to the pristine builtins (they depend on the compiler or the frame).
_KEEP_NAMES = {"super", "__import__", "__build_class__", "__debug__", "__name__", "__doc__", "__file__",
               "__spec__", "__loader__", "__package__", "__builtins__"}
BUILTIN_NAMES = {n for n in dir(builtins) if not n.startswith("__")} - _KEEP_NAMES

_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*$(.*?)^[ \t]*### END HIDDEN TESTS[ \t]*$\n?",
                     re.DOTALL | re.MULTILINE)


def hidden_lines(source: str) -> set[int]:
    """1-based line numbers inside ``### BEGIN/END HIDDEN TESTS`` regions (markers included)."""
    out: set[int] = set()
    for m in _HIDDEN.finditer(source):
        first = source.count("\n", 0, m.start()) + 1
        last = source.count("\n", 0, m.end() - 1 if m.group(0).endswith("\n") else m.end()) + 1
        out.update(range(first, last + 1))
    return out


def strip_hidden(source: str) -> str:
    """The cell as students see it: hidden regions removed (what nbgrader's release does)."""
    return _HIDDEN.sub("", source).rstrip() + "\n"


def python_source(cell_source: str) -> str:
    """IPython cell source -> plain Python (``%magic`` and ``!cmd`` become ``get_ipython()`` calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell_source)


class ImportMap(dict):
    """``{local name: qualified name}`` from the import statements of instructor code."""

    def learn(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    if a.name != "*":
                        self[a.asname or a.name] = f"{node.module}.{a.name}"

    def resolve(self, expr: ast.AST) -> str | None:
        """Qualified name of a ``Name``/``Attribute`` chain, if its root is imported (or a builtin)."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        root = self.get(expr.id)
        if root is None:
            if expr.id in BUILTIN_NAMES and not parts:
                return expr.id
            return None
        return ".".join([root] + parts[::-1])


_TENSOR_CTORS = {"torch.tensor", "torch.as_tensor", "numpy.array", "numpy.asarray", "torch.Size"}


def is_literal(node: ast.AST, imports: ImportMap) -> bool:
    """Whether the judge can evaluate ``node`` by itself: constants, containers of them, tensor/array
    constructors of constants, dtypes. Nothing that touches a name the student could have bound."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, (bytes,)) or len(node.value) < 1 << 20
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(is_literal(e, imports) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k, imports) for k in node.keys) and all(
            is_literal(v, imports) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return is_literal(node.operand, imports)
    if isinstance(node, ast.Attribute):
        q = imports.resolve(node)
        return bool(q) and (q.startswith("torch.") or q.startswith("numpy.")) and q.count(".") == 1 and (
            q.split(".")[1] in _DTYPE_NAMES or q.split(".")[1] in {"pi", "e", "inf", "nan"})
    if isinstance(node, ast.Call):
        q = imports.resolve(node.func)
        return q in _TENSOR_CTORS and all(is_literal(a, imports) for a in node.args) and all(
            k.arg is not None and is_literal(k.value, imports) for k in node.keywords)
    return False


_DTYPE_NAMES = {"float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16",
                "int32", "int64", "long", "int", "short", "uint8", "bool", "complex64", "complex128",
                "cfloat", "cdouble", "bool_", "float_", "int_"}


def evaluate_literal(source: str, imports: dict):
    """Evaluate a literal expression (see :func:`is_literal`) in THIS process, without ``eval``."""
    node = ast.parse(source, mode="eval").body
    imap = ImportMap(imports)

    def ev(n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.List):
            return [ev(e) for e in n.elts]
        if isinstance(n, ast.Tuple):
            return tuple(ev(e) for e in n.elts)
        if isinstance(n, ast.Set):
            return {ev(e) for e in n.elts}
        if isinstance(n, ast.Dict):
            return {ev(k): ev(v) for k, v in zip(n.keys, n.values)}
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else +v
        if isinstance(n, ast.Attribute):
            mod, name = imap.resolve(n).split(".")
            return getattr(__import__(mod), name)
        if isinstance(n, ast.Call):
            q = imap.resolve(n.func)
            mod, name = q.rsplit(".", 1)
            fn = getattr(__import__(mod), name)
            return fn(*[ev(a) for a in n.args], **{k.arg: ev(k.value) for k in n.keywords})
        raise ValueError(f"not a literal: {source}")

    return ev(node)


@dataclass
class Instrumented:
    code: bytes                     # marshal.dumps of the compiled module code
    sites: dict = field(default_factory=dict)   # site id -> {"line", "hidden", "kind", "node"}
    nodes: dict = field(default_factory=dict)   # node id -> template (see _Rewriter)
    # The cell cut at the borders of its hidden regions, in order: {"code": bytes, "hidden": bool, "binds": [names
    # it binds at module level]}. Running the parts one after the other in one namespace is running the cell; the
    # grader sends a hidden part only once the parts before it have passed. One part when the cell has no hidden
    # region, or when a region does not fall between top-level statements (then the part is hidden if any is).
    parts: list = field(default_factory=list)


def _bound_names(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchAs) and node.name:
            out.add(node.name)
    return out


def _singleton(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or node.value is True or node.value is False
                                               or node.value is Ellipsis)


class _IsoWrap(ast.NodeTransformer):
    """Calls that :mod:`autograder.expected` marked (``_ag_iso``: they may run student code in a hidden part) become
    ``RT.isolated(lambda: <call>)``: the random number generators are put back after them."""

    def __init__(self, recorder_method):
        self.recorder_method = recorder_method

    def visit_Call(self, node):
        self.generic_visit(node)
        return self.wrap(node)

    def wrap(self, node):
        if getattr(node, "_ag_iso", False) and not any(
                isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(node)):
            node._ag_iso = False   # wrapped once
            return ast.copy_location(ast.Call(func=self.recorder_method("isolated"), args=[_Rewriter._thunk(node)], keywords=[]), node)
        return node

    def visit_ClassDef(self, node):   # a lambda in a class body does not see the class's names: left alone
        return node

    def visit_Lambda(self, node):
        self.generic_visit(node)
        return node


class _Rewriter(ast.NodeTransformer):
    """``mode``: "student" (the copy that runs in the student's process: hidden parts have no reference block and
    no literal or reference operand, and their checks only report), "reference" (the instructor's run: everything,
    reference blocks fingerprinted before they run). ``recorder``: the placeholder constant that stands for the
    recorder; ``checkers``: the course's checking functions' prefixes."""

    def __init__(self, key: str, recorder: str, imports: ImportMap, hidden: set[int], mode: str = "student",
                 checkers: tuple = ()):
        self.key, self.recorder, self.imports, self.hidden = key, recorder, imports, hidden
        self.mode, self.checkers = mode, tuple(checkers)
        self.sites: dict = {}
        self.nodes: dict = {}
        self.class_depth = 0
        self.n = 0
        self.elide = False   # inside a check of a hidden part, in the student's copy
        self.iso = _IsoWrap(self._rt)

    # ---- helpers
    def _rt(self, method: str) -> ast.expr:
        """``RT.method``: a method of the recorder (autograder.protocol.RECORDER_METHODS), on its constant."""
        return ast.Attribute(value=ast.Constant(self.recorder), attr=method, ctx=ast.Load())

    @staticmethod
    def _thunk(expr: ast.expr) -> ast.Lambda:
        return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                             kwarg=None, defaults=[]), body=expr)

    def _nid(self) -> str:
        self.n += 1
        return f"{self.key}:n{self.n}"

    def _lit(self, node: ast.expr):
        return ast.unparse(node) if is_literal(node, self.imports) else None

    def _ref(self, node: ast.expr) -> bool:
        return getattr(node, "_ag_kind", None) == "ref"

    def _value(self, node: ast.expr) -> ast.expr:
        """What the student's process evaluates for an operand: in a hidden part's check, a literal or a reference
        value is not there at all (``RT.ph``: the judge has it), the rest with its student calls wrapped."""
        if self.elide and not isinstance(node, ast.Starred) and (
                self._ref(node) or (self._lit(node) is not None and not _singleton(node))):
            return self._rt("placeholder")
        return self.iso.visit(node)

    def _call_parts(self, call: ast.Call):
        args = ast.Tuple(elts=[self._value(a) for a in call.args], ctx=ast.Load())
        keys, values = [], []
        for k in call.keywords:
            keys.append(ast.Constant(k.arg) if k.arg is not None else None)
            values.append(self._value(k.value))
        kw = ast.Dict(keys=keys, values=values)
        lits_args = [None if isinstance(a, ast.Starred) else self._lit(a) for a in call.args]
        lits_kw = {k.arg: self._lit(k.value) for k in call.keywords if k.arg is not None}
        refs_args = [not isinstance(a, ast.Starred) and self._ref(a) for a in call.args]
        refs_kw = {k.arg: self._ref(k.value) for k in call.keywords if k.arg is not None}
        return args, kw, lits_args, lits_kw, refs_args, refs_kw

    def _node(self, expr: ast.expr) -> ast.expr:
        """An expression that evaluates ``expr`` in the student's process and returns a report node."""
        nid = self._nid()
        if isinstance(expr, ast.BoolOp):
            method = "and_" if isinstance(expr.op, ast.And) else "or_"
            self.nodes[nid] = {"t": Node.AND if method == "and_" else Node.OR, "n": len(expr.values)}
            items = ast.Tuple(elts=[self._thunk(self._node(v)) for v in expr.values], ctx=ast.Load())
            return ast.Call(func=self._rt(method), args=[ast.Constant(nid), items], keywords=[])
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            self.nodes[nid] = {"t": Node.NOT}
            return ast.Call(func=self._rt("not_"), args=[ast.Constant(nid), self._thunk(self._node(expr.operand))],
                            keywords=[])
        if isinstance(expr, ast.Compare):
            ops = [type(o).__name__ for o in expr.ops]
            operands = [expr.left] + list(expr.comparators)
            self.nodes[nid] = {"t": Node.CMP, "ops": ops, "lits": [self._lit(o) for o in operands],
                               "refs": [self._ref(o) for o in operands], "src": [ast.unparse(o)[:200] for o in operands]}
            thunks = ast.Tuple(elts=[self._thunk(self._value(o)) for o in operands], ctx=ast.Load())
            return ast.Call(func=self._rt("compare"),
                            args=[ast.Constant(nid), ast.Tuple(elts=[ast.Constant(o) for o in ops], ctx=ast.Load()),
                                  thunks], keywords=[])
        if isinstance(expr, ast.Call):
            qual = self.imports.resolve(expr.func)
            if qual is None and isinstance(expr.func, ast.Name) and expr.func.id == "isinstance":
                qual = "isinstance"
            plain = not any(isinstance(a, ast.Starred) for a in expr.args) and all(k.arg for k in expr.keywords)
            if qual == "isinstance" and len(expr.args) == 2 and not expr.keywords and plain:
                self.nodes[nid] = {"t": Node.PRIM, "src": ast.unparse(expr)[:200]}
                return ast.Call(func=self._rt("isinstance_"),
                                args=[ast.Constant(nid), self._thunk(self.iso.visit(expr.args[0])),
                                      self._thunk(self.iso.visit(expr.args[1]))], keywords=[])
            if qual in PREDICATES:
                args, kw, la, lk, ra, rk = self._call_parts(expr)
                self.nodes[nid] = {"t": Node.CALL, "kind": CallKind.PREDICATE, "fn": qual, "lits_args": la, "lits_kw": lk,
                                   "refs_args": ra, "refs_kw": rk, "src": ast.unparse(expr)[:200]}
                return ast.Call(func=self._rt("predicate"),
                                args=[ast.Constant(nid), ast.Constant(qual), self._thunk(expr.func),
                                      self._thunk(args), self._thunk(kw)], keywords=[])
        self.nodes[nid] = {"t": Node.VAL, "lit": self._lit(expr), "ref": self._ref(expr), "src": ast.unparse(expr)[:200]}
        return ast.Call(func=self._rt("value"), args=[ast.Constant(nid), self._thunk(self._value(expr))], keywords=[])

    def _site(self, node: ast.stmt, kind: str, root: str) -> str:
        sid = f"{self.key}:s{len(self.sites) + 1}"
        self.sites[sid] = {"line": node.lineno, "hidden": node.lineno in self.hidden, "kind": kind, "node": root,
                           "src": ast.unparse(node)[:300]}
        return sid

    # ---- visitors
    def visit_ClassDef(self, node):
        self.class_depth += 1
        node.body = [self.visit(s) for s in node.body]
        self.class_depth -= 1
        return node

    def visit_FunctionDef(self, node):
        depth, self.class_depth = self.class_depth, 0
        self.generic_visit(node)
        self.class_depth = depth
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _hidden_check(self, node: ast.stmt) -> bool:
        """A check of a hidden part, in the student's copy: it only reports (the judge decides, with the operands
        that this copy does not have)."""
        return self.mode == "student" and getattr(node, "_ag_hidden", False)

    def visit_Assert(self, node: ast.Assert):
        if self.class_depth or any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
                                   for n in ast.walk(node)):
            return node  # cannot be wrapped in lambdas without changing its meaning: left as it is
        start = self.n
        self.elide = self._hidden_check(node)
        built = self._node(node.test)
        self.elide = False
        root = f"{self.key}:n{start + 1}"
        sid = self._site(node, "assert", root)
        if self._hidden_check(node):
            call = ast.Call(func=self._rt("hidden_check"), args=[ast.Constant(sid), self._thunk(built)], keywords=[])
        else:
            msg = self._thunk(self.iso.visit(node.msg)) if node.msg is not None else ast.Constant(None)
            call = ast.Call(func=self._rt("check"), args=[ast.Constant(sid), self._thunk(built), msg], keywords=[])
        return ast.copy_location(ast.Expr(value=call), node)

    def visit_Expr(self, node: ast.Expr):
        call = node.value
        if self.class_depth or not isinstance(call, ast.Call):
            return self.generic_visit(node)
        qual = self.imports.resolve(call.func)
        if is_checking_function(qual, self.checkers):
            nid = self._nid()
            self.elide = self._hidden_check(node)
            args, kw, la, lk, ra, rk = self._call_parts(call)
            self.elide = False
            self.nodes[nid] = {"t": Node.CALL, "kind": CallKind.ASSERT, "fn": qual, "lits_args": la, "lits_kw": lk,
                               "refs_args": ra, "refs_kw": rk, "src": ast.unparse(call)[:200]}
            sid = self._site(node, "call", nid)
            method = "hidden_check_call" if self._hidden_check(node) else "check_call"
            new = ast.Call(func=self._rt(method),
                           args=[ast.Constant(sid), ast.Constant(nid), ast.Constant(qual), self._thunk(call.func),
                                 self._thunk(args), self._thunk(kw)], keywords=[])
            return ast.copy_location(ast.Expr(value=new), node)
        return self.generic_visit(node)

    def visit_With(self, node: ast.With):
        block = getattr(node, "_ag_block", None)
        if block is None:
            return self.generic_visit(node)
        # a reference block of a hidden part: its inputs are fingerprinted in both runs; it runs only in the
        # reference run (the student's copy has nothing of it)
        inputs = ast.Tuple(elts=[ast.Name(n, ast.Load()) for n in block["inputs"]], ctx=ast.Load())
        mark = ast.copy_location(ast.Expr(value=ast.Call(
            func=self._rt("reference_block"), args=[ast.Constant(block["id"]),
                                             ast.Tuple(elts=[ast.Constant(n) for n in block["inputs"]], ctx=ast.Load()),
                                             self._thunk(inputs)], keywords=[])), node)
        if self.mode == "student":
            return mark
        return [mark, self.generic_visit(node)]

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if self.class_depth:
            return node
        return self.iso.wrap(node)


class _Builtins(ast.NodeTransformer):
    def __init__(self, placeholder: str, keep: set[str]):
        self.placeholder, self.keep = placeholder, keep

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in BUILTIN_NAMES and node.id not in self.keep:
            return ast.copy_location(ast.Attribute(value=ast.Constant(self.placeholder), attr=node.id,
                                                   ctx=ast.Load()), node)
        return node


def compile_cell(source: str, filename: str, *, key: str, recorder_placeholder: str, builtins_placeholder: str,
                 imports: ImportMap, instructor_bound: set[str], instrument: bool,
                 original_source: str | None = None, tree: ast.Module | None = None,
                 mode: str = "student", checkers: tuple = ()) -> Instrumented:
    """Compile one instructor cell (already plain Python) for the sandbox; instrument its checks if asked.

    ``tree``: the cell already parsed and annotated by :func:`autograder.expected.analyse` (it is copied, not
    changed); ``mode``: the student's copy or the reference run's (see :class:`_Rewriter`); ``checkers``: the
    course's checking functions' prefixes (:class:`autograder.course.Profile`)."""
    tree = copy.deepcopy(tree) if tree is not None else ast.parse(source, filename=filename)
    hidden = hidden_lines(original_source if original_source is not None else source)
    result = Instrumented(code=b"")
    if instrument:
        rw = _Rewriter(key, recorder_placeholder, imports, hidden, mode, checkers)
        tree = rw.visit(tree)
        result.sites, result.nodes = rw.sites, rw.nodes
        keep = _bound_names(tree) | set(instructor_bound)
        tree = _Builtins(builtins_placeholder, keep).visit(tree)
    tree = ast.fix_missing_locations(tree)
    code = compile(tree, filename, "exec", dont_inherit=True)
    result.code = marshal.dumps(code)
    result.parts = [{"code": result.code, "hidden": bool(hidden), "binds": []}]
    groups = _split_hidden(tree, hidden) if hidden else None
    if groups and len(groups) > 1:
        result.parts = []
        for is_hidden, body in groups:
            mod = ast.Module(body=body, type_ignores=[])
            result.parts.append({"code": marshal.dumps(compile(mod, filename, "exec", dont_inherit=True)),
                                 "hidden": is_hidden, "binds": sorted({n for stmt in body for n, _ in module_bindings(stmt)})})
    return result


def _split_hidden(tree: ast.Module, hidden: set) -> list | None:
    """``[(hidden?, statements)]``: consecutive top-level statements grouped by whether they lie in a hidden
    region; None when a statement lies partly in one (a region inside an indented block)."""
    groups: list = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        lines = set(range(first, (stmt.end_lineno or stmt.lineno) + 1))
        inside = lines & hidden
        if inside and inside != lines:
            return None
        flag = bool(inside)
        if groups and groups[-1][0] == flag:
            groups[-1][1].append(stmt)
        else:
            groups.append((flag, [stmt]))
    return groups


def module_bindings(node: ast.AST):
    """``(name, line)`` for every name that ``node`` binds in the module's namespace (not inside its functions,
    classes, lambdas or comprehensions: a function or class binds its own name, and its decorators are read here)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, node.lineno
        for d in node.decorator_list:
            yield from module_bindings(d)
        return
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id, node.lineno
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for a in node.names:
            if a.name != "*":
                yield (a.asname or a.name).split(".")[0], node.lineno
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs)) and node.name:
        yield node.name, node.lineno
    for child in ast.iter_child_nodes(node):
        yield from module_bindings(child)

def bound_names(source: str) -> set[str]:
    try:
        return _bound_names(ast.parse(source))
    except SyntaxError:
        return set()


def clone(nodes: dict) -> dict:
    return copy.deepcopy(nodes)


def hidden_only_names(source: str) -> set[str]:
    """Names that a test cell binds at module level ONLY inside its hidden regions (its helpers, its loop
    variables, its cases): what a student's notebook never has, and what the driver removes from the
    namespace after the cell (later tests still get them back, as in nbgrader)."""
    hidden = hidden_lines(source)
    if not hidden:
        return set()
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return set()
    at: dict[str, set] = {}
    for name, line in module_bindings(tree):
        at.setdefault(name, set()).add(line in hidden)
    return {name for name, where in at.items() if where == {True}}
