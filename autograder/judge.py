"""Verdicts, taken in the grader's own process on plain data that the student's process reported.

Nothing here trusts a boolean computed by student-influenced code, except the two primitives the driver
evaluates with captured functions (identity ``is`` and a strict ``isinstance``). For every check the judge

- rebuilds each reported operand from its plain encoding (numbers, strings, tensors from raw bytes; any
  other object, e.g. one whose ``__eq__`` always answers ``True``, becomes :class:`Opaque` and fails);
- substitutes its OWN value for every operand that is a literal in the instructor's test source;
- redoes the comparison / calls the checking function (``torch.allclose``, the course's ``assert_close``...)
  with this process's pristine libraries.

A test passes only if its cell ran to the end without an exception, every check it reported passes here,
every check site ran at least as often as with the reference solution (a check that is skipped, a loop cut
short, an exception swallowed somewhere all show up as missing checks), and no protected library object
was replaced while it ran (unless the reference solution's run did the same).
"""
from __future__ import annotations

import base64
import importlib
import math
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

import numpy as np

from .instrument import evaluate_literal
from .protocol import COMPARE, IDENTITY, SYMBOL, CallKind, Event, Failure, Node, Value

try:
    import torch
except ImportError:  # pragma: no cover - the course always has torch
    torch = None


class Opaque:
    """A value the student's process could not (or would not) report as plain data."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self):
        return f"<{self.what}>"


@dataclass(frozen=True)
class TypeRef:
    module: str
    qualname: str

    def __repr__(self):
        return f"<class '{self.module}.{self.qualname}'>"


class Missing(Exception):
    pass


def _key(k):
    """A decoded value used as a set member or dict key (an opaque one stays opaque, hashed by identity)."""
    if isinstance(k, (list, dict, set)):
        raise ValueError("unhashable key")
    try:
        hash(k)
    except TypeError:
        raise ValueError("unhashable key") from None
    return k


_NP_OK = {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"}


def _np_dtype(s: str) -> np.dtype:
    if not isinstance(s, str) or s.lstrip("<>|=") not in _NP_OK:
        raise ValueError(f"unsupported dtype {s!r}")
    return np.dtype(s)


def _array(np_dtype: str, shape, data: str) -> np.ndarray:
    dt = _np_dtype(np_dtype)
    if not isinstance(shape, list) or not all(isinstance(s, int) and 0 <= s < 1 << 40 for s in shape):
        raise ValueError("bad shape")
    raw = base64.b64decode(data, validate=True)
    n = math.prod(shape)
    if n * dt.itemsize != len(raw):
        raise ValueError("size does not match shape")
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


def decode(v, depth: int = 0):
    """Plain encoding (see ``_driver.ser``) -> value. Malformed input raises ``ValueError``."""
    if not isinstance(v, list) or not v or not isinstance(v[0], str) or depth > 25:
        raise ValueError("malformed value")
    tag = v[0]
    if tag == Value.NONE:
        return None
    if tag == Value.BOOL and isinstance(v[1], bool):
        return v[1]
    if tag == Value.INT and isinstance(v[1], str) and len(v[1]) < 5000:
        return int(v[1])
    if tag == Value.FLOAT and isinstance(v[1], str):
        return float.fromhex(v[1])
    if tag == Value.COMPLEX:
        return complex(float.fromhex(v[1]), float.fromhex(v[2]))
    if tag == Value.STR and isinstance(v[1], str):
        return v[1]
    if tag == Value.BYTES:
        return base64.b64decode(v[1], validate=True)
    if tag in (Value.LIST, Value.TUPLE) and isinstance(v[1], list):
        items = [decode(x, depth + 1) for x in v[1]]
        return items if tag == Value.LIST else tuple(items)
    if tag in (Value.SET, Value.FROZENSET) and isinstance(v[1], list):
        items = [_key(decode(x, depth + 1)) for x in v[1]]
        return set(items) if tag == Value.SET else frozenset(items)
    if tag in (Value.DICT, Value.ODICT) and isinstance(v[1], list):
        out = {} if tag == Value.DICT else OrderedDict()
        for pair in v[1]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ValueError("malformed dict")
            out[_key(decode(pair[0], depth + 1))] = decode(pair[1], depth + 1)
        return out
    if tag == Value.RANGE and len(v) == 4:
        return range(*(int(x) for x in v[1:4] if isinstance(x, str) and len(x) < 5000))
    if tag == Value.SLICE and len(v) == 4:
        return slice(*(decode(x, depth + 1) for x in v[1:4]))
    if tag == Value.ELLIPSIS:
        return Ellipsis
    if tag == Value.NP_DTYPE and isinstance(v[1], str) and re.fullmatch(r"[<>|=]?[biufcSU]\d{1,4}", v[1]):
        return np.dtype(v[1])
    if tag == Value.T_CONST and torch is not None and isinstance(v[1], str) and isinstance(v[2], str):
        kind, _, name = v[2].partition(".")
        value = getattr(torch, name, None) if kind == "torch" else None
        if value is None or type(value).__name__ != v[1]:
            raise ValueError("bad torch constant")
        return value
    if tag == Value.T_DTYPE and torch is not None and isinstance(v[1], str) and v[1].startswith("torch."):
        dt = getattr(torch, v[1][6:], None)
        if isinstance(dt, torch.dtype):
            return dt
        raise ValueError("bad dtype")
    if tag == Value.T_DEVICE and torch is not None and isinstance(v[1], str) and len(v[1]) < 40:
        return torch.device(v[1])
    if tag == Value.TENSOR and torch is not None:
        _, tdt, shape, npdt, data = v
        dt = getattr(torch, tdt[6:], None) if isinstance(tdt, str) and tdt.startswith("torch.") else None
        if not isinstance(dt, torch.dtype):
            raise ValueError("bad tensor dtype")
        arr = _array(npdt, shape, data)
        return torch.from_numpy(arr).to(dt)
    if tag == Value.NDARRAY:
        return _array(v[1], v[2], v[3])
    if tag == Value.NP_SCALAR:
        inner = v[1]
        if not (isinstance(inner, list) and inner and inner[0] == Value.NDARRAY):
            raise ValueError("bad numpy scalar")
        arr = _array(inner[1], inner[2], inner[3])
        if arr.shape != ():
            raise ValueError("bad numpy scalar")
        return arr[()]
    if tag == Value.TYPE and isinstance(v[1], str) and isinstance(v[2], str):
        return TypeRef(v[1], v[2])
    if tag == Value.OPAQUE:
        return Opaque(str(v[1])[:200] if len(v) > 1 else "opaque")
    raise ValueError(f"unknown tag {tag!r}")


def _resolve(qualname: str):
    if "." not in qualname:
        import builtins

        return getattr(builtins, qualname)
    mod, _, name = qualname.rpartition(".")
    module = None
    while mod:
        try:
            module = importlib.import_module(mod)
            break
        except ImportError:
            mod, _, head = mod.rpartition(".")
            name = f"{head}.{name}"
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _short(v, n=160) -> str:
    try:
        s = repr(v)
    except Exception:  # noqa: BLE001
        s = f"<{type(v).__name__}>"
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


@dataclass
class Context:
    nodes: dict                         # node id -> template
    imports: dict                       # import map of the notebook's instructor code
    _literals: dict = field(default_factory=dict)
    # the same check as the reference run reported it (node id -> node), for the operands a hidden part's copy in
    # the student's process does not have: the values of its reference blocks (see autograder.expected)
    ref_nodes: dict | None = None
    own_values: bool = False            # judging the reference run itself: it reported every value

    def literal(self, src: str):
        if src not in self._literals:
            self._literals[src] = evaluate_literal(src, self.imports)
        return self._literals[src]


class Fail(Exception):
    """A check fails, with a message for the instructor (and, for visible checks, the student).

    ``kind``: ``Failure.CHECK`` (the check is false, or its function failed), ``Failure.OPAQUE`` (an operand is not
    plain data: ``what`` names its type), ``Failure.MALFORMED`` (a report that the driver cannot have written)."""

    def __init__(self, msg: str, kind: Failure = Failure.CHECK, what: str | None = None):
        super().__init__(msg)
        self.kind, self.what = kind, what


def _from_reference(ctx: Context, node: dict, pos):
    """The reference run's value of operand ``pos`` of the same check (same site, same occurrence)."""
    rn = (ctx.ref_nodes or {}).get(node.get("id"))
    try:
        if rn is None:
            raise KeyError(pos)
        if isinstance(pos, str) and pos.startswith("kw:"):
            return dict((k, v) for k, v in rn["kw"])[pos[3:]]
        if pos == "v":
            return rn["v"]
        return (rn["vals"] if rn.get("t") == Node.CMP else rn["args"])[pos]
    except (KeyError, IndexError, TypeError, ValueError):
        raise Fail("the reference run has no value for this check here (the test took another path than with "
                   "the reference solution)") from None


def _value(ctx: Context, node: dict, lit, recorded, pos, ref: bool = False):
    if lit is not None:
        return ctx.literal(lit)
    if ref and not ctx.own_values:
        recorded = _from_reference(ctx, node, pos)
    if recorded is None:
        raise Missing()
    try:
        v = decode(recorded)
    except (ValueError, TypeError, IndexError, KeyError, OverflowError) as exc:
        raise Fail(f"malformed report ({exc})", Failure.MALFORMED) from None
    o = _first_opaque(v)
    if o is not None:
        raise Fail(f"a value in this check is not plain data ({o!r}); objects that imitate numbers, containers "
                   "or tensors are not accepted", Failure.OPAQUE, o.what)
    return v


def _first_opaque(v, depth=0):
    if isinstance(v, Opaque):
        return v
    if depth > 25:
        return None
    items = list(v) + list(v.values()) if isinstance(v, dict) else v if isinstance(v, (list, tuple, set, frozenset)) else ()
    for x in items:
        o = _first_opaque(x, depth + 1)
        if o is not None:
            return o
    return None


def evaluate(ctx: Context, node: dict) -> bool:
    """Re-evaluate one reported node; raises :class:`Fail` (with a reason) or returns a truth value."""
    if not isinstance(node, dict) or not isinstance(node.get("id"), str) or node["id"] not in ctx.nodes:
        raise Fail("malformed report (unknown check)", Failure.MALFORMED)
    tmpl = ctx.nodes[node["id"]]
    t = tmpl["t"]
    if node.get("t") != t and not (t in (Node.AND, Node.OR) and node.get("t") in (Node.AND, Node.OR)):
        raise Fail("malformed report (check kind)", Failure.MALFORMED)
    if t in (Node.AND, Node.OR, Node.NOT):
        items = node.get("items")
        if not isinstance(items, list):
            raise Fail("malformed report", Failure.MALFORMED)
        n = tmpl.get("n", len(items))
        if t == Node.NOT:
            if len(items) != 1:
                raise Fail("malformed report", Failure.MALFORMED)
            return not evaluate(ctx, items[0])
        for i in range(n):
            if i >= len(items):
                return False  # the student's process stopped early: the judge cannot see it pass
            r = evaluate(ctx, items[i])
            if t == Node.AND and not r:
                return False
            if t == Node.OR and r:
                return True
        return t == Node.AND
    if t == Node.PRIM:
        k = node.get("k")
        if not isinstance(k, bool):
            raise Fail("malformed report", Failure.MALFORMED)
        return k
    if t == Node.CMP:
        ops, lits = tmpl["ops"], tmpl["lits"]
        refs = tmpl.get("refs") or [False] * len(lits)
        vals = node.get("vals") if isinstance(node.get("vals"), list) else []
        links = node.get("links") if isinstance(node.get("links"), list) else []
        for i, op in enumerate(ops):
            if op in IDENTITY:
                if i >= len(links) or not isinstance(links[i], bool):
                    return False
                if not links[i]:
                    return False
                continue
            try:
                a = _value(ctx, node, lits[i], vals[i] if i < len(vals) else None, i, refs[i])
                b = _value(ctx, node, lits[i + 1], vals[i + 1] if i + 1 < len(vals) else None, i + 1, refs[i + 1])
            except Missing:
                return False
            try:
                ok = bool(COMPARE[op](a, b))
            except Exception as exc:  # noqa: BLE001
                raise Fail(f"comparison failed: {type(exc).__name__}: {exc}") from None
            if not ok:
                src = tmpl.get("src", ["?", "?"])
                raise Fail(f"{src[i]} {SYMBOL[op]} {src[i + 1]} is false: got {_short(a)} {SYMBOL[op]} {_short(b)}")
        return True
    if t == Node.VAL:
        try:
            v = _value(ctx, node, tmpl.get("lit"), node.get("v"), "v", bool(tmpl.get("ref")))
        except Missing:
            return False
        try:
            return bool(v)
        except Exception as exc:  # noqa: BLE001
            raise Fail(f"{tmpl.get('src', 'value')}: {type(exc).__name__}: {exc}") from None
    if t == Node.CALL:
        args_rec = node.get("args") if isinstance(node.get("args"), list) else []
        kw_rec = node.get("kw") if isinstance(node.get("kw"), list) else []
        lits_args, lits_kw = tmpl["lits_args"], tmpl["lits_kw"]
        refs_args, refs_kw = tmpl.get("refs_args") or [], tmpl.get("refs_kw") or {}
        if len(args_rec) < len(lits_args) and any(a is None for a in lits_args[len(args_rec):]):
            raise Fail("malformed report (arguments)", Failure.MALFORMED)
        args = []
        for i in range(max(len(args_rec), len(lits_args))):
            lit = lits_args[i] if i < len(lits_args) else None
            try:
                v = _value(ctx, node, lit, args_rec[i] if i < len(args_rec) else None, i,
                           bool(refs_args[i]) if i < len(refs_args) else False)
            except Missing:
                raise Fail("malformed report (arguments)", Failure.MALFORMED) from None
            args.append(v)
        kwargs = {}
        for pair in kw_rec:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise Fail("malformed report (keywords)", Failure.MALFORMED)
            k = pair[0]
            kwargs[k] = _value(ctx, node, lits_kw.get(k), pair[1], "kw:" + k, bool(refs_kw.get(k)))
        for k, lit in lits_kw.items():  # a literal keyword the student's process 'forgot' to report
            if lit is not None and k not in kwargs:
                kwargs[k] = ctx.literal(lit)
        fn = _resolve(tmpl["fn"])
        if tmpl.get("kind") == CallKind.PREDICATE:
            try:
                return bool(fn(*args, **kwargs))
            except Exception as exc:  # noqa: BLE001
                raise Fail(f"{tmpl.get('src', tmpl['fn'])}: {type(exc).__name__}: {exc}") from None
        try:
            fn(*args, **kwargs)
        except AssertionError as exc:
            raise Fail(str(exc) or f"{tmpl['fn']} failed") from None
        except Exception as exc:  # noqa: BLE001
            raise Fail(f"{tmpl['fn']}: {type(exc).__name__}: {exc}") from None
        return True
    raise Fail("malformed report (unknown node)", Failure.MALFORMED)


@dataclass
class TestVerdict:
    grade_id: str
    passed: bool
    reason: str = ""              # the full reason (for the instructor: may hold values the student's code made)
    hidden: bool = False          # whether the first failure lies in the hidden part of the test
    checks: int = 0
    notes: list = field(default_factory=list)
    # what kind of failure, for messages that must not carry values (see autograder.assignment)
    kind: Failure | str = ""
    line: int | None = None       # the line of the test cell where it failed, when known
    src: str = ""                 # that check's source (the instructor's code)
    exc_type: str = ""            # the exception's type name, when the cell raised one
    what: str = ""                # for 'opaque': the type of the value that is not plain data


def _flatten(node, out=None) -> dict:
    """``{node id: node}`` of a reported check tree."""
    out = {} if out is None else out
    if isinstance(node, dict):
        if isinstance(node.get("id"), str):
            out[node["id"]] = node
        for item in node.get("items", []) if isinstance(node.get("items"), list) else []:
            _flatten(item, out)
    return out


def reference_checks(events: list) -> dict:
    """``{test: {site: [node, ...]}}``: every check of the reference run, in the order it ran (a hidden part's
    student copy takes the operands it does not have from the same check's same occurrence)."""
    out: dict = {}
    for e in events:
        if e.get("ev") == Event.CHECK and isinstance(e.get("test"), str):
            out.setdefault(e["test"], {}).setdefault(e.get("site"), []).append(e.get("node"))
    return out


def reference_blocks(events: list) -> dict:
    """``{test: {block: [fingerprint, ...]}}``: what each reference block read, each time it ran."""
    out: dict = {}
    for e in events:
        if e.get("ev") == Event.REFBLOCK and isinstance(e.get("test"), str):
            out.setdefault(e["test"], {}).setdefault(e.get("block"), []).append(e.get("fp"))
    return out


def _inputs_differ(gid: str, events: list, reference: dict):
    """A failure when a reference block of this test read other values in the student's run than in the reference
    run (the student's code changed an input, or the random numbers): its recorded values do not apply."""
    want = reference.get("blocks") or {}
    got = reference_blocks([e for e in events if e.get("test") == gid]).get(gid, {})
    for block in sorted(set(want) | set(got), key=str):
        a, b = got.get(block, []), want.get(block, [])
        for i in range(max(len(a), len(b))):
            if i < len(a) and i < len(b) and a[i] == b[i]:
                continue
            if i >= len(a):
                break   # the student's run stopped before it: its checks are missing, and say so
            line = str(block).rpartition("@")[2]
            return (f"line {line}: the values that the hidden reference block reads differ from the reference run's "
                    f"(occurrence {i + 1}): the student's code changed an input of the test, or the random numbers it "
                    "draws", True, Failure.INPUTS, int(line) if line.isdigit() else None, "", "")
    return None


def site_counts(events: list) -> dict:
    """``{test grade id: Counter(site -> number of reported checks)}``."""
    out: dict = {}
    for e in events:
        if e.get("ev") == Event.CHECK and isinstance(e.get("test"), str):
            out.setdefault(e["test"], Counter())[e.get("site")] += 1
    return out


def tamper_names(events: list) -> dict:
    """``{test grade id: set of protected names changed/set while it ran}`` (from test_end and checks)."""
    out: dict = {}
    for e in events:
        gid = e.get("test")
        if not isinstance(gid, str):
            continue
        if e.get("ev") == Event.CHECK:
            out.setdefault(gid, set()).update(x for x in e.get("dirty", []) or [] if isinstance(x, str))
        elif e.get("ev") == Event.TEST_END:
            out.setdefault(gid, set()).update(x for x in e.get("changed", []) or [] if isinstance(x, str))
            out[gid].update(x for x in e.get("audit", []) or [] if isinstance(x, str) and x.startswith("object."))
    return out


def _cell_of(site_id: str) -> str:
    """The grade id of the test cell a check site belongs to (site ids are ``<grade id>:s<n>``)."""
    return site_id.rpartition(":")[0] if isinstance(site_id, str) else ""


def judge_test(gid: str, events: list, *, sites: dict, nodes: dict, imports: dict, reference: dict) -> TestVerdict:
    """Verdict for one test cell from the events of the student's run.

    ``reference``: ``{"counts": {site: n}, "tamper": set, "hidden_lines": set}`` for this test, from the run
    of the instructor's own notebook under the same instrumentation (``check_tamper``: False for that run).
    """
    ctx = Context(nodes=nodes, imports=imports, own_values=bool(reference.get("own_values")))
    checks = [e for e in events if e.get("ev") == Event.CHECK and e.get("test") == gid]
    ends = [e for e in events if e.get("ev") == Event.TEST_END and e.get("test") == gid]
    v = TestVerdict(gid, passed=False, checks=len(checks))
    first = _inputs_differ(gid, events, reference)   # (reason, hidden, kind, line, src, what)
    ref_checks = reference.get("checks") or {}
    occurrence: Counter = Counter()
    for e in checks:
        site = sites.get(e.get("site"))
        if site is None:
            first = first or ("malformed report (unknown check site)", False, "malformed", None, "", "")
            continue
        k = occurrence[e.get("site")]
        occurrence[e.get("site")] += 1
        same = ref_checks.get(e.get("site")) or []
        ctx.ref_nodes = _flatten(same[k]) if k < len(same) else None
        try:
            node = e.get("node")
            if not isinstance(node, dict) or node.get("id") != site["node"]:
                raise Fail("malformed report (check does not match its site)", Failure.MALFORMED)
            ok = evaluate(ctx, node)
            if not ok:
                msg = e.get("msg") if isinstance(e.get("msg"), str) else None
                raise Fail(msg or f"assertion failed: {site['src'][:200]}")
        except Fail as exc:
            if first is None:
                text = str(exc)
                said = e.get("msg")   # a visible `assert cond, message`: the student saw the message, keep it
                if (isinstance(said, str) and said.strip() and exc.kind == Failure.CHECK and not site["hidden"]
                        and said not in text):
                    text = f"{said[:1500]} [the check, re-evaluated: {text}]"
                first = (f"line {site['line']}: {text}", site["hidden"], exc.kind, site["line"], site["src"],
                         exc.what or "")
        except Exception as exc:  # noqa: BLE001 - the judge's own problem with a value: the check fails
            if first is None:
                first = (f"line {site['line']}: could not be checked ({type(exc).__name__}: {exc})", site["hidden"],
                         Failure.CHECK, site["line"], site["src"], "")

    def fail_with(f):
        v.reason, v.hidden, v.kind, v.line, v.src, v.what = f
        return v

    if not ends:
        v.reason, v.kind = "the test did not finish (the notebook stopped before or during it)", Failure.UNFINISHED
        return v
    end = ends[0]
    if end.get("ok") is not True:
        exc = end.get("exc") if isinstance(end.get("exc"), dict) else {}
        line = exc.get("line") if isinstance(exc.get("line"), int) else None
        # only this test cell's own hidden lines: the sites are one dict for the whole notebook, and another
        # cell's hidden check on the same line number says nothing about this one
        hidden = any(s["hidden"] and s["line"] == line for sid, s in sites.items() if _cell_of(sid) == gid) or bool(
            line and reference.get("hidden_lines") and line in reference["hidden_lines"])
        v.exc_type = str(exc.get("type", "") or "")[:100]
        if first is not None:
            return fail_with(first)
        where = f" (line {line})" if line is not None else ""
        v.reason = f"{str(exc.get('type', 'error'))[:100]}{where}: {str(exc.get('msg', ''))[:1500]}"
        v.hidden, v.kind, v.line = hidden, Failure.EXCEPTION, line
        return v
    if first is not None:
        return fail_with(first)
    got = Counter(e.get("site") for e in checks)
    for site, n in reference.get("counts", {}).items():
        if got.get(site, 0) < n:
            info = sites.get(site, {"line": None, "hidden": False, "src": ""})
            v.reason = (f"fewer checks ran than with the reference solution (line {info['line']}: "
                        f"{got.get(site, 0)} of {n}); a check was skipped or a loop was cut short")
            v.hidden, v.kind, v.line, v.src = info["hidden"], Failure.FEWER, info["line"], info.get("src", "")
            return v
    tampered = tamper_names([e for e in events if e.get("test") == gid]).get(gid, set()) - reference.get("tamper", set())
    if tampered and reference.get("check_tamper", True):
        v.reason = ("library objects were replaced while the test ran: " + ", ".join(sorted(tampered)[:5]) +
                    ("..." if len(tampered) > 5 else ""))
        v.kind = Failure.TAMPER
        return v
    v.passed = True
    return v
