"""Generate the edit hints of an assignment: what each single edit of the reference solution gives in the visible tests.

    python -m autograder.edit_hints ch04 [ch05 ...] [--budget SECONDS]

For each solution cell of ``solutions/<a>/*.ipynb``, every single edit of its ``### BEGIN SOLUTION`` region (see
:func:`edits`: an activation swapped, added or removed, a term or a step left out, operands swapped, another
variable, another constant or axis, a ``.T`` left out, two items in another order, a parenthesis in the wrong place
(``r * tanh(a + b)`` for ``tanh(a + r * b)``, ``tanh(a) + tanh(b)``), an option or axis argument left out, a
reshape for a transpose, ``x[t]`` for ``x[:, t]``, ``p`` for ``p.grad``, ...) is run with the cells up to
the next solution cell, taken from the STUDENT notebook ``exercises/<a>/*.ipynb`` (the visible tests only). For the
first ``assert_close`` of each test cell whose values the edit changes, a fingerprint of those values and an
encrypted description of the edit are written to ``seqcourse/hint_data/<a>.json`` (see :mod:`seqcourse.hints`,
which reads them when a student's values are wrong). Rerun after changing a solution or its visible tests; the data
file says which notebooks it was made from, and a test checks that it is current.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import hashlib
import io
import itertools
import json
import os
import pickle
import random
import select
import signal
import sys
import time
from pathlib import Path

from seqcourse.pysource import callee_name

ROOT = Path(__file__).resolve().parent.parent
ACTIVATIONS = ("sigmoid", "tanh", "relu")
SWAPS = {**{a: [b for b in ACTIVATIONS if b != a] for a in ACTIVATIONS},
         "softmax": ["log_softmax"], "log_softmax": ["softmax"], "sum": ["mean"], "mean": ["sum"],
         "max": ["min"], "min": ["max"], "amax": ["amin"], "argmax": ["argmin"], "split": ["chunk"],
         "chunk": ["split"], "cat": ["stack"], "stack": ["cat"], "squeeze": ["unsqueeze"], "unsqueeze": ["squeeze"],
         "bmm": ["matmul"], "cross_entropy": ["nll_loss"], "nll_loss": ["cross_entropy"],
         "repeat": ["repeat_interleave"], "repeat_interleave": ["repeat"], "tril": ["triu"], "triu": ["tril"],
         "exp": ["log"], "log": ["exp"], "zeros": ["ones"], "zeros_like": ["ones_like"], "matmul": ["mul"],
         "mm": ["mul"], "mul_": ["div_"], "div_": ["mul_"], "mul": ["div"], "div": ["mul"], "add_": ["sub_"],
         "sub_": ["add_"]}
UNWRAP = set(ACTIVATIONS) | {"softmax", "log_softmax", "exp", "log", "t", "transpose", "flip", "sqrt", "float",
                             "reversed", "abs", "neg"}
MOVABLE = set(ACTIVATIONS) | {"dropout", "softmax", "log_softmax", "exp", "log", "sqrt"}   # and self.<layer>(x)
SHORT = 70
# the kinds of edit, the likeliest mistake first: where several edits give the same values, the first is named
PRIORITY = ("swap", "unwrap", "layer", "transpose", "drop", "delete", "operands", "args", "order", "op", "sign", "range",
            "shift", "slice", "flow", "inplace", "complement",
            "compare", "flag", "mask", "keyword", "index", "reshape", "assign", "wrap", "move", "distribute", "attr",
            "unattr", "swapnames", "steps", "twice", "invert", "indent", "argument", "paren", "reverse", "unpack", "dup", "count",
            "constant", "name", "subst", "value")
# what each kind of edit is, in words: said instead of the code where the values have few possibilities (integers,
# fewer than 4 entries), whose fingerprint a student could guess, to read the description without the mistake
KIND_WORDS = {"swap": "another function in place of the right one (an activation, a reduction, softmax or its log)",
              "unwrap": "a function call left out (an activation, a transpose, a softmax, ...)",
              "transpose": "a transpose (.T) left out", "drop": "a term or a factor left out",
              "delete": "a step left out", "operands": "two operands in the wrong order",
              "order": "two items in the wrong order", "op": "another arithmetic operation (+ for -, * for /, ...)",
              "sign": "the sign flipped", "range": "a loop that starts or ends one step off",
              "slice": "a slice with a bound left out, one off or shifted (x[:-1] for x[1:], a:b - 1 for a:b)", "compare": "a comparison off by one (< for <=, ...)",
              "flag": "an option (True/False) flipped", "assign": "= where += is needed",
              "wrap": "an extra activation", "constant": "another number (an index, axis, size or count off?)",
              "name": "another variable in place of the right one", "value": "another variable in place of a value",
              "attr": "another attribute of the same object (a copy-paste slip?)",
              "steps": "two steps in the wrong order", "twice": "a term added twice",
              "swapnames": "two variables in each other's place",
              "move": "a call around another part of the expression (a parenthesis in the wrong place: a bias or "
                      "a factor inside or outside an activation or a layer)",
              "distribute": "an activation applied to each term apart instead of to their sum",
              "keyword": "an option of a call left out (its default used: dim, keepdim, batch_first, ...)",
              "reshape": "a reshape or view where a transpose is needed (a reshape keeps the memory order: it does "
                         "not swap axes)",
              "count": "a length counted one too many or too few (len(x) + 1: an <eos> or <sos> counted?)",
              "mask": "the mask left out (every position kept, the padding too)",
              "index": "an axis left out of an index (x[t] where x[:, t] is needed: the batch axis indexed)",
              "unattr": "the object itself where one of its attributes is needed (p for p.grad, ...)",
              "argument": "an argument of a call left out (a state, a mask, a size: the call's default used)",
              "paren": "parentheses lost or added in arithmetic (a * (b + c) for a * b + c, or the other way)",
              "reverse": "a loop that runs the other way (forward where backward is needed, or backward where "
                         "forward is)",
              "unpack": "a variable never given its new value (unpacked into _ or another name: it keeps its old "
                        "value)",
              "invert": "a mask or a condition inverted (~mask for mask, < for >=)",
              "indent": "a line indented into a loop, or out of it (a return, a break or an update in the wrong "
                        "place)",
              "dup": "one item written twice where two different items are needed ((h, h) for (h, c))",
              "subst": "an expression written where only one of its variables is needed (a * b where b alone is meant)",
              "args": "two arguments of a call in each other's place (nn.Linear(out, in) for nn.Linear(in, out), "
                      "f(b, a) for f(a, b))",
              "layer": "a layer of the model left out: its input used as it is (an embedding, a projection or an "
                       "output layer not applied)",
              "complement": "a gate where its complement is needed (r for 1 - r, z for 1 - z), or the other way",
              "flow": "break where continue is needed, or continue where break is (a loop left, or a step skipped)",
              "inplace": "an in-place operation (x.pow_, x.add_, x.masked_fill_, ...) where a new tensor is needed: "
                         "the input itself is overwritten",
              "shift": "an index one step off (x[:, t - 1] or x[:, t + 1] for x[:, t]: the 1-based steps of the math "
                       "read with a 0-based loop?)"}
UNATTR = ("grad", "data", "weight", "bias", "values", "indices")   # x.<attr> written as x
AXIS_CALLS = {"sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "softmax", "log_softmax", "cat",
              "stack", "squeeze", "norm", "logsumexp", "prod", "cumsum", "all", "any"}   # their axis left out
INPLACE = {"add", "sub", "mul", "div", "pow", "clamp", "exp", "log", "tanh", "sigmoid", "relu", "masked_fill",
           "fill", "zero", "neg", "abs", "sqrt", "copy", "clamp_min", "clamp_max", "scatter", "index_fill",
           "unsqueeze", "squeeze", "transpose", "t"}                # methods with an in-place twin x.<name>_
NO_ORDER = {"max", "min", "maximum", "minimum", "isinstance", "getattr", "setattr", "hasattr", "zip", "print",
            "format", "dict", "super", "add", "mul", "eq", "ne", "logical_and", "logical_or"}   # order that changes
                                                                                                 # nothing or is no slip
LAYER_OWNERS = ("self", "model", "module", "net", "encoder", "decoder")   # whose one-argument calls are layers
AMBIGUOUS = 6
ERROR_PLACES = 2         # an error raised by edits in more places than this gets no hint
EDIT_TIMEOUT = 60.0      # seconds for one edit's cells (the reference's take a few)
LEAF = ("constant", "name", "attr", "flag", "sign", "transpose", "subst", "slice", "shift")   # described with the expression around them


_SHARED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def _tree_copy(node):
    """A deep copy of a syntax tree that shares the parser's singleton nodes (Load, Store, Add, ...) instead of
    copying them: IPython's traceback formatter (through `executing`) sets a `parent` attribute on those
    singletons, which made every copy drag along a whole other tree (edits() of a small cell: 0.15 s alone, 140 s
    after tests/test_checks.py had formatted tracebacks)."""
    roots = node if isinstance(node, list) else [node]
    return copy.deepcopy(node, {id(n): n for r in roots if isinstance(r, ast.AST) for n in ast.walk(r)
                                if isinstance(n, _SHARED)})

def _short(node) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= SHORT else text[:SHORT - 3] + "..."


def _renamed(call: ast.Call, name: str) -> ast.Call:
    new = _tree_copy(call)
    if isinstance(new.func, ast.Attribute):
        new.func.attr = name
    else:
        new.func.id = name
    return new


def _movable(call) -> bool:
    """A call of one positional argument whose parentheses a student may put around another part of an expression:
    an activation, dropout, a softmax, exp/log/sqrt, or a layer of the module (``self.W(x)``, ``model.W(x)``)."""
    if not isinstance(call, ast.Call) or len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        return False
    f = call.func
    return callee_name(call) in MOVABLE or (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                        and f.value.id in ("self", "model"))


def _with_arg(call: ast.Call, arg) -> ast.Call:
    new = _tree_copy(call)
    new.args = [_tree_copy(arg)]
    return new


def _sum_terms(node) -> list:
    """The terms of a chain of additions ``a + b + c`` (parsed as ``(a + b) + c``), in order."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _sum_terms(node.left) + [node.right]
    return [node]


def _sum_of(terms: list):
    """``a + b + c`` of the nodes ``terms`` (copies), parsed as ``(a + b) + c``: the inverse of :func:`_sum_terms`."""
    total = _tree_copy(terms[0])
    for t in terms[1:]:
        total = ast.BinOp(total, ast.Add(), _tree_copy(t))
    return total


def _moves(node):
    """The edits of one misplaced parenthesis: ``f(a + b)`` as ``f(a) + b`` or ``a + f(b)``, ``f(a) + b`` as
    ``f(a + b)``, a factor of a term taken out (``f(a + r * b)`` as ``r * f(a + b)``), and an activation applied to
    each term apart (``tanh(a) + tanh(b)``), and two calls nested the other way round (``W(tanh(u))`` for
    ``tanh(W(u))``: a layer and its activation, or dropout, in the wrong order)."""
    if _movable(node) and _movable(node.args[0]) and callee_name(node) != callee_name(node.args[0]):
        yield _with_arg(node.args[0], _with_arg(node, node.args[0].args[0])), "move"
    if _movable(node) and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, (ast.Add, ast.Sub,
                                                                                               ast.Mult)):
        arg = node.args[0]
        yield ast.BinOp(_with_arg(node, arg.left), arg.op, _tree_copy(arg.right)), "move"
        yield ast.BinOp(_tree_copy(arg.left), arg.op, _with_arg(node, arg.right)), "move"
        terms = _sum_terms(arg)
        for k in range(len(terms) - 1) if len(terms) > 2 else ():    # f(a + b + c) as f(a + c) + b (the last: above)
            yield ast.BinOp(_with_arg(node, _sum_of(terms[:k] + terms[k + 1:])), ast.Add(),
                            _tree_copy(terms[k])), "move"
        if isinstance(arg.op, (ast.Add, ast.Sub)):
            if callee_name(node) in ACTIVATIONS:
                yield ast.BinOp(_with_arg(node, arg.left), arg.op, _with_arg(node, arg.right)), "distribute"
            for side in ("left", "right"):
                term = getattr(arg, side)
                if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                    for keep, factor in ((term.right, term.left), (term.left, term.right)):
                        inner = _tree_copy(arg)
                        setattr(inner, side, _tree_copy(keep))
                        yield ast.BinOp(_tree_copy(factor), ast.Mult(), _with_arg(node, inner)), "move"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        if _movable(node.left):
            yield _with_arg(node.left, ast.BinOp(node.left.args[0], node.op, node.right)), "move"
        if _movable(node.right):
            yield _with_arg(node.right, ast.BinOp(node.left, node.op, node.right.args[0])), "move"


def _on_object(node: ast.Call) -> bool:
    """A method called on an object (``x.pow(2)``, ``h.t()``), not a function of a module (``torch.tanh(x)``)."""
    return isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                                         and node.func.value.id in ("torch", "F", "nn", "math"))


def _call_candidates(node: ast.Call):
    """The edits of one call: another function, the call left out, its in-place twin, its arguments (one forgotten,
    two swapped, an option left out or flipped), a loop's range, a mask inverted or its layer left out."""
    name = callee_name(node)
    for other in SWAPS.get(name, ()):
        yield _renamed(node, other), "swap"
    if name in ("sigmoid", "tanh", "exp") and len(node.args) == 1 and not node.keywords:
        new = _tree_copy(node)           # 1 / (1 + exp(z)) written for the sigmoid: sigmoid(-z)
        new.args[0] = ast.UnaryOp(ast.USub(), new.args[0])
        yield new, "sign"
    if name in UNWRAP:
        if _on_object(node):
            yield node.func.value, "unwrap"
        elif node.args:
            yield node.args[0], "unwrap"
    if _on_object(node) and node.func.attr in INPLACE:
        new = _tree_copy(node)                        # x.pow(2) as x.pow_(2): the input itself overwritten
        new.func.attr += "_"
        yield new, "inplace"
    if name == "range" and len(node.args) == 1:
        yield ast.Call(func=node.func, args=[ast.Constant(1), node.args[0]], keywords=[]), "range"
        for step in (-1, 1):                   # range(T - 1), range(T + 1): one step too few or too many
            yield ast.Call(func=node.func, args=[_offset(node.args[0], step)], keywords=[]), "range"
    if name == "range" and len(node.args) == 2:     # range(1, T) as range(T)
        yield ast.Call(func=node.func, args=[node.args[1]], keywords=[]), "range"
    if name in ("where", "masked_fill", "masked_fill_") and node.args and not (
            isinstance(node.args[0], ast.UnaryOp) and isinstance(node.args[0].op, ast.Invert)):   # inverted
        new = _tree_copy(node)
        new.args[0] = ast.UnaryOp(ast.Invert(), new.args[0])
        yield new, "invert"
    if name == "range" and not node.keywords:
        other_way = _reversed_range(node)
        if other_way is not None:
            yield other_way, "reverse"
    if (node.args and not any(isinstance(a, ast.Starred) for a in node.args) and name not in AXIS_CALLS
            and name not in KEEP_ARGS and (len(node.args) >= 2 or (name or "")[:1].isupper())):
        new = _tree_copy(node)       # the last argument forgotten: decoder(y) for decoder(y, state),
        del new.args[-1]                # nn.Dropout() for nn.Dropout(p), attention(h, enc) without the mask
        yield new, "argument"
    if len(node.args) >= 2 and name not in NO_ORDER and not any(isinstance(a, ast.Starred) for a in node.args):
        for i in range(len(node.args) - 1):   # nn.Embedding(E, V) for nn.Embedding(V, E), attend(enc, h)
            if ast.dump(node.args[i]) != ast.dump(node.args[i + 1]):
                new = _tree_copy(node)
                new.args[i], new.args[i + 1] = new.args[i + 1], new.args[i]
                yield new, "args"
    if (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id in LAYER_OWNERS and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], ast.Starred)):
        yield node.args[0], "layer"            # self.head(x) as x, model.src_embed(src) as src
    for i, kw in enumerate(node.keywords):
        if kw.arg is not None:                 # the option left out: softmax(x) for softmax(x, dim=-1)
            new = _tree_copy(node)
            del new.keywords[i]
            yield new, "keyword"
        if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
            new = _tree_copy(node)
            new.keywords[i].value = ast.Constant(not kw.value.value)
            yield new, "flag"
    method = isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                                           and node.func.value.id in ("torch", "F", "nn"))
    if name in AXIS_CALLS and len(node.args) == (1 if method else 2):    # x.sum(-1) as x.sum(), cat(xs, 1)
        new = _tree_copy(node)
        del new.args[-1]
        yield new, "keyword"


def _candidates(node, names: list[str], attrs: dict):
    """(replacement node or None to delete, what it is) for one node: every single edit considered. ``names``: the
    function's variables; ``attrs``: ``{object: [attributes of it the function uses]}``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        for other in attrs.get(node.value.id, ()):
            if other != node.attr:       # a copy-paste slip: self.fwd for self.bwd, weight_ih for weight_hh
                yield ast.Attribute(node.value, other, node.ctx), "attr"
    if isinstance(node, ast.Call):
        yield from _call_candidates(node)
    if isinstance(node, ast.BinOp):
        ops = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.MatMult: ast.Mult}
        if type(node.op) in ops:
            yield ast.BinOp(node.left, ops[type(node.op)](), node.right), "op"
        if isinstance(node.op, (ast.Sub, ast.Div, ast.MatMult, ast.Pow)):
            yield ast.BinOp(node.right, node.op, node.left), "operands"
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            yield node.left, "drop"
            yield node.right, "drop"
        if isinstance(node.op, ast.Add):
            yield ast.BinOp(node, ast.Add(), node.right), "twice"
        yield from _regroup(node)
    yield from _moves(node)
    if isinstance(node, ast.Call) and callee_name(node) == "where" and len(node.args) == 3:
        yield node.args[1], "mask"                 # torch.where(keep, new, old) as new: the mask not applied
    if isinstance(node, ast.Call) and callee_name(node) in ("masked_fill", "masked_fill_") and isinstance(
            node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                               and node.func.value.id in ("torch", "F")):
        yield node.func.value, "mask"              # x.masked_fill(~mask, -inf) as x
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and "mask" in node.value.id.lower() \
            and isinstance(node.ctx, ast.Load):
        yield ast.Call(func=ast.Attribute(ast.Name("torch", ast.Load()), "ones_like", ast.Load()),
                       args=[_tree_copy(node)], keywords=[]), "mask"    # mask[:, t, None] all True: all kept
    if isinstance(node, ast.Call) and callee_name(node) == "len":      # a length counted with one item too many or few
        yield ast.BinOp(node, ast.Add(), ast.Constant(1)), "count"
        yield ast.BinOp(node, ast.Sub(), ast.Constant(1)), "count"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield node.operand, "sign"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        yield node.operand, "invert"
    value = _int_of(node)
    if value is not None and not getattr(node, "_signed", False):
        for v in sorted({value + 1, value - 1, -1, 0, 1} - {value}):
            yield (ast.Constant(v) if v >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-v))), "constant"
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT", "H"):
        yield node.value, "transpose"
    if isinstance(node, ast.Attribute) and node.attr in UNATTR and isinstance(node.ctx, ast.Load):
        yield node.value, "unattr"
    swapped = None                  # x.transpose(0, 1), x.permute(...), x.T, x.mT: the same shape by a reshape
    if isinstance(node, ast.Call) and callee_name(node) in ("transpose", "permute", "movedim", "swapaxes", "t") and \
            isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                                          and node.func.value.id in ("torch", "F")):
        swapped = node.func.value
    elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        swapped = node.value
    if swapped is not None:
        yield ast.Call(func=ast.Attribute(_tree_copy(swapped), "reshape", ast.Load()),
                       args=[ast.Attribute(_tree_copy(node), "shape", ast.Load())], keywords=[]), "reshape"
    if isinstance(node, ast.Slice):
        for part in ("lower", "upper"):
            if getattr(node, part) is not None:
                new = _tree_copy(node)
                setattr(new, part, None)
                yield new, "slice"
        for part in ("lower", "upper"):          # n * H:(n + 1) * H - 1: a bound one off (the end read as inclusive)
            bound = getattr(node, part)
            if bound is not None and _int_of(bound) is None:
                for step in (-1, 1):
                    new = _tree_copy(node)
                    setattr(new, part, _offset(bound, step))
                    yield new, "slice"
        if node.step is None and _int_of(node.lower) == 1 and node.upper is None:      # x[1:] as x[:-1]
            yield ast.Slice(None, ast.UnaryOp(ast.USub(), ast.Constant(1)), None), "slice"
        if node.step is None and node.lower is None and _int_of(node.upper) == -1:     # x[:-1] as x[1:]
            yield ast.Slice(ast.Constant(1), None, None), "slice"
    if isinstance(node, (ast.Break, ast.Continue)):     # break where continue is meant, or the other way
        yield (ast.Continue() if isinstance(node, ast.Break) else ast.Break()), "flow"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        flips = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                 ast.NotEq: ast.Eq}
        if type(node.ops[0]) in flips:
            yield ast.Compare(node.left, [flips[type(node.ops[0])]()], node.comparators), "compare"
        negations = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt}
        if type(node.ops[0]) in negations:           # t < L as t >= L: the mask the wrong way round
            yield ast.Compare(node.left, [negations[type(node.ops[0])]()], node.comparators), "invert"
    if isinstance(node, (ast.Tuple, ast.List)) and isinstance(node.ctx, ast.Load) and len(node.elts) == 2:
        yield type(node)(elts=node.elts[::-1], ctx=ast.Load()), "order"
        if ast.dump(node.elts[0]) != ast.dump(node.elts[1]) and not any(isinstance(e, (ast.Starred, ast.Slice))
                                                                        for e in node.elts):
            for e in node.elts:                  # (h, h) for (h, c): one item written twice
                yield type(node)(elts=[_tree_copy(e), _tree_copy(e)], ctx=ast.Load()), "dup"
    if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Store):
        for i, e in enumerate(node.elts):       # logits, _ = step(y, d): d never gets its new value
            if isinstance(e, ast.Name) and e.id != "_":
                new = _tree_copy(node)
                new.elts[i] = ast.Name("_", ast.Store())
                yield new, "unpack"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) >= 2:
        for i, e in enumerate(node.slice.elts):    # x[t] for x[:, t]: an axis of the index left out
            if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None:
                new = _tree_copy(node)
                del new.slice.elts[i]
                if len(new.slice.elts) == 1:
                    new.slice = new.slice.elts[0]
                yield new, "index"
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        for other in names:
            if other != node.id:
                yield ast.Name(other, ast.Load()), "name"


KEEP_ARGS = {"range", "where", "masked_fill", "masked_fill_", "isinstance", "getattr", "setattr", "hasattr", "zip",
             "enumerate", "print", "append", "extend", "insert", "get", "setdefault", "pop", "format", "join",
             "startswith", "endswith", "replace", "split", "chunk", "view", "reshape", "expand", "repeat", "permute",
             "transpose", "new_zeros", "new_ones", "new_full", "zeros", "ones", "full", "empty", "randn", "rand",
             "arange", "tensor", "gather", "scatter", "index_select", "narrow", "to", "type", "assert_close",
             "max", "min", "sorted", "dict", "list", "tuple", "str", "int", "float", "super", "ValueError",
             "TypeError", "RuntimeError", "KeyError", "IndexError"}   # calls whose last argument nobody forgets
                                                                        # (or whose call fails without it)


def _offset(node, step: int):
    """``node + step`` written as a student would: ``T - 1`` + 1 is ``T``, ``-1`` + 1 is ``0``."""
    value = _int_of(node)
    if value is not None:
        v = value + step
        return ast.Constant(v) if v >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-v))
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub if step > 0 else ast.Add)
            and _int_of(node.right) == abs(step)):
        return _tree_copy(node.left)
    return ast.BinOp(_tree_copy(node), ast.Add() if step > 0 else ast.Sub(), ast.Constant(abs(step)))


def _reversed_range(node):
    """The same range run the other way: ``range(n)`` as ``range(n - 1, -1, -1)``, ``range(a, b)`` as
    ``range(b - 1, a - 1, -1)``, ``range(s, e, -1)`` as ``range(e + 1, s + 1)``; None for other steps."""
    a = node.args
    minus = ast.UnaryOp(ast.USub(), ast.Constant(1))
    if len(a) == 1:
        return ast.Call(func=node.func, args=[_offset(a[0], -1), _tree_copy(minus), minus], keywords=[])
    if len(a) == 2:
        return ast.Call(func=node.func, args=[_offset(a[1], -1), _offset(a[0], -1), minus], keywords=[])
    if len(a) == 3 and _int_of(a[2]) == -1:
        start, stop = _offset(a[1], 1), _offset(a[0], 1)
        return ast.Call(func=node.func, args=[stop] if _int_of(start) == 0 else [start, stop], keywords=[])
    return None


def _regroup(node):
    """One pair of parentheses lost or added in arithmetic: ``a * (b + c)`` as ``a * b + c``, ``(a + b) / c`` as
    ``a + b / c``, and ``a * b + c`` as ``a * (b + c)``, ``a + b * c`` as ``(a + b) * c``, ``a / b ** c`` as
    ``(a / b) ** c`` and the reverse."""
    low, high = (ast.Add, ast.Sub), (ast.Mult, ast.Div)
    left, right, dc = node.left, node.right, copy.deepcopy
    if isinstance(node.op, high) and isinstance(right, ast.BinOp) and isinstance(right.op, low):
        yield ast.BinOp(ast.BinOp(dc(left), node.op, dc(right.left)), right.op, dc(right.right)), "paren"
    if isinstance(node.op, high) and isinstance(left, ast.BinOp) and isinstance(left.op, low):
        yield ast.BinOp(dc(left.left), left.op, ast.BinOp(dc(left.right), node.op, dc(right))), "paren"
    if isinstance(node.op, low) and isinstance(left, ast.BinOp) and isinstance(left.op, high):
        yield ast.BinOp(dc(left.left), left.op, ast.BinOp(dc(left.right), node.op, dc(right))), "paren"
    if isinstance(node.op, low) and isinstance(right, ast.BinOp) and isinstance(right.op, high):
        yield ast.BinOp(ast.BinOp(dc(left), node.op, dc(right.left)), right.op, dc(right.right)), "paren"
    if isinstance(node.op, high) and isinstance(right, ast.BinOp) and isinstance(right.op, ast.Pow):
        yield ast.BinOp(ast.BinOp(dc(left), node.op, dc(right.left)), ast.Pow(), dc(right.right)), "paren"
    if isinstance(node.op, ast.Pow) and isinstance(left, ast.BinOp) and isinstance(left.op, high):
        yield ast.BinOp(dc(left.left), left.op, ast.BinOp(dc(left.right), ast.Pow(), dc(right))), "paren"
    if isinstance(node.op, ast.Mult) and isinstance(right, ast.BinOp) and isinstance(right.op, ast.Add):
        terms = _sum_terms(right)          # B * (Ty * k + q + d) as B * Ty * (k + q + d): a term's factor outside
        for j, term in enumerate(terms):
            if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                inner = _sum_of(terms[:j] + [term.right] + terms[j + 1:])
                yield ast.BinOp(ast.BinOp(dc(left), ast.Mult(), dc(term.left)), ast.Mult(), inner), "paren"


def _int_of(node) -> int | None:
    """The int a node spells (``3``, ``-1``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


def _function_attrs(fn) -> dict:
    """``{name: [attributes]}`` of the attributes the function reads from each of its names (self, cell, ...)."""
    out: dict = {}
    called = {id(n.func) for n in ast.walk(fn) if isinstance(n, ast.Call)}
    for n in ast.walk(fn):
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Load)
                and (id(n) not in called or n.value.id == "self")):   # data and layers, not methods (x.sum)
            out.setdefault(n.value.id, [])
            if n.attr not in out[n.value.id]:
                out[n.value.id].append(n.attr)
    return {k: v for k, v in out.items() if k not in ("torch", "F", "nn", "math", "np") and len(v) > 1}


def _operand_exprs(fn, region: set) -> dict:
    """``{name: [expressions]}``: the short products, sums and one-argument calls of the function's solution lines
    that have the name as a direct operand (``r * h``, ``torch.tanh(c)``), each written once: what a student may
    write where only the name is needed."""
    out: dict = {}
    for n in ast.walk(fn):
        if getattr(n, "lineno", None) not in region:
            continue
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Add, ast.Sub, ast.Div, ast.MatMult)):
            operands = [n.left, n.right]
        elif isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords and (
                callee_name(n) in MOVABLE | UNWRAP or isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name) and n.func.value.id in ("self", "model")):
            operands = n.args           # an activation or a layer: torch.tanh(c), self.W(h), model.W_attProj(h)
        else:
            continue
        text = ast.unparse(n)
        if len(text) > 40:
            continue
        for o in operands:
            if isinstance(o, ast.Name) and text not in [ast.unparse(e) for e in out.get(o.id, [])]:
                out.setdefault(o.id, []).append(n)
    return out


def _unlikely_names(fn) -> set:
    """Names nobody writes in place of a size or a tensor: a parameter with a True/False default (bidirectional),
    an accumulator (total += ...) and a loop variable (layer, t). Replacing another name by one of them is not
    tried (it made the edits of a count ambiguous); replacing one of them by another name still is."""
    out = set()
    defaults = fn.args.defaults
    for a, d in zip(fn.args.args[len(fn.args.args) - len(defaults):], defaults):
        if isinstance(d, ast.Constant) and isinstance(d.value, bool):
            out.add(a.arg)
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
        if isinstance(d, ast.Constant) and isinstance(d.value, bool):
            out.add(a.arg)
    for n in ast.walk(fn):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        if isinstance(n, (ast.For, ast.comprehension)):
            out.update(t.id for t in ast.walk(n.target) if isinstance(t, ast.Name))
    return out


def _gate_names(fn) -> set:
    """The names a function assigns from a sigmoid (its gates: r, z, i, f, o), whose complement 1 - g a student may
    write for g, or g for 1 - g."""
    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and "sigmoid(" in ast.unparse(node.value):
            for target in node.targets:
                found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return found


def _function_names(fn) -> list[str]:
    names = [a.arg for a in fn.args.args + fn.args.kwonlyargs if a.arg != "self"]
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in names:
            names.append(n.id)
    return names


def _describe(kind: str, old, new, where: str, stmt) -> str:
    if kind == "steps":
        return f"your values are what you get with `{_short(new)}` done before `{_short(old)}` ({where})"
    if kind == "indent":
        way, moved = new
        head = (f"`for {_short(old.target)} in {_short(old.iter)}`" if isinstance(old, ast.For)
                else f"`while {_short(old.test)}`")
        if way == "dedent":
            return (f"your values are what you get with `{_short(moved)}` after the loop {head} instead of inside it, "
                    f"at the end of each step ({where})")
        return (f"your values are what you get with `{_short(moved)}` inside the loop {head} (indented one level "
                f"too far: it runs at every step) instead of after it ({where})")
    if kind == "twice":
        return f"your values are what you get with `{_short(new.right)}` added twice in `{_short(old)}` ({where})"
    if kind == "value":
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):   # z = r: r used for z
            name = stmt.targets[0].id
            return (f"your values are what you get with `{_short(new)}` in place of `{name}` ({where}: "
                    f"`{name} = {_short(new)}`), the same as `{_short(new)}` written wherever `{name}` is used")
        return f"your values are what you get with `{_short(new)}` in place of the whole value ({where})"
    if kind == "unpack":
        gone = next(o.id for o, n in zip(old.elts, new.elts) if isinstance(n, ast.Name) and n.id == "_"
                    and isinstance(o, ast.Name) and o.id != "_")
        return (f"your values are what you get with `{_short(new)} = ...` where `{_short(old)} = ...` is needed "
                f"({where}): `{gone}` never gets its new value, it keeps the old one")
    if new is None:
        return f"your values are what you get without the step `{_short(old)}` ({where})"
    if kind == "mask":
        return (f"your values are what you get with the mask left out ({where}): `{_short(old)}` not applied, so "
                "every position is kept, the padding too")
    if kind == "reshape":
        return (f"your values are what you get with a reshape (or view) of `{_short(new.func.value)}` where "
                f"`{_short(old)}` is needed ({where}): a reshape keeps the order of the entries in memory, it does "
                "not swap axes")
    if kind == "wrap":
        return f"your values are what you get with an extra {new.func.attr} around `{_short(old)}` ({where})"
    return f"your values are what you get with `{_short(new)}` where `{_short(old)}` is needed ({where})"


def _where(stmt, label: str) -> str:
    """The place of an edit, in code: the line's target, the returned value, the loop's header or the line."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        return f"in {label}, the line that computes `{_short(target)}`"
    if isinstance(stmt, ast.Return):
        return f"in {label}, the returned value"
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return f"in {label}, the loop `for {_short(stmt.target)} in {_short(stmt.iter)}`"
    return f"in {label}, the line `{_short(stmt)}`"


def _plain_where(stmt, label: str) -> str:
    """The place in words for a hint that must not show code (its values or error can be guessed): a line is
    named by what it computes, returns, loops over or calls, never by its code."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        names = [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
        if isinstance(target, (ast.Name, ast.Tuple)) and names:
            return f"in {label}, the line that computes `{', '.join(names)}`"
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            return f"in {label}, the line that computes `{target.value.id}.{target.attr}`"
        return f"in {label}, the line that writes into `{names[0]}`" if names else f"in {label}"
    if isinstance(stmt, ast.Return):
        return f"in {label}, the returned value"
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return f"in {label}, the loop over `{', '.join(n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name))}`"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return f"in {label}, the line that calls `{callee_name(stmt.value)}`"
    if isinstance(stmt, ast.If):
        return f"in {label}, an `if` test"
    return f"in {label}"


def _solution_region(source: str) -> set:
    """The line numbers (1-based) between ``### BEGIN SOLUTION`` and ``### END SOLUTION``."""
    region, inside = set(), False
    for i, line in enumerate(source.splitlines(), 1):
        if "### BEGIN SOLUTION" in line:
            inside = True
        elif "### END SOLUTION" in line:
            inside = False
        elif inside:
            region.add(i)
    return region


def _statement_candidates(node, parent, region: set) -> list:
    """The edits of a whole statement: left out, ``=`` for ``+=``, done after the next one, and for a loop its last
    line written after it or the line after it written inside it. (replacement or a (move, index) pair, kind)."""
    found = []
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) and len(getattr(parent, "body", [])) > 1:
        found.append((None, "delete"))
    if isinstance(node, ast.AugAssign):
        found.append((ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno), "assign"))
    body = getattr(parent, "body", None)
    if isinstance(node, ast.stmt) and isinstance(body, list) and node in body:
        j = body.index(node)
        if j + 1 < len(body) and getattr(body[j + 1], "lineno", 0) in region:
            found.append((("swap-next", j), "steps"))
        if isinstance(node, (ast.For, ast.While)):
            if len(node.body) >= 2 and getattr(node.body[-1], "lineno", 0) in region:
                found.append((("dedent", j), "indent"))    # the loop's last line written after the loop
            if j + 1 < len(body) and getattr(body[j + 1], "lineno", 0) in region:
                found.append((("indent", j), "indent"))    # the line after the loop written inside it
    return found


def edits(source: str):
    """Every single edit of the solution regions of a cell: (edited source, description, kind, where), in a fixed
    order."""
    region = _solution_region(source)
    tree = ast.parse(source)
    parents, order = {}, []
    for node in ast.walk(tree):
        order.append(node)
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if _int_of(node) is not None and isinstance(node, ast.UnaryOp):
            node.operand._signed = True          # -1 is edited as a whole, not as - (1)
    in_slice, index_names = set(), set()     # nodes inside an index, and the names used as indices anywhere
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Subscript):
            for n in ast.walk(sub.slice):
                in_slice.add(id(n))
                if isinstance(n, ast.Name):
                    index_names.add(n.id)
    owners, exprs, unlikely, gates = {}, {}, {}, {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cls = next((p for p in ast.walk(tree) if isinstance(p, ast.ClassDef) and fn in p.body), None)
            label = f"{cls.name}.{fn.name}" if cls else fn.name
            names, attrs = _function_names(fn), _function_attrs(fn)
            for n in ast.walk(fn):
                owners.setdefault(id(n), (label, names, attrs))   # the innermost function comes later: keep the outer
            if id(fn) not in exprs:
                exprs[id(fn)] = _operand_exprs(fn, region)
                unlikely[id(fn)] = _unlikely_names(fn)
                gates[id(fn)] = _gate_names(fn)

    def _function_of(node):
        while not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node = parents[id(node)]
        return node

    def statement_of(node):
        while not isinstance(node, ast.stmt):
            node = parents[id(node)]
        return node

    def where_of(node, label):
        return _where(statement_of(node), label)

    def plain_where_of(node, label):
        return _plain_where(statement_of(node), label)

    for k, fn in enumerate(order):      # two variables in each other's place throughout a function
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(fn) not in owners:
            continue
        label = owners[id(fn)][0]
        loaded = []
        for n in ast.walk(fn):
            if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno in region
                    and n.id in owners[id(fn)][1] and n.id not in loaded):
                loaded.append(n.id)
        for a, b in itertools.combinations(loaded, 2):
            edited = _tree_copy(tree)
            target = list(ast.walk(edited))[k]
            for n in ast.walk(target):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno in region:
                    n.id = {a: b, b: a}.get(n.id, n.id)
            yield (ast.unparse(edited), f"your values are what you get with `{a}` and `{b}` in each other's place "
                   f"(in {label})", "swapnames", f"in {label}")

    for k, node in enumerate(order):
        line = getattr(node, "lineno", None)
        if line is None or line not in region or id(node) not in owners:
            continue
        label, names, attrs = owners[id(node)]
        where, plain_where = where_of(node, label), plain_where_of(node, label)
        found = list(_candidates(node, names, attrs))
        stmt = node if isinstance(node, ast.stmt) else None
        parent = parents[id(node)]
        found += _statement_candidates(node, parent, region)
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names
                and id(node) not in in_slice):      # r * h written where h is needed (an expression of the function)
            around = ast.unparse(parent)
            for expr in exprs.get(id(_function_of(node)), {}).get(node.id, ()):
                if ast.unparse(expr) != around and id(node) not in {id(n) for n in ast.walk(expr)}:
                    found.append((_tree_copy(expr), "subst"))
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) in in_slice
                and (parent is getattr(parents.get(id(parent)), "slice", None) or isinstance(parent, ast.Subscript))
                and not isinstance(parent, ast.Slice)):
            for step in (-1, 1):       # x[:, t - 1] for x[:, t], out[i, lengths + 1]: an index one step off
                found.append((_offset(node, step), "shift"))
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and isinstance(parent, ast.BinOp)
                and isinstance(parent.op, ast.Mult) and node.id in gates.get(id(_function_of(node)), ())):
            found.append((ast.BinOp(ast.Constant(1), ast.Sub(), _tree_copy(node)), "complement"))  # 1 - r for r
        top = isinstance(parent, (ast.Assign, ast.Return))
        if top and isinstance(node, (ast.BinOp, ast.Call)):
            for other in names:     # the whole value replaced by another variable (a candidate returned for the state)
                found.append((ast.Name(other, ast.Load()), "value"))
        into_layer = (isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Attribute)
                      and isinstance(parent.func.value, ast.Name) and parent.func.value.id == "self")
        if (isinstance(node, (ast.BinOp, ast.Call)) and (top or isinstance(parent, ast.Call)
                                                         and callee_name(parent) in UNWRAP)) or into_layer:
            for act in ("tanh", "sigmoid"):
                wrapped = ast.Call(func=ast.Attribute(ast.Name("torch", ast.Load()), act, ast.Load()), args=[node],
                                   keywords=[])
                found.append((wrapped, "wrap"))
        elif (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names
              and isinstance(parent, ast.BinOp)):   # a tanh applied again to a value that already went through it
            found.append((ast.Call(func=ast.Attribute(ast.Name("torch", ast.Load()), "tanh", ast.Load()),
                                   args=[node], keywords=[]), "wrap"))
        for new, kind in found:
            if kind == "name" and id(node) in in_slice and new.id not in index_names:
                continue            # mask[:, B] for mask[:, t]: a size is no index a student writes there
            if kind == "name" and id(node) not in in_slice:
                odd = unlikely.get(id(_function_of(node)), set())
                if new.id in odd and node.id not in odd:
                    continue        # total, layer or bidirectional written for hidden_size: nobody does
            edited = _tree_copy(tree)
            walked = list(ast.walk(edited))    # the same order as `order`: node k is the copy of `node`
            target = walked[k]
            parent = walked[order.index(parents[id(node)])]
            if kind == "steps":
                j = new[1]
                parent.body[j], parent.body[j + 1] = parent.body[j + 1], parent.body[j]
                new = parent.body[j]
            elif kind == "indent":
                way, j = new
                if way == "dedent":
                    moved = target.body.pop()
                    parent.body.insert(j + 1, moved)
                else:
                    moved = parent.body.pop(j + 1)
                    target.body.append(moved)
                new = (way, moved)
            elif not _replace(parent, target, new):
                continue
            try:
                text = ast.unparse(ast.fix_missing_locations(edited))
            except Exception:  # noqa: BLE001 - an edit that does not make code is skipped
                continue
            old = stmt if kind == "delete" else node
            place, plain = (where, plain_where) if kind != "delete" else (f"in {label}", f"in {label}")
            if kind in LEAF:            # a name or a number alone says little: show the expression around it
                ctx = parents.get(id(node))
                while ctx is not None and not isinstance(ctx, (ast.Call, ast.Subscript, ast.BinOp, ast.Compare)):
                    ctx = parents.get(id(ctx)) if not isinstance(ctx, ast.stmt) else None
                if ctx is not None:
                    old, new = ctx, walked[order.index(ctx)]
            yield text, _describe(kind, old, new, place, statement_of(node)), kind, plain


def _replace(parent, target, new) -> bool:
    for field, value in ast.iter_fields(parent):
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is target:
                    if new is None:
                        del value[i]
                    else:
                        value[i] = new
                    return True
        elif value is target:
            if new is None:
                return False
            setattr(parent, field, new)
            return True
    return False


class _Recorder:
    """Stands in for seqcourse.checks.assert_close and assert_equal (one recorder each, one shared list of calls):
    records (expected, actual) and never fails."""

    def __init__(self, real, calls: list):
        self.real, self.calls = real, calls

    def __call__(self, actual, expected, *args, **kwargs):
        self.calls.append((expected, actual, kwargs.get("name", args[0] if args else "output")))


def _notebooks(assignment: str):
    sol = next((ROOT / "solutions" / assignment).glob("*.ipynb"))
    ex = ROOT / "exercises" / assignment / sol.name
    return sol, ex


def _cells(assignment: str):
    """The student notebook's code cells with the solution cells put back: (source, role, grade_id)."""
    sol, ex = _notebooks(assignment)
    import nbformat
    solved = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
              for c in nbformat.read(sol, as_version=4).cells if c.cell_type == "code"}
    out = []
    for c in nbformat.read(ex, as_version=4).cells:
        if c.cell_type != "code":
            continue
        meta = c.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        role = "solution" if meta.get("solution") else "test" if meta.get("grade") else "other"
        out.append((solved[gid] if role == "solution" else c.source, role, gid))
    return out, sol, ex


def _value(x):
    """A float64 tensor of ``x``, or ``x`` itself when it is not numbers (strings, nested lists of them)."""
    import torch
    try:
        return torch.as_tensor(x).detach().to("cpu", torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return _tree_copy(x)


def _forked(fn, timeout: float):
    """``fn()`` in a forked child (an edit may crash the interpreter or loop forever): its pickled result, or None
    when it crashed, raised or ran longer than ``timeout`` seconds."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: never returns
        os.close(r)
        try:
            data = pickle.dumps(fn())
        except BaseException:  # noqa: BLE001 - whatever the edit did, the parent learns "nothing"
            data = pickle.dumps(None)
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    chunks, deadline = [], time.monotonic() + timeout
    with os.fdopen(r, "rb") as f:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                chunks = []
                break
            if not select.select([f], [], [], left)[0]:
                continue
            chunk = os.read(f.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    try:
        return pickle.loads(b"".join(chunks)) if chunks else None
    except Exception:  # noqa: BLE001
        return None


def _raised_at(error) -> tuple | None:
    """(the test cell's line that raised, the exception's type name, its message) of an error raised while a cell ran:
    the line is the outermost frame of the cell's own code (a file that is not on disk)."""
    import traceback
    if error is None:
        return None
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not os.path.exists(f.filename)]
    if not frames or not (frames[0].line or "").strip():
        return None
    return frames[0].line.strip(), type(error).__name__, str(error)


def _constant(v) -> bool:
    """A tensor of two entries or more that are all equal (every state zero, every weight 1/T)."""
    import torch
    return isinstance(v, torch.Tensor) and v.numel() > 1 and bool((v == v.flatten()[0]).all())


def _same(a, b) -> bool:
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.isfinite(a).all()) and bool(torch.allclose(a, b, atol=1e-4, rtol=1e-4))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):
        return False


def run_quietly(shell, src: str):
    """Run one cell in ``shell`` with its output swallowed; IPython's ExecutionResult."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return shell.run_cell(src, store_history=False, silent=True)


def snapshot(shell) -> tuple:
    """What a cell's run depends on besides its code: the namespace (a shallow copy) and the three random states."""
    import numpy as np
    import torch
    return dict(shell.user_ns), torch.get_rng_state(), random.getstate(), np.random.get_state()


def restore_snapshot(shell, s: tuple) -> None:
    import numpy as np
    import torch
    shell.user_ns.clear()
    shell.user_ns.update(s[0])
    torch.set_rng_state(s[1])
    random.setstate(s[2])
    np.random.set_state(s[3])


def _cell_frame(frame, cell_file: str):
    """The module-level frame of the running test cell (``cell_file``) that ``frame`` was called from (through the
    cell's own helpers too), or None: its line is the one a student's error report names."""
    while frame is not None and (frame.f_code.co_filename, frame.f_code.co_name) != (cell_file, "<module>"):
        frame = frame.f_back
    return frame


def reference_traces(assignment: str) -> tuple[dict, dict]:
    """:func:`traces` of the assignment's student notebook with the reference's solution cells, run in its folder."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    from IPython.core.interactiveshell import InteractiveShell

    cells, sol, ex = _cells(assignment)
    here = os.getcwd()
    os.chdir(ex.parent)
    try:
        return traces(InteractiveShell.instance(), cells, assignment)
    finally:
        os.chdir(here)


def traces(shell, cells: list, what: str = "the notebook") -> tuple[dict, dict]:
    """``(shapes, values)`` of the solution cells' functions while the visible tests run (``cells``: ``[(source,
    role, grade_id)]``, role "solution", "test" or other, run in order in ``shell``).

    ``shapes``: ``{key of (the test's line, the function's qualified name, what its call was given, the variable):
    shape}`` of every tensor variable while each line of a visible test runs, only where the variable has one shape
    all through that call (a variable rebound to another shape says nothing). :func:`seqcourse.hints.reference_shape`
    reads it: a student whose error comes with a tensor of another shape under the same name learns where that
    tensor was made wrong. ``values``: the fingerprints of what the first call of each function per test line (and
    per shapes given) was given and made (see :mod:`seqcourse.calltrace`; keys hashed by
    :func:`seqcourse.hints.value_key`). Names are hashed (the reference's code stays unread); shapes are what the
    tests' sizes make them."""
    import linecache

    import torch
    from seqcourse import calltrace, hints

    solution_files: set = set()
    seen: dict = {}
    current = {"file": None}
    given: dict = {}                    # id(frame) -> what its call was given, read at the call (see calltrace)

    def in_function(frame, event, arg):
        if event in ("line", "return"):
            test = _cell_frame(frame, current["file"])
            line = linecache.getline(test.f_code.co_filename, test.f_lineno).strip() if test is not None else ""
            if line:
                local = frame.f_locals
                signature = given.get(id(frame)) or json.dumps(hints.call_signature(frame.f_code, local))
                for name, v in list(local.items()):
                    if isinstance(v, torch.Tensor):
                        seen.setdefault((line, frame.f_code.co_qualname, signature, name), set()).add(tuple(v.shape))
        return in_function

    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_name == "<module>" and not os.path.exists(code.co_filename) and current["file"] is None:
            current["file"] = code.co_filename          # the cell's own code: the first module frame of its run
            if role == "solution":
                solution_files.add(code.co_filename)
            return None
        if role == "test" and code.co_filename in solution_files:
            given[id(frame)] = json.dumps(hints.call_signature(code, frame.f_locals))
            return in_function
        return None

    values: dict = {}
    for src, role, gid in cells:
        current["file"] = None
        sys.settrace(tracer)
        try:
            with calltrace.recording() if role == "test" else contextlib.nullcontext() as rec:
                result = run_quietly(shell, src)
        finally:
            sys.settrace(None)
        if not result.success:
            raise RuntimeError(f"{what}: the reference notebook fails at cell {gid}")
        if role == "test":
            values.update(calltrace.fingerprints(rec))
    shapes = {hints.shape_key(line, fn, json.loads(sig), name): list(next(iter(v)))
              for (line, fn, sig, name), v in sorted(seen.items()) if len(v) == 1}
    return shapes, dict(sorted(values.items()))


def generate(assignment: str, budget: float = 900.0, log=print) -> dict:
    os.environ.setdefault("MPLBACKEND", "Agg")
    import torch
    from IPython.core.interactiveshell import InteractiveShell
    import seqcourse.checks as checks
    from seqcourse import hints

    cells, sol, ex = _cells(assignment)
    shell = InteractiveShell.instance()
    calls: list = []
    recorder = _Recorder(checks.assert_close, calls)
    equal_recorder = _Recorder(checks.assert_equal, calls)
    checks.assert_close, checks.assert_equal = recorder, equal_recorder
    here = os.getcwd()
    os.chdir(ex.parent)

    def run(src: str) -> bool:
        return run_quietly(shell, src).success

    def state():
        return snapshot(shell)

    def restore(s):
        restore_snapshot(shell, s)

    try:
        snapshots, baseline = {}, {}
        for i, (src, role, gid) in enumerate(cells):
            if role == "solution":
                snapshots[i] = state()
            calls.clear()
            if not run(src):
                raise RuntimeError(f"{assignment}: the reference notebook fails at cell {gid or i}")
            if role == "test":
                baseline[i] = [_value(e) for e, _, _ in calls]
        starts = sorted(snapshots)
        sites: dict = {}
        errors: dict = {}          # {key of a raised error: its cell, (line, type, message) and the edits that raise it}
        spent, tried, kept = 0.0, 0, 0
        t0 = time.monotonic()
        for n, k in enumerate(starts):
            per_cell = (budget - (time.monotonic() - t0)) / (len(starts) - n)   # what is left, shared by the rest
            restore(snapshots[k])      # each edit runs in a child forked from this state
            end = starts[n + 1] if n + 1 < len(starts) else len(cells)
            region = [i for i in range(k + 1, end)]
            cell_t0 = time.monotonic()
            seen: set = set()
            for text, desc, kind, place in sorted(edits(cells[k][0]), key=lambda e: PRIORITY.index(e[2])):
                if time.monotonic() - cell_t0 > per_cell:
                    log(f"{assignment}: cell {cells[k][2]}: time budget spent, later edits not tried")
                    break
                if text in seen:
                    continue           # the same code as an edit of a likelier kind: that one names it
                seen.add(text)
                tried += 1

                def attempt():
                    """In a child process: the edited cell and the cells after it; the first changed check of
                    each test cell, as (cell, index, name, expected, actual)."""
                    found = []
                    if not run(text):
                        return found
                    for i in region:
                        calls.clear()
                        result = run_quietly(shell, cells[i][0])
                        if cells[i][1] == "test":
                            seen_first = False
                            for m, (e, a, name) in enumerate(list(calls)):
                                ev, av = _value(e), _value(a)
                                base = baseline[i][m] if m < len(baseline[i]) else None
                                if not _same(ev, base):
                                    seen_first = True
                                    break          # the test took another path: its later checks are not comparable
                                if not _same(av, ev):
                                    found.append((i, m, name, ev, av))
                                    seen_first = True
                                    break          # the first changed check of a test cell is what a student sees
                            raised = None if seen_first or result.success else _raised_at(result.error_in_exec)
                            if raised:     # a shape, a type or PyTorch's error before any value differs
                                found.append(("error", i, *raised))
                        if not result.success:
                            break
                    return found

                for item in _forked(attempt, EDIT_TIMEOUT) or []:
                    if item[0] == "error":
                        _, i, line, ename, msg = item
                        entry = errors.setdefault(hints.error_key(line, ename, msg),
                                                  {"cell": cells[i][2], "raised": (line, ename, msg), "texts": []})
                        _add_text(entry["texts"], desc, kind, place)
                        continue
                    i, m, name, ev, av = item
                    fp_e = hints.fingerprint(ev)
                    prefer = (hints.differing(av, ev, 1e-3 * max(1.0, float(ev.abs().max())))
                              if isinstance(av, torch.Tensor) and isinstance(ev, torch.Tensor) else None)
                    fp_a = hints.fingerprint(av, prefer)
                    if fp_e is None or fp_a is None or _constant(av):
                        continue               # a constant value (all zeros...) says nothing of the edit
                    site = sites.setdefault((i, m), {"cell": cells[i][2], "name": name, "expected": fp_e, "hints": {}})
                    entry = site["hints"].setdefault(fp_a["key"], {"value": fp_a, "texts": [], "value_tensor": av})
                    _add_text(entry["texts"], desc, kind, place)
        out_sites = []
        for (i, m), site in sorted(sites.items()):
            hints_out = []
            ev = baseline[i][m]
            for entry in site["hints"].values():
                if len(entry["texts"]) > AMBIGUOUS:
                    continue       # too many edits give these values: naming one of them would mislead
                text = _hint_text(entry["texts"], hints.weak(entry["value"]))   # weak: guessable, words not code
                av = entry["value_tensor"]
                d = hints.differing(av, ev, entry["value"]["q"])
                hints_out.append({"value": entry["value"], "differ": None if d is None else int(d.sum()),
                                  "text": hints.encrypt(text, av, entry["value"])})
                kept += 1
            if hints_out:
                out_sites.append({"cell": site["cell"], "name": site["name"], "expected": site["expected"],
                                  "hints": hints_out})
        out_errors = []
        for key, entry in sorted(errors.items()):
            if len({t[3][0] for t in entry["texts"]}) > ERROR_PLACES or len(entry["texts"]) > AMBIGUOUS:
                continue           # an error that edits in many places raise says nothing of the place
            text = _hint_text(entry["texts"], True, "error")
            out_errors.append({"cell": entry["cell"], "key": key, "text": hints.encrypt_error(text, *entry["raised"])})
        spent = time.monotonic() - t0
        digest = source_digest(assignment)
        traces = _forked(lambda: reference_traces(assignment), 600)
        if traces is None:
            raise RuntimeError(f"{assignment}: the reference notebook failed while its shapes were recorded")
        log(f"{assignment}: {tried} edits tried in {spent:.0f} s, {kept} hints at {len(out_sites)} checks, "
            f"{len(out_errors)} at errors")
        return {"assignment": assignment, "made_from": digest, "edits_tried": tried, "sites": out_sites,
                "errors": out_errors, "shapes": traces[0], "values": traces[1]}
    finally:
        checks.assert_close, checks.assert_equal = recorder.real, equal_recorder.real
        os.chdir(here)


def _add_text(texts: list, desc: str, kind: str, place: str) -> None:
    """Record one more edit that gives a value (or raises an error): its likelihood (the kind's priority), its
    order of arrival, its description in code, and its place and kind in words; an edit described already is not
    added twice."""
    if desc not in [t[2] for t in texts]:
        texts.append((PRIORITY.index(kind), len(texts), desc, (place, KIND_WORDS[kind])))


SAID = 3     # the edits named in one hint when several give the same values


LEADS = {"values": "your values are what you get with ", "error": "this error is what you get with "}


def _hint_text(texts: list, weak: bool, about: str = "values") -> str:
    """What a hint says: the edits that give these values (``about="error"``: that raise this error), the likeliest
    kind first (at most SAID of them: the first one alone may not be the student's); ``weak``: in words (the kind of
    edit and its place), not code."""
    prefix = LEADS[about]
    if weak:                             # one edit (place): kind; or kind (the kinds of one place together)
        places: dict = {}
        for t in sorted(texts):
            words = places.setdefault(t[3][0], [])
            if t[3][1] not in words:
                words.append(t[3][1])
        said = [f"{prefix}one edit ({place}): " + "; or ".join(words[:SAID]) for place, words in places.items()]
        return said[0] + "".join("; or with " + t.removeprefix(prefix) for t in said[1:SAID]) + (
            f" (these give the same {about} here)" if len(texts) > 1 else "")
    said = list(dict.fromkeys(t[2] for t in sorted(texts)))
    text = said[0] + "".join("; or with " + t.removeprefix(prefix) for t in said[1:SAID])
    if len(said) > SAID:
        text += f"; or with {len(said) - SAID} other single edit{'s' if len(said) - SAID > 1 else ''}"
    return text + (" (these give the same values here)" if len(said) > 1 else "")


def source_digest(assignment: str) -> str:
    """A digest of the code the hints are made from: the solution notebook's and the student notebook's code cells."""
    import nbformat
    code = [[c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
            for path in _notebooks(assignment)]
    return hashlib.sha256(json.dumps(code).encode()).hexdigest()[:16]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.edit_hints", description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="+", help="assignment names, e.g. ch04")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per assignment (default 900); the edits "
                        "of a solution cell left when its share is spent are not tried")
    parser.add_argument("--shapes-only", action="store_true", help="record only the reference's tensor shapes "
                        "and values (a few seconds) into the existing hint files, keeping their edit hints")
    args = parser.parse_args(argv)
    from seqcourse import hints
    hints.DATA.mkdir(exist_ok=True)
    for a in args.assignments:
        if not (ROOT / "solutions" / a).is_dir():
            print(f"error: no assignment {a!r} in {ROOT / 'solutions'}", file=sys.stderr)
            return 2
        path = hints.DATA / f"{a}.json"
        if args.shapes_only:
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                print(f"error: {path} is missing or damaged: run without --shapes-only", file=sys.stderr)
                return 2
            traces = _forked(lambda: reference_traces(a), 600)
            if traces is None:
                print(f"error: {a}: the reference notebook failed while its shapes were recorded", file=sys.stderr)
                return 1
            data["shapes"], data["values"] = traces
        else:
            data = generate(a, args.budget)
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
