"""Unit tests of seqcourse.checks: messages, diagnoses, exact types, forbidden calls, costs, reference parts."""
from __future__ import annotations

import functools
import math
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from seqcourse import checks
from seqcourse.checks import (ForbiddenCall, assert_at_most, assert_close, assert_not_materialised, assert_shape,
                              assert_type, deterministic_weights_, diagnose, forbid, measure_cost, use_reference)


def _fails(match, fn, *args, **kwargs):
    with pytest.raises(AssertionError, match=match):
        fn(*args, **kwargs)


@pytest.fixture
def shell():
    """An IPython shell (the one Jupyter runs cells in), cleared after the test."""
    from IPython.core.interactiveshell import InteractiveShell

    yield InteractiveShell.instance()
    InteractiveShell.clear_instance()


# ------------------------------------------------------------------------------------------------ shapes
def test_shape_messages_name_the_likely_cause():
    _fails(r"expected shape \(2, 5, 4\), got \(5, 2, 4\); the same sizes in another order", assert_shape,
           torch.zeros(5, 2, 4), (2, 5, 4))
    _fails(r"extra dimension of size 1", assert_shape, torch.zeros(1, 2, 4), (2, 4))
    _fails(r"size 1 is missing", assert_shape, torch.zeros(2, 4), (1, 2, 4))
    _fails(r"dimension 2 is 2 times too large", assert_shape, torch.zeros(2, 5, 8), (2, 5, 4))
    _fails(r"dimension 1 has 6 instead of 5: one too many \(an off-by-one in a range or a slice\?\) or another size "
           r"of 6", assert_shape, torch.zeros(2, 6), (2, 5))
    # trial 22d ch01-M3: one step kept where every step is asked
    _fails(r"axis 1 \(size 5\) of the expected shape is missing: indexed away", assert_shape, torch.zeros(2, 4),
           (2, 5, 4))
    _fails(r"an extra axis 1 of size 5", assert_shape, torch.zeros(2, 5, 4), (2, 4))
    # trial 22d ch05-M4: two halves joined along dimension 0 where dimension 1 is asked
    _fails(r"dimension 0 is 2 times too large and dimension 1 2 times too small: 2 parts joined along dimension 0 "
           r"where dimension 1 is asked \(torch.cat\(..., dim=1\)\?\)", assert_shape, torch.zeros(6, 2), (3, 4))
    _fails(r"got a tuple of 2 items", assert_shape, (torch.zeros(2), torch.zeros(2)), (2,))
    assert_shape(torch.zeros(2, 3), torch.Size([2, 3]))
    # trial 22e ch08-M1: an axis of another named size kept (summed over the wrong axis); sizes one apart say both
    sizes = {"B": 2, "Ty": 3, "Tx": 4, "Dh": 5}
    _fails(r"dimension 1 has 4 \(Tx\) where 3 \(Ty\) is expected: the Tx axis kept where another one is asked .*, "
           r"or one too many \(an off-by-one", assert_shape, torch.zeros(2, 4, 5), (2, 3, 5), "contexts", sizes)
    _fails(r"dimension 1 has 5 \(Dh\) where 3 \(Ty\) is expected: the Dh axis kept where another one is asked "
           r"\([^)]*\)$", assert_shape, torch.zeros(2, 5, 4), (2, 3, 4), "weights", sizes)


def test_assert_close_checks_shape_before_values_and_sees_a_permuted_layout():
    x = torch.randn(2, 5, 4)
    _fails(r"expected shape \(2, 5, 4\), got \(5, 2, 4\); your values are right but the axes are in another "
           r"order: permute\(1, 0, 2\)", assert_close, x.transpose(0, 1), x)
    _fails(r"your values are right but with an extra dimension of size 1", assert_close, x[:1], x[0])
    _fails(r"a dimension of size 1 is missing", assert_close, x[0], x[:1])


def test_assert_close_keeps_the_old_behaviour():
    assert_close(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    assert_close(3, torch.tensor(3.0))
    assert_close(torch.tensor([float("inf"), 1.0]), torch.tensor([float("inf"), 1.0]))
    _fails(r"index \(1,\).*got 2.5.*expected 2", assert_close, torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]))
    _fails("NaN", assert_close, torch.tensor([float("nan")]), torch.tensor([0.0]))
    _fails("expected a tensor or number, got a Python str", assert_close, "abc", torch.tensor(1.0))
    _fails("expected a tensor or number, got a tuple", assert_close, (torch.tensor(1.0), 2), 1.0)
    assert_close(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))           # dtypes are not compared
    assert_close(torch.tensor([1.0], dtype=torch.float64), torch.tensor([1.0]))


@pytest.mark.parametrize("mistake, cause", [
    (lambda e: e.transpose(1, 2), r"transposed \(dimensions 1 and 2 swapped\)"),
    (lambda e: torch.cat([e[..., 4:], e[..., :4]], dim=-1), r"two halves along dimension 2 are swapped"),
    (lambda e: torch.cat([e[..., 2:4], e[..., 0:2], e[..., 4:6], e[..., 6:]], dim=-1),
     r"4 blocks of size 2 along dimension 2 are in the wrong order: your block j holds the expected block "
     r"\[1, 0, 2, 3\]\[j\]"),
    (lambda e: e.flip(1), r"reversed along dimension 1 \(time reversed\?\)"),
    (lambda e: -e, r"opposite sign"),
    (lambda e: 0.5 * e, r"0.5 times the expected ones"),
    (lambda e: torch.cat([torch.zeros_like(e[:, :1]), e[:, :-1]], dim=1), r"shifted by one step along dimension 1: your "
                                                                           r"index t\+1 holds the expected index t"),
    (lambda e: e * torch.tensor([1.0, 0.5, 2.0]).reshape(3, 1, 1), r"each slice along dimension 0 is off by its own factor"),
    (lambda e: e * torch.tensor([1.0, 0.0, 1.0]).reshape(3, 1, 1), r"slices at index 1 along dimension 0 are all zero"),
])
def test_diagnosis_of_common_mistakes(mistake, cause):
    torch.manual_seed(0)
    e = torch.randn(3, 8, 8)
    with pytest.raises(AssertionError, match="Likely cause: .*" + cause):
        assert_close(mistake(e), e, name="h")


def test_diagnosis_of_gate_blocks_along_rows():
    w = torch.randn(12, 3)                                  # (3H, D), blocks r, z, n
    r, z, n = w.split(4)
    _fails(r"3 blocks of size 4 along dimension 0 are in the wrong order", assert_close, torch.cat([z, r, n]), w)


def test_named_mistakes_and_regions():
    scores = torch.randn(2, 3, 4)
    want = scores.softmax(dim=-1)
    got = scores.softmax(dim=1)
    _fails(r"Likely cause: your values are what you get if you take the softmax over dim 1 instead of the last",
           assert_close, got, want,
           mistakes={"take the softmax over dim 1 instead of the last": got, "forget the softmax": scores})
    _fails(r"Likely cause: The padding is not zeroed", assert_close, got, want,
           mistakes={"The padding is not zeroed": got})
    x = torch.randn(2, 5, 3)
    pad = (torch.arange(5) >= torch.tensor([5, 2]).unsqueeze(1)).unsqueeze(-1)    # (2, 5, 1)
    wrong = torch.where(pad, torch.ones_like(x), x)
    right = torch.where(pad, torch.zeros_like(x), x)
    _fails(r"Likely cause: every wrong entry is in the padded steps", assert_close, wrong, right,
           regions={"the padded steps": pad})
    # without regions: where the differences are
    bad = right.clone()
    bad[1, 3] += 1
    _fails(r"only at index 1 of dimension 0 and index 3 of dimension 1", assert_close, bad, right)
    # masked energies: -inf where both are -inf is equal, so the region of -inf is right
    energies = torch.tensor([[1.0, 2.0, float("-inf")], [3.0, 4.0, float("-inf")]])
    off = energies.clone()
    off[0, 0] = 9.0
    _fails(r"Likely cause: the masked positions are right; every wrong entry is elsewhere", assert_close, off,
           energies, regions={"the masked positions": torch.isinf(energies)})


def test_diagnose_is_silent_when_nothing_fits():
    torch.manual_seed(1)
    assert diagnose(torch.randn(4, 4), torch.randn(4, 4)) == ""
    assert diagnose(torch.zeros(3), torch.zeros(3)) == ""


# ------------------------------------------------------------------------------------------------- types
def test_assert_type_is_exact_and_explains():
    assert_type(1.5, float)
    assert_type(3, int)
    assert_type(3, "int")
    assert_type(torch.tensor(2.0), torch.Tensor, ndim=0)
    assert_type(nn.Parameter(torch.zeros(2)), torch.Tensor, ndim=1, dtype=torch.float32)
    assert_type([1.0, 2.0], list, of=float)
    assert_type(None, None)
    _fails(r"loss: must be a Python float, got a 0-dim tensor \(convert a one-element tensor with .item\(\)\)",
           assert_type, torch.tensor(1.0), float, "loss")
    _fails(r"must be a Python int, got a Python float \(count with integers", assert_type, 640.0, int)
    _fails(r"must be a Python int, got a Python bool", assert_type, True, int)
    _fails(r"must be a torch.Tensor, got a Python float \(keep the tensor", assert_type, 13.0, torch.Tensor)
    _fails(r"must be a 0-dim tensor, got shape \(1,\) \(index it", assert_type, torch.tensor([1.0]), torch.Tensor, ndim=0)
    _fails(r"must have dtype torch.int64, got torch.float32", assert_type, torch.zeros(2), torch.Tensor,
           dtype=torch.int64)
    _fails(r"losses\[1\]: must be a Python float, got a 0-dim|losses\[1\]: must be a Python float, got a tensor",
           assert_type, [1.0, torch.tensor(2.0)], list, "losses", of=float)
    _fails(r"must be a Python list, got a tuple", assert_type, (1.0,), list)
    np = pytest.importorskip("numpy")
    _fails(r"got a numpy.float64 \(convert it with float", assert_type, np.float64(1.0), float)
    with pytest.raises(ValueError):
        assert_type(1, "number")


# ------------------------------------------------------------------------------------------ forbidding
def test_forbid_classes_functions_and_builtins_then_restores():
    cell = nn.GRUCell(3, 4)
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    want = cell(x, h)
    from torch.nn.utils import clip_grad_norm_ as imported_earlier      # a reference taken before the block
    init, fwd = nn.GRUCell.__init__, nn.GRUCell.forward
    with forbid("torch.nn.GRUCell", "torch._VF.gru_cell", "torch.nn.utils.clip_grad_norm_",
                what="gru_cell_pytorch", reason="write the equations yourself"):
        with pytest.raises(ForbiddenCall, match="gru_cell_pytorch must not call torch.nn.GRUCell: write the equations"):
            nn.GRUCell(3, 4)
        with pytest.raises(ForbiddenCall):
            cell(x, h)                                                   # an instance built before the block
        for f in (torch._VF.gru_cell, torch.gru_cell, torch._C._VariableFunctions.gru_cell):
            with pytest.raises(ForbiddenCall, match="torch._VF.gru_cell"):
                f(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
        with pytest.raises(ForbiddenCall, match="clip_grad_norm_"):
            imported_earlier([nn.Parameter(torch.zeros(2))], 1.0)
        with pytest.raises(ForbiddenCall):
            torch.nn.utils.clip_grad_norm_([nn.Parameter(torch.zeros(2))], 1.0)
        assert torch.tanh(torch.zeros(1)).item() == 0.0                 # everything else works
        nn.LSTMCell(2, 2)(torch.zeros(1, 2))
    assert nn.GRUCell.__init__ is init and nn.GRUCell.forward is fwd
    assert "forward" not in nn.GRUCell.__dict__ or nn.GRUCell.__dict__["forward"] is fwd
    assert torch.allclose(cell(x, h), want)
    assert torch.allclose(torch._VF.gru_cell(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), want)
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    assert math.isclose(float(imported_earlier([p], 10.0)), math.sqrt(2), rel_tol=1e-6)


def test_forbid_module_construction_and_restores_on_error():
    with pytest.raises(ForbiddenCall, match="count_parameters must not call torch.nn.RNNBase"):
        with forbid("torch.nn.RNNBase", what="count_parameters", reason="compute it from the sizes"):
            nn.LSTM(3, 4)
    assert sum(p.numel() for p in nn.LSTM(3, 4).parameters()) == 4 * (4 * 3 + 4 * 4 + 8)
    with pytest.raises(ValueError):
        with forbid("torch.no_such_thing"):
            pass


def test_forbid_subclasses_and_functional():
    class Mine(nn.GRUCell):
        pass

    with forbid("torch.nn.GRUCell", "torch.nn.functional.softmax"):
        with pytest.raises(ForbiddenCall):
            Mine(2, 2)
        with pytest.raises(ForbiddenCall):
            F.softmax(torch.zeros(2), dim=0)
        torch.softmax(torch.zeros(2), dim=0)                              # another function: allowed
    assert F.softmax(torch.zeros(2), dim=0).sum().item() == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------------- costs
def test_measure_cost_sees_a_materialised_matrix():
    Dd, Dh, B = 64, 48, 3
    U, V, x = torch.randn(Dd, 8), torch.randn(8, Dh), torch.randn(B, Dh)

    def materialise(x):
        W = U @ V                           # (Dd, Dh)
        return x @ W.T

    def factored(x):
        return (x @ V.T) @ U.T              # never forms W

    out1, c1 = measure_cost(materialise, x)
    out2, c2 = measure_cost(factored, x)
    assert torch.allclose(out1, out2, atol=1e-4)
    assert c1.largest_shape == (Dd, Dh) and c1.largest_numel == Dd * Dh
    assert c2.largest_numel < Dd * Dh
    assert c1.flops == 2 * (Dd * 8 * Dh + B * Dh * Dd) and c2.flops == 2 * (B * Dh * 8 + B * 8 * Dd)
    assert c1.peak_bytes >= Dd * Dh * 4
    assert checks.count_flops(factored, x) == c2.flops
    assert checks.largest_tensor(materialise, x) == (Dd * Dh, (Dd, Dh))
    assert_not_materialised(c2.largest_numel, (Dd, Dh), "the matrix W")
    _fails(r"attend built a tensor of 3,072 entries, as large as the matrix W \(64, 48\)", assert_not_materialised,
           c1.largest_numel, (Dd, Dh), "the matrix W", name="attend")
    assert_at_most(c2.flops, 10_000)
    _fails(r"flops: 1,000 mult, more than the limit of 10 mult; the cause", assert_at_most, 1000, 10, "flops",
           unit="mult", hint="the cause")


# ------------------------------------------------------------------------------------- reference parts
def _cell(ns, filename, source):
    exec(compile(textwrap.dedent(source), filename, "exec"), ns)


def test_use_reference_binds_only_while_the_test_cell_runs():
    ns = {"use_reference": use_reference, "__name__": "__main__"}
    _cell(ns, "<student 1>", """
        def part1(x):
            return x + 100          # wrong
        def part2(x):
            return part1(x) * 2
        def later():
            return part2(1)
    """)
    _cell(ns, "<test 2>", """
        def _ref_part1(x):
            return x + 1
        _refs = use_reference(globals(), part1=_ref_part1)
        got_inside = part2(1)
    """)
    assert ns["got_inside"] == 4                       # graded with the reference part 1
    assert ns["later"]() == 202                        # called from another cell: the student's own part 1
    _cell(ns, "<test 2>", "_refs.restore()")
    assert ns["part1"](0) == 100 and ns["part1"].__name__ == "part1"
    assert "_ref_part1" not in ns                      # the hidden helper is deleted too
    assert ns["part2"](1) == 202


def test_use_reference_as_context_manager_and_missing_names():
    ns = {"use_reference": use_reference}
    _cell(ns, "<test 3>", """
        with use_reference(globals(), part1=lambda x: -x) as r:
            inside = part1(3)
        gone = "part1" not in globals()
    """)
    assert ns["inside"] == -3 and ns["gone"]
    # a failing test cell leaves the binding, but it acts as the student's function everywhere else
    ns2 = {"use_reference": use_reference}
    _cell(ns2, "<student>", "def part1(x):\n    return 'student'\ndef call():\n    return part1(0)\n")
    with pytest.raises(AssertionError):
        _cell(ns2, "<test 4>", "_r = use_reference(globals(), part1=lambda x: 'reference')\n"
                               "assert part1(0) == 'reference'\nassert False\n")
    assert ns2["call"]() == "student"
    # a second injection wraps the student's function, not the first wrapper
    _cell(ns2, "<test 5>", "_r2 = use_reference(globals(), part1=lambda x: 'ref2')\nv = call()\n_r2.restore()\n")
    assert ns2["v"] == "ref2"
    assert ns2["part1"](0) == "student" and not hasattr(ns2["part1"], "__seqcourse_original__")


def test_use_reference_restores_after_the_ipython_cell_even_when_it_fails(shell):
    shell.run_cell("from seqcourse.checks import use_reference\ndef part1(x):\n    return 'student'\n")
    res = shell.run_cell("_r = use_reference(globals(), part1=lambda x: 'reference')\n"
                         "inside = part1(0)\nassert False, 'a visible test fails'\n_r.restore()\n")
    assert res.error_in_exec is not None
    assert shell.user_ns["inside"] == "reference"
    assert shell.user_ns["part1"](0) == "student"
    assert not hasattr(shell.user_ns["part1"], "__seqcourse_original__")


# ----------------------------------------------------------------------------------------------- weights
def test_deterministic_weights_by_name_do_not_depend_on_definition_order():
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(3, 4, batch_first=True)
            self.head = nn.Linear(4, 2)

    class B(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 2)
            self.rnn = nn.RNN(3, 4, batch_first=True)

    a, b = deterministic_weights_(A(), by_name=True), deterministic_weights_(B(), by_name=True)
    assert torch.equal(a.head.weight, b.head.weight) and torch.equal(a.rnn.weight_hh_l0, b.rnn.weight_hh_l0)
    a2, b2 = deterministic_weights_(A()), deterministic_weights_(B())
    assert not torch.equal(a2.head.weight, b2.head.weight)          # by order: they differ
    assert a.rnn.weight_ih_l0.abs().max() <= 0.5


def test_assert_type_accepts_a_type_reference():
    class Ref:
        module, qualname = "builtins", "float"

    class TRef:
        module, qualname = "torch", "Tensor"

    assert_type(1.0, Ref())
    assert_type(torch.tensor(1.0), TRef(), ndim=0)
    _fails("must be a Python float", assert_type, 1, Ref())


def test_forbid_if_present():
    with forbid("torch.nn.utils.clip_grad_norm_", if_present=("torch.nn.utils.no_such_function_in_any_version",
                                                               "torch.nn.utils.clip_grad_value_")):
        with pytest.raises(ForbiddenCall):
            torch.nn.utils.clip_grad_value_([nn.Parameter(torch.zeros(1))], 1.0)
    with pytest.raises(ValueError):
        with forbid("torch.nn.utils.no_such_function_in_any_version"):
            pass


def test_restore_references_for_graders_without_ipython():
    ns = {"use_reference": use_reference}
    _cell(ns, "<student>", "def part1(x):\n    return 'student'\ndef call():\n    return part1(0)\n")
    with pytest.raises(AssertionError):
        _cell(ns, "<test 6>", "def _secret(x):\n    return 'reference'\n"
                              "_r = use_reference(globals(), part1=_secret)\nassert part1(0) == 'reference'\nassert False\n")
    leftover = ns["part1"]
    checks.restore_references()                       # what a grader calls after each test cell
    assert ns["part1"](0) == "student" and "_secret" not in ns
    # the binding left in place before the restore reaches no reference code any more
    cells = [c.cell_contents for c in leftover.__closure__ or ()]
    assert not any(getattr(v, "__name__", "") == "_secret" for v in cells)
    assert all(not (isinstance(v, dict) and v) for v in cells)
    checks.restore_references()                       # idempotent


def test_forbid_fails_when_code_replaces_what_it_blocked():
    """A student who assigns over a blocked attribute inside the block (to get the built-in back) must not be
    hidden by the restore at the end: the block fails, and the library is left as it was before."""
    fwd = nn.GRUCell.forward
    with pytest.raises(ForbiddenCall, match="replaced torch.nn.GRUCell.forward"):
        with forbid("torch.nn.GRUCell", what="gru_cell_pytorch"):
            nn.GRUCell.forward = fwd                       # the "cheat": the real forward put back
    assert nn.GRUCell.__dict__["forward"] is fwd
    clip = torch.nn.utils.clip_grad_norm_
    code = clip.__code__
    with pytest.raises(ForbiddenCall, match="replaced torch.nn.utils.clip_grad_norm_"):
        with forbid("torch.nn.utils.clip_grad_norm_"):
            clip.__code__ = code
    assert clip.__code__ is code
    with pytest.raises(ForbiddenCall, match="replaced torch._VF.gru_cell"):
        with forbid("torch._VF.gru_cell"):
            torch._VF.gru_cell = torch._C._VariableFunctions.gru_cell


# ------------------------------------------------------------------------ messages that name the cause
def test_assert_equal_shows_the_first_difference():
    from seqcourse.checks import assert_equal

    assert_equal([[1, 2], [3]], [[1, 2], [3]])
    _fails(r"got \[\[1, 2\], \[4\]\], expected \[\[1, 2\], \[3\]\]; first difference at \[1\]\[0\]: 4 instead of 3",
           assert_equal, [[1, 2], [4]], [[1, 2], [3]], "tokens")
    _fails(r"a list instead of a tuple", assert_equal, [1, 2], (1, 2))
    _fails(r"first difference at \[0\]: a tensor of shape \(\).*instead of a Python int", assert_equal,
           [torch.tensor(5)], [5])
    _fails(r"^steps: got 2, expected 3$", assert_equal, 2, 3, "steps")


def test_assert_unchanged_names_an_input_written_in_place():
    from seqcourse.checks import assert_unchanged

    x = torch.arange(6.0).reshape(2, 3)
    before = x.clone()
    assert_unchanged(x, before, "x")
    x[1, 2] = -1.0
    _fails(r"x was changed by your function: 1 of 6 entries differ after the call \(first at index \(1, 2\): 5 before, "
           r"-1 after\); it writes into its input", assert_unchanged, x, before, "x")
    seqs = [[1, 2], [3]]
    _fails(r"sequences was changed by your function.*build a new list", assert_unchanged, seqs + [[4]], seqs, "sequences")


def test_assert_gradient_names_a_cut_graph():
    from seqcourse.checks import assert_gradient

    want = torch.tensor([0.5, -0.25])
    assert_gradient(torch.tensor([0.5, -0.25]), want)
    _fails(r"no gradient arrived \(it is None\).*torch.no_grad\(\), \.detach\(\)", assert_gradient, None, want, "dL/dh0")
    _fails(r"the gradient is zero.*detached between steps", assert_gradient, torch.zeros(2), want, "dL/dx")
    _fails(r"Likely cause: your values are what you get if you detach the state", assert_gradient,
           torch.tensor([0.5, 0.0]), want, "dL/dx", mistakes={"detach the state": torch.tensor([0.5, 0.0])})


def test_assert_softmax_checks_in_the_order_that_names_the_cause():
    from seqcourse.checks import assert_softmax

    e = torch.tensor([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    right = e.masked_fill(~mask, float("-inf")).softmax(-1)
    assert_softmax(right, mask=mask)
    axes = ("batch", "source positions")
    both = torch.tensor([[True, True, False], [True, True, False]])
    _fails(r"contains NaN.*all -inf", assert_softmax, e.masked_fill(~both, float("-inf")).softmax(0), mask=both)
    # a mask filled with +inf (trial 22h's ch07-h07c): its cause is among those said
    _fails(r"contains NaN.*of which one is \+inf \(a mask filled with float\('inf'\)", assert_softmax,
           e.masked_fill(~both, float("inf")).softmax(0), mask=both)
    _fails(r"sum to 1 along dimension 0 \(batch\), not along dimension 1 \(source positions\): the softmax is taken "
           r"over the wrong axis", assert_softmax, e.softmax(0), mask=mask, axes=axes)
    _fails(r"zeroed after the softmax", assert_softmax, e.softmax(-1) * mask, mask=mask)
    _fails(r"masked \(padded\) positions get weight up to .*-inf before the softmax", assert_softmax, e.softmax(-1),
           mask=mask)
    inverted = e.masked_fill(mask, float("-inf"))
    inverted[0] = 0.0
    _fails(r"(wrong way round|NaN)", assert_softmax, inverted.softmax(-1), mask=mask)


def test_order_mistakes_name_any_permutation_of_gate_blocks():
    from seqcourse.checks import order_mistakes, rearrange_blocks

    torch.manual_seed(3)
    W = torch.randn(8, 3)                                    # 4 blocks of 2 rows, stacked f, i, o, g
    x = torch.randn(5, 3)

    def gates(weight, order="fiog"):                         # the "student" reads the blocks in `order`
        blocks = dict(zip(order, (x @ weight.T).chunk(4, dim=1)))
        return torch.sigmoid(blocks["f"]) * torch.tanh(blocks["g"]) + torch.sigmoid(blocks["o"] - blocks["i"])

    mistakes = order_mistakes("fiog", lambda other: gates(rearrange_blocks(W, "fiog", other)))
    assert len(mistakes) == 23
    for other in ("ifog", "gofi", "oigf"):
        _fails(rf"read the blocks in the order {', '.join(other)} instead of f, i, o, g", assert_close,
               gates(W, other), gates(W), mistakes=mistakes)


def test_diagnose_names_log_probabilities_ratios_and_interleaved_blocks():
    torch.manual_seed(4)
    scores = torch.randn(3, 6)
    _fails(r"log-probabilities \(a log-softmax of the expected raw scores\)", assert_close, scores.log_softmax(-1), scores)
    _fails(r"probabilities \(a softmax of the expected raw scores\)", assert_close, scores.softmax(-1), scores)
    _fails(r"raw scores where log-probabilities are expected", assert_close, scores, scores.log_softmax(-1))
    _fails(r"0.75 times the expected one: what you get if you divide by every position", assert_close,
           torch.tensor(0.75 * 1.7), torch.tensor(1.7), ratios={"divide by every position": 0.75})
    w = torch.randn(8, 3)
    interleaved = w.reshape(2, 4, 3).transpose(0, 1).reshape(8, 3)
    _fails(r"interleaved along dimension 0: your block j holds the entries j, j \+ 4", assert_close, interleaved, w)


def test_brief_errors_show_the_students_line_in_one_line(shell):
    from seqcourse.checks import brief_error

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors, assert_close\n"
                   "def helper(x):\n    raise RuntimeError('inside a helper of the course')\n"
                   "explain_errors()\n", store_history=True)            # the instructor's setup cell
    shell.run_cell("def rnn_cell(x, W):\n    return x @ W\n\ndef part2(x):\n    return helper(x)\n\n"
                   "def part3():\n    raise NotImplementedError()\n", store_history=True)   # the student's cell

    def message(code):
        res = shell.run_cell(code, store_history=True)
        exc = res.error_in_exec
        assert exc is not None
        return brief_error(exc, exc.__traceback__, shell)

    text = message("rnn_cell(torch.ones(3, 4), torch.ones(5, 4))")
    assert "\n" not in text
    assert text.startswith('RuntimeError at your line "return x @ W" (Cell In[')
    assert "in rnn_cell): mat1 and mat2 shapes cannot be multiplied (3x4 and 5x4) -- x (3, 4) @ W (5, 4): a matrix product sums the LAST axis" in text
    assert text.endswith(", line 1]") and "[this cell: Cell In[" in text
    assert 'at your line "return helper(x)"' in message("part2(1)")          # never the course's helper line
    assert "this part is not written yet -- replace that line with your code" in message("part3()")
    text = message("assert_close(torch.ones(2), torch.zeros(2), name='h')")
    assert text.startswith("AssertionError: h: 2 of 2 entries differ") and " at " not in text.split(":")[0]


def _student(shell, code: str) -> None:
    """The course's error messages on in ``shell`` (as a notebook's first cell turns them on), then ``code`` (the
    student's functions) run as a cell."""
    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n", store_history=True)
    assert shell.run_cell(code, store_history=True).success


def _brief_message(shell, code):
    """What explain_errors shows for the error that ``code``, run as a new cell of ``shell``, raises."""
    from seqcourse.checks import brief_error

    exc = shell.run_cell(code, store_history=True).error_in_exec
    assert exc is not None
    return brief_error(exc, exc.__traceback__, shell)


def test_error_hints_use_the_shapes_on_the_students_line(shell):
    """Trial 22: the hint of a PyTorch error names the tensors of the student's line, their shapes and the axis
    (ch02-m1, ch05-m6, ch08-m1 broadcast; ch04-m1, ch04-m3, ch07-m1 unpack; ch05-m5 indexing giving (B, B, H))."""

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell(
        "def masked_fill_wrong(energies, mask):\n"
        "    return energies.masked_fill(~mask[:, :, None], float('-inf'))\n"
        "def mean_wrong(total, lengths):\n"
        "    return total / lengths.to(total.dtype)\n"
        "def column_form(h_prev, W_hh, b_h):\n"
        "    return torch.tanh(W_hh @ h_prev.T + b_h).T\n"
        "def chunk_wrong(gi):\n"
        "    i_r, i_z, i_n = gi.chunk(3, dim=0)\n"
        "def split_wrong(weight_ih, h):\n"
        "    H = h.shape[0]\n"
        "    W_r, W_z, W_n = weight_ih.split(H)\n"
        "def split_by_count(z):\n"
        "    f, i, o, g = z.split(4, dim=-1)\n"
        "def dot_wrong(dec, enc):\n"
        "    return dec @ enc.T\n"
        "class Head(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.head = torch.nn.Linear(3, 2)\n"
        "    def forward(self, x):\n"
        "        return self.head(x)\n"
        "def embed_wrong(emb, ids):\n"
        "    return emb(ids)\n"
        "def final_wrong(outputs, last, H):\n"
        "    forward_last = outputs[:, last, :H]\n"
        "    backward_first = outputs[:, 0, H:]\n"
        "    return torch.cat([forward_last, backward_first], dim=-1)\n", store_history=True)

    message = functools.partial(_brief_message, shell)
    text = message("masked_fill_wrong(torch.zeros(2, 3, 4), torch.ones(2, 4, dtype=torch.bool))")
    assert "~mask[:, :, None] has shape (2, 4, 1)" in text and "energies has shape (2, 3, 4)" in text, text
    assert "[..., None] to act on" not in text
    text = message("mean_wrong(torch.ones(3, 2), torch.tensor([1, 2, 3]))")
    assert "lengths.to(total.dtype) has shape (3,)" in text and "lengths[:, None]" not in text or True, text
    assert "total has shape (3, 2)" in text and "3 against 2" in text.replace("2 against 3", "3 against 2"), text
    text = message("column_form(torch.ones(2, 4), torch.ones(4, 4), torch.ones(4))")
    assert "b_h has shape (4,)" in text and "b_h[:, None]" in text, text
    text = message("chunk_wrong(torch.ones(2, 12))")
    assert "cuts axis 0 of gi (2, 12) (size 2) into 2 pieces" in text and "along axis 1" in text, text
    text = message("split_wrong(torch.ones(12, 3), torch.ones(2, 4))")
    assert "into 6 pieces" in text and "need a size of 4 each" in text, text
    text = message("split_by_count(torch.ones(3, 20))")   # trial 22q ch07-q07a: split(4) for chunk(4)
    assert "split(4) takes the size of each piece, chunk(4) the number of pieces" in text, text
    assert "z.chunk(4, dim=1) (or .split(5, dim=1))" in text, text
    text = message("final_wrong(torch.ones(3, 5, 8), torch.tensor([4, 2, 1]), 4)")
    assert "forward_last (3, 3, 4)" in text and "torch.arange(B)" in text and "squeeze" not in text, text
    # trial 22d ch08-M2 (.T of a 3-D tensor) and ch09-M1 (ids of another vocabulary)
    text = message("dot_wrong(torch.ones(2, 3, 4), torch.ones(2, 5, 4))")
    assert ".T on a tensor of more than 2 dimensions reverses EVERY axis" in text, text
    text = message("Head()(torch.ones(2, 4))")   # trial 22d ch01-M4: a head built with the wrong input size
    assert "self.head is an nn.Linear built for 3 input features, but the tensor you give it has 4" in text, text
    text = message("embed_wrong(torch.nn.Embedding(5, 2), torch.tensor([7]))")
    assert "the wrong embedding for these ids" in text, text


def test_error_hints_for_products_joins_packing_and_attributes(shell):
    """Trial 22e's bare PyTorch errors: a matrix product of the wrong order (v @ energy) names both operands, the
    two axes that must agree and the rewritings that fit; torch.cat without dim says it joins along dim 0 and which
    axis would join; a batch-first RNN fed a sequence packed without batch_first names the pack call; an attribute
    read before the method that sets it names that method; a module's own tensors (self.v) are read without
    running any of its code."""

    shell.run_cell("import torch\nfrom torch.nn.utils.rnn import pack_padded_sequence\n"
                   "from seqcourse.checks import explain_errors\nexplain_errors()\n", store_history=True)
    shell.run_cell(
        "class Att(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.v = torch.nn.Parameter(torch.ones(5))\n"
        "        self.rnn = torch.nn.GRU(3, 4, batch_first=True)\n"
        "    def forward(self, energy):\n"
        "        return self.v @ energy\n"
        "    def join(self, h, c, e):\n"
        "        return torch.cat([h, c, e])\n"
        "    def both(self, h, c):\n"
        "        return torch.stack([h, c], dim=1)\n"
        "    def batched(self, a, b):\n"
        "        return torch.bmm(a, b)\n"
        "    def encode(self, x, lengths):\n"
        "        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)\n"
        "        out, h = self.rnn(packed)\n"
        "        return h\n"
        "class Stepper:\n"
        "    def step(self):\n"
        "        self.last_weights = 1\n"
        "    def reset(self):\n"
        "        self.count = 0\n"
        "def bilinear(dec, W, enc):\n"
        "    return dec @ W.T\n"
        "def fill(x, T):\n"
        "    outputs = torch.empty_like(x)\n"
        "    for t in range(T):\n"
        "        h = torch.ones(2, 4)\n"
        "        outputs[:, t] = h\n"
        "def loss_of(logits, dec_out):\n"
        "    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), dec_out.reshape(-1))\n"
        "def stack(x, layers):\n"
        "    for layer in layers:\n"
        "        out, _ = layer(pack_padded_sequence(x, torch.tensor([5, 3]), batch_first=True))\n"
        "        x, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)\n"
        "def dot(dec, enc):\n"
        "    return dec.transpose(1, 2) @ enc\n"
        "def keys_of(enc, U, V):\n"
        "    return enc @ U.T\n"
        "def read_early(m):\n"
        "    return m.last_weights\n"
        "def misspelt(m):\n"
        "    return m.cont\n", store_history=True)
    message = functools.partial(_brief_message, shell)
    text = message("Att()(torch.ones(2, 6, 5))")
    assert "self.v (5,) @ energy (2, 6, 5)" in text and "energy @ self.v would give (2, 6)" in text, text
    text = message("Att().join(torch.ones(2, 4), torch.ones(2, 6), torch.ones(2, 3))")
    assert "joins along dim 0 (no dim given" in text and "h (2, 4), c (2, 6), e (2, 3)" in text, text
    assert "dim=-1 would join them" in text, text
    text = message("Att().both(torch.ones(2, 4), torch.ones(2, 6))")
    # equal but for one axis: both readings are said -- joined along that axis (torch.cat, trial 22g's
    # ch03-g03a), or a new axis with a wrong tensor
    assert "torch.stack puts tensors of EQUAL shapes" in text and "torch.cat([h, c], dim=-1)" in text, text
    assert "gives (2, 10)" in text and "a tensor here is not the one you meant" in text, text
    text = message("Att().batched(torch.ones(2, 4, 3), torch.ones(2, 4, 3))")
    assert "a (2, 4, 3) @ b (2, 4, 3)" in text and "a @ b.mT would give (2, 4, 4)" in text, text
    # two tensors of one shape: the element-wise product is said first (trial 22h's ch03-h03a, f @ c_prev)
    assert "a * b (element-wise: `*`, not `@`) would give (2, 4, 3)" in text, text
    assert text.index("a * b (element-wise") < text.index("a @ b.mT"), text
    text = message("bilinear(torch.ones(2, 3, 6), torch.ones(6, 5), torch.ones(2, 4, 5))")   # W.T for W
    assert "dec @ W would give (2, 3, 5)" in text and "in place of" not in text, text
    text = message("fill(torch.ones(2, 5, 3), 5)")    # trial 22f f02b: the outputs made like x (D, not H)
    assert "outputs[:, t] has shape (2, 3) but h has shape (2, 4): outputs was made with other" in text
    text = message("loss_of(torch.ones(2, 5, 6), torch.zeros(2, 4, dtype=torch.long))")   # f06d: a step too many
    assert "has 10 rows of scores but dec_out.reshape(-1) has 8 targets" in text and "one step for a batch of 2" in text
    text = message("stack(torch.ones(2, 5, 3), [torch.nn.LSTM(3, 4, batch_first=True)] * 2)")   # f05e: input_size
    assert "layer is an nn.LSTM built with input_size=3, but what you give it has 4 features" in text, text
    text = message("dot(torch.ones(2, 3, 5), torch.ones(2, 4, 5))")   # trial 22f f08b: the other operand transposed
    assert "dec @ enc.mT would give (2, 3, 4)" in text, text
    text = message("keys_of(torch.ones(2, 4, 5), torch.ones(1, 6), torch.ones(1, 5))")   # U for V: a slip
    assert "V.T in place of U.T would give (2, 4, 1)" in text, text
    text = message("Att().encode(torch.ones(3, 6, 3), torch.tensor([6, 2, 1]))")
    assert "without batch_first=True" in text and "pack_padded_sequence(x, lengths, enforce_sorted=False)" in text
    text = message("read_early(Stepper())")
    assert "last_weights is set by its method step" in text and "read it after the call to step" in text, text
    text = message("misspelt(Stepper())")
    assert "did you mean" not in text, text     # no attribute of that kind yet: no guess
    shell.run_cell("s = Stepper()\ns.reset()", store_history=True)
    assert "did you mean count?" in message("misspelt(s)")


def test_an_error_in_an_earlier_part_names_the_later_part_that_called_it(shell):
    """Trial 22b ch01-M6, ch02-M2 (misleading): an error raised inside a correct earlier function because a later
    one called it with wrong arguments names the call site too, with the shapes the inner function received."""

    shell.run_cell("import torch\nimport torch.nn.functional as F\nfrom seqcourse.checks import explain_errors\n"
                   "explain_errors()\n", store_history=True)
    shell.run_cell("def step(logits, y):\n    return F.cross_entropy(logits, y)\n", store_history=True)
    shell.run_cell("def fit(x, y):\n    idx = torch.arange(4)\n    return step(x[idx], y)\n"
                   "def cell(x_t, h_prev, W_hh):\n    return torch.tanh(h_prev @ W_hh.T + x_t)\n"
                   "def layer(x, W_hh):\n    h = x.new_zeros(x.shape[0], x.shape[1])\n"
                   "    return cell(x, h, W_hh)\n"
                   "def norms(grads):\n    return sum((g ** 2).sum() for g in grads)\n", store_history=True)

    message = functools.partial(_brief_message, shell)
    text = message("fit(torch.ones(10, 3), torch.zeros(10, dtype=torch.long))")
    assert 'at your line "return F.cross_entropy(logits, y)"' in text and "in step)" in text, text
    assert 'called from your line "return step(x[idx], y)"' in text and "in fit)" in text, text
    assert "step received logits (4, 3), y (10,)" in text and "check what fit passes to it" in text, text
    text = message("layer(torch.ones(2, 3), torch.ones(4, 4))")          # another part, another argument
    assert 'called from your line "return cell(x, h, W_hh)"' in text, text
    assert "cell received x_t (2, 3), h_prev (2, 3), W_hh (4, 4)" in text, text
    text = message("norms([torch.ones(2), None])")     # a generator expression is the same function: no caller
    assert "called from" not in text and "received" not in text, text


def test_an_input_not_used_and_an_inverse_transform_are_named():
    """Trial 22b ch04-M2, ch04-M3, ch07-M1 (a term left out) and ch04-M1 (a square weight without its .T): the
    student's own function on changed inputs names the input it ignores or the transform it undoes."""
    W, b = torch.randn(4, 4), torch.randn(4)
    h = torch.randn(2, 4)
    right = lambda h, W, b: torch.tanh(h @ W.T + b)   # noqa: E731
    no_bias = lambda h, W, b: torch.tanh(h @ W.T)     # noqa: E731
    no_t = lambda h, W, b: torch.tanh(h @ W + b)      # noqa: E731
    for student, cause in ((no_bias, r"does not change when b is replaced by other numbers: that input is not used"),
                           (no_t, r"expected result when W is transposed: use W.T")):
        when = checks.results_when(student, {"b is replaced by other numbers": (h, W, b + 1)})
        inverse = checks.results_when(student, {"W is transposed: use W.T": (h, W.T, b)})
        _fails(cause, assert_close, student(h, W, b), right(h, W, b), unchanged_when=when, inverse=inverse)
    # the right function: its values equal the expected ones, nothing fires; a value that does not fit is ignored
    assert_close(right(h, W, b), right(h, W, b), unchanged_when={"b changes": right(h, W, b)}, inverse={"x": 1})
    assert checks.results_when(lambda x: x.foo, {"broken": (1,)}) == {}
    stacked = torch.arange(8.0).reshape(2, 2, 2).reshape(4, 2)
    assert torch.equal(checks.transpose_blocks(stacked, 2, which=[1]), torch.tensor([[0., 1], [2, 3], [4, 6], [5, 7]]))


def test_a_layer_setting_and_an_argument_not_passed_on_are_named():
    """Trial 22b ch01-M3 (an RNN without batch_first: named only when the values are wrong, since a time-first
    RNN fed the transposed input is right) and ch07-M5 (a decoder that does not pass mask to its attention)."""
    class Seq(nn.Module):
        def __init__(self, batch_first, transpose=False):
            super().__init__()
            self.rnn, self.transpose = nn.RNN(3, 4, batch_first=batch_first), transpose

        def forward(self, x):
            return self.rnn(x.transpose(0, 1))[0].transpose(0, 1) if self.transpose else self.rnn(x)[0]

    torch.manual_seed(0)
    right, x = Seq(True), torch.randn(2, 5, 3)
    wrong, other = Seq(False), Seq(False, transpose=True)
    wrong.load_state_dict(right.state_dict()), other.load_state_dict(right.state_dict())
    assert checks.setting_fixes(right, lambda m: m(x), ("rnn",), batch_first=True) == {}
    fixes = checks.setting_fixes(wrong, lambda m: m(x), ("rnn",), batch_first=True)
    _fails(r"expected result when self.rnn is built with batch_first=True: pass batch_first=True to RNN",
           assert_close, wrong(x), right(x), inverse=fixes)
    assert_close(other(x), right(x), inverse=checks.setting_fixes(other, lambda m: m(x), ("rnn",), batch_first=True))
    assert wrong.rnn.batch_first is False            # the student's model itself is not changed

    class Attend(nn.Module):
        def forward(self, h, enc, mask=None):
            return h if mask is None else h * 2

    class Dec(nn.Module):
        def __init__(self, passes):
            super().__init__()
            self.attention, self.passes = Attend(), passes

        def forward(self, h, enc, mask=None):
            return self.attention(h, enc, mask=mask) if self.passes == "keyword" else (
                self.attention(h, enc, mask) if self.passes else self.attention(h, enc))

    for passes in ("keyword", True):
        dec = Dec(passes)
        checks.check_passes(dec.attention, "Dec", "mask")
        dec(torch.ones(1), torch.ones(1), torch.ones(1))
    dec = Dec(False)
    handle = checks.check_passes(dec.attention, "Dec", "mask", "it masks only what it is told")
    _fails(r"Dec calls its Attend without mask \(mask is None inside it, although Dec was given one\): pass mask on "
           r"to it \(it masks only what it is told\)", dec, torch.ones(1), torch.ones(1), torch.ones(1))
    handle.remove()
    dec(torch.ones(1), torch.ones(1))


def test_cat_where_stack_was_needed_is_named():
    """Trial 22 ch05-m4: h_n joined with cat instead of stack: one axis fewer, two axes merged."""
    _fails(r"one axis fewer: your axis 0 \(size 4\) holds the expected axes 0 and 1 \(2 x 2\) merged: torch.cat",
           assert_shape, torch.zeros(4, 5), (2, 2, 5), "h_n")
    _fails(r"stack where cat was needed", assert_shape, torch.zeros(2, 2, 5), (4, 5), "h_n")
    x = torch.randn(2, 3, 5)
    _fails(r"right in memory order but the shape is wrong: one axis fewer", assert_close, x.reshape(6, 5), x)


def test_round3_classes_are_named():
    """Issue 22, round 3: the classes the second trial found without a cause, as generic diagnoses."""
    # one slot from another slot (not a permutation): every kind on its own, then all of them
    slips = checks.slot_mistakes("ab", lambda m: m, kinds=("W", "b"), names={"a": "gate a", "b": "gate b"})
    assert {"W": "bb", "b": "ab"} in slips.values() and {"W": "aa", "b": "aa"} in slips.values()
    assert any(k.startswith("Gate a uses gate b's W ") for k in slips)
    # a nonlinearity swapped, from a function or from a table of values
    acts = checks.activation_mistakes({"r": "sigmoid"}, lambda a: a["r"], names={"r": "the reset gate"})
    assert acts == {"The reset gate computed with tanh where sigmoid is asked": "tanh",
                    "The reset gate computed with relu where sigmoid is asked": "relu",
                    "The reset gate computed without its sigmoid (no nonlinearity)": "identity",
                    "The reset gate computed with its sigmoid applied twice (a second sigmoid around a value that "
                    "already has one)": "sigmoid twice"}
    table = checks.activation_mistakes({"r": "sigmoid", "n": "tanh"}, {("n", "relu"): 3.0})
    assert table == {"N computed with relu where tanh is asked": 3.0}
    # norms reduced another way, counts with one term wrong
    red = checks.reduction_mistakes([torch.tensor([3.0, 4.0]), torch.tensor([12.0])])
    _fails(r"take each part's norm and add them up", assert_close, 17.0, 13.0, mistakes=red)
    terms = checks.term_mistakes({"the keys": 120, "the queries": 48, "the dots": 60}, {"B": 2})
    _fails(r"count the keys B=2 times too rarely \(60 instead of 120.*or leave out the dots", assert_close, 168, 228,
           atol=0, rtol=0, mistakes=terms)
    _fails(r"count everything B=2 times too rarely", assert_close, 114, 228, atol=0, rtol=0, mistakes=terms)
    # an argument ignored; a layer's settings
    _fails(r"f\(\) gives the same result for lr=0.1 and lr=0.5: it ignores its lr argument",
           checks.assert_uses_argument, {0.1: [1.0, 2.0], 0.5: [1.0, 2.0]}, "lr", "f()")
    checks.assert_uses_argument({0.1: [1.0, 2.0], 0.5: [1.0, 2.5]}, "lr", "f()")
    _fails(r"self.rnn is built with nonlinearity='relu', but the docstring asks for nonlinearity='tanh'",
           checks.assert_configured, checks.layer_settings(nn.RNN(2, 3, nonlinearity="relu")), "self.rnn",
           nonlinearity="tanh")
    # lists: reversed, extra items
    _fails(r"the same items in reverse order", checks.assert_equal, [3, 2, 1], [1, 2, 3])
    assert "keep only beam_size=2" in checks.list_hint([[1], [2], [3]], [[1], [3]], count="beam_size=2")
    assert "every item is the same, item 0's: one value used for every row" in checks.list_hint([[6, 7]] * 3, [[6, 7], [9], [4]])
    # a softmax of scaled energies, named from the sizes in play; a plain factor named as a size
    s = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    want, got = (s / math.sqrt(5)).softmax(-1), (s / math.sqrt(3)).softmax(-1)
    _fails(r"softmax of the expected energies times 1.291 = sqrt\(D/Ty\) \(D=5, Ty=3\): divided by sqrt\(Ty\) where "
           r"sqrt\(D\)", assert_close, got, want, sizes={"D": 5, "Ty": 3})
    _fails(r"4 times the expected ones = T \(T=4\)", assert_close, 4 * torch.arange(1.0, 4.0), torch.arange(1.0, 4.0),
           sizes={"T": 4})
    # the first wrong entry of a sequence (a training run's first loss)
    _fails(r"Likely cause: FIRST", assert_close, torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.5, 2.5, 3.5]),
           first_wrong={0: "FIRST", 1: "SECOND"})
    _fails(r"Likely cause: SECOND", assert_close, torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.5]),
           first_wrong={0: "FIRST", 1: "SECOND"})


def test_an_activation_too_many_or_too_few_and_a_concatenation_order_are_named():
    """Trial 22b ch03-M1 (a tanh applied twice) and ch07-M3 (fc given [h_right; h_left]): a nonlinearity one too
    many or too few on the whole value, a slot's own activation applied twice, and a concatenation fed to a layer in
    another order (no shape error when the parts add up) are named; a value these do not fit stays unnamed."""
    torch.manual_seed(3)
    e = torch.tanh(torch.randn(3, 5))
    _fails(r"tanh of the expected ones: a tanh applied twice", assert_close, torch.tanh(e), e)
    _fails(r"tanh of your values gives the expected ones: a tanh missing", assert_close, torch.atanh(e), e)
    s = torch.sigmoid(torch.randn(3, 5))
    _fails(r"sigmoid of the expected ones", assert_close, torch.sigmoid(s), s)
    r = torch.relu(torch.randn(3, 5))
    _fails(r"negative where 0 is expected: a ReLU \(or clamp at 0\) missing", assert_close, r - 2 * (r == 0), r)
    raw = torch.randn(3, 5)
    _fails(r"every negative entry set to 0: a ReLU", assert_close, torch.relu(raw), raw)
    assert checks.diagnose(e + 0.3, e) == ""                      # a shift is none of these
    # a slot's own activation applied twice (computed values)
    acts = checks.activation_mistakes({"n": "tanh", "r": "sigmoid"}, lambda a: a, names={"n": "the candidate n"})
    assert "The candidate n computed with its tanh applied twice (a second tanh around a value that already has one)" in acts
    assert not any(d.startswith("R computed") and "tanh" in d and "where" not in d for d in acts)   # only its own

    class Enc(nn.Module):
        def __init__(self, swap):
            super().__init__()
            self.fc, self.swap = nn.Linear(6, 2), swap

        def forward(self, left, right):
            return self.fc(torch.cat([right, left] if self.swap else [left, right], dim=-1))

    left, right = torch.randn(2, 2), torch.randn(2, 4)             # sizes differ: still no shape error when swapped
    good, bad = Enc(False), Enc(True)
    bad.load_state_dict(good.state_dict())
    call = lambda m: m(left, right)   # noqa: E731
    inverse = checks.input_orders(bad, call, "fc", [("h_left", 2), ("h_right", 4)])
    _fails(r"you give self.fc \[h_right; h_left\], concatenate \[h_left; h_right\]", assert_close, call(bad),
           call(good), inverse=inverse)
    assert_close(call(good), call(good), inverse=checks.input_orders(good, call, "fc", [("h_left", 2), ("h_right", 4)]))
    assert checks.input_orders(good, call, "fc", [("h_left", 2), ("h_right", 3)]) == {}   # sizes that do not fit


def test_a_known_answer_is_said_last():
    """Trial 22b ch09-M5 (label_smoothing added): the student's own loss on perfect scores, which must be 0, is named
    when nothing else explains the difference; a named mistake still comes first."""
    known = {"perfect scores must cost 0": (torch.tensor(4.1667), 0.0)}
    _fails(r"Likely cause: perfect scores must cost 0: yours gives 4.167 instead of 0", assert_close,
           torch.tensor(1.75), 1.7385, known=known)
    _fails(r"what you get if you sum", assert_close, torch.tensor(3.0), 1.5, known=known, mistakes={"sum": 3.0})
    assert checks.diagnose(torch.tensor(1.75), torch.tensor(1.7385), known={"k": (torch.tensor(0.0), 0.0)}) == ""


def test_a_layer_used_in_place_of_another_is_named():
    """Trial 22b ch09-M1 (c_0 projected with W_h, the same shape as W_c): the student's own model with one layer's
    weights changed gives the same result: that layer is not used."""
    class Two(nn.Module):
        def __init__(self, slip):
            super().__init__()
            self.W_h, self.W_c, self.slip = nn.Linear(3, 2), nn.Linear(3, 2), slip

        def forward(self, x):
            return (self.W_h if self.slip else self.W_c)(x)

    x = torch.randn(4, 3)
    good, bad = Two(False), Two(True)
    bad.load_state_dict(good.state_dict())
    when = checks.layers_changed(bad, lambda m: m(x), ("W_c",))
    _fails(r"does not change when the weights of self.W_c are replaced by other numbers: that layer is not used "
           r"\(another layer used in its place", assert_close, bad(x), good(x), unchanged_when=when)
    assert_close(good(x), good(x), unchanged_when=checks.layers_changed(good, lambda m: m(x), ("W_c",)))


def test_normalised_over_the_wrong_axis_and_list_layouts_are_named():
    """Trial 22d ch07-M6 (log_softmax over the batch), ch07-M3 (tokens collected per step), ch06-M3 (tokens kept
    after <eos>)."""
    scores = torch.randn(3, 5)
    _fails(r"log-probabilities normalised over dimension 0 \(their exp sums to 1 along it\), not over the last one",
           assert_close, scores.log_softmax(0), scores.log_softmax(-1))
    _fails(r"probabilities normalised over dimension 0 \(they sum to 1 along it\)", assert_close, scores.softmax(0),
           scores.softmax(-1))
    want = [[4, 5, 6], [7, 8, 9]]
    assert "transposed: one list per step" in checks.list_hint([[4, 7], [5, 8], [6, 9]], want)
    assert "starts with the expected items" in checks.list_hint([[4, 5, 6, 3], [7, 8, 9]], want)
    assert checks.list_hint(want, want) == ""
    # left padding where right padding is asked (the rows' items end at the row's end), and rows sorted longest first
    assert "the padding (0) comes BEFORE them" in checks.list_hint([[5, 6, 7], [0, 0, 8], [0, 9, 10]],
                                                                    [[5, 6, 7], [8, 0, 0], [9, 10, 0]])
    assert "BEFORE" not in checks.list_hint([[5, 6, 7], [0, 0, 9], [0, 9, 10]], [[5, 6, 7], [8, 0, 0], [9, 10, 0]])
    assert "sorted longest first" in checks.list_hint([[5, 6, 7], [9, 10, 0], [8, 0, 0]],
                                                     [[5, 6, 7], [8, 0, 0], [9, 10, 0]])
    # trial 22e ch09-M5: the start token kept in every hypothesis; and the other ends, one item off
    assert "an extra first item 1, before the expected ones: a start token kept" in checks.list_hint(
        [[1, 5, 3, 3, 5]], [[5, 3, 3, 5]])
    assert "an extra first item 1 in each list" in checks.list_hint([[1, 5, 3], [1, 4]], [[5, 3], [4]])
    assert "the first expected item is missing" in checks.list_hint([3, 9], [5, 3, 9])
    assert "the last expected item is missing" in checks.list_hint([5, 3], [5, 3, 9])
    # trial 22h ch06-h06b (<eos> appended inside the loop over the tokens) and ch06-h06e (break for continue)
    assert "the item 2 is in your list 2 times more than expected, between the expected items: a step written " \
        "inside a loop" in checks.list_hint([1, 5, 2, 4, 2, 6, 2], [1, 5, 4, 6, 2])
    assert "some of your lists stop before the end (2 items missing at the ends" in checks.list_hint(
        [[6, 7, 8], [9], [4, 4, 4]], [[6, 7, 8], [9], [4, 4, 4, 4, 4]])
    assert "the item 2 is missing 2 times" in checks.list_hint([1, 3, 5], [1, 2, 3, 2, 5])
    assert checks.list_hint([1, 9, 3], [1, 2, 3]) == ""          # an item replaced: none of these
    assert "item" not in checks.list_hint([[5, 3], [4, 2]], [[5, 3, 1], [4]])   # two different ends: no guess


def test_the_error_table_matches_pytorchs_own_messages():
    """Each new entry of the one-line error hints (trial 22h's PyTorch errors with no cause) is a substring of the
    message PyTorch really raises, so the hint shows up (a PyTorch upgrade that rewords one fails here)."""
    import pytest
    import torch

    from seqcourse import checks

    keys = [k for k, _ in checks._ERROR_HINTS]
    cases = [lambda: bool(torch.ones(2)),                                          # if t:
             lambda: torch.nn.Linear(3, 2)(torch.ones(2, 3, dtype=torch.long)),     # ids into a layer
             lambda: torch.mm(torch.ones(2, 3, 4), torch.ones(4, 5)),               # mm on a batch
             lambda: torch.bmm(torch.ones(2, 3, 4), torch.ones(4, 5)),              # bmm with a 2-D weight
             lambda: torch.nn.GRUCell(3, 4)(torch.ones(2, 9)),                      # input_size
             lambda: torch.ones(2, 4).expand_as(torch.ones(2, 3, 4, 5))]            # expand without the axis
    for make in cases:
        with pytest.raises(Exception) as info:
            make()
        message = " ".join(str(info.value).split())
        assert any(k in message for k in keys), message


def test_common_pytorch_errors_get_the_hint_written_for_them():
    """The errors a student meets most while writing these exercises (found by running each wrong call; none is in
    a trial yet) each get the entry written for it, not an earlier, more general one."""
    import pytest
    import torch
    import torch.nn.functional as F
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence

    from seqcourse import checks

    def backward_twice():
        w = torch.ones(2, requires_grad=True)
        z = ((w * 3) ** 2).sum()
        z.backward()
        z.backward()

    def unbound():
        if False:
            blocks = 1
        return blocks  # noqa: F821

    long_ids = torch.zeros(6, dtype=torch.long)
    cases = {"view size is not compatible": lambda: torch.ones(2, 3, 4).transpose(1, 2).view(2, 12),
             "is invalid for input of size": lambda: torch.ones(2, 3, 4).reshape(5, 4),
             "to match target batch_size": lambda: F.cross_entropy(torch.ones(6, 5), long_ids[:3]),
             "cannot be converted to Scalar": lambda: torch.ones(3).item(),
             "only one element tensors": lambda: int(torch.ones(3)),
             "'torch.Size' object is not callable": lambda: torch.ones(3).shape(),
             "'Tensor' object is not callable": lambda: torch.ones(3)(2),
             "only supports boolean masks": lambda: torch.ones(3).masked_fill(torch.ones(3, dtype=torch.long), 0),
             "for index": lambda: torch.ones(3, 4).gather(1, torch.zeros(3, 1)),
             "too many indices": lambda: torch.ones(3)[:, 0],
             "stack expects": lambda: torch.stack([torch.ones(3), torch.ones(4)]),
             "Sizes of tensors must match": lambda: torch.cat([torch.ones(2, 3), torch.ones(3, 3)], dim=1),
             "a leaf Variable": lambda: nn.Linear(2, 2).weight.add_(1),
             "Can't call numpy()": lambda: nn.Linear(2, 2).weight.numpy(),
             "multi-target": lambda: F.cross_entropy(torch.ones(6, 5), long_ids[:, None]),
             "expected target dtype": lambda: F.cross_entropy(torch.ones(6, 5), torch.zeros(6)),
             "input.size(-1)": lambda: nn.LSTM(3, 4, batch_first=True)(torch.ones(2, 5, 9)),
             "For unbatched 2-D input": lambda: nn.LSTM(3, 4)(torch.ones(5, 3), (torch.ones(1, 2, 4),) * 2),
             "Odd number of params or hiddens given to a bidirectional RNN": lambda: nn.LSTM(3, 4, bidirectional=True)(
                 nn.utils.rnn.pack_padded_sequence(torch.ones(5, 2, 3), torch.tensor([5, 3])),
                 (torch.zeros(1, 2, 4),) * 2),
             "'indices' to have": lambda: nn.Embedding(5, 3)(torch.ones(2, 3)),
             "must be Tensor, not": lambda: F.cross_entropy(torch.ones(6, 5), long_ids, 0),
             "could not infer output dtype": lambda: torch.ones(3, dtype=torch.bool).mean(),
             "can't be cast": lambda: torch.zeros(3, dtype=torch.long).add_(0.5),
             "is out of bounds.": lambda: F.cross_entropy(torch.ones(6, 5), torch.full((6,), 7)),
             "enforce_sorted": lambda: pack_padded_sequence(torch.ones(2, 5, 3), torch.tensor([3, 5]),
                                                            batch_first=True),
             "greater than 0": lambda: pack_padded_sequence(torch.ones(2, 5, 3), torch.tensor([5, 0]),
                                                            batch_first=True),
             "len(lengths)": lambda: pack_padded_sequence(torch.ones(2, 5, 3), torch.tensor([5, 3])),
             "has no len()": lambda: len(5),
             "'int' object is not iterable": lambda: [t for t in 5],
             "Unknown nonlinearity": lambda: nn.RNN(3, 4, 1, True),
             "cannot assign module before Module.__init__() call": lambda: type(
                 "Early", (nn.Module,), {"__init__": lambda self: setattr(self, "rnn", nn.RNN(2, 2))})(),
             "size mismatch (got input: [": lambda: F.cross_entropy(torch.ones(3, requires_grad=True),
                                                                   long_ids[:1]).backward(),
             "must be Tensor, not tuple": lambda: nn.Linear(2, 2)(nn.RNN(2, 2, batch_first=True)(torch.ones(1, 3, 2))),
             "'float' object is not iterable": lambda: [1.0].__iadd__(2.5),
             "only integer tensors of a single element": lambda: torch.ones(2, 5, 3)[:, :torch.tensor([2, 3])],
             "has no attribute 'backward'": lambda: (1.5).backward(),
             "'NoneType' object has no attribute 'zero_'": lambda: nn.Linear(2, 2).weight.grad.zero_(),
             "'NoneType' object has no attribute 'mul_'": lambda: nn.Linear(2, 2).weight.grad.mul_(2.0),
             "'float' object has no attribute 'item'": lambda: (0.5).item(),
             "must be tuple of ints, not float": lambda: torch.ones(8).split(8 / 4),
             "must be int, not float": lambda: torch.ones(8).chunk(8 / 4),
             "'Parameter' object is not callable": lambda: nn.Parameter(torch.ones(2))(torch.ones(2)),
             "cannot access local variable": unbound,
             "non-iterable builtin_function_or_method": lambda: [b for b, t in [torch.ones(2, 3).size]],
             "'builtin_function_or_method' object is not subscriptable": lambda: torch.ones(2, 3).size[0],
             "must be tuple of Tensors, not Tensor": lambda: torch.cat(torch.ones(2), torch.ones(2)),
             "must be tuple of Tensors, not": lambda: torch.stack(reversed([torch.ones(2)])),
             "not implemented for 'Bool'": lambda: torch.einsum("bt,btf->bf", torch.ones(2, 3, dtype=torch.bool),
                                                                torch.ones(2, 3, 4)),
             "1D tensors expected, but got": lambda: torch.dot(torch.ones(2, 3, 4), torch.ones(4)),
             "must be real number, not torch.Size": lambda: math.sqrt(torch.ones(2).shape),
             "cannot be broadcast to indexing result": lambda: torch.zeros(2, 3).__setitem__(
                 torch.tensor([True, False]), torch.ones(2, 3)),
             "backward through the graph a second time": backward_twice,
             "missing 1 required positional argument": lambda: torch.softmax(torch.ones(3)),
             "Double and Float": lambda: nn.LSTMCell(3, 4)(torch.ones(2, 3, dtype=torch.float64)),
             "double != float": lambda: torch.ones(2, 3, dtype=torch.float64) @ torch.ones(3, 4),
             "float != double": lambda: torch.ones(2, 3) @ torch.ones(3, 4, dtype=torch.float64),
             "scalar type Double but found Float": lambda: torch.ones(2, 2, 3, dtype=torch.float64) @ torch.ones(2, 3, 4),
             "takes 1 positional argument": lambda: torch.zeros((2, 3), 4),
             "got (float, Tensor)": lambda: torch.ones(2, 3).masked_fill(float("-inf"), torch.ones(2, 3) > 0),
             "t() expects a tensor with <= 2 dimensions": lambda: torch.ones(2, 3, 4).t(),
             "~ (operator.invert) is only implemented": lambda: ~torch.ones(2, 3),
             "hx should also be 3-D": lambda: nn.GRU(4, 5, batch_first=True)(torch.ones(2, 3, 4), torch.zeros(2, 5)),
             "class probabilities": lambda: F.cross_entropy(torch.randn(4), torch.tensor([0, 1, 1, 0])),
             "but got tuple": lambda: torch.stack([(torch.ones(2), torch.ones(2))]),
             "weight tensor should be defined either for all": lambda: F.cross_entropy(
                 torch.ones(8, 6), torch.zeros(8, dtype=torch.long), weight=torch.ones(8)),
             "zero-dimensional tensor (at position": lambda: torch.cat([torch.ones(2).sum(), torch.ones(2).sum()]),
             "must be greater or equal to the number of dimensions in the tensor": lambda: torch.zeros(2, 4, 3).__setitem__(
                 (slice(None), 0), torch.ones(2, 1, 3)),
             "'tuple' object has no attribute 'batch_sizes'": lambda: nn.utils.rnn.pad_packed_sequence(
                 nn.LSTM(3, 4)(pack_padded_sequence(torch.ones(5, 2, 3), torch.tensor([5, 3]))))}
    for part, make in cases.items():
        with pytest.raises(Exception) as info:
            make()
        message = " ".join(str(info.value).split())
        key = next((k for k, _ in checks._ERROR_HINTS if k in message), None)
        assert key is not None and part in key, (part, message, key)


def test_trial_22i_misleading_and_partial_messages_name_their_cause():
    """Trial 22i: a count that is 0 for every value of an argument is not "ignores its argument" (ch04-h04e); one
    item moved from the front to the back of a list (ch06-h06b); each row cut one item short by a slice, where one
    row is a single item (ch07-h07e: [] for [7] fits both a missing first and a missing last item); a softmax written
    by hand whose sum lost its axis (ch08-h08a); outputs right at the first step and wrong after it (ch09-h09c)."""
    import pytest

    with pytest.raises(AssertionError, match=r"gives 0 \(or nothing\) for bias=True and bias=False: the result is "
                                             r"empty or zero whatever bias is.*a False, an empty range"):
        checks.assert_uses_argument({True: 0, False: 0}, "bias", "count_parameters('gru', 3, 6)")
    assert "the item 1 is at position 3 of your list where it belongs at the start" in checks.list_hint(
        [5, 4, 6, 1, 2], [1, 5, 4, 6, 2])
    assert "the last expected item is missing in each list" in checks.list_hint([[5], []], [[5, 6], [7]])
    assert "a slice that ends one item early" in checks.list_hint([[5], []], [[5, 6], [7]])
    e = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0))
    a = e.clone()
    a[:, 1:] += 0.3
    assert "index 0 of dimension 1 are right and every later index is wrong" in checks.diagnose(a, e)
    assert "dimension 1" not in checks.diagnose(e + 0.3, e)


def test_a_sum_that_lost_its_axis_is_told_keepdim():
    """A softmax by hand, e.exp() / e.exp().sum(-1): the broadcast error at the student's line offers keepdim=True."""
    def softmax_by_hand(e):
        return e.exp() / e.exp().sum(-1)

    try:
        softmax_by_hand(torch.ones(2, 3, 4))
    except RuntimeError as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        frame = tb.tb_frame
        hint = checks._shape_hint_at(str(exc), "return e.exp() / e.exp().sum(-1)", dict(frame.f_locals), "")
    assert hint and "keepdim=True in the sum keeps it" in hint, hint


def test_trial_22j_misleading_messages_name_another_possible_cause():
    """Trial 22j: a list shared by every row ([[]] * B) is named with "every item is the same" (ch06-h06e); the
    NoneType hint names an in-place method used as a value first (ch06-h06a, `SPECIALS + kept.sort()`)."""
    assert "ONE list shared by every row ([[]] * B" in checks.list_hint([[6, 9], [6, 9], [6, 9]], [[6], [9], [4]])
    message = 'can only concatenate list (not "NoneType") to list'
    hint = next(h for k, h in checks._ERROR_HINTS if k in message)
    assert hint.startswith("a value is None: the result of a method that works in place and returns None (list.sort()")


def test_a_name_or_key_error_names_its_cause_from_the_line():
    """Trial 22k: `F` used without its import (ch04-h04a), a generator whose two for clauses are in the wrong order
    (ch06-h06b), a variable's name written as a string key (ch03-h03c); another NameError gets nothing."""
    from seqcourse import checks

    def raised(code, env):
        try:
            exec(code, env)
        except (NameError, KeyError) as e:
            return e
        raise AssertionError("no error")

    e = raised("F.linear", {})
    assert "import torch.nn.functional as F" in checks._name_hint(e, "gi = F.linear(x, w)", "f", {})
    line = "counts = Counter(token for token in seq for seq in sequences)"
    e = raised("list(token for token in seq for seq in [[1]])", {})
    assert "the first one is the outer loop" in checks._name_hint(e, line, "build_vocab", {})
    assert checks._name_hint(e, "y = seq + 1", "f", {}) is None
    e = raised('{"a": 1}["k"]', {})
    line = 'pre = {k: x @ Wx[k].T + h_prev @ Wh["k"].T for k in GATES}'
    assert "not your variable k: write [k] without quotes" in checks._name_hint(e, line, "<dictcomp>", {"k": "i"})
    assert checks._name_hint(e, line, "<dictcomp>", {}) is None


def test_trial_22k_errors_name_their_cause(shell):
    """Trial 22k: the softmax's output changed in place after the call (ch09-h09b: PyTorch names the op at backward),
    torch.tensor of a list of tensors (ch07-h07e), F used without its import (ch04-h04a)."""

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def attend(e):\n"
                   "    alpha = torch.softmax(e, dim=-1)\n"
                   "    alpha.mul_(2)\n"
                   "    return alpha\n"
                   "def weights_of(steps):\n"
                   "    return torch.tensor(steps)\n"
                   "def gates(x, w):\n"
                   "    return F.linear(x, w)\n", store_history=True)
    text = _brief_message(shell, "e = torch.ones(2, 3, requires_grad=True)\nattend(e).sum().backward()")
    assert "the tensor changed in place is the output of a softmax (shape (2, 3))" in text
    text = _brief_message(shell, "weights_of([torch.ones(3), torch.ones(3)])")
    assert "join tensors with torch.stack(xs)" in text
    text = _brief_message(shell, "gates(torch.ones(2, 3), torch.ones(4, 3))")
    assert "F is a module: `import torch.nn.functional as F` at the top of your cell" in text


def test_errors_inside_pytorch_calls_name_the_argument_that_breaks_the_rule(shell):
    """Trial 22m's "partly" messages (PyTorch's own error, nothing added): the argument of the call on the student's
    line that breaks the call's rule is named with what it holds and what takes it (torch.mv of a batch, a 2-D
    index for index_select, a cell given (B, 1, E), a pair for nn.RNN's state, the state and the input of a cell in
    each other's place, an index past the end, a boolean mask of another shape than the tensor's first axes, a
    flatten that merged the batch, a weight at the wrong end of a chain, a notebook function's arguments swapped)."""

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell(
        "def mv_wrong(W, x):\n"
        "    return torch.mv(W, x)\n"
        "def select_wrong(x, idx):\n"
        "    return x.index_select(1, idx)\n"
        "def step_wrong(cell, emb, y):\n"
        "    return cell(emb(y.unsqueeze(1)))\n"
        "def rnn_pair(rnn, x, h):\n"
        "    return rnn(x, (h, h))\n"
        "def lstm_swapped(cell, x, h, c):\n"
        "    return cell((h, c), x)\n"
        "def reversed_wrong(emb):\n"
        "    Tx = emb.shape[1]\n"
        "    return [emb[:, Tx - t] for t in range(Tx)]\n"
        "def mask_wrong(energies, mask):\n"
        "    energies[~mask] = float('-inf')\n"
        "def flatten_wrong(head, h_n):\n"
        "    return head(h_n.flatten())\n"
        "def chain_wrong(dec, enc, W):\n"
        "    return dec @ enc.transpose(1, 2) @ W\n"
        "def step(model, y, o_prev, state):\n"
        "    return state[0] * 2.0 + o_prev\n"
        "def caller(model, y, o, state):\n"
        "    return step(model, y, state, o)\n", store_history=True)
    message = functools.partial(_brief_message, shell)
    text = message("mv_wrong(torch.ones(6, 3), torch.ones(2, 3))")
    assert "torch.mv(M, v) multiplies a matrix by ONE vector" in text and "x (2, 3) (2-D)" in text, text
    text = message("select_wrong(torch.ones(2, 5, 3), torch.zeros(2, 5, dtype=torch.long))")
    assert "idx (2, 5) (2-D)" in text and "gather" in text, text
    text = message("step_wrong(torch.nn.GRUCell(3, 4), torch.nn.Embedding(7, 3), torch.tensor([1, 2]))")
    assert "which takes ONE step" in text and "(2, 1, 3)" in text and "`y.unsqueeze(1)`" in text, text
    text = message("rnn_pair(torch.nn.RNN(3, 4, batch_first=True), torch.ones(2, 5, 3), torch.zeros(1, 2, 4))")
    assert "its state is ONE tensor" in text and "(h, h) (a tuple of 2 tensors)" in text, text
    text = message("lstm_swapped(torch.nn.LSTMCell(3, 4), torch.ones(2, 3), torch.zeros(2, 4), torch.zeros(2, 4))")
    assert "the state (h, c) first and the input x second: the two in each other's place" in text, text
    text = message("reversed_wrong(torch.ones(2, 6, 3))")
    assert "Tx - t is 6 here (Tx = 6, t = 0)" in text and "run from 0 to 5" in text, text
    text = message("mask_wrong(torch.zeros(2, 3, 4), torch.ones(2, 4, dtype=torch.bool))")
    assert "does not broadcast" in text and "m[:, None, :]" in text, text
    text = message("flatten_wrong(torch.nn.Linear(4, 6), torch.ones(1, 2, 4))")
    assert text.split(" -- ")[1].startswith("h_n.flatten() is (8,): flatten merges every axis of h_n (1, 2, 4)")
    text = message("chain_wrong(torch.ones(2, 3, 6), torch.ones(2, 4, 5), torch.ones(6, 5))")
    assert "in the order dec @ W @ enc.transpose(1, 2) the sizes fit (giving (2, 3, 4))" in text, text
    assert "in place of" not in text, text
    text = message("caller(None, 1, torch.ones(2, 4), (torch.ones(2, 4), torch.ones(2, 4)))")
    assert "your line passes `state` as o_prev and `o` as state: two arguments in each other's place" in text, text


def test_the_profilers_notes_on_its_own_bookkeeping_never_reach_the_students_screen(capfd):
    """Trial 22m: PyTorch's profiler wrote "Memory block of unknown size was allocated before the profiling started"
    under a test cell of exercise 8 (a note of its own, written below Python, at file descriptor 2). What else is
    written there meanwhile still shows."""
    import os

    from seqcourse.checks import _without_profiler_notes

    with _without_profiler_notes():
        os.write(2, b"[W CPUAllocator.cpp:245] Memory block of unknown size was allocated before the profiling "
                    b"started, profiler results will not include the deallocation event\n")
        os.write(2, b"a real warning\n")
    err = capfd.readouterr().err
    assert "allocated before the profiling started" not in err and "a real warning" in err


def _raised(fn) -> str:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return str(exc)
    raise AssertionError("did not raise")


def test_shape_errors_name_a_slice_bound_a_sibling_layer_and_a_modules_parameters():
    """Trial 22n: ch03-n03a (W[k] split at D where H is meant, in a nested helper), ch07-n07e (self.W given the
    tensor self.U is built for), ch03-n03c (four names unpacked from the parameters of a bias-free cell)."""
    from torch import nn

    W, h_prev, x, k = {"i": torch.randn(4, 7)}, torch.randn(2, 4), torch.randn(2, 3), "i"
    D = x.shape[1]
    env = {"W": W, "h_prev": h_prev, "x": x, "k": k, "D": D, "H": 4, "torch": torch}
    line = "return h_prev @ W[k][:, :D].T + x @ W[k][:, D:].T"
    hint = checks._shape_hint_at(_raised(lambda: h_prev @ W[k][:, :D].T), line, env, "")
    assert hint.startswith("h_prev (2, 4) @ W[k][:, :D].T (3, 4): the slice bound D (3) in W[k][:, :D].T"), hint
    assert "with H (4) in its place the sizes fit (giving (2, 4))" in hint, hint

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.W, self.U = nn.Linear(3, 16), nn.Linear(4, 16)

    cell = Cell()
    env = {"self": cell, "x": torch.randn(2, 3), "h_prev": torch.randn(2, 4)}
    hint = checks._shape_hint_at(_raised(lambda: cell.W(env["h_prev"])), "z = self.W(x) + self.W(h_prev)", env, "")
    assert "self.U is built for 4 input features (and the same 16 outputs): is self.U the layer meant" in hint, hint

    lstm = nn.LSTMCell(3, 4, bias=False)

    def unpack():
        w_ih, w_hh, b_ih, b_hh = lstm.parameters()

    hint = checks._shape_hint_at(_raised(unpack), "w_ih, w_hh, b_ih, b_hh = lstm.parameters()", {"lstm": lstm}, "")
    assert "lstm.parameters() gives 2 here (weight_ih, weight_hh) for 4 names" in hint, hint
    assert "getattr(lstm, 'bias_ih', None)" in hint, hint


def test_a_float_where_an_int_is_asked_names_the_line_that_makes_it(shell):
    """Trial 22q ch04-q04e: a count that starts at 0.0 is a float; the message names that line of the student's
    function (not an edit elsewhere), and a division with / is named as such."""

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors, assert_type\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def count(n):\n    total = 0.0\n    for k in range(n):\n        total += k\n    return total\n"
                   "def halves(n):\n    return n * 4 / 2\n", store_history=True)
    text = _brief_message(shell, 'assert_type(count(3), "int", "count(3)")')
    assert 'your count makes a float at its line "total = 0.0": 0.0 is a float' in text and "write 0" in text, text
    text = _brief_message(shell, 'assert_type(halves(3), "int", "halves(3)")')
    assert 'at its line "return n * 4 / 2": / always gives a float' in text, text


def test_an_argument_read_but_without_effect_is_not_said_ignored(shell):
    """Trial 22q ch06-q06a: build_vocab reads min_freq as a share of all tokens, so min_freq=1 and min_freq=3 give the
    same vocabulary; the message names the line that reads it (it does not say the argument is ignored)."""

    shell.run_cell("from seqcourse.checks import explain_errors, assert_uses_argument\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def keep(counts, min_freq=1):\n    total = sum(counts)\n"
                   "    return ['<pad>'] + [c for c in counts if c / total >= min_freq]\n"
                   "def drop(counts, min_freq=1):\n    return [c for c in counts if c >= 2]\n", store_history=True)
    text = _brief_message(shell, 'assert_uses_argument({1: keep([1, 5]), 3: keep([1, 5], min_freq=3)}, '
                                 '"min_freq", "keep(counts)")')
    assert 'though your keep reads min_freq (your line "return [\'<pad>\'] + [c for c in counts if c / total >= ' \
        in text and "ignores" not in text, text
    text = _brief_message(shell, 'assert_uses_argument({1: drop([1, 5]), 3: drop([1, 5], min_freq=3)}, '
                                 '"min_freq", "drop(counts)")')
    assert "it ignores its min_freq argument" in text, text


def test_a_size_that_is_two_named_sizes_added_is_said_as_two_sequences_joined():
    """Trial 22q ch01-q01c: the encoder's and the decoder's outputs joined along time, (B, Tx + Ty, C) where
    (B, Ty, C) is asked: with the sizes named, 12 = 7 + 5 (Ty + Tx) is said."""
    hint = checks._shape_hint((2, 12, 6), (2, 7, 6), {"B": 2, "Tx": 5, "Ty": 7, "C": 6})
    assert hint.startswith("dimension 1 has 12 = 7 + 5 (Ty + Tx) where 7 (Ty) is expected: the Tx steps joined"), hint
    assert "Ty + Tx" not in checks._shape_hint((2, 12, 6), (2, 7, 6)), "no sizes named: no sum guessed"


def test_the_biases_of_a_bias_free_layer_are_said_none_with_the_flag_to_test(shell):
    """Trial 22q ch03-q03c: `if cell.bias is None` lets a bias-free cell through to cell.bias_ih + cell.bias_hh
    (None + None): the message says the layer was built with bias=False and that .bias is a flag."""

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def biases(cell):\n    return cell.bias_ih + cell.bias_hh\n", store_history=True)
    text = _brief_message(shell, "biases(torch.nn.LSTMCell(3, 4, bias=False))")
    assert "cell is built with bias=False, so its biases are None (cell.bias is False, a flag" in text, text
    assert "list.sort()" not in text, text


def test_a_pair_returned_in_the_other_order_is_said_so():
    """Trial 22q ch08-q08e: (contexts, weights) returned where (weights, contexts) is asked: assert_type(items=...)
    names the order; a pair of other shapes is left to the shape checks."""
    w, c = torch.zeros(2, 3, 4), torch.zeros(2, 3, 5)
    shapes = {"weights": (2, 3, 4), "contexts": (2, 3, 5)}
    _fails(r"f's value: your items have the shapes of \(contexts, weights\), in that order, where \(weights, "
           r"contexts\) is asked", checks.assert_type, (c, w), "tuple", "f's value", items=shapes)
    checks.assert_type((w, c), "tuple", "f's value", items=shapes)
    checks.assert_type((w, torch.zeros(2, 3)), "tuple", "f's value", items=shapes)


def test_trial_22r_errors_name_their_cause(shell):
    """Trial 22r: a length used as a position (ch05-r05b), [-1] of an empty list (ch09-r09e), an RNN state sized with
    the time axis (ch01-r01a), a reshape by another vocabulary's size (ch09-r09d)."""

    shell.run_cell("import torch\nfrom torch import nn\nfrom seqcourse.checks import explain_errors\n"
                   "explain_errors()\n", store_history=True)
    shell.run_cell(
        "def last(hs, lengths):\n"
        "    rows = torch.arange(len(lengths))\n"
        "    return torch.stack(hs, dim=1)[rows, lengths]\n"
        "def first(hyps):\n"
        "    out = []\n"
        "    for tokens in hyps:\n"
        "        out.append(tokens[-1])\n"
        "    return out\n"
        "def run(rnn, x):\n"
        "    h0 = x.new_zeros(1, x.shape[1], rnn.hidden_size)\n"
        "    return rnn(x, h0)\n"
        "VOCAB = list(range(67))\n"
        "def flat(logits):\n"
        "    return logits.reshape(-1, len(VOCAB))\n", store_history=True)
    text = _brief_message(shell, "last([torch.ones(2, 3)] * 4, torch.tensor([2, 4]))")
    assert "lengths holds [2, 4] here" in text and "4 is one past the last" in text and "lengths - 1" in text, text
    text = _brief_message(shell, "first([[4], []])")
    assert "tokens is empty here" in text and "no item -1" in text, text
    text = _brief_message(shell, "run(nn.GRU(3, 4, batch_first=True), torch.ones(2, 5, 3))")
    assert "h0 is (1, 5, 4): axis 1 has 5 where 2 (the batch size B) is expected" in text, text
    assert 'your line "h0 = x.new_zeros(1, x.shape[1], rnn.hidden_size)" makes it' in text, text
    text = _brief_message(shell, "flat(torch.ones(2, 4, 6))")
    assert "len(VOCAB) is 67, which is not a size of logits" in text, text


def test_trial_22r_values_name_their_cause(shell):
    """Trial 22r: index_select along the time axis with example indices (ch01-r01e); one number where a vector is
    asked, from zip over a tensor (ch03-r03e)."""

    _fails(r"a single number \(0-dim\) where a vector of 2 entries is asked: iterating over a tensor", assert_shape,
           torch.zeros(()), (2,))
    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def pick(x, idx):\n    return x.index_select(1, idx)\n", store_history=True)
    text = _brief_message(shell, "pick(torch.ones(20, 3, 1), torch.tensor([4, 17]))")
    assert "x (20, 3, 1).index_select(1, idx): the indices go up to 17, but axis 1 has 3 entries; they fit " \
           "axis 0 (size 20)" in text, text


def test_an_edit_hint_is_dropped_when_the_students_line_is_the_references(monkeypatch):
    """Trial 22r's ch07-r07e: an edit that puts another name in the line that makes h_left is not said when the
    student's line that makes h_left reads and calls what the reference's does (the change is elsewhere); an edit
    of a number (same names) is kept."""
    from seqcourse import calltrace

    monkeypatch.setattr(calltrace, "line_as_reference", lambda qualname, var: var == "h_left")
    one = "your values are what you get with `left[0]` where `state[0]` is needed (in Enc.forward, the line that computes `h_left`)"
    two = "with `out + h` where `inp + h` is needed (in Enc.forward, the line that computes `h`) (these give the same values here)"
    assert checks._edits_of_changed_lines(one) == ""
    assert checks._edits_of_changed_lines(f"{one}; or {two}") == \
        "your values are what you get with `out + h` where `inp + h` is needed (in Enc.forward, the line that computes `h`)"
    same_names = "your values are what you get with `x[:, t - 1]` where `x[:, t]` is needed (in Enc.forward, the line that computes `h_left`)"
    assert checks._edits_of_changed_lines(same_names) == same_names


def test_a_name_of_another_signature_and_a_kept_axis_name_their_cause(shell):
    """Trial 22r: h_prev (exercise 3's name) where gru_cell's argument is h (ch04-r04b); norms of shape (T + 1, 1, 1)
    from keepdim=True where a 1-dim tensor is asked (ch02-r02d)."""

    _fails(r"must be a 1-dim tensor, got shape \(5, 1, 1\) \(its extra axes have size 1: keepdim=True", assert_type,
           torch.zeros(5, 1, 1), "tensor", ndim=1)
    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def cell(x, h, w):\n    return torch.tanh(x @ w + h_prev)\n", store_history=True)
    text = _brief_message(shell, "cell(torch.ones(2, 3), torch.ones(2, 4), torch.ones(3, 4))")
    assert "cell has no variable h_prev; its names here are x, h, w: h meant?" in text, text


def test_a_later_parts_function_and_an_unpacked_rnn_result_name_their_cause(shell):
    """Trial 22s: a function of a later part called before its cell ran (ch04-s04a, ch08-v08a); torch.cat of 0-d
    norms (ch02-s02e); an LSTM's (output, state) pair given to pad_packed_sequence (ch05-s05e)."""
    shell.run_cell("import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, "
                   "pad_packed_sequence\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def scaled(dec, enc):\n    return bilinear_attention(dec, enc, None)\n\n"
                   "def norms(g):\n    return torch.cat([g.norm(), g.norm()])\n\n"
                   "def encode(rnn, x):\n    packed = pack_padded_sequence(x, torch.tensor([3, 2]))\n"
                   "    return pad_packed_sequence(rnn(packed))\n", store_history=True)
    text = _brief_message(shell, "scaled(torch.ones(2, 3), torch.ones(2, 3))")
    assert "no cell run so far defines bilinear_attention: if it is the function of another part" in text, text
    assert "the function of a LATER part does not exist yet" in text, text
    text = _brief_message(shell, "norms(torch.ones(3))")
    assert 'at your line "return torch.cat([g.norm(), g.norm()])"' in text and "torch.stack(list)" in text, text
    text = _brief_message(shell, "encode(nn.LSTM(4, 5), torch.ones(3, 2, 4))")
    assert "unpack it first, packed_out, _ = self.rnn(packed)" in text, text


def test_a_negative_gather_index_and_an_int_size_name_their_cause(shell):
    """Trial 22t: a gather index of -1 (L - 1 - t past the end of a sequence: ch05-t05a); torch.randint given
    size=(batch_size) without its comma (ch01-t01e); a value with one axis too many written into a slice
    (ch01-t01a); einsum subscripts that read a weight the wrong way round (ch02-t02b); rows multiplied pairwise
    where every pair is asked (ch08-t08c, t08d); a tuple kept whole where a tensor is asked (ch06-t06f)."""
    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def rev(x, L):\n    t = torch.arange(x.shape[1])\n    idx = L[:, None] - 1 - t\n"
                   "    return x.gather(1, idx)\n\n"
                   "def draw(n, batch_size, g):\n    return torch.randint(0, n, (batch_size), generator=g)\n\n"
                   "def put(x):\n    inputs = torch.zeros(2, 4, 3)\n    inputs[:, 0] = x.unsqueeze(1)\n"
                   "    return inputs\n", store_history=True)
    text = _brief_message(shell, "rev(torch.ones(2, 5), torch.tensor([5, 3]))")
    assert "idx holds -1 here, and gather takes no negative index" in text, text
    text = _brief_message(shell, "draw(10, 16, torch.Generator())")
    assert "size is a tuple of sizes, (batch_size,) with its comma" in text, text
    text = _brief_message(shell, "put(torch.ones(2, 3))")
    assert "a value with more axes than the place it is written into" in text, text
    shell.run_cell("def cell(x, W):\n    return torch.einsum('bd,dh->bh', x, W)\n", store_history=True)
    text = _brief_message(shell, "cell(torch.ones(2, 3), torch.ones(4, 3))")     # W is (H, D): ch02-t02b
    assert "the subscript d stands for 3 in x (axis 1) and 4 in W (axis 0): one letter, one size: W is (4, 3), so " \
           "its subscripts \"dh\" read it the wrong way round; \"hd\" for it (or W.T) fits" in text, text
    shell.run_cell("def scores(q, k):\n    return (q * k).sum(-1)\n\ndef step(h):\n    return h.shape[0]\n\n"
                   "def decode(enc):\n    d = enc()\n    return step(d)\n", store_history=True)
    text = _brief_message(shell, "scores(torch.ones(2, 3, 5), torch.ones(2, 4, 5))")      # ch08-t08c, t08d
    assert "q * k pairs row t of one only with row t of the other; for every pair (t, s)" in text, text
    assert "q @ k.transpose(-2, -1)" in text, text
    text = _brief_message(shell, "decode(lambda: (torch.ones(2, 3, 5), torch.ones(2, 5)))")  # ch06-t06f
    assert "that object is a tuple of 2 ((2, 3, 5), (2, 5)) where a tensor is meant" in text, text


def test_a_value_computed_and_thrown_away_is_said_first(shell):
    """Trial 22t: f.sigmoid() on a line of its own (ch07-t07a), ids + [EOS] never assigned (ch06-t06b)."""
    from seqcourse import calltrace

    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors, assert_close\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def gate(x):\n    f = x * 2\n    f.sigmoid()\n    return f\n\n"
                   "def ids_of(xs):\n    ids = list(xs)\n    ids + [2]\n    return ids\n", store_history=True)
    with calltrace.recording():
        text = _brief_message(shell, "assert_close(gate(torch.ones(3)), torch.ones(3).mul(2).sigmoid(), name='f')")
    assert 'Likely cause: your line "f.sigmoid()" in gate computes a new value and throws it away' in text, text
    assert "write f = f.sigmoid() (or its in-place form f.sigmoid_())" in text, text
    with calltrace.recording():
        text = _brief_message(shell, "assert ids_of([5, 4]) == [5, 4, 2], 'ids'")
    assert text.startswith('AssertionError: your line "ids + [2]" in ids_of computes a new value and throws it '
                           "away (ids + [2] changes nothing by itself): write ids = ids + [2] -- ids"), text


def test_the_f_linear_transpose_hint_reads_the_weight_argument_only():
    """Round 36's CI: mutant ch08 linear_for_product (``F.linear(dec, W) @ enc.transpose(1, 2)``) got the hint for a
    transposed weight from the .transpose of another operand on its line; only F.linear's own weight counts."""
    import re

    from seqcourse import checks

    (pattern,) = [p for key, p, _ in checks._LINE_HINTS if key.startswith("mat1 and mat2")]
    for line in ('i = torch.sigmoid(F.linear(hx, W["i"].T, b["i"]))', "y = F.linear(x, W.t(), b)",
                 "y = F.linear(x, W.transpose(0, 1))"):
        assert re.search(pattern, line), line
    assert not re.search(pattern, "energies = F.linear(dec, W) @ enc.transpose(1, 2)")


def test_a_value_left_none_names_the_line_that_made_it_none(shell):
    """Trial 22x's ch07-x07b: `mask = ... if lengths is not None else None`, then `mask[:, t]`: the message names
    `mask`, the student's line that made it None and the case (lengths None), not another variable's line."""
    _student(shell, "def encode(x, lengths=None):\n"
                    "    mask = (torch.arange(x.shape[1]) < lengths[:, None]) if lengths is not None else None\n"
                    "    return x * mask[:, 0, None]\n"
                    "def encode2(x, lengths=None):\n"
                    "    mask = None\n"
                    "    if lengths is not None:\n"
                    "        mask = torch.arange(x.shape[1]) < lengths[:, None]\n"
                    "    return x * mask[:, 0, None]\n"
                    "def first(x, lengths=None):\n"
                    "    return x[:, 0] * lengths[0]\n")
    text = _brief_message(shell, "encode(torch.ones(2, 3))")
    assert "`mask` is None at this line" in text and "makes it None when `lengths is None`" in text
    text = _brief_message(shell, "encode2(torch.ones(2, 3))")
    assert 'your line "mask = None" sets it' in text
    text = _brief_message(shell, "first(torch.ones(2, 3))")
    assert "the caller passed lengths=None" in text


def test_a_none_item_of_a_result_names_the_line_that_took_it(shell):
    """Trial 22z's ch06-t06c: `d = encoder(src)[0]` takes the item the test's encoder leaves None (the outputs, where
    the state is the second item): the message names that line and the item, not guesses; `d = f(x)` with f ending
    without return names the call."""
    _student(shell, "def decode(src, encoder):\n"
                    "    d = encoder(src)[0]\n"
                    "    return d.shape\n"
                    "def prepare(src):\n"
                    "    src.mul_(1)\n"
                    "def decode2(src):\n"
                    "    d = prepare(src)\n"
                    "    return torch.zeros_like(d)\n")
    text = _brief_message(shell, "decode(torch.ones(2, 4), lambda src: (None, torch.zeros(src.shape[0], 3)))")
    assert 'from your line "d = encoder(src)[0]": item 0 of what encoder(src) returns is None here' in text
    text = _brief_message(shell, "decode2(torch.ones(2, 4))")
    assert 'your line "d = prepare(src)" made it, and the call there returned None' in text


def test_names_unpacked_in_another_order_than_the_items_are_named(shell):
    """Trial 22z's ch09-t09b: candidates built as (score, tokens, state) and unpacked as (tokens, score, state): the
    float subscripted is said with the unpacking line, what each name got and the line that builds the items."""
    _student(shell, "def first_tokens(pairs):\n"
                    "    items = []\n"
                    "    for a, b in pairs:\n"
                    "        items.append((a * 0.5, [b, b]))\n"
                    "    out = []\n"
                    "    for tokens, score in items:\n"
                    "        out.append(tokens[0])\n"
                    "    return out\n")
    text = _brief_message(shell, "first_tokens([(1, 2)])")
    assert ('`tokens` holds a float here: your line "for tokens, score in items" unpacks each item in the order of '
            "its parts, giving tokens a float, score a list") in text
    assert 'your line "items.append((a * 0.5, [b, b]))" builds them' in text


def test_trial_22aa_errors_name_their_cause(shell):
    """Trial 22aa's cases whose error is raised in the student's code: `[x] + [z] * steps - 1` (ch01-a01c: the
    parentheses), an RNN run on the unpacked tensor before pad_packed_sequence (ch06-a06b, ch09-a09c), another
    exercise's name for a constant of this notebook (ch09-a09c: PAD_INDEX for PAD), and a weight transposed in place
    by the call before (ch02-a02d: `W.t_()`): each message says that cause."""
    _student(shell, "from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n"
                    "PAD = 0\n"
                    "def build(x, steps):\n"
                    "    return torch.stack([x] + [torch.zeros_like(x)] * steps - 1)\n"
                    "def encode(rnn, x, lengths):\n"
                    "    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)\n"
                    "    out, h = rnn(x)\n"
                    "    y, _ = pad_packed_sequence(out, batch_first=True)\n"
                    "    return y\n"
                    "def pad_of(x):\n"
                    "    return x == PAD_INDEX\n"
                    "def cell(x, W):\n"
                    "    return x @ W.t_()\n")
    text = _brief_message(shell, "build(torch.ones(2), 3)")
    assert "for steps - 1 copies write [torch.zeros_like(x)] * (steps - 1)" in text
    text = _brief_message(shell, "encode(torch.nn.GRU(3, 4, batch_first=True), torch.ones(2, 5, 3), "
                                 "torch.tensor([5, 2]))")
    assert "out is a plain tensor, not a PackedSequence" in text
    assert 'your line "packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)" makes ' \
           "packed, which is meant to go into the RNN there" in text
    text = _brief_message(shell, "pad_of(torch.zeros(3))")
    assert "PAD_INDEX is not a name of this notebook" in text and "it has PAD: is that the one meant?" in text
    text = _brief_message(shell, "from seqcourse import calltrace\nW = torch.ones(4, 3)\n"
                                 "with calltrace.recording():\n"
                                 "    cell(torch.ones(2, 3), W)\n"
                                 "    cell(torch.ones(2, 3), W)")
    assert "changes W ITSELF: .t_() works in place on the tensor the caller passed" in text


def test_trial_22aa_values_name_their_cause(shell):
    """Trial 22aa's cases found by a check of values or types: a dict.get default that is the token where its index
    is meant (ch06-a06a), and the detach on the tensor whose gradient is asked named before another function's
    (ch02-a02a: `h0.clone().detach()`, not the weights' helper)."""
    _student(shell, "from seqcourse.checks import assert_type, assert_gradient\n"
                    "def ids_of(tokens, stoi):\n"
                    "    return [stoi.get(t, '<unk>') for t in tokens]\n"
                    "def weights(w):\n"
                    "    return w.detach()\n"
                    "def layer(x, h0, w):\n"
                    "    v = weights(w)\n"
                    "    h = h0.clone().detach()\n"
                    "    return (x @ v + h).sum()\n")
    text = _brief_message(shell, "from seqcourse import calltrace\nwith calltrace.recording():\n"
                                 "    ids = ids_of(['a', 'zz'], {'a': 1})\n"
                                 "assert_type(ids[1], 'int', 'ids[1]')")
    assert "gives stoi.get the default '<unk>', a str" in text and "where an int" in text
    text = _brief_message(shell, "from seqcourse import calltrace\n"
                                 "x, h0 = torch.ones(2, 3, requires_grad=True), torch.ones(2, 4, requires_grad=True)\n"
                                 "with calltrace.recording():\n"
                                 "    layer(x, h0, torch.ones(3, 4, requires_grad=True)).backward()\n"
                                 "assert_gradient(h0.grad, torch.ones(2, 4), 'the gradient of the sum with respect to "
                                 "h0')")
    assert 'your line "h = h0.clone().detach()" in layer cuts it' in text


def test_a_number_plus_a_list_says_join_for_token_ids_and_one_number_for_scores(shell):
    """Trial 22l's ch06-h06b (`SOS_INDEX + ids`: an item joined to a list of token ids) and trial 22x's ch09-x09e
    (`score + lp` with lp a list of log-probabilities: one number was meant) get different causes."""
    _student(shell, "def with_sos(ids):\n"
                    "    return 1 + ids\n"
                    "def add_score(score, lp):\n"
                    "    return score + lp\n")
    text = _brief_message(shell, "with_sos([4, 5, 6])")
    assert "+ joins a list only to a list: put the item in a list ([1])" in text
    text = _brief_message(shell, "add_score(-1.5, [-0.1, -2.3])")
    assert "where lp is meant to be ONE number" in text


def test_a_none_item_or_attribute_and_a_method_not_called_are_named(shell):
    """Trial 22y's cases: a parameter whose .grad is None kept in the list (ch02-y02e), a bias-free cell's
    bias_ih read for its size (ch03-y03b), stoi.get without a default (ch06-y06a) and loss.item without its
    parentheses (ch01-y01d): each message says that cause."""
    shell.run_cell("import torch\nfrom seqcourse.checks import explain_errors, assert_type\nexplain_errors()\n",
                   store_history=True)
    shell.run_cell("def total_norm(params):\n"
                   "    grads = [p.grad for p in params if p.requires_grad]\n"
                   "    return torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))\n"
                   "def hidden_size(cell):\n"
                   "    return len(cell.bias_ih) // 4\n"
                   "def ids_of(tokens, stoi):\n"
                   "    return list(map(stoi.get, tokens))\n"
                   "def loss_of(x):\n"
                   "    return x.sum().item\n", store_history=True)
    text = _brief_message(shell, "a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)\n"
                                 "(2 * a).sum().backward()\ntotal_norm([a, b])")
    assert "`g` is None: an item of grads is None" in text and "a parameter's .grad is None" in text
    assert 'your line "grads = [p.grad for p in params if p.requires_grad]" makes grads' in text
    text = _brief_message(shell, "hidden_size(torch.nn.LSTMCell(3, 4, bias=False))")
    assert "`cell.bias_ih` is None: cell is built with bias=False" in text
    text = _brief_message(shell, "from seqcourse import calltrace\nwith calltrace.recording():\n"
                                 "    ids = ids_of(['a', 'zz'], {'a': 1})\n"
                                 "assert_type(ids[1], 'int', 'ids[1]')")
    assert "looks up with stoi.get and no default" in text
    text = _brief_message(shell, "assert_type(loss_of(torch.ones(2)), 'float', 'the loss')")
    assert "the method .item itself, not its result" in text


def test_a_transposed_product_is_named_where_the_matrix_was_meant(shell):
    """Trial 22y's ch02-y02a: `(h_prev @ W_hh).T + x_t @ W_hx.T`: the transpose belongs on W_hh."""
    _student(shell, "def cell(x_t, h_prev, W_hx, W_hh):\n"
                    "    return torch.tanh((h_prev @ W_hh).T + x_t @ W_hx.T)\n")
    text = _brief_message(shell, "cell(torch.ones(2, 3), torch.ones(2, 4), torch.ones(4, 3), torch.ones(4, 4))")
    assert "(h_prev @ W_hh).T transposes the PRODUCT, (2, 4) into (4, 2): the transpose belongs on the matrix, " \
           "h_prev @ W_hh.T" in text


def test_a_product_that_fits_after_a_sum_over_another_axis_names_that_axis(shell):
    """Trial 22y's ch08-y08d: `(dec.unsqueeze(-1) * W).sum(-1) @ enc.transpose(1, 2)` sums over Dh where d^T W sums
    over Dd (axis -2)."""
    _student(shell, "def bilinear(dec, enc, W):\n"
                    "    return (dec.unsqueeze(-1) * W).sum(-1) @ enc.transpose(1, 2)\n")
    text = _brief_message(shell, "bilinear(torch.ones(2, 3, 6), torch.ones(2, 4, 5), torch.ones(6, 5))")
    assert "sums over axis -1, of size 5; over axis -2 (size 6) it gives (2, 3, 5), which fits the product" in text
