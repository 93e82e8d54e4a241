"""Expected values of hidden tests are never in the student's process: the rules a hidden part follows, checked
before anyone is graded, and how each of its statements is treated in the student's copy.

A hidden part computes its expected values inside ``with reference():`` blocks (the course's reference marker, see
:class:`autograder.course.Profile`).
The grader runs the instructor's notebook with those blocks (the reference run: no student code ever runs there) and
records every check's operands. The copy of a hidden part that runs in the student's process has no reference block,
no literal operand and no expected value: each check operand that reads what a reference block bound, and each
literal, is taken by the judge from the reference run or from the instructor's source, outside the student's process.
So, while student code runs, nothing it can reach (globals, frames and their locals, closures, ``gc``, modules, the
command pipe) holds an expected value of a hidden test, or a function that computes one.

For the substitution to be right, the student's run must hand the student's code the inputs that the reference run
handed the reference solution. The random number generators are put back after every call into the student's code in
a hidden part (inputs never depend on what the student's code draws), reference blocks put them back too (what they
draw changes nothing that follows, in Jupyter as in both runs), and the values each reference block reads are
fingerprinted in both runs: the judge fails the test when they differ.

The rules (:func:`analyse`), for hidden parts:

1. a name bound in a reference block is read only in the compared arguments of checks (``assert_close(got, want)``,
   ``assert got == want[0]``) or in another reference block: never given to the student's code, never in a
   condition, a loop, a label or an assert's message;
2. a reference block reads only the instructor's values: no student-defined name, nothing the student's code returned
   or was handed (it may have changed it);
3. every compared argument of a check is a literal, reads a reference value, or reads something the student's code
   made or touched: an expected value computed outside a reference block is refused;
4. a function defined in a hidden part outside reference blocks is not called in a check's arguments, and hidden
   parts call the course's checking functions (or ``assert``) themselves, never a helper of the notebook that
   checks (it could not be handed the reference values);
5. a check in a hidden part is one the instrumenter can rewrite (not inside a class body, no ``:=``).

"Touched by the student's code" is tracked name by name through the notebook's instructor cells in order: the names
that solution cells define (and any name no instructor cell defines) are the student's; a name bound from an
expression that reads one of them is too; and every name handed to a call that may run student code (a student's
function, a method of a student's object, anything given a student's value) may have been changed by it.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from .course import Profile
from .instrument import PREDICATES, ImportMap, is_checking_function, is_literal, module_bindings

_BUILTINS = set(dir(builtins))
# builtins that never call back into the objects they are given in a way that could change them
_INERT_CALLS = {"len", "isinstance", "type", "range", "zip", "enumerate", "list", "tuple", "dict", "set", "sorted",
                "reversed", "min", "max", "sum", "abs", "round", "int", "float", "str", "bool", "repr", "print",
                "any", "all", "map", "filter", "id", "hash", "format", "getattr", "hasattr", "iter", "next"}
# keyword arguments of checking functions that label a check rather than carry a value it compares
_LABEL_KWARGS = {"name", "hint", "unit", "what", "atol", "rtol", "ndim", "of"}


class RuleError(Exception):
    """A hidden part breaks the rules (the message says which cell, line and rule)."""


def pos(node: ast.AST) -> tuple:
    return (type(node).__name__, getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
            getattr(node, "end_lineno", 0), getattr(node, "end_col_offset", 0))


def is_reference_block(node: ast.AST, imports: ImportMap, marker: str) -> bool:
    """Whether ``node`` is ``with <marker>():`` (the course's ``reference``, by its qualified name)."""
    if not isinstance(node, ast.With) or len(node.items) != 1 or node.items[0].optional_vars is not None:
        return False
    call = node.items[0].context_expr
    return (bool(marker) and isinstance(call, ast.Call) and not call.args and not call.keywords
            and imports.resolve(call.func) == marker)


def checker(call: ast.AST, imports: ImportMap, checkers: tuple) -> str | None:
    """The qualified name of a known checking function that ``call`` calls, if it does (``checkers``: the course's
    checking functions' prefixes)."""
    if not isinstance(call, ast.Call):
        return None
    q = imports.resolve(call.func)
    return q if is_checking_function(q, checkers) else None


_SIGNATURES: dict = {}


def _label_positions(qualname: str) -> set[int]:
    """Positions of a checking function's parameters that label a check (``name``, ``what``...), from its
    signature: ``assert_shape(x, shape, "outputs")`` compares ``x`` with ``shape`` and is labelled "outputs"."""
    if qualname not in _SIGNATURES:
        import importlib
        import inspect

        out: set[int] = set()
        mod, _, name = qualname.rpartition(".")
        try:
            fn = getattr(importlib.import_module(mod), name)
            params = [p for p in inspect.signature(fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            out = {i for i, p in enumerate(params) if p.name in _LABEL_KWARGS or p.name in ("msg", "err_msg")}
        except (ImportError, AttributeError, TypeError, ValueError):
            pass
        _SIGNATURES[qualname] = out
    return _SIGNATURES[qualname]


def check_operands(stmt: ast.stmt, imports: ImportMap, checkers: tuple) -> tuple[list, list, list]:
    """``(compared, labels, messages)``: the leaf expressions of a check statement as the instrumenter reports them
    (see :class:`autograder.instrument._Rewriter`), split into the values it compares, its labels (``name=``,
    ``atol=``...) and an assert's message. Empty lists for a statement that is not a check."""
    compared: list = []
    labels: list = []

    def leaves(e):
        if isinstance(e, ast.BoolOp):
            for v in e.values:
                leaves(v)
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            leaves(e.operand)
        elif isinstance(e, ast.Compare):
            compared.extend([e.left] + list(e.comparators))
        elif isinstance(e, ast.Call) and (
                (isinstance(e.func, ast.Name) and e.func.id == "isinstance" and len(e.args) == 2 and not e.keywords)
                or imports.resolve(e.func) in PREDICATES):
            compared.extend(a for a in e.args)
            for k in e.keywords:
                (labels if k.arg in _LABEL_KWARGS else compared).append(k.value)
        else:
            compared.append(e)

    if isinstance(stmt, ast.Assert):
        leaves(stmt.test)
        return compared, labels, [stmt.msg] if stmt.msg is not None else []
    qual = checker(stmt.value, imports, checkers) if isinstance(stmt, ast.Expr) else None
    if qual:
        call = stmt.value
        named = _label_positions(qual)
        for i, a in enumerate(call.args):
            (labels if i in named else compared).append(a)
        for k in call.keywords:
            (labels if k.arg in _LABEL_KWARGS or k.arg in ("msg", "err_msg") else compared).append(k.value)
        return compared, labels, []
    return [], [], []


class _Reads(ast.NodeVisitor):
    """Names an expression or statement reads from the enclosing (module) scope: names bound inside its own
    comprehensions, lambdas and functions are theirs."""

    def __init__(self):
        self.names: set[str] = set()
        self.local: list[set] = [set()]

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and not any(node.id in s for s in self.local):
            self.names.add(node.id)

    def _scope(self, bound, children):
        self.local.append(set(bound))
        for c in children:
            self.visit(c)
        self.local.pop()

    def _comp(self, node, elts):
        bound = set()
        for g in node.generators:
            bound |= {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        # the first iterable is read in the enclosing scope
        self.visit(node.generators[0].iter)
        rest = [g.target for g in node.generators] + [x for g in node.generators[1:] for x in [g.iter]]
        rest += [c for g in node.generators for c in g.ifs] + elts
        self._scope(bound, rest)

    def visit_ListComp(self, node):
        self._comp(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._comp(node, [node.key, node.value])

    def visit_Lambda(self, node):
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(d)
        self._scope(_arg_names(node.args), [node.body])

    def visit_FunctionDef(self, node):
        for d in node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(d)
        bound = _arg_names(node.args) | _assigned(node.body)
        self._scope(bound, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        for d in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(d)
        self._scope(_assigned(node.body), node.body)


def _arg_names(args: ast.arguments) -> set:
    out = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    for a in (args.vararg, args.kwarg):
        if a is not None:
            out.add(a.arg)
    return out


def _assigned(body: list) -> set:
    """Names a function body binds locally (not those it declares global)."""
    out, glob = set(), set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                out |= {(a.asname or a.name).split(".")[0] for a in n.names}
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                glob |= set(n.names)
    return out - glob


class _CalleeReads(_Reads):
    """The module names read by the callee expressions of the calls inside a node (``f`` in ``f(x)``, ``m`` in
    ``m.forward(x)``), not counting names local to its functions, lambdas and comprehensions."""

    def __init__(self):
        super().__init__()
        self.callees: set[str] = set()

    def visit_Call(self, node):
        inner = _Reads()
        inner.local = [set().union(*self.local)]
        inner.visit(node.func)
        self.callees |= inner.names
        self.generic_visit(node)


def callee_reads(node: ast.AST) -> set[str]:
    r = _CalleeReads()
    r.visit(node)
    return r.callees


def reads(node: ast.AST) -> set[str]:
    r = _Reads()
    r.visit(node)
    return r.names


def binds(stmt: ast.AST) -> set[str]:
    """Module-level names a statement binds (not inside its functions, classes, lambdas or comprehensions)."""
    return {name for name, _line in module_bindings(stmt)}

def _is_check_helper(fn: ast.AST, imports: ImportMap, checkers: tuple) -> bool:
    return any(isinstance(n, ast.Assert) or checker(n, imports, checkers) for n in ast.walk(fn))


@dataclass
class Cell:
    """One instructor cell of a notebook, as :func:`analyse` reads it."""

    gid: str
    kind: str                    # "setup" | "solution" | "test"
    tree: ast.Module | None      # None for a solution cell (only the names it binds matter)
    hidden: set = field(default_factory=set)   # hidden line numbers (test cells)
    bound: set = field(default_factory=set)    # names a solution cell binds


class _Analysis:
    def __init__(self, imports: ImportMap, profile: Profile):
        self.imports = imports
        self.checkers, self.marker = tuple(profile.checker_prefixes), profile.reference_marker
        self.made: set[str] = set()         # names that hold what the student's code defined or made
        self.handed: set[str] = set()       # instructor values handed to the student's code (it may change them)
        self.hidden_bound: set[str] = set()  # names that a hidden part last bound, outside reference blocks
        self.instructor: set[str] = set()   # names some instructor cell binds
        self.refnames: set[str] = set()     # names bound only inside reference blocks (hidden parts)
        self.hidden_defs: set[str] = set()  # functions a hidden part defines outside reference blocks
        self.helpers: set[str] = set()      # functions of the notebook whose body checks something
        self.def_reads: dict[str, set] = {}  # function name -> module names its body reads
        self.errors: list[str] = []
        self.blocks = 0
        self.cell: Cell | None = None
        self.in_hidden = False

    # ---- what a name holds
    def student(self, name: str) -> bool:
        return name in self.made or (name not in self.instructor and name not in _BUILTINS
                                        and name not in self.imports and name not in self.refnames)

    def touched(self, names: set, seen: set | None = None, made: bool = False) -> bool:
        """Whether any of these names holds (or, for a function of the notebook, reads) a student's value; with
        ``made``, only what the student's code defined or made (not the instructor's values it was handed)."""
        seen = set() if seen is None else seen
        for n in names:
            if n in seen:
                continue
            seen.add(n)
            if self.student(n) or (not made and n in self.handed) or (
                    n in self.def_reads and self.touched(self.def_reads[n], seen, made)):
                return True
        return False

    def error(self, node: ast.AST, rule: int, text: str) -> None:
        msg = f"test cell {self.cell.gid}, line {getattr(node, 'lineno', '?')} (hidden part, rule {rule}): {text}"
        if msg not in self.errors:
            self.errors.append(msg)

    def hidden(self, node: ast.AST) -> bool:
        return self.cell is not None and self.cell.kind == "test" and getattr(node, "lineno", 0) in self.cell.hidden

    # ---- statements
    def run(self, cells: list) -> None:
        for cell in cells:
            self.cell = cell
            if cell.kind == "solution":
                self.made |= cell.bound
                self.instructor -= cell.bound
                continue
            self.block(cell.tree.body)

    def block(self, stmts: list) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:  # noqa: C901 - one case per kind of statement
        hidden = self.hidden(s)
        self.in_hidden = hidden
        if is_reference_block(s, self.imports, self.marker):
            if hidden:
                self.reference_block(s)
                return
            self.block(s.body)
            return
        compared, labels, messages = check_operands(s, self.imports, self.checkers)
        if compared or labels or messages:
            self.check(s, compared, labels, messages, hidden)
            return
        used = reads(s)
        # what this statement itself reads (for a compound statement, its header: its body is checked statement by
        # statement) may not be a reference value
        header = {ast.For: lambda: [s.iter, s.target], ast.AsyncFor: lambda: [s.iter, s.target],
                  ast.While: lambda: [s.test], ast.If: lambda: [s.test], ast.Try: lambda: [],
                  ast.With: lambda: [i.context_expr for i in s.items],
                  ast.AsyncWith: lambda: [i.context_expr for i in s.items]}.get(type(s))
        own = set().union(*(reads(h) for h in header())) if header is not None else used
        bad = own & self.refnames
        if bad:
            self.error(s, 1, f"`{sorted(bad)[0]}` is bound in a reference block, so it exists only in the reference "
                             "run: read it only in the compared arguments of checks (assert_close(got, "
                             f"{sorted(bad)[0]}...), assert got == {sorted(bad)[0]})")
        if hidden:
            for call in (n for n in ast.walk(s) if isinstance(n, ast.Call)):
                given = set().union(*(reads(a) for a in list(call.args) + [k.value for k in call.keywords]))
                if isinstance(call.func, ast.Name) and call.func.id in self.helpers and given & self.hidden_defs:
                    self.error(call, 4, f"`{call.func.id}` checks values itself and is given what a function of the "
                                        "hidden part computes: compute expected values in a reference block and compare "
                                        "them with the course's checking functions (or assert)")
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.def_reads[s.name] = reads(s)
            if _is_check_helper(s, self.imports, self.checkers):
                self.helpers.add(s.name)
            else:
                self.helpers.discard(s.name)
            self.bind({s.name}, None)
            (self.hidden_defs.add if hidden else self.hidden_defs.discard)(s.name)
            return
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self.mark_calls(s.iter, hidden)
            src = self.kind_of(reads(s.iter))
            for _ in range(2):   # twice: what the body taints holds in the next round too
                self.bind(binds(s.target), src)
                self.block(s.body)
            self.block(s.orelse)
            return
        if isinstance(s, ast.While):
            self.mark_calls(s.test, hidden)
            for _ in range(2):
                self.block(s.body)
            self.block(s.orelse)
            return
        if isinstance(s, ast.If):
            self.mark_calls(s.test, hidden)
            self.block(s.body)
            self.block(s.orelse)
            return
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.mark_calls(item.context_expr, hidden)
                if item.optional_vars is not None:
                    self.bind(binds(item.optional_vars), self.kind_of(reads(item.context_expr)))
            self.block(s.body)
            return
        if isinstance(s, ast.Try):
            self.block(s.body)
            for h in s.handlers:
                if h.name:
                    self.bind({h.name}, "made")
                self.block(h.body)
            self.block(s.orelse)
            self.block(s.finalbody)
            return
        # a simple statement
        self.mark_calls(s, hidden)
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = s.value if s.value is not None else ast.Constant(None)
            used = reads(value) | (reads(s.target) if isinstance(s, ast.AugAssign) else set())
            # what is computed from an input the student's code was handed is the instructor's computation
            src = "made" if self.touched(used, made=True) else None
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                if isinstance(t, (ast.Attribute, ast.Subscript)):   # x.a = ... / x[i] = ...: x changes
                    if src:
                        self.bind(reads(t), src, rebind=False)
                else:
                    self.bind(binds(t), src)
            return
        self.bind(binds(s), self.kind_of(used))

    def kind_of(self, names: set) -> str | None:
        """What a value computed from these names is: "made" (from what the student's code made), "handed" (from
        an instructor value the student's code was handed), or None (the instructor's alone)."""
        if self.touched(names, made=True):
            return "made"
        return "handed" if self.touched(names) else None

    def bind(self, names: set, kind: str | None, rebind: bool = True) -> None:
        """Names bound to (``rebind``) or changed into (not ``rebind``: an object handed to, or changed through,
        the student's code) a value of that ``kind``."""
        hidden = self.cell is not None and self.cell.kind == "test" and self.in_hidden
        for n in names:
            if rebind:
                self.made.discard(n)
                self.handed.discard(n)
                self.instructor.add(n)
                self.refnames.discard(n)
                (self.hidden_bound.add if hidden else self.hidden_bound.discard)(n)
            if kind == "made":
                self.made.add(n)
                self.handed.discard(n)
            elif kind == "handed" and n not in self.made:
                self.handed.add(n)

    def mark_calls(self, node: ast.AST, hidden: bool) -> None:
        """Calls that may run student code: in a hidden part they run with the random number generators put back
        afterwards (``_ag_iso``); whatever they are handed may come back changed (tainted)."""
        for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)]:
            if checker(call, self.imports, self.checkers):
                continue
            fn_reads = reads(call.func)
            arg_reads = set()
            for a in list(call.args) + [k.value for k in call.keywords]:
                arg_reads |= reads(a)
            if not (self.touched(fn_reads) or self.touched(arg_reads)):
                continue
            if hidden:
                call._ag_iso = True
            if isinstance(call.func, ast.Name) and call.func.id in _INERT_CALLS:
                continue
            base = call.func.value if isinstance(call.func, ast.Attribute) else None
            handed = arg_reads | (reads(base) if base is not None else set())
            self.bind({n for n in handed if n in self.instructor and n not in self.imports}, "handed", rebind=False)

    def reference_block(self, s: ast.With) -> None:
        self.blocks += 1
        body = ast.Module(body=s.body, type_ignores=[])
        bound = set()
        for stmt in s.body:
            bound |= binds(stmt)
        # read before bound inside the block: its inputs, fingerprinted in both runs (the judge fails the test when
        # they differ: the student's code changed one, or drew other random numbers)
        free = reads(body) - bound
        called = sorted(n for n in callee_reads(body) - bound if self.touched({n}, made=True))
        if called:
            self.error(s, 2, f"the reference block calls `{called[0]}` (or a method of it), the student's code (in "
                             "Jupyter and nbgrader the expected values would be the student's own): compute them with "
                             "the instructor's code, e.g. a module the block builds and fills with "
                             "deterministic_weights_(ref, by_name=True)")
        inputs = sorted(n for n in free if n not in self.refnames and n not in self.imports and n not in _BUILTINS)
        s._ag_block = {"id": f"{self.cell.gid}:r{self.blocks}@{s.lineno}", "inputs": inputs}
        for n in ast.walk(body):
            if isinstance(n, ast.stmt) and any(check_operands(n, self.imports, self.checkers)):
                self.error(n, 1, "a check inside a reference block never runs in the student's copy: check after "
                                 "the block")
                break
        for stmt in s.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.def_reads[stmt.name] = reads(stmt)
        self.refnames |= bound
        self.instructor |= bound
        self.made -= bound
        self.handed -= bound
        self.hidden_bound -= bound
        self.hidden_defs -= bound

    def check(self, s: ast.stmt, compared: list, labels: list, messages: list, hidden: bool) -> None:
        if hidden and isinstance(s, ast.Assert) and any(
                isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(s)):
            self.error(s, 5, "this assert cannot be rewritten to report its operands (it uses := or yield)")
        for m in messages:
            if reads(m) & self.refnames:
                self.error(s, 1, "an assert's message may not read a reference value (messages are made in the "
                                 "student's process)")
        for e in labels:
            if reads(e) & self.refnames:
                self.error(e, 1, "a check's label or tolerance may not read a reference value")
        for e in compared:
            used = reads(e)
            if hidden and used & self.hidden_defs:
                self.error(e, 4, f"`{sorted(used & self.hidden_defs)[0]}` is defined in a hidden part outside a "
                                 "reference block, where the student's code can call it: define it inside the "
                                 "reference block that computes the expected values")
            if used & self.refnames:
                if not hidden:
                    self.error(e, 1, "a reference value is read in a visible part")
                e._ag_kind = "ref"
                if isinstance(s, ast.Assert) and self._identity_or_type(s.test, e):
                    self.error(e, 1, "a reference value cannot be compared with `is` or isinstance() (it is a copy "
                                     "from another process)")
            elif is_literal(e, self.imports):
                e._ag_kind = "lit"
            else:
                e._ag_kind = "val"
                if hidden and not isinstance(e, ast.JoinedStr) and not self.student_side(e, used):
                    self.error(e, 3, f"`{ast.unparse(e)[:80]}` is an expected value computed in the student's "
                                     "process: compute it in a `with reference():` block (or write it as a literal)")
        if hidden:
            s._ag_hidden = True
        self.mark_calls(s, hidden)

    def student_side(self, e: ast.expr, used: set) -> bool:
        """Whether a compared operand of a hidden check may be evaluated in the student's process: it is computed
        when the check runs (after the student's code it calls has returned) from what the student's code made or
        was handed, or from values of visible cells. Not: a value that the hidden part computed beforehand outside a
        reference block (an expected value, waiting where the student's code could read it), nor a constant
        expression (its constants are in the student's copy). The inputs of a call into the student's code inside
        the operand (``model(x)``) are inputs, not expected values."""
        if not used:
            return False
        inputs = set()
        for call in (n for n in ast.walk(e) if isinstance(n, ast.Call)):
            if self.touched(reads(call.func), made=True):
                for a in list(call.args) + [k.value for k in call.keywords]:
                    inputs |= reads(a)
        own = {n for n in used - inputs if n in self.hidden_bound and not self.touched({n})}
        return not own

    @staticmethod
    def _identity_or_type(test: ast.expr, e: ast.expr) -> bool:
        for n in ast.walk(test):
            if isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops) and (
                    e is n.left or e in n.comparators):
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "isinstance" and e in n.args:
                return True
        return False


def analyse(cells: list, imports: ImportMap, profile: Profile) -> list[str]:
    """Check the rules over a notebook's instructor cells (in order), annotating the trees of its test cells for the
    instrumenter: ``_ag_kind`` ("lit" | "ref" | "val") on the compared operands of checks, ``_ag_iso`` on calls of
    hidden parts that may run student code, ``_ag_block`` ({"id", "inputs"}) on the reference blocks of hidden
    parts, ``_ag_hidden`` on the checks of hidden parts. Returns the rules broken, as messages for the instructor.
    ``profile``: the course's checking functions and reference marker."""
    a = _Analysis(imports, profile)
    a.run(cells)
    return a.errors
