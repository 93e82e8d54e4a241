"""Where a student's values first go wrong: the variables of each notebook function, compared with the reference's.

While a visible test runs, :class:`Recorder` keeps, for the FIRST call of each of the student's notebook functions
per test line (and per shapes of what it was given), what it was given (at the call) and its variables and result
(at its return). ``python -m autograder.edit_hints`` records the same of the reference solution, as fingerprints
keyed by hashes (:func:`seqcourse.hints.value_key`: nothing of the reference's code or values can be read back).
When a check finds wrong values and no cause (:func:`seqcourse.checks.diagnose`), :func:`first_difference` names the
innermost call that was given the same inputs as the reference's and returned something else, and in it the first
variable (in the order of the function's lines) whose value is not the reference's variable of the same name: the
line that made it is where the values go wrong. Variables of another shape, or names the reference does not have,
are not compared (another valid bookkeeping says nothing); a call given other inputs than the reference's is not
blamed (the mistake is before it).

Recording is a profile function (``sys.setprofile``) that does nothing but for calls of functions defined in
notebook cells; :func:`recording` installs it around a test cell's run: in Jupyter and nbgrader from the IPython
events that :func:`seqcourse.checks.explain_errors` registers, in the class grader from its driver.
"""
from __future__ import annotations

import contextlib
import linecache
import sys

import torch

MAX_CALLS = 200          # calls kept per test cell (the first per key): a long training loop keeps its first steps
MAX_NUMEL = 100_000      # larger tensors are not copied or compared


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
    """What a call was given, at its start: ``{name: comparable value}``; a module's ``self`` by its weights
    (``"self"``)."""
    code, local = frame.f_code, frame.f_locals
    out = {}
    for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        v = local.get(name)
        if name == "self" and isinstance(v, torch.nn.Module):
            v = _weights(v)
        v = comparable(v)
        if v is not None:
            out[name] = v
    return out


def variables(frame, returned) -> dict:
    """What a call made, at its return: ``{name: comparable value}`` of its local variables that are not its
    arguments, and ``"<return>"`` for what it returned (a tuple: ``"<return>[i]"`` for each item)."""
    code, local = frame.f_code, frame.f_locals
    args = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    out = {}
    for name, v in list(local.items()):
        if name in args or name.startswith("."):
            continue
        v = comparable(v)
        if v is not None:
            out[name] = v
    items = returned if isinstance(returned, tuple) else (returned,)
    for i, item in enumerate(items):
        v = comparable(item)
        if v is not None:
            out["<return>" if len(items) == 1 else f"<return>[{i}]"] = v
    return out


def test_frame(frame, cell_file: str | None):
    """The running test cell's module frame that ``frame`` was called from, or None: the frame of ``cell_file``'s
    code, else the outermost frame of a notebook cell's top level."""
    found = None
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>" and (code.co_filename == cell_file if cell_file else _is_cell(code.co_filename)):
            found = frame
            if cell_file:
                break
        frame = frame.f_back
    return found


class Recorder:
    """A profile function that keeps the first call per ``(test line, function, signature)`` of every function
    defined in a notebook cell other than the test cell. ``calls``: ``[Call]`` in the order the calls started."""

    def __init__(self, cell_file: str | None = None):
        from seqcourse import hints
        self.cell_file, self.hints = cell_file, hints
        self.calls, self.seen, self.open = [], set(), {}
        self.counter = 0

    def __call__(self, frame, event, arg):
        try:
            if event == "call":
                self._called(frame)
            elif event == "return" and self.open:
                call = self.open.pop(id(frame), None)
                if call is not None:
                    call.made = variables(frame, arg)
                    call.end = self.counter = self.counter + 1
        except Exception:  # noqa: BLE001 - recording never changes what the student's code does
            pass

    def _called(self, frame):
        code = frame.f_code
        if code.co_name == "<module>" or not _is_cell(code.co_filename) or len(self.calls) >= MAX_CALLS:
            return
        test = test_frame(frame.f_back, self.cell_file)
        if test is None or test.f_code.co_filename == code.co_filename:   # the test's own helpers
            return
        line = linecache.getline(test.f_code.co_filename, test.f_lineno).strip()
        signature = self.hints.call_signature(code, frame.f_locals)
        key = (line, code.co_qualname, repr(signature))
        self.counter += 1
        if not line or key in self.seen:
            return
        self.seen.add(key)
        call = Call(line, code, signature, arguments(frame), self.counter)
        self.calls.append(call)
        self.open[id(frame)] = call


class Call:
    def __init__(self, line, code, signature, given, start):
        self.line, self.code, self.signature, self.given, self.start = line, code, signature, given, start
        self.made, self.end = None, None          # filled at its return (None: it raised)


_current: list = []       # the Recorder of the test cell that runs (at most one), and of the last one that ran


def start(cell_file: str | None = None):
    """Begin recording the calls of a test cell (``cell_file``: its code's file name, else the outermost notebook
    cell on the stack); the records stay readable by :func:`first_difference` until the next start. A profile
    function set by someone else is kept (then nothing is recorded). Returns the Recorder, or None."""
    if sys.getprofile() is not None:
        return None
    rec = Recorder(cell_file)
    _current[:] = [rec]
    sys.setprofile(rec)
    return rec


def stop(rec) -> None:
    """End the recording that :func:`start` returned (if it is still the profile function)."""
    if rec is not None and sys.getprofile() is rec:
        sys.setprofile(None)


@contextlib.contextmanager
def recording(cell_file: str | None = None):
    """:func:`start` and :func:`stop` around a block; yields the Recorder (None when another profile was set)."""
    rec = start(cell_file)
    try:
        yield rec
    finally:
        stop(rec)


def _differs(value, pattern) -> bool | None:
    """True when ``value`` is not the recorded one, False when it is, None when they cannot be compared (another
    shape: another bookkeeping)."""
    if pattern is None:
        return None
    if pattern.get("shape") is not None:
        shape = list(torch.as_tensor(value).shape) if not isinstance(value, torch.Tensor) else list(value.shape)
        if shape != pattern["shape"]:
            return None
    return not hints_module().matches(value, pattern)


def hints_module():
    from seqcourse import hints
    return hints


def _verdict(call) -> list | None:
    """The variables of ``call`` whose values are not the reference's, in the order of the function's lines, when
    it was given the reference's inputs and returned something else; None otherwise."""
    hints = hints_module()
    if call.made is None:
        return None

    def pattern(name):
        return hints.reference_value(call.line, call.code.co_qualname, call.signature, name)

    compared = [(n, _differs(v, pattern(n))) for n, v in call.given.items()]
    if not any(d is not None for _, d in compared) or any(d for _, d in compared):
        return None                         # nothing recorded for this call, or other inputs than the reference's
    returned = [_differs(v, pattern(n)) for n, v in call.made.items() if n.startswith("<return>")]
    if returned and not any(returned):
        return None                         # it returns the reference's result: its own bookkeeping is its own
    return [n for n, v in call.made.items() if not n.startswith("<return>") and _differs(v, pattern(n))]


def first_difference() -> str:
    """Where the values of the test cell that runs (or ran last) first go wrong, in words, or ``""``: the innermost
    call of a notebook function that was given the reference's inputs and returned another result, and its first
    variable (by the line that first binds it) whose value is not the reference's. Never fails."""
    try:
        return _first_difference()
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def _first_difference() -> str:
    import inspect

    from seqcourse.checks import _bindings

    if not _current:
        return ""
    wrong = [(c, _verdict(c)) for c in _current[0].calls if c.end is not None]
    wrong = [(c, names) for c, names in wrong if names is not None]
    if not wrong:
        return ""
    call, names = wrong[0]
    for inner, inner_names in wrong[1:]:     # the innermost: a call of it that went wrong too
        if call.start < inner.start and inner.end < call.end:
            call, names = inner, inner_names
    name = call.code.co_qualname
    if not names:
        return (f"{name} (called while the test ran `{call.line}`) was given the same inputs as the reference's "
                f"and returns another result, although its variables that can be compared agree: what it returns "
                f"is made wrong (the return line, or a value changed in place after it was made?)")
    try:
        source = inspect.getsource(call.code)
    except (OSError, TypeError):
        source = ""
    bindings = _bindings(source, call.code.co_firstlineno) if source else []
    first_line = {}
    for line, bound, text, *_ in bindings:
        for n in bound:
            first_line.setdefault(n, (line, text))
    ordered = sorted(names, key=lambda n: (first_line.get(n, (10 ** 9, ""))[0], n))
    var = ordered[0]
    lines = [text for line, bound, text, *_ in bindings if var in bound]
    where = (" or ".join(f'"{t}"' for t in dict.fromkeys(lines[:3])) if lines else "")
    agree = sorted((n for n, v in call.made.items() if not n.startswith("<return>") and n not in names
                    and n in first_line and first_line[n][0] < first_line.get(var, (10 ** 9,))[0]),
                   key=lambda n: first_line[n][0])
    before = (f" (the variables made before it agree: {', '.join(agree[:4])}{', ...' if len(agree) > 4 else ''})"
              if agree else "")
    return (f"in {name}, given the same inputs as the reference's (while the test ran `{call.line}`), `{var}` is the "
            f"first variable whose value differs from the reference's `{var}`{before}: "
            + (f"look at your line {where}" if where else f"look where `{var}` is made"))
