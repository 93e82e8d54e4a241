"""Where a student's values first go wrong: the variables of each notebook function, compared with the reference's.

While a visible test runs, :class:`Recorder` follows the FIRST call of each of the student's notebook functions per
test line (and per shapes of what it was given): what it was given, the value each variable gets where it is first
bound (and, for one bound again, at the return) and its result. ``python -m autograder.edit_hints`` records the same
of the reference solution, as fingerprints keyed by hashes (:func:`seqcourse.hints.value_key`: nothing of the
reference's code or values can be read back). When a check finds wrong values and no cause
(:func:`seqcourse.checks.diagnose`), :func:`first_difference` names the innermost call that was given the same inputs
as the reference's and returned something else, and in it the first variable (in the order they were bound) whose
value is not the reference's variable of the same name, with the line that bound it: where the values go wrong. A
variable right where first bound and wrong at the end names what a loop carries. Variables of another shape, or
names the reference does not have, are not compared (another valid bookkeeping says nothing); a call given other
inputs than the reference's is not blamed (the mistake is before it); a call that returns the reference's result is
not blamed for its own bookkeeping.

Recording is a trace function (``sys.settrace``) that does nothing but for calls of functions defined in notebook
cells, and follows only the first of each line by line; :func:`start` and :func:`stop` install it around a test
cell's run, from the IPython events that :func:`seqcourse.checks.explain_errors` registers (Jupyter and ``nbgrader
autograde``). The class grader redoes each check in its own process, away from the student's variables: its
feedback names no variable.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import linecache
import re
import sys

import torch

from seqcourse import hints, pysource, rearrange

MAX_CALLS = 200          # calls kept per test line (the first per key): hidden tests before a visible line leave it room
MAX_NUMEL = 100_000      # larger tensors are not copied or compared
_CLOCK = itertools.count()   # orders every value recorded, across calls
MAX_SEQ = 8              # values kept per variable bound again (a loop's first steps); the count is kept beyond


_TREES: dict = {}       # file name -> (its text, its parsed tree or None): a cell is parsed once while it is unchanged


def _cell_tree(filename):
    """The syntax tree of the whole cell (or file) ``filename``, parsed once while its text stays the same; None when
    it cannot be parsed. The readers of a student's lines (:func:`line_features`, :func:`_left_out`,
    :func:`_written_view`) share it."""
    text = "".join(linecache.getlines(filename))
    hit = _TREES.get(filename)
    if hit is not None and hit[0] == text:
        return hit[1]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    _TREES[filename] = (text, tree)
    return tree


def _is_cell(filename) -> bool:
    """Whether code of this file name was compiled from a notebook cell (IPython keeps a cell's lines in linecache
    with no modification time)."""
    entry = linecache.cache.get(filename) if type(filename) is str else None
    return type(entry) is tuple and len(entry) == 4 and entry[1] is None


def comparable(value):
    """``value`` as something to fingerprint: a tensor (detached, on the CPU), a number, a tuple or list of tensors of
    one shape stacked; None for anything else (modules, strings, dicts, ragged lists, large tensors)."""
    if isinstance(value, torch.Tensor):
        if value.numel() > MAX_NUMEL or value.is_complex():
            return None
        return value.detach().to("cpu").clone()
    if type(value) in (int, float, bool):
        return value
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        if len({tuple(v.shape) for v in value}) == 1 and sum(v.numel() for v in value) <= MAX_NUMEL:
            return torch.stack([v.detach().to("cpu") for v in value])
    return None


def _weights(module) -> torch.Tensor | None:
    try:
        ps = [p.detach().to("cpu").flatten() for p in module.parameters()]
    except Exception:  # noqa: BLE001 - not a module after all
        return None
    return torch.cat(ps) if ps and sum(p.numel() for p in ps) <= MAX_NUMEL else None


def arguments(frame) -> dict:
    """What a call was given, at its start: ``{name: comparable value}``; a module (``self``, ``model``) by its
    weights."""
    code, local = frame.f_code, frame.f_locals
    out = {}
    for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        v = local.get(name)
        if isinstance(v, torch.nn.Module):
            v = _weights(v)
        v = comparable(v)
        if v is not None:
            out[name] = v
    return out


def _shared(frame) -> list | None:
    """The layers that a module argument (``self``) holds under two names (``self.fwd = self.bwd = nn.LSTMCell(...)``
    builds ONE cell): ``[["bwd", "fwd"]]``, sorted; ``[]`` when each name holds its own; None when no argument is a
    module."""
    local = frame.f_locals
    found = None
    for name in frame.f_code.co_varnames[:frame.f_code.co_argcount]:
        module = local.get(name)
        if not isinstance(module, torch.nn.Module):
            continue
        found = found or []
        groups: dict = {}
        for child, sub in vars(module).get("_modules", {}).items():
            if sub is not None:
                groups.setdefault(id(sub), []).append(child)
        found += [sorted(g) for g in groups.values() if len(g) > 1]
    return sorted(found) if found is not None else None


def shared_modules() -> str:
    """A module of the student's that holds one layer under two names where the reference's module has a layer for
    each (found in the calls the running test made), in words; ``""`` otherwise. Never fails."""
    try:
        rec = _current[0] if _current else None
        for call in (rec.calls if rec is not None else []):
            if not call.shared:
                continue
            pattern = hints.reference_value(call.line, call.code.co_qualname, call.signature, "<shared>")
            if pattern is None or hints.matches(call.shared, pattern):
                continue
            a, b = call.shared[0][:2]
            return (f"self.{a} and self.{b} are one and the same layer (one object under two names, as "
                    f"`self.{a} = self.{b} = ...` builds it), where the reference's {call.code.co_qualname.split('.')[0]} "
                    "has a layer of its own for each: build them in two statements, so that each has its own weights")
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        pass
    return ""


def _returned(returned) -> dict:
    """``{"<return>": value}`` of what a call returned (a tuple: ``"<return>[i]"`` for each item)."""
    items = returned if isinstance(returned, tuple) else (returned,)
    out = {}
    for i, item in enumerate(items):
        v = comparable(item)
        if v is not None:
            out["<return>" if len(items) == 1 else f"<return>[{i}]"] = v
    return out


ALIASES: dict = {}     # id(code) of a test's stand-in for an earlier part -> (code, that part's name) (use_reference)


def _unusual_option(m) -> str:
    """An option a layer was built with that changes what it computes and that no exercise asks for, in words;
    ``""`` when none."""
    if isinstance(m, torch.nn.Embedding) and m.max_norm is not None:
        return (f"max_norm={m.max_norm:g}: nn.Embedding then rescales every row it looks up to a norm of at most "
                f"{m.max_norm:g} (and writes the rescaled rows into its weights)")
    if isinstance(m, torch.nn.RNNBase) and getattr(m, "proj_size", 0):
        return f"proj_size={m.proj_size}: nn.LSTM then projects each state h to {m.proj_size} features"
    if isinstance(m, torch.nn.RNNBase) and m.dropout and m.training and m.num_layers > 1:
        return f"dropout={m.dropout:g}: in training mode it zeroes random features between the layers"
    return ""


def _options(frame) -> dict:
    """``{"self.embedding": words}``: the layers of a call's module arguments built with an option that changes what
    they compute and that no exercise asks for (see :func:`_unusual_option`)."""
    out = {}
    for name, v in list(frame.f_locals.items()):
        if isinstance(v, torch.nn.Module):
            for path, m in v.named_modules():
                said = _unusual_option(m)
                if said:
                    out[f"{name}.{path}" if path else name] = said
    return out


def _layers(frame) -> dict:
    """``{"self.rnn": nn.RNN}``: the class of each direct layer of a call's module arguments."""
    return {f"{name}.{child}": type(m) for name, v in list(frame.f_locals.items())
            if isinstance(v, torch.nn.Module) for child, m in v.named_children()}


def _masked_fill_note(call, line: str, ref) -> str:
    """For a line that fills with ``x.masked_fill(mask, v)`` a mask that holds the reference's value of that name
    (True at the REAL positions): masked_fill writes where the mask is True, in words; ``""`` otherwise."""
    try:
        tree = ast.parse(line.split("  #")[0].strip())
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "masked_fill", "masked_fill_") and node.args:
            # mask, mask.unsqueeze(-1), mask[..., None]: the name under the view
            base = _base(node.args[0], ("unsqueeze", "view", "reshape", "expand_as"))
            if base in call.first and _differs(call.first[base][0], ref(base)) is False:
                value = call.first[base][0]
                if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
                    return (f" (your `{base}` is the reference's, and masked_fill({ast.unparse(node.args[0])}, ...) "
                            f"writes where it is TRUE: if `{base}` is True at the real positions, that overwrites "
                            f"them and keeps the padding; ~{base} (or {base} == 0) selects the padding)")
    return ""


def _option_note(call, line: str) -> str:
    """For a line that calls a layer built with an option that changes its values (:func:`_options`): that layer and
    option, in words; ``""`` otherwise."""
    for path, said in (getattr(call, "options", None) or {}).items():
        if re.search(re.escape(path) + r"\b", line):
            return (f" ({path} is built with {said}, which the docstring does not ask: build it without that "
                    "option)")
    return ""


def _cell_frames(frame) -> list:
    """The frames of notebook cells from ``frame`` outwards (one walk of the stack; PyTorch's and the course's own
    frames between them left out)."""
    out = []
    while frame is not None:
        if _is_cell(frame.f_code.co_filename):
            out.append(frame)
        frame = frame.f_back
    return out


def _where_called(frame) -> tuple:
    """For a call's ``frame``, from one walk of the stack: ``(test, caller, outermost)``: the running test cell's
    module frame (the outermost frame of a notebook cell's top level) or None; ``(qualname, file name, line
    number)`` of the nearest notebook function that called it (through PyTorch's or the course's own code) or None;
    whether no function of a notebook cell other than the test's own is between it and the test cell's frame (the
    call is the test line's: ``model(x)`` reaches forward through PyTorch's code)."""
    cells = _cell_frames(frame.f_back)
    tops = [i for i, f in enumerate(cells) if f.f_code.co_name == "<module>"]
    test = cells[tops[-1]] if tops else None
    near = cells[0] if cells else None
    caller = (near.f_code.co_qualname, near.f_code.co_filename, near.f_lineno) \
        if near is not None and near.f_code.co_name != "<module>" else None
    outermost = test is not None and all(f.f_code.co_filename == test.f_code.co_filename for f in cells[:tops[-1]])
    return test, caller, outermost


class Recorder:
    """A trace function (``sys.settrace``) that keeps the first call per ``(test line, function, signature)`` of every
    function defined in a notebook cell other than the test cell, following that call line by line: the value each
    variable gets where it is first bound (an argument: where it is first rebound) and the line that bound it, and,
    for a variable bound again later (a loop), its value at the return. ``calls``: ``[Call]`` in the order the
    calls started; ``signatures``: ``{code: what its latest call was given}`` (see :func:`call_signature`).
    ``chain``: a trace function that was set before (the edit hints' own), called as if alone."""

    def __init__(self, chain=None):
        self.chain = chain
        self.calls, self.seen, self.signatures = [], set(), {}
        self.called = {}          # (test line, qualname) -> {repr(signature): (signature, caller, order)}
        self.per_line = {}        # test line -> calls recorded for it (at most MAX_CALLS)
        self.top = None           # (qualname, signature) of the latest call made by the test's line itself
        self.before = {}          # (test line, qualname, repr(signature)) -> what the latest call before it was given
        self.counter = 0

    def __call__(self, frame, event, arg):
        inner = self.chain(frame, event, arg) if self.chain is not None else None
        try:
            call = self._called(frame) if event == "call" else None
        except Exception:  # noqa: BLE001 - recording never changes what the student's code does
            call = None
        if call is None:
            return inner
        return self._follow(call, frame, inner)

    def _called(self, frame):
        code = frame.f_code
        if code.co_name == "<module>" or not _is_cell(code.co_filename):
            return None
        signature = hints.call_signature(code, frame.f_locals)
        before = self.signatures.get(code)      # a function calling itself: what the calling call was given
        self.signatures[code] = signature       # what its latest call was given (an argument may be rebound later)
        test, caller, outermost = _where_called(frame)
        if test is None:
            return None
        line = linecache.getline(test.f_code.co_filename, test.f_lineno).strip()
        if test.f_code.co_filename == code.co_filename:       # the test's own helpers: a stand-in for a part
            entry = ALIASES.get(id(code))                      # (use_reference) says what it was given
            alias = entry[1] if entry is not None and entry[0] is code else None
            if alias and line:
                self.called.setdefault((line, alias), {}).setdefault(
                    repr(signature), (signature, caller, self.counter, code, self.top))
            return None
        key = (line, code.co_qualname, repr(signature))
        self.counter += 1
        if line:
            if outermost:       # called by the test's line itself (through PyTorch's Module.__call__)
                self.top = (code.co_qualname, signature)
            self.called.setdefault((line, code.co_qualname), {}).setdefault(
                repr(signature), (signature, caller, self.counter, code, self.top))
            self.before.setdefault((line, code.co_qualname, repr(signature)), before)
        if not line or key in self.seen:
            return None
        self.per_line[line] = self.per_line.get(line, 0) + 1
        if self.per_line[line] > MAX_CALLS:     # a line that calls with ever new shapes (hidden tests' sizes)
            return None
        self.seen.add(key)
        call = Call(line, code, signature, arguments(frame), self.counter)
        call.shared = _shared(frame)
        call.options = _options(frame)
        call.layers = _layers(frame)
        self.calls.append(call)
        return call

    def _follow(self, call, frame, inner):
        """The local trace function of a recorded call: at each line, the variables bound by the line before."""
        held = {n: v for n, v in frame.f_locals.items()}     # what each name holds (identity tells a new binding)
        versions = {n: v._version for n, v in held.items() if isinstance(v, torch.Tensor)}   # in-place writes
        state = {"line": frame.f_lineno, "inner": inner}
        params = frame.f_code.co_varnames[:frame.f_code.co_argcount + frame.f_code.co_kwonlyargcount]
        first, again = call.first, set()

        def local(frame, event, arg):
            if state["inner"] is not None:
                state["inner"] = state["inner"](frame, event, arg)
            if event == "return":
                call.raised = state.get("event") == "exception"    # it ends by raising: no value returned
            state["event"] = event
            if event in ("line", "return"):
                try:
                    for name, v in frame.f_locals.items():
                        written = (name in held and held[name] is v and isinstance(v, torch.Tensor)
                                   and versions.get(name) != v._version)      # the same tensor, written in place
                        if name in held and held[name] is v and not written:
                            continue
                        if isinstance(v, torch.Tensor):
                            versions[name] = v._version
                        if name in params and name in held and held[name] is not v:
                            call.rebound.setdefault(name, state["line"])     # an argument bound again
                        if name in held and name in first:
                            again.add(name)
                            _bound_again(call, name, v, state["line"])
                        held[name] = v
                        if name not in first and not name.startswith(".") and name != "_":   # _: thrown away
                            c = comparable(v)
                            if c is not None:
                                first[name] = (c, state["line"])
                                call.tick = next(_CLOCK)
                                call.seq[name] = [(c, state["line"], call.tick)]
                                call.count[name], call.last[name] = 1, c
                    state["line"] = frame.f_lineno
                    if event == "return":
                        call.made = {n: first[n][0] for n in first}
                        call.made.update({f"{n}@end": c for n in again
                                          for c in [comparable(frame.f_locals.get(n))] if c is not None})
                        for n in again:
                            if n in call.seq:
                                call.made.update({f"{n}#{k}": c for k, (c, *_) in enumerate(call.seq[n]) if k})
                                call.made[f"{n}#n"] = call.count[n]
                        call.made.update(_returned(arg))
                        call.returned_at = frame.f_lineno
                        call.end = self.counter = self.counter + 1
                except Exception:  # noqa: BLE001 - recording never changes what the student's code does
                    pass
            return local

        return local


def _bound_again(call, name, value, line) -> None:
    """A variable bound again: its new value joins ``call.seq[name]`` (the first :data:`MAX_SEQ`) unless it equals
    the value before (``h = h.detach()``, ``x = x.float()`` of a float: bookkeeping, not a new value); the count
    goes on beyond."""
    seq = call.seq.get(name)
    if seq is None:
        return
    c = comparable(value)
    if c is None:
        return
    last = call.last.get(name)
    if last is not None and _same(c, last):
        return
    call.count[name] += 1
    call.last[name] = c
    call.tick = next(_CLOCK)
    if len(seq) < MAX_SEQ:
        seq.append((c, line, call.tick))


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))
    return type(a) is type(b) and a == b


class Call:
    def __init__(self, line, code, signature, given, start):
        self.line, self.code, self.signature, self.given, self.start = line, code, signature, given, start
        self.first = {}                           # name -> (value where first bound, the line that bound it)
        self.seq, self.count, self.last = {}, {}, {}   # name -> [(value, line, tick)] of its distinct values; count
        self.tick = 0                             # when its latest value was recorded (see _CLOCK)
        self.made, self.end = None, None          # filled at its return (None: it raised)
        self.where = None                         # (k, how) of a variable whose k-th value goes wrong (_verdict)
        self.shared = None                        # layers a module argument holds under two names (_shared)
        self.options = {}                         # its layers built with an option that changes values (_options)
        self.layers = {}                          # "self.rnn" -> the class of each layer of a module argument
        self.returned_at = None                   # the line it returned from
        self.rebound = {}                         # argument -> the line that first binds it again
        self.raised = False                       # it ended by raising an exception


_current: list = []       # the Recorder of the test cell that runs (at most one), and of the last one that ran


def start():
    """Begin recording the calls of the test cell that runs (the outermost notebook cell on the stack); the records
    stay readable by :func:`first_difference` until the next start. A trace function
    set before is kept and still called. Returns the Recorder."""
    rec = Recorder(chain=sys.gettrace())
    _current[:] = [rec]
    sys.settrace(rec)
    return rec


def stop(rec) -> None:
    """End the recording that :func:`start` returned (if it is still the trace function): the trace function set
    before it is put back."""
    if rec is not None and sys.gettrace() is rec:
        sys.settrace(rec.chain)


@contextlib.contextmanager
def paused():
    """No recording inside the block: the course's cost measurements (the recorder's copies are not the student's
    memory, and freeing them while PyTorch's profiler runs makes it warn on the student's screen)."""
    trace = sys.gettrace()
    if not isinstance(trace, Recorder):
        yield
        return
    sys.settrace(trace.chain)
    try:
        yield
    finally:
        if sys.gettrace() is trace.chain:
            sys.settrace(trace)


@contextlib.contextmanager
def recording():
    """:func:`start` and :func:`stop` around a block; yields the Recorder."""
    rec = start()
    try:
        yield rec
    finally:
        stop(rec)


def call_signature(code, local: dict) -> list:
    """What the latest call of ``code`` was given, as :func:`seqcourse.hints.call_signature` says it, read when the
    call began (an argument the function rebinds, ``h0 = h0.T``, keeps its given shape here); from ``local`` when
    no recording saw the call."""
    rec = _current[0] if _current else None
    found = rec.signatures.get(code) if rec is not None else None
    return found if found is not None else hints.call_signature(code, local)


def fingerprints(rec) -> dict:
    """``{hints.value_key(...): fingerprint}`` of what the calls ``rec`` recorded were given and made: what
    ``python -m autograder.edit_hints`` stores of the reference (see :func:`seqcourse.hints.reference_value`)."""
    out = {}
    for call in (rec.calls if rec is not None else []):
        for name, v in {**call.given, **(call.made or {})}.items():
            fp = hints.fingerprint(v)
            if fp is not None and _scalar(v) is not None:
                fp["value"] = _scalar(v)      # a number of a visible test's run: said in words ("2 where ...")
            if fp is not None and name in call.first and call.made is not None and name in call.made:
                fp["reads"] = sorted({feature_key(f) for f in line_features(call.code.co_filename, call.first[name][1],
                                                                            call.code.co_varnames)})
            if fp is not None:
                out[hints.value_key(call.line, call.code.co_qualname, call.signature, name)] = fp
        if call.returned_at is not None:
            lines = sorted({ln for _, _, ln in call.code.co_lines() if ln})
            out[hints.value_key(call.line, call.code.co_qualname, call.signature, "<return-line>")] = {
                "shape": None, "q": "return-line", "idx": [], "key": "",
                "reads": sorted({feature_key(f) for f in line_features(call.code.co_filename, call.returned_at,
                                                                        call.code.co_varnames)}),
                "calls": sorted({feature_key(f) for ln in lines       # what any line of the function calls
                                 for f in line_features(call.code.co_filename, ln, call.code.co_varnames)
                                 if f.startswith("call:")})}
        if call.shared is not None:
            out[hints.value_key(call.line, call.code.co_qualname, call.signature, "<shared>")] = hints.fingerprint(
                call.shared)
    for (line, qualname), seen in (rec.called.items() if rec is not None else []):
        out[hints.value_key(line, qualname, None, "<signatures>")] = {
            "shape": None, "q": "signatures", "idx": [], "key": "", "signatures": [v[0] for v in seen.values()]}
    return out


_FEATURE_ALIASES = {"mT": "T", "t": "T", "transpose": "T", "matmul": "@", "mm": "@", "bmm": "@", "mv": "@",
                    "__matmul__": "@", "true_divide": "div", "divide": "div", "multiply": "mul"}


_BOOKKEEPING = {"float", "double", "long", "int", "bool", "to", "reshape", "view", "contiguous", "detach", "clone",
                "item", "size", "squeeze", "unsqueeze", "tolist", "cpu", "type_as", "len", "range", "list", "tuple",
                "zip", "enumerate", "dim", "numel"}


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_OP_WORDS = {"+": "adds (+)", "-": "subtracts (-)", "*": "multiplies (*)", "/": "divides (/)"}


def line_features(filename, lineno, local=()) -> list:
    """What the statement at ``lineno`` of ``filename`` calls and reads, in a form two ways of writing one line can
    share: ``call:relu`` (a function or method called, by its last name), ``name:layer`` (a name read),
    ``self:W`` (an attribute of ``self`` read, or called), ``call:@`` (a matrix product), ``op:+`` (one of the
    arithmetic operators + - * /), ``mul:a*b`` (two names multiplied); a call of one of ``local``
    (the function's own variables: a callable argument) is a name read, bookkeeping calls (``.float()``,
    ``.reshape``...) are left out. Sorted; ``[]`` when it cannot be read.
    Only the statement's own line for a compound statement (a ``for``'s or ``if``'s head)."""
    tree = _cell_tree(filename)
    if tree is None:
        return []
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno - node.lineno) < (best.end_lineno - best.lineno):
                best = node
    if best is None:
        return []
    parts = {ast.For: ["target", "iter"], ast.While: ["test"], ast.If: ["test"], ast.With: ["items"]}
    roots = [best]
    for kind, fields in parts.items():
        if isinstance(best, kind):
            roots = [getattr(best, f) for f in fields]
    roots = [r for root in roots for r in (root if isinstance(root, list) else [root])]
    out = set()
    for root in roots:
        for n in ast.walk(root):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                mine = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                if name and not mine and name not in _BOOKKEEPING and name not in local:   # self.W(x) is said
                    out.add(f"call:{_FEATURE_ALIASES.get(name, name)}")     # as self:W, model(x) as name:model
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id != "self":
                out.add(f"name:{n.id}")
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                out.add(f"self:{n.attr}")
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
                out.add("call:@")
            if isinstance(n, ast.BinOp) and type(n.op) in _OPS:             # + - * /: which arithmetic it does
                out.add(f"op:{_OPS[type(n.op)]}")
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):     # which two names are multiplied
                pair = sorted(b.id for b in (_base_name(n.left), _base_name(n.right)) if b is not None)
                if len(pair) == 2:
                    out.add(f"mul:{pair[0]}*{pair[1]}")
            elif isinstance(n, ast.Attribute) and n.attr in _FEATURE_ALIASES and _FEATURE_ALIASES[n.attr] == "T":
                out.add("call:T")
    return sorted(out)


def _base_name(node):
    """The name a tensor operand starts from: ``r`` of ``r``, ``bias_hh`` of ``bias_hh[2 * H:]``; None otherwise."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def feature_key(feature: str) -> str:
    """What the hint data stores of a :func:`line_features` item: a hash (the reference's code is not readable from
    it; a student's own line is hashed the same way to compare)."""
    return hints._key(b"r" + feature.encode())[:12]


def _known_features(code, common: set) -> set:
    """The features a student could recognise on the reference's line: the names both sides have, the attributes
    the student's function uses, and PyTorch's functions and tensor methods (by their last name)."""
    out = {f"name:{n}" for n in common} | {f"self:{n}" for n in code.co_names}
    out |= {f"mul:{a}*{b}" for a, b in itertools.combinations(sorted(common), 2)}
    out |= {f"mul:{a}*{a}" for a in common}
    out |= {f"call:{_FEATURE_ALIASES.get(n, n)}" for n in _vocabulary() if n not in _BOOKKEEPING}
    out |= {f"op:{o}" for o in _OP_WORDS}
    out |= {f"call:{n}" for n in _notebook_callables()}
    return out


def _notebook_callables() -> set:
    """The names of the functions and classes in the notebook's namespace (the student's): a reference's line that
    calls one of them may be said to (the student sees every one of these names)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        space = shell.user_ns if shell is not None else {}
    except Exception:  # noqa: BLE001 - no IPython: no names
        return set()
    return {name for name, value in list(space.items())       # every name there is one the student can read
            if not name.startswith("_") and callable(value) and not isinstance(value, torch.nn.Module)}


@functools.lru_cache(maxsize=1)
def _vocabulary() -> frozenset:
    """The public names of torch, torch.nn.functional, torch.Tensor and math (what a line of the course calls)."""
    import math

    import torch.nn.functional as F

    return frozenset(n for m in (torch, F, torch.Tensor, math, torch.linalg) for n in dir(m)
                     if not n.startswith("_")) | {"@", "T", "len", "max", "min", "sum", "abs", "sorted", "range"}


def _line_difference(call, var: str, ref, lineno: int | None = None) -> str:
    """How the student's line that makes ``var`` differs in what it calls and reads from the reference's line that
    makes its ``var`` (:func:`line_features`, recorded by ``python -m autograder.edit_hints``; ``var`` "<return-line>":
    the line that returns, ``lineno``): ``"yours calls relu, which the reference's does not"``. Names are compared
    only where both sides have them (the function's arguments, and variables that the reference has too); said only
    for a small difference (a different way of writing the whole line says nothing). ``""`` otherwise."""
    try:
        theirs = (ref(var) or {}).get("reads")
        if theirs is None:
            return ""
        theirs = set(theirs)
        lineno = call.first[var][1] if lineno is None else lineno
        mine = set(line_features(call.code.co_filename, lineno, call.code.co_varnames))
        own = set(call.code.co_varnames[:call.code.co_argcount + call.code.co_kwonlyargcount])
        common = own | {n for n in call.first if n != var and ref(n) is not None}

        def kept(features):
            return {f for f in features if (not f.startswith("name:") or f[5:] in common)
                    and (not f.startswith("mul:") or set(f[4:].split("*")) <= common)}

        mine = kept(mine)
        extra = sorted(f for f in mine if feature_key(f) not in theirs)
        missing = sorted(f for f in kept(_known_features(call.code, common)) - mine if feature_key(f) in theirs)
        helpers = {f"call:{n}" for n in _notebook_callables()}
        limit = 3 + min(1, len(helpers & set(missing)))       # a helper of the notebook's called: one more said
        if not any(feature_key(f) in theirs for f in mine) and len(extra) + len(missing) > limit:
            return ""             # nothing in common: another way of writing the line, unless the lines are short
        nowhere = []            # calls that no line of the reference's function makes (recorded since round 29)
        if var == "<return-line>":      # the result may be made elsewhere: a layer, a name or an operator too many
            swapped = [f for f in extra if f.startswith("call:")], [f for f in missing if f.startswith("call:")]
            kinds = ("self:", "name:", "op:", "mul:")
            extra = [f for f in extra if f.startswith(kinds)]       # or too few; a call for another call too, when
            missing = [f for f in missing if f.startswith(kinds)]   # that is all or nearly all that differs
            if tuple(map(len, swapped)) == (1, 1) and len(extra) + len(missing) <= 1:
                extra, missing = sorted(extra + swapped[0]), sorted(missing + swapped[1])
            else:       # a call alone may be bookkeeping the reference does on another line; one it never makes is not
                anywhere = (ref(var) or {}).get("calls")
                nowhere = [f for f in swapped[0] if anywhere is not None and feature_key(f) not in anywhere][:2]
        if len(extra) + len(missing) > limit:   # too different to list: the calls alone, the products alone, or the
            for kind in ("call:", "mul:", "op:"):      # operators alone, if they differ little
                e, m = [f for f in extra if f.startswith(kind)], [f for f in missing if f.startswith(kind)]
                if 0 < len(e) + len(m) <= 2:
                    extra, missing = e, m
                    break
            else:
                return ""
        if not (extra or missing or nowhere):
            return ""

        def said(f):
            kind, name = f.split(":", 1)
            if kind == "mul":
                return "multiplies `{}` by `{}`".format(*name.split("*"))
            if kind == "op":
                return _OP_WORDS[name]
            return {"call": "calls " + ("a matrix product (@)" if name == "@" else "a transpose (.T)" if name == "T"
                                        else name),
                    "name": f"reads `{name}`", "self": f"uses self.{name}"}[kind]

        def group(features):      # "calls exp and sum and reads `x`": one verb per kind
            if any(f.startswith("mul:") for f in features):      # which names are multiplied says the * already
                features = [f for f in features if f != "op:*"]
            out, verbs = [], {}
            for f in features:
                verb, _, what = said(f).partition(" ")
                verbs.setdefault(verb, []).append(what)
            for verb, whats in verbs.items():
                out.append(f"{verb} " + (" and ".join(whats) if verb != "multiplies" else
                                         f" and multiplies ".join(whats)))
            return " and ".join(out)

        parts = []
        if nowhere:
            parts.append("yours " + group(nowhere) + f", which no line of the reference's {call.code.co_qualname} "
                         "does")
        if extra:
            parts.append("yours " + group(extra) + ", which the reference's does not")
        if missing:
            parts.append("the reference's " + group(missing) + ", which yours does not")
        return "; ".join(parts)
    except Exception:  # noqa: BLE001 - a hint is a courtesy
        return ""


def unexpected_call() -> str:
    """The first call, in the test cell that runs (or ran last), of a notebook function given arguments of other
    shapes (or kinds) than every call of it that the reference makes while the same test line runs, in words with
    the line that calls it; ``""`` when there is none. Never fails."""
    try:
        rec = _current[0] if _current else None
        found = []
        for (line, qualname), seen in (rec.called.items() if rec is not None else []):
            if qualname.rsplit(".", 1)[-1].startswith("<"):
                continue          # a comprehension's or lambda's own call (its `.0` iterator): part of its function
            ref = hints.reference_value(line, qualname, None, "<signatures>")
            if ref is None or not ref.get("signatures"):
                continue
            for signature, where, order, code, top in seen.values():
                if signature in ref["signatures"] or where is None or top is None:
                    continue
                outer = hints.reference_value(line, top[0], None, "<signatures>")
                if outer is None or top[1] not in outer.get("signatures", []):
                    continue          # the test's own call is not one the reference made (a hidden test's sizes)
                found.append((order, line, qualname, signature, where, code, ref["signatures"]))
        found.sort(key=lambda f: f[0])
        for order, line, qualname, signature, (caller, filename, lineno), code, wanted in found:
            if caller != qualname:
                break
            said = _recursion(rec, line, qualname, signature, code, filename, lineno)   # the reference makes no
            if said:                                                                     # such call to compare with
                return said
        else:
            return ""
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        text = linecache.getline(filename, lineno).strip()
        left = _left_out(code, filename, lineno)
        want = min(wanted, key=lambda w: sum(a != b for a, b in zip(w, signature)))
        diffs = [f"{n} {_said(g)} where the reference's call gets {_said(w)}"
                 for n, g, w in zip(names, signature, want) if g != w]
        defaults = (f"; that line passes no {' and no '.join(left)}: " + ("they take their defaults" if len(left) > 1
                    else "it takes its default") + " in that call") if left else ""
        return (f"{qualname} is called with " + "; ".join(diffs[:3]) + f" (while the test ran `{line}`), from your "
                f"line \"{text}\" in {caller}: what that line passes to it goes wrong there (or before it)" + defaults)
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def _recursion(rec, line, qualname, signature, code, filename, lineno) -> str:
    """A function that calls itself and leaves out arguments that then take their defaults where the calling call
    was given other values, in words; ``""`` otherwise."""
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    given = rec.before.get((line, qualname, repr(signature)))
    left = [n for n in _left_out(code, filename, lineno)
            if given is not None and given[names.index(n)] != signature[names.index(n)]]
    if not left:
        return ""
    text = linecache.getline(filename, lineno).strip()
    return (f"{qualname} calls itself from your line \"{text}\" (while the test ran `{line}`): that call passes no "
            f"{' and no '.join(left)}, so it gets the default" + ("s " if len(left) > 1 else " ")
            + ", ".join(f"{n} {_said(signature[names.index(n)])}" for n in left)
            + " where the call that calls it was given " + ", ".join(f"{n} {_said(given[names.index(n)])}"
                                                                     for n in left)
            + (": pass them on" if len(left) > 1 else ": pass it on") + " (or loop instead of calling itself)")


def _left_out(code, filename, lineno) -> list:
    """The parameters of ``code`` that have defaults and that the call of it at ``lineno`` of ``filename`` does not
    pass (neither by position nor by name): they take their defaults. ``[]`` when none, or when it cannot be told
    (``*args``, ``**kwargs``, another call of that name on the line)."""
    tree = _cell_tree(filename)
    if tree is None:
        return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= lineno <= (n.end_lineno or n.lineno)
             and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) == code.co_name]
    if len(calls) != 1:
        return []
    call = calls[0]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return []
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    if names and names[0] == "self" and isinstance(call.func, ast.Attribute):
        names = names[1:]
    passed = set(names[:len(call.args)]) | {k.arg for k in call.keywords}
    fn = next((c for c in gc_functions(code)), None)
    if fn is None:
        return []
    has_default = set(names[len(names) - len(fn.__defaults__ or ()) - code.co_kwonlyargcount:code.co_argcount]) \
        | set((fn.__kwdefaults__ or {}))
    return [n for n in names if n in has_default and n not in passed]


def gc_functions(code):
    """The functions whose code is ``code`` (to read their defaults)."""
    import gc

    return (f for f in gc.get_referrers(code) if getattr(f, "__code__", None) is code)


def _said(item) -> str:
    """An item of a call signature (:func:`seqcourse.hints.call_signature`) in words: a shape, a value, a type."""
    if isinstance(item, list):
        return "(" + ", ".join(str(s) for s in item) + ("," if len(item) == 1 else "") + ")"
    return repr(item) if item is None or type(item) in (int, bool) else f"a {item}"


def _scalar(value):
    """A Python number, or the number a one-entry tensor holds; None for anything else."""
    if type(value) in (int, float):
        return value
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_complex():
        return value.item()
    return None


def _how(value, pattern) -> str:
    """How a tensor ``value`` of the reference's shape relates to the reference's (``pattern``, a fingerprint):
    `` (its values are the reference's transposed, axes 0 and 1)`` for the first of a few transforms whose result
    is the reference's (the opposite sign, a transpose of two axes of one size, a reversal along an axis, blocks
    along an axis in another order, a sigmoid where a tanh is meant or the reverse, a softmax over another axis),
    or ``""``."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.dim() == 0:
        return ""
    try:
        for said, made in itertools.islice(_rearranged(value.double()), 64):
            try:
                if hints.matches(made, pattern):
                    return f" ({said})"
            except Exception:  # noqa: BLE001 - a transform that does not apply says nothing
                continue
    except Exception:  # noqa: BLE001 - nor one that cannot be made
        pass
    return ""


def _rearranged(v):
    """``(in words, v transformed)`` for the transforms :func:`_how` tries, lazily, in its order."""
    yield "its values are the reference's with the opposite sign", -v
    n = v.dim()
    for (i, j), made in rearrange.swapped_axes(v):
        yield f"its values are the reference's transposed (axes {i} and {j} swapped)", made
    for d, made in rearrange.reversals(v):
        yield f"its values are the reference's reversed along axis {d}", made
    for (d, k, perm), made in rearrange.block_orders(v, sorted({0, n - 1})):
        yield (f"its {k} blocks along axis {d} are the reference's in another order (yours hold the reference's "
               f"blocks {[perm.index(j) for j in range(k)]})" if k > 2 else
               f"its two halves along axis {d} are the reference's swapped"), made
    inside = bool(((v > 0) & (v < 1)).all())
    if inside:
        yield "squashed with a sigmoid where the reference's uses a tanh", torch.tanh(torch.logit(v))
    if bool(((v > -1) & (v < 1)).all()):
        yield "squashed with a tanh where the reference's uses a sigmoid", torch.sigmoid(torch.atanh(v))
    if inside and n >= 2:
        for d in range(n):
            if bool(torch.allclose(v.sum(d), torch.ones((), dtype=v.dtype), atol=1e-5)):
                for other in range(n):
                    if other != d and v.shape[other] > 1:
                        yield (f"a softmax over axis {d} where the reference's is over axis {other}",
                               torch.softmax(v.log(), dim=other))


_VIEWS = {"expand": "an expanded view", "expand_as": "an expanded view", "view": "a view", "transpose": "a view",
          "permute": "a view", "T": "a view", "mT": "a view", "unsqueeze": "a view", "squeeze": "a view",
          "narrow": "a view", "diagonal": "a view"}


def _written_view(call, var: str) -> str:
    """When the line that makes ``var`` makes a view of another tensor (``t.expand(B, T)``, ``x.T``, ``x[:, 0]``) and
    a later line of the function writes into ``var`` in place (``var[...] = ...``, ``var += ...``, ``var.fill_()``):
    that the write goes into the memory the view shares, in words; ``""`` otherwise."""
    tree = _cell_tree(call.code.co_filename)
    made = call.first[var][1]
    own = [n for n in ast.walk(tree or ast.Module(body=[], type_ignores=[]))
           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= made <= n.end_lineno]
    if not own:
        return ""
    tree = min(own, key=lambda n: n.end_lineno - n.lineno)       # the function itself (the innermost def around it)
    stmt = next((n for n in ast.walk(tree) if isinstance(n, ast.Assign) and n.lineno <= made <= n.end_lineno
                 and any(isinstance(t, ast.Name) and t.id == var for t in n.targets)), None)
    if stmt is None:
        return ""
    value, kind, base = stmt.value, None, None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEWS:
        kind, base = _VIEWS[value.func.attr], value.func.value
    elif isinstance(value, ast.Attribute) and value.attr in _VIEWS:
        kind, base = _VIEWS[value.attr], value.value
    elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and any(
            isinstance(n, ast.Slice) for n in ast.walk(value.slice)):
        kind, base = "a view (a slice)", value.value
    if kind is None:
        return ""
    writes = [n for n in ast.walk(tree) if getattr(n, "lineno", 0) > stmt.end_lineno and (
        isinstance(n, (ast.Assign, ast.AugAssign)) and any(
            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == var
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
        or isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == var
        or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_")
        and not n.func.attr.endswith("__") and isinstance(n.func.value, ast.Name) and n.func.value.id == var)]
    if not writes:
        return ""
    line = linecache.getline(call.code.co_filename, writes[0].lineno).strip()
    rows = (" (all its rows share ONE memory location: a write into one row writes every row)"
            if kind == "an expanded view" else "")
    return (f"; `{var}` is {kind} of `{ast.unparse(base)}`{rows}, and your line \"{line}\" writes into it in place: "
            f"the write lands in the memory it shares with `{ast.unparse(base)}` (make a copy with .clone() first, or "
            f"build `{var}` without writing into it, e.g. with torch.where)")


def _unchecked(call, var: str, line: str, ref) -> str:
    """The variables that ``line`` (the one that makes ``var``) reads and that could not be compared with the
    reference's (the reference has no variable of that name, or one of another shape), with the lines that make
    them: the wrong value may come from them. ``""`` when there are none."""
    names = pysource.names_read(line)
    if names is None:
        return ""
    own = call.code.co_varnames[:call.code.co_argcount + call.code.co_kwonlyargcount]
    sizes = {int(k) for v in call.given.values() if isinstance(v, torch.Tensor) for k in v.shape}
    loose = [n for n in call.first if n in names and n != var and n not in own and n in call.made
             and _differs(call.made[n], ref(n)) is None
             and not (type(call.made[n]) is int and call.made[n] in sizes)]     # a size read off an input: bookkeeping
    if not loose:
        return ""
    def shapes(n):       # the reference has a variable of that name, of another shape: both shapes
        want, value = (ref(n) or {}).get("shape"), call.first[n][0]
        if want is None or not isinstance(value, torch.Tensor):
            return ""
        return f", of shape {tuple(value.shape)} where the reference's `{n}` has {tuple(want)}"

    said = "; ".join(f'`{n}` (your line "{linecache.getline(call.code.co_filename, call.first[n][1]).strip()}"'
                     f'{shapes(n)})' for n in loose[:2])
    if all(shapes(n) for n in loose[:2]):
        return f"; that line also reads {said}: the wrong value may come from it"
    return (f"; that line also reads {said}, which has no counterpart of that name and shape in the reference's "
            "code to compare with: the wrong value may come from it")


def _number(x) -> str:
    return str(x) if isinstance(x, int) or float(x).is_integer() and abs(x) < 1e15 else f"{x:.6g}"


def _nth(k: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(k, f"{k}th")


def _differs(value, pattern) -> bool | None:
    """True when ``value`` is not the recorded one, False when it is, None when they cannot be compared (another
    shape: another bookkeeping)."""
    if pattern is None:
        return None
    if pattern.get("shape") is not None:
        shape = list(torch.as_tensor(value).shape) if not isinstance(value, torch.Tensor) else list(value.shape)
        if shape != pattern["shape"]:
            return None
    return not hints.matches(value, pattern)


def _given_as_reference(call, ref) -> bool:
    """Whether ``call`` was given what the reference's call at the same test line was given: something was recorded
    to compare, nothing differs, and no tensor it was given lacks a counterpart ("the same inputs" unknown)."""
    compared = [_differs(v, ref(n)) for n, v in call.given.items()]
    if not any(d is not None for d in compared) or any(compared):
        return False                        # nothing recorded for this call, or other inputs than the reference's
    return not any(d is None and isinstance(v, torch.Tensor) and ref(n) is None
                   for d, (n, v) in zip(compared, call.given.items()))


def _verdict(call) -> tuple[str, list] | None:
    """How ``call`` differs from the reference's when it was given the reference's inputs and returned something
    else: ``("first", [name])``, the variable whose value where first bound is the earliest wrong value (in the order
    the values were made); ``("again", [name])``, the variable whose value where it is bound again is the earliest
    wrong one (``call.where``: ``(k, how)``, its k-th value, "value", "extra" or "fewer"); else ``("end", names)``,
    those right where first bound but not at the return (carried through a loop); else ``("result", names)``. None
    when it was given other inputs, returned the reference's result, or nothing that can be compared differs."""
    if call.made is None:
        return None

    def ref(name):
        return hints.reference_value(call.line, call.code.co_qualname, call.signature, name)

    def differs(name, value):
        return _differs(value, ref(name))

    if not _given_as_reference(call, ref):
        return None
    returned = [differs(n, v) for n, v in call.made.items() if n.startswith("<return>")]
    if returned and not any(returned):
        return None                         # it returns the reference's result: its own bookkeeping is its own
    wrong = []                              # (tick, name, k, how) of each variable's earliest wrong value
    counters = _loop_counters(call)
    for n in call.first:
        seq = call.seq.get(n)
        if n in call.made and differs(n, call.made[n]):
            wrong.append((seq[0][2] if seq else -1, n, 0, "first"))
        elif n in call.seq:
            parted = _parted(call, n, ref)
            if parted is not None and n in counters and parted[2] == "value":
                continue          # a loop counter that starts right and counts in another order: bookkeeping
            if parted is not None:
                wrong.append((parted[0], n, parted[1], parted[2]))
    if wrong:
        tick, name, k, how = min(wrong, key=lambda w: w[0])
        if how == "first":
            return "first", [name]
        call.where = (k, how)
        return "again", [name]
    end = [n for n in call.first if f"{n}@end" in call.made and differs(f"{n}@end", call.made[f"{n}@end"])]
    if end:
        return "end", end
    if not any(returned):
        return None
    shaped = [n for n in call.first if n in call.made and differs(n, call.made[n]) is None
              and ref(n) is not None]
    return "result", shaped        # variables of another shape than the reference's: said, not blamed


def _line_range(code) -> tuple[int, int]:
    """The first and last source line of a function's code (``co_lines()`` yields (start, end, line): byte offsets
    first, the line number last)."""
    return code.co_firstlineno, max((ln for _, _, ln in code.co_lines() if ln), default=code.co_firstlineno)


def _loop_counters(call) -> set:
    """The names a ``for`` loop of the call's function counts with over a range (``for t in range(T)``,
    ``reversed(range(T))``), whose values are ints: which order they count in is the student's bookkeeping."""
    tree = _cell_tree(call.code.co_filename)
    if tree is None:
        return set()
    first, last = _line_range(call.code)
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.For) and first <= node.lineno <= last and isinstance(node.target, ast.Name)
                and "range(" in ast.unparse(node.iter)):
            out.add(node.target.id)
    return {n for n in out if all(type(v) is int for v, *_ in call.seq.get(n, []))}


def _rebound_argument(call, line: str, ref) -> str:
    """A line that reads an argument of its function which the student's code binds again (``x, y = x[idx], y[idx]``
    in a loop: later steps read the batch, not what the function was given) and the reference's never does: that
    argument and the line that rebinds it; ``""`` otherwise."""
    for name in sorted((pysource.names_read(line) or set()) & set(call.rebound)):
        if "reads" not in (ref(name) or {}):      # the reference's binds it once only: no line that makes it
            again = linecache.getline(call.code.co_filename, call.rebound[name]).strip()
            return (f"; it reads `{name}`, an argument of {call.code.co_name} that your line \"{again}\" binds again, "
                    f"so the lines after it read that new value, not the `{name}` that {call.code.co_name} was given "
                    "(use another name for the new value)")
    return ""


def _swapped_arguments(line: str) -> str:
    """A call on ``line`` of a notebook function (one the test cell called: its parameters are known) given, by
    position or by name, names of its OTHER parameters (``f(layer_input, hidden_size)`` for ``def f(hidden,
    layer_input)``): the two arguments in each other's place, in words; ``""`` otherwise."""
    try:
        tree = ast.parse(line.split(" #")[0].strip())
    except SyntaxError:
        return ""
    params = {}
    for c in (_current[0].calls if _current else []):
        params.setdefault(c.code.co_name, c.code.co_varnames[:c.code.co_argcount])
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in params):
            continue
        names = params[node.func.id]
        swapped = pysource.swapped_arguments(node, names)
        if swapped:
            return (f"; {node.func.id} takes ({', '.join(names)}), and this line passes {swapped}: two arguments in "
                    "each other's place? (pass them in the order of the signature, or by name)")
    return ""


_VIEW_SAFE = {"flip", "transpose", "permute", "contiguous", "squeeze", "unsqueeze", "float", "detach", "clone", "t"}


def _view_note(call, line: str) -> str:
    """A ``.view(a, ...)`` / ``.reshape(a, ...)`` on ``line`` of a tensor whose axis 0 is not of size ``a`` while a
    later axis is (``h_n.view(B, -1)`` of a (2, B, H) tensor), in words: a view reads the entries in memory order,
    so the new rows mix the entries of the old axis 0 instead of following axis k; ``""`` otherwise."""
    try:
        tree = ast.parse(line.split(" #")[0].strip())
    except SyntaxError:
        return ""
    made = call.made or {}

    def value(node):            # a name, a number, or a safe method chain on a recorded tensor
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = value(node.operand)
            return -v if type(v) is int else None
        if isinstance(node, ast.Name):
            return made.get(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEW_SAFE:
            recv = value(node.func.value)
            args = [value(a) for a in node.args]
            if isinstance(recv, torch.Tensor) and all(type(a) is int for a in args) and not node.keywords:
                return getattr(recv, node.func.attr)(*args)
        return None

    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("view", "reshape") and node.args):
            continue
        try:
            recv, first = value(node.func.value), value(node.args[0])
        except Exception:  # noqa: BLE001 - an expression that cannot be evaluated here: nothing to say
            continue
        if not isinstance(recv, torch.Tensor) or type(first) is not int or recv.dim() < 2 or first < 1:
            continue
        shape = tuple(recv.shape)
        later = [k for k in range(1, len(shape)) if shape[k] == first]
        if later and (shape[0] != first or isinstance(node.args[0], ast.Name)):
            k = later[0]
            meant = "" if shape[0] != first else f"if its {first} rows are meant to follow axis {k} ({node.args[0].id}): "
            return (f"; {meant}{ast.unparse(node)} reads {ast.unparse(node.func.value)} {shape} in memory order: its "
                    f"rows of {first} are not axis {k} but runs of the flattened entries, which mix the entries along "
                    f"axis 0: move axis {k} to the front first (.transpose(0, {k}) or .permute, then .reshape), or "
                    "join the parts with torch.cat")
    return ""


def _flip_note(call, line: str) -> str:
    """A ``x.flip(k)`` (or ``torch.flip(x, (k,))``) on ``line`` of a recorded tensor: which axis it reverses, with the
    shape, in words (the sizes of the course's tests differ, so the size names the axis); ``""`` otherwise."""
    try:
        tree = ast.parse(line.split(" #")[0].strip())
    except SyntaxError:
        return ""
    made = call.made or {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "flip"):
            continue
        method = not (isinstance(node.func.value, ast.Name) and node.func.value.id == "torch")
        target, dims = (node.func.value, node.args) if method else (node.args[0] if node.args else None, node.args[1:])
        if not isinstance(target, ast.Name) or len(dims) != 1:
            continue
        value = made.get(target.id, call.first.get(target.id, (None,))[0])
        try:
            dim = ast.literal_eval(dims[0])
        except ValueError:
            continue
        dim = dim[0] if isinstance(dim, (tuple, list)) and len(dim) == 1 else dim
        if isinstance(value, torch.Tensor) and type(dim) is int and -value.dim() <= dim < value.dim():
            shape = tuple(int(n) for n in value.shape)
            return (f" ({ast.unparse(node)} reverses axis {dim} of {target.id}, whose shape is {shape}: the axis of "
                    f"size {shape[dim]})")
    return ""


def _negative_counter(call, line: str) -> str:
    """A loop counter that ``line`` reads and that took negative values (``range(0, -T, -1)``: 0, -1, -2, ...), in
    words: a negative index counts from the end, so position 0 is read first and the others from the last one
    down; ``""`` otherwise."""
    for name in sorted((pysource.names_read(line) or set()) & _loop_counters(call)):
        values = [v for v, *_ in call.seq.get(name, []) if v < 0]
        if values:
            shown = ", ".join(str(v) for v in values[:3]) + (", ..." if len(values) > 3 else "")
            return (f"; `{name}` takes negative values here ({shown}): a negative index counts from the END (-1 is the "
                    "last position), so these are not the positions you may mean (count with range(T - 1, -1, -1) "
                    "or reversed(range(T)))")
    return ""


def _swapped_names(call, ref, names=None) -> str:
    """Two variables bound by one line (``state, memory = model.encode(...)``), each holding what the reference's
    variable of the OTHER name holds: the names in each other's place, in words; ``""`` otherwise. ``names``: only
    pairs with one of these."""
    for a, (value, lineno) in call.first.items():
        for b, (other, line_b) in call.first.items():
            if b == a or line_b != lineno or (names is not None and a not in names and b not in names):
                continue
            if _differs(value, ref(b)) is False and _differs(value, ref(a)) is not False \
                    and _differs(other, ref(a)) is not True and _differs(other, ref(b)) is not False:
                line = linecache.getline(call.code.co_filename, lineno).strip()
                return (f"your `{a}` holds what the reference's `{b}` holds (the same values), made at your line "
                        f"\"{line}\": `{a}` and `{b}` in each other's place? (unpack in the order the function "
                        "returns them)")
    for a, seq in call.seq.items():          # the same, bound again (in a loop): the k-th values
        for k, (value, lineno, _) in enumerate(seq[1:], start=1):
            for b, other in call.seq.items():
                m = next((m for m, (_, ln, _) in enumerate(other) if m and ln == lineno), None)
                if b == a or m is None:
                    continue
                if _differs(value, ref(f"{b}#{m}")) is False and _differs(value, ref(f"{a}#{k}")) is not False:
                    line = linecache.getline(call.code.co_filename, lineno).strip()
                    return (f"your `{a}` holds what the reference's `{b}` holds (the same values) after your line "
                            f"\"{line}\": `{a}` and `{b}` in each other's place? (unpack in the order the "
                            "function returns them)")
    return ""


def _parted(call, name, ref) -> tuple | None:
    """``(tick, k, how)`` where the values ``name`` takes, one after the other, first part from the reference's:
    its k-th value is another ("value"), one more than the reference's ("extra"), or it gets fewer ("fewer"); None
    when they agree as far as they were kept, or cannot be compared (another shape: another bookkeeping)."""
    seq, n = call.seq[name], call.count[name]
    counted = ref(f"{name}#n")
    m = counted.get("value") if counted is not None else (1 if ref(name) is not None else None)
    for k in range(1, len(seq)):
        pattern = ref(f"{name}#{k}")
        if pattern is None:
            return (seq[k][2], k, "extra") if m is not None and k >= m else None
        d = _differs(seq[k][0], pattern)
        if d is None:
            return None
        if d:
            return seq[k][2], k, "value"
    if m is not None and n < m and len(seq) == n:
        return call.tick, n, "fewer"
    return None


def _interleaved(call, name, ref, m: int) -> tuple | None:
    """When the values ``name`` takes hold every one of the reference's (as far as they were kept), in order, with
    others between them: ``(line that makes an extra value, line that makes the next reference value, [lines of the
    function between those two that read name])``; None otherwise."""
    seq = call.seq[name]
    patterns = [ref(name)] + [ref(f"{name}#{k}") for k in range(1, min(m, MAX_SEQ))]
    if any(p is None for p in patterns):
        return None
    matched, j = [], 0
    for i, (value, _, _) in enumerate(seq):
        if j < len(patterns) and _differs(value, patterns[j]) is False:
            matched.append(i)
            j += 1
    if j < min(len(patterns), 3) or len(matched) == len(seq):
        return None
    extra = next(i for i in range(len(seq)) if i not in matched)
    later = next((i for i in matched if i > extra), None)
    if later is None:
        return None
    half, whole = seq[extra][1], seq[later][1]
    filename = call.code.co_filename   # a step in two lines: the completing line comes after, from the half-made value
    if whole <= half or name not in (pysource.names_read(linecache.getline(filename, whole)) or ()):
        return None
    readers = [lineno for lineno in range(half + 1, whole)
               if name in (pysource.names_read(linecache.getline(filename, lineno)) or ())]
    return half, whole, readers[:2]


def first_difference(strong: bool | None = None, number: bool = False) -> str:
    """Where the values of the test cell that runs (or ran last) first go wrong, in words, or ``""``: the innermost
    call of a notebook function that was given the reference's inputs and returned another result, and its first
    variable (in the order they were bound) whose value is not the reference's. ``strong``: True says it only when a
    variable is named, False only when none is (the result alone differs: weaker than a cause the values identify),
    None either way (a variable of another shape than the reference's counts as named). ``number``: only when that
    variable holds a number whose reference value is known ("10 where the reference's is 5": a size or count that
    every later value inherits). Never fails."""
    try:
        said, named, said_number = _first_difference()
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""
    if number and not (named and said_number):
        return ""
    return said if strong is None or strong == named else ""


def _first_difference() -> tuple[str, bool, bool]:
    """(what :func:`first_difference` says, whether a variable is named, whether that variable's number was said
    with the reference's)."""
    numbers_said: list[str] = []
    said, named = _first_difference_said(numbers_said)
    return said, named, bool(numbers_said)


def _first_difference_said(numbers_said: list[str]) -> tuple[str, bool]:
    """:func:`_first_difference`'s words; each variable whose number it says is appended to ``numbers_said``."""
    import inspect

    from seqcourse.checks import _bindings

    if not _current:
        return "", False
    wrong = [(c, _verdict(c)) for c in _current[0].calls if c.end is not None]
    wrong = [(c, v) for c, v in wrong if v is not None]
    if not wrong:
        return "", False
    call, (kind, names) = wrong[0]
    for inner, verdict in wrong[1:]:     # the innermost: a call inside it that went wrong too
        if call.start < inner.start and inner.end < call.end:
            call, (kind, names) = inner, verdict
    given = (f"in {call.code.co_qualname}, given the same inputs as the reference's (while the test ran "
             f"`{call.line}`), ")

    def ref(name):
        return hints.reference_value(call.line, call.code.co_qualname, call.signature, name)

    def source(lineno):
        return linecache.getline(call.code.co_filename, lineno).strip()

    if kind == "result" and names:
        var = names[0]
        want = hints.reference_value(call.line, call.code.co_qualname, call.signature, var)["shape"]
        got = tuple(torch.as_tensor(call.made[var]).shape)
        line = linecache.getline(call.code.co_filename, call.first[var][1]).strip()
        return (given + f"no variable of the reference's shapes differs, but `{var}` has shape {got} where the "
                f"reference's `{var}` has {tuple(want)}" + (f' (your line "{line}")' if line else "")
                + ": if that shape is not meant, it goes wrong there; if it is, look at the line that returns the "
                "result"), True
    if kind == "result":
        returned = source(call.returned_at) if call.returned_at else ""
        diff = _line_difference(call, "<return-line>", ref, call.returned_at) if returned.startswith("return") else ""
        return (given + "every variable that can be compared agrees with the reference's, but the result differs: "
                "look at the line that returns it" + (f' ("{returned}"' if returned.startswith("return") else "")
                + (pysource.line_notes(returned) if returned.startswith("return") else "")
                + (f"; compared with the reference's line that returns: {diff}" if diff else "")
                + (")" if returned.startswith("return") else "")
                + " (or a value changed in place after it was made)"), False
    var = names[0]
    agree = [n for n in call.first if n not in names and n in call.made][:4]

    def numbers(value, name):     # ": 1 where the reference's is 2" for numbers
        want, got = (ref(name) or {}).get("value"), _scalar(value)
        if None in (want, got):
            return ""
        numbers_said.append(name)
        return f" ({_number(got)} where the reference's is {_number(want)})"

    if kind == "first":
        before = [n for n in agree if list(call.first).index(n) < list(call.first).index(var)
                  and _differs(call.first[n][0], ref(n)) is False]     # compared and equal (not: another shape)
        line, diff = source(call.first[var][1]), _line_difference(call, var, ref)
        return (given + f"`{var}` is the first variable whose value differs from the reference's `{var}` where it is "
                f"first made{numbers(call.first[var][0], var) or _how(call.first[var][0], ref(var) or {})}"
                + (f" (the variables made before it agree: {', '.join(before)})" if before else "")
                + (f': look at your line "{line}"{_option_note(call, line)}{_masked_fill_note(call, line, ref)}'
                   f'{pysource.line_notes(line)}{_swapped_arguments(line)}{_negative_counter(call, line)}'
                   f'{_view_note(call, line)}{_flip_note(call, line)}' if line else "")
                + (f" (compared with the reference's line that makes `{var}`: {diff})" if diff else "")
                + _seeded(call, call.first[var][1])
                + _written_view(call, var) + _unchecked(call, var, line, ref)), True
    if kind == "again":
        k, how = call.where
        seq, n = call.seq[var], call.count[var]
        counted = ref(f"{var}#n")
        m = counted.get("value") if counted is not None else 1
        values = (f" (yours gets {n} different values, the reference's {m})" if m != n else "")
        first = f"`{var}` is right where it is first made"
        split = _interleaved(call, var, ref, m) if how == "value" and m is not None and n > m else None
        if split is not None:
            half, whole, readers = split
            return (given + f"`{var}` takes the reference's values in order, but also others between them{values}: "
                    f"your line \"{source(half)}\" makes a half-made value that your line \"{source(whole)}\" "
                    "completes (one step written as two lines)"
                    + (": your line " + " and ".join(f'"{source(r)}"' for r in readers) + f" reads `{var}` between "
                       "them and sees the half-made value (read it before or after both lines, or make the step in "
                       "one line)" if readers else ": whatever reads it between them sees the half-made value")), True
        if how == "value":
            value, lineno, _ = seq[k]
            return (given + f"{first}, and its {_nth(k + 1)} value, from your line \"{source(lineno)}\", is not "
                    f"the reference's {_nth(k + 1)} value{numbers(value, f'{var}#{k}')}{values}: it goes wrong "
                    "there (the values it is made from, or what the line does to them)"
                    + pysource.line_notes(source(lineno)) + _negative_counter(call, source(lineno))
                    + _swapped_arguments(source(lineno))
                    + _rebound_argument(call, source(lineno), ref)), True
        if how == "extra":
            return (given + f"{first}, but it gets {n} different values where the reference's gets {m}: its "
                    f"{_nth(k + 1)}, from your line \"{source(seq[k][1])}\", is one the reference's never gets "
                    "(a line that runs where it should not: a condition left out, or a loop that runs too often?)"
                    ), True
        lines = dict.fromkeys(source(lineno) for _, lineno, _ in seq[1:]) or {source(seq[0][1]): None}
        if n == 1 and m is not None and m > 1:
            return (given + f"{first} (your line \"{source(seq[0][1])}\"), but yours never makes it again, where "
                    f"the reference's `{var}` gets {m} values: the reference carries it from step to step (a loop's "
                    f"new value of `{var}` kept under another name, or never assigned back to `{var}`?)"), True
        return (given + f"{first}, but it gets {n} different values where the reference's gets {m}: a line that "
                "makes it again runs too few times (a loop that stops early, a condition that skips it, or a line "
                "that does not change it?): your lines " + " or ".join(f'"{t}"' for t in list(lines)[:3])), True
    try:
        source = inspect.getsource(call.code)
    except (OSError, TypeError):
        source = ""
    lines = [text for _, bound, text, *_ in (_bindings(source, call.code.co_firstlineno) if source else [])
             if var in bound]
    where = " or ".join(f'"{t}"' for t in dict.fromkeys(lines[:3]))
    return (given + f"every variable agrees with the reference's where it is first made, but `{var}` differs at the "
            f"end: it goes wrong where it is made again (a step of a loop?)" + (f": look at your lines {where}" if where
                                                                             else "")), True


def _seeded(call, lineno: int) -> str:
    """For a line that draws random numbers with ``generator=g`` (a random draw the reference makes with its own
    generator): the student's lines that make and seed ``g``, in words -- a draw that differs although the line is
    right means the generator is in another state (``g.seed()`` draws a fresh random seed: ``g.manual_seed(seed)``
    sets one). ``""`` otherwise."""
    tree = _cell_tree(call.code.co_filename)
    if tree is None:
        return ""
    first, last = _line_range(call.code)
    names = {kw.value.id for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == lineno
             for kw in node.keywords if kw.arg == "generator" and isinstance(kw.value, ast.Name)}
    if not names:
        return ""
    gname = sorted(names)[0]
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.stmt) and first <= node.lineno <= last and node.lineno < lineno) \
                or isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef)):
            continue
        binds = any(isinstance(t, ast.Name) and t.id == gname for n in ast.walk(node) if isinstance(n, ast.Assign)
                    for t in n.targets)
        calls = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                    and n.func.value.id == gname for n in ast.walk(node))
        if binds or calls:
            lines.append((node.lineno, linecache.getline(call.code.co_filename, node.lineno).strip()))
    if not lines:
        return ""
    return (f"; that line draws from your generator `{gname}`, so the draw differs when `{gname}` is in another "
            "state than the reference's: look at how it is made and seeded (your line"
            + ("s " if len(lines) > 1 else " ") + ", ".join(f'"{t}"' for _, t in sorted(set(lines)))
            + "; g.seed() draws a fresh random seed, g.manual_seed(seed) sets the one given)")


def _latest_call(qualname: str, var: str):
    """The latest recorded call of ``qualname`` (in the test cell that runs, or ran last) that binds ``var``, or
    None."""
    rec = _current[0] if _current else None
    return next((call for call in reversed(rec.calls if rec is not None else [])
                 if call.code.co_qualname == qualname and var in call.first), None)


def value_as_reference(qualname: str, var: str) -> bool:
    """Whether ``var``, made once in the latest recorded call of ``qualname``, holds the reference's value there
    (given the reference's inputs): an edit of the line that makes it cannot be the student's mistake. Never fails:
    False when unknown."""
    try:
        call = _latest_call(qualname, var)
        if call is None or call.count.get(var, 1) != 1 or not _given_as_reference(
                call, lambda n: hints.reference_value(call.line, qualname, call.signature, n)):
            return False
        ref = hints.reference_value(call.line, qualname, call.signature, var)
        if hints.reference_value(call.line, qualname, call.signature, f"{var}#n") is not None:
            return False
        return _differs(call.first[var][0], ref) is False
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return False


def lines_mention(qualname: str, var: str, words: set, expr: str | None = None) -> bool | None:
    """Whether any line of the latest recorded call of ``qualname`` that binds ``var`` names one of ``words`` (a
    variable, or an attribute or method such as ``sigmoid``) and, when ``expr`` is given, holds that expression
    (compared as parsed code, so spacing does not count); None when unknown (no such call, or a line that is part
    of a longer statement). Never fails."""
    try:
        call = _latest_call(qualname, var)
        if call is None:
            return None
        want = ast.unparse(ast.parse(expr, mode="eval").body) if expr is not None else None
        lines = {ln for _, ln, _ in call.seq.get(var, [])} | {call.first[var][1]}
        for ln in lines:
            try:
                tree = ast.parse(linecache.getline(call.code.co_filename, ln).strip())
            except SyntaxError:
                return None
            if words & pysource.identifiers(tree) and (want is None or any(
                    ast.unparse(n) == want for n in ast.walk(tree) if isinstance(n, ast.expr))):
                return True
        return False
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return None


def line_as_reference(qualname: str, var: str) -> bool:
    """Whether the student's line that makes ``var`` in the latest recorded call of ``qualname`` reads and calls
    what the reference's line does (the same features: the line was not edited in its names or calls). Never
    fails: False when unknown."""
    try:
        call = _latest_call(qualname, var)
        if call is None:
            return False
        ref = hints.reference_value(call.line, qualname, call.signature, var)
        if not ref or "reads" not in ref or call.count.get(var, 1) != 1 \
                or hints.reference_value(call.line, qualname, call.signature, f"{var}#n") is not None:
            return False            # bound more than once: the edit may be in a later line that binds it
        mine = sorted({feature_key(f) for f in line_features(call.code.co_filename, call.first[var][1],
                                                             call.code.co_varnames)})
        return mine == sorted(ref["reads"])
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return False


_PURE = {"sigmoid", "tanh", "relu", "softmax", "log_softmax", "exp", "log", "sqrt", "abs", "neg", "pow", "t",
         "transpose", "permute", "reshape", "view", "unsqueeze", "squeeze", "flip", "clone", "detach", "float", "long",
         "double", "sum", "mean", "masked_fill", "add", "mul", "sub", "div", "clamp", "contiguous", "cat", "stack",
         "where", "matmul", "mm", "bmm", "chunk", "split", "flatten", "expand", "repeat", "argmax", "topk", "gather",
         "index_select", "norm", "roll", "tril", "triu", "lerp", "maximum", "minimum"}


def _your_line(call, lineno: int) -> str:
    """'your line "..." in f': a line of the function of ``call``, as the messages name it."""
    return f'your line "{linecache.getline(call.code.co_filename, lineno).strip()}" in {call.code.co_qualname}'


def _called_functions(every: bool = False):
    """``(call, function node)`` of each notebook function called by the test cell that runs (or ran last), the
    first call of each function only (``every``: each recorded call, latest first), in the order they started."""
    rec = _current[0] if _current else None
    seen = set()
    for call in (reversed(rec.calls) if every else rec.calls) if rec is not None else []:
        code = call.code
        if code in seen and not every or not _is_cell(code.co_filename):
            continue
        seen.add(code)
        tree = _cell_tree(code.co_filename)
        fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and n.name == code.co_name and n.lineno <= code.co_firstlineno + len(n.decorator_list)
                   and n.lineno >= code.co_firstlineno), None) if tree is not None else None
        if fn is not None:
            yield call, fn


def code_mentions(words) -> bool | None:
    """Whether the source of a notebook function called by the running test names one of ``words`` (as a name or an
    attribute: ``reshape`` in ``x.reshape(...)``); None when no call was recorded. Never fails."""
    try:
        found = None
        for _, fn in _called_functions():
            found = bool(pysource.identifiers(fn) & set(words)) or bool(found)
            if found:
                return True
        return found
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return None


_PURE_BUILTINS = {"sorted", "reversed", "list", "tuple", "abs", "min", "max", "sum", "round", "len", "int", "float"}


def _slip_list_plus_tensor(call, fn, node, lists) -> str:
    """``outputs += h`` with ``outputs`` a list and ``h`` a tensor: += adds the tensor's rows."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) \
            and node.target.id in lists and isinstance(node.value, ast.Name) \
            and isinstance(call.first.get(node.value.id, (None,))[0], torch.Tensor):
        t, v = node.target.id, node.value.id
        return (f"{_your_line(call, node.lineno)} adds a tensor to the list {t} with +=, which adds the tensor's ITEMS "
                f"(its rows along the first axis, one list item each), not the tensor: {t}.append({v}) adds it as one "
                "item")
    return ""


_MODULES = ("torch", "F", "nn.functional", "torch.nn.functional", "math", "np", "numpy")    # f(x): x is what it makes anew


def _slip_discarded(call, fn, node, lists) -> str:
    """A line of its own that computes a new value and keeps nothing (``torch.tanh(g)``, ``sorted(xs)``)."""
    if not isinstance(node, ast.Expr):
        return ""
    v = node.value
    pure = (isinstance(v, ast.BinOp) or isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
            and v.func.attr in _PURE and not (isinstance(v.func.value, ast.Name) and v.func.value.id == "self")
            or isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in _PURE_BUILTINS)
    if not pure:
        return ""
    text = ast.unparse(v)
    module = isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and ast.unparse(v.func.value) in _MODULES
    method = isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and not module
    inplace = (f" (or its in-place form {ast.unparse(v.func.value)}.{v.func.attr}_())"
               if method and isinstance(v.func.value, ast.Name)
               and v.func.attr in ("sigmoid", "tanh", "relu", "exp", "masked_fill", "add", "mul", "clamp") else "")
    target = (ast.unparse(v.func.value) if method and isinstance(v.func.value, ast.Name)
              else ast.unparse(v.args[0]) if module and v.args and isinstance(v.args[0], ast.Name)
              else ast.unparse(v.args[0]) if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.args
              and isinstance(v.args[0], ast.Name)
              else ast.unparse(v.left) if isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) else None)
    keep = f": write {target} = {text}{inplace}" if target else ": assign it to a name"
    return f"{_your_line(call, node.lineno)} computes a new value and throws it away ({text} changes nothing by itself){keep}"


def _slip_times_one(call, fn, node, lists) -> str:
    """``n + 1 * H`` (a product with the number 1 inside a sum): meant as ``(n + 1) * H``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(node.right, ast.BinOp) \
            and isinstance(node.right.op, ast.Mult) and isinstance(node.right.left, ast.Constant) \
            and node.right.left.value == 1:
        a, b = ast.unparse(node.left), ast.unparse(node.right.right)
        op = "+" if isinstance(node.op, ast.Add) else "-"
        return (f"{_your_line(call, node.lineno)} has {ast.unparse(node)}, which Python reads as {a} {op} (1 * {b}) "
                f"= {a} {op} {b}: * binds before + and -, so ({a} {op} 1) * {b} needs the parentheses")
    return ""


def _slip_elif_flags(call, fn, node, lists) -> str:
    """``if a: ... elif b: ...`` with both ``a`` and ``b`` True in this call: the elif never runs."""
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and len(node.orelse) == 1 \
            and isinstance(node.orelse[0], ast.If) and isinstance(node.orelse[0].test, ast.Name):
        a, b = node.test.id, node.orelse[0].test.id
        if call.given.get(a) is True and call.given.get(b) is True:
            return (f"{_your_line(call, node.orelse[0].lineno)} runs only when `if {a}:` before it did not: with "
                    f"{a}=True and {b}=True (as here) only the first branch runs; two options that can both be set "
                    f"take two separate ifs")
    return ""


def _slip_tiny_fill(call, fn, node, lists) -> str:
    """``masked_fill(mask, -1e-9)``: a fill value near 0 where a large negative one (-1e9, -inf) is meant."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "masked_fill", "masked_fill_") and len(node.args) == 2:
        try:
            value = float(ast.literal_eval(node.args[1]))
        except (ValueError, TypeError, SyntaxError):
            return ""
        if value != 0 and abs(value) < 1e-3:
            return (f"{_your_line(call, node.lineno)} fills with {ast.unparse(node.args[1])}, a number close to 0 "
                    f"(not a large negative one): after the softmax those positions keep about the weight of a 0 "
                    f"energy; -1e9 (or float('-inf')) is meant")
    return ""


def _slip_rows_index(call, fn, node, lists) -> str:
    """``x[:, idx]`` with a (B, T) integer ``idx`` of per-row positions: every row is read at every row's
    positions, (B, B, T); gather reads each row at its own."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2 \
            and isinstance(node.slice.elts[0], ast.Slice) and node.slice.elts[0].lower is None \
            and node.slice.elts[0].upper is None and isinstance(node.slice.elts[1], ast.Name) \
            and isinstance(node.value, ast.Name):
        x, idx = (call.first.get(n, (call.given.get(n),))[0] for n in (node.value.id, node.slice.elts[1].id))
        if isinstance(x, torch.Tensor) and isinstance(idx, torch.Tensor) and not idx.is_floating_point() \
                and idx.dtype != torch.bool and idx.dim() == 2 and x.dim() >= 2 and idx.shape[0] == x.shape[0]:
            i, xs = node.slice.elts[1].id, node.value.id
            return (f"{_your_line(call, node.lineno)} indexes {xs}[:, {i}] with a {_shape_words(idx)} index: that "
                    f"reads EVERY row of {xs} at every row's positions ({_shape_words(x[:, idx])}); to read row b at "
                    f"its own positions {i}[b], use torch.gather({xs}, 1, {i}) (for more axes, expand {i} to them) or "
                    f"{xs}[torch.arange({xs}.shape[0])[:, None], {i}]")
    return ""


def _slip_flag_overwritten(call, fn, node, lists) -> str:
    """In a loop, a flag of finished rows made before it (``done``, a bool tensor or a list of bools) made again from
    this step alone (``done = y == eos``, ``finished[b] = token == EOS``: not reading what it held) and asked with
    all()/any() in the loop: what earlier steps set is lost."""
    if not isinstance(node, (ast.For, ast.While)):
        return ""

    def flag_before(var) -> bool:
        value, made_at = call.first.get(var, (None, None))
        if isinstance(value, torch.Tensor) and value.dtype == torch.bool and made_at is not None \
                and made_at < node.lineno:
            return True
        return any(isinstance(a, ast.Assign) and a.lineno < node.lineno and any(
            isinstance(t, ast.Name) and t.id == var for t in a.targets) and "False" in ast.unparse(a.value)
            for a in ast.walk(fn))

    def asked(var) -> bool:
        for b in node.body:
            for n in ast.walk(b):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("all", "any") \
                        and var in pysource.identifiers(n.func.value):
                    return True
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("all", "any") \
                        and any(var in pysource.identifiers(x) for x in n.args):
                    return True
        return False

    for stmt in (m for b in node.body for m in ast.walk(b)):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        var = target.id if isinstance(target, ast.Name) else target.value.id if isinstance(
            target, ast.Subscript) and isinstance(target.value, ast.Name) else None
        if var is None or var in pysource.identifiers(stmt.value) or not flag_before(var) or not asked(var) \
                or isinstance(stmt.value, ast.Constant) and stmt.value.value:   # finished[b] = True only sets it
            continue
        kept = (f"{var} = {var} | ({ast.unparse(stmt.value)})" if isinstance(target, ast.Name)
                else f"{ast.unparse(target)} = {ast.unparse(target)} or ({ast.unparse(stmt.value)})")
        return (f"{_your_line(call, stmt.lineno)} makes {ast.unparse(target)} again from this step alone: what "
                f"earlier steps set in it is lost (a sentence that finished before counts as not finished again); "
                f"keep it, {kept}")
    return ""


def _slip_trailing_comma(call, fn, node, lists) -> str:
    """``return (h, c),``: a comma after the pair makes a tuple of ONE item holding it."""
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 1 \
            and isinstance(node.value.elts[0], ast.Tuple):
        return (f"{_your_line(call, node.lineno)} ends with a comma: Python then returns a tuple of ONE item that "
                f"holds {ast.unparse(node.value.elts[0])}; drop the comma")
    return ""


def _slip_conditional(call, fn, node, lists) -> str:
    """``a if c else b + d`` or ``a + b if c else 0``: the conditional takes more (or less) than meant."""
    if isinstance(node, ast.IfExp):
        note = pysource.precedence_note(ast.unparse(node))
        if note:
            return f"{_your_line(call, node.lineno)}: {note.strip()[1:-1]}"
    return ""


def _slip_bitwise_compare(call, fn, node, lists) -> str:
    """``done | y == eos``: | (and &) bind before == and !=, so the comparison takes ``done | y``."""
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.BinOp) \
            and isinstance(node.left.op, (ast.BitOr, ast.BitAnd)):
        note = pysource.precedence_note(ast.unparse(node))
        if note:
            return f"{_your_line(call, node.lineno)}: {note.strip()[1:-1]}"
    return ""


def _slip_from_the_end(call, fn, node, lists) -> str:
    """``x[b, -1 - k]`` in a function given ``lengths``: a negative index counts from the end of the PADDED axis."""
    code = call.code
    if "lengths" not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] or not isinstance(node, ast.Subscript):
        return ""
    for part in (node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]):
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Sub) and (
                isinstance(part.left, ast.UnaryOp) and isinstance(part.left.op, ast.USub)
                or isinstance(part.left, ast.Constant) and isinstance(part.left.value, int) and part.left.value < 0):
            return (f"{_your_line(call, node.lineno)} indexes with {ast.unparse(part)}: a negative index counts from "
                    "the END of the padded axis (T steps, padding included), not from a sequence's last real step: "
                    f"that is lengths[b] - 1, so index with lengths[b] - 1 - ... instead")
    return ""


def _slip_copy_scaled(call, fn, node, lists) -> str:
    """``flat = torch.cat(...)`` then ``flat.mul_(...)``: the in-place change reaches the copy, not its pieces."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_")
            and not node.func.attr.startswith("_") and isinstance(node.func.value, ast.Name)):
        return ""
    name = node.func.value.id
    made = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in n.targets) and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in ("cat", "stack", "concat")]
    if made:
        return (f"{_your_line(call, node.lineno)} changes {name} in place, but {name} is a NEW tensor that "
                f"torch.{made[0].value.func.attr} made by copying its pieces: the tensors it was made from are "
                "unchanged; change each of them (e.g. g.mul_(scale) in a loop over them)")
    return ""


def slip_longest_item(call, fn, node, lists) -> str:
    """``T = max(sequences, key=len)``: the longest item itself, where its length is meant."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min") \
            and any(k.arg == "key" and ast.unparse(k.value) == "len" for k in node.keywords):
        return (f"{_your_line(call, node.lineno)} takes {ast.unparse(node)}: with key=len, {node.func.id} returns "
                f"the longest ITEM itself (a list), not its length; the length is len({ast.unparse(node)}), or "
                f"{node.func.id}(len(s) for s in {ast.unparse(node.args[0]) if node.args else '...'})")
    return ""


def _shape_words(t) -> str:
    return "(" + ", ".join(str(int(s)) for s in t.shape) + ")"


def slip_get_without_default(call, fn, node, lists) -> str:
    """``d.get(key)`` without a default (or ``map(d.get, keys)``): a key not in the dict gives None."""
    def known(expr):        # the value of a name the call was given or made; None when unknown
        n = _base(expr)
        return call.first[n][0] if n in call.first else call.given.get(n)

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and len(node.args) == 1 and not node.keywords and isinstance(known(node.func.value), (dict, type(None))):
        d = ast.unparse(node.func.value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map" and node.args \
            and isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "get":
        d = ast.unparse(node.args[0].value)
    else:
        return ""
    return (f"{_your_line(call, node.lineno)} looks up with {d}.get and no default: a key that is not in {d} gives "
            f"None; give the default as the second argument, {d}.get(key, default)")


def slip_get_default(value, want: type):
    """A slip (for :func:`named_slip`): ``stoi.get(token, "<unk>")`` whose default is the very ``value`` a check found
    where a ``want`` (an int) is asked: an unknown key gives the default itself, of another type than the dict's
    values."""
    def slip(call, fn, node, lists) -> str:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)
                and type(node.args[1].value) is type(value) and node.args[1].value == value):
            return ""
        d = ast.unparse(node.func.value)
        return (f"{_your_line(call, node.lineno)} gives {d}.get the default {value!r}, a {type(value).__name__}: a "
                f"key that is not in {d} gives {value!r} itself, where {'an' if want.__name__[0] in 'aeiou' else 'a'} "
                f"{want.__name__} (the value that stands for it, as the docstring names it) is meant")
    return slip


_SETUP_INPLACE = {"requires_grad_", "manual_seed", "zero_", "uniform_", "normal_", "fill_", "copy_", "retain_grad"}


def _slip_inplace_result_bound(call, fn, node, lists) -> str:
    """``zh = z.mul_(h)`` with ``z`` read on a later line: the trailing _ changed z itself, so the later line reads
    z * h (the student took the in-place method for a new value)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
            and isinstance(node.value.func.value, ast.Name)):
        return ""
    method, base, target = node.value.func.attr, node.value.func.value.id, node.targets[0].id
    if not method.endswith("_") or method.startswith("_") or method in _SETUP_INPLACE or base == target:
        return ""
    later = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == base and isinstance(n.ctx, ast.Load)
             and n.lineno > node.lineno]
    if not later:
        return ""
    return (f"{_your_line(call, node.lineno)} changes {base} itself: .{method}() (with the trailing _) works IN "
            f"PLACE and returns {base}, so {target} and {base} are one tensor and every later line that reads {base} "
            f"reads the changed values; for a new tensor write {ast.unparse(node.value).replace(f'.{method}(', f'.{method[:-1]}(', 1)}")


def _slip_if_if_else(call, fn, node, lists) -> str:
    """``if a: x = 1`` then ``if b: x = 2 else: x = 3``: the else belongs to the second if only, so it overwrites
    what the first set (elif was meant)."""
    blocks = [getattr(node, f, None) for f in ("body", "orelse")] + ([fn.body] if node is fn.body[0] else [])
    for stmts in blocks:
        if not isinstance(stmts, list):
            continue
        for first, second in zip(stmts, stmts[1:]):
            if not (isinstance(first, ast.If) and isinstance(second, ast.If) and not first.orelse and second.orelse):
                continue

            def bound(body):
                return {t.id for s in body for n in ast.walk(s) if isinstance(n, ast.Assign)
                        for t in n.targets if isinstance(t, ast.Name)}

            shared = bound(first.body) & bound(second.body) & bound(second.orelse)
            if shared:
                name = sorted(shared)[0]
                return (f"the else of {_your_line(call, second.lineno)} belongs to that if only: it runs whenever "
                        f"{ast.unparse(second.test)} is false, also after \"if {ast.unparse(first.test)}:\" set "
                        f"{name}, and sets {name} again; write the second test as elif")
    return ""


def _slip_pad_from_predictions(call, fn, node, lists) -> str:
    """``logits.argmax(-1) != PAD``: the padding read from the model's predictions, not from the targets."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
        return ""
    sides = [node.left, node.comparators[0]]
    pad = [x for x in sides if re.search(r"pad", ast.unparse(x), re.I) and not any(
        isinstance(n, ast.Call) for n in ast.walk(x))]
    predicted = [x for x in sides if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                          and n.func.attr == "argmax" for n in ast.walk(x))]
    if not (pad and predicted):
        return ""
    return (f"{_your_line(call, node.lineno)} finds the padding from the model's predictions "
            f"({ast.unparse(predicted[0])}): the padding is where the TARGET holds {ast.unparse(pad[0])} (compare the "
            f"targets with it); what the model predicts says nothing about which positions are real")


_RETURNS_NONE = ("append", "extend", "insert", "sort", "reverse", "remove", "clear", "update")


def _slip_none_method_bound(call, fn, node, lists) -> str:
    """``ids = ids.append(EOS)``: a list (or dict) method that changes it in place and returns None, its result
    bound to a name."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr in _RETURNS_NONE and isinstance(node.value.func.value, ast.Name)):
        return ""
    owner, method = node.value.func.value.id, node.value.func.attr
    value = call.first[owner][0] if owner in call.first else call.given.get(owner)
    if method in ("sort", "reverse", "update") and not isinstance(value, (list, dict)) and owner not in lists:
        return ""             # (a tensor's .sort() returns values and indices)
    return (f"{_your_line(call, node.lineno)} binds {node.targets[0].id} to None: .{method}() changes {owner} in "
            f"place and returns None; call it on its own line ({ast.unparse(node.value)}) and keep using {owner}")


def _slip_unbatched_rnn(call, fn, node, lists) -> str:
    """``self.rnn(x[:, t], h)`` with an nn.RNN / nn.GRU / nn.LSTM (not a cell) given one time step of a batch, a 2-D
    (B, D) tensor: nn.RNN reads a 2-D input as ONE unbatched sequence of B steps."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and isinstance(node.args[0], ast.Subscript)):
        return ""
    layer = call.layers.get(ast.unparse(node.func))
    arg = node.args[0]
    whole = call.first[arg.value.id][0] if isinstance(arg.value, ast.Name) and arg.value.id in call.first \
        else call.given.get(arg.value.id) if isinstance(arg.value, ast.Name) else None
    if not (isinstance(layer, type) and issubclass(layer, torch.nn.RNNBase)) or not isinstance(whole, torch.Tensor):
        return ""
    parts = arg.slice.elts if isinstance(arg.slice, ast.Tuple) else [arg.slice]
    dropped = sum(1 for e in parts if not isinstance(e, ast.Slice)
                  and not (isinstance(e, ast.Constant) and e.value in (None, Ellipsis)))
    if whole.dim() - dropped != 2:
        return ""
    kind = layer.__name__
    return (f"{_your_line(call, node.lineno)} gives nn.{kind} {ast.unparse(arg)}, a 2-D tensor: nn.{kind} reads a 2-D "
            f"input as ONE unbatched sequence (its rows are time steps), not as one step of a batch; give it the whole "
            f"(B, T, D) sequence once (it loops over time itself), or one step as {ast.unparse(arg.value)}[:, t:t + 1]")


def _slip_argument_unpacked_over(call, fn, node, lists) -> str:
    """``h_r, h_z, h = gh.chunk(3)`` in a function given ``h``: an unpacking binds an argument's name again, from a
    value not made of it, and later lines read the name (the student meant the argument; they get the new value)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List))):
        return ""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} - {"self"}
    read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    for t in node.targets[0].elts:
        if not (isinstance(t, ast.Name) and t.id in params and t.id not in read):
            continue
        loads = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == t.id
                 and isinstance(n.ctx, ast.Load)]
        if any(x < node.lineno for x in loads) and any(x > node.lineno for x in loads):
            return (f"{_your_line(call, node.lineno)} binds {t.id}, an argument of {call.code.co_qualname} that "
                    f"earlier lines read, to a new value ({ast.unparse(node.value)}); every later line that reads "
                    f"{t.id} gets that value, not the argument: give the new value another name")
    return ""


def _slip_stale_loop_variable(call, fn, node, lists) -> str:
    """``for tok, lp in enumerate(...): ...`` and later, in another loop, ``if tok == EOS``: a loop's variable read
    after its loop ended holds the last item it took, the same at every step of the later loop."""
    if not isinstance(node, (ast.For, ast.While)):
        return ""
    inside = {id(n) for n in ast.walk(node)}
    bound_here = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    comprehended = {n.id for c in ast.walk(node) if isinstance(c, ast.comprehension)
                    for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For) or id(loop) in inside or loop.end_lineno >= node.lineno:
            continue
        for name in (n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)):
            if name in bound_here or name in comprehended:
                continue
            others = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
                      and isinstance(n.ctx, ast.Store) and not any(n is m for m in ast.walk(loop.target))]
            if others:
                continue
            use = next((n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name
                        and isinstance(n.ctx, ast.Load)), None)
            if use is not None:
                loop_line = linecache.getline(call.code.co_filename, loop.lineno).strip()
                return (f"{_your_line(call, use.lineno)} reads {name}, the variable of the loop at your line "
                        f"\"{loop_line}\", which had ended: {name} keeps the last "
                        f"item that loop took, the same at every step here, not a value of the item this loop is at")
    return ""


def _slip_teacher_forcing_own_guess(call, fn, node, lists) -> str:
    """In a teacher-forced function (its name or docstring says teacher forcing), the decoder's own arg-max bound
    and fed back as the next input: that is greedy decoding, not teacher forcing."""
    doc = (ast.get_docstring(fn) or "") + fn.name
    if not (re.search(r"teacher", doc, re.I) and isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
        return ""
    if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "argmax"
               for n in ast.walk(node.value)):
        return ""
    name = node.targets[0].id
    fed = any(isinstance(c, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in c.args)
              for c in ast.walk(fn))
    if not fed:
        return ""
    return (f"{_your_line(call, node.lineno)} feeds the decoder its own guess ({ast.unparse(node.value)}): teacher "
            "forcing feeds the TRUE previous token at every step (the target sequence, shifted by one), whatever the "
            "decoder predicted; feeding back its own arg-max is greedy decoding")


def slip_inplace_on_argument(call, fn, node, lists) -> str:
    """``W.t_()``, ``mask[:, None].logical_not_()``: an in-place method (trailing _) on a tensor the caller passed
    (or a view of it): the caller's tensor changes, so the first call is right and later calls are not."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_")
            and not node.func.attr.startswith("_") and node.func.attr not in _SETUP_INPLACE):
        return ""
    code = call.code
    arg = _base(node.func.value, ("unsqueeze", "view", "transpose", "permute", "expand", "t", "reshape"))
    if arg is None or arg not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] \
            or not isinstance(call.given.get(arg), torch.Tensor):
        return ""
    plain = node.func.attr[:-1]
    return (f"{_your_line(call, node.lineno)} changes {arg} ITSELF: .{node.func.attr}() works in place on the tensor "
            f"the caller passed (a view of it too), so the first call is right and every later call (and the caller) "
            f"gets {arg} changed; use .{plain}(), which makes a new tensor")


def _slip_matrix_two_norm(call, fn, node, lists) -> str:
    """``torch.linalg.norm(g, 2)`` of a 2-D tensor: the matrix 2-norm (its largest singular value), where the
    Euclidean norm of all the entries is meant."""
    if not (isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-2:] == ["linalg", "norm"] and node.args):
        return ""
    order = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "ord"), None)
    if not (isinstance(order, ast.Constant) and order.value == 2):
        return ""
    x = node.args[0]
    value = (call.first.get(x.id, (None,))[0] if x.id in call.first else call.given.get(x.id)) \
        if isinstance(x, ast.Name) else None
    if isinstance(value, torch.Tensor) and value.dim() < 2:
        return ""
    return (f"{_your_line(call, node.lineno)} asks torch.linalg.norm for ord=2, which for a matrix is the matrix "
            f"2-norm (its largest singular value), not the Euclidean norm of all its entries: "
            f"torch.linalg.vector_norm({ast.unparse(x)}) (or torch.linalg.norm({ast.unparse(x)}) with no ord)")


_SLIPS = (_slip_list_plus_tensor, _slip_discarded, _slip_times_one, _slip_elif_flags, _slip_tiny_fill,
          _slip_rows_index, _slip_flag_overwritten, _slip_trailing_comma, _slip_conditional, _slip_from_the_end,
          _slip_copy_scaled, slip_longest_item, _slip_unbatched_rnn, _slip_inplace_result_bound,
          _slip_if_if_else, _slip_pad_from_predictions, _slip_none_method_bound,
          _slip_bitwise_compare, _slip_argument_unpacked_over, _slip_stale_loop_variable,
          _slip_teacher_forcing_own_guess, slip_inplace_on_argument, _slip_matrix_two_norm)


def discarded_value() -> str:
    """A slip in a notebook function called by the test cell that runs (or ran last), in words; ``""`` when there is
    none. Never fails. The slips (``_SLIPS``): a statement that computes a value and throws it away (``f.sigmoid()``,
    ``torch.tanh(g)``, ``sorted(xs)``, ``ids + [EOS]`` on a line of their own: they make a new value and change
    nothing); a tensor added to a list with ``+=`` (which adds its rows); ``n + 1 * H`` for ``(n + 1) * H``; an
    ``elif`` on an option that is set together with the ``if``'s; a fill value close to 0 where -1e9 is meant; a
    (B, T) index of per-row positions used as ``x[:, idx]``; a flag of finished rows made again at every step;
    ``return (h, c),``; a conditional expression that takes more or less than meant; ``x[b, -1 - k]`` on a padded
    axis; an in-place change of a copy made by torch.cat; ``max(xs, key=len)`` for a length."""
    return named_slip(*_SLIPS)


def named_slip(*slips, every: bool = True) -> str:
    """The first of ``slips`` (functions ``(call, function node, node, names bound to lists) -> words or ""``, those
    of ``_SLIPS`` and the scanners below) found in a notebook function called by the running test (``every``: in each
    recorded call, latest first; otherwise in the first call of each function, in the order they started), in
    words; ``""`` when none. Never fails."""
    try:
        for call, fn in _called_functions(every=every):
            lists = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign)
                     and (isinstance(n.value, ast.List) or isinstance(n.value, ast.Call)
                          and isinstance(n.value.func, ast.Name) and n.value.func.id == "list")
                     for t in n.targets if isinstance(t, ast.Name)}
            for node in (m for stmt in fn.body for m in ast.walk(stmt)):
                for slip in slips:
                    said = slip(call, fn, node, lists)
                    if said:
                        return said
        return ""
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def unreturned_result() -> str:
    """A notebook function called by the running test that returns nothing (no ``return`` with a value) and ends
    with a line that computes a value (``attend(...)`` as the last line): that line, in words; ``""`` when none.
    Never fails."""
    try:
        for call, fn in _called_functions(every=True):
            nested = {id(n) for d in ast.walk(fn) if d is not fn and isinstance(d, (ast.FunctionDef, ast.Lambda))
                      for n in ast.walk(d)}
            if call.end is None or any(isinstance(n, ast.Return) and n.value is not None and id(n) not in nested
                                       for n in ast.walk(fn)):
                continue
            last = fn.body[-1]
            if isinstance(last, ast.Expr) and isinstance(last.value, (ast.Call, ast.BinOp, ast.Tuple, ast.Name)) \
                    and not (isinstance(last.value, ast.Call) and ast.unparse(last.value.func) == "print"):
                return (f"{call.code.co_qualname} returns nothing: its last line, "
                        f"\"{linecache.getline(call.code.co_filename, last.lineno).strip()}\", computes the result "
                        f"and drops it: write return {ast.unparse(last.value)}")
        return ""
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def _slip_batch_axis_loop(call, fn, node, lists) -> str:
    """A loop that takes the pieces of a tensor along dimension 0 (``for x_t in x.unbind():``, ``for x_t in x:`` of a
    batch-first (B, T, ...) tensor), where the time steps are along dimension 1."""
    if not isinstance(node, (ast.For, ast.comprehension)):
        return ""
    it = node.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "unbind" \
            and not it.args and not it.keywords:
        whole = ast.unparse(it.func.value)
    elif isinstance(it, ast.Name) and isinstance(call.first.get(it.id, (None,))[0], torch.Tensor) \
            and call.first[it.id][0].dim() >= 3:
        whole = it.id
    else:
        return ""
    lineno = getattr(node, "lineno", None) or it.lineno
    return (f"{_your_line(call, lineno)} takes the pieces of {whole} along dimension 0, the BATCH "
            f"({ast.unparse(it)} splits along dim 0): the time steps of a batch-first {whole} are "
            f"{whole}.unbind(1), or {whole}[:, t] for t in range({whole}.shape[1])")


def batch_axis_loop() -> str:
    """A loop of a notebook function called by the running test that takes the pieces of a tensor along dimension 0
    (:func:`_slip_batch_axis_loop`), in words; ``""`` when none. Never fails."""
    return named_slip(_slip_batch_axis_loop, every=False)


def _base(node, calls: tuple = ()):
    """The name under subscripts, attributes and the method calls named in ``calls`` (views: ``("unsqueeze",
    "view")``): ``x`` of ``x[:, t].data`` or of ``x.unsqueeze(-1)[..., 0]``; None when there is none."""
    while isinstance(node, (ast.Subscript, ast.Attribute)) or isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) and node.func.attr in calls:
        node = node.func.value if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def inplace_write(argument: str) -> str:
    """A line of a notebook function called by the running test that writes into its argument ``argument`` in
    place (``x.sub_(1)``, ``x[:, t].pow_(2)``, ``x[...] = v``, ``x += v``), in words; ``""`` when none. Never fails."""
    def slip(call, fn, node, lists) -> str:
        code = call.code
        if argument not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            return ""
        how = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr.endswith("_") and not node.func.attr.startswith("_") \
                and _base(node.func.value) == argument:
            how = f".{node.func.attr}(), the in-place form of .{node.func.attr[:-1]}()"
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and _base(t) == argument
                                                  for t in node.targets):
            how = "an assignment into its entries"
        elif isinstance(node, ast.AugAssign) and _base(node.target) == argument \
                and isinstance(call.given.get(argument), torch.Tensor):
            how = "an augmented assignment, in place on a tensor"
        return f"{_your_line(call, node.lineno)} writes into {argument} ({how})" if how else ""
    return named_slip(slip)


def _slip_graph_cut(call, fn, node, lists) -> str:
    """A value taken out of the autograd graph: ``with torch.no_grad():``, ``.detach()``, ``.data``."""
    cut = None
    if isinstance(node, ast.With) and any("no_grad" in ast.unparse(i.context_expr) for i in node.items):
        cut = "torch.no_grad()"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "detach", "detach_"):
        cut = f".{node.func.attr}()"
    elif isinstance(node, ast.Attribute) and node.attr == "data":
        cut = ".data"
    return f"{_your_line(call, node.lineno)} cuts it ({cut})" if cut else ""


def graph_cut(about: str | None = None) -> str:
    """A line of a notebook function called by the running test that takes a value out of the autograd graph
    (:func:`_slip_graph_cut`), in words; ``""`` when none. ``about``: the tensor whose gradient is asked (``h0``): a
    cut on a line that reads it is named first (another cut, in a helper the test calls, may be meant). Never
    fails."""
    if about:
        def on_it(call, fn, node, lists):
            line = linecache.getline(call.code.co_filename, getattr(node, "lineno", 0))
            return _slip_graph_cut(call, fn, node, lists) if re.search(rf"(?<![\w.]){re.escape(about)}\b", line) \
                else ""
        said = named_slip(on_it, every=False)
        if said:
            return said
    return named_slip(_slip_graph_cut, every=False)


def _slip_max_values(call, fn, node, lists) -> str:
    """The VALUES of a max (``x.max(dim)[0]``, ``.values``, ``torch.max(x, dim)[0]``) taken where positions (token
    ids) are meant."""
    inner = node.value if isinstance(node, (ast.Subscript, ast.Attribute)) else None
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "max" and (len(inner.args) + len(inner.keywords)
                                              >= (2 if ast.unparse(inner.func.value) == "torch" else 1))):
        return ""
    if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0) \
            or (isinstance(node, ast.Attribute) and node.attr == "values"):
        return (f"{_your_line(call, node.lineno)} takes {ast.unparse(node)}: max over an "
                "axis returns (values, indices), and [0] (.values) are the largest SCORES; the positions "
                "(the token ids) are its [1] (.indices), or x.argmax(dim)")
    return ""


def max_values_taken() -> str:
    """A line of a notebook function called by the running test that takes the VALUES of a max where positions are
    meant (:func:`_slip_max_values`), in words; ``""`` when none. Never fails."""
    return named_slip(_slip_max_values, every=False)


def _slip_zero_factor(call, fn, node, lists) -> str:
    """A product with an argument which is 0 in that call (``score / length * alpha`` with alpha = 0): every value
    made from it is 0."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return ""
    zeros = {n: v for n, v in call.given.items() if type(v) in (int, float) and v == 0}
    name = next((x.id for x in (node.left, node.right) if isinstance(x, ast.Name) and x.id in zeros), None)
    return (f"{_your_line(call, node.lineno)} multiplies by {name}, which is {zeros[name]!r} in this test, so what "
            f"it makes is 0: is {name} meant as a factor there (an exponent is written **, and ** binds before * "
            f"and /)?") if name else ""


def zero_factor() -> str:
    """A line of a notebook function called by the running test that multiplies by an argument which is 0 in that
    call (:func:`_slip_zero_factor`), in words; ``""`` when none. Never fails."""
    return named_slip(_slip_zero_factor)


def bound_fewer_times(qualname: str, var: str) -> bool:
    """Whether the latest recorded call of ``qualname`` binds ``var`` only once where the reference's binds it
    several times (a loop carries it there): a line of the reference that makes ``var`` again has no counterpart in
    the student's code. Never fails: False when unknown."""
    try:
        call = _latest_call(qualname, var)
        if call is None:
            return False
        counted = hints.reference_value(call.line, qualname, call.signature, f"{var}#n")
        m = counted.get("value") if counted is not None else None
        return call.count.get(var, 1) == 1 and isinstance(m, int) and m > 1
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return False


def number_arguments() -> dict:
    """``{argument name: number}`` of the numbers (not 0, 1 or a flag) the notebook functions were given while the
    test cell that runs (or ran last) called them: the factors a wrong result may be off by. Never fails."""
    try:
        rec = _current[0] if _current else None
        found = {}
        for call in reversed(rec.calls if rec is not None else []):
            for name, v in call.given.items():
                if type(v) in (int, float) and v not in (0, 1) and name not in found:
                    found[name] = v
        return found
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return {}


def raised_difference() -> str:
    """For a test cell whose run raised inside a notebook function: the innermost recorded call that never returned,
    when it was given the reference's inputs, and the first variable it bound (in the order they were bound) whose
    value is not the reference's, with its line, in words; ``""`` otherwise (other inputs: the caller is the place
    to look). Never fails."""
    try:
        rec = _current[0] if _current else None
        raised = [c for c in (rec.calls if rec is not None else []) if c.raised or c.end is None]
        if not raised:
            return ""
        for call in sorted(raised, key=lambda c: c.start, reverse=True):   # the innermost given the reference's inputs
            def ref(name, call=call):
                return hints.reference_value(call.line, call.code.co_qualname, call.signature, name)

            if _given_as_reference(call, ref):
                break
        else:
            return ""
        swapped = _swapped_names(call, ref)
        if swapped:
            return (f"in {call.code.co_qualname}, given the same inputs as the reference's (while the test ran "
                    f"`{call.line}`), {swapped}: it goes wrong before the line that raises, so the error likely "
                    "starts there")
        for name, (value, lineno) in call.first.items():
            pattern = ref(name)
            if isinstance(value, torch.Tensor) and (pattern or {}).get("shape") is not None \
                    and list(value.shape) != pattern["shape"]:
                return ""          # a tensor of another shape made first: the raising line's shapes say where
            if _differs(value, pattern):
                want, got = (ref(name) or {}).get("value"), _scalar(value)
                numbers = f" ({_number(got)} where the reference's is {_number(want)})" if None not in (want, got) \
                    else _how(value, ref(name) or {})
                line = linecache.getline(call.code.co_filename, lineno).strip()
                return (f"in {call.code.co_qualname}, given the same inputs as the reference's (while the test ran "
                        f"`{call.line}`), `{name}` is the first variable whose value differs from the reference's "
                        f"`{name}`{numbers}" + (f', made at your line "{line}"' if line else "")
                        + ": it goes wrong before the line that raises, so the error likely starts there")
        return ""
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def first_nan() -> str:
    """The first value a variable of the student's functions got that holds NaN while what its call was
    given holds none, in words (the function, the variable, the line), or ``""``: where NaN is made. Never fails."""
    try:
        rec = _current[0] if _current else None
        found = []
        for call in (rec.calls if rec is not None else []):
            if any(_bad(v) for v in call.given.values()):
                continue
            for name, seq in call.seq.items():
                for value, lineno, stamp in seq:
                    if _bad(value):
                        found.append((stamp, call, name, lineno))
                        break
        if not found:
            return ""
        stamp, call, name, lineno = min(found, key=lambda f: f[0])
        line = linecache.getline(call.code.co_filename, lineno).strip()
        rare = pysource.rare_function_note(line)     # F.softmin: the function is the cause, not where -inf went in
        return (f"the first variable that holds NaN is `{name}` in {call.code.co_qualname}"
                + (f', made at your line "{line}"' if line else "") + " (what it was given holds none)"
                + (f": {rare.strip()[1:-1]}" if rare else _from_infinite(call, name, line, stamp)
                   or _from_infinity_product(line) or _from_division(line))
                + _given_otherwise(rec, call))
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


INFINITY_PRODUCT = "0 * -inf is NaN"     # the words of _from_infinity_product: the cause is said


def _from_infinity_product(line: str) -> str:
    """The NaN made at a line that multiplies by an infinity (``(1 - mask) * float("-inf")``): 0 * inf is NaN, not
    0, in words; ``""`` otherwise."""
    try:
        tree = ast.parse(line.split("  #")[0].strip())
    except SyntaxError:
        return ""

    def infinite(node) -> bool:
        text = ast.unparse(node).replace(" ", "")
        return any(w in text for w in ("float('-inf')", "float('inf')", "float('-Infinity')", ".inf", "float('infinity')")) \
            or (isinstance(node, ast.Constant) and isinstance(node.value, float) and abs(node.value) == float("inf"))

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (infinite(node.left) or infinite(node.right)):
            return (f": the line multiplies by an infinity ({ast.unparse(node)}), and {INFINITY_PRODUCT} (not 0), so "
                    "every 0 of the other factor becomes NaN: put -inf in without a product, "
                    "x.masked_fill(~mask, float('-inf')) or torch.where(mask, x, float('-inf'))")
    return ""


def _from_division(line: str) -> str:
    """The NaN made at a line that divides (and takes no softmax): 0 / 0, in words; ``""`` otherwise."""
    try:
        tree = ast.parse(line.split("  #")[0].strip())
    except SyntaxError:
        return ""
    if "softmax" in line or not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in ast.walk(tree)):
        return ""
    return (", by a division: 0 / 0 gives NaN, so what it divides by is 0 somewhere (a sum over another axis than "
            "the one the values share, or over entries that are all 0?)")


def _from_infinite(call, name: str, line: str, stamp: int) -> str:
    """The NaN of ``name`` made at ``line`` from a variable that held +-inf just before (-inf put in before a product
    or a sum: inf - inf and inf * 0 are NaN): that variable and the line that put the inf there; ``""`` otherwise."""
    if "softmax" in line:            # NaN from a softmax over -inf only: the softmax checks say why
        return ""
    read = pysource.names_read(line) or set()
    for other in sorted(read - {name}):
        before = [(v, ln) for v, ln, st in call.seq.get(other, []) if st < stamp]
        if before and isinstance(before[-1][0], torch.Tensor) and before[-1][0].is_floating_point() \
                and bool(torch.isinf(before[-1][0]).any()):
            value, at = before[-1]
            sign = "-inf" if bool((value == float("-inf")).any()) else "inf"
            put = linecache.getline(call.code.co_filename, at).strip()
            return (f", from `{other}`, which holds {sign}" + (f' (since your line "{put}")' if put else "")
                    + f": a product or a sum with {sign} gives NaN (inf - inf, inf * 0), so put -inf in only after the "
                    "last product, into the scores that the softmax reads")
    return ""


def _given_otherwise(rec, call) -> str:
    """When ``call`` was given an argument other than the reference's call at the same test line (an inverted mask,
    energies already turned into weights): which one, how if a simple transform says it, and the line that passed
    it; ``""`` otherwise."""
    def ref(name):
        return hints.reference_value(call.line, call.code.co_qualname, call.signature, name)

    other = [n for n, v in call.given.items() if _differs(v, ref(n))]
    if not other:
        return ""
    name, value = other[0], call.given[other[0]]
    how = ""
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool and hints.matches(~value, ref(name)):
        how = " (it is the reference's inverted: True where the reference's is False)"
    elif isinstance(value, torch.Tensor):
        how = _how(value, ref(name) or {})
    from seqcourse.checks import _INSTRUCTOR_CELLS

    entry = rec.called.get((call.line, call.code.co_qualname), {}).get(repr(call.signature))
    where = entry[1] if entry is not None else None
    for _ in range(3):        # a test's own wrapper (defined in the setup cell) called it: the wrapper's caller
        if where is None or where[1] not in _INSTRUCTOR_CELLS:
            break
        outer = next(iter(rec.called.get((call.line, where[0]), {}).values()), None)
        where = outer[1] if outer is not None else None
    caller = (f', from your line "{linecache.getline(where[1], where[2]).strip()}" in {where[0]}'
              if where else "")
    return (f"; but {call.code.co_qualname} was given a `{name}` other than the reference's{how}{caller}: if "
            f"{call.code.co_qualname} passed its own test, what it is given is the cause")


def _bad(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point() and bool(torch.isnan(value).any())
