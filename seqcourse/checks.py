"""Checks for exercise notebooks: compare with a reference and say clearly what differs, and why.

The tests of the exercises use these so that a failing check tells the student *what* is wrong (shape,
type, which entry, by how much) and, where the wrong value matches a common mistake, *why*:

- :func:`assert_shape`, :func:`assert_close` -- shapes first, then values; on a mismatch the message names
  the likely cause when the value you got equals the expected one up to a transpose, a permutation of
  equal blocks along a dimension (gate blocks, the two directions), a reversal in time, a shift by one step,
  a sign or a constant factor, or one of the named ``mistakes`` the test passes;
- :func:`assert_type` -- exact return types (a Python ``float`` is not a 0-dim tensor, ``bool`` is not ``int``);
- :func:`assert_equal` -- exact equality of plain data (lists of ints, strings...), showing the first difference;
- :func:`assert_unchanged` -- a function did not write into its input;
- :func:`assert_gradient` -- a gradient that must flow (through time) arrived, is not zero, and has the
  expected values;
- :func:`assert_softmax` -- attention weights: no NaN, rows that sum to 1 over the right axis, zeros where
  the mask is False, in the order that names the cause;
- :func:`order_mistakes`, :func:`rearrange_blocks` -- the values of every other order of stacked gate blocks,
  as named mistakes; :func:`slot_mistakes` -- one slot (a gate's weights, bias or block) taken from another slot;
  :func:`activation_mistakes` -- one nonlinearity swapped for another (sigmoid, tanh, relu, none);
  :func:`reduction_mistakes` -- a norm of all parts reduced another way (per part, then sum, mean or max);
- :func:`assert_configured` -- a layer built with other settings than the docstring's (nonlinearity, bias,
  num_layers, bidirectional...), named before its values are compared;
- :func:`term_mistakes` -- a count (multiply-adds, parameters) with one term missing, or counted once per
  batch instead of once per sentence, or once more per step;
- :func:`assert_uses_argument` -- a function whose result does not change with one of its arguments ignores it;
- :func:`list_hint` -- how a list differs from the expected one (reversed, reordered, extra or missing items);
- :func:`explain_errors` -- errors raised while a cell runs, shown in one line with the student's own line
  (:func:`brief_error`), not as a traceback into PyTorch or the course package;
- :func:`forbid` -- a ``with`` block in which the named functions and classes raise :class:`ForbiddenCall`
  ("do not call nn.GRUCell or its functional versions"), restored afterwards;
- :func:`measure_cost`, :func:`count_flops`, :func:`largest_tensor`, :func:`assert_at_most`,
  :func:`assert_not_materialised` -- "do not materialise X" checked by multiply-adds, the largest tensor
  created, or peak memory;
- :func:`use_reference` -- grade a later part with the reference implementation of an earlier part bound to
  the earlier part's name while the test cell runs, so that one mistake costs the points of its own part;
- :func:`deterministic_weights_` -- fixed weights, by registration order or (``by_name=True``) by name;
- :func:`reference` -- marks where a hidden test computes its expected values (``with reference(): ...``):
  the course's grader computes them in the instructor's reference run, never in the student's process.

Every ``assert_*`` function takes plain data (tensors, numbers, strings, types, dicts of those) and raises
``AssertionError`` with a one-line message, so that a grader can redo the check on reported values.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import itertools
import math
import operator
import re
import sys
import textwrap
import types
import zlib
from contextlib import contextmanager
from typing import Any, Callable, NamedTuple

import torch
import torch.library
import torch.utils._python_dispatch
import torch.utils.flop_counter
from torch.autograd import profiler_legacy

from . import pysource, rearrange
from .pysource import callee_name

__all__ = [
    "assert_shape", "assert_close", "assert_type", "diagnose",
    "assert_equal", "assert_unchanged", "check_input", "check_passes", "assert_gradient", "assert_softmax", "order_mistakes", "rearrange_blocks",
    "slot_mistakes", "activation_mistakes", "ACTIVATIONS", "reduction_mistakes", "assert_uses_argument", "list_hint",
    "assert_configured", "layer_settings", "term_mistakes", "results_when", "transpose_blocks", "with_settings", "setting_fixes",
    "input_orders", "layers_changed",
    "explain_errors", "brief_error",
    "forbid", "ForbiddenCall",
    "Cost", "measure_cost", "count_flops", "largest_tensor", "assert_at_most", "assert_not_materialised",
    "use_reference", "restore_references", "deterministic_weights_", "reference",
]


# ----------------------------------------------------------------------------------------------- shapes
def _shape(t) -> tuple:
    return tuple(int(s) for s in t.shape)


def _what(value) -> str:
    """A short description of a value's type for messages: 'a tuple of 2 items', 'a Python float'..."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {_shape(value)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} item{'s' if len(value) != 1 else ''}"
    if value is None:
        return "None"
    mod = type(value).__module__
    qual = type(value).__qualname__
    return f"a Python {qual}" if mod == "builtins" else f"a {mod}.{qual}"


def _shape_hint(got: tuple, want: tuple, sizes: dict | None = None) -> str:
    """Why a shape may be wrong, from the two shapes alone (values are looked at by :func:`diagnose`); ``sizes``
    (``{"Tx": 4}``) names the sizes in play: an axis of one of them where another is asked is said so."""
    if len(got) == len(want) and sorted(got) == sorted(want):
        from seqcourse import calltrace
        rnn = calltrace.code_mentions({"batch_first", "LSTM", "GRU", "RNN", "rnn", "lstm", "gru"}) is not False
        reshaped = calltrace.code_mentions({"reshape", "view", "flatten", "unflatten"}) is not False
        return ("the same sizes in another order: axes swapped (" + ("batch_first? " if rnn else "")
                + "a transpose or permute missing or one too many"
                + (", or a view/reshape where a transpose was needed" if reshaped else "") + ")")
    if tuple(s for s in got if s != 1) == tuple(s for s in want if s != 1):
        if len(got) > len(want):
            return "an extra dimension of size 1 (index it with [0] or squeeze it)"
        from seqcourse import calltrace
        if calltrace.code_mentions({"squeeze"}):
            return ("a dimension of size 1 is missing: your code calls .squeeze(), which removes EVERY axis of size 1 "
                    "(the batch axis of a batch of one too): squeeze only the axis meant, .squeeze(k), or index it")
        return "a dimension of size 1 is missing (unsqueeze it)"
    if len(got) == len(want):
        diff = [d for d in range(len(got)) if got[d] != want[d]]
        if len(diff) == 1:
            d = diff[0]
            g, w = got[d], want[d]
            last = d == len(got) - 1
            if w and g % w == 0:
                return (f"dimension {d} is {g // w} times too large ({g} instead of {w}"
                        + ("; blocks or directions concatenated?)" if last else ")"))
            if g == 1 and not last:
                return (f"dimension {d} holds ONE entry where {w} are expected: one value kept where one per "
                        f"example, step or position is meant (an index on the wrong axis, x[:, 0] where x[0] is "
                        f"meant; a list appended once, after the loop; or a variable overwritten at every step?)")
            if g and w % g == 0:
                return (f"dimension {d} is {w // g} times too small ({g} instead of {w}"
                        + ("; a block or a direction missing?)" if last else ")"))
            named = lambda v: "=".join(n for n, x in (sizes or {}).items() if int(x) == v)  # noqa: E731
            extra = named(g - w) if g > w else ""
            if extra and named(w) and named(w) != extra and not named(g):   # Tx + Ty where Ty is asked: joined
                return (f"dimension {d} has {g} = {w} + {g - w} ({named(w)} + {extra}) where {w} ({named(w)}) is "
                        f"expected: the {extra} steps joined to the {named(w)} ones along it (a torch.cat of two "
                        "tensors' steps, where only one is asked?)")
            if named(g) and named(g) != named(w):
                return (f"dimension {d} has {g} ({named(g)}) where {w}" + (f" ({named(w)})" if named(w) else "")
                        + f" is expected: the {named(g)} axis kept where another one is asked (a sum, mean or "
                        "product over the wrong axis, operands in the wrong order, or the wrong tensor?)"
                        + (f", or one {'too many' if g > w else 'too few'} (an off-by-one in a range or a slice?)"
                           if abs(g - w) == 1 else ""))
            if abs(g - w) == 1:   # an off-by-one, or another size that happens to differ by one: both said
                return (f"dimension {d} has {g} instead of {w}: one {'too many' if g > w else 'too few'} (an "
                        f"off-by-one in a range or a slice?) or another size of {g} (the wrong tensor, weight or "
                        f"size used there?)")
            return f"dimension {d} has size {g} instead of {w} (the wrong tensor, weight or size used there?)"
        if len(diff) == 2:
            i, j = diff
            for a, b in ((i, j), (j, i)):   # axis a k times larger, axis b k times smaller: joined along a, not b
                if want[a] and got[a] % want[a] == 0 and got[b] and want[b] % got[b] == 0 \
                        and got[a] // want[a] == want[b] // got[b] > 1:
                    k = got[a] // want[a]
                    return (f"dimension {a} is {k} times too large and dimension {b} {k} times too small: {k} parts "
                            f"joined along dimension {a} where dimension {b} is asked (torch.cat(..., dim={b})?)")
    merged = _merged_axes(got, want)
    if merged:
        return merged
    for short, long, missing in ((got, want, True), (want, got, False)):   # one whole axis too few or too many
        if len(long) == len(short) + 1:
            axes = [k for k in range(len(long)) if long[:k] + long[k + 1:] == short]
            if axes and missing and not short:        # one number where a vector is asked
                return (f"a single number (0-dim) where a vector of {long[0]} entries is asked: iterating over a "
                        "tensor (a for loop, zip, dict(zip(keys, t))) gives its entries one number at a time; cut it "
                        f"into blocks first (t.chunk(k) or t.split(size)), or an index or a sum too many?")
            if axes:
                k = axes[0]
                return (f"axis {k} (size {long[k]}) of the expected shape is missing: indexed away ([:, -1] or [0] "
                        f"keeps one step where every one is asked?) or reduced over (a sum or mean too many?)"
                        if missing else
                        f"an extra axis {k} of size {long[k]}: every step kept where one is asked (index it), or "
                        f"a reduction over it missing?")
    if math.prod(got) == math.prod(want):
        from seqcourse import calltrace
        if calltrace.code_mentions({"reshape", "view", "flatten", "unflatten"}) is False:   # not the student's
            return "the same number of entries in another shape"
        return "the same number of entries in another shape (a reshape/view where a transpose was needed?)"
    return ""


def _merged_axes(got: tuple, want: tuple) -> str:
    """Two adjacent axes of one shape merged into one axis of the other: torch.cat where torch.stack was needed
    (or the reverse), or a flatten/reshape too many; "" otherwise."""
    for short, long, fewer in ((got, want, True), (want, got, False)):
        if len(short) != len(long) - 1:
            continue
        for k in range(len(short)):
            if short[:k] == long[:k] and short[k + 1:] == long[k + 2:] and short[k] == long[k] * long[k + 1]:
                if fewer:
                    return (f"one axis fewer: your axis {k} (size {short[k]}) holds the expected axes {k} and {k + 1} "
                            f"({long[k]} x {long[k + 1]}) merged: torch.cat joins tensors along an axis they "
                            f"already have, torch.stack makes a new one (cat where stack was needed?), or a "
                            f"flatten/reshape too many")
                return (f"one axis more: your axes {k} and {k + 1} ({long[k]} x {long[k + 1]}) should be one axis "
                        f"of size {short[k]}: torch.stack makes a new axis, torch.cat joins along an axis the "
                        f"tensors already have (stack where cat was needed?)")
    return ""


def assert_shape(actual: torch.Tensor, shape: tuple, name: str = "output", sizes: dict | None = None,
                 mistakes: dict | None = None) -> None:
    """Fail with a readable message unless ``actual`` is a tensor of exactly ``shape``; ``sizes``
    (``{"Ty": 3, "Tx": 4}``) names the sizes in play, so that an axis of another size is named; ``mistakes``
    maps a wrong shape a known mistake gives to what that mistake is (said first when the shape is that one)."""
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{name}: expected a torch.Tensor, got {_what(actual)}{_type_hint(actual, torch.Tensor)}")
    got, want = _shape(actual), tuple(int(s) for s in shape)
    if got != want:
        known = {tuple(int(s) for s in k): v for k, v in (mistakes or {}).items()}.get(got)
        hint = f"Likely cause: {known}" if known else _shape_hint(got, want, sizes)
        odd = _unexpected_call()
        hint = f"{odd}; {hint}" if odd and hint else odd or hint
        raise AssertionError(f"{name}: expected shape {want}, got {got}" + (f"; {hint}" if hint else ""))


# ----------------------------------------------------------------------------------------------- values
def _as_float64(value, name: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        try:
            value = torch.as_tensor(value)
        except Exception as exc:  # noqa: BLE001 - any conversion failure is the student's to see
            raise AssertionError(f"{name}: expected a tensor or number, got {_what(value)}") from exc
    if value.is_complex():
        raise AssertionError(f"{name}: expected real values, got a complex tensor")
    return value.detach().to("cpu", torch.float64)


def _mismatch(a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """Where ``a`` and ``e`` (same shape) differ beyond the tolerances; equal infinities and NaN against NaN
    count as equal."""
    ok = (a - e).abs() <= atol + rtol * e.abs()
    ok |= (a == e)  # equal infinities
    ok |= torch.isnan(a) & torch.isnan(e)
    return ~ok


def _close(a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> bool:
    return a.shape == e.shape and not bool(_mismatch(a, e, atol, rtol).any())


def _nontrivial(e: torch.Tensor, atol: float) -> bool:
    return e.numel() > 0 and bool((e.abs() > 10 * atol).any())


def _tensors(values: dict | None):
    """``(description, float64 tensor)`` for each entry of ``values`` that is a tensor or number (others skipped)."""
    for desc, value in (values or {}).items():
        try:
            yield desc, _as_float64(value, desc)
        except AssertionError:
            continue


def diagnose(actual, expected, *, atol: float = 1e-5, rtol: float = 1e-5, mistakes: dict | None = None,
             regions: dict | None = None, ratios: dict | None = None, sizes: dict | None = None,
             first_wrong: dict | None = None, unchanged_when: dict | None = None,
             inverse: dict | None = None, known: dict | None = None, name: str | None = None) -> str:
    """The likely cause of ``actual != expected`` in words, or ``""`` when none is recognised.

    Tried in order: the named ``mistakes`` (``{description: the value that mistake gives}``); the one edit of the
    reference solution whose values these are (recorded for the visible tests by ``python -m autograder.edit_hints``,
    see :mod:`seqcourse.hints`; edits with few possible values, such as counts, come later, before the places of the
    wrong entries; only for the check called ``name``); for another
    shape, a permutation of the axes or a dimension of size 1 too many or too few; for a single number, the
    named ``ratios`` (``{description: actual / expected}``, e.g. ``{"divide by every position, the padding
    included (6 real of 8)": 6 / 8}``); for the same shape, probabilities or log-probabilities (a softmax or
    log-softmax over the last axis) where raw scores are expected, or raw scores where log-probabilities are
    expected, a tanh, sigmoid or ReLU too many or too few on the whole value, (log-)probabilities normalised over
    another axis, a transpose of two axes of equal size, a permutation of 2, 3 or 4 equal blocks along one dimension
    (gates, directions, halves of a concatenation), a reversal along a dimension, a shift by one step, the
    opposite sign, a constant factor, a factor per index along one dimension (a wrong count in a mean);
    finally where the wrong entries are: inside one of the ``regions`` (``{description: bool mask}``,
    broadcast to the value's shape), the first wrong entry (``first_wrong``: ``{flat index: description}``, e.g.
    the first loss of a training run, before any update) or at a few indices of one dimension.
    ``sizes`` (``{"D": 5, "Ty": 3}``) names a constant factor that is a size, a square root of one, or their
    ratio, also for weights that are a softmax of scaled energies (a scale by sqrt(Ty) instead of sqrt(D)).
    ``unchanged_when`` (``{"b_n is zero": value}``): what the student's own function gives when one input is
    changed; ``actual`` equal to one (and ``expected`` not) means that input is not used. ``inverse``
    (``{"W_nh is transposed: use W_nh.T ...": value}``): the student's function on a transformed input; equal to
    ``expected`` means the student's code applies the inverse transform. ``known`` (``{description: (got, want)}``):
    the student's own function on an input whose answer is known (a perfect prediction costs 0); when nothing
    else is recognised and ``got`` differs from ``want``, that is the message.
    """
    a = _as_float64(actual, "actual")
    e = _as_float64(expected, "expected")
    close = lambda x, y: _close(x, y, atol, rtol)  # noqa: E731

    named = [desc for desc, alt in _tensors(mistakes) if close(a, alt)]
    if named:        # several mistakes give these values here: all of them are said (the first alone may be wrong)
        said = [f"your values are what you get if you {d}" if not d[:1].isupper() else d for d in named[:3]]
        said = said[0] + "".join(f"; or: {w[:1].lower() + w[1:]}" for w in said[1:]) + (
            " (these give the same values here)" if len(said) > 1 else "")
        from seqcourse import calltrace
        number = calltrace.first_difference(strong=True, number=True)   # a size or count made wrong upstream:
        return f"{number}; that is why {said}" if number else said      # the named mistake is its consequence
    shared = _shared_layers()       # one layer under two names: the edit that gives these values blames its use
    if shared:
        return shared
    edit = _edit_hint(a, e, name, strong=True)   # one edit of the reference gives these very values: say it first
    if edit:
        return edit
    same = lambda x, y: x.shape == y.shape and close(x, y)  # noqa: E731
    unused = [desc for desc, alt in _tensors(unchanged_when) if same(a, alt) and not same(e, alt)]
    if unused:
        more = f" (and {len(unused) - 3} more)" if len(unused) > 3 else ""
        layers = all(d.startswith("the weights of ") for d in unused)
        why = "another layer used in its place, or a term left out?" if layers else "a term left out?"
        return (f"your result does not change when {', nor when '.join(unused[:3])}{more}: "
                + (f"that {'layer' if layers else 'input'} is not used ({why})" if len(unused) == 1
                   else f"those {'layers' if layers else 'inputs'} are not used ({why})"))
    for desc, alt in _tensors(inverse):
        if same(alt, e) and not same(a, e):
            return f"your function gives the expected result when {desc}"

    if a.shape != e.shape:
        if a.numel() == e.numel() and a.dim() == e.dim() and a.dim() <= 5:
            for perm in itertools.permutations(range(a.dim())):
                if perm != tuple(range(a.dim())) and tuple(a.shape[p] for p in perm) == tuple(e.shape):
                    if close(a.permute(*perm), e):
                        return (f"your values are right but the axes are in another order: permute{perm} "
                                f"of yours gives the expected layout (batch_first? a transpose missing?)")
        sq_a = a.reshape([s for s in a.shape if s != 1]) if a.numel() else a
        sq_e = e.reshape([s for s in e.shape if s != 1]) if e.numel() else e
        if sq_a.shape == sq_e.shape and close(sq_a, sq_e):
            more = a.dim() > e.dim()
            if more:
                return "your values are right but with an extra dimension of size 1 (index [0] or squeeze it)"
            return "your values are right but " + _shape_hint(tuple(a.shape), tuple(e.shape))
        if a.numel() == e.numel() and close(a.reshape(e.shape), e):
            merged = _merged_axes(_shape(a), _shape(e))
            return ("your values are right in memory order but the shape is wrong: " + merged if merged
                    else "your values are right in memory order but the shape is wrong (reshape the result)")
        return _edit_hint(a, e, name, strong=False) or _shape_hint(_shape(a), _shape(e), sizes)

    if a.numel() == 1 and ratios:
        ev, av = float(e.reshape(())), float(a.reshape(()))
        if ev != 0:
            for desc, r in ratios.items():
                if abs(av / ev - float(r)) <= 1e-3 * max(1.0, abs(float(r))):
                    return (f"your value is {av / ev:.4g} times the expected one: what you get if you {desc}"
                            if not desc[:1].isupper() else f"{desc} (your value is {av / ev:.4g} times the expected one)")
    if not _nontrivial(e, atol) and not _nontrivial(a, atol):
        return ""
    if _nontrivial(e, atol) and close(a, -e):
        return "your values have the opposite sign"
    if a.dim() >= 1 and a.shape[-1] > 1 and bool(torch.isfinite(e).all()):
        if close(a, e.log_softmax(-1)):
            return ("your values are log-probabilities (a log-softmax of the expected raw scores): return the "
                    "raw scores (logits) themselves; the loss applies the log-softmax")
        if close(a, e.softmax(-1)):
            return ("your values are probabilities (a softmax of the expected raw scores): return the raw "
                    "scores (logits) themselves")
        if bool(torch.isfinite(a).all()) and close(a.log_softmax(-1), e):
            return ("your values are raw scores where log-probabilities are expected: apply log_softmax over "
                    "the last axis")
    squashed = _squashed(a, e, close)
    if squashed:
        return squashed

    n = a.dim()
    for (i, j), swapped in rearrange.swapped_axes(a):
        if close(swapped, e):
            return f"your values are the expected ones transposed (dimensions {i} and {j} swapped)"

    for (d, k, perm), reordered in rearrange.block_orders(a):    # perm[j] = which of YOUR blocks holds expected j
        if close(reordered, e):
            if a.shape[d] == k:          # blocks of one entry: the entries (rows of a batch?) in another order
                order = [perm.index(j) for j in range(k)]
                return (f"your values are the expected ones in another order along dimension {d}: your index j "
                        f"holds the expected index {order}[j]" + (
                            " (the examples of the batch reordered: sorted, e.g. longest first for packing, and not "
                            "put back in the order they were given?)" if d == 0 else ""))
            if k == 2:
                return (f"the two halves along dimension {d} are swapped (the two directions, or "
                        f"the two parts of a concatenation, in the wrong order)")
            order = [perm.index(j) for j in range(k)]
            return (f"the {k} blocks of size {a.shape[d] // k} along dimension {d} are in the wrong order: "
                    f"your block j holds the expected block {order}[j] (gates in another order than "
                    f"the stated one?)")

    for d in range(n):
        size = a.shape[d]
        for k in (2, 3, 4):
            if size % k or size <= k:
                continue
            m = size // k
            moved = e.movedim(d, 0)
            rest = moved.shape[1:]
            inter = moved.reshape(m, k, *rest).transpose(0, 1).reshape(size, *rest).movedim(0, d)
            if close(a, inter):
                return (f"your values are the expected ones interleaved along dimension {d}: your block j holds "
                        f"the entries j, j + {k}, j + {2 * k}, ... instead of {k} consecutive blocks (a reshape or "
                        "view where chunk or split was needed?)")

    for d, reversed_ in rearrange.reversals(a):
        if close(reversed_, e):
            return f"your values are the expected ones reversed along dimension {d} (time reversed?)"

    for d in range(n):
        size = a.shape[d]
        if size > 2:
            late = close(a.narrow(d, 1, size - 1), e.narrow(d, 0, size - 1))
            early = close(a.narrow(d, 0, size - 1), e.narrow(d, 1, size - 1))
            if late and not early:
                return (f"your values are the expected ones shifted by one step along dimension {d}: your "
                        f"index t+1 holds the expected index t (off by one?)")
            if early and not late:
                return (f"your values are the expected ones shifted by one step along dimension {d}: your "
                        f"index t holds the expected index t+1 (off by one?)")

    ee = float((e * e).sum())
    if ee > 0 and int((e.abs() > 10 * atol).sum()) >= 2:   # a factor is meaningless for a single number
        c = float((a * e).sum()) / ee
        if abs(c - 1) > 1e-3 and abs(c) > 1e-6 and close(a, c * e):
            edit = _edit_hint(a, e, name, strong=False)    # a factor is what many slips give: an edit says which
            return (f"{edit} (your values are {c:.4g} times the expected ones)" if edit else
                    f"your values are {c:.4g} times the expected ones{_factor_name(c, sizes, 'a factor missing or extra?')}")
    scaled = _softmax_scale(a, e, close)
    if scaled is not None:
        return (f"your weights are a softmax of the expected energies times {scaled:.4g}"
                f"{_factor_name(scaled, sizes, 'a scale missing, doubled or of the wrong size?', rel=1e-2)}")
    if ee > 0 and int((e.abs() > 10 * atol).sum()) >= 2:
        for d in range(n):
            if a.shape[d] < 2 or a.numel() // a.shape[d] < 2:    # one entry per slice: any values fit a factor
                continue
            dims = [x for x in range(n) if x != d]
            num = (a * e).sum(dim=dims, keepdim=True)
            den = (e * e).sum(dim=dims, keepdim=True)
            factor = torch.where(den > 0, num / den.clamp_min(1e-300), torch.ones_like(den))
            if close(a, factor * e) and not bool(((factor - 1).abs() < 1e-3).all()):
                flat = factor.flatten()
                zero, one = flat.abs() < 1e-3, (flat - 1).abs() < 1e-3
                if bool((zero | one).all()):   # some slices are zero, the others right: nothing was divided
                    where = ", ".join(str(i) for i in zero.nonzero().flatten()[:6].tolist())
                    return (f"the slices at index {where} along dimension {d} are all zero where values are "
                            f"expected, the others are right: something set to zero (a state reset or masked to "
                            f"zero where it should be kept)?")
                shown = ", ".join(f"{v:.3g}" for v in flat[:6].tolist())
                return (f"each slice along dimension {d} is off by its own factor ({shown}): divided by the "
                        f"wrong count (e.g. the padded length instead of each sequence's length)?")

    bad = _mismatch(a, e, atol, rtol)
    located = _unexpected_call() or _located_difference(strong=True)    # a line and its values: before words
    for desc, mask in (regions or {}).items():
        try:
            m = torch.as_tensor(mask).to("cpu").bool().expand_as(bad)
        except Exception:  # noqa: BLE001 - a mask that does not fit is ignored
            continue
        if bad.any() and bool((bad <= m).all()):
            return f"every wrong entry is in {desc}" + (f"; {located}" if located else "")
        if bad.any() and bool((bad <= ~m).all()) and bool(m.any()):
            return f"{desc} are right; every wrong entry is elsewhere" + (f"; {located}" if located else "")
    if bad.any() and first_wrong:
        k = int(bad.flatten().nonzero()[0])
        if k in first_wrong:       # where the values first go wrong, then what a wrong entry there usually means
            return f"{located}; {first_wrong[k]}" if located else first_wrong[k]
    edit = _edit_hint(a, e, name, strong=False)
    if located:
        var = re.search(r"`(\w+)` is the first variable whose value differs", located)
        single = edit and "; or" not in edit and "these give the same values" not in edit
        if var and single and f"computes `{var.group(1)}`" in edit:     # the same line: what is wrong in it too
            return f"{located}; {edit}"
        return located
    if edit:
        return edit
    prefix = _right_prefix(bad)
    if prefix:
        return prefix
    if bad.any() and n:
        parts = []
        for d in range(n):
            rows = bad.movedim(d, 0).reshape(bad.shape[d], -1).any(dim=1)
            idx = rows.nonzero().flatten().tolist()
            if 0 < len(idx) <= bad.shape[d] // 2:
                shown = idx if len(idx) <= 4 else idx[:4] + ["..."]
                parts.append(f"index {shown[0]}" if len(idx) == 1 else f"indices {shown}")
                parts[-1] += f" of dimension {d}"
        if parts:
            return "the wrong entries are only at " + " and ".join(parts[:2])
    for desc, (got, want) in (known or {}).items():
        try:
            g, w = _as_float64(got, "got"), _as_float64(want, "want")
        except (AssertionError, TypeError, ValueError, RuntimeError):
            continue
        if g.shape == w.shape and not close(g, w):
            shown = f"{g.reshape(()).item():.4g}" if g.numel() == 1 else "other values"
            wanted = f"{w.reshape(()).item():.4g}" if w.numel() == 1 else "the known ones"
            return f"{desc}: yours gives {shown} instead of {wanted}"
    return _located_difference(strong=False)



def _located_difference(strong: bool = True) -> str:
    """Where the running test's values first go wrong (the first variable of a notebook function, given the
    reference's inputs, that differs from the reference's: :mod:`seqcourse.calltrace`), or ``""``; ``strong``: only
    a variable named, else only a call whose result alone differs."""
    from seqcourse import calltrace
    return calltrace.first_difference(strong)


def _shared_layers() -> str:
    from seqcourse import calltrace
    return calltrace.shared_modules()


def _unexpected_call() -> str:
    """A notebook function called (while the running test's line ran) with arguments of other shapes than every
    call the reference makes there, and the line that calls it (:func:`seqcourse.calltrace.unexpected_call`)."""
    from seqcourse import calltrace
    return calltrace.unexpected_call()


def _right_prefix(bad: torch.Tensor) -> str:
    """Every slice along one dimension right up to index k and every one after it wrong (k >= 1, at least two wrong):
    what goes from one step (or example) to the next; "" otherwise."""
    for d in range(bad.dim()):
        size = bad.shape[d]
        if size < 3:
            continue
        rows = bad.movedim(d, 0).reshape(size, -1)
        wrong = rows.any(dim=1)
        if not bool(wrong.any()):
            continue
        k = int(wrong.nonzero()[0])
        if 1 <= k <= size - 2 and bool(wrong[k:].all()) and bool(rows[k:].float().mean() > 0.5):
            right = "index 0" if k == 1 else f"indices 0 to {k - 1}"
            return (f"the entries at {right} of dimension {d} are right and every later index is wrong: if dimension "
                    f"{d} is time, what one step passes to the next goes wrong (the state carried over, or the input "
                    f"fed to the next step: the target token with teacher forcing, the previous prediction "
                    f"without?); if it is the batch, the first example's value used for all (an index [0] where "
                    f"[:] is meant?)")
    return ""


def _edit_hint(a, e, name: str | None, strong: bool | None = None) -> str:
    """The one edit of the reference solution that gives ``a`` in the visible check called ``name`` that expects ``e``
    (recorded by ``python -m autograder.edit_hints``; see :mod:`seqcourse.hints`), or ``""``. Never fails a test."""
    if name is None:
        return ""
    try:
        from seqcourse import hints
        return _edits_of_changed_lines(hints.describe(a, e, name, strong))
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def _edits_of_changed_lines(text: str) -> str:
    """The edit hints of ``text`` ("...; or ...") without those that cannot be the student's edit: another name put
    in a line the student's code has as the reference's (same names and calls), or a name (``W_hh``, ``sigmoid``)
    -- or a variable or index as a whole (``W_hh[:, -1]``) -- that no line of the student's that makes the value
    holds (another edit gives the same values)."""
    from seqcourse import calltrace

    if not text:
        return text
    text = text.replace("; or with your values are what you get ", "; or ")    # two recorded texts joined
    parts = text.split("; or ")
    keep = []
    for part in parts:
        m = re.search(r"what you get with `([^`]+)` where `([^`]+)` is needed \(in ([\w.]+), the line that computes "
                      r"`(\w+)`\)", part)
        if m:
            try:
                names = [{n.id for n in ast.walk(ast.parse(x, mode="eval")) if isinstance(n, ast.Name)}
                         for x in m.group(1, 2)]
            except SyntaxError:
                names = [set(), set()]
            if names[0] != names[1] and calltrace.line_as_reference(m.group(3), m.group(4)):
                continue
            if calltrace.value_as_reference(m.group(3), m.group(4)):   # the student's value there is right: the
                continue                                                 # edit is an equivalent fix elsewhere
            if calltrace.bound_fewer_times(m.group(3), m.group(4)):    # the line it edits is not in the student's
                continue                                                 # code: the reference's loop makes it again
            try:
                got = ast.parse(m.group(1), mode="eval").body
                own = pysource.identifiers(got) - pysource.identifiers(ast.parse(m.group(2), mode="eval"))
            except SyntaxError:
                got, own = None, set()
            whole = m.group(1) if isinstance(got, (ast.Name, ast.Subscript, ast.Attribute)) else None   # one spelling
            if own and calltrace.lines_mention(m.group(3), m.group(4), own, whole) is False:
                continue    # the edit names what no line of the student's that makes the value names: another edit
                            # that happens to give the same values
        keep.append(part)
    if len(keep) == len(parts):
        return text
    if not keep:
        return ""
    out = "; or ".join(keep)
    if len(keep) == 1:
        out = out.replace(" (these give the same values here)", "").replace(" (these give the same error here)", "")
    return out if out.startswith(("your values", "this error")) else "your values are what you get " + out


def _clamped(a: torch.Tensor, e: torch.Tensor, close) -> str:
    """``a`` is ``e`` clamped to ``a``'s own range (the entries inside it right, some of ``e`` beyond it), in words;
    ``""`` otherwise."""
    if a.numel() < 4 or not a.is_floating_point() or close(a, e):
        return ""
    lo, hi = float(a.min()), float(a.max())
    inside = (a > lo) & (a < hi)               # entries the clamp left alone: they must be there, and right
    if not bool(inside.any()) or not torch.allclose(a[inside], e[inside], atol=1e-4, rtol=1e-3):
        return ""
    cut = [f"every entry below {lo:g} set to {lo:g}"] * bool((e < lo - 1e-3 * max(1.0, abs(lo))).any()) + \
        [f"every entry above {hi:g} set to {hi:g}"] * bool((e > hi + 1e-3 * max(1.0, abs(hi))).any())
    if cut and close(a, e.clamp(lo, hi)):
        return f"your values are the expected ones with {' and '.join(cut)}: a clamp (or hardtanh) where none is asked?"
    return ""


def _squashed(a: torch.Tensor, e: torch.Tensor, close) -> str:
    """A nonlinearity one too many, one too few or over another axis on the whole value: ``a`` is tanh/sigmoid/ReLU
    of ``e`` (applied twice, or where none is asked), or ``e`` is that function of ``a`` (left out), or ``a`` is
    (log-)probabilities normalised over another axis than ``e``'s last; ``""`` when none of these."""
    if not (bool(torch.isfinite(a).all()) and bool(torch.isfinite(e).all())):
        return ""
    nothing_kept = bool((a == 0).all()) and not close(a, e)    # no evidence of a ReLU, which keeps positive entries
    if bool(((a == 0) & ~torch.isclose(a, e)).any()):         # zeros where values are expected
        from seqcourse import calltrace
        zero = calltrace.zero_factor()
        if zero:
            return zero
    for name, f in (("tanh", torch.tanh), ("sigmoid", torch.sigmoid), ("ReLU", torch.relu)):
        # where the function changes nothing (tanh of tiny values, ReLU of positive ones) it is no evidence
        if not close(f(e), e) and close(a, f(e)) and not (name == "ReLU" and nothing_kept):
            if name == "ReLU":
                return ("your values are the expected ones with every negative entry set to 0: a ReLU (or clamp) "
                        "where none is asked?")
            return (f"your values are {name} of the expected ones: a {name} applied twice, or where none is "
                    "asked?")
        if not close(f(a), a) and close(f(a), e):
            if name == "ReLU":
                return ("your values are the expected ones where those are positive, but negative where 0 is "
                        "expected: a ReLU (or clamp at 0) missing?")
            return f"{name} of your values gives the expected ones: a {name} missing?"
    clamped = _clamped(a, e, close)
    if clamped:
        return clamped
    if a.dim() < 2:
        return ""
    ones = lambda x: close(x, torch.ones_like(x))  # noqa: E731
    for log, f in ((True, "log_softmax"), (False, "softmax")):
        total = (lambda x, d: x.exp().sum(d)) if log else (lambda x, d: x.sum(d))  # noqa: E731
        if (bool((e <= 1e-9).all()) if log else bool((e >= 0).all())) and ones(total(e, -1)) \
                and not ones(total(a, -1)):
            for d in range(a.dim() - 1):
                if a.shape[d] > 1 and ones(total(a, d)):
                    return (f"your values are {'log-' if log else ''}probabilities normalised over dimension {d} "
                            f"({'their exp sums' if log else 'they sum'} to 1 along it), not over the last one: "
                            f"{f}(..., dim=-1)?")
    return ""


def _factor_name(c: float, sizes: dict | None, fallback: str, rel: float = 1e-3) -> str:
    """`` (...)`` naming a constant factor ``c`` from the ``sizes`` in play (a size, its square or fourth root, a
    ratio); the closest of those within ``rel`` (relative) wins."""
    found = []        # (relative error, text)

    def near(x, value, text):
        err = abs(x - value) / max(abs(x), abs(value))
        if err <= rel:
            found.append((err, text))

    for name, v in (sizes or {}).items():
        v = float(v)
        if v <= 0 or v == 1:
            continue
        for value, text in ((math.sqrt(v), f"sqrt({name}): a division by sqrt({name}) missing?"),
                            (1 / math.sqrt(v), f"1/sqrt({name}): an extra division by sqrt({name})?"),
                            (v, f"{name}: {name} times too large (a division by {name} missing, a sum where a mean "
                                f"is asked, or a multiplication where a division is asked?)"),
                            (1 / v, f"1/{name}: {name} times too small (an extra division by {name}, or a mean where a "
                                    f"sum is asked?)"),
                            (v ** 0.25, f"{name}**(1/4): divided by the square root of sqrt({name}) where sqrt({name}) "
                                        f"is asked (a square root taken twice: a size already made sqrt({name}) "
                                        "given to math.sqrt again?)"),
                            (v ** -0.25, f"1/{name}**(1/4): a square root taken twice, or an extra division?")):
            near(c, value, f" = {text.split(':')[0]} ({name}={v:g}):{text.split(':', 1)[1]}")
    if not sizes:
        from seqcourse import calltrace
        for name, v in calltrace.number_arguments().items():       # a number the function was given
            v = float(v)
            if v > 0:
                near(c, 1 / v, f" = 1/{name} ({name}={v:g} was given): a factor {name} missing, or a division by it "
                               "too many?")
                near(c, v, f" = {name} ({name}={v:g} was given): a factor {name} too many, or a division by it "
                           "missing?")
    for (x, vx), (y, vy) in itertools.permutations((sizes or {}).items(), 2):
        vx, vy = float(vx), float(vy)
        if vx > 0 and vy > 0 and vx != vy:
            near(c, math.sqrt(vx / vy), f" = sqrt({x}/{y}) ({x}={vx:g}, {y}={vy:g}): divided by sqrt({y}) where "
                                        f"sqrt({x}) is asked (the scale takes the size {x})?")
            near(c, vx / vy, f" = {x}/{y} ({x}={vx:g}, {y}={vy:g}): divided by {y} where {x} is asked?")
    return min(found)[1] if found else f" ({fallback})"


def _softmax_scale(a: torch.Tensor, e: torch.Tensor, close) -> float | None:
    """``c`` when ``a`` is softmax(c * energies) where ``e`` is softmax(energies) along the last axis (zeros kept where
    ``e`` has them: masked positions), else None."""
    if a.dim() < 1 or a.shape[-1] < 2 or not bool(torch.isfinite(a).all() & torch.isfinite(e).all()):
        return None
    if bool((a < 0).any() | (e < 0).any()) or not close(e.sum(-1), torch.ones_like(e.sum(-1))):
        return None
    pos = (e > 0) & (a > 0)
    if not bool(((e > 0) == pos).all()):
        return None
    le = torch.where(pos, e.clamp_min(1e-300).log(), torch.zeros_like(e))
    la = torch.where(pos, a.clamp_min(1e-300).log(), torch.zeros_like(a))
    count = pos.sum(-1, keepdim=True).clamp_min(1)
    le_c = torch.where(pos, le - le.sum(-1, keepdim=True) / count, torch.zeros_like(le))
    la_c = torch.where(pos, la - la.sum(-1, keepdim=True) / count, torch.zeros_like(la))
    den = float((le_c * le_c).sum())
    if den <= 0:
        return None
    c = float((la_c * le_c).sum()) / den
    if abs(c - 1) < 1e-3 or abs(c) < 1e-6:
        return None
    logits = torch.where(pos, c * le, torch.full_like(le, -math.inf))
    # expected values are often literals rounded to 4 decimals: their logarithms, scaled by c, carry that rounding
    # error, so the rebuilt weights are compared with a tolerance that grows with c (one fitted number, many entries)
    rebuilt = torch.where(pos, logits.softmax(-1), torch.zeros_like(a))
    return c if float((rebuilt - a).abs().max()) <= 1e-3 * max(1.0, abs(c)) else None


def assert_close(actual, expected, *, atol: float = 1e-5, rtol: float = 1e-5, name: str = "output",
                 mistakes: dict | None = None, regions: dict | None = None, ratios: dict | None = None,
                 sizes: dict | None = None, first_wrong: dict | None = None, unchanged_when: dict | None = None,
                 inverse: dict | None = None, known: dict | None = None) -> None:
    """Fail unless ``actual`` equals ``expected`` (tensors or numbers) within the tolerances.

    The shape is checked first. The message names the number of differing entries, the first one, the
    largest absolute difference and, where it recognises one (see :func:`diagnose`), the likely cause.

    mistakes: ``{description: value}`` -- values that common mistakes give, e.g.
        ``{"take the softmax over the source axis instead of the target axis": scores.softmax(1)}``;
        when ``actual`` matches one, the message says "your values are what you get if you <description>"
        (a description that starts with a capital letter is quoted as it is). Prefer literal values in
        visible tests: code that computes a mistake would show students the solution.
    regions:  ``{description: bool mask}`` -- parts of the value, e.g. ``{"the padded steps": pad_mask}``;
        the message says so when every wrong entry lies in one of them.
    ratios:   ``{description: actual / expected}`` for a single number, e.g. a loss averaged over every
        position instead of the real tokens: ``{"divide by every position, the padding included": 6 / 8}``.
    sizes:    ``{name: size}`` of the sizes in play, to name a wrong constant factor (``sqrt(D/Ty)``).
    first_wrong: ``{flat index: description}``: what it means when the first wrong entry is at that index.
    unchanged_when: ``{description: value}`` -- what the student's OWN function gives when one input is changed
        (computed in the test by calling it again, e.g. with ``c_prev`` replaced by other numbers); when
        ``actual`` equals one (and ``expected`` does not), "your result does not change when <description>: that
        input is not used (a term left out?)". Give only inputs that the checked value depends on (an LSTM's c
        does not depend on the output gate's bias): nothing here can tell.
    inverse:  ``{description: value}`` -- the student's OWN function on a transformed input (a square weight
        transposed, two halves swapped); when that value equals ``expected``, the student's code applies the
        inverse transform: "your function gives the expected result when <description>".
    known:    ``{description: (got, want)}`` -- the student's OWN function on an input whose answer is known without
        any reference (perfect scores cost 0); said last, when nothing else explains the difference.
    Every argument is plain data (tensors, numbers, strings, dicts of them): the class grader re-evaluates it.
    """
    e = _as_float64(expected, name)
    if not isinstance(actual, torch.Tensor):
        if isinstance(actual, (tuple, list)) and e.dim() == 0:
            raise AssertionError(f"{name}: expected a tensor or number, got {_what(actual)}")
    a = _as_float64(actual, name)
    if a.shape != e.shape:
        why = diagnose(a, e, atol=atol, rtol=rtol, mistakes=mistakes, inverse=inverse, name=name, sizes=sizes)
        odd = _unexpected_call()
        why = f"{odd}; {why}" if odd and why else odd or why
        raise AssertionError(f"{name}: expected shape {_shape(e)}, got {_shape(a)}" + (f"; {why}" if why else ""))
    if torch.isnan(a).any() and not torch.isnan(e).any():
        from seqcourse import calltrace
        made = calltrace.first_nan()
        at = tuple(torch.isnan(a).nonzero()[0].tolist())
        if _nan_cause_said(made):
            raise AssertionError(f"{name}: contains NaN (at index {at}); {made}")
        raise AssertionError(f"{name}: contains NaN (at index {at}); "
                             + (f"{made}; " if made else "") + "NaN "
                             "comes from 0/0 (inf / inf: torch.exp of a large energy overflows to inf, which softmax "
                             "avoids by subtracting the largest first), from the log (or torch.logit, sqrt) of a "
                             "number outside its domain, "
                             "from a softmax over entries "
                             "that are all -inf (a mask or a softmax on the wrong axis?) or over an entry that is +inf "
                             "(a mask filled with float('inf') where float('-inf') is meant?)")
    diff = (a - e).abs()
    bad = _mismatch(a, e, atol, rtol)
    if bad.any() and bad.numel() == 1:
        why = diagnose(a, e, atol=atol, rtol=rtol, mistakes=mistakes, regions=regions, ratios=ratios, sizes=sizes,
                       first_wrong=first_wrong, unchanged_when=unchanged_when, inverse=inverse,
                       known=known, name=name)
        raise AssertionError(
            f"{name}: got {a.reshape(()).item():.6g}, expected {e.reshape(()).item():.6g} "
            f"(tolerance atol={atol}, rtol={rtol})" + (f". Likely cause: {why}" if why else ""))
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        finite = diff[torch.isfinite(diff)]
        largest = finite.max().item() if finite.numel() else float("inf")
        why = diagnose(a, e, atol=atol, rtol=rtol, mistakes=mistakes, regions=regions, ratios=ratios, sizes=sizes,
                       first_wrong=first_wrong, unchanged_when=unchanged_when, inverse=inverse,
                       known=known, name=name)
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {bad.numel()} entries differ; first at index {idx}: "
            f"got {a[idx].item():.6g}, expected {e[idx].item():.6g} "
            f"(largest difference {largest:.3g}, tolerance atol={atol}, rtol={rtol})"
            + (f". Likely cause: {why}" if why else "")
        )


# ------------------------------------------------------------------------------------------------ types
_TYPE_NAMES = {"int": int, "float": float, "bool": bool, "str": str, "list": list, "tuple": tuple,
               "dict": dict, "None": type(None), "tensor": torch.Tensor, "Tensor": torch.Tensor}


def _type_of(expected):
    if isinstance(expected, str):
        if expected not in _TYPE_NAMES:
            raise ValueError(f"unknown type name {expected!r}; use one of {sorted(_TYPE_NAMES)}")
        return _TYPE_NAMES[expected]
    if expected is None:
        return type(None)
    if not isinstance(expected, type) and hasattr(expected, "module") and hasattr(expected, "qualname"):
        # a reference to a type (as a grader that re-runs checks on reported data passes it)
        obj = __import__(expected.module, fromlist=["_"])
        for part in expected.qualname.split("."):
            obj = getattr(obj, part)
        return obj
    return expected


def _type_name(t) -> str:
    if t is torch.Tensor:
        return "a torch.Tensor"
    if t is type(None):
        return "None"
    return f"a Python {t.__name__}"


def _type_hint(value, want) -> str:
    if value is None and want is not type(None):
        from seqcourse import calltrace
        unreturned = calltrace.unreturned_result() or calltrace.named_slip(calltrace.slip_get_without_default) \
            or calltrace.discarded_value()
        return f" ({unreturned})" if unreturned else (" (a function that ends without `return` gives None: is the "
                                                      "result returned?)")
    if isinstance(value, (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)) \
            and want is not type(value):
        name = getattr(value, "__name__", "the method")
        return (f" (the method .{name} itself, not its result: the call's parentheses are missing, .{name}() calls "
                "it)")
    if want is int and type(value) is list and len(value) == 1:
        from seqcourse import calltrace
        kept = " (your code passes keepdim=True, which keeps it)" if calltrace.code_mentions({"keepdim"}) else ""
        return (f" (a list of one number where the number itself is asked: a tensor with an extra axis of size 1, "
                f"(B, 1) where (B,) is meant, turned into lists{kept}: drop that axis (no keepdim, x[:, 0] or "
                "squeeze(-1)) before .tolist())")
    if want is int and isinstance(value, float):
        from seqcourse import calltrace
        taken = calltrace.max_values_taken()
        if taken:
            return f" ({taken})"
    if want in (int, float) and isinstance(value, torch.Tensor):
        return " (convert a one-element tensor with .item())" if value.numel() == 1 else ""
    if want is torch.Tensor and isinstance(value, (int, float)) and not isinstance(value, bool):
        return " (keep the tensor: do not call .item() or float() on it)"
    if want is int and isinstance(value, float):
        return (" (count with integers: // instead of /, or int(...))" if float(value).is_integer() else
                " (a score where an index is meant? x.max(dim) returns (values, indices): the indices are its [1], "
                "or x.argmax(dim))")
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return " (float(...) it)"
    if want in (int, float) and type(value).__module__ == "numpy":
        return f" (convert it with {want.__name__}(...))"
    if want is torch.Tensor and isinstance(value, tuple) and len(value) == 2:
        return (" (a call that returns a pair kept whole: pad_packed_sequence returns (padded, lengths), nn.RNN / "
                "nn.GRU / nn.LSTM (outputs, state), an LSTM cell (h, c): unpack it where it is made, x, _ = ...)")
    if want is tuple and isinstance(value, torch.Tensor):
        return " (the docstring asks for several values: return them together, e.g. `return weights, contexts`)"
    if want is list and isinstance(value, (tuple, torch.Tensor)):
        return " (build a list, e.g. with .append or list(...))"
    if want in (int, float, str) and type(value) in (int, float, str) and type(value) is not want:
        from seqcourse import calltrace
        said = calltrace.named_slip(calltrace.slip_get_default(value, want))
        return f" ({said})" if said else ""
    return ""


def assert_type(value, expected, name: str = "output", *, of=None, ndim: int | None = None,
                dtype: torch.dtype | None = None, items: dict | None = None) -> None:
    """Fail unless ``value`` has exactly the type ``expected``.

    expected: a type (``int``, ``float``, ``bool``, ``str``, ``list``, ``tuple``, ``dict``, ``torch.Tensor``,
        ``None``) or its name (``"float"``, ``"tensor"``...). Exact: ``True`` is not an ``int``, a numpy
        ``float64`` is not a Python ``float``, a 0-dim tensor is not a number; for ``torch.Tensor``
        subclasses such as ``nn.Parameter`` count.
    of:    for a list/tuple, the exact type of every item (``of=float`` for a list of Python floats).
    ndim, dtype: for a tensor, the number of dimensions (``ndim=0``: a 0-dim tensor) and the dtype.
    items: for a tuple returned as several named tensors, ``{name: shape}`` in the asked order: the items returned
        in another order (their shapes are those of the asked items, permuted) are said so.
    """
    want = _type_of(expected)
    ok = isinstance(value, torch.Tensor) if want is torch.Tensor else type(value) is want
    if not ok:
        got = _what(value)
        if isinstance(value, torch.Tensor):
            got = f"a tensor of shape {_shape(value)}" if value.dim() else "a 0-dim tensor"
        hint = _type_hint(value, want)
        if want is int and isinstance(value, float):
            try:
                source = _float_source_hint(name, sys._getframe(1).f_globals)
            except Exception:  # noqa: BLE001 - a hint never hides the failure
                source = None
            hint = f"{hint}: {source}" if source else hint
        raise AssertionError(f"{name}: must be {_type_name(want)}, got {got}{hint}")
    if want is torch.Tensor:
        if ndim is not None and value.dim() != ndim:
            what = "a 0-dim tensor" if ndim == 0 else f"a {ndim}-dim tensor"
            hint = " (index it with [0] or squeeze it)" if ndim == 0 and value.numel() == 1 else ""
            if ndim and value.dim() > ndim and sorted(value.shape, reverse=True)[ndim:] == [1] * (value.dim() - ndim):
                hint = (" (its extra axes have size 1: keepdim=True in a sum, mean or norm, or an index or [:, None] "
                        "that keeps an axis? reduce without keepdim, or squeeze them)")
            raise AssertionError(f"{name}: must be {what}, got shape {_shape(value)}{hint}")
        if dtype is not None and value.dtype != dtype:
            both = value.dtype.is_floating_point and dtype.is_floating_point
            raise AssertionError(f"{name}: must have dtype {dtype}, got {value.dtype}" + (
                " (computed in another precision and not converted back: return it in the dtype of the inputs, "
                "e.g. .to(x.dtype) on the result)" if both else ""))
    if items and want in (list, tuple):
        _assert_item_order(value, items, name)
    if of is not None and want in (list, tuple):
        item = _type_of(of)
        for i, v in enumerate(value):
            if not (isinstance(v, torch.Tensor) if item is torch.Tensor else type(v) is item):
                raise AssertionError(f"{name}[{i}]: must be {_type_name(item)}, got {_what(v)}{_type_hint(v, item)}")


def _assert_item_order(value, items: dict, name: str) -> None:
    """Fail when the tensors of ``value`` have the shapes of ``items`` (``{name: shape}``, the asked order) in
    another order: the same items returned in another order. Other differences are left to the later checks."""
    got = [_shape(v) if isinstance(v, torch.Tensor) else None for v in value]
    want = [tuple(int(k) for k in s) for s in items.values()]
    names = list(items)
    if len(got) == len(want) and None in got:     # an item that is not a tensor: another structure (h, (h, c))
        k = got.index(None)
        kind = f"a {type(value[k]).__name__}" + (f" of {len(value[k])} items" if isinstance(value[k], (tuple, list))
                                                 else "")
        raise AssertionError(f"{name}: its item {k} (where {names[k]} belongs) is {kind}, where the tensor {names[k]} "
                             f"of shape {want[k]} is asked: return the {len(want)} tensors ({', '.join(names)}) "
                             "themselves, each one item" + (" (not nested in another tuple)" if isinstance(
                                 value[k], (tuple, list)) else ""))
    if len(got) != len(want) or None in got or got == want or len(set(want)) != len(want):
        return
    for perm in itertools.permutations(range(len(want))):
        if all(got[i] == want[perm[i]] for i in range(len(got))):
            raise AssertionError(f"{name}: your items have the shapes of ({', '.join(names[p] for p in perm)}), "
                                 f"in that order, where ({', '.join(names)}) is asked: return them in the order "
                                 "the docstring gives")


def _first_difference(a, e, path: str = ""):
    """``(path, got, expected)`` of the first place where plain data ``a`` and ``e`` differ, or None."""
    if isinstance(e, (list, tuple)) and isinstance(a, (list, tuple)):
        if type(a) is not type(e):
            return path, f"a {type(a).__name__}", f"a {type(e).__name__}"
        for i, (x, y) in enumerate(zip(a, e)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(e):
            return path, f"{len(a)} item{'s' * (len(a) != 1)}", f"{len(e)} item{'s' * (len(e) != 1)}"
        return None
    if isinstance(e, dict) and isinstance(a, dict):
        for k in e:
            if k not in a:
                return f"{path}[{k!r}]", "no such key", repr(e[k])
            d = _first_difference(a[k], e[k], f"{path}[{k!r}]")
            if d:
                return d
        extra = [k for k in a if k not in e]
        return (f"{path}[{extra[0]!r}]", repr(a[extra[0]]), "no such key") if extra else None
    if type(a) is not type(e) and not (isinstance(a, (int, float)) and isinstance(e, (int, float))
                                       and not isinstance(a, bool) and not isinstance(e, bool)):
        return path, f"{_what(a)} {a!r}"[:120], f"{_what(e)} {e!r}"[:120]
    if a != e:
        return path, repr(a)[:120], repr(e)[:120]
    return None


def assert_equal(actual, expected, name: str = "output") -> None:
    """Fail unless ``actual`` equals ``expected`` exactly: plain data (numbers, strings, None, and lists, tuples and
    dicts of them; a list is not a tuple, a 0-dim tensor is not an int). The message shows the first difference."""
    d = _first_difference(actual, expected)
    if d is None:
        return
    path, got, want = d
    short = lambda v: (r := repr(v)) if len(r := repr(v)) <= 200 else r[:200] + "..."  # noqa: E731
    detail = f"; first difference at {path}: {got} instead of {want}" if path else (
        f"; {got} instead of {want}" if (got, want) != (repr(actual)[:120], repr(expected)[:120]) else "")
    hint = (list_hint(actual, expected) or _edit_hint(actual, expected, name) or _located_difference(True)
            or _located_difference(False))
    raise AssertionError(f"{name}: got {short(actual)}, expected {short(expected)}{detail}" + (f"; {hint}" if hint else ""))

# ------------------------------------------------------------------------- inputs, gradients, weights
def assert_unchanged(after, before, name: str = "input") -> None:
    """Fail if a function wrote into its input: ``after`` (the input, after the call) must equal ``before``
    (a copy taken before the call): tensors, numbers or nested lists/tuples of them (compared exactly)."""
    if isinstance(before, torch.Tensor):
        if isinstance(after, torch.Tensor) and _shape(after) != _shape(before) and after.numel() == before.numel():
            raise AssertionError(f"{name} has shape {_shape(after)} after the call, {_shape(before)} before: your "
                                 "function changed its argument's shape in place (transpose_, t_, unsqueeze_, "
                                 "squeeze_, resize_ or .data = ...): use the out-of-place form, x = x.transpose(0, 1)")
        if not isinstance(after, torch.Tensor) or _shape(after) != _shape(before):
            raise AssertionError(f"{name} was replaced by {_what(after)} during the call (it was a tensor of shape "
                                 f"{_shape(before)}): your function must not change its arguments")
        a, b = _as_float64(after, name), _as_float64(before, name)
        bad = ~((a == b) | (torch.isnan(a) & torch.isnan(b)))
        if bad.any():
            idx = tuple(int(i) for i in bad.nonzero()[0])
            from seqcourse import calltrace
            argument = re.search(r"argument (\w+)$", name)
            written = calltrace.inplace_write(argument.group(1)) if argument else ""
            if written:
                raise AssertionError(
                    f"{name} was changed by your function: {int(bad.sum())} of {bad.numel()} entries differ after the "
                    f"call (first at index {idx}: {b[idx].item():.6g} before, {a[idx].item():.6g} after): {written}; "
                    "compute a new tensor instead (the out-of-place form, or on a .clone())")
            raise AssertionError(
                f"{name} was changed by your function: {int(bad.sum())} of {bad.numel()} entries differ after the "
                f"call (first at index {idx}: {b[idx].item():.6g} before, {a[idx].item():.6g} after); it writes into "
                "its input (an in-place operation such as x[...] = ..., +=, masked_fill_ or a view of x): compute a "
                "new tensor (out of place, or on x.clone())")
        return
    if after != before:
        raise AssertionError(f"{name} was changed by your function ({before!r} before the call, {after!r} after): "
                             "it changes its argument in place (append, +=, insert...); build a new list instead")


def assert_gradient(grad, expected, name: str = "gradient", *, atol: float = 1e-5, rtol: float = 1e-4,
                    mistakes: dict | None = None) -> None:
    """Fail unless a gradient that must flow (``grad``: a tensor's ``.grad``, possibly None) equals ``expected``.

    Checks in order: that a gradient arrived at all (None: the output was computed without the graph), that
    it is not zero where the expected one is not (the path through time was cut: ``.detach()``, ``.data``,
    ``torch.no_grad()``, or a tensor rebuilt from numbers), then its values, with :func:`assert_close`.
    """
    from seqcourse import calltrace
    e = _as_float64(expected, name)
    about = re.search(r"with respect to (?:the )?(\w+)", name)
    about = about.group(1) if about else None
    if grad is None:
        cut = calltrace.graph_cut(about)
        raise AssertionError(f"{name}: no gradient arrived (it is None): the result was computed outside the "
                             "autograd graph (torch.no_grad(), .detach(), .data, .item() or a tensor rebuilt from "
                             "numbers): keep every step a tensor operation on the inputs" + (f"; {cut}" if cut else ""))
    g = _as_float64(grad, name)
    if g.shape == e.shape and _nontrivial(e, atol) and not _nontrivial(g, atol):
        cut = calltrace.graph_cut(about)
        raise AssertionError(f"{name}: the gradient is zero, expected a largest entry of {e.abs().max().item():.4g}: "
                             "the path back to it is cut; a state detached between steps (.detach(), .data, "
                             "torch.no_grad()) stops the gradient from flowing back through time"
                             + (f"; {cut}" if cut else ""))
    assert_close(g, e, atol=atol, rtol=rtol, name=name, mistakes=mistakes)


def _nan_cause_said(made: str) -> bool:
    """Whether calltrace's words on where NaN is made (:func:`calltrace.first_nan`) say the cause."""
    from seqcourse import calltrace
    return any(w in made for w in ("holds -inf", "holds inf", "0 / 0 gives NaN", calltrace.INFINITY_PRODUCT,
                                   *pysource._RARE_FUNCTIONS.values()))


def assert_softmax(weights, name: str = "weights", *, dim: int = -1, mask=None, axes: tuple | None = None,
                   atol: float = 1e-5) -> None:
    """Fail unless ``weights`` are attention weights: no NaN, each slice along ``dim`` sums to 1 and, with a
    boolean ``mask`` (True at real positions, broadcastable to the weights), exactly 0 at masked positions.

    The checks come in the order that names the cause: NaN first (a softmax over entries that are all -inf),
    then the sums (another axis that sums to 1 means the softmax is over the wrong axis; rows that sum to
    less than 1 with zero weight on the padding mean the padding was zeroed after the softmax), then the
    masked positions. ``axes`` names the dimensions for the messages, e.g. ``("batch", "source positions")``.
    """
    w = _as_float64(weights, name)
    n = w.dim()
    if n == 0:
        raise AssertionError(f"{name}: expected a tensor of weights, got a single number")
    d = dim % n
    label = (lambda k: f"dimension {k} ({axes[k]})") if axes and len(axes) == n else (lambda k: f"dimension {k}")
    if torch.isnan(w).any():
        idx = tuple(int(i) for i in torch.isnan(w).nonzero()[0])
        from seqcourse import calltrace
        made = calltrace.first_nan()
        if _nan_cause_said(made):
            raise AssertionError(f"{name}: contains NaN (first at index {idx}): {made}")
        raise AssertionError(f"{name}: contains NaN (first at index {idx}): a softmax gives NaN over entries that are "
                             f"all -inf, or over entries of which one is +inf (a mask filled with float('inf') where "
                             f"float('-inf') is meant); take the softmax over {label(d)} and set -inf only where the "
                             f"mask is False" + (f" ({made})" if made else ""))
    ones = lambda t: bool(((t - 1).abs() <= atol * max(1, t.numel() ** 0.5)).all())  # noqa: E731
    sums = w.sum(dim=d)
    if not ones(sums):
        others = [k for k in range(n) if k != d and w.shape[k] > 1 and ones(w.sum(dim=k))]
        if others:
            raise AssertionError(f"{name}: the weights sum to 1 along {label(others[0])}, not along {label(d)}: the "
                                 f"softmax is taken over the wrong axis (use dim={dim})")
        if mask is not None:
            m = torch.as_tensor(mask).to("cpu").bool().expand_as(w)
            if bool((w[~m] == 0).all()) and bool((sums < 1 - atol).any()):
                raise AssertionError(f"{name}: the padded positions get 0 but the rows sum to less than 1 (e.g. "
                                     f"{sums.min().item():.4g}): the padding was zeroed after the softmax; set its "
                                     "energies to -inf BEFORE the softmax so that the real positions share all the weight")
        idx = tuple(int(i) for i in ((sums - 1).abs() > atol).nonzero()[0])
        raise AssertionError(f"{name}: each slice along {label(d)} must sum to 1, but the one at {idx} sums to "
                             f"{sums[idx].item():.6g} (is it a softmax?)")
    if mask is not None:
        m = torch.as_tensor(mask).to("cpu").bool().expand_as(w)
        leak = w[~m]
        if leak.numel() and bool((leak != 0).any()):
            has_pad = (~m).any(dim=d)
            if bool(((w * m).sum(dim=d)[has_pad] == 0).all()):
                raise AssertionError(f"{name}: all the weight is on the masked positions and none on the real ones: "
                                     "the mask is used the wrong way round (it is True at REAL positions)")
            raise AssertionError(f"{name}: masked (padded) positions get weight up to {leak.abs().max().item():.4g}; "
                                 "they must get exactly 0: set their energies to -inf before the softmax")


def order_mistakes(order: str, value: Callable[[str], Any],
                   describe: str = "read the blocks in the order {got} instead of {want}") -> dict:
    """``{description: value}`` for every other order of named blocks, for ``assert_close(mistakes=...)``.

    order: the names of the blocks in the order the exercise stacks them, e.g. ``"fiog"``.
    value: ``value(other)`` computes the result when the blocks are read in the order ``other`` (the block
    stacked at position j is taken for gate ``other[j]``), e.g. by giving a reference cell weights whose
    blocks are rearranged. Every permutation is covered, not only the famous ones.
    """
    out = {}
    for perm in itertools.permutations(order):
        other = "".join(perm)
        if other != order:
            out[describe.format(got=", ".join(other), want=", ".join(order))] = value(other)
    return out


def slot_mistakes(slots: str, value: Callable[[dict], Any], kinds: tuple = ("weights",), names: dict | None = None,
                  describe: str = "{Slot} uses {source}'s {kind} (a copy-paste slip: {source_key}'s {kind} where "
                                  "{slot_key}'s is needed)") -> dict:
    """``{description: value}`` for every slip where ONE slot takes another slot's tensor, for ``assert_close(mistakes=...)``.

    :func:`order_mistakes` covers the permutations; this covers the mappings that are not one: a slot used twice
    (the input gate computed with the forget gate's ``Wh``), a slot's weight from one block and its bias from
    another, one block of a stacked product added to the wrong gate.
    slots: the slot names in their order, e.g. ``"ifgo"``; kinds: the separate tensors of each slot, e.g.
    ``("Wx", "Wh", "b")`` (each kind is slipped on its own, then all of them together);
    value: ``value(mapping)`` with ``mapping[kind]`` a string as long as ``slots`` whose j-th letter names the slot
    whose tensor of that kind is used at slot ``slots[j]`` (``mapping[kind] == slots``: no slip);
    names: ``{slot: words}``, e.g. ``{"i": "the input gate"}``.
    """
    names = names or {}
    word = lambda k: names.get(k, f"slot {k}")  # noqa: E731
    out = {}
    for j, dst in enumerate(slots):
        for src in slots:
            if src == dst:
                continue
            for kind in (*kinds, " and ".join(kinds)) if len(kinds) > 1 else kinds:
                mapping = {k: slots for k in kinds}
                for k in kinds:
                    if k in kind.split(" and "):
                        mapping[k] = slots[:j] + src + slots[j + 1:]
                slot = word(dst)
                desc = describe.format(Slot=slot[:1].upper() + slot[1:], slot=slot, source=word(src), kind=kind,
                                       slot_key=dst, source_key=src)
                out[desc] = value(mapping)
    return out


ACTIVATIONS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu, "identity": lambda x: x,
               "sigmoid twice": lambda x: torch.sigmoid(torch.sigmoid(x)),
               "tanh twice": lambda x: torch.tanh(torch.tanh(x))}


def activation_mistakes(slots: dict, value: Callable[[dict], Any], names: dict | None = None) -> dict:
    """``{description: value}`` for every nonlinearity swapped for another, for ``assert_close(mistakes=...)``.

    slots: ``{slot: the activation it takes}`` with activations named as in :data:`ACTIVATIONS` (sigmoid, tanh,
    relu, identity; "tanh twice" is a slot's own tanh applied a second time, tried only where the slot takes tanh),
    e.g. ``{"r": "sigmoid", "z": "sigmoid", "n": "tanh"}``; value: ``value(acts)`` computes the
    result with ``acts[slot]`` the name of the activation used there (``ACTIVATIONS[name]`` is the function); it
    may return None where it cannot (e.g. nn.RNN has only tanh and relu). ``value`` may also be a table
    ``{(slot, activation): value}`` of values computed beforehand (literals in a visible test). names: ``{slot: words}``.
    """
    if isinstance(value, dict):
        table = value
        value = lambda acts: next((table.get((k, a)) for k, a in acts.items() if a != slots[k]), None)  # noqa: E731
    out = {}
    for slot, act in slots.items():
        for alt in ACTIVATIONS:
            if alt == act or (alt.endswith(" twice") and alt != f"{act} twice"):
                continue
            got = value({**slots, slot: alt})
            if got is None:
                continue
            where = (names or {}).get(slot, slot)
            how = (f"computed without its {act} (no nonlinearity)" if alt == "identity"
                   else f"computed with its {act} applied twice (a second {act} around a value that already has "
                        "one)" if alt.endswith(" twice")
                   else f"computed with {alt} where {act} is asked")
            out[f"{where[:1].upper() + where[1:]} {how}"] = got
    return out


def reduction_mistakes(parts: list, of: str = "part") -> dict:
    """``{description: value}`` for a norm of all ``parts`` together reduced another way: each part's norm, then
    their sum, mean or maximum; the sum of squares without the square root. ``of`` names a part in the message."""
    norms = torch.stack([torch.linalg.vector_norm(_as_float64(p, of)) for p in parts])
    squared_sums = sum(_as_float64(p, of).sum() ** 2 for p in parts)
    whole = "one norm over all the entries together is asked: sqrt of the sum of every squared entry"
    return {f"take each {of}'s norm and add them up ({whole})": norms.sum(),
            f"take each {of}'s norm and average them ({whole})": norms.mean(),
            f"take the largest norm of one {of} ({whole})": norms.max(),
            "forget the square root (the sum of squares is not the norm)": (norms ** 2).sum(),
            f"square each {of}'s SUM of entries (the square of a sum is not the sum of the squares: square every "
            "entry, then add)": torch.sqrt(squared_sums),
            f"add the squares of each {of}'s sum without the square root": squared_sums}


def assert_uses_argument(results: dict, argument: str, call: str = "your function", *, atol: float = 1e-6) -> None:
    """Fail when a function gives the same result for different values of one argument: it ignores it.

    results: ``{argument value: what the call returned with it}``, for two or more values that must give
    different results (e.g. two learning rates after a few steps of training).
    """
    items = list(results.items())
    if len(items) < 2:
        return

    def same(x, y):
        try:
            tx, ty = _as_float64(x, "result"), _as_float64(y, "result")
        except (AssertionError, TypeError, ValueError, RuntimeError):
            try:
                return bool(x == y)
            except Exception:  # noqa: BLE001 - values that cannot be compared (lists of tensors): not the same
                return False
        return _shape(tx) == _shape(ty) and _close(tx, ty, atol, 0.0)

    if not all(same(items[0][1], r) for _, r in items[1:]):
        return
    shown = " and ".join(f"{argument}={v!r}" for v, _ in items)
    try:
        first = _as_float64(items[0][1], "result")
        empty = first.numel() == 0 or bool((first == 0).all())
    except (AssertionError, TypeError, ValueError, RuntimeError):
        empty = items[0][1] in ([], (), None, "")
    if empty:
        raise AssertionError(f"{call} gives {'0' if items[0][1] is not None else 'None'} (or nothing) for {shown}: "
                             f"the result is empty or zero whatever {argument} is, so it cannot show whether "
                             f"{argument} is used; first find why it is zero (a factor that is 0: a False, an empty "
                             f"range or a count of 0 used in a product?)")
    read = _line_reading(call, argument, sys._getframe(1).f_globals)
    if read:
        result = repr(items[0][1])
        raise AssertionError(
            f"{call} gives the same result for {shown}" + (f" ({result})" if len(result) <= 100 else "") +
            f", though your {read[0]} reads {argument} (your line \"{read[1]}\"): the way that line uses it makes no "
            f"difference between these values; is {argument} compared with (or applied to) the quantity the docstring "
            "says, in the same units?")
    raise AssertionError(f"{call} gives the same result for {shown}: it ignores its {argument} argument (a value "
                         f"written in its place, a default or a global used instead of {argument}?)")


def _cell_function(dotted: str, namespace: dict):
    """The function that ``dotted`` ("build_vocab", "model.step") names in ``namespace`` if it was defined in a
    notebook cell; None otherwise (a name of the course package, PyTorch's, or no function)."""
    from seqcourse import calltrace

    obj = namespace.get(dotted.split(".")[0])
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
    if not isinstance(obj, types.FunctionType) or not calltrace._is_cell(obj.__code__.co_filename):
        return None
    return obj


def _notebook_function(call: str, namespace: dict) -> tuple | None:
    """``(function, its dedented source, its parse tree)`` of the notebook function that a check's text of a call
    names ("build_vocab(seqs)", "model.step(x)"), looked up in ``namespace`` (the globals of the cell that runs the
    check); None when the name is not a function defined in a notebook cell."""
    found = re.match(r"([A-Za-z_][\w.]*)\(", call)
    obj = _cell_function(found.group(1), namespace) if found else None
    if obj is None:
        return None
    try:
        source = textwrap.dedent(inspect.getsource(obj))
        return obj, source, ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None


def _line_reading(call: str, argument: str, namespace: dict) -> tuple[str, str] | None:
    """``(function name, its first line that reads argument)`` for the function a check's ``call`` text names
    ("build_vocab(seqs)"), looked up in the namespace of the cell that runs the check; None when it is not a
    function of the notebook or never reads the argument (it ignores it)."""
    found = _notebook_function(call, namespace)
    if found is None:
        return None
    obj, source, tree = found
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else tree.body
    lines = [n.lineno for stmt in body for n in ast.walk(stmt)
             if isinstance(n, ast.Name) and n.id == argument and isinstance(n.ctx, ast.Load)]
    return (obj.__name__, source.splitlines()[min(lines) - 1].strip()) if lines else None


def layer_settings(module, *keys: str) -> dict:
    """``{key: module.key}`` as plain data (for :func:`assert_configured`), e.g. ``layer_settings(model.rnn)``:
    the settings of PyTorch's recurrent layers by default."""
    keys = keys or ("nonlinearity", "bias", "num_layers", "bidirectional", "batch_first")
    out = {}
    for key in keys:
        value = getattr(module, key, None)
        out[key] = value if isinstance(value, (str, bool, int, float, type(None))) else repr(value)
    out["type"] = type(module).__name__
    return out


def layer_message(module, **want) -> str:
    """The message of a test that a model's layers are of the classes its docstring names, e.g. ``assert
    isinstance(model.rnn, nn.RNN) and isinstance(model.head, nn.Linear), layer_message(model, rnn=nn.RNN,
    head=nn.Linear)``: which attribute is of another class, what it is, and what that changes."""
    said = []
    for attr, cls in want.items():
        got = getattr(module, attr, None)
        if isinstance(got, cls):
            continue
        asked = f"nn.{cls.__name__}" if cls.__module__.startswith("torch.nn") else cls.__name__
        if got is None:
            said.append(f"self.{attr} is not set: build it in __init__, self.{attr} = {asked}(...)")
            continue
        kind = type(got).__name__
        what = (f"an nn.Sequential of {', '.join(type(m).__name__ for m in got)}" if isinstance(got, torch.nn.Sequential)
                else f"an nn.{kind}" if type(got).__module__.startswith("torch.nn") else f"a {kind}")
        note = ""
        if kind == cls.__name__ + "Cell":
            note = (f" (a cell computes ONE step and you loop over time yourself; {asked} runs the whole sequence "
                    "in one call, and the tests read its parameters and outputs as it names them)")
        elif cls is torch.nn.Linear and isinstance(got, torch.nn.Sequential):
            note = " (one linear layer: no hidden layer or activation in it, the docstring's equation has none)"
        elif kind in ("RNN", "GRU", "LSTM") and cls.__name__ in ("RNN", "GRU", "LSTM"):
            note = (f" (the state and the parameters of an nn.{kind} are not those of {asked}: an nn.LSTM's state "
                    "is the pair (h, c), a GRU's and an RNN's one tensor)")
        said.append(f"self.{attr} is {what}, where the docstring asks for {asked}{note}")
    return "; ".join(said) or "the layers are not those the docstring names: " + ", ".join(
        f"self.{a} = nn.{c.__name__}(...)" for a, c in want.items())


def assert_configured(settings: dict, name: str, **want) -> None:
    """Fail when a layer the student builds has another setting than the docstring asks, e.g.
    ``assert_configured(layer_settings(model.rnn), "self.rnn", nonlinearity="tanh", bias=True, num_layers=1)``:
    the message names the setting, so that a wrong option is not reported as "the values differ".
    settings: plain data ``{setting: value}`` (see :func:`layer_settings`)."""
    if not isinstance(settings, dict):
        raise AssertionError(f"{name}: expected the settings of a layer, got {_what(settings)}")
    for key, value in want.items():
        got = settings.get(key)
        if got != value:
            raise AssertionError(f"{name} is built with {key}={got!r}, but the docstring asks for {key}={value!r} "
                                 f"(pass {key}={value!r} to {settings.get('type', 'the layer')}, or leave it out where "
                                 "it is the default)")


def term_mistakes(terms: dict, factors: dict) -> dict:
    """``{description: value}`` for a total ``sum(terms.values())`` where ONE term is counted wrongly: left out,
    or ``factors[name]`` times too often or too rarely (e.g. once per batch instead of once per sentence: ``B``
    times too rarely), or where the whole count is off by one of the factors, for ``assert_close(mistakes=...)``
    on counts. terms: ``{words: the term's value in the total}``; factors: ``{name: value}`` of the sizes a term
    is multiplied by (B, Ty, Tx...). Slips that give the same count are named together."""
    total = sum(terms.values())
    merged: dict = {}
    for name, f in factors.items():   # sizes of equal value cannot be told apart: named together ("B=R=2")
        merged.setdefault(f, []).append(name)
    factors = {"=".join(names): f for f, names in merged.items()}
    per = lambda name: "sentence (of the B)" if name == "B" else f"{name}"  # noqa: E731
    out = {}
    for term, value in terms.items():
        out[f"leave out {term} ({value} of the {total})"] = total - value
        for name, f in factors.items():
            if f in (0, 1):
                continue
            out[f"count {term} {name}={f} times too often ({value * f} instead of {value}: multiplied by {name} "
                f"where it is not)"] = total - value + value * f
            if value % f == 0:
                out[f"count {term} {name}={f} times too rarely ({value // f} instead of {value}: counted once where "
                    f"it is needed once per {per(name)})"] = total - value + value // f
    for name, f in factors.items():
        if f not in (0, 1):
            out[f"count everything {name}={f} times too often (multiplied by {name} once too many)"] = total * f
            if total % f == 0:
                out[f"count everything {name}={f} times too rarely (the count for one {per(name)}: multiply by "
                    f"{name})"] = total // f
    by_value: dict = {}
    for desc, value in out.items():   # two slips that give the same count are named together
        by_value.setdefault(value, []).append(desc)
    return {", or ".join(descs): value for value, descs in by_value.items() if value != total}

def list_hint(got, want, count: str | None = None) -> str:
    """How list ``got`` differs from ``want`` as a whole (reversed, reordered, extra or missing items), or "".
    ``count`` names what sets the expected length, e.g. ``"beam_size=3"``."""
    if not isinstance(got, (list, tuple)) or not isinstance(want, (list, tuple)) or list(got) == list(want):
        return ""
    key = lambda v: repr(v)  # noqa: E731
    g, w = sorted(map(key, got)), sorted(map(key, want))
    if g == w:
        if list(got) == list(want)[::-1]:
            return "the same items in reverse order (sorted the wrong way round, or not sorted at all? best first is asked)"
        rowish = all(isinstance(r, (list, tuple)) for r in want)
        longest = sorted(want, key=lambda r: sum(1 for v in r if v), reverse=True) if rowish else None
        if rowish and len(want) > 2 and list(got) == list(longest):
            return ("the same rows sorted longest first: the rows must stay in the order they were given (sort only "
                    "where packing asks for it, and then put them back)")
        try:
            ordered = [sorted(want), sorted(want, reverse=True)] if not rowish and len(want) > 2 else []
        except TypeError:
            ordered = []
        if list(got) in ordered:
            return "the same items, sorted: keep the order in which they were given"
        moved = _moved_item(list(got), list(want))
        if moved:
            return moved
        return "the same items in another order (the order is part of the answer: check how you sort them)"
    rows = lambda v: all(isinstance(r, (list, tuple)) for r in v)  # noqa: E731
    if rows(got) and rows(want) and want and len({len(r) for r in want}) == 1:
        if [list(r) for r in got] == [list(c) for c in zip(*want)]:
            return ("your lists are the expected ones transposed: one list per step where one list per sentence is "
                    "asked (stack the steps along dim=1, or collect each sentence's tokens)")
    if rows(got) and rows(want) and len(got) == len(want) and any(len(g) > len(w) for g, w in zip(got, want)) \
            and all(list(g[:len(w)]) == list(w) for g, w in zip(got, want)):
        return ("each of your lists starts with the expected items but some go on after them: stop where the "
                "docstring says (at the first <eos>, which is not kept) and drop what follows")
    left = _left_aligned(got, want) if rows(got) and rows(want) and len(got) == len(want) else ""
    if left:
        return left
    ends = _list_ends(got, want, rows(got) and rows(want) and len(got) == len(want))
    if ends:
        return ends
    repeated = _list_repeats(got, want, rows(got) and rows(want) and len(got) == len(want))
    if repeated:
        return repeated
    rest = list(map(key, got))
    if len(got) > len(want) and all(rest.count(x) >= w.count(x) for x in set(w)):
        return (f"{len(got)} items where {len(want)} are expected; the expected ones are among yours: "
                + (f"keep only {count}" if count else "keep only those asked"))
    if len(got) < len(want) and all(w.count(x) >= rest.count(x) for x in set(rest)):
        return f"only {len(got)} of the {len(want)} expected items (stopped too early, or some dropped?)"
    if len(got) == len(want) > 1 and len(set(rest)) == 1 and len(set(map(key, want))) > 1:
        which = next((i for i, x in enumerate(map(key, want)) if x == rest[0]), None)
        return ("every item is the same" + (f", item {which}'s" if which is not None else "") + ": one value used "
                "for every row of the batch (an argmax or max without dim=, an index that is not per row, or one "
                "row broadcast over the others?), or ONE list shared by every row ([[]] * B makes B references to "
                "one list, so an append to one row appends to all: [[] for _ in range(B)])")
    return ""


def _left_aligned(got: list, want: list) -> str:
    """Every row holds the expected items, but the padding comes before them instead of after (left padding where
    right padding is asked); "" otherwise."""
    pads = {w[-1] for g, w in zip(got, want) if list(g) != list(w) and len(w)}
    if len(pads) != 1:
        return ""
    pad = pads.pop()
    for g, w in zip(got, want):
        content = list(w)
        while content and content[-1] == pad:
            content.pop()
        if len(g) != len(w) or list(g) != [pad] * (len(w) - len(content)) + content:
            return ""
    return (f"each row holds its items, but the padding ({pad!r}) comes BEFORE them: the items must start at "
            f"position 0 and the padding fill the end of the row (write row b into [:length], not the last length "
            f"positions)")


def _moved_item(got: list, want: list) -> str:
    """One item of ``want`` taken out and put back elsewhere in ``got`` (an item appended where it is prepended, or
    the reverse): which item, and where it is and should be; "" otherwise."""
    for i in range(len(want)):
        rest = want[:i] + want[i + 1:]
        for j in range(len(want)):
            if j != i and rest[:j] + [want[i]] + rest[j:] == got:
                where = ("at the end" if j == len(want) - 1 else "at the start" if j == 0 else f"at position {j}")
                should = ("at the start" if i == 0 else "at the end" if i == len(want) - 1 else f"at position {i}")
                return (f"the item {want[i]!r} is {where} of your list where it belongs {should}, the other items "
                        f"in order (appended where it is put in front, or the other way round?)")
    return ""


def _differing_lists(got, want, per_row: bool) -> list:
    """The (yours, expected) pairs of token lists that differ: each row's (``per_row``), or the two lists themselves;
    [] when the two are lists of lists of other lengths (their items are not tokens)."""
    if not per_row and any(isinstance(v, (list, tuple)) for v in list(got) + list(want)):
        return []
    return [(list(g), list(w)) for g, w in (zip(got, want) if per_row else [(got, want)]) if list(g) != list(w)]


def _list_repeats(got, want, per_row: bool) -> str:
    """One item put in several times more (or fewer) than expected, in the middle of the list(s), all else in place:
    a step written inside a loop where it belongs once (an <eos> appended after every token), or the reverse; ""
    otherwise."""
    import difflib

    pairs = _differing_lists(got, want, per_row)
    if not pairs:
        return ""
    extra, missing, short = [], [], 0
    for g, w in pairs:
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=list(map(repr, w)), b=list(map(repr, g)),
                                                          autojunk=False).get_opcodes():
            if tag == "insert":
                extra += [repr(x) for x in g[j1:j2]]
            elif tag == "delete":
                missing += [repr(x) for x in w[i1:i2]]
                short += i2 == len(w)
            elif tag == "replace":
                return ""
    if missing and not extra and len(set(missing)) == 1 and len(missing) >= 2 and all(
            missing[0] not in map(repr, g) for g, _ in pairs):   # one value left out wherever it comes
        return (f"the item {missing[0]} is missing {len(missing)} times and never in your list"
                f"{'s' if per_row else ''}, the other items are in place: that value is left out (a condition that "
                "skips it, a lookup that drops it?)")
    if missing and not extra and short == len(pairs):
        n = sum(len(w) - len(g) for g, w in pairs)
        return (f"{'some of your lists stop' if per_row else 'your list stops'} before the end ({n} item"
                f"{'s' * (n != 1)} missing at the end{'s' if per_row else ''}, the rest in place): the loop was left "
                "too early (a break where continue is meant, a condition that stops every row when one is done, "
                "or a range that ends too soon?), or a slice ends too early")
    if extra and not missing and len(set(extra)) == 1 and len(extra) >= 2:
        return (f"the item {extra[0]} is in your list{'s' if per_row else ''} {len(extra)} times more than expected, "
                "between the expected items: a step written inside a loop where it belongs once (before or after "
                "the loop?)")
    if missing and not extra and len(set(missing)) == 1 and len(missing) >= 2:
        return (f"the item {missing[0]} is missing {len(missing)} times, the other items are in place: a step "
                "skipped in some iterations (a condition, continue or break in the wrong place?)")
    return ""


def _list_ends(got, want, per_row: bool) -> str:
    """The same item too many or missing at the same end of every list (``per_row``: of every row of a list of
    lists): a start token kept, a loop that starts or stops one step off; "" otherwise."""
    def ends(g, w):
        """{kind: the item} of every kind of end slip that explains this row (one row may fit two)."""
        out = {}
        if len(g) == len(w) + 1 and g[1:] == w:
            out["extra first"] = repr(g[0])
        if len(g) + 1 == len(w) and g == w[1:]:
            out["missing first"] = repr(w[0])
        if len(g) + 1 == len(w) and g == w[:-1]:
            out["missing last"] = repr(w[-1])
        return out
    rows = [ends(g, w) for g, w in _differing_lists(got, want, per_row)]   # g, w: lists already
    kinds = set.intersection(*(set(r) for r in rows)) if rows else set()
    if not kinds:
        return ""
    kind = sorted(kinds)[0]
    found = {r[kind] for r in rows}
    item = sorted(found)[0]
    each = " in each list" if per_row and len(rows) > 1 else ""
    if kind == "extra first":
        same = len(found) == 1
        return (f"an extra first item{' ' + item if same else ''}{each}, before the expected ones: a start token "
                "kept (it is fed to the model, it is not part of the output), or a loop that starts one step early?")
    if kind == "missing first":
        return (f"the first expected item is missing{each}: a loop that starts one step late, or a slice [1:] "
                "too many?")
    return (f"the last expected item is missing{each}: a loop or range that stops one step early, a slice that ends "
            "one item early (x[:k - 1] for x[:k]), or the last step not kept?")


def results_when(fn: Callable, cases: dict) -> dict:
    """``{description: fn(*args)}`` for each ``{description: args}`` (no gradients; a case whose call raises is left
    out). In a visible test, ``fn`` is the student's OWN function and ``args`` its inputs with one of them changed
    or transformed: the values for :func:`assert_close`'s ``unchanged_when`` and ``inverse`` (plain data), with no
    reference code in sight."""
    out = {}
    for desc, args in cases.items():
        try:
            with torch.no_grad():
                out[desc] = fn(*args)
        except Exception:  # noqa: BLE001 - a case the student's code cannot run is no evidence either way
            continue
    return out


def with_settings(module: torch.nn.Module, layer: str, **settings) -> torch.nn.Module:
    """A deep copy of ``module`` whose sub-layer ``layer`` (a name for ``get_submodule``) has the attributes
    ``settings``, e.g. ``with_settings(model, "rnn", batch_first=True)``: the student's own model with one layer
    setting changed, to compute an ``inverse`` value for :func:`assert_close` (a setting the docstring asks for,
    left out, where another correct answer may build the layer otherwise)."""
    def change(target):
        for key, value in settings.items():
            setattr(target, key, value)

    return _changed_copy(module, layer, change)


def _changed_copy(module: torch.nn.Module, layer: str, change: Callable) -> torch.nn.Module:
    """A deep copy of ``module`` after ``change(its sub-layer layer)`` (no gradients): the student's own model with
    one layer changed, for :func:`with_settings`, :func:`input_orders` and :func:`layers_changed`."""
    import copy

    other = copy.deepcopy(module)
    with torch.no_grad():
        change(other.get_submodule(layer))
    return other


def setting_fixes(model: torch.nn.Module, call: Callable, layers: tuple, **want) -> dict:
    """``{"self.<layer> is built with key=value ...": call(the model with that setting)}`` for each of the
    ``layers`` (names of sub-layers) whose setting differs from ``want`` (each layer alone, then all of them
    together): the student's OWN model with the setting the docstring asks for, as :func:`assert_close`'s
    ``inverse`` values, e.g. ``setting_fixes(model, lambda m: m(x), ("rnn",), batch_first=True)``. Unlike
    :func:`assert_configured`, it names the setting only when the values are wrong (another correct answer may
    build the layer otherwise, e.g. time first with the input transposed)."""
    cases, wrong = {}, []
    for layer in layers:
        target = model.get_submodule(layer)
        diff = {k: v for k, v in want.items() if getattr(target, k, v) != v}
        if diff:
            wrong.append((layer, diff))
            said = ", ".join(f"{k}={v!r}" for k, v in diff.items())
            cases[f"self.{layer} is built with {said}: pass {said} to {type(target).__name__} (the docstring asks "
                  "for it)"] = (with_settings(model, layer, **diff),)
    if len(wrong) > 1:
        both = model
        for layer, diff in wrong:
            both = with_settings(both, layer, **diff)
        said = " and ".join(f"self.{layer} with " + ", ".join(f"{k}={v!r}" for k, v in diff.items())
                            for layer, diff in wrong)
        cases[f"{said}: pass them to the layers (the docstring asks for them)"] = (both,)
    return results_when(call, cases)


def input_orders(model: torch.nn.Module, call: Callable, layer: str, parts: list, weight: str = "weight") -> dict:
    """``{"you give self.<layer> [b; a] ...": call(copy)}`` for every other order of the ``parts`` concatenated into
    the input of ``model``'s sub-layer ``layer``: ``copy`` is the student's OWN model whose ``layer.<weight>`` has
    its input columns rearranged so that code concatenating the parts in that order gives the right result, as
    :func:`assert_close`'s ``inverse`` values, e.g. ``input_orders(enc, lambda m: m(src)[1], "fc", [("h_left", H),
    ("h_right", H)])``. A concatenation in the wrong order is no shape error when the sizes add up the same.
    parts: ``[(name, size), ...]`` in the order the docstring gives."""
    names, sizes = [n for n, _ in parts], [int(s) for _, s in parts]
    columns = getattr(model.get_submodule(layer), weight).detach()
    if columns.dim() != 2 or columns.shape[1] != sum(sizes):
        return {}
    blocks = dict(zip(names, columns.split(sizes, dim=1)))
    cases = {}
    for perm in itertools.permutations(names):
        if list(perm) == names:
            continue
        other = _changed_copy(model, layer, lambda target, perm=perm: getattr(target, weight).copy_(
            torch.cat([blocks[n] for n in perm], dim=1)))
        cases[f"self.{layer}'s weight is rearranged for the input [{'; '.join(perm)}]: you give self.{layer} "
              f"[{'; '.join(perm)}], concatenate [{'; '.join(names)}] (the order the docstring gives)"] = (other,)
    return results_when(call, cases)


def layers_changed(model: torch.nn.Module, call: Callable, layers: tuple, owner: str = "self") -> dict:
    """``{"the weights of self.<layer> are replaced by other numbers": call(copy)}`` for each of the ``layers``
    (names of sub-layers): ``copy`` is the student's OWN model with that layer's parameters shifted, as
    :func:`assert_close`'s ``unchanged_when`` values: a result that stays the same ignores the layer (another
    layer of the same shape used in its place, a copy-paste slip, is no shape error). Give only layers the checked
    value depends on. ``owner`` names the model in the message (``"model"`` where a function is given it)."""
    def shift(target):
        for p in target.parameters():
            p.add_(torch.linspace(0.2, 0.7, p.numel(), dtype=p.dtype).reshape(p.shape))

    return results_when(call, {f"the weights of {owner}.{layer} are replaced by other numbers":
                               (_changed_copy(model, layer, shift),) for layer in layers})


def transpose_blocks(stacked: torch.Tensor, k: int, which=None) -> torch.Tensor:
    """``stacked`` (k*H, H): k square blocks stacked along dimension 0, with the blocks ``which`` (indices; all by
    default) transposed: the weight on which code that forgets a ``.T`` gives the right result."""
    blocks = list(stacked.detach().chunk(k, dim=0))
    for j in (range(k) if which is None else which):
        blocks[j] = blocks[j].T
    return torch.cat(blocks, dim=0)


def rearrange_blocks(stacked: torch.Tensor, order: str, read_as: str, dim: int = 0) -> torch.Tensor:
    """The blocks of ``stacked`` (stacked along ``dim`` in ``order``) rearranged so that code which reads them
    correctly gets what code reading them as ``read_as`` would get: block k of the result is the block that
    such code takes for gate ``order[k]``. With :func:`order_mistakes`, a reference cell fed these weights gives
    the values of a cell that reads the gates in another order."""
    blocks = stacked.chunk(len(order), dim=dim)
    return torch.cat([blocks[read_as.index(g)] for g in order], dim=dim)


def check_input(module: torch.nn.Module, caller: str, parts: list, sizes: dict | None = None):
    """Check what ``caller`` (a later part) passes to ``module`` (an earlier part's layer) where it is made, so
    that a wrong intermediate is reported in the caller, not as a size error inside the earlier part's code.

    parts: ``[(name, symbol, size), ...]``: the input's features are these parts concatenated, e.g.
    ``[("weighted_encoder", "De", 6), ("embedded", "E", 3)]``. sizes: ``{description: size}`` of other axes
    (``{"Tx, the number of source positions": 5}``): when one part, the others being right, has one of these
    sizes, the message says so (reduced over the wrong axis?; a description ``"what -- why"`` gives its own
    reason). Returns the hook's handle (``.remove()``)."""
    want = sum(int(s) for _, _, s in parts)

    def hook(_module, args, kwargs):
        if args:
            x = args[0]
        else:   # called with keywords (self.lstm_cell(x=..., state=...)): the forward's first parameter
            first = next(iter(inspect.signature(_module.forward).parameters), None)
            x = kwargs.get(first) if first is not None else None
        if isinstance(x, torch.Tensor) and x.dim() == 2 and x.shape[-1] == want:
            return None
        got = _shape(x) if isinstance(x, torch.Tensor) else _what(x)
        names = "; ".join(n for n, _, _ in parts)
        symbols = " + ".join(s for _, s, _ in parts)
        numbers = " + ".join(str(int(n)) for _, _, n in parts)
        msg = (f"{caller} passes its {type(_module).__name__} an input of shape {got}; it must be [{names}] = "
               f"(B, {symbols}) = (B, {numbers}) = (B, {want})")
        if isinstance(x, torch.Tensor) and x.dim() == 2:
            for name, symbol, size in parts:
                mine = int(x.shape[-1]) - (want - int(size))
                named = [d for d, s in (sizes or {}).items() if int(s) == mine and mine != int(size)]
                if named:   # a description "what -- why" gives its own reason
                    what, _, why = named[0].partition(" -- ")
                    msg += (f": if the other parts are right, your {name} has {mine} features, the size of "
                            f"{what}, instead of {symbol} = {size} ({why or 'summed or averaged over the wrong axis?'})")
                    break
        raise AssertionError(msg)

    return module.register_forward_pre_hook(hook, with_kwargs=True)


def check_passes(module: torch.nn.Module, caller: str, argument: str, why: str = ""):
    """Check, where it is made, that ``caller`` (a later part) passes ``argument`` on to ``module`` (an earlier
    part's layer), e.g. ``check_passes(dec.attention, "AttnDecoderRNN", "mask")``: a later part that calls a correct
    earlier part without an optional argument (``mask=None``) is named in the later part, not reported as the
    earlier part's rule broken ("masked positions must get weight 0"). Register it only where the test gives
    the caller that argument. ``why``: what the argument does, said in the message. Returns the hook's handle."""
    def hook(_module, args, kwargs):
        try:
            bound = inspect.signature(_module.forward).bind(*args, **kwargs)
        except TypeError:          # a call that does not fit: the layer raises its own error
            return None
        if bound.arguments.get(argument) is None:
            raise AssertionError(
                f"{caller} calls its {type(_module).__name__} without {argument} ({argument} is None inside it, "
                f"although {caller} was given one): pass {argument} on to it"
                + (f" ({why})" if why else ""))
        return None

    return module.register_forward_pre_hook(hook, with_kwargs=True)


# ------------------------------------------------------------------------------- errors in one line
# errors whose one-line hint is the cause itself: an edit of the reference that raises the same error elsewhere
# would name a wrong line (trial 22l: ch04-h04e, ch07-h07c)
_FLOAT_SIZE = ("a size or count computed with / is a float (8 / 4 is 2.0): sizes and counts take // (integer "
               "division, 8 // 4 is 2) or int(...)")
_SELF_EXPLAINED = (
    ("must be tuple of ints, not float", _FLOAT_SIZE),
    ("must be int, not float", _FLOAT_SIZE),
    ("'float' object has no attribute 'item'", "the value is already a Python number (the function that gave it "
     "returns loss.item(), not a tensor): use it as it is; .item() turns a one-element TENSOR into a number"),
    ("'NoneType' object has no attribute 'mul_'", "a value is None: a parameter's .grad is None when no gradient "
     "reached it (a layer the loss does not use): skip those (`if p.grad is not None`) wherever you read .grad"),
    ("'NoneType' object has no attribute 'zero_'", "a parameter's .grad is None until its first backward(): "
     "clear gradients with optimizer.zero_grad() (or model.zero_grad()), or skip a None .grad"),
    ("'Parameter' object is not callable", "a parameter is a tensor of weights, not a layer: multiply by it "
     "(x @ self.v); an nn.Linear is what is called (self.W(x))"),
    ("cannot access local variable", "the variable is given a value only on some paths (an if/elif without the case "
     "this call takes, or a loop that ran zero times) or only after this line: give it a value on every path"),
)
_DOUBLE_FLOAT = ("a float64 (double) tensor and a float32 one in one product: PyTorch does not mix them there; a "
                 "tensor made in float64 (dtype=torch.float64, .double(), torch.from_numpy of a NumPy array) meets the "
                 "float32 ones: keep one dtype, converting where it is made (.to(other.dtype), or .float())")

# errors whose cause the line that raised them names: (part of the message, a pattern of that line, the hint)
_LINE_HINTS = (
    ("Cannot access accelerator device", r"Generator\(", "torch.Generator(...)'s argument is a DEVICE ('cpu'), not "
     "a seed: make the generator with torch.Generator() and seed it with .manual_seed(seed) (torch.Generator()"
     ".manual_seed(seed) does both)"),
    ("object is not iterable", r"\.extend\(|\+=", "a_list.extend(x) and a_list += x add the ITEMS of x, so x must be "
     "a list (or another iterable): one value is added with a_list.append(x) (or a_list += [x])"),
    ("'Tensor' object is not callable", r"\.step\(\s*\w", "optimizer.step() takes no loss: its one optional "
     "argument is a closure, a FUNCTION that computes the loss again, and it calls it; call loss.backward() first, "
     "then optimizer.step() with no argument"),
    ("Boolean value of Tensor with more than one value is ambiguous", r"\b(if|while)\s+(not\s+)?[A-Za-z_]\w*\s*:",
     "`if x:` or `if not x:` asks whether a tensor of several values is true: to test whether an optional argument "
     "was given, write `if x is None:` (or `is not None`)"),
    ("Can't call numpy() on Tensor that requires grad", r"\bnp\.\w+\(", "a NumPy function (np.tanh, np.exp, ...) "
     "turns the tensor into a NumPy array, outside autograd, so no gradient flows through it: use the torch "
     "function of the same name (torch.tanh, torch.exp, ...)"),
    ("Expected total_length to be at least", r"total_length\s*=\s*[\w.]+(\.shape\[0\]|\.size\(0\))",
     "total_length is the number of time steps the padded result must have (T of the input, its axis 1 when "
     "batch-first: src.shape[1]); shape[0] / size(0) of a batch-first tensor is the batch size B"),
    ("Boolean value of Tensor with more than one value is ambiguous", r"\bif\s+(not\s+)?[\w.\[\]]*\.grad\b(?!\s+is)",
     "`if p.grad` asks whether a tensor of several values is true: to skip a parameter that has no gradient, ask "
     "`if p.grad is not None`"),
    ("takes 1 positional argument but 2 were given", r"\bnn\.[A-Z]\w*\(", "nn.Sigmoid, nn.Tanh, nn.ReLU, nn.Softmax "
     "(capitalised) are layer CLASSES: calling the class builds a layer, and its arguments are options, not the "
     "input; apply the function instead, torch.sigmoid(x) / torch.tanh(x) / torch.relu(x), or build the layer once "
     "and call it, nn.Sigmoid()(x)"),
    ("mat1 and mat2 shapes cannot be multiplied", r"linear\([^(),]+,\s*[^(),]+?(\.T\b|\.mT\b|\.t\(|\.transpose\()",
     "F.linear(x, W, b) computes x @ W.T + b: it transposes W itself, so a W stored (out features, in features), as "
     "in nn.Linear and as the docstring's x @ W.T reads it, goes in as it is: F.linear(x, W, b), no .T"),
)

_ERROR_HINTS = _SELF_EXPLAINED + (
    ("cannot assign module before Module.__init__() call", "super().__init__() must run first in __init__, before "
     "any layer is assigned to self: it makes the lists a module keeps its layers and parameters in; write it with "
     "empty parentheses (or super(ClassName, self)): super(ClassName) alone, without self, initialises nothing"),
    ("size mismatch (got input: [", "the loss was given scores of ONE axis (the classes of one example: its batch "
     "axis is gone) and targets with a batch axis; backward() then fails: a .squeeze() with no axis drops every axis "
     "of size 1, the batch axis too when B = 1 -- squeeze only the axis meant (.squeeze(-1)), or keep the scores "
     "(B, C) as the model returns them"),
    ("must be Tensor, not tuple", "a tuple where a tensor is asked: nn.RNN, nn.GRU and nn.LSTM return a pair "
     "(outputs, state), pad_packed_sequence (padded, lengths), a cell of an LSTM (h, c): unpack it where it is "
     "made, e.g. `outputs, _ = self.rnn(x)`"),
    ("Unknown nonlinearity", "nn.RNN's positional arguments are (input_size, hidden_size, num_layers, nonlinearity, "
     "bias, batch_first, ...): a fourth positional argument is the nonlinearity ('tanh' or 'relu'), so options "
     "given by position land in other slots: pass them by name, nn.RNN(input_size, hidden_size, batch_first=True)"),
    ("double != float", _DOUBLE_FLOAT), ("float != double", _DOUBLE_FLOAT), ("Double and Float", _DOUBLE_FLOAT),
    ("Float and Double", _DOUBLE_FLOAT), ("scalar type Double but found Float", _DOUBLE_FLOAT),
    ("scalar type Float but found Double", _DOUBLE_FLOAT),
    ("~ (operator.invert) is only implemented on integer and Boolean-type tensors", "~ negates a bool mask only: "
     "this tensor holds floats (a mask of 0.0/1.0, or scores); build the mask as bool (a comparison such as "
     "torch.arange(T)[None, :] < lengths[:, None], or .bool()), or use 1 - mask for numbers"),
    ("hx should also be 3-D but got 2-D tensor", "nn.RNN / nn.GRU / nn.LSTM take their initial state as "
     "(num_layers * num_directions, B, H), with batch_first or not: a (B, H) state needs h[None] (unsqueeze(0)); a "
     "cell (nn.GRUCell, nn.LSTMCell) is what takes (B, H)"),
    ("Expected floating point type for target with class probabilities", "F.cross_entropy took the targets as "
     "class probabilities because the scores have the targets' shape: scores (N, C) go with class ids (N,), so the "
     "scores have lost their class axis (an index such as [:, -1] that took it away, or the wrong tensor?)"),
    ("in argument 0, but got tuple", "the list given to torch.stack / torch.cat holds tuples, not tensors (a state "
     "pair (h, c) appended whole?): append the one tensor you mean (h), or stack each part of the pairs apart"),
    ("masked_fill() received an invalid combination of arguments - got (float, Tensor)", "masked_fill takes the "
     "mask first and the value second: x.masked_fill(mask, value), e.g. scores.masked_fill(~mask, float('-inf'))"),
    ("t() expects a tensor with <= 2 dimensions", ".t() swaps the two axes of a matrix only; for a batch of "
     "matrices (B, T, H) swap the last two axes with .transpose(1, 2) (or .mT), keeping the batch axis first"),
    ("mat1 and mat2 shapes cannot be multiplied", "a matrix product whose inner sizes differ: a .T missing or one "
     "too many, or the wrong matrix?"),
    ("must match the size of tensor b", "two shapes that do not broadcast: print the shapes on that line (a (B, T) "
     "mask needs [..., None] to act on (B, T, F) values, a (B, H) state needs [:, None] to meet (B, T, H))"),
    ("Dimension out of range", "an axis the tensor does not have: print its .shape"),
    ("must have same number of dimensions", "tensors with different numbers of axes: print their shapes (an axis "
     "indexed away or never added, a matrix product that broadcast a batch against itself, or a .squeeze() that "
     "also removed the batch axis of a batch of one?)"),
    ("NoneType", "a value is None: the result of a method that works in place and returns None (list.sort(), "
     "list.append(), list.reverse(), dict.update(): use sorted(x) or call it on its own line, then use the list), "
     "an argument that may be None (does the docstring allow mask=None or lengths=None?), or a function of yours "
     "that ends without `return`"),
    ("does not require grad and does not have a grad_fn", "the result was cut from the graph (torch.no_grad(), "
     ".detach(), .item()): keep it a tensor computed from the inputs"),
    ("modified by an inplace operation", "an in-place operation (x[...] = ..., +=, masked_fill_) changed a tensor "
     "autograd still needs: compute a new tensor instead"),
    ("Expected hidden", "the state has the wrong shape for the cell or LSTM: (B, H) for a cell, (1, B, H) for "
     "nn.LSTM (did a .squeeze() also remove the batch axis of a batch of one?)"),
    ("doesn't match hidden", "the input and the state have different batch sizes, so one of the two is wrong: step "
     "t of a batch-first x is x[:, t] (x[t] is example t), and a state is (B, H) for a cell, (1, B, H) for nn.LSTM"),
    ("values to unpack", "another number of values than the names they are unpacked into: unpacking x.shape means x "
     "has another number of axes than you expect (the wrong tensor given, e.g. two arguments in each other's "
     "place?); unpacking a call means the function returns another number of values than its docstring says"),
    ("should be a 1D CPU int64 tensor", "give pack_padded_sequence lengths.cpu() (int64)"),
    ("Expected all tensors to be on the same device", "move every tensor to one device"),
    ("expected scalar type", "float32 and float64 (or int) tensors are mixed: convert with .to(x.dtype)"),
    ("index out of range in self", "a token id at least as large as the embedding's number of rows: the wrong "
     "embedding for these ids (the source's where the target's is needed, or the reverse)?"),
    ("Expected target size", "F.cross_entropy takes scores (N, V) with targets (N,), or (B, V, T) with the class "
     "axis second: flatten (B, T, V) scores to (B*T, V) and the targets to (B*T,)"),
    ("Boolean value of Tensor with more than one value is ambiguous", "a tensor of several values used as one True "
     "or False (`if t:`, `while t:`, `not t`, `and`/`or` between tensors, or Python's max/min on a tensor): combine "
     "masks with & and |, and ask .any() or .all() where one answer is meant; or a loss class called with "
     "tensors: nn.CrossEntropyLoss(scores, y) builds a module (its arguments are options), build it first, "
     "nn.CrossEntropyLoss()(scores, y), or call F.cross_entropy(scores, y)"),
    ("the same dtype", "integer and float tensors in one operation: token ids (int64) go through an "
     "embedding first, and a matrix product or a linear layer needs float tensors (.float(), or the right tensor?)"),
    ("self must be a matrix", "torch.mm multiplies two 2-D matrices only: for a batch (B, n, m) use @ or torch.bmm "
     "(@ also broadcasts a 2-D weight over the batch)"),
    ("must be a 3D tensor", "torch.bmm multiplies two 3-D tensors (B, n, m) and (B, m, p): a 2-D weight needs @ "
     "(which broadcasts it over the batch), a 2-D state needs [:, None] or [..., None] first; or the tensor has "
     "another number of axes than it should because of a line before (print its shape where it is made)"),
    ("input has inconsistent input_size", "the RNN was built for another number of input features than the input "
     "has: input_size is the size of the input's LAST axis (the embedding size; 2 * H after a bidirectional layer; "
     "the features plus what is concatenated to them)"),
    ("The expanded size of the tensor", "expand and expand_as only stretch axes of size 1: add the missing axis of "
     "size 1 first ([:, None] or unsqueeze), in the place where the sizes must line up"),
    ("view size is not compatible with input tensor's size and stride", "view needs the entries in memory order, "
     "and a transpose or permute changed the order: use .reshape(...) (or .contiguous().view(...)); and check that "
     "a reshape is what you mean, not a transpose"),
    ("is invalid for input of size", "the sizes asked of view/reshape do not multiply out to the number of entries: "
     "print the tensor's shape (the wrong tensor, or a size of another tensor used, e.g. T for Tx?)"),
    ("to match target batch_size", "the scores and the targets hold different numbers of positions: flatten both "
     "the same way, scores (B, T, V) to (B*T, V) and targets (B, T) to (B*T,), of the same B and T (the targets "
     "shifted by one step against the inputs?)"),
    ("cannot be converted to Scalar", ".item() of a tensor of several values: .item() is for one number (a loss "
     "that was not reduced, or the wrong tensor?)"),
    ("only one element tensors can be converted to Python scalars", "int() or float() of a tensor of several values: "
     "convert one entry (t[b].item()) or keep a tensor (.tolist() gives a list of numbers)"),
    ("'torch.Size' object is not callable", ".shape is an attribute, not a method: x.shape[0] or x.size(0), not "
     "x.shape()"),
    ("'Tensor' object is not callable", "a tensor called like a function: a name that held a layer or a function "
     "now holds a tensor (reused for a result?), or .T, .shape, .mT, .grad written with ()"),
    ("only supports boolean masks", "a mask of 0/1 numbers: masks are bool tensors (lengths[:, None] > "
     "torch.arange(T) gives one; or .bool())"),
    ("Expected dtype int32/int64 for index", "gather and scatter take integer indices: .long() (indices made by "
     "arithmetic on floats, or the values where the indices were meant?)"),
    ("too many indices for tensor of dimension", "more indices than the tensor has axes: print its shape (a step "
     "already taken out, x[:, t] of a (B, F) tensor?, or the wrong tensor?)"),
    ("stack expects each tensor to be equal size", "torch.stack needs tensors of one shape: print the shapes of the "
     "list's items (one from another step, direction or layer, or a state (1, B, H) among (B, H)?)"),
    ("Sizes of tensors must match except in dimension", "torch.cat joins along one axis and every OTHER axis must "
     "agree: print the shapes (a missing [:, None] or unsqueeze, or the wrong axis joined?)"),
    ("a leaf Variable that requires grad is being used in an in-place operation", "an in-place change (x += ..., "
     "x[...] = ..., x.add_) of a parameter or of an input that requires grad: compute a new tensor instead "
     "(or, for an update of weights, do it under torch.no_grad())"),
    ("Can't call numpy() on Tensor that requires grad", ".detach() before .numpy() (or keep the tensor)"),
    ("multi-target not supported", "F.cross_entropy takes class ids (N,) for scores (N, C), or class probabilities "
     "of the SAME shape (N, C): flatten the targets like the scores (y.reshape(-1)), not (N, 1); one-hot targets "
     "need all C columns (F.one_hot(y, num_classes=C): without it the columns stop at the largest label present)"),
    ("expected target dtype to be Long", "targets of F.cross_entropy are class ids (int64), not floats: the ids, "
     "not the scores or the one-hot vectors (or .long())"),
    ("input.size(-1) must be equal to input_size", "the LSTM/RNN was built for another number of input features: "
     "input_size is the size of the input's LAST axis (the embedding size; 2 * H after a bidirectional layer); a "
     "(T, B, F) input given to a batch_first=True layer reads the axes in the wrong places"),
    ("Odd number of params or hiddens given to a bidirectional RNN", "a bidirectional layer given a packed batch "
     "and an initial state with one slice per layer where it needs one per direction too: h_0 and c_0 have shape "
     "(num_layers * 2, B, H), (2, B, H) for one layer (or give no state: zeros are the default)"),
    ("For unbatched 2-D input", "a 2-D input is read as ONE sequence (T, F): give nn.LSTM a batch (B, T, F) "
     "(batch_first=True) with states (1, B, H), or x[None] for a batch of one"),
    ("'indices' to have one of the following scalar types", "an embedding looks up integer token ids: give it the "
     "ids (int64), not vectors or floats (the embedded tensor embedded again, or the wrong argument?)"),
    ("must be Tensor, not", "a number, a list or None in a tensor's place: which argument is it (its name and "
     "position are in the message)? Options such as ignore_index=, dim=, p= are easy to pass by position by "
     "mistake; a list of tensors needs torch.stack or torch.cat first"),
    ("could not infer output dtype", "the mean of a bool or int tensor: convert it first (mask.float().mean(), "
     "or sum the values and divide by the count)"),
    ("can't be cast to the desired output type", "an in-place operation writes floats into an integer tensor (made "
     "from ints, or with dtype=torch.long): make it a float tensor, or compute a new tensor"),
    ("is out of bounds.", "a target id at least the number of classes: the scores' class axis is not the last "
     "one (flatten (B, T, V), not (B, V, T)), or the targets are from another vocabulary"),
    ("must be sorted in decreasing order when `enforce_sorted` is True", "pack_padded_sequence with "
     "enforce_sorted=False (or sort the batch by length first)"),
    ("Length of all samples has to be greater than 0", "a length of 0 or less: lengths counted from the padded "
     "tensor (lengths - 1 where lengths is meant?) or an empty sequence"),
    ("Expected `len(lengths)` to be equal to batch_size", "pack_padded_sequence reads (T, B, F) unless "
     "batch_first=True: with a batch-first tensor, pass batch_first=True (and lengths of the B sequences)"),
    ("object of type 'int' has no len()", "len() of a number: a size is already a number (T, not len(T)); len(x) "
     "or x.shape[k] of a tensor"),
    ("'int' object is not iterable", "a loop over a number: for t in range(T)"),
    ("'float' object is not iterable", "a number where a list is expected: `a_list += number` extends the list by "
     "the number's items (use a_list.append(number)), or a loop over a number (use range)"),
    ("has no attribute 'backward'", "backward() is a tensor's method: the loss became a Python number (.item(), "
     "float(), or a sum of numbers): keep the loss a tensor and call .item() only to report it"),
    ("non-iterable builtin_function_or_method", "a method named without calling it: x.size() or x.shape, not "
     "x.size"),
    ("'builtin_function_or_method' object is not subscriptable", "a method indexed without calling it: x.size(0) or "
     "x.shape[0], not x.size[0]"),
    ("must be tuple of Tensors, not Tensor", "torch.cat and torch.stack take ONE list of tensors: torch.cat([a, b], "
     "dim=1), not torch.cat(a, b, dim=1)"),
    ("must be tuple of Tensors, not", "a list of tensors is asked: reversed(), map(), zip() and generators give "
     "iterators: wrap them in list(...) (or use xs[::-1])"),
    ("not implemented for 'Bool'", "a bool tensor (a mask) in arithmetic or a product: convert it first, "
     "mask.to(x.dtype)"),
    ("must be greater or equal to the number of dimensions in the tensor", "a value with more axes than the place it "
     "is written into (x[...] = value, or expand): the slice on the left has fewer axes than the value on the right; "
     "drop the extra axis of the value (an unsqueeze, a [:, None]) or index the place with as many axes"),
    ("1D tensors expected, but got", "torch.dot multiplies two 1-D vectors only: for a batch use @ (torch.matmul, "
     "torch.bmm) or (a * b).sum(-1)"),
    ("weight tensor should be defined either for all", "cross_entropy's weight= is one number per CLASS (a weight "
     "for each of the V entries of a score row), not per position: to leave positions out, use ignore_index=PAD, or "
     "take reduction='none' and average the losses over the kept positions yourself"),
    ("zero-dimensional tensor (at position", "torch.cat joins tensors along an axis they already have, and a 0-d "
     "tensor (one number: a norm, a loss, x.sum()) has none: torch.stack(list) puts them side by side along a new "
     "axis"),
    ("'tuple' object has no attribute 'batch_sizes'", "a tuple where a PackedSequence is asked: an nn.LSTM / nn.GRU "
     "returns the pair (output, state), with (h_n, c_n) for an LSTM; unpack it first, packed_out, _ = "
     "self.rnn(packed), and give pad_packed_sequence packed_out"),
    ("must be real number, not torch.Size", "a shape where a number is asked: one size is x.shape[-1] (or "
     "x.size(-1)), not x.shape"),
    ("cannot be broadcast to indexing result", "x[mask] = v writes only the rows the mask selects: give it those "
     "rows, v[mask], or keep every row with torch.where(mask[:, None], v, x)"),
    ("only integer tensors of a single element can be converted to an index", "a tensor of several entries used as "
     "an index or a slice bound (x[:, :lengths]): each row needs its own bound: take row b with lengths[b] in a "
     "loop, or build a mask, torch.arange(T) < lengths[:, None]"),
    ("Trying to backward through the graph a second time", "two backward passes through one graph: a state carried "
     "into the next batch without .detach() (truncated BPTT), or loss.backward() called twice"),
    ("missing 1 required positional argument", "an argument left out: the message names it (softmax needs dim=, "
     "a cell needs its state, a layer its input)"),
    ("takes 1 positional argument but", "more positional arguments than the call takes: sizes go in one tuple "
     "(torch.zeros((B, H)) or torch.zeros(B, H)), options by name (dtype=, dim=)"),
)


# Shapes on the failing line: an error raised at the student's line is explained with the actual shapes of the
# tensors on that line (read from the frame, and from the pure sub-expressions of the line re-evaluated: names,
# slicing, .T, arithmetic, shape-only methods), so that the hint names the two tensors that disagree and the axis.
_PURE_METHODS = {"to", "float", "double", "long", "int", "bool", "half", "unsqueeze", "squeeze", "transpose", "t",
                 "permute", "reshape", "view", "flatten", "contiguous", "detach", "clone", "sum", "mean", "exp",
                 "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "softmax", "log_softmax", "split", "chunk",
                 "unbind", "expand", "expand_as", "flip", "movedim", "size", "dim", "norm", "max", "min", "argmax",
                 "masked_fill", "matmul", "bmm", "mm", "gather", "index_select", "new_zeros", "new_ones"}
_PURE_TORCH = {"cat", "stack", "where", "tanh", "sigmoid", "exp", "log", "sqrt", "relu", "softmax", "log_softmax",
               "matmul", "bmm", "mm", "zeros_like", "ones_like", "einsum", "split", "chunk", "arange", "outer",
               "addmm", "maximum", "minimum", "gather", "concat", "concatenate", "hstack", "vstack"}
_TORCH_NAMES = {"torch", "F", "nn"}
_MAX_NUMEL = 2_000_000
_BINARY_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.MatMult: operator.matmul, ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv}
_COMPARISONS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                ast.Eq: operator.eq, ast.NotEq: operator.ne}


class _Unsafe(Exception):
    pass


def _eval_pure(node, env: dict, memo: dict):
    """The value of a side-effect-free expression ``node`` in ``env`` (a frame's globals and locals), or
    :class:`_Unsafe`. Only names, constants, slicing, tuples/lists, arithmetic, comparisons and the tensor
    methods/torch functions above are evaluated; anything else (a call of the student's own code, an attribute of
    a module) is refused, so that explaining an error never runs the student's code again."""
    key = id(node)
    if key in memo:
        if isinstance(memo[key], _Unsafe):
            raise memo[key]
        return memo[key]
    try:
        value = _eval_node(node, env, memo)
    except _Unsafe as exc:
        memo[key] = exc
        raise
    except Exception as exc:  # noqa: BLE001 - a sub-expression that fails is not evaluable
        memo[key] = _Unsafe(str(exc))
        raise memo[key] from None
    if isinstance(value, torch.Tensor) and value.numel() > _MAX_NUMEL:
        memo[key] = _Unsafe("too large")
        raise memo[key]
    memo[key] = value
    return value


def _eval_node(node, env, memo):
    ev = lambda n: _eval_pure(n, env, memo)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise _Unsafe(node.id)
        value = env[node.id]
        if isinstance(value, (torch.Tensor, int, float, bool, type(None), torch.dtype, torch.Size,
                              torch.nn.Module)) or type(value) in (dict, str) or (
                node.id in _TORCH_NAMES and isinstance(value, types.ModuleType)):
            return value
        raise _Unsafe(node.id)
    if isinstance(node, (ast.Tuple, ast.List)):
        return [ev(e) for e in node.elts] if isinstance(node, ast.List) else tuple(ev(e) for e in node.elts)
    if isinstance(node, ast.Slice):
        return slice(*(ev(p) if p is not None else None for p in (node.lower, node.upper, node.step)))
    if isinstance(node, ast.Subscript):
        base = ev(node.value)
        if type(base) is dict:                     # W["g"]: a plain dict's item (no code of the student's runs)
            key = ev(node.slice) if isinstance(node.slice, (ast.Constant, ast.Name)) else None
            if isinstance(key, (str, int)) and key in base:
                return base[key]
            raise _Unsafe("subscript")
        if not isinstance(base, (torch.Tensor, torch.Size, tuple)):
            raise _Unsafe("subscript")
        return base[ev(node.slice)]
    if isinstance(node, ast.Attribute):
        base = ev(node.value)
        if isinstance(base, torch.Tensor) and node.attr in ("T", "mT", "shape", "dtype", "device", "ndim"):
            return getattr(base, node.attr)
        if isinstance(base, types.ModuleType) and isinstance(getattr(base, node.attr, None), torch.dtype):
            return getattr(base, node.attr)
        if isinstance(base, torch.nn.Module):       # self.v, self.W.weight: read from the module's own dicts, so
            for table in ("_parameters", "_buffers", "_modules", "__dict__"):   # no code of the student's runs
                found = vars(base).get(table, {}) if table != "__dict__" else vars(base)
                if node.attr in found and isinstance(found[node.attr], (torch.Tensor, torch.nn.Module)):
                    return found[node.attr]
        raise _Unsafe("attribute")
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY_OPS:
            raise _Unsafe("operator")
        return _BINARY_OPS[type(node.op)](ev(node.left), ev(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert, ast.UAdd)):
        v = ev(node.operand)
        return -v if isinstance(node.op, ast.USub) else (~v if isinstance(node.op, ast.Invert) else v)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        if type(node.ops[0]) not in _COMPARISONS:
            raise _Unsafe("comparison")
        return _COMPARISONS[type(node.ops[0])](ev(node.left), ev(node.comparators[0]))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        args = [ev(a) for a in node.args]
        kwargs = {k.arg: ev(k.value) for k in node.keywords if k.arg}
        if len(kwargs) != len(node.keywords):
            raise _Unsafe("**kwargs")
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in _TORCH_NAMES:
            mod = ev(owner)
            if node.func.attr not in _PURE_TORCH or not hasattr(mod, node.func.attr):
                raise _Unsafe("function")
            return getattr(mod, node.func.attr)(*args, **kwargs)
        base = ev(owner)
        if isinstance(base, torch.Tensor) and node.func.attr in _PURE_METHODS:
            return getattr(base, node.func.attr)(*args, **kwargs)
        raise _Unsafe("method")
    raise _Unsafe(type(node).__name__)


def _line_values(line: str, env: dict) -> list:
    """``[(source text, value, ast node)]`` for every sub-expression of ``line``, outermost first: the value when
    it is pure and a tensor or a list/tuple of tensors, None when it cannot be evaluated (the failing call itself);
    ``[]`` when the line does not parse on its own."""
    text = line.strip()
    if text.startswith("return "):
        text = text[len("return "):]
    for candidate in (text, text.rstrip(",(["), text.split(" #")[0]):
        try:
            tree = ast.parse(candidate)
            break
        except SyntaxError:
            continue
    else:
        return []
    memo: dict = {}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        try:
            value = _eval_pure(node, env, memo)
        except _Unsafe:
            value = None          # kept: the call that failed is where the operands are looked for
        if value is None or isinstance(value, torch.Tensor) or (
                isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value)):
            out.append((ast.unparse(node), value, node))
    return out


def _fmt(shape) -> str:
    return str(tuple(int(s) for s in shape))


def _broadcasts(*shapes) -> bool:
    try:
        torch.broadcast_shapes(*shapes)
        return True
    except RuntimeError:
        return False


def _placement(small: tuple, big: tuple) -> str | None:
    """An index such as ``[:, None, :]`` that puts the axes of ``small`` (no size-1 axes) where ``big`` has
    the same sizes, in order, so that the two broadcast; None when there is none or ``small`` has size-1 axes."""
    if 1 in small or not small or len(small) >= len(big):
        return None
    for pos in itertools.combinations(range(len(big)), len(small)):
        if all(big[p] == s for p, s in zip(pos, small)):
            last = max(pos)
            idx = [":" if d in pos else "None" for d in range(last + 1)]
            if last + 1 < len(big):
                idx += ["None"] * (len(big) - last - 1)
            return "[" + ", ".join(idx) + "]"
    return None


_ELEMENTWISE = {"where", "masked_fill", "masked_fill_", "add", "sub", "mul", "div", "maximum", "minimum", "lerp",
                "addcmul", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "pow", "atan2",
                "copysign", "fmod", "remainder", "clamp"}   # calls whose tensor arguments broadcast against each other


def _broadcast_hint(values: list, sizes: set | None = None) -> str | None:
    """The two operands on the line that do not broadcast, their shapes, the axis, and an index that fixes it; only
    operands that meet with the two ``sizes`` of the error (when given) on some axis: never two other tensors."""
    pairs = []
    for text, value, node in values:
        call = isinstance(node, ast.Call) and node.args and callee_name(node) in _ELEMENTWISE
        if isinstance(node, ast.BinOp) or call:       # never the arguments of any other call (decode_step(h, mask))
            ops = [node.left, node.right] if isinstance(node, ast.BinOp) else list(node.args)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                ops = [node.func.value] + ops       # the receiver of a method: energies.masked_fill(mask, ...)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                continue
            got = [tv for tv in (_value_of(o, values) for o in ops) if tv[1] is not None]
            for (ta, a), (tb, b) in itertools.combinations(got, 2):
                if not _broadcasts(a.shape, b.shape) and (sizes is None or _meet(a.shape, b.shape) & {
                        frozenset(sizes)}):
                    pairs.append((ta, a, tb, b, node))
    if not pairs:
        return None
    ta, a, tb, b, node = pairs[-1]          # the innermost pair (ast.walk goes outside in)
    sa, sb = tuple(a.shape), tuple(b.shape)
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    axis = next(d for d in range(n - 1, -1, -1) if pa[d] != pb[d] and 1 not in (pa[d], pb[d]))
    hint = (f"{ta} has shape {_fmt(sa)} and {tb} has shape {_fmt(sb)}: broadcasting lines shapes up from the RIGHT, "
            f"so their axis {axis - n} meets {pa[axis]} against {pb[axis]}")
    if len(sa) == len(sb) >= 3 and sa[:-2] == sb[:-2] and sa[-1] == sb[-1] and axis - n == -2:   # rows paired
        wrap = lambda t: t if re.fullmatch(r"[\w.\[\]'\"]+", t) else f"({t})"  # noqa: E731
        return (hint + f": {wrap(ta)} * {wrap(tb)} pairs row t of one only with row t of the other; for every pair "
                f"(t, s), one score per row of each ({_fmt(sa[:-1] + (sb[-2],))}), give each its own axis, "
                f"({wrap(ta)}[..., :, None, :] * {wrap(tb)}[..., None, :, :]).sum(-1), or take the product "
                f"{wrap(ta)} @ {wrap(tb)}.transpose(-2, -1)")
    for square, rows, tsq in ((sa, sb, ta), (sb, sa, tb)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and len(square) == 2 == len(rows) \
                and square[0] == square[1] == rows[1] != rows[0]:
            return (hint + f"; a vector per row times the square matrix {tsq}, entry by entry: a product with a "
                    f"diagonal matrix, diag(v) {tsq} (a Jacobian such as diag(1 - h^2) W), scales the ROWS of {tsq} "
                    f"by v, and a batch of row vectors g meets it as g @ diag(v) @ {tsq} = (g * v) @ {tsq}: "
                    "multiply the vectors entry by entry first, then take the matrix product")
    for extra, other, text in ((sa, sb, ta), (sb, sa, tb)):
        if len(extra) == len(other) + 1 and extra[-1] == 1 and extra[:-1] == other:
            return (hint + f"; {text} has a last axis of size 1 that {_fmt(other)} does not have: was it made with "
                    f"an extra axis (a product with a (k, 1) column, or keepdim=True)? {text}.squeeze(-1) drops it; "
                    f"adding an axis to the other side instead would run the next step over that single entry")
    (tf, sf), (tk, sk) = sorted([(ta, sa), (tb, sb)], key=lambda x: len(x[1]))
    if len(sf) == 1 and len(sk) >= 2 and 1 not in sk and a.numel() == b.numel():   # one flattened, the other not
        return (hint + f"; {tf} has as many entries as {tk} ({a.numel()}): one of the two was flattened and the "
                f"other was not: flatten both the same way ({tk}.reshape(-1)), or keep {tf} in the shape {_fmt(sk)}")
    for text, shape, other_shape in ((ta, sa, sb), (tb, sb, sa)):     # (h @ W).T: the product transposed
        node_t = next((n for t, v, n in values if t == text), None)
        if isinstance(node_t, ast.Attribute) and node_t.attr in ("T", "mT") and isinstance(node_t.value, ast.BinOp) \
                and isinstance(node_t.value.op, ast.MatMult) and len(shape) == 2 \
                and _broadcasts(shape[::-1], other_shape):
            left, right = (ast.unparse(x) for x in (node_t.value.left, node_t.value.right))
            right = right if re.fullmatch(r"[\w.\[\]'\"]+", right) else f"({right})"
            return (hint + f"; {text} transposes the PRODUCT, {_fmt(shape[::-1])} into {_fmt(shape)}: the transpose "
                    f"belongs on the matrix, {left} @ {right}.T, whose shape {_fmt(shape[::-1])} meets "
                    f"{_fmt(other_shape)}")
    for small, big, text in ((sa, sb, tb), (sb, sa, ta)):       # text: the big one's
        product = next((n for t, v, n in values if t == text and isinstance(n, ast.BinOp)
                        and isinstance(n.op, ast.MatMult)), None)
        flipped = big[:-2] + (big[-1], big[-2]) if len(big) >= 2 else None
        if product is not None and flipped and _broadcasts(flipped, small) and not _broadcasts(big, small):
            turn = lambda e: (ast.unparse(e.value) if isinstance(e, ast.Attribute) and e.attr in ("T", "mT")  # noqa: E731
                              else f"{ast.unparse(e)}.T")
            other = f"{turn(product.right)} @ {turn(product.left)}"
            turned = (f"; or, if each row is meant to be one example: {other} gives {_fmt(flipped)} (the product "
                      f"the other way round, the same numbers transposed), which broadcasts with "
                      f"{(tb if text == ta else ta)} {_fmt(small)} as it is")
            break
    else:
        turned = ""
    for small, big, text in sorted([(sa, sb, ta), (sb, sa, tb)], key=lambda x: len(x[0])):
        core = tuple(s for s in small if s != 1)
        if len(core) >= len(big):
            continue
        base = text if text.isidentifier() else next(
            (t for t, v, n in values if isinstance(n, ast.Name) and isinstance(v, torch.Tensor)
             and tuple(v.shape) == core and re.search(rf"\b{re.escape(t)}\b", text)), None)
        fix = _placement(core, big) if base else None
        if fix:
            where = "a new axis in the wrong place: " if len(small) == len(big) else ""
            hint += f"; {where}{base}{fix} would line its axes up with the equal sizes of {_fmt(big)}"
            if len(small) < len(big) and not turned:
                hint += (f" -- if {base} has the shape you meant: one axis fewer may also be an index that dropped "
                         f"an axis where {base} was made (x[:, k] for x[:, k:], a slice's colon lost) or a "
                         f"reduction too many")
            break
        reduced = re.search(r"\b(sum|mean|max|amax|min|amin|logsumexp|norm|prod|std|var)\(", text)
        lost = [k for k in range(len(big)) if big[:k] + big[k + 1:] == tuple(small)]
        if reduced and lost and len(small) == len(big) - 1:
            hint += (f"; {text} reduced away the axis {lost[-1]} of {_fmt(big)}: keepdim=True in the "
                     f"{reduced.group(1)} keeps it with size 1 (or index its result with [..., None]), so that "
                     f"it lines up with {_fmt(big)}")
            break
    return hint + turned


def _meet(sa, sb) -> set:
    """The pairs of sizes that two shapes, lined up from the right, meet on an axis where they do not broadcast."""
    sa, sb = tuple(sa), tuple(sb)
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    return {frozenset((x, y)) for x, y in zip(pa, pb) if x != y and 1 not in (x, y)}


def _value_at(node, values):
    """The value ``_line_values`` found for the sub-expression ``node`` (None when it has none)."""
    return next((v for _, v, n in values if n is node), None)


def _value_of(node, values):
    """``(source text, tensor)`` of the sub-expression ``node``, or ``(None, None)`` when it is not a tensor."""
    value = _value_at(node, values)
    return (ast.unparse(node), value) if isinstance(value, torch.Tensor) else (None, None)


def _ndim_hint(values: list) -> str | None:
    """cat/stack of tensors with different numbers of axes: their shapes, and indexing that made (B, B, ...)."""
    for text, value, node in values:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "cat", "stack", "concat", "concatenate") and node.args:
            seq = _value_at(node.args[0], values)
            if not isinstance(seq, (list, tuple)) or len({t.dim() for t in seq}) < 2:
                continue
            elts = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else []
            names = [ast.unparse(e) for e in elts] or [f"tensor {k}" for k in range(len(seq))]
            shown = ", ".join(f"{nm} {_fmt(t.shape)}" for nm, t in zip(names, seq))
            hint = f"the tensors joined have different numbers of axes: {shown}"
            for nm, t in zip(names, seq):
                others = [u for u in seq if u.dim() == t.dim() - 1]
                if t.dim() >= 3 and t.shape[0] == t.shape[1] and others and others[0].shape[0] == t.shape[0]:
                    return (hint + f"; {nm} is ({t.shape[0]}, {t.shape[1]}, ...), the batch paired with itself: a "
                            "matrix product that broadcast (B, T) @ (B, T, H) to (B, B, H) (torch.bmm with a (B, 1, T) "
                            "left operand gives (B, 1, H)), or indexing with `:` on axis 0 and an index tensor of B entries "
                            "(pick one entry per row with x[torch.arange(B), idx])?")
            for nm, t in zip(names, seq):
                for u in seq:
                    if t.dim() == u.dim() - 1 and tuple(s for s in u.shape if s != 1) == tuple(t.shape) and 1 in u.shape:
                        return hint + f"; {nm} lost an axis of size 1 (a .squeeze() on a batch of one?)"
            return hint
    return None


def _unpack_hint(msg: str, values: list, line: str = "", env: dict | None = None) -> str | None:
    """Too many / not enough values to unpack from split or chunk: how the axis was cut, and the size asked; from a
    tensor itself: it is split along its first axis; from two tuples joined with +: they were joined, not added."""
    for text, value, node in values:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(value, tuple) \
                and all(isinstance(_value_at(o, values), tuple) for o in (node.left, node.right)):
            a, b = ast.unparse(node.left), ast.unparse(node.right)
            return (f"{a} and {b} are tuples of tensors, and + between two tuples JOINS them ({len(value)} items), "
                    "it does not add the tensors: add the tensors first, then cut once (e.g. (x + y).split(H)), or "
                    "add the pieces pairwise, [p + q for p, q in zip(...)]")
    for text, value, node in values:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("split", "chunk", "unbind") and isinstance(value, (tuple, list))):
            continue
        base = _value_at(node.func.value, values)
        if not isinstance(base, torch.Tensor):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        dim_node = kw.get("dim") or (node.args[1] if len(node.args) > 1 else None)
        dim = int(dim_node.value) if isinstance(dim_node, ast.Constant) else (0 if dim_node is None else None)
        if dim is None:
            dim = next((d for d in range(base.dim()) if base.shape[d] != value[0].shape[d]), 0) if value else 0
        dim = dim % max(base.dim(), 1)
        size = int(base.shape[dim])
        base_text = ast.unparse(node.func.value)
        hint = (f"{text} cuts axis {dim} of {base_text} {_fmt(base.shape)} (size {size}) into {len(value)} "
                f"piece{'s' if len(value) != 1 else ''} of shape {_fmt(value[0].shape)}")
        want = re.search(r"expected (\d+)", msg)
        if want:
            k = int(want.group(1))
            along = [d for d in range(base.dim()) if d != dim and base.shape[d] % k == 0 and base.shape[d] >= k]
            if along and size % k:
                hint += f"; {k} blocks fit along axis {along[0]} (size {base.shape[along[0]]}): the wrong axis?"
            elif (size % k == 0 and node.func.attr == "split" and node.args and isinstance(node.args[0], ast.Constant)
                  and node.args[0].value == k):
                hint += (f"; split({k}) takes the size of each piece, chunk({k}) the number of pieces: {k} blocks are "
                         f"{base_text}.chunk({k}, dim={dim}) (or .split({size // k}, dim={dim}))")
            elif size % k == 0 and node.func.attr == "split" and value:
                piece = int(value[0].shape[dim])
                hint += (f"; {k} blocks of axis {dim} need a size of {size // k} each, and pieces of {piece} need a "
                         f"tensor of {k * piece} there: is the size you split by the one you meant, or the tensor you "
                         f"split ({size}{' joined by torch.cat' if 'cat(' in base_text else ''})?")
            elif size % k == 0:
                hint += f"; {k} blocks fit along axis {dim}: chunk({k}, dim={dim})?"
        return hint
    unpacked = [n.value for n in _line_nodes(line) if isinstance(n, ast.Assign)
                and any(isinstance(t, (ast.Tuple, ast.List)) for t in n.targets)]
    for node in unpacked:                 # a tensor unpacked: it is split along its FIRST axis
        value, text = _operand(node, env or {}), ast.unparse(node)
        if isinstance(value, torch.Tensor) and value.dim() >= 1:
            return (f"{text} is a tensor of shape {_fmt(value.shape)}: unpacking a tensor splits its FIRST axis "
                    f"({value.shape[0]} value{'s' if value.shape[0] != 1 else ''}); to cut it into blocks use "
                    f"{text}.chunk(k, dim=...) or .split(size, dim=...), and a pair of tensors (h, c) is a tuple, not "
                    "a tensor")
    return None


def _product_shape(sa: tuple, sb: tuple) -> tuple | None:
    """The shape of ``a @ b`` for tensors of shapes ``sa`` and ``sb`` (worked out on the meta device, nothing is
    computed), None when the product is not defined."""
    try:
        return tuple(torch.matmul(torch.empty(sa, device="meta"), torch.empty(sb, device="meta")).shape)
    except Exception:  # noqa: BLE001 - any refusal means "not defined"
        return None


def _matmul_hint(values: list, env: dict | None = None, source: str = "", msg: str = "") -> str | None:
    """The matrix product on the line whose sizes do not fit: its two operands with their shapes, the two axes
    that must be equal, and the rewritings whose sizes fit: operands swapped or one of them transposed, or, when
    none of those fits, another tensor of the same function in place of an operand (a copy-paste slip); in a
    chain of three or more products, the order of its factors whose sizes fit."""
    found, found_nodes = [], []
    for text, value, node in values:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            left, right = node.left, node.right
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "matmul", "mm", "bmm", "mv"):
            torch_fn = isinstance(node.func.value, ast.Name) and node.func.value.id in _TORCH_NAMES
            operands = list(node.args[:2]) if torch_fn else [node.func.value] + list(node.args[:1])
            if len(operands) < 2:
                continue
            left, right = operands
        else:
            continue
        (ta, a), (tb, b) = _value_of(left, values), _value_of(right, values)
        if a is None or b is None or a.dim() == 0 or b.dim() == 0:
            continue
        if _product_shape(tuple(a.shape), tuple(b.shape)) is None:
            found.append((ta, a, tb, b))
            found_nodes.append(node)
    if not found:
        return None
    pick = len(found) - 1                         # the innermost product (ast.walk goes outside in) ...
    sizes = re.search(r"cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", msg)
    if sizes:                                     # ... unless PyTorch's sizes say which one raised
        want = tuple(int(g) for g in sizes.groups())
        pick = next((i for i, (_, a, _, b) in enumerate(found) if a.dim() >= 2 and b.dim() >= 2
                     and (a.shape[-2], a.shape[-1], b.shape[-2], b.shape[-1]) == want), pick)
    ta, a, tb, b = found[pick]
    sa, sb = tuple(a.shape), tuple(b.shape)
    bound = _slice_bound_hint(found_nodes[pick], a, b, env or {}, values)
    if bound:
        return f"{ta} {_fmt(sa)} @ {tb} {_fmt(sb)}: {bound}"
    wrap = lambda t: t if isinstance(ast.parse(t, mode="eval").body, (  # noqa: E731
        ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else f"({t})"
    inner_b = "its first axis" if len(sb) == 1 else "its second-last axis"
    if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        hint = (f"{ta} {_fmt(sa)} @ {tb} {_fmt(sb)}: a matrix product sums the LAST axis of the left operand "
                f"({sa[-1]}) against {inner_b} of the right one ({sb[0] if len(sb) == 1 else sb[-2]}), and those differ")
    else:
        hint = (f"{ta} {_fmt(sa)} @ {tb} {_fmt(sb)}: the inner sizes fit, but the leading (batch) axes "
                f"{_fmt(sa[:-2])} and {_fmt(sb[:-2])} do not broadcast")
    swap_last = r"\.(m?T|transpose\(\s*(1, 2|2, 1|-2, -1|-1, -2)\s*\))$"     # a transpose of the last two axes
    flip = lambda t: re.sub(swap_last, "", t) if re.search(swap_last, t) else f"{wrap(t)}.mT"  # noqa: E731
    ta_t = sa[:-2] + (sa[-1], sa[-2]) if len(sa) >= 2 else None
    tb_t = sb[:-2] + (sb[-1], sb[-2]) if len(sb) >= 2 else None
    tries = [(f"{wrap(tb)} @ {wrap(ta)}", sb, sa)]
    if tb_t:
        tries.append((f"{wrap(ta)} @ {flip(tb)}", sa, tb_t))
    if ta_t:
        tries.append((f"{flip(ta)} @ {wrap(tb)}", ta_t, sb))
    if ta_t and tb_t and (re.search(swap_last, ta) or re.search(swap_last, tb)):
        tries.append((f"{flip(ta)} @ {flip(tb)}", ta_t, tb_t))      # the transpose on the other operand
    fits = [(t, _product_shape(x, y)) for t, x, y in tries if _product_shape(x, y) is not None]
    if sa == sb:        # f @ c_prev for f * c_prev: two tensors of one shape are multiplied entry by entry
        fits.insert(0, (f"{wrap(ta)} * {wrap(tb)} (element-wise: `*`, not `@`)", sa))
    order = _chain_order(values, found_nodes[pick]) or _reduced_axis_note(found_nodes[pick], a, b, values)
    if order:
        hint += f"; {order}"
        fits = []
    names = _code_names(source) if not fits and not order else set()   # other tensors when no rewriting fits
    unread = _unread_names(source) if names else set()
    others = []
    for text, other in ((ta, tb), (tb, ta)):
        base = re.fullmatch(r"(\w+)(\.mT|\.T|\.transpose\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\))?", text)
        if not base or not env or not names:
            continue
        for name in sorted(names - {base.group(1)}):
            value = env.get(name)
            if not isinstance(value, torch.Tensor) or value.dim() != _value_of_text(values, base.group(1)):
                continue
            try:
                swapped = (value.transpose(int(base.group(3)), int(base.group(4))) if base.group(3) is not None
                           else value.mT if base.group(2) and value.dim() >= 2 else value)
            except (IndexError, RuntimeError):
                continue
            shape = (_product_shape(tuple(swapped.shape), tuple(b.shape)) if text == ta
                     else _product_shape(tuple(a.shape), tuple(swapped.shape)))
            if shape is not None:
                never = f" (your `{name}` is made and never used)" if name in unread else ""
                others.append((name not in unread, text.replace(base.group(1), name, 1) + f" in place of {text}"
                               + never, shape))
    fits += [(t, shape) for _, t, shape in sorted(others, key=lambda o: o[0])]   # an unused variable first
    fits = _sibling_entries(ta, tb, a, b, env or {}, _code_names(source) if source else set()) + fits
    if fits:
        hint += "; " + ", ".join(f"{t} would give {_fmt(shape)}" for t, shape in fits[:4]) + (
            ": which one is your equation (" + ("an element-wise product, " if sa == sb else "")
            + "the order of the operands, a transpose, the tensor used)?")
    return hint


def _reduced_axis_note(product, a, b, values: list) -> str:
    """An operand of a product that does not fit, made by a sum or mean over one axis (``(d[..., None] * W).sum(-1)``),
    whose sum over another axis would fit: that axis, in words; ``""`` otherwise."""
    if isinstance(product, ast.BinOp):
        operands = [product.left, product.right]
    else:
        return ""
    for k, node in enumerate(operands):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("sum", "mean")
                and len(node.args) + len(node.keywords) == 1):
            continue
        dim = node.args[0] if node.args else node.keywords[0].value
        if not (isinstance(dim, ast.Constant) and type(dim.value) is int
                or isinstance(dim, ast.UnaryOp) and isinstance(dim.operand, ast.Constant)):
            continue
        d = ast.literal_eval(dim)
        _, whole = _value_of(node.func.value, values)
        if not isinstance(whole, torch.Tensor):
            continue
        d_neg = d if d < 0 else d - whole.dim()
        for other in sorted(range(-whole.dim(), 0), key=lambda o: abs(o - d_neg)):    # the nearest axis first
            if other == d_neg:
                continue
            shape = tuple(whole.sum(other).shape)
            pair = (shape, tuple(b.shape)) if k == 0 else (tuple(a.shape), shape)
            if _product_shape(*pair) is not None:
                return (f"{ast.unparse(node)} sums over axis {d}, of size {whole.shape[d]}; over axis {other} (size "
                        f"{whole.shape[other]}) it gives {_fmt(shape)}, which fits the product: which axis does your "
                        "equation sum over?")
    return ""


def _sibling_entries(ta: str, tb: str, a, b, env: dict, names: set) -> list:
    """``[(text, shape)]`` of the products that fit when an operand read from a dict by a constant key
    (``Wx["g"]``, ``Wx["g"].T``) is read with the same key from another dict of the function (``Wh["g"]``; one of
    ``names``, those of the function's code): a slip between two dicts of weights; ``[]`` otherwise."""
    out = []
    for text, other in ((ta, b), (tb, a)):
        m = re.fullmatch(r"(\w+)\[(['\"])(\w+)\2\](\.mT|\.T)?", text)
        if not m:
            continue
        for name, value in env.items():
            entry = (value.get(m.group(3)) if type(value) is dict and name != m.group(1) and name in names
                     else None)
            if not isinstance(entry, torch.Tensor) or entry.dim() < 1:
                continue
            swapped = entry.mT if m.group(4) and entry.dim() >= 2 else entry
            shape = (_product_shape(tuple(swapped.shape), tuple(other.shape)) if text == ta
                     else _product_shape(tuple(other.shape), tuple(swapped.shape)))
            if shape is not None:
                out.append((text.replace(m.group(1), name, 1) + f" in place of {text} (the same key, the other dict)",
                            shape))
    return out[:2]


def _slice_bound_hint(node, a, b, env: dict, values: list) -> str:
    """A product ``x @ W[:, :D].T`` whose sizes fit when the bound of a slice in an operand is another integer the
    function has (a variable, or an axis of a tensor on the line): ``"the slice bound D (3) where H (4) is meant?"``;
    ``""`` when no single replacement makes them fit."""
    if isinstance(node, ast.BinOp):
        operands = [node.left, node.right]
    else:
        return ""
    ints = {n: v for n, v in reversed(env.items())      # the function's own variables first (env: globals, then
            if type(v) is int and not n.startswith("_") and 0 < v < 100_000}      # locals)
    for t, _, n in values:
        if isinstance(n, ast.Name) and isinstance(env.get(n.id), torch.Tensor):
            for axis, size in enumerate(env[n.id].shape):
                ints.setdefault(f"{n.id}.shape[{axis}]", int(size))
    for side, operand in enumerate(operands):
        if any(isinstance(n, ast.Call) for n in ast.walk(operand)):
            continue
        for sl in [n for n in ast.walk(operand) if isinstance(n, ast.Slice)]:
            for field in ("lower", "upper"):
                bound = getattr(sl, field)
                if not isinstance(bound, ast.Name) or type(env.get(bound.id)) is not int:
                    continue
                for name, value in ints.items():
                    if name == bound.id or value == env[bound.id]:
                        continue
                    try:
                        setattr(sl, field, ast.Constant(value))
                        new = _eval_pure(operand, env, {})      # no code of the student's runs again
                    except _Unsafe:           # a replacement that does not apply says nothing
                        new = None
                    finally:
                        setattr(sl, field, bound)
                    if not isinstance(new, torch.Tensor):
                        continue
                    shape = (_product_shape(tuple(new.shape), tuple(b.shape)) if side == 0
                             else _product_shape(tuple(a.shape), tuple(new.shape)))
                    if shape is not None:
                        return (f"the slice bound {bound.id} ({env[bound.id]}) in {ast.unparse(operand)} cuts the "
                                f"wrong number of rows or columns; with {name} ({value}) in its place the sizes fit "
                                f"(giving {_fmt(shape)}): is {name} the size meant there?")
    return ""


def _chain_order(values: list, failing) -> str:
    """For a chain of matrix products (``a @ b @ c``) whose sizes do not fit: the one other order of its factors
    whose sizes fit (a weight placed at the wrong end), in words; ``""`` when none or several do."""
    def leaves(n):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
            return leaves(n.left) + leaves(n.right)
        return [n]

    chains = [leaves(node) for _, _, node in values if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)
              and any(failing is n for n in ast.walk(node))]
    chain = max(chains, key=len, default=[])
    if not 3 <= len(chain) <= 5:
        return ""
    shapes = [_value_of(leaf, values)[1] for leaf in chain]
    if any(not isinstance(v, torch.Tensor) or v.dim() == 0 for v in shapes):
        return ""
    fitting = []
    for perm in itertools.permutations(range(len(chain))):
        if perm == tuple(range(len(chain))):
            continue
        shape = tuple(shapes[perm[0]].shape)
        for i in perm[1:]:
            shape = _product_shape(shape, tuple(shapes[i].shape)) if shape is not None else None
        if shape is not None:
            fitting.append((" @ ".join(ast.unparse(chain[i]) for i in perm), shape))
    if len(fitting) != 1:
        return ""
    text, shape = fitting[0]
    return (f"in the order {text} the sizes fit (giving {_fmt(shape)}): a factor of the chain is in the wrong "
            "place (where does the weight go in the equation?)")


def _source_tree(source: str):
    """The syntax tree of a function's ``source`` (a method's, indented, too); None when it does not parse."""
    try:
        return ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None


def _code_names(source: str) -> set:
    """The variable and argument names of a function's ``source`` (not the words of its comments); empty when it
    does not parse."""
    tree = _source_tree(source)
    return {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(tree)
            if isinstance(n, (ast.Name, ast.arg))} if tree is not None else set()


def _unread_names(source: str) -> set:
    """The names a function's ``source`` binds and never reads (a variable made and then forgotten: often the one
    a later line meant to use)."""
    tree = _source_tree(source)
    if tree is None:
        return set()
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return stored - read


def _value_of_text(values: list, name: str) -> int:
    """The number of axes of the tensor named ``name`` on the line (-1 when there is none)."""
    return next((v.dim() for t, v, n in values if t == name and isinstance(v, torch.Tensor)), -1)


def _join_hint(msg: str, values: list) -> str | None:
    """torch.cat / torch.stack of tensors whose shapes do not fit: the axis joined (dim 0 when none is given),
    the shapes, and the axis along which they would join."""
    for text, value, node in values:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "cat", "stack", "concat", "concatenate") and node.args):
            continue
        seq = _value_at(node.args[0], values)
        if not isinstance(seq, (list, tuple)) or len(seq) < 2 or len({t.dim() for t in seq}) != 1:
            continue
        elts = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else []
        names = [ast.unparse(e) for e in elts] if len(elts) == len(seq) else [f"tensor {k}" for k in range(len(seq))]
        shapes = [tuple(t.shape) for t in seq]
        shown = ", ".join(f"{nm} {_fmt(sh)}" for nm, sh in zip(names, shapes))
        dim_node = next((k.value for k in node.keywords if k.arg in ("dim", "axis")), None) or (
            node.args[1] if len(node.args) > 1 else None)
        n = len(shapes[0])
        fits = [k for k in range(n) if len({sh[:k] + sh[k + 1:] for sh in shapes}) == 1]
        given = dim_node.value if isinstance(dim_node, ast.Constant) and type(dim_node.value) is int else (
            0 if dim_node is None else None)
        if (node.func.attr == "stack" and len(set(shapes)) == 1) or (
                node.func.attr != "stack" and given is not None and -n <= given < n and given % n in fits):
            continue      # this join fits: the error is another one's on the line
        if node.func.attr == "stack":
            hint = f"torch.stack puts tensors of EQUAL shapes on a new axis, and these differ: {shown}"
            if len(fits) == 1:   # equal but for one axis: joined along it, they fit
                k = fits[0]
                joined = list(shapes[0])
                joined[k] = sum(sh[k] for sh in shapes)
                args = ", ".join(names) if elts else "..."
                return (hint + f"; they differ only on axis {k - n}: to join them along that EXISTING axis use "
                        f"torch.cat([{args}], dim={k - n}), which gives {_fmt(tuple(joined))} (torch.stack is for a "
                        "new axis; if you meant one, a tensor here is not the one you meant)")
            return hint + ": one of them is not the tensor you meant, or was sliced or projected differently"
        where = ("dim 0 (no dim given: the first axis, the batch)" if dim_node is None
                 else f"dim={ast.unparse(dim_node)}")
        hint = f"torch.{node.func.attr} joins along {where}, so every other axis must be equal: {shown}"
        if fits:
            k = fits[-1]
            hint += (f"; they differ only on axis {k - n}: dim={k - n} would join them there, if that is the axis you "
                     f"mean; if not, one of them was cut on axis {k - n} where it was made (a slice or an index on "
                     f"the wrong axis: x[:H] cuts the first axis, x[..., :H] the last)")
        return hint
    return None


def _packed_hint(line: str, env: dict, source: str) -> str | None:
    """An error at a line that runs a batch-first RNN on a PackedSequence made, in the same function, by a
    pack_padded_sequence without batch_first=True (it then reads the (B, T, ...) input as (T, B, ...))."""
    packed = [n for n in re.findall(r"\b(\w+)\b", line)
              if type(env.get(n)).__name__ == "PackedSequence"]
    rnns = [getattr(env.get(owner), attr, None) for owner, attr in re.findall(r"\b(self|model)\.(\w+)\(", line)]
    if not packed or not any(isinstance(m, torch.nn.RNNBase) and m.batch_first for m in rnns):
        return None
    tree = _source_tree(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in (
                "pack_padded_sequence", "pack_sequence"):
            flag = next((k.value for k in node.keywords if k.arg == "batch_first"), None)
            if flag is None or (isinstance(flag, ast.Constant) and not flag.value):
                return (f"{packed[0]} was packed by `{ast.unparse(node)}` without batch_first=True: it read axis 0 "
                        "of your (B, T, ...) input as time and axis 1 as the batch, while the RNN is batch-first; "
                        "pass batch_first=True to pack_padded_sequence (and to pad_packed_sequence)")
    return None


def _written_hint(line: str, values: list, msg: str = "") -> str | None:
    """``out[:, t] = h`` where the two shapes differ: the tensor written into was made with other sizes."""
    try:
        stmt = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript)):
        return None
    texts = {t: v.shape for t, v, n in values if isinstance(v, torch.Tensor)}
    base, part, value = (ast.unparse(stmt.targets[0].value), ast.unparse(stmt.targets[0]), ast.unparse(stmt.value))
    said = re.search(r"Target sizes: \[([\d, ]*)\]\. Tensor sizes: \[([\d, ]*)\]", msg)
    if said:   # the shapes PyTorch names (the value may be a call the line's evaluator does not run)
        sizes = [tuple(int(x) for x in g.split(",") if x.strip()) for g in said.groups()]
        texts.setdefault(part, torch.Size(sizes[0]))
        texts.setdefault(value, torch.Size(sizes[1]))
    if part not in texts or value not in texts:
        return None
    whole = f" ({base} is {_fmt(texts[base])})" if base in texts else ""
    index = stmt.targets[0].slice
    elts = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    if base in texts and len(elts) == 2 and isinstance(elts[0], ast.Constant) and elts[0].value is Ellipsis \
            and not isinstance(elts[1], ast.Slice):
        full = tuple(texts[base])
        axis = next((k for k in range(len(full)) if full[:k] + full[k + 1:] == tuple(texts[value])), None)
        if axis is not None and axis != len(full) - 1:
            at = ", ".join([":"] * axis + [ast.unparse(elts[1])])
            return (f"{part} has shape {_fmt(texts[part])} but {value} has shape {_fmt(texts[value])}: `...` stands "
                    f"for every axis BEFORE the index, so {part} picks position {ast.unparse(elts[1])} of the LAST "
                    f"axis of {base} {_fmt(full)}; the place of {value}'s shape is {base}[{at}] (axis {axis})")
    kept = [k for k, e in enumerate(elts) if isinstance(e, ast.Slice) and e.step is None and (
        isinstance(e.upper, ast.Constant) and e.upper.value == 1 and e.lower is None
        or e.upper is not None and e.lower is not None and ast.unparse(e.upper) == f"{ast.unparse(e.lower)} + 1")]
    shape_part, shape_value = tuple(texts[part]), tuple(texts[value])
    for k in kept:                  # x[:, :1] = v with v lacking that axis: the slice keeps it
        if k < len(shape_part) and shape_part[k] == 1 and shape_part[:k] + shape_part[k + 1:] == shape_value:
            at = ", ".join([":"] * k + [ast.unparse(elts[k].lower) if elts[k].lower is not None else "0"])
            return (f"{part} has shape {_fmt(shape_part)} but {value} has shape {_fmt(shape_value)}: the slice "
                    f"{ast.unparse(elts[k])} keeps axis {k} (with size 1), which {value} does not have; index that "
                    f"position instead, {base}[{at}], whose shape is {_fmt(shape_value)}")
    return (f"{part} has shape {_fmt(texts[part])} but {value} has shape {_fmt(texts[value])}: {base} was "
            f"made with other sizes than what is written into it{whole}: check the line that creates it (made "
            "like another tensor, e.g. empty_like(x) or zeros_like(x), where the sizes of the values are needed?)")


def _loss_rows_hint(values: list) -> str | None:
    """F.cross_entropy / nll_loss with another number of score rows than targets: the two shapes, and a step
    too many or too few when the two counts differ by a whole multiple of a common size."""
    for node, (ts, s), (tt, t) in _loss_calls(values):
        if s is None or t is None:
            continue
        n, m = int(s.shape[0]), int(t.shape[0])
        hint = (f"{ts} has {n} rows of scores but {tt} has {m} targets: one row of scores per target token, "
                "both flattened from tensors with the same batch and time axes")
        flat = node.args[0]   # X.reshape(-1, k) / X.view(-1, k) with k not X's last (classes) axis
        if (isinstance(flat, ast.Call) and isinstance(flat.func, ast.Attribute) and flat.func.attr in (
                "reshape", "view") and s.dim() == 2):
            whole = _value_at(flat.func.value, values)
            src = ast.unparse(flat.func.value)
            if isinstance(whole, torch.Tensor) and whole.dim() >= 2 and whole.shape[-1] != s.shape[-1]:
                return (hint + f"; {src} is {_fmt(tuple(whole.shape))} with the classes on its LAST axis "
                        f"({whole.shape[-1]}), but `{ts}` makes rows of {s.shape[-1]} entries (another axis' "
                        f"size): `{src}.{flat.func.attr}(-1, {src}.shape[-1])` gives one row of "
                        f"{whole.shape[-1]} scores per target")
        masked = [ast.unparse(a) for a in node.args[:2] if isinstance(a, ast.Subscript)
                  and getattr(_value_at(a.slice, values), "dtype", None) == torch.bool]
        if len(masked) == 1:
            return (hint + f"; {masked[0]} keeps only the entries its mask selects and the other argument keeps "
                    "them all: mask both the same way (or neither, with ignore_index=)")
        step = math.gcd(n, m)
        if step > 1 and abs(n - m) == step and min(n, m) // step >= 1:
            hint += (f"; they differ by {step} rows, one step for a batch of {step}? (a loop that runs one step "
                     "too many or too few, or targets not shifted by one)")
        return hint
    return None


def _attribute_hint(value: AttributeError) -> str | None:
    """``'X' object has no attribute 'name'``: the method of X that sets ``self.name`` (it exists only after that
    method has run), else the attribute names of X that are close to ``name``."""
    import difflib

    name, obj = getattr(value, "name", None), getattr(value, "obj", None)
    if not name or obj is None or isinstance(obj, types.ModuleType):
        return None
    if type(obj) is str and hasattr(torch.Tensor, name) and len(obj) <= 40:
        return (f"that object is the string {obj!r}, not a tensor: a dict unpacked or iterated (a, b = d; for k in d) "
                "gives its KEYS, the strings; read the values with d[key], d.values() or d.items()")
    if type(obj) is tuple and hasattr(torch.Tensor, name):
        items = ", ".join(_described(v) if isinstance(v, torch.Tensor) else type(v).__name__ for v in obj[:3])
        return (f"that object is a tuple of {len(obj)} ({items}) where a tensor is meant: a call that returns several "
                "values (an encoder's (outputs, h), an nn.LSTM's (output, (h_n, c_n)), a cell's (h, c)) kept whole "
                "in one name? unpack it where it is made, e.g. `_, h = encoder(...)`")
    if isinstance(obj, types.FunctionType) and hasattr(torch.nn.Module, name):
        return (f"{obj.__name__} is a plain function, not an nn.Module: call it as it is, {obj.__name__}(...); "
                f".{name} belongs to modules (nn.LSTMCell, nn.Linear, ...)")
    if type(obj) is list and hasattr(torch.Tensor, name):
        return (f"that object is a Python {type(obj).__name__}, where a tensor is meant (a {type(obj).__name__} has "
                f"no .{name}): a .tolist() or a comprehension made it one; keep the tensor where it goes on to "
                "PyTorch code, and convert to numbers only where numbers are needed (torch.stack for a list of "
                "tensors)")
    setter = re.compile(rf"\bself\.{re.escape(name)}\s*(=[^=]|:)")
    for cls in type(obj).__mro__:
        if cls.__module__ == "builtins" or cls.__module__.startswith("torch."):
            continue
        for meth, fn in vars(cls).items():
            if not isinstance(fn, types.FunctionType) or meth == "__init__":
                continue
            try:
                src = textwrap.dedent(inspect.getsource(fn))
            except (OSError, TypeError):
                continue
            layer = re.search(rf"\bself\.{re.escape(name)}\s*=\s*((?:torch\.)?nn\.\w+)\(", src)
            if layer:       # a layer built in forward: new random weights at each call, never trained
                return (f"{type(obj).__name__}.{name} is a layer built in its method {meth} (self.{name} = "
                        f"{layer.group(1)}(...)): build layers in __init__, so that they exist from the start, are "
                        f"in model.parameters() for the optimizer, and keep their weights from one call to the next "
                        f"(one built in {meth} is a new random layer at every call)")
            if setter.search(src):
                return (f"{type(obj).__name__}.{name} is set by its method {meth} (self.{name} = ...), so it "
                        f"exists only once {meth} has run: read it after the call to {meth} (the value of "
                        "the step just taken), not before")
    try:
        close = difflib.get_close_matches(name, [a for a in dir(obj) if not a.startswith("__")], n=2)
    except Exception:  # noqa: BLE001 - an object whose dir() fails
        close = []
    if close:
        return f"did you mean {' or '.join(close)}?"
    if type(obj).__name__.startswith("_") and isinstance(obj, torch.nn.Module):     # a test's stand-in model
        return (f"the test gives your function a model of its own (a {type(obj).__name__}), which has no .{name}: "
                f"your function must work for any model, so use only what the docstring promises of it (its methods "
                f"and what they return: a size from a result's shape) and what every nn.Module has (model(x), "
                f"model.parameters() for ALL the weights, model.train()/eval()), not an attribute of one class")
    return None


def _joined_sizes(values: list) -> str:
    """`` (the parts joined: h 4 + c 4 + emb 3 = 11)`` for a torch.cat on the line, else ``""``."""
    for text, value, node in values:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cat"
                and node.args and isinstance(node.args[0], (ast.List, ast.Tuple))):
            parts = [(ast.unparse(e), _value_at(e, values)) for e in node.args[0].elts]
            if parts and all(isinstance(v, torch.Tensor) and v.dim() for _, v in parts):
                sizes = " + ".join(f"{t} {int(v.shape[-1])}" for t, v in parts)
                return f" (the parts joined: {sizes} = {sum(int(v.shape[-1]) for _, v in parts)})"
    return ""

def _cat_axis_note(values: list, env: dict, built: int) -> str:
    """A torch.cat on the line that joins along another axis than the features a layer built for ``built`` inputs
    needs: without ``dim=`` (dimension 0, the batch) where the parts' last axes add up to ``built``, or a list of
    ``(B, built)`` items joined along their existing axis where a new one (torch.stack) is meant; in words, else
    ``""``."""
    for text, value, node in values:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "cat", "concat", "concatenate") and node.args):
            continue
        dim = next((k.value for k in node.keywords if k.arg == "dim"), node.args[1] if len(node.args) > 1 else None)
        if isinstance(node.args[0], (ast.List, ast.Tuple)):
            parts = [_value_at(e, values) for e in node.args[0].elts]
        else:
            held = env.get(node.args[0].id) if isinstance(node.args[0], ast.Name) else None
            parts = list(held) if isinstance(held, (list, tuple)) else []
        if not parts or not all(isinstance(v, torch.Tensor) and v.dim() for v in parts):
            continue
        shapes = " and ".join(dict.fromkeys(_fmt(tuple(v.shape)) for v in parts))
        if dim is None and sum(int(v.shape[-1]) for v in parts) == built and parts[0].dim() > 1:
            return (f"{ast.unparse(node)} has no dim=, so it joins the parts ({shapes}) along dimension 0, the batch "
                    f"(more rows); their features add up to the {built} the layer takes when joined along the last "
                    "axis: torch.cat([...], dim=-1)")
        if dim is not None and all(int(v.shape[-1]) == built for v in parts) and len(parts) > 1:
            return (f"{ast.unparse(node)} joins the {len(parts)} items ({shapes}) along an axis they already have, "
                    f"which grows {len(parts)} times; torch.stack({ast.unparse(node.args[0])}, dim={ast.unparse(dim)}) "
                    f"puts them along a NEW axis (a time axis of {len(parts)} steps), keeping the {built} features last")
    return ""


def _unpacked_parameters_hint(line: str, env: dict) -> str | None:
    """``a, b, c, d = module.parameters()`` (or ``.children()``, ``.buffers()``) with another number of names than
    the module has: which ones it has, by name (a layer built with ``bias=False`` has no bias parameters)."""
    try:
        node = ast.parse(line.split(" #")[0].strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and isinstance(node.targets[0], (ast.Tuple, ast.List))):
        return None
    kind = node.value.func.attr
    if kind not in ("parameters", "children", "buffers"):
        return None
    receiver = node.value.func.value
    while isinstance(receiver, ast.Attribute):   # cell, self.cell: names and attributes only (nothing is called)
        receiver = receiver.value
    if not isinstance(receiver, ast.Name):
        return None
    try:
        owner = _eval_pure(node.value.func.value, env, {})     # no code of the student's runs again
    except _Unsafe:
        return None
    if not isinstance(owner, torch.nn.Module):
        return None
    named = {"parameters": owner.named_parameters, "children": owner.named_children,
             "buffers": owner.named_buffers}[kind]
    names = [n for n, _ in named()]
    text = ast.unparse(node.value)
    bias = "bias_ih" if isinstance(owner, (torch.nn.RNNCellBase, torch.nn.RNNBase)) else "bias"
    bias = "bias_ih_l0" if isinstance(owner, torch.nn.RNNBase) else bias
    return (f"{text} gives {len(names)} here ({', '.join(names) or 'none'}) for {len(node.targets[0].elts)} names: "
            f"what a module holds depends on how it was built (one built with bias=False has no bias parameters): "
            f"read them by name (e.g. getattr({ast.unparse(node.value.func.value)}, '{bias}', None) is None "
            f"without biases) rather than by position")


def _features_out(module) -> int | None:
    """How many features a layer's output has on its last axis (a recurrent layer's: both directions); None for a
    module of another kind."""
    if isinstance(module, torch.nn.Linear):
        return module.out_features
    if isinstance(module, torch.nn.Embedding):
        return module.embedding_dim
    if isinstance(module, torch.nn.RNNBase):
        return module.hidden_size * (2 if module.bidirectional else 1)
    return None


def _stacked_layer_hint(text: str, layer, fed: int, env: dict) -> str | None:
    """When ``layer``, given ``fed`` features, is a layer above the first of a stack (an nn.ModuleList or
    nn.Sequential of the function's ``self``/``model``) whose FIRST layer takes ``fed`` features: every layer is given
    the stack's input, where each one above the first reads the output of the one below it; None otherwise."""
    for owner_name in ("self", "model"):
        owner = env.get(owner_name)
        if not isinstance(owner, torch.nn.Module):
            continue
        for name, stack in owner.named_children():
            if not isinstance(stack, (torch.nn.ModuleList, torch.nn.Sequential)):
                continue
            layers = list(stack)
            k = next((i for i, m in enumerate(layers) if m is layer), None)
            first = layers[0] if layers else None
            if k and isinstance(first, torch.nn.RNNBase) and first.input_size == fed:
                below = layers[k - 1]
                said = (f" (the outputs of {owner_name}.{name}[{k - 1}] below it)"
                        if _features_out(below) == layer.input_size else "")
                return (f"{text} is {owner_name}.{name}[{k}], built with input_size={layer.input_size}{said}, but "
                        f"what you give it has {fed} features, the "
                        f"size of the stack's input (what {owner_name}.{name}[0] takes): every layer is given the "
                        f"input x; pass each layer's output on as the next layer's input (the layer is built "
                        f"right)")
    return None


def _rnn_input_hint(msg: str, line: str, env: dict) -> str | None:
    """PyTorch's "input.size(-1) must be equal to input_size. Expected X, got Y" at a line that calls a recurrent
    layer: the tensor given, and which other layer of the same module makes Y features (the tensor given is that
    layer's output, fed where the input is meant?); None when the call cannot be read."""
    sizes = re.search(r"must be equal to input_size\. Expected (\d+), got (\d+)", msg)
    if not sizes:
        return None
    built, fed = int(sizes.group(1)), int(sizes.group(2))
    for owner_name, attr, arg in re.findall(r"\b(self|model)\.(\w+)\(\s*([^,()]+(?:\([^()]*\))?)", line):
        owner = env.get(owner_name)
        layer = getattr(owner, attr, None)
        if not (isinstance(layer, torch.nn.RNNBase) and layer.input_size == built):
            continue
        makers = []
        for name, m in owner.named_children():
            if _features_out(m) == fed:
                makers.append((m is layer, f"{owner_name}.{name}"))
        makers.sort(key=lambda k: not k[0])       # the layer's own output first (fed back as its input?)
        said = (f", as many as {makers[0][1]} makes: is `{arg.strip()}` {makers[0][1]}'s"
                + (" own" if makers[0][0] else "") + f" output fed back, where a tensor of the input's {built} "
                "features is meant (what the notebook says each step is given)?" if makers else
                f": give it a tensor with {built} features on its last axis")
        return (f"{owner_name}.{attr} is an nn.{type(layer).__name__} built with input_size={built} (the input's "
                f"features), but `{arg.strip()}` has {fed} on its last axis{said}")
    return None


def _shape_hint_at(msg: str, line: str, env: dict, source: str = "") -> str | None:
    """A hint made from the actual shapes on the failing ``line`` (``env``: the frame's globals and locals)."""
    if "must be equal to input_size" in msg:
        fed = _rnn_input_hint(msg, line, env)
        if fed:
            return fed
    if "values to unpack" in msg:
        unpacked = _unpacked_parameters_hint(line, env)
        if unpacked:
            return unpacked
    try:
        values = _line_values(line, env)
    except Exception:  # noqa: BLE001 - a hint never hides the error
        values = []
    if not values:   # (a line that is not a whole statement has none; the function's source still helps here)
        try:
            return _where_condition_hint([], source) if "condition to be a boolean tensor" in msg else None
        except Exception:  # noqa: BLE001
            return None
    if any(key in msg for key, hint in _ERROR_HINTS if hint is _DOUBLE_FLOAT):     # which tensor is float64
        tensors = [(t, v.dtype) for t, v, n in values if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript))
                   and isinstance(v, torch.Tensor)]
        doubles = [t for t, dtype in tensors if dtype == torch.float64]
        singles = [t for t, dtype in tensors if dtype == torch.float32]
        if doubles and singles:
            return (f"{doubles[0]} is float64 (double) and {singles[0]} float32 here: PyTorch does not mix them in a "
                    f"product; make {doubles[0]} float32 where it is made (or convert with .to({singles[0]}.dtype)), "
                    "or keep everything in one dtype")
    try:
        if any(isinstance(n, ast.Attribute) and n.attr == "T" and isinstance(_value_at(n.value, values), torch.Tensor)
               and _value_at(n.value, values).dim() > 2 for _, _, n in values):      # .T of a 3-D tensor there
            if any(k in msg for k in ("must match the size", "cannot be multiplied", "Expected size", "mismatch")):
                return (".T on a tensor of more than 2 dimensions reverses EVERY axis (the batch axis too): use "
                        ".transpose(-2, -1) or .mT to swap the last two")
        sizes = re.search(r"cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", msg)
        if sizes:
            fed, built = int(sizes.group(2)), int(sizes.group(3))
            called = [(f"{o}.{a}", getattr(env.get(o), a, None)) for o, a in re.findall(r"\b(self|model)\.(\w+)\(", line)]
            called += [(n, env.get(n)) for n in re.findall(r"(?<![.\w])(\w+)\(", line)]    # layer(x) in a loop
            for text, layer in called:
                if isinstance(layer, torch.nn.Linear) and layer.in_features == built:
                    owner = env.get(text.split(".")[0]) if "." in text else None
                    other = [f"{text.split('.')[0]}.{n}" for n, m in (owner.named_children() if isinstance(
                        owner, torch.nn.Module) else []) if isinstance(m, torch.nn.Linear) and m.in_features == fed
                        and m.out_features == layer.out_features and m is not layer]
                    if other:
                        return (f"{text} is an nn.Linear built for {built} input features, but the tensor you give "
                                f"it has {fed} on its last axis{_joined_sizes(values)}; {other[0]} is built for "
                                f"{fed} input features (and the same {layer.out_features} outputs): is {other[0]} "
                                f"the layer meant for that tensor?")
                    cat = _cat_axis_note(values, env, built)
                    if cat:
                        return (f"{text} is an nn.Linear built for {built} input features, but the tensor you give "
                                f"it has {fed} on its last axis: {cat}")
                    if fed == layer.out_features != built:      # its own output given to it again
                        return (f"{text} is an nn.Linear from {built} features to {fed}, and the tensor you give "
                                f"it has {fed} on its last axis, its OUTPUT size: that tensor already went through "
                                f"{text} (or a layer like it) -- {text} applied twice? give it the {built}-feature "
                                "tensor, once")
                    return (f"{text} is an nn.Linear built for {built} input features, but the tensor you "
                            f"give it has {fed} on its last axis{_joined_sizes(values)}: give it the tensor it was "
                            f"built for (the parts the equation asks for), or, if you built the layer yourself, "
                            f"build it with in_features={fed}")
                if isinstance(layer, torch.nn.RNNBase) and layer.input_size == built:
                    stacked = _stacked_layer_hint(text, layer, fed, env)
                    if stacked:
                        return stacked
                    return (f"{text} is an nn.{type(layer).__name__} built with input_size={built}, but what you give "
                            f"it has {fed} features: build it with input_size={fed} (a layer above another one reads "
                            f"that layer's outputs, H or 2H features, not the input's)")
        if "The expanded size of the tensor" in msg:
            written = _written_hint(line, values, msg)
            if written:
                return written
        if "to match target batch_size" in msg:
            rows = _loss_rows_hint(values)
            if rows:
                return rows
        packed = _packed_hint(line, env, source) if source else None
        if packed:
            return packed
        if any(k in msg for k in ("cannot be multiplied", "size mismatch", "Expected size for first two dimensions",
                                  "batch2", "inconsistent tensor size", "must match the size of tensor b",
                                  "both arguments to matmul")):
            product = _matmul_hint(values, env, source, msg)
            if product:
                return product
        if "Sizes of tensors must match" in msg or "stack expects each tensor to be equal size" in msg:
            return _join_hint(msg, values)
        if "must match the size of tensor b" in msg:
            sizes = re.search(r"tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", msg)
            return _broadcast_hint(values, {int(sizes.group(1)), int(sizes.group(2))} if sizes else None)
        if "must have same number of dimensions" in msg:
            return _ndim_hint(values)
        if "values to unpack" in msg:
            return _unpack_hint(msg, values, line, env)
        if "not implemented for 'Long'" in msg or "not implemented for 'Int'" in msg:
            return _loss_order_hint(values)
        if "condition to be a boolean tensor" in msg:
            return _where_condition_hint(values, source)
        if re.search(r"Expected hx(\[\d\])? to be 1D or 2D, got 3D", msg):
            states = [e for _, _, n in values if isinstance(n, ast.Tuple) for e in n.elts]   # the (h, c) given
            three = list(dict.fromkeys(f"{ast.unparse(e)} {_fmt(tuple(v.shape))}" for e in states
                                       for v in [_value_at(e, values)] if isinstance(v, torch.Tensor) and v.dim() == 3))
            return ((f"{', '.join(three)}: " if three else "") + "a cell (nn.LSTMCell, nn.GRUCell, nn.RNNCell) takes "
                    "states of shape (B, H), without the leading (num_layers * directions) axis that nn.LSTM's states "
                    "have: make the initial state with zeros(B, H) (or take [0] of nn.LSTM's)")
    except Exception:  # noqa: BLE001
        return None
    return None


def _loss_order_hint(values: list) -> str | None:
    """A loss given the integer targets first and the float scores second (the arguments in each other's place)."""
    for node, (ta, a), (tb, b) in _loss_calls(values):
        if a is not None and not a.is_floating_point() and (b is None or b.is_floating_point()):
            second = (f"`{tb}` ({_dtype_name(b)}, {_fmt(tuple(b.shape))})" if b is not None
                      else f"`{ast.unparse(node.args[1])}`")
            return (f"F.{callee_name(node)} takes the float SCORES first and the integer targets second; here "
                    f"`{ta}` ({_dtype_name(a)}, {_fmt(tuple(a.shape))}) comes first and "
                    f"{second} second: the two arguments in each other's place")
    return None


def _loss_calls(values: list):
    """``(call, (text, scores), (text, targets))`` for each F.cross_entropy / nll_loss call on the line (a value
    is None when it is not a tensor)."""
    for _, _, node in values:
        if isinstance(node, ast.Call) and callee_name(node) in ("cross_entropy", "nll_loss") and len(node.args) >= 2:
            yield node, _value_of(node.args[0], values), _value_of(node.args[1], values)


def _dtype_name(t: torch.Tensor) -> str:
    """``int64`` for a torch.int64 tensor."""
    return str(t.dtype).replace("torch.", "")


def _where_condition_hint(values: list, source: str) -> str | None:
    """torch.where with a condition that is not bool: the condition's dtype, and a mask of the function made with
    torch.ones/zeros/full and no dtype (float by default)."""
    cond = next(((t, v) for t, v, n in values if isinstance(n, ast.Call) and callee_name(n) == "where" and n.args
                 for t, v in [_value_of(n.args[0], values)] if v is not None), (None, None))
    made, masks = [], []   # float-made tensors of the function; those bound to a mask-like name (or the condition)
    tree = _source_tree(source) if source else None
    for n in ast.walk(tree) if tree is not None else ():
        if (isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and callee_name(n.value) in (
                "ones", "zeros", "full", "empty", "ones_like", "zeros_like")
                and not any(k.arg == "dtype" for k in n.value.keywords)):
            made.append(f"`{ast.unparse(n.value)}`")
            names = {ast.unparse(t) for t in n.targets}
            if cond[0] in names or any(w in x.lower() for x in names for w in ("mask", "keep", "real", "valid")):
                masks.append(made[-1])
    made = masks or (made if len(made) == 1 else [])
    hint = (f"the condition `{cond[0]}` is a {_dtype_name(cond[1])} tensor; torch.where needs "
            "a bool one (True: take the first value)") if cond[0] else "torch.where needs a bool condition"
    if made:
        hint += (f"; {made[0]} in this function makes a FLOAT tensor (the default dtype): give it dtype=torch.bool "
                 "if it is a mask, or build the mask from a comparison (e.g. t < lengths[:, None])")
    return hint


def _cell_label(shell, filename: str) -> str | None:
    try:
        name = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # noqa: BLE001 - any shell without the map
        name = None
    return f"Cell {name[1]}" if name else None


def _argument_shapes(frame) -> str:
    """``x (16, 3), y (512,)``: the arguments a frame's function received, read with plain type checks only (a
    tensor's shape, else the type's name; ``self`` left out): nothing of the student's runs while it is read."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:count])
    if code.co_flags & 0x04:                                  # *args
        names.append(code.co_varnames[count])
    parts = []
    for name in names:
        if name == "self" or name not in frame.f_locals:
            continue
        v = frame.f_locals[name]
        if isinstance(v, torch.Tensor):
            parts.append(f"{name} {tuple(v.shape)}")
        elif type(v) in (int, float, bool, str) or v is None:
            parts.append(f"{name} {v!r}" if len(repr(v)) <= 20 else f"{name} ({type(v).__name__})")
        else:
            parts.append(f"{name} ({type(v).__name__})")
    return ", ".join(parts)


def _caller_of(mine: list, tb, shell) -> tuple[str, str]:
    """When the error comes from a function of the student's (``mine[-1]``) that another function of the student's
    called, ``(', called from your line "..." (Cell In[12], line 9, in fit)', 'train_step received x (16, 3), ...:
    ...')``, else ``("", "")``: the inner part may be right and the outer one call it with wrong arguments."""
    import traceback

    inner = mine[-1]
    if inner.name.startswith("<"):                            # a generator expression or lambda of the same function
        return "", ""
    first = len(mine) - 1
    while first > 0 and (mine[first - 1].filename, mine[first - 1].name) == (inner.filename, inner.name):
        first -= 1                                            # a recursion: its outermost call
    if first == 0:
        return "", ""
    call = mine[first - 1]
    frame = None
    for fr, lineno in traceback.walk_tb(tb):
        if fr.f_code.co_filename == inner.filename and fr.f_code.co_name == inner.name:
            frame = fr
            break
    try:
        shapes = _argument_shapes(frame) if frame is not None else ""
        owner = frame.f_locals.get("self") if frame is not None else None
    except Exception:  # noqa: BLE001 - a hint never hides the error
        shapes, owner = "", None
    name = f"{type(owner).__name__}.{inner.name}" if owner is not None else inner.name   # a method: its class
    where = (f', called from your line "{(call.line or "").strip()}" ({_cell_label(shell, call.filename)}, line '
             f"{call.lineno}, in {call.name})")
    outer = None
    for fr, lineno in traceback.walk_tb(tb):
        if fr.f_code.co_filename == call.filename and fr.f_code.co_name == call.name and lineno == call.lineno:
            outer = fr
    try:
        swapped = (_swapped_hint(_line_nodes(call.line or ""), {**outer.f_globals, **outer.f_locals}, "")
                   if outer is not None else None)
    except Exception:  # noqa: BLE001 - a hint never hides the error
        swapped = None
    if swapped:                   # the caller's own line says what is wrong with what it passes
        return where, swapped
    if frame is not None and ".<locals>." in frame.f_code.co_qualname:   # a helper inside the caller: part of it
        return where, ""
    received = (f"{name} received {shapes}: " if shapes else "") + (
        f"if {name} passed its own test, check what {call.name} passes to it")
    return where, received


def _bindings(source: str, first: int) -> list:
    """``[(file line, names bound, the statement's first line, names read, branches, node)]`` of the assignments and
    for loops of a function's ``source`` (which starts at file line ``first``); ``branches``: the (if statement,
    branch) pairs the statement lies in."""
    tree = _source_tree(source)
    if tree is None:
        return []
    lines, out = source.splitlines(), []

    def visit(node, branches):
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST):
                    continue
                inner = (branches + ((id(node), field, node.lineno + first - 1),)
                         if isinstance(node, ast.If) and field != "test" else branches)
                if isinstance(child, ast.Assign):
                    targets, read = child.targets, child.value
                elif isinstance(child, (ast.AugAssign, ast.AnnAssign, ast.For)):
                    targets, read = [child.target], child.iter if isinstance(child, ast.For) else child.value
                else:
                    targets = None
                if targets is not None:
                    bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                    names = {n.id for n in ast.walk(read) if isinstance(n, ast.Name)} if read is not None else set()
                    out.append((child.lineno + first - 1, bound, lines[child.lineno - 1].strip(), names - bound,
                                inner, child))
                visit(child, inner)

    visit(tree, ())
    return sorted(out, key=lambda b: b[0])


def _ran(candidates: list, name: str, env: dict) -> list:
    """Of the bindings of ``name`` in the branches of one if statement, those that may have run: the ones whose
    value, evaluated now (pure code only), has the shape ``name`` has; all of them when that tells nothing."""
    got, kept = env.get(name), []
    for b in candidates:
        node = b[5]
        try:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = _eval_pure(node.value, env, {})
                if isinstance(value, torch.Tensor) and value.shape == got.shape:
                    kept.append(b)
        except Exception:  # noqa: BLE001 - a value that cannot be evaluated says nothing
            continue
    return kept if len(kept) == 1 else candidates


def _origin(name: str, before: int, bindings: list, wrong, env: dict) -> tuple | None:
    """The binding of ``name`` last before file line ``before`` (else the last one: a value carried round a loop),
    followed back through the tensors it reads while one of them has a wrong shape (``wrong(name)``): the first
    statement whose inputs all have the reference's shapes. When that binding lies in one branch of an if statement
    the others may have run instead: those of the branch that gives the shape seen, else every branch's.
    ``([(line, text)], the names followed)`` or None."""
    followed = [name]
    for _ in range(6):
        mine = [b for b in bindings if name in b[1]]
        if not mine:
            return None
        earlier = [b for b in mine if b[0] < before]
        last = (earlier or mine)[-1]
        if last[4]:                              # in a branch: every branch's last binding of the name
            branch_of, _, if_line = last[4][-1]
            inside = [b for b in (earlier or mine) if any(i == branch_of for i, _, _ in b[4])]
            ends = {}
            for b in inside:
                ends[next(f for i, f, _ in b[4] if i == branch_of)] = b
            prior = [b for b in mine if b[0] < if_line]
            if len(ends) < 2 and prior:            # one branch binds it: what came before the if may have run
                ends["before"] = prior[-1]
            chosen = _ran(list(ends.values()), name, env) if len(ends) > 1 else [last]
        else:
            chosen = [last]
        bad = [n for n in sorted(set().union(*(b[3] for b in chosen))) if wrong(n)]
        if not bad or bad[0] in followed or len(chosen) > 1:
            return [(b[0], b[2]) for b in chosen], followed
        name, before = bad[0], last[0]
        followed.append(name)
    return None


def _wrong_shapes(frame, test_line: str):
    """``shapes(name)`` for ``frame``: ``(its shape, the reference's)`` of a tensor variable whose shape differs from
    the reference's variable of the same name at this point of the visible test's ``test_line`` (recorded by
    ``python -m autograder.edit_hints``), else None; cached per name."""
    from seqcourse import calltrace, hints

    code, local = frame.f_code, frame.f_locals
    signature = calltrace.call_signature(code, local)

    @functools.cache
    def shapes(name):
        v = local.get(name)
        want = (hints.reference_shape(test_line, code.co_qualname, signature, name)
                if isinstance(v, torch.Tensor) else None)
        return (tuple(v.shape), want) if want is not None and tuple(v.shape) != want else None
    return shapes


def _made_from(names, shapes) -> str:
    """", made from z (2,) (the reference's: (2, 3))" for each name followed back (``shapes``: :func:`_wrong_shapes`)."""
    return "".join(f", made from {n} {_fmt(shapes(n)[0])} (the reference's: {_fmt(shapes(n)[1])})" for n in names)


def _caller_frame(mine: list, tb):
    """``(the frame, its traceback entry)`` of the student's function that called the innermost one (``mine[-1]``),
    or None."""
    import traceback

    inner = mine[-1]
    callers = [f for f in mine[:-1] if (f.filename, f.name) != (inner.filename, inner.name)]
    if not callers:
        return None
    call = callers[-1]
    for fr, lineno in traceback.walk_tb(tb):
        if fr.f_code.co_filename == call.filename and lineno == call.lineno:
            return fr, call
    return None


def _argument_made_in_caller(mine: list, tb, test_line: str, code, argument: str) -> str | None:
    """Where the caller made what it passes as ``argument`` to the innermost function (whose code is ``code``): the
    expression at the caller's line, followed back through the tensors it is made of (the reference's shapes at that
    point of this visible test) to the first line whose inputs are all right; a tuple passed whole (an LSTM's state)
    is followed through the tensors it holds. In words, or None."""

    found = _caller_frame(mine, tb)
    if found is None:
        return None
    frame, call = found
    env = {**frame.f_globals, **frame.f_locals}
    params = list(code.co_varnames[:code.co_argcount])
    expr = None
    for node in (n for n in _line_nodes(call.line or "") if isinstance(n, ast.Call)):
        fn = _operand(node.func, env)
        target = getattr(getattr(fn, "forward", fn), "__code__", None)
        if target is not code:
            continue
        names = params[1:] if params[:1] == ["self"] else params
        passed = dict(zip(names, node.args)) | {k.arg: k.value for k in node.keywords if k.arg}
        expr = passed.get(argument)
    if not isinstance(expr, ast.Name):
        return None
    try:
        source = inspect.getsource(frame.f_code)
    except (OSError, TypeError):
        return None
    local = frame.f_locals
    shapes = _wrong_shapes(frame, test_line)

    origin = _origin(expr.id, call.lineno, _bindings(source, frame.f_code.co_firstlineno), shapes, local)
    if not origin or len(origin[1]) < 2 and not shapes(expr.id):
        return None
    lines, followed = origin
    via = _made_from(followed[1:], shapes)
    said = " or ".join(f'"{text}"' for _, text in lines)
    return (f'your line "{(call.line or "").strip()}" passes {expr.id}{via}; it goes wrong at your line {said}'
            + (" (whichever ran)" if len(lines) > 1 else ""))


def _made_earlier_in_caller(mine: list, tb, test_line: str) -> tuple | None:
    """When the error is raised in a function of the student's that another one called (given a tensor of a shape
    its recorded run never saw, so nothing was recorded for it): :func:`_made_earlier_hint` at the CALLER's line,
    where the tensors passed may have another shape than the reference's variables of the same names."""
    found = _caller_frame(mine, tb)
    if found is None:
        return None
    frame, call = found
    try:
        source = inspect.getsource(frame.f_code)
    except (OSError, TypeError):
        return None
    return _made_earlier_hint(frame, call.line or "", call.lineno, test_line, source)


def _join_swapped(lines: list, got: tuple, want: tuple) -> str:
    """When the one line that made a tensor joins a list with torch.cat and the reference's shape is what torch.stack
    of the same items gives (or the reverse): that, in words; ``""`` otherwise."""
    if len(lines) != 1:
        return ""
    m = re.search(r"\b(cat|concat|stack)\(", lines[0][1])
    if not m:
        return ""
    cat = m.group(1) != "stack"
    flat, deep = (got, want) if cat else (want, got)
    if len(deep) != len(flat) + 1:
        return ""
    for d in range(len(flat)):
        if flat[:d] + flat[d + 1:] == deep[:d] + deep[d + 2:] and flat[d] == deep[d] * deep[d + 1]:
            if cat:
                return (f"torch.cat joins the items along an EXISTING axis ({_fmt(got)}), torch.stack puts them on a "
                        f"NEW one: torch.stack(..., dim={d}) of the same items gives {_fmt(want)}")
            return (f"torch.stack puts the items on a NEW axis ({_fmt(got)}), torch.cat joins them along an EXISTING "
                    f"one: torch.cat(..., dim={d}) of the same items gives {_fmt(want)}")
    return ""


def _argument_read(lines: list, bindings: list, args: set) -> str | None:
    """The argument that the one binding in ``lines`` only unpacks or indexes (``h, c = state``; ``h = state[0]``),
    or None."""
    if len(lines) != 1:
        return None
    node = next((b[5] for b in bindings if b[0] == lines[0][0]), None)
    v = node.value if isinstance(node, ast.Assign) else None
    while isinstance(v, (ast.Subscript, ast.Attribute)):
        v = v.value
    return v.id if isinstance(v, ast.Name) and v.id in args else None


def _made_earlier_hint(frame, line: str, lineno: int, test_line: str, source: str,
                       caller=None) -> str | None:
    """When a tensor on the failing ``line`` has another shape than the reference's variable of the same name has at
    this point of this visible test (recorded by ``python -m autograder.edit_hints``): the tensor was made wrong
    earlier, at the first statement (followed back through the tensors it was made from) whose inputs all have
    the reference's shapes: ``(hint, the names bound at those statements)``. None when every name there has the
    reference's shape or none was recorded. A tensor that only comes out of an argument (``h, c = state``) is
    followed into the caller by ``caller(argument)`` (see :func:`_argument_made_in_caller`) when given."""

    code, local = frame.f_code, frame.f_locals
    args = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    shapes = _wrong_shapes(frame, test_line)

    wrong = [n for n in dict.fromkeys(re.findall(r"(?<![.\w])([A-Za-z_]\w*)", line)) if shapes(n)]
    if not wrong:
        return None
    bindings = _bindings(source, code.co_firstlineno)
    said, bound = [], set()
    for name in wrong[:3]:
        got, want = shapes(name)
        found = _origin(name, lineno, bindings, shapes, local)
        if found:
            lines, followed = found
            at = {line for line, _ in lines}
            bound |= {n for b in bindings if b[0] in at for n in b[1]}
            via = _made_from(followed[1:], shapes)
            said_lines = " or ".join(f'"{text}"' for _, text in lines)
            where = f"{via}; it goes wrong at your line {said_lines}" + (" (whichever ran)" if len(lines) > 1 else "")
            argument = _argument_read(lines, bindings, args) if not followed[1:] else None
            passed = caller(argument) if argument and caller else None
            if passed:         # only unpacked from an argument: where the caller made that argument
                bound -= {n for b in bindings if b[0] in at for n in b[1]}
                where = f"; it comes out of the argument {argument} at your line {said_lines}, and {passed}"
            joined = [m.group(1) for _, text in lines for m in [re.search(r"\b(?:stack|cat)\(\s*(\w+)\b", text)] if m]
            added = [m.groups() for _, text in lines
                     for m in [re.search(r"\b(stack|cat)\(\s*(\w+)\s*\+\s*(\w+)\s*[,)]", text)] if m]
            swapped = _join_swapped(lines, got, want) if not followed[1:] else ""
            if added and all(isinstance(local.get(n), list) for n in added[0][1:]) and len(lines) == 1:
                how, a, b = added[0]     # list + list: the lists joined end to end, not the tensors side by side
                bound -= {n for b_ in bindings if b_[0] in at for n in b_[1]}     # no edit hint: this says it
                where = (f"; it is made at your line {said_lines} from `{a} + {b}`: + of two Python lists joins them "
                         f"end to end ({len(local[a])} + {len(local[b])} = {len(local[a]) + len(local[b])} items, all "
                         f"of {a}'s, then all of {b}'s), so torch.{how} sees them as {len(local[a]) + len(local[b])} "
                         f"positions; to put the two tensors of each position side by side, join them along the "
                         f"features: torch.cat([torch.stack({a}, 1), torch.stack({b}, 1)], dim=-1) (or torch.cat of "
                         "each pair)")
            elif swapped:    # the items are right: cat where stack is meant (or the reverse)
                where = f"; it is made at your line {said_lines}: {swapped}"
            elif joined:   # a list joined there: what filled it is where it went wrong
                items = local.get(joined[0])
                count = f" ({len(items)} items)" if isinstance(items, (list, tuple)) else ""
                where = (f"{via}; it is made at your line {said_lines} from the list {joined[0]}{count}: what fills "
                         "that list goes wrong (how many items, of which shape: the loop that appends to it?)")
        else:
            passed = caller(name) if caller and name in args else None
            where = (f"; {name} is an argument of {code.co_name}, and {passed}" if passed else
                     f"; {name} is an argument of {code.co_name}: the caller passes it with that shape" if name in args
                     else "; it was made wrong before this line")
        said.append(f"{name} has shape {_fmt(got)} here, but {_fmt(want)} in the reference solution at this point of "
                    f"this test{where}")
    return ("; ".join(said) + " -- fix it there (unless yours is meant to have another shape), not at this line",
            bound)


_MODULES = {"F": "import torch.nn.functional as F", "nn": "from torch import nn", "torch": "import torch",
            "math": "import math", "np": "import numpy as np"}


def _name_hint(value: BaseException, line: str, function: str, local: dict, shared: dict | None = None) -> str | None:
    """A NameError's or KeyError's cause from the name and the student's line: a module never imported, a
    comprehension whose for clauses are in the wrong order, a variable's name written as a string key, a name of
    another exercise where the notebook's (``shared``: its globals) is like it (``PAD_INDEX`` for ``PAD``)."""
    if isinstance(value, NameError) and getattr(value, "name", None):
        name = value.name
        if name in _MODULES:
            return f"{name} is a module: `{_MODULES[name]}` at the top of your cell"
        if re.search(rf"\bfor\b.*\bin\b.*\b{re.escape(name)}\b.*\bfor\s+[\w, ]*\b{re.escape(name)}\b", line):
            return (f"in a comprehension with two for clauses the first one is the outer loop: {name} is used by "
                    f"a clause before the one that defines it (write (t for seq in seqs for t in seq))")
        import difflib

        names = [n for n in local if not n.startswith("_")]
        near = [n for n in names if name.startswith(n + "_") or n.startswith(name + "_")] or \
            difflib.get_close_matches(name, names, n=2, cutoff=0.6)
        if near and function and not function.startswith("<"):
            return (f"{function} has no variable {name}; its names here are {', '.join(names[:8])}: "
                    f"{' or '.join(near)} meant? (a name from another function or exercise does not carry over)")
        kept = [n for n, v in (shared or {}).items() if not n.startswith("_") and not inspect.ismodule(v)]
        parts = set(p for p in name.split("_") if p)
        alike = [n for n in kept if n != name and n.isupper() == name.isupper()
                 and (n in parts or set(n.split("_")) < parts or name in n.split("_"))]
        alike += [n for n in difflib.get_close_matches(name, kept, n=2, cutoff=0.75) if n not in alike]
        if alike and not re.search(rf"\b{re.escape(name)}\s*\(", line):     # (a function called: below)
            return (f"{name} is not a name of this notebook (another exercise's name, or a typo?); it has "
                    f"{' and '.join(alike[:3])}: " + ("is that the one meant?" if len(alike) == 1 else
                                                     "one of these?"))
        if re.search(rf"\b{re.escape(name)}\s*\(", line):      # a function called that no cell run so far defines
            return (f"no cell run so far defines {name}: if it is the function of another part of this notebook, "
                    "that part's cell must run first, and the notebook runs top to bottom (in grading too), so the "
                    "function of a LATER part does not exist yet when this cell's tests run: use only the parts "
                    "above this one, or write the step here")
        return None
    if isinstance(value, KeyError) and value.args and isinstance(value.args[0], str):
        key = value.args[0]
        if key in local and re.search(rf"\[\s*(['\"]){re.escape(key)}\1\s*\]", line):
            return f"the key is the string '{key}', not your variable {key}: write [{key}] without quotes"
    return None

# Calls and operands on the failing line: Python's and PyTorch's own errors about a call's arguments, a dict's
# key, a list's index or an operator's operands are followed by what the line gave them (read with plain type checks:
# nothing of the student's runs), and, for a call, how it takes its arguments.
def _operand(node, env):
    """The value of a name, an attribute, a constant or a subscript of a list, tuple or dict on the failing line,
    read without running any of the student's code; ``_MISSING`` when it cannot be read so."""
    try:
        return _eval_pure(node, env, {})
    except Exception:  # noqa: BLE001 - then the plain reads below
        pass
    if isinstance(node, ast.Name):
        return env.get(node.id, _MISSING)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute):
        base = _operand(node.value, env)
        if isinstance(base, types.ModuleType):
            return getattr(base, node.attr, _MISSING)
        if isinstance(base, torch.nn.Module):
            for table in ("_parameters", "_buffers", "_modules"):
                if node.attr in vars(base).get(table, {}):
                    return vars(base)[table][node.attr]
            return vars(base).get(node.attr, _MISSING)
        return _MISSING
    if isinstance(node, ast.Subscript):
        base, key = _operand(node.value, env), _operand(node.slice, env)
        if type(base) in (list, tuple) and type(key) is int and -len(base) <= key < len(base):
            return base[key]
        if type(base) is dict and type(key) in (str, int) and key in base:
            return base[key]
    return _MISSING


def _described(value) -> str:
    """A value as a message shows it: a tensor's shape, a number, a tuple or list by its length and items' kind."""
    if isinstance(value, torch.Tensor):
        return _fmt(tuple(value.shape)) if value.dim() else f"a 0-d tensor ({value.item():.4g})"
    if type(value) in (int, float, bool) or value is None:
        return repr(value)
    if isinstance(value, (tuple, list)):
        kinds = {type(v).__name__ for v in value}
        kind = ("tensors" if kinds == {"Tensor"} or kinds == {"Parameter"} else
                f"{kinds.pop()}s" if len(kinds) == 1 else "items")
        return f"a {type(value).__name__} of {len(value)} {kind}"
    return f"a {type(value).__name__}"


def _given(value) -> str:
    """What an argument holds, after its expression: `` (2, 3)`` for a tensor, `` 4`` for a number, `` (a tuple of 2
    tensors)`` for anything else; ``""`` when it could not be read."""
    if value is _MISSING:
        return ""
    said = _described(value)
    return f" {said}" if isinstance(value, torch.Tensor) or type(value) in (int, float, bool) else f" ({said})"


def _signature(fn) -> tuple[str, list] | None:
    """``("(input, hx=None)", [parameter names])`` of what a call of ``fn`` takes (a module: its forward; a PyTorch
    builtin: the first line of its documentation), or None."""
    if isinstance(fn, torch.nn.Module):
        fn = type(fn).forward
        skip = 1
    else:
        skip = 1 if inspect.ismethod(fn) else 0
    try:
        params = list(inspect.signature(fn).parameters.values())
        if skip and not inspect.ismethod(fn):
            params = params[skip:]
        return f"({', '.join(str(p) for p in params)})", [p.name for p in params if p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        pass
    first = ((getattr(fn, "__doc__", None) or "").strip().splitlines() or [""])[0]
    m = re.match(rf"{re.escape(getattr(fn, '__name__', '?'))}(\((.*)\))(?: -> .*)?$", first)
    if not m:
        return None
    names = [p.split("=")[0].strip() for p in m.group(2).split(",")]
    positional = names[:names.index("*")] if "*" in names else names
    return m.group(1), [n for n in positional if n and not n.startswith("*")]


def _line_nodes(line: str) -> list:
    """Every node of the failing line's syntax tree (a compound statement's header too: ``if not done[b]:``), or
    ``[]`` when it does not parse on its own."""
    text = line.strip().split(" #")[0].rstrip()
    for candidate in (text, text + " pass", text.removeprefix("return ")):
        try:
            return list(ast.walk(ast.parse(candidate)))
        except SyntaxError:
            continue
    return []


def _call_hint(msg: str, line: str, env: dict) -> str | None:
    """For an error about a call's arguments (a keyword it does not have, too many positional arguments, an
    argument of the wrong kind, PyTorch's "invalid combination of arguments"): the call on the line that the message
    names, how it takes its arguments, and what the line gave it."""
    named = re.match(r"(?:[\w.]*\.)?(\w+)\(\)", msg)
    params_named = set(re.findall(r"'(\w+)'", msg)) | set(re.findall(r"\b([a-z]+\d)\b", msg))
    for node in (n for n in _line_nodes(line) if isinstance(n, ast.Call)):
        fn = _operand(node.func, env)
        if fn is _MISSING:
            continue
        sig = _signature(fn)
        if sig is None:
            continue
        text, names = sig
        own = type(fn).__name__ if isinstance(fn, torch.nn.Module) else getattr(fn, "__name__", "")
        if not ((named and named.group(1) in (own, "forward")) or (params_named & set(names))):
            continue
        callee = ast.unparse(node.func)
        given = []
        for i, a in enumerate(node.args):
            if isinstance(a, ast.Starred):
                break
            where = f"{names[i]}=" if i < len(names) and names[i] not in ("self", "args") else ""
            given.append(f"{where}{ast.unparse(a)}{_given(_operand(a, env))}")
        for k in node.keywords:
            given.append(f"{k.arg}={ast.unparse(k.value)}{_given(_operand(k.value, env))}")
        head = f"{callee} takes {text}"
        bad_kw = re.search(r"unexpected keyword argument '(\w+)'", msg)
        if bad_kw:
            return f"{head}: it has no argument called {bad_kw.group(1)} (pass it by position or by the name listed)"
        many = re.search(r"takes (\d+) positional arguments? but (\d+) (?:were|was) given", msg)
        if many:
            return (f"{head}: {many.group(1)} positional arguments, and your line gives it {len(node.args)}: "
                    + ", ".join(given))
        sized = [ast.unparse(a) for i, a in enumerate(node.args) if i < len(names) and names[i] == "size"
                 and not isinstance(a, ast.Starred) and type(_operand(a, env)) is int]
        sized += [ast.unparse(k.value) for k in node.keywords if k.arg == "size" and type(_operand(k.value, env)) is int]
        note = (f": size is a tuple of sizes, ({sized[0]},) with its comma ({sized[0]} alone, in parentheses or "
                "not, is one number)" if sized else "")
        return (f"{head}; your line gives it " + ", ".join(given) + note) if given else head
    return None


def _bound_at(source: str, name: str) -> str | None:
    """The first line of a function's ``source`` that binds ``name`` (``name = ...``, ``for name in ...``), as
    text; None when there is none."""
    tree = _source_tree(source)
    if tree is None:
        return None
    lines = textwrap.dedent(source).splitlines()
    for n in ast.walk(tree):
        targets = (n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.For, ast.AugAssign))
                   else [])
        if any(isinstance(t, ast.Name) and t.id == name or isinstance(t, ast.Tuple) and any(
                isinstance(e, ast.Name) and e.id == name for e in t.elts) for t in targets):
            return lines[n.lineno - 1].strip().split("  #")[0].strip() if n.lineno <= len(lines) else None
    return None


def _operand_hint(value: BaseException, line: str, env: dict, source: str = "") -> str | None:
    """For a KeyError, an index out of range or an operator given operands it does not take: which expression on
    the line it is, and what it holds (with the lines that made the list and the index, when ``source`` has
    them)."""
    nodes = _line_nodes(line)
    msg = str(value)
    if isinstance(value, KeyError) and value.args:
        key = value.args[0]
        for n in nodes:
            if isinstance(n, ast.Subscript):
                base = _operand(n.value, env)
                if type(base) is dict and _operand(n.slice, env) == key and key not in base:
                    keys = ", ".join(repr(k) for k in list(base)[:12])
                    return f"{ast.unparse(n.value)} has no key {key!r}: its keys are {keys}"
    if isinstance(value, IndexError) and "index out of range" in msg:
        for n in nodes:
            if isinstance(n, ast.Subscript):
                base, i = _operand(n.value, env), _operand(n.slice, env)
                if type(base) in (list, tuple) and type(i) is int and not base:
                    lst = ast.unparse(n.value)
                    at = _bound_at(source, lst) if source and lst.isidentifier() else None
                    return (f"{lst} is empty here" + (f' (your line "{at}" makes it)' if at else "") + f", so it has "
                            f"no item {i}: an empty start (a hypothesis or a sequence with no token yet) needs its "
                            "first item, e.g. the <sos> token, or a case of its own")
                if type(base) in (list, tuple) and type(i) is int and not -len(base) <= i < len(base):
                    made = {t: _bound_at(source, t) for t in (ast.unparse(n.value), ast.unparse(n.slice))
                            if t.isidentifier()} if source else {}
                    if len(made) == 2 and all(made.values()):
                        lst, idx = ast.unparse(n.value), ast.unparse(n.slice)
                        return (f"{lst} has {len(base)} items (your line \"{made[lst]}\") and {idx} is {i} (your "
                                f"line \"{made[idx]}\"): the two count different things, so one of those lines "
                                "reads the wrong size (which axis of which tensor is the batch, the steps, ...?)")
                    return (f"{ast.unparse(n.value)} has {len(base)} items and {ast.unparse(n.slice)} is {i}: "
                            f"{ast.unparse(n.slice)} counts something else than {ast.unparse(n.value)} holds (what "
                            "gives its values, and over which axis?)")
    op = re.search(r"unsupported operand type\(s\) for ([^:]+): '(\w+)' and '(\w+)'|can only concatenate (\w+) "
                   r"\(not \"(\w+)\"\) to (\w+)", msg)
    if isinstance(value, TypeError) and op:
        symbol = (op.group(1) or "+").strip()
        for n in nodes:
            if isinstance(n, (ast.BinOp, ast.AugAssign)):
                left = n.left if isinstance(n, ast.BinOp) else n.target
                right = n.right if isinstance(n, ast.BinOp) else n.value
                if _BIN_SYMBOLS.get(type(n.op)) != symbol:
                    continue
                a, b = _operand(left, env), _operand(right, env)
                kinds = [op.group(2), op.group(3)] if op.group(2) else [op.group(6), op.group(5)]
                said = " and ".join(f"{ast.unparse(x)} is {_described(v) if v is not _MISSING else 'a ' + k}"
                                    for x, v, k in ((left, a, kinds[0]), (right, b, kinds[1])))
                if symbol == "^":
                    return said + ": ^ is Python's bitwise exclusive or; a power is written **"
                lists = [k for k in kinds if k == "list"]
                if symbol == "+" and len(lists) == 1:
                    item = ast.unparse(right if kinds[0] == "list" else left)
                    seq, other = (a, b) if kinds[0] == "list" else (b, a)
                    if isinstance(seq, list) and seq and all(type(v) in (int, float) for v in seq) \
                            and any(type(v) is float for v in seq) and type(other) in (int, float):
                        # scores (floats): one was meant; token ids (ints): an item joined to a list, below
                        listed = ast.unparse(left if kinds[0] == "list" else right)
                        return said + (f": a number plus a list of {len(seq)} numbers, where {listed} is meant to be "
                                       f"ONE number: where {listed} is made, one entry was meant (an index left out, "
                                       "or a list given to a call that takes one item?)")
                    return said + (f": + joins a list only to a list: put the item in a list ([{item}]), or use "
                                   ".append / .insert")
                biasless = [x for x in (left, right) if isinstance(x, ast.Attribute) and x.attr.startswith("bias")
                            and isinstance(_operand(x.value, env), (torch.nn.RNNCellBase, torch.nn.RNNBase))
                            and _operand(x, env) is None]
                if biasless:
                    layer = ast.unparse(biasless[0].value)
                    return (said + f": {layer} is built with bias=False, so its biases are None ({layer}.bias is "
                            f"False, a flag, never None): test `if {layer}.bias:` (or `{layer}.bias_ih is not None`) "
                            "and leave the bias out when there is none")
                repeat = left.right if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add) else left
                if symbol in ("-", "+") and isinstance(repeat, ast.BinOp) and isinstance(repeat.op, ast.Mult) \
                        and isinstance(_operand(repeat.left, env), list) and kinds[1] == "int":
                    rep, times, k = ast.unparse(repeat.left), ast.unparse(repeat.right), ast.unparse(right)
                    return (said + f": Python reads {ast.unparse(n)} as ({ast.unparse(left)}) {symbol} {k} (* and + "
                            f"bind first, so {symbol} {k} comes last, on the list); for {times} {symbol} {k} copies "
                            f"write {rep} * ({times} {symbol} {k})")
                return said + f": {symbol} does not take these two"
    return None


# PyTorch calls with a rule on how many axes an argument has: the error raised inside them names neither the argument
# nor the line's expression, so the hint says which argument breaks the rule, what it holds, and what takes it.
# {name: ({position of the argument in a torch.<name>(...) call: allowed numbers of axes}, what it takes, instead)};
# a method call x.name(...) has x at position 0.
_RANK_RULES = {
    "mv": ({0: {2}, 1: {1}}, "torch.mv(M, v) multiplies a matrix by ONE vector (1-D)",
           "for a batch of rows x (B, D), x @ M.T gives (B, n)"),
    "mm": ({0: {2}, 1: {2}}, "torch.mm multiplies two 2-D matrices",
           "for a batch use @ (it broadcasts a 2-D weight over the batch) or torch.bmm"),
    "bmm": ({0: {3}, 1: {3}}, "torch.bmm multiplies two 3-D batches, (B, n, m) by (B, m, p)",
            "a 2-D weight needs @; a (B, m) vector needs [:, :, None] (or [:, None, :]) first"),
    "dot": ({0: {1}, 1: {1}}, "torch.dot multiplies two 1-D vectors", "for a batch use (a * b).sum(-1) or @"),
    "index_select": ({2: {1}}, "index_select(dim, index) takes ONE 1-D list of positions, the same for every row",
                     "positions of each row of its own (a (B, T) index) are what gather takes: x.gather(1, idx), "
                     "with idx shaped like x (idx[..., None].expand_as(x) for features)"),
}
_CELLS = {"RNNCell", "GRUCell", "LSTMCell"}
_RNNS = {"RNN", "GRU", "LSTM"}


def _extra_axis(node) -> str:
    """Where an expression adds an axis: `` (the axis comes from `y.unsqueeze(1)`)``, or ``""``."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("unsqueeze", "view",
                                                                                             "reshape"):
            return f"; the extra axis comes from `{ast.unparse(n)}` there"
        if isinstance(n, ast.Subscript) and any(isinstance(e, ast.Constant) and e.value is None for e in ast.walk(
                n.slice)):
            return f"; the extra axis comes from `{ast.unparse(n)}` there"
    return ""


def _shape_of(node, env):
    """The value of an argument on the failing line without running the student's code (see :func:`_operand`); an
    nn.Embedding or nn.Linear called on a readable tensor gives a tensor of its output's shape."""
    v = _operand(node, env)
    if v is not _MISSING or not isinstance(node, ast.Call) or len(node.args) != 1:
        return v
    layer, x = _operand(node.func, env), _shape_of(node.args[0], env)
    if not isinstance(x, torch.Tensor):
        return _MISSING
    if isinstance(layer, torch.nn.Embedding):
        return torch.empty(*x.shape, layer.embedding_dim)
    if isinstance(layer, torch.nn.Linear) and x.dim() and x.shape[-1] == layer.in_features:
        return torch.empty(*x.shape[:-1], layer.out_features)
    return _MISSING


def _flatten_note(line: str, env: dict) -> str:
    """A tensor with an axis of size 1 among three or more flattened whole on the failing line (``h_n.flatten()`` to
    drop the layer axis of (1, B, H)): the batch axis went with it; ``""`` when the line has none."""
    for n in _line_nodes(line):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
            continue
        if not (n.func.attr == "flatten" and not n.args and not n.keywords):
            continue
        base = _operand(n.func.value, env)      # a state (1, B, H) flattened to drop its layer axis: B went too
        if isinstance(base, torch.Tensor) and base.dim() >= 3 and 1 in tuple(base.shape):
            text = ast.unparse(n.func.value)
            return (f"{ast.unparse(n)} is ({base.numel()},): {n.func.attr} merges every axis of {text} "
                    f"{_fmt(base.shape)}, the batch axis too; to drop one axis of size 1, index it ({text}[0], "
                    f"{text}[-1]) or squeeze it ({text}.squeeze(0)); flatten(start_dim=1) keeps the first axis")
    return ""


def _api_hint(value: BaseException, line: str, env: dict) -> str | None:
    """For an error raised inside a PyTorch call on the failing line: the argument that breaks the call's rule
    (its number of axes; a pair where one state tensor is taken, or the reverse), what it holds, and what takes it;
    a boolean index of another shape than the tensor's first axes; a tensor index past the end (its value and the
    names it is made from)."""
    nodes = _line_nodes(line)
    msg = str(value)
    bounds = re.search(r"index (-?\d+) is out of bounds for dimension (\d+) with size (\d+)", msg)
    if bounds:
        return _bounds_hint(nodes, env, *map(int, bounds.groups()))
    if msg.startswith("einsum()"):
        return _einsum_hint(nodes, env)
    masked = re.search(r"shape of the mask \[([\d, ]*)\] at index \d+ does not match the shape of the indexed "
                       r"tensor \[([\d, ]*)\]", msg)
    if masked:
        small = tuple(int(s) for s in masked.group(1).split(",") if s.strip())
        big = tuple(int(s) for s in masked.group(2).split(",") if s.strip())
        place = _placement(small, big)
        fix = (f": for the mask to act on those axes, use masked_fill (it broadcasts) with the mask indexed "
               f"{place}, x.masked_fill(m{place}, value)" if place else "")
        return (f"a boolean index x[m] is matched against x's FIRST axes and does not broadcast: the mask is "
                f"{_fmt(small)} and the tensor {_fmt(big)}{fix}")
    for node in (n for n in nodes if isinstance(n, ast.Call)):
        fn = _operand(node.func, env)
        name = type(fn).__name__ if isinstance(fn, torch.nn.Module) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(fn, "__name__", ""))
        args = list(node.args)
        if (isinstance(node.func, ast.Attribute) and name in _RANK_RULES
                and isinstance(_operand(node.func.value, env), torch.Tensor)):
            args = [node.func.value] + args      # x.index_select(1, idx): x is torch.index_select's first
        callee = ast.unparse(node.func)
        if name in _RANK_RULES and not isinstance(fn, torch.nn.Module):
            rule, takes, instead = _RANK_RULES[name]
            for pos, ranks in rule.items():
                v = _shape_of(args[pos], env) if pos < len(args) else _MISSING
                if isinstance(v, torch.Tensor) and v.dim() not in ranks:
                    return (f"{takes}; your line gives it {ast.unparse(args[pos])} {_fmt(v.shape)} ({v.dim()}-D): "
                            f"{instead}")
        if name in _CELLS | _RNNS and type(fn).__module__.startswith("torch.nn"):
            module = "a cell (nn." + name + ")" if name in _CELLS else "nn." + name
            x = _shape_of(args[0], env) if args else _MISSING
            second = _shape_of(args[1], env) if len(args) > 1 else _MISSING
            if isinstance(x, (tuple, list)) and isinstance(second, torch.Tensor):
                return (f"{callee} is {module}, which takes (input, state): your line gives it the state "
                        f"{ast.unparse(args[0])} first and the input {ast.unparse(args[1])} second: the two in each "
                        "other's place")
            size_in, size_h = getattr(fn, "input_size", None), getattr(fn, "hidden_size", None)
            if isinstance(x, torch.Tensor) and isinstance(second, torch.Tensor) and x.dim() and second.dim() \
                    and size_in != size_h and x.shape[-1] == size_h and second.shape[-1] == size_in:
                return (f"{callee} is {module}, built for inputs of {size_in} features and states of {size_h}, which "
                        f"takes (input, state): your line gives it {ast.unparse(args[0])} {_fmt(x.shape)} (a "
                        f"state's size) first and {ast.unparse(args[1])} {_fmt(second.shape)} (an input's size) "
                        "second: the two in each other's place")
            ranks = {1, 2} if name in _CELLS else {2, 3}
            if isinstance(x, torch.Tensor) and x.dim() not in ranks:
                what = ("takes ONE step: input (B, F) and state (B, H)" if name in _CELLS
                        else "takes a batch of sequences (B, T, F) with batch_first=True (or (T, B, F))")
                return (f"{callee} is {module}, which {what}; your line gives it {ast.unparse(args[0])} "
                        f"{_fmt(x.shape)}" + (_extra_axis(args[0]) if x.dim() > max(ranks) else ""))
            state = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "hx"), None)
            h = _shape_of(state, env) if state is not None else _MISSING
            pair = name == "LSTM" or name == "LSTMCell"
            if isinstance(h, (tuple, list)) and not pair:
                return (f"{callee} is {module}: its state is ONE tensor ((B, H) for a cell, (layers * directions, "
                        f"B, H) for a layer), and your line gives it {ast.unparse(state)} ({_described(h)}); only "
                        "an LSTM takes the pair (h, c)")
            if isinstance(h, torch.Tensor) and pair:
                return (f"{callee} is {module}: its state is the pair (h, c), and your line gives it "
                        f"{ast.unparse(state)} {_fmt(h.shape)}, one tensor")
    return _swapped_hint(nodes, env, msg)


def _reshape_hint(msg: str, line: str, env: dict) -> str | None:
    """view/reshape asked for sizes that do not multiply out to the tensor's entries: the tensor, its shape, and each
    size on the line that is not one of the tensor's sizes (with the expression that gave it); None otherwise."""
    m = re.search(r"shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)", msg)
    if not m:
        return None
    numel = int(m.group(2))
    for node in (n for n in _line_nodes(line) if isinstance(n, ast.Call)):
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in ("view", "reshape")):
            continue
        base = _operand(node.func.value, env)
        if not isinstance(base, torch.Tensor) or base.numel() != numel:
            continue
        args = list(node.args[0].elts) if len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List)) \
            else list(node.args)
        odd = []
        for a in args:
            v = _operand(a, env)
            if isinstance(a, ast.Call) and ast.unparse(a.func) == "len" and len(a.args) == 1:
                inner = _operand(a.args[0], env)        # len(...) of a value on hand: no code of the student's runs
                if isinstance(inner, (list, tuple, dict, str)) or type(inner).__module__.startswith("seqcourse"):
                    v = len(inner)
            if type(v) is int and v not in (-1, 1) and v not in tuple(base.shape) and not isinstance(a, ast.Constant):
                odd.append(f"{ast.unparse(a)} is {v}")
        text = ast.unparse(node.func.value)
        return (f"{text} {_fmt(base.shape)} has {numel} entries, which the sizes asked ({m.group(1)}) do not "
                "multiply out to" + (f"; {', '.join(odd)}, which is not a size of {text}: the size of another tensor "
                                     f"(or vocabulary) used? read it from {text}.shape" if odd else
                                     ": print the shapes (the wrong tensor?)"))
    return None


def _sources_of(tb, mine) -> tuple:
    """The source of each function of the student's on the stack of ``tb`` (``mine``: their frames), innermost
    first."""
    import traceback

    files = {f.filename for f in mine}
    out = []
    for fr, _ in traceback.walk_tb(tb):
        if fr.f_code.co_filename in files:
            try:
                out.append(inspect.getsource(fr.f_code))
            except (OSError, TypeError):
                pass
    return tuple(reversed(out))


def _none_hint(msg: str, line: str, env: dict, source: str, outer: tuple = ()) -> str | None:
    """A name of the raising line that holds None, and the student's own line of that function that made it None
    (``mask = ... if lengths is not None else None``; ``mask = None``), in words; for an argument left None by the
    caller, that; None otherwise."""
    if "NoneType" not in msg:
        return None
    try:
        names = [n.id for n in ast.walk(ast.parse(line.split(" #")[0].strip()))
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    except SyntaxError:
        return None
    nones = [n for n in dict.fromkeys(names) if n in env and env[n] is None]
    if not nones and "unsupported operand" not in msg:   # (an operand's attribute: _operand_hint says more)
        # an attribute that is None: cell.bias_ih of a layer built with bias=False
        for node in ast.walk(ast.parse(line.split(" #")[0].strip())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in env \
                    and getattr(env[node.value.id], node.attr, 0) is None:
                owner = env[node.value.id]
                if node.attr.startswith("bias") and isinstance(owner, torch.nn.Module):
                    return (f"`{ast.unparse(node)}` is None: {node.value.id} is built with bias=False, so it has no "
                            f"biases; read the sizes from a weight (e.g. {node.value.id}.weight_hh.shape) and leave "
                            "the biases out when there are none (the docstring's bias-free case)")
        return None      # another attribute (p.grad before backward()): the error's own hint says more
    if len(nones) != 1:
        return None
    name = nones[0]
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            v = node.value
            none_branch = (isinstance(v, ast.Constant) and v.value is None) or (isinstance(v, ast.IfExp) and any(
                isinstance(b, ast.Constant) and b.value is None for b in (v.body, v.orelse)))
            if none_branch:
                if isinstance(v, ast.IfExp):
                    body_none = isinstance(v.body, ast.Constant) and v.body.value is None
                    test = v.test
                    flip = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
                    if not body_none and isinstance(test, ast.Compare) and len(test.ops) == 1 \
                            and type(test.ops[0]) in flip:
                        test, body_none = ast.Compare(test.left, [flip[type(test.ops[0])]()], test.comparators), True
                    how = (f"makes it None when `{ast.unparse(test)}`" + ("" if body_none else " is false")
                           + ", a case the test gives")
                else:
                    how = ("sets it, and no later line gave it another value on the path this call took (a branch "
                           "not taken, for an argument left None?)")
                return (f"`{name}` is None at this line: your line \"{ast.unparse(node)}\" {how}; give it a value "
                        "that works in that case too (for a mask: all True, every position kept; for a state: zeros), "
                        "or handle that case before this line")
    for node in ast.walk(tree) if tree else ():      # for g in grads / [... for g in grads]: an item is None
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) \
                and node.target.id == name:
            items = ast.unparse(node.iter)
            made = next((m for m in (_bound_at(src, items) for src in (source, *outer)) if m), None) \
                if items.isidentifier() else None      # a generator's own source is one line: its callers' too
            grad = ".grad" in (made or items)
            return (f"`{name}` is None: an item of {items} is None" + (f' (your line "{made}" makes {items})'
                                                                         if made else "")
                    + ("; a parameter's .grad is None when no gradient reached it: leave those out (if p.grad is not "
                       "None)" if grad else "; leave those items out, or give them a value"))
    if tree is not None and any(isinstance(a, ast.arg) and a.arg == name for a in ast.walk(tree)):
        return (f"`{name}` is None at this line: the caller passed {name}=None (or left it out), a case the docstring "
                f"allows; handle it before this line (if {name} is None: ...) with a value that works there too")
    return _none_item_hint(name, tree, line)


def _none_item_hint(name: str, tree, line: str) -> str | None:
    """``name`` is None because the student's one line that binds it (other than the raising ``line``) took an item
    of what a call returned (``d = encoder(src)[0]``, ``d, _ = f(x)``) or the call's result: that line, which item,
    and what to check; None otherwise."""
    here = " ".join(line.split(" #")[0].split())
    found = []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or " ".join(ast.unparse(node).split()) == here:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == name:
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call) \
                    and isinstance(value.slice, ast.Constant) and type(value.slice.value) is int:
                found.append((node, f"item {value.slice.value} of what {ast.unparse(value.value)} returns"))
            elif isinstance(value, ast.Call):
                found.append((node, None))
            elif isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
                found.append((node, ""))
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call):
            at = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Name) and t.id == name]
            if at:
                found.append((node, f"item {at[0]} of what {ast.unparse(value)} returns"))
    if len(found) != 1:
        return None
    node, what = found[0]
    if what == "":
        return (f"`{name}` is None at this line: your line \"{ast.unparse(node)}\" made it, and "
                f"{ast.unparse(node.value)} is None there; follow it back to where it was set (or left unset)")
    if what is None:
        return (f"`{name}` is None at this line: your line \"{ast.unparse(node)}\" made it, and the call there returned "
                "None (a function of yours that ends without `return`, or a method that works in place and returns "
                "None, such as list.sort())")
    return (f"`{name}` is None at this line, from your line \"{ast.unparse(node)}\": {what} is None here; is that the "
            "item you need? (the docstring says what each item of the result holds, and in which order)")


def _unpack_order_hint(msg: str, line: str, env: dict, source: str) -> str | None:
    """A name of the raising line that holds a number where the line indexes it (``'float' object is not
    subscriptable``), bound by an unpacking (``for tokens, score, state in candidates``) that gave a list to another of
    its names: the names in another order than the items; that line, what each name got, and the line that builds
    the items when one appends tuples to the list unpacked. None otherwise."""
    m = re.search(r"'(int|float)' object is not subscriptable", msg)
    if not m:
        return None
    subs = [n.value.id for n in _line_nodes(line) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)]
    tree = _source_tree(source) if source else None
    lines = textwrap.dedent(source).splitlines() if source else []
    for name in (n for n in subs if type(env.get(n)) in (int, float)):
        for node in ast.walk(tree) if tree is not None else ():
            target = node.target if isinstance(node, (ast.For, ast.comprehension)) else \
                node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if not isinstance(target, (ast.Tuple, ast.List)):
                continue
            names = [t.id if isinstance(t, ast.Name) else None for t in target.elts]
            if isinstance(node, ast.For) and not any(
                    getattr(n, "lineno", 0) and lines[n.lineno - 1].strip() == line.strip()
                    for b in node.body for n in ast.walk(b)):
                continue              # a loop that does not hold the raising line
            if name not in names or not any(isinstance(env.get(n), (list, tuple, torch.Tensor)) for n in names if n):
                continue
            got = ", ".join(f"{n} a{'n' if type(env[n]).__name__[0] in 'aeiou' else ''} {type(env[n]).__name__}"
                            for n in names if n and n in env)
            source_of = node.iter if isinstance(node, (ast.For, ast.comprehension)) else node.value
            base = source_of.value if isinstance(source_of, ast.Subscript) else source_of
            built = next((b for b in ast.walk(tree) if isinstance(b, ast.Call) and isinstance(b.func, ast.Attribute)
                          and b.func.attr in ("append", "insert") and isinstance(b.func.value, ast.Name)
                          and isinstance(base, ast.Name) and b.func.value.id == base.id and b.args
                          and isinstance(b.args[-1], ast.Tuple)), None)
            head = ast.unparse(node).splitlines()[0] if not isinstance(node, ast.comprehension) else ast.unparse(node)
            return (f"`{name}` holds a {m.group(1)} here: your line \"{head.rstrip(':')}\" unpacks each item in the "
                    f"order of its parts, giving {got}: the names are in another order than the items' parts"
                    + (f" (your line \"{ast.unparse(built)}\" builds them)" if built is not None else ""))
    return None


def _unpacked_rnn_hint(msg: str, line: str, env: dict, source: str) -> str | None:
    """pad_packed_sequence given a plain tensor (``'Tensor' object has no attribute 'batch_sizes'``): the RNN ran on
    the unpacked tensor. The line that made that tensor, and the PackedSequence the function made and never gave the
    RNN; None otherwise."""
    if "has no attribute 'batch_sizes'" not in msg:
        return None
    call = next((n for n in _line_nodes(line) if isinstance(n, ast.Call)
                 and ast.unparse(n.func).split(".")[-1] == "pad_packed_sequence" and n.args), None)
    if call is None or not isinstance(call.args[0], ast.Name):
        return None
    name = call.args[0].id
    tree = _source_tree(source) if source else None
    made = packed = None
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Assign):
            continue
        bound = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if name in bound:
            made = node
        if isinstance(node.value, ast.Call) and ast.unparse(node.value.func).split(".")[-1] == "pack_padded_sequence":
            packed = node
    said = (f"{name} is a plain tensor, not a PackedSequence: pad_packed_sequence undoes pack_padded_sequence, so "
            "the RNN must run on the packed sequence")
    if made is not None:
        said += f"; your line \"{ast.unparse(made)}\" makes {name}"
        if packed is not None and len(packed.targets) == 1 and isinstance(packed.targets[0], ast.Name):
            p_name = packed.targets[0].id
            if p_name not in {n.id for n in ast.walk(made.value) if isinstance(n, ast.Name)}:
                said += (f", from a tensor that is not packed: your line \"{ast.unparse(packed)}\" makes {p_name}, "
                         f"which is meant to go into the RNN there")
    return said


def _index_select_hint(msg: str, line: str, env: dict) -> str | None:
    """x.index_select(dim, idx) (or torch.index_select) with indices past the end of that axis: the axis, its size,
    the largest index, and the axes the indices would fit; None otherwise."""
    m = re.search(r"INDICES element is out of DATA bounds, id=(\d+) axis_dim=(\d+)|index out of range in self", msg)
    if not m:
        return None
    for node in (n for n in _line_nodes(line) if isinstance(n, ast.Call)):
        if not (isinstance(node.func, ast.Attribute) and node.func.attr == "index_select"):
            continue
        method = isinstance(_operand(node.func.value, env), torch.Tensor)
        args = ([node.func.value] if method else []) + list(node.args)
        if len(args) < 3:
            continue
        x, dim, idx = (_operand(a, env) for a in args[:3])
        if not (isinstance(x, torch.Tensor) and type(dim) is int and isinstance(idx, torch.Tensor) and idx.numel()):
            continue
        top = int(idx.max())
        fits = [d for d in range(x.dim()) if d != dim % x.dim() and x.shape[d] > top]
        return (f"{ast.unparse(args[0])} {_fmt(x.shape)}.index_select({dim}, {ast.unparse(args[2])}): the indices go "
                f"up to {top}, but axis {dim} has {x.shape[dim]} entries" + (
                    f"; they fit axis {fits[0]} (size {x.shape[fits[0]]}): the axis they count?" if fits else ""))
    return None


def _hidden_state_hint(msg: str, line: str, env: dict, source: str) -> str | None:
    """nn.RNN / nn.GRU / nn.LSTM given an initial state of another shape ("Expected hidden size (1, 2, 4), got
    [1, 5, 4]"): which axis differs and what that axis holds, the state's name on the line and the line that makes
    it; None for another error."""
    m = re.search(r"Expected hidden(?:\[\d\])? size \((\d+), (\d+), (\d+)\), got \[(\d+), (\d+), (\d+)\]", msg)
    if not m:
        return None
    want, got = tuple(map(int, m.groups()[:3])), tuple(map(int, m.groups()[3:]))
    axes = ("num_layers * num_directions", "the batch size B", "the hidden size H")
    state = None
    for node in (n for n in _line_nodes(line) if isinstance(n, ast.Call)):
        if isinstance(_operand(node.func, env), torch.nn.RNNBase):
            state = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "hx"),
                                                                 None)
            break
    text = ast.unparse(state) if state is not None else "the state"
    said = "; ".join(f"axis {d} has {got[d]} where {want[d]} ({axes[d]}) is expected" for d in range(3)
                     if want[d] != got[d])
    made = _bound_at(source, text) if text.isidentifier() and source else None
    return (f"{text} is {_fmt(got)}: {said}; the state of nn.RNN / nn.GRU / nn.LSTM is (num_layers * "
            "num_directions, B, H), with batch_first=True too (batch_first orders the input only)"
            + (f'; your line "{made}" makes it' if made else ""))


def _einsum_hint(nodes: list, env: dict) -> str | None:
    """The torch.einsum call on the failing line whose subscripts give one letter two sizes: the letter, the operands
    and axes that give it each size, and, for a 2-D operand whose subscripts read the other way round fit, those."""
    for n in nodes:
        if not (isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] == "einsum" and n.args
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
            continue
        lhs = n.args[0].value.replace(" ", "").split("->")[0].split(",")
        ops = [(ast.unparse(a), _operand(a, env)) for a in n.args[1:]]
        if len(lhs) != len(ops) or not all(isinstance(v, torch.Tensor) and v.dim() == len(sub)
                                           for (_, v), sub in zip(ops, lhs)):
            continue
        seen: dict = {}
        for (text, v), sub in zip(ops, lhs):
            for axis, letter in enumerate(sub):
                seen.setdefault(letter, []).append((text, axis, int(v.shape[axis])))
        for letter, uses in seen.items():
            sizes = {size for *_, size in uses if size != 1}
            if len(sizes) < 2:
                continue
            said = " and ".join(f"{size} in {text} (axis {axis})" for text, axis, size in uses)
            fix = ""
            for (text, v), sub in zip(ops, lhs):
                if len(sub) == 2 and letter in sub:
                    trial = {**{k: [u for u in us if u[0] != text] for k, us in seen.items()}}
                    for axis, other in enumerate(sub[::-1]):
                        trial.setdefault(other, []).append((text, axis, int(v.shape[axis])))
                    if all(len({s for *_, s in us if s != 1}) < 2 for us in trial.values()):
                        fix = (f": {text} is {_fmt(v.shape)}, so its subscripts \"{sub}\" read it the wrong way "
                               f"round; \"{sub[::-1]}\" for it (or {text}.T) fits")
                        break
            return (f"in torch.einsum(\"{n.args[0].value}\", ...), the subscript {letter} stands for {said}: one "
                    f"letter, one size{fix}")
    return None


def _bounds_hint(nodes: list, env: dict, index: int, dim: int, size: int) -> str | None:
    """An index past the end of a tensor's axis: the expression on the line that gives it, its value and the
    values of the names it is made of; a negative index given to gather, index_select, scatter or take_along_dim
    (which take none)."""
    for n in (m for m in nodes if index < 0 and isinstance(m, ast.Call) and isinstance(m.func, ast.Attribute)):
        where = {"gather": 1, "index_select": 1, "scatter": 1, "scatter_add": 1, "take_along_dim": 0}.get(n.func.attr)
        if where is None:
            continue
        part = next((k.value for k in n.keywords if k.arg in ("index", "indices")), None)
        part = part if part is not None else n.args[where] if len(n.args) > where else None
        got = _operand(part, env) if part is not None else _MISSING
        if isinstance(got, torch.Tensor) and index in got.flatten().tolist():
            return (f"{ast.unparse(part)} holds {index} here, and {n.func.attr} takes no negative index (x[-1] "
                    f"counts from the end, {n.func.attr} does not): keep every index in 0..{size - 1} (a position "
                    "such as L - 1 - t goes below 0 past the end of a sequence: torch.where(t < L, L - 1 - t, t))")
    for n in nodes:
        if not isinstance(n, ast.Subscript):
            continue
        base = _operand(n.value, env)
        if isinstance(base, torch.Tensor) and (base.dim() <= dim or base.shape[dim] != size):
            continue
        shape = _fmt(base.shape) if isinstance(base, torch.Tensor) else f"(size {size} along axis {dim})"
        parts = list(n.slice.elts) if isinstance(n.slice, ast.Tuple) else [n.slice]
        if any(isinstance(p, ast.Constant) and p.value is Ellipsis for p in parts) or dim >= len(parts):
            continue
        part = parts[dim]
        got = _operand(part, env)
        if (isinstance(got, torch.Tensor) and not got.is_floating_point() and got.numel()
                and not isinstance(part, ast.Slice) and index in got.flatten().tolist()):
            shown, text = got.flatten().tolist()[:8], ast.unparse(part)
            said = (f"{text} holds {shown} here, but the positions along axis {dim} of {ast.unparse(n.value)} "
                    f"{shape} run from 0 to {size - 1}")
            if index == size:
                said += (f": {index} is one past the last (a length or count used as a position: the last position "
                         f"of a sequence of length n is n - 1, so {text} - 1)")
            return said
        if isinstance(part, (ast.Slice, ast.Constant)) or type(got) is not int or got != index \
                or not isinstance(base, torch.Tensor):
            continue
        names = {m.id: env[m.id] for m in ast.walk(part) if isinstance(m, ast.Name) and type(env.get(m.id)) is int
                 and m is not part}
        said = ", ".join(f"{k} = {v}" for k, v in names.items())
        return (f"{ast.unparse(part)} is {got} here" + (f" ({said})" if said else "") + f", but the positions "
                f"along axis {dim} of {ast.unparse(n.value)} {_fmt(base.shape)} run from 0 to {size - 1}: "
                "the last is size - 1 (counting from the right, position size - 1 - k)")
    return None


def _swapped_hint(nodes: list, env: dict, msg: str) -> str | None:
    """A call of a function of the notebook whose arguments are names of its OTHER parameters (``f(b, a)`` for
    ``def f(a, b)``): two arguments in each other's place, whatever the error says."""
    for node in (n for n in nodes if isinstance(n, ast.Call)):
        fn = _operand(node.func, env)
        if not isinstance(fn, types.FunctionType):
            continue
        sig = _signature(fn)
        if sig is None:
            continue
        text, names = sig
        swapped = pysource.swapped_arguments(node, names)
        if swapped:
            return (f"{ast.unparse(node.func)} takes {text}, and your line passes {swapped}: two arguments in each "
                    "other's place? (pass them in the order of the signature, or by name)")
    return None


_BIN_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
                ast.Pow: "** or pow()", ast.BitXor: "^", ast.BitAnd: "&", ast.BitOr: "|", ast.MatMult: "@"}


def _signature_changed_hint(msg: str, line: str, tb) -> str | None:
    """A test's call that raised "f() missing N required positional argument(s)" or "f() takes N positional
    arguments but M were given" before any of the student's code ran: the student's function has other parameters
    than the notebook's signature, which the test calls. Says both; None when the function is not the notebook's."""
    found = re.match(r"([\w.]+)\(\) (?:missing \d+ required (?:positional|keyword-only) argument|takes (?:from )?\d+)",
                     msg)
    if not found:
        return None
    import traceback

    from seqcourse import calltrace

    top = next((fr for fr, _ in traceback.walk_tb(tb) if calltrace._is_cell(fr.f_code.co_filename)), None)
    if top is None:
        return None
    obj = _cell_function(found.group(1), top.f_globals)
    if obj is None:
        return None
    sig = _signature(obj)
    if sig is None:
        return None
    return (f"your {found.group(1)} takes {sig[0]}, but the line \"{line.strip()}\" calls it otherwise: the tests "
            "and the later parts call it with the notebook's signature, so keep the parameters of the notebook's stub"
            + ("; unpack inside the function what arrives as one argument (a state tuple: h, c = state)"
               if "missing" in msg else ""))


def _float_source_hint(call: str, namespace: dict) -> str | None:
    """A check that asked for an int and got a float from a notebook function (``call`` is the check's text of the
    call, "f(...)", and the function is looked up in the namespace of the cell that runs the check): the first line
    of that function that makes a float (a literal such as 0.0, a division with /, float(...), math.*), in words; None
    when its source has none (the float came from elsewhere)."""
    found = _notebook_function(call, namespace)
    if found is None:
        return None
    obj, source, tree = found
    lines = source.splitlines()
    sources = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is float:
            why = f"{ast.unparse(node)} is a float" + (
                f", and a count that starts at (or adds) a float stays one: write {int(node.value)}"
                if float(node.value).is_integer() else "")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            why = "/ always gives a float in Python, even for 6 / 3: // divides integers"
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            why = "/= always gives a float in Python: //= divides integers"
        elif isinstance(node, ast.Call) and (ast.unparse(node.func) == "float" or (
                isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == "math"
                and node.func.attr in ("sqrt", "pow", "log", "log2", "exp", "fsum"))):
            why = f"{ast.unparse(node.func)}(...) gives a float"
        else:
            continue
        sources.append((node.lineno, why))
    if not sources:
        return None
    lineno, why = min(sources)
    return (f'your {obj.__name__} makes a float at its line "{lines[lineno - 1].strip()}": {why} (the test wants an '
            "int, as the docstring asks)")


def _error_edit_hint(line: str, ename: str, message: str) -> str:
    """The edits of the reference that raise this very error at this line of a visible test (recorded by ``python -m
    autograder.edit_hints``; in words), or ``""``. Never fails."""
    try:
        from seqcourse import hints
        return hints.describe_error(line, ename, message)
    except Exception:  # noqa: BLE001 - a hint is a courtesy: any failure here means no hint
        return ""


def brief_error(value: BaseException, tb, shell=None) -> str:
    """One line for an exception raised while a notebook cell ran: its type and message, where it was raised in
    the notebook (the line of YOUR code when it came from a function of another cell: never a frame inside
    PyTorch or the course package), a hint for common PyTorch errors, and the line of the running cell
    ("[this cell: Cell In[9], line 5]")."""
    import traceback

    ename = type(value).__name__
    msg = " ".join(str(value).split()) or "(no message)"
    frames = traceback.extract_tb(tb)
    cell_frames = [f for f in frames if _cell_label(shell, f.filename)]
    if not cell_frames:
        return f"{ename}: {msg}"
    outer = cell_frames[0]
    mine = [f for f in cell_frames if f.filename != outer.filename and f.filename not in _INSTRUCTOR_CELLS]
    deepest = mine[-1] if mine else cell_frames[-1]
    hint = next((h for key, h in _ERROR_HINTS if key in msg), "")
    changed = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\], which is output \d+ of (\w+?)(?:Backward\d*)?,", msg)
    if changed and "modified by an inplace operation" in msg:     # PyTorch names the op whose output was changed
        hint = (f"the tensor changed in place is the output of a {changed.group(2).lower()} (shape "
                f"({changed.group(1)})): after that call, an in-place operation on its result (masked_fill_, x[...] = "
                "..., +=, *=) must become out of place (masked_fill, a new tensor)")
    line_raised = frames[-1].line or ""
    if "mat1 and mat2 shapes cannot be multiplied" in msg and "linear(" in line_raised:
        hint = ("F.linear(x, W) computes x @ W.T (+ b): W is stored as (out features, in features), as in "
                "nn.Linear; for the product x @ W write it with @ (or F.linear(x, W.T))")
    math_call = re.match(r"(sqrt|exp|log|sin|cos|tanh|sigmoid|abs|log2|log10|rsqrt)\(\): argument 'input' "
                         r"\(position 1\) must be Tensor, not (int|float)", msg)
    if math_call:
        hint = (f"torch.{math_call.group(1)} takes a tensor, and your line gives it a Python {math_call.group(2)}: "
                f"for a number use math.{math_call.group(1).replace('rsqrt', 'sqrt')}(...) (import math), or ** "
                "(D ** 0.5 for a square root), or make it a tensor first")
    if "only one element tensors can be converted" in msg and "torch.tensor(" in line_raised:
        hint = ("torch.tensor(...) of a list of tensors turns each into one number: join tensors with "
                "torch.stack(xs) (a new axis) or torch.cat(xs) (an existing one)")
    specific = False          # a hint made from the values at the student's line (then no edit hint is said)
    made = None               # (hint, names bound there): the line where a tensor got another shape than the reference's
    if mine:
        frame = None              # the innermost frame at that line (a comprehension's, not its function's)
        for fr, lineno in traceback.walk_tb(tb):
            if fr.f_code.co_filename == deepest.filename and lineno == deepest.lineno:
                frame = fr
        if frame is not None:
            try:
                source = inspect.getsource(frame.f_code)
            except (OSError, TypeError):
                source = ""
            try:
                made = (_made_earlier_hint(frame, deepest.line or "", deepest.lineno, outer.line or "", source,
                                           lambda a: _argument_made_in_caller(mine, tb, outer.line or "",
                                                                              frame.f_code, a))
                        or _made_earlier_in_caller(mine, tb, outer.line or ""))
            except Exception:  # noqa: BLE001 - a hint never hides the error
                made = None
            env = {**frame.f_globals, **frame.f_locals}
            from seqcourse import calltrace
            raised = calltrace.raised_difference()    # the reference's inputs, a number of its own gone wrong first
            made = (raised, []) if raised and ("where the reference's is" in raised
                                                or "in each other's place" in raised) else made
            at = made[0] if made else _shape_hint_at(msg, deepest.line or "", env, source)
            specific, hint = bool(at) and not made, at or hint
            if not at:
                try:
                    complete = (_hidden_state_hint(msg, deepest.line or "", env, source)   # says it all
                                or _none_hint(msg, deepest.line or "", env, source, _sources_of(tb, mine))
                                or _unpack_order_hint(msg, deepest.line or "", env, source)
                                or _unpacked_rnn_hint(msg, deepest.line or "", env, source)
                                or _reshape_hint(msg, deepest.line or "", env)
                                or _index_select_hint(msg, deepest.line or "", env))
                    said = (complete or _api_hint(value, deepest.line or "", env)
                            or _operand_hint(value, deepest.line or "", env, source)
                            or _call_hint(msg, deepest.line or "", env))
                except Exception:  # noqa: BLE001 - a hint never hides the error
                    said, complete = None, None
                if said:
                    if complete or "so its biases are None" in said:   # the cause is said: no list of guesses
                        hint = ""
                    specific, hint = True, said + (f"; {hint}" if hint else "")
                    msg = msg.split(", but expected one of:")[0]     # PyTorch's list of overloads: what was got says it
    if mine and frame is not None:
        try:
            flat = _flatten_note(deepest.line or "", {**frame.f_globals, **frame.f_locals})
        except Exception:  # noqa: BLE001 - a hint never hides the error
            flat = ""
        if flat:
            specific, hint = True, flat + (f"; {hint}" if hint else "")
    if isinstance(value, (NameError, KeyError)) and mine and frame is not None:
        try:
            named = _name_hint(value, deepest.line or "", deepest.name, frame.f_locals, frame.f_globals)
        except Exception:  # noqa: BLE001 - a hint never hides the error
            named = None
        specific, hint = specific or bool(named), named or hint
    if isinstance(value, AttributeError):
        try:
            attribute = _attribute_hint(value)
            if not (specific and hint and (attribute or "").startswith("that object is a tuple")):
                hint = attribute or hint       # a hint made from the line's values says more than "a tuple"
        except Exception:  # noqa: BLE001 - a hint never hides the error
            pass
    if isinstance(value, TypeError) and not mine:
        try:
            called = _signature_changed_hint(msg, outer.line or "", tb)
        except Exception:  # noqa: BLE001 - a hint never hides the error
            called = None
        if called:
            specific, hint = True, called
    if isinstance(value, NotImplementedError) and (deepest.line or "").startswith("raise NotImplementedError"):
        msg, hint = "this part is not written yet", "replace that line with your code"
    if mine and re.search(r"doesn't match hidden|Input batch size|Expected hidden", msg):
        from seqcourse import calltrace
        looped = calltrace.batch_axis_loop()
        if looped:
            specific, hint = True, looped
    if mine and re.search(r"\bgot list\b|not list\b", msg):      # a list where a number is asked: which one
        from seqcourse import calltrace
        longest = calltrace.named_slip(calltrace.slip_longest_item)
        if longest:
            specific, hint = True, longest
    said_for_line = next((h for key, pattern, h in _LINE_HINTS if key in msg and (
        re.search(pattern, line_raised) or re.search(pattern, deepest.line or ""))), "")
    if said_for_line:            # the error and the student's own call say the cause together
        specific, hint = True, said_for_line
    if mine and re.search(r"cannot be multiplied|must match the size|size mismatch|Expected size|must be equal to", msg):
        from seqcourse import calltrace      # a tensor of the caller's turned round in place by an earlier call
        turned = calltrace.named_slip(calltrace.slip_inplace_on_argument)
        if turned:
            specific, hint = True, turned
    specific = specific or any(key in msg for key, _ in _SELF_EXPLAINED)
    if "what you get with" not in msg and "Likely cause" not in msg and not specific \
            and "0 * -inf is NaN" not in msg:   # own values say more
        edit = _error_edit_hint(outer.line or "", ename, str(value))
        if made and not any(f"computes `{n}`" in edit for n in made[1]):
            edit = ""             # an edit elsewhere than the line the shapes point to: it would contradict them
        if edit:
            hint = f"Likely cause: {edit}" + (f"; {hint}" if hint else "")
    if isinstance(value, AssertionError) and not mine:      # a value computed and thrown away: said first
        from seqcourse import calltrace
        dropped = calltrace.discarded_value()
        if dropped and dropped not in msg:
            msg = (msg.replace("Likely cause: ", f"Likely cause: {dropped}; ", 1) if "Likely cause: " in msg
                   else f"{dropped} -- {msg}")
    here = f"{_cell_label(shell, outer.filename)}, line {outer.lineno}"
    caller, received = _caller_of(mine, tb, shell) if mine else ("", "")
    if made and "given the same inputs as the reference's" in made[0]:
        received = ""             # not what the caller passed: the function's own value
    if mine and re.search(r"must match the size|cannot be multiplied|Expected size|mismatch|must be equal to", msg):
        try:
            reversed_axes = _transpose_3d_note(tb, {f.filename for f in mine})
        except Exception:  # noqa: BLE001 - a hint never hides the error
            reversed_axes = ""
        if reversed_axes:
            hint, received = reversed_axes + (f"; {hint}" if hint else ""), ""
    if re.search(r"inplace|in-place|backward|requires grad|grad_fn", msg):
        received = ""        # autograd's own rule broken where it raised: not what the caller passed
    if mine:
        where = (f'at your line "{(deepest.line or "").strip()}" ({_cell_label(shell, deepest.filename)}, line '
                 f"{deepest.lineno}, in {deepest.name}){caller}")
        if received:
            msg = f"{msg} -- {received}"
    elif isinstance(value, AssertionError):   # a check of this cell (or of a helper it defines) failed
        where = ""
    elif deepest is not outer:
        where = f'at "{(deepest.line or "").strip()}" (line {deepest.lineno}, in {deepest.name})'
    else:
        where = f'at "{(deepest.line or "").strip()}"'
    text = f"{ename} {where}: {msg}" if where else f"{ename}: {msg}"
    return text + (f" -- {hint}" if hint else "") + f" [this cell: {here}]"


def _transpose_3d_note(tb, files: set) -> str:
    """A line of the student's functions on the stack that applies .T to a variable that holds a tensor of 3 or more
    dimensions (``.T`` reverses EVERY axis there): that line, in words; ``""`` when there is none."""
    import traceback

    for fr, _ in traceback.walk_tb(tb):
        if fr.f_code.co_filename not in files:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(fr.f_code))
            tree = ast.parse(source)
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "T" and isinstance(node.value, ast.Name):
                value = fr.f_locals.get(node.value.id)
                if isinstance(value, torch.Tensor) and value.dim() > 2:
                    line = source.splitlines()[node.lineno - 1].strip()
                    return (f'your line "{line}" (in {fr.f_code.co_name}) applies .T to {node.value.id}, a tensor of '
                            f"{value.dim()} dimensions: .T reverses EVERY axis (the batch axis too; PyTorch warns "
                            f"that it is deprecated there): use .transpose(0, 1) (or .mT for the last two) to swap "
                            f"two axes")
    return ""


def _brief_traceback(shell, etype, value, tb, tb_offset=None):
    try:
        text = brief_error(value, tb, shell)
    except Exception:  # noqa: BLE001 - never hide an error behind a failure of this function
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        shell._showtraceback(etype, value, stb)
        return None
    name = type(value).__name__
    rest = text[len(name):] if text.startswith(name) else f": {text}"
    shell._showtraceback(etype, rest.lstrip(": "), [f"\x1b[0;31m{name}\x1b[0m{rest}"])
    return None


_INSTRUCTOR_CELLS: set = set()   # file names of the cells that called explain_errors(): not the student's code


def explain_errors() -> bool:
    """Show every error raised while a cell runs in ONE line (:func:`brief_error`) instead of a traceback into
    PyTorch and the course package: "RuntimeError at your line "h = W @ x" (Cell In[4], line 12, in
    rnn_cell): mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4) -- a matrix product whose inner
    sizes differ...". ``%tb`` still prints the whole traceback of the last error. Call it in a notebook's
    (locked) setup cell: the cell that calls it is the instructor's, so a line of its helpers is never
    reported as the student's own (call it again at the end of any other locked cell that defines helpers).
    Outside IPython it does nothing and returns False."""
    _INSTRUCTOR_CELLS.add(sys._getframe(1).f_code.co_filename)
    shell = _ipython()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((Exception,), _brief_traceback)
    events = getattr(shell, "events", None)
    if events is not None and not getattr(shell, "_seqcourse_recording", False):
        shell._seqcourse_recording = True
        events.register("pre_run_cell", _record_test_cell)
        events.register("post_run_cell", _end_test_cell)
    return True


_TEST_CELL = re.compile(r"^\s*assert|\bassert_\w+\(", re.M)
_recorder: list = [None]


def _record_test_cell(info=None) -> None:
    """IPython's ``pre_run_cell``: a cell that checks something (a test) runs with its calls of notebook functions
    recorded, so that a wrong value can be followed to the variable where it went wrong (see
    :mod:`seqcourse.calltrace`)."""
    from seqcourse import calltrace
    source = getattr(info, "raw_cell", "") or ""
    _recorder[0] = calltrace.start() if _TEST_CELL.search(source) else None


def _end_test_cell(result=None) -> None:
    from seqcourse import calltrace
    calltrace.stop(_recorder[0])
    _recorder[0] = None


# ------------------------------------------------------------------------------------ forbidden calls
class ForbiddenCall(AssertionError):
    """Raised when code inside :func:`forbid` calls something the exercise says not to use."""


def _resolve(dotted: str):
    """``"torch.nn.GRUCell"`` -> (owner, attribute name, object)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        modname = ".".join(parts[:cut])
        mod = sys.modules.get(modname)
        if mod is None:
            try:
                mod = __import__(modname, fromlist=["_"])
            except ImportError:
                continue
        obj, owner = mod, None
        try:
            for p in parts[cut:]:
                owner, obj = obj, getattr(obj, p)
        except AttributeError:
            continue
        return owner, parts[-1], obj
    raise ValueError(f"forbid: cannot find {dotted!r}")


def _raiser_code(fn: types.FunctionType, message: str) -> types.CodeType:
    """A code object that raises ForbiddenCall(message), usable as ``fn.__code__`` (same free variables)."""
    free = fn.__code__.co_freevars
    lines = ["def _outer():"] + [f"    {v} = None" for v in free]
    lines += ["    def _forbidden(*args, **kwargs):"]
    if free:
        lines += ["        " + ", ".join(free)]
    lines += [f"        raise __import__('seqcourse.checks', fromlist=['_']).ForbiddenCall({message!r})",
              "    return _forbidden"]
    ns: dict = {}
    exec("\n".join(lines), {"__builtins__": builtins}, ns)  # noqa: S102 - fixed template, no user input
    code = ns["_outer"]().__code__
    # the closure cells are given to the function in the order of co_freevars: keep that order
    return code.replace(co_freevars=free) if code.co_freevars != free else code


# The ATen operators behind the PyTorch classes and builtins that exercises forbid. While a forbid block runs, each is
# denied in PyTorch's dispatcher itself (a kernel registered with torch.library that raises): every path to the
# operator goes through it, whatever switches Python-level checks off (torch._C.DisableTorchFunction,
# torch._C._VariableFunctions, torch.ops.aten, another thread, a forked process).
_CLASS_OPS = {
    "torch.nn.modules.rnn.RNNCell": ("rnn_tanh_cell", "rnn_relu_cell"),
    "torch.nn.modules.rnn.LSTMCell": ("lstm_cell", "_thnn_fused_lstm_cell"),
    "torch.nn.modules.rnn.GRUCell": ("gru_cell", "_thnn_fused_gru_cell"),
    "torch.nn.modules.rnn.RNN": ("rnn_tanh", "rnn_relu"),
    "torch.nn.modules.rnn.LSTM": ("lstm", "mkldnn_rnn_layer", "_cudnn_rnn", "miopen_rnn"),
    "torch.nn.modules.rnn.GRU": ("gru", "_cudnn_rnn", "miopen_rnn"),
    "torch.nn.modules.activation.MultiheadAttention": ("_native_multi_head_attention", "scaled_dot_product_attention"),
}
# operators that compute the same thing as another one (its fused or per-backend versions)
_OP_FAMILIES = {
    "lstm_cell": ("_thnn_fused_lstm_cell",), "gru_cell": ("_thnn_fused_gru_cell",),
    "lstm": ("mkldnn_rnn_layer", "_cudnn_rnn", "miopen_rnn"), "gru": ("_cudnn_rnn", "miopen_rnn"),
    "scaled_dot_product_attention": ("_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
                                     "_scaled_dot_product_flash_attention_for_cpu",
                                     "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                                     "_scaled_dot_product_attention_math_for_mps"),
}


def _ops_behind(obj) -> set[str]:
    """Names of the aten operators that a forbidden class or builtin stands for (empty for a Python function)."""
    names: set[str] = set()
    if isinstance(obj, type):
        for qual, ops in _CLASS_OPS.items():
            mod, _, cls = qual.rpartition(".")
            k = getattr(sys.modules.get(mod), cls, None)
            if isinstance(k, type) and issubclass(k, obj):   # forbidding a base class forbids its subclasses' ops
                names.update(ops)
    elif not isinstance(obj, types.FunctionType):
        name = getattr(obj, "__name__", None)
        if isinstance(name, str) and hasattr(torch.ops.aten, name):
            names.add(name)
    for n in list(names):
        names.update(_OP_FAMILIES.get(n, ()))
    return {n for n in names if hasattr(torch.ops.aten, n)}


def _deny_ops(names: set[str], message: str):
    """Register, for every overload of these aten operators, a kernel that raises ForbiddenCall(message), at the
    dispatch key that decides (the composite one where the operator has it, else its CPU and CUDA kernels).
    Returns the torch.library.Library whose destruction removes them."""
    import warnings

    lib = torch.library.Library("aten", "IMPL")

    def denied(*args, **kwargs):
        raise ForbiddenCall(message)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # "Overriding a previously registered kernel": that is the point
        for name in sorted(names):
            for overload in getattr(torch.ops.aten, name).overloads():
                op = name if overload == "default" else f"{name}.{overload}"
                keys = [k for k in ("CompositeImplicitAutograd",)
                        if torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", k)]
                keys = keys or [k for k in ("CPU", "CUDA", "CompositeExplicitAutograd")
                                if torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", k)]
                for k in keys:
                    lib.impl(op, denied, k)
    return lib


class _ForbidMode(torch.overrides.TorchFunctionMode):
    def __init__(self, names: dict[str, str]):
        super().__init__()
        self.names = names

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        name = getattr(func, "__name__", None)
        if name in self.names:
            raise ForbiddenCall(self.names[name])
        return func(*args, **(kwargs or {}))


@contextmanager
def forbid(*targets: str, what: str = "your code", reason: str = "the exercise asks you to write it yourself",
           if_present: tuple[str, ...] = ()):
    """Inside the ``with`` block, calling any of ``targets`` raises :class:`ForbiddenCall` with the message
    "``what`` must not call ``target``: ``reason``". Everything is restored when the block ends.

    targets: dotted names, e.g. ``"torch.nn.GRUCell"`` (a class: building one or calling an existing one
    fails, subclasses included), ``"torch.nn.utils.clip_grad_norm_"`` (a Python function: every reference
    to it fails, also one imported under another name before the block), ``"torch._VF.gru_cell"`` (a
    PyTorch builtin: every alias of it fails, ``torch.gru_cell`` included, also when called from inside
    PyTorch, e.g. by ``nn.GRUCell.forward``). A target that does not exist is an error, except those in
    ``if_present`` (names that only some PyTorch versions have, e.g. ``"torch.nn.utils.get_total_norm"``),
    which are forbidden where they exist.

    Example::

        with forbid("torch.nn.GRUCell", "torch.nn.GRU", "torch._VF.gru_cell", what="gru_cell_pytorch",
                    reason="write the equations yourself"):
            out = gru_cell_pytorch(x, h, *params)
    """
    undo: list[Callable[[], None]] = []
    denied_ops: set[str] = set()
    # (name, still_ours): what forbid() put in place must still be there when the block ends; code that
    # replaced it meanwhile would otherwise be wiped out by the restore below, unseen by any grader
    held: list[tuple[str, Callable[[], bool]]] = []
    builtin_names: dict[str, str] = {}
    try:
        for target in (*targets, *if_present):
            try:
                owner, attr, obj = _resolve(target)
            except ValueError:
                if target in if_present and target not in targets:
                    continue
                raise
            message = f"{what} must not call {target}: {reason}"
            ops = _ops_behind(obj) - denied_ops
            if ops:
                denied_ops.update(ops)
                lib = _deny_ops(ops, message)
                undo.append(lib._destroy)
            if isinstance(obj, type):
                for meth in ("__init__", "forward", "__call__"):
                    if meth == "__call__" and not issubclass(obj, torch.nn.Module):
                        continue
                    if meth == "forward" and "forward" not in dir(obj):
                        continue
                    had = meth in obj.__dict__
                    old = obj.__dict__.get(meth)

                    def _blocked(*args, _m=message, **kwargs):
                        raise ForbiddenCall(_m)

                    setattr(obj, meth, _blocked)
                    undo.append((lambda o=obj, m=meth, h=had, v=old: setattr(o, m, v) if h else delattr(o, m)))
                    held.append((f"{target}.{meth}", lambda o=obj, m=meth, b=_blocked: o.__dict__.get(m) is b))
            elif isinstance(obj, types.FunctionType):
                code = obj.__code__
                obj.__code__ = _raiser_code(obj, message)
                undo.append(lambda f=obj, c=code: setattr(f, "__code__", c))
                held.append((target, lambda f=obj, r=obj.__code__: f.__code__ is r))
                inner = getattr(obj, "__wrapped__", None)
                if isinstance(inner, types.FunctionType):
                    icode = inner.__code__
                    inner.__code__ = _raiser_code(inner, message)
                    undo.append(lambda f=inner, c=icode: setattr(f, "__code__", c))
                    held.append((target, lambda f=inner, r=inner.__code__: f.__code__ is r))
            elif callable(obj):
                name = getattr(obj, "__name__", attr)
                builtin_names[name] = message

                def _blocked_builtin(*args, _m=message, **kwargs):
                    raise ForbiddenCall(_m)

                try:
                    setattr(owner, attr, _blocked_builtin)
                    undo.append(lambda o=owner, a=attr, v=obj: setattr(o, a, v))
                    held.append((target, lambda o=owner, a=attr, b=_blocked_builtin: getattr(o, a, None) is b))
                except (AttributeError, TypeError):
                    pass
            else:
                raise ValueError(f"forbid: {target!r} is not a class or function")
        mode = _ForbidMode(builtin_names) if builtin_names else None
        if mode is not None:
            with mode:
                yield
        else:
            yield
    finally:
        replaced = [name for name, still_ours in held if not still_ours()]
        for f in reversed(undo):
            f()
        if replaced:
            raise ForbiddenCall(f"{what} replaced {', '.join(replaced)} while the test ran: the exercise's "
                                "rules cannot be checked; do not assign to library attributes")


# --------------------------------------------------------------------------- what a computation costs
class Cost(NamedTuple):
    """What one call cost: ``flops`` (2 per multiply-add of matrix products, as FlopCounterMode counts),
    ``peak_bytes`` (the most bytes held at once by tensors it created), ``largest_numel`` and
    ``largest_shape`` (the biggest tensor any of its operations produced; at least the bytes of the largest
    single allocation, whatever the element type), ``peak_rss_bytes`` (how much the process's resident memory
    grew at its highest, as the operating system counts it; None where it cannot be measured)."""

    flops: int
    peak_bytes: int
    largest_numel: int
    largest_shape: tuple
    peak_rss_bytes: int | None = None


class _Largest(torch.utils._python_dispatch.TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.numel, self.shape = 0, ()

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel() > self.numel:
                self.numel, self.shape = t.numel(), _shape(t)
        return out


_MEASURING: list = []   # the measure_cost calls in progress (a nested one must not reset the outer's peak)
_WARM: list = []        # [True] once the instruments of measure_cost have been used once in this process


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


_PROFILER_NOTES = ("allocated before the profiling started",)   # the profiler's notes about its own bookkeeping


@contextmanager
def _without_profiler_notes():
    """PyTorch's profiler writes to the process's stderr (file descriptor 2, below Python) when a block allocated
    before it started is freed while it runs: a note on its own record, not on the student's code, that would show
    under a test cell. What is written there meanwhile is kept aside and written back, those notes left out."""
    import os
    import tempfile

    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as aside:
        os.dup2(aside.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            aside.seek(0)
            kept = [line for line in aside.read().decode(errors="replace").splitlines(keepends=True)
                    if not any(note in line for note in _PROFILER_NOTES)]
            if kept:
                os.write(2, "".join(kept).encode())


class _PeakRSS:
    """The growth of the process's peak resident memory while the block runs, as the kernel counts it (Linux:
    ``/proc/self/clear_refs`` resets the peak, ``VmHWM`` reads it). No Python or PyTorch switch turns it off, and
    threads count too. ``bytes`` is None where it cannot be measured."""

    def __enter__(self):
        self.bytes = None
        self.start = _status_kib("VmRSS")
        self.outer = bool(_MEASURING)
        if self.start is not None and not self.outer:
            try:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")
            except OSError:
                self.start = None
        _MEASURING.append(self)
        return self

    def __exit__(self, *exc):
        _MEASURING.remove(self)
        peak = _status_kib("VmHWM")
        if self.start is not None and peak is not None and not self.outer:
            self.bytes = max(0, peak - self.start) * 1024
        return False


def measure_cost(fn: Callable, *args, **kwargs) -> tuple[Any, Cost]:
    """Run ``fn(*args, **kwargs)`` once and return ``(its result, Cost)``. Views count as tensors too (a
    view of a huge expand is not materialised, but its numel is reported: use peak_bytes for memory).

    Three independent records: PyTorch's dispatch modes (tensors and their shapes, exact flops), PyTorch's own
    operator record (its profiler: the memory and flops of every operator, which switching modes off with
    ``torch.utils._python_dispatch._disable_current_modes()`` does not hide), and the kernel's count of the
    process's peak memory. Each number reported is the largest of what the records saw."""
    from torch.utils.flop_counter import FlopCounterMode

    from .calltrace import paused
    from .cost import TensorMemory

    if not _WARM:   # their first use imports and initialises much: not the measured function's memory
        with _without_profiler_notes(), profiler_legacy.profile(profile_memory=True, with_flops=True):
            with FlopCounterMode(display=False), TensorMemory(), _Largest():
                torch.ones(2, 2) @ torch.ones(2, 2)
        _WARM.append(True)
    largest = _Largest()
    with _without_profiler_notes(), paused(), profiler_legacy.profile(profile_memory=True, with_flops=True) as record:
        with FlopCounterMode(display=False) as flops, TensorMemory() as mem, largest:
            with _PeakRSS() as rss:
                result = fn(*args, **kwargs)
    events = record.function_events
    def first(e):   # an operator that a dispatch mode passes on is recorded again inside it: count it once
        p = e.cpu_parent
        while p is not None and p.name == "PythonDispatchMode":
            p = p.cpu_parent
        return p is None or p.name != e.name

    op_flops = sum(int(e.flops or 0) for e in events if e.flops and first(e))
    op_bytes = max((int(e.self_cpu_memory_usage or 0) for e in events), default=0)
    numel, shape = int(largest.numel), largest.shape
    if op_bytes > 16 * numel:   # more memory than the modes' largest tensor can hold: they did not see it all,
        numel, shape = op_bytes, ()   # so count (at least) one entry per byte of the largest allocation
    return result, Cost(max(int(flops.get_total_flops()), op_flops), max(int(mem.peak), op_bytes), numel, shape,
                        rss.bytes)


def count_flops(fn: Callable, *args, **kwargs) -> int:
    """Flops of the matrix products in ``fn(*args, **kwargs)`` (2 per multiply-add)."""
    return measure_cost(fn, *args, **kwargs)[1].flops


def largest_tensor(fn: Callable, *args, **kwargs) -> tuple[int, tuple]:
    """``(numel, shape)`` of the largest tensor that an operation inside ``fn(*args, **kwargs)`` produced."""
    cost = measure_cost(fn, *args, **kwargs)[1]
    return cost.largest_numel, cost.largest_shape


def assert_at_most(measured, limit, name: str = "cost", *, unit: str = "", hint: str = "") -> None:
    """Fail unless ``measured <= limit`` (plain numbers, e.g. ``Cost.flops`` and a budget)."""
    if not measured <= limit:
        u = f" {unit}" if unit else ""
        raise AssertionError(f"{name}: {measured:,}{u}, more than the limit of {limit:,}{u}"
                             + (f"; {hint}" if hint else ""))


def assert_not_materialised(cost, shape: tuple, what: str, name: str = "your code") -> None:
    """Fail if a tensor with at least as many entries as ``shape`` was created: "do not form the (Dd, Dh) matrix
    W". ``cost``: the :class:`Cost` of :func:`measure_cost` (or, as before, its ``largest_numel``). With a Cost,
    the kernel's count of peak memory is checked too where the matrix is large enough to stand out from the noise
    (16 MiB and more at 4 bytes an entry): no switch in the Python process hides it."""
    n = math.prod(int(s) for s in shape)
    if isinstance(cost, (tuple, list)):
        largest_numel = int(cost[2])
        rss = cost[4] if len(cost) > 4 else None
    else:
        largest_numel, rss = int(cost), None
    if largest_numel >= n:
        raise AssertionError(f"{name} built a tensor of {largest_numel:,} entries, as large as {what} "
                             f"{tuple(int(s) for s in shape)} ({n:,} entries), which it must not form")
    if rss is not None and 4 * n >= 16 << 20 and rss >= 2 * n:
        raise AssertionError(f"{name} made the process's memory grow by {rss / 2 ** 20:,.1f} MiB, as much as "
                             f"{what} {tuple(int(s) for s in shape)} would take ({4 * n / 2 ** 20:,.1f} MiB at 4 bytes "
                             "an entry), which it must not form")


# -------------------------------------------------------------------- reference parts in later tests
def _alias(ref, name: str) -> None:
    """Tell :mod:`seqcourse.calltrace` that the function ``ref`` stands in for the part called ``name`` (by the id of
    its code: in the class grader a function's ``__code__`` may be a stand-in of its own). Never fails."""
    try:
        from seqcourse.calltrace import ALIASES
        code = getattr(ref, "__code__", None)
        if code is not None:
            ALIASES[id(code)] = (code, name)
    except Exception:  # noqa: BLE001 - a hint's bookkeeping never stops a test
        pass


class use_reference:
    """Bind reference implementations to the names of earlier parts while a test cell grades a later part.

    In a test cell (hidden code)::

        ### BEGIN HIDDEN TESTS
        def _ref_reverse_padded(x, lengths): ...
        _refs = use_reference(globals(), reverse_padded=_ref_reverse_padded)
        ### END HIDDEN TESTS
        ... visible tests of the later part ...
        ### BEGIN HIDDEN TESTS
        ... hidden tests ...
        _refs.restore()
        ### END HIDDEN TESTS

    or ``with use_reference(globals(), reverse_padded=_ref_reverse_padded): ...``.

    The student's own function is put back by :meth:`restore`, by the end of a ``with`` block, by IPython
    when the cell ends (even when an assertion fails before ``restore``) and, wherever the cell runs, the
    bound name acts as the reference only while code of THIS cell is running (a frame with the cell's
    file name is on the stack): called from any other cell it is the student's own function. Call it at
    the top level of the test cell. :meth:`restore` also deletes every other global name bound
    to a reference object (the hidden helpers), so nothing of the reference stays in the notebook.
    """

    def __init__(self, namespace: dict, /, **references):
        self.namespace = namespace
        self.references = references
        # The code of the calling cell: IPython runs each top-level statement of a cell in its own frame, but
        # all of them (and the functions the cell defines) carry the cell's file name.
        self._filename = sys._getframe(1).f_code.co_filename
        self._saved: dict[str, Any] = {}
        self._restored = False
        self._refs = dict(references)   # cleared by restore(): a leftover binding then reaches no reference code
        _ACTIVE.append(self)
        for name, ref in references.items():
            _alias(ref, name)                     # what the stand-in is given is compared as that part's
            old = namespace.get(name, _MISSING)
            old = getattr(old, "__seqcourse_original__", old)
            self._saved[name] = old
            # a class is bound as itself (isinstance keeps working); restore() and the IPython hook put the
            # student's class back
            namespace[name] = ref if isinstance(ref, type) else self._dispatcher(name, ref, old)
        self._hook = None
        shell = _ipython()
        if shell is not None and hasattr(shell, "events"):
            def _after_cell(*_a, **_k):
                self.restore()
            self._hook = (shell.events, _after_cell)
            shell.events.register("post_run_cell", _after_cell)

    def _dispatcher(self, name: str, ref, original):
        filename = self._filename

        def active() -> bool:
            f = sys._getframe(2)
            while f is not None:
                if f.f_code.co_filename == filename:
                    return True
                f = f.f_back
            return False

        refs = self._refs

        def bound(*args, **kwargs):
            if name in refs and active():
                return refs[name](*args, **kwargs)
            if original is _MISSING:
                raise NameError(f"name {name!r} is not defined")
            return original(*args, **kwargs)

        for attr in ("__name__", "__qualname__", "__doc__"):
            try:
                setattr(bound, attr, getattr(original if original is not _MISSING else ref, attr))
            except (AttributeError, TypeError):
                pass
        bound.__seqcourse_original__ = original
        return bound

    def restore(self) -> None:
        """Put the student's names back and delete the reference helpers from the namespace (idempotent)."""
        if self._restored:
            return
        self._restored = True
        ns = self.namespace
        for name, old in self._saved.items():
            if old is _MISSING:
                ns.pop(name, None)
            else:
                ns[name] = old
        refs = [r for r in self.references.values()]
        for key in [k for k, v in ns.items() if any(v is r for r in refs) and k not in self._saved]:
            del ns[key]
        self._refs.clear()
        self.references = {}
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if self._hook is not None:
            events, cb = self._hook
            self._hook = None
            try:
                events.unregister("post_run_cell", cb)
            except ValueError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()
        return False


_ACTIVE: list = []


def restore_references() -> None:
    """Restore every :class:`use_reference` binding that is still in place (the latest first).

    For graders that run test cells outside IPython's ``run_cell`` (where no ``post_run_cell`` event fires):
    call it after every test cell, so that a test that failed before its ``restore()`` leaves nothing behind.
    """
    for r in reversed(list(_ACTIVE)):
        r.restore()


def _ipython():
    """The running IPython shell, if any (without importing IPython)."""
    getter = getattr(builtins, "get_ipython", None)
    if getter is None and "IPython" in sys.modules:
        from IPython.core.getipython import get_ipython as getter
    try:
        return getter() if getter is not None else None
    except Exception:  # noqa: BLE001
        return None


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


# ----------------------------------------------------------------------------------------------- weights
def deterministic_weights_(module: torch.nn.Module, scale: float = 0.5, *, by_name: bool = False) -> torch.nn.Module:
    """Overwrite every parameter of ``module`` in place with fixed, platform-independent values.

    Parameter ``k`` (in ``named_parameters`` order) with ``n`` entries gets
    ``scale * sin(1.7 * arange(n) + k)``. With ``by_name=True``, ``k`` is instead computed from the
    parameter's qualified name (``"rnn.weight_ih_l0"``), so that the values do not depend on the order in
    which the module registered its submodules: use it for modules that students define, whose attribute
    names are given but whose definition order is not. Tests use this to pin exact expected outputs
    without depending on PyTorch's random initialisation. Returns the module.
    """
    with torch.no_grad():
        for k, (name, p) in enumerate(module.named_parameters()):
            if by_name:
                k = zlib.crc32(name.encode()) % 1009
            values = scale * torch.sin(1.7 * torch.arange(p.numel(), dtype=torch.float64) + k)
            p.copy_(values.reshape(p.shape).to(p.dtype))
    return module


# ------------------------------------------------------------------------------ expected values of hidden tests
@contextmanager
def reference():
    """Mark the statements of a hidden test that compute its EXPECTED values::

        ### BEGIN HIDDEN TESTS
        set_seed(2100)
        x_t, h_prev = torch.randn(3, 2), torch.randn(3, 5)      # inputs: given to the student's code
        with reference():                                       # expected values: never in the student's process
            want = torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
        assert_close(rnn_cell(x_t, h_prev, W_hx, W_hh, b_h), want, atol=1e-5)
        ### END HIDDEN TESTS

    In Jupyter (and in plain nbgrader) the block simply runs, with the random number generators of Python,
    NumPy and PyTorch put back afterwards: what it draws changes nothing that follows. The course's grader
    (``python -m autograder grade``) never runs it in the student's process: it runs the block in the
    instructor's reference run and compares the student's values with the values recorded there, so that no
    code of the student's can read an expected value (from a frame, ``globals()``, ``gc``...).

    Rules (the grader checks them before it grades anyone): names bound in the block are used afterwards only
    in the checks' arguments (``assert_close(got, want[0])``, ``assert got == want``), never as input to the
    student's code or in a condition; the block reads only the instructor's values (not the student's functions,
    not what they returned). Functions that only compute expected values are defined inside the block.
    """
    import random

    py_state = random.getstate()
    try:
        import numpy as np
        np_state = np.random.get_state()
    except ImportError:  # pragma: no cover - numpy comes with torch
        np, np_state = None, None
    torch_state = torch.random.get_rng_state()
    try:
        yield
    finally:
        torch.random.set_rng_state(torch_state)
        if np is not None:
            np.random.set_state(np_state)
        random.setstate(py_state)
