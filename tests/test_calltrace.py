"""Where values first go wrong (seqcourse/calltrace.py): the variable named is the student's own first wrong one,
and nothing is said where the comparison cannot tell (other inputs, another bookkeeping, another shape).

Each test runs notebook-like cells in an IPython shell: the reference's function in one cell, its test cell recorded
(the fingerprints stored as ``python -m autograder.edit_hints`` stores them), then a student's function in its place
and the same test cell, whose failing check must name (or not name) the student's line. The end-to-end path (a
student's notebook with a mistake, graded with nbgrader) is in tests/mutants/*.yaml: mutants whose message says
"first variable whose value differs".
"""
from __future__ import annotations

import json
import sys

import pytest

from seqcourse import calltrace, hints

pytest.importorskip("IPython")

TEST_CELL = ("x = torch.arange(6.).reshape(2, 3) / 7\n"
             "w = torch.arange(12.).reshape(3, 4) / 11 - 0.4\n"
             "out = f(x, w)\n"
             "assert_close(out, expected, name='f(x, w)')\n")

REFERENCE = ("def f(x, w):\n"
             "    a = x @ w\n"
             "    b = torch.tanh(a)\n"
             "    c = b * 2\n"
             "    return c + 1\n")

WITH_HELPER = ("def g(a):\n"
               "    s = a * 3\n"
               "    return s - 1\n"
               "def f(x, w):\n"
               "    a = x @ w\n"
               "    b = g(a)\n"
               "    return b\n")


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """An IPython shell with the course's error messages on, whose hint files hold only what the reference's run of
    TEST_CELL recorded (``record()``), the reference's result in ``expected``."""
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.run_cell("import torch\nfrom seqcourse.checks import assert_close, explain_errors\nexplain_errors()")
    monkeypatch.setattr(hints, "DATA", tmp_path)

    def record(reference=REFERENCE, test=TEST_CELL):
        assert sh.run_cell(reference).success
        with calltrace.recording() as rec:
            assert sh.run_cell(test.replace("assert_close", "expected = out  #")).success
        values = calltrace.fingerprints(rec)
        (tmp_path / "chXX.json").write_text(json.dumps({"sites": [], "errors": [], "shapes": {}, "values": values}))
        hints._value_sites.cache_clear()
        return values

    sh.record = record
    try:
        yield sh
    finally:
        hints._value_sites.cache_clear()
        InteractiveShell.clear_instance()


def _message(sh, student: str, test: str = TEST_CELL) -> str:
    assert sh.run_cell(student).success
    result = sh.run_cell(test)
    assert result.error_in_exec is not None, "the student's function passed"
    return str(result.error_in_exec)


def test_the_first_wrong_variable_is_named_with_its_line(shell):
    values = shell.record()
    assert values and not any(n in json.dumps(values) for n in ('"a"', '"b"', "tanh", "x @ w")), "names leak"
    msg = _message(shell, REFERENCE.replace("b = torch.tanh(a)", "b = torch.sigmoid(a)"))
    assert "`b` is the first variable whose value differs from the reference's `b`" in msg
    assert 'look at your line "b = torch.sigmoid(a)"' in msg
    assert "the variables made before it agree: a" in msg


def test_the_innermost_wrong_call_is_named(shell):
    """A helper called by the function: the mistake inside the helper is named there, not in its caller."""
    reference = WITH_HELPER
    shell.record(reference)
    msg = _message(shell, reference.replace("s = a * 3", "s = a * 4"))
    assert "in g, given the same inputs" in msg and 'look at your line "s = a * 4"' in msg


def test_a_call_given_other_inputs_is_not_blamed(shell):
    """The caller passes a wrong tensor to a right helper: the helper is not blamed; the caller is (its variable that
    holds what it passed)."""
    reference = WITH_HELPER
    shell.record(reference)
    msg = _message(shell, reference.replace("a = x @ w", "a = x @ w.abs()"))
    assert "in g," not in msg
    assert "in f, given the same inputs" in msg and 'look at your line "a = x @ w.abs()"' in msg


def test_another_bookkeeping_that_returns_the_same_is_not_blamed(shell):
    """A helper written another way (its variable ``s`` holds something else) but returning the reference's result:
    the mistake is in the caller, and the helper's ``s`` is never named."""
    reference = WITH_HELPER.replace("return b\n", "return b * 2\n")
    shell.record(reference)
    student = reference.replace("s = a * 3\n    return s - 1", "s = a - 1 / 3\n    return 3 * s")
    msg = _message(shell, student.replace("return b * 2", "return b ** 2"))
    assert "`s`" not in msg
    assert "in f, given the same inputs" in msg and "but the result differs: look at the line that returns" in msg


def test_a_variable_of_another_shape_or_name_is_not_compared(shell):
    """A variable of another shape than the reference's of the same name is not compared (another bookkeeping) and
    never named as where the values go wrong; when nothing else differs, its shape is said, hedged."""
    shell.record()
    student = ("def f(x, w):\n"
               "    a = (w.T @ x.T)\n"              # the column form: (4, 2), another shape than the reference's a
               "    ab = torch.tanh(a.T)\n"         # a name the reference does not have
               "    c = ab * 2\n"
               "    return c - 1\n")                # the mistake: - for +
    msg = _message(shell, student)
    assert "first variable whose value differs" not in msg and "`ab`" not in msg
    # the column-form `a` is said as a fact, hedged: it may be the bookkeeping the student meant
    assert "no variable of the reference's shapes differs, but `a` has shape (4, 2) where the reference's `a` has " \
        "(2, 4)" in msg
    assert "if that shape is not meant, it goes wrong there; if it is, look at the line that returns the result" in msg


def test_nothing_is_said_for_a_test_line_or_sizes_the_reference_was_not_recorded_for(shell):
    shell.record()
    other = TEST_CELL.replace("reshape(2, 3) / 7", "reshape(3, 2).T / 7")    # another line, the same sizes
    msg = _message(shell, REFERENCE.replace("b = torch.tanh(a)", "b = torch.sigmoid(a)"), other)
    assert "first variable" not in msg


def test_recording_never_changes_what_the_students_code_does(shell):
    """A student's function whose variables cannot be copied or compared (a generator, a module, a huge tensor), or
    that sets its own profile function, runs as it would without the recorder."""
    shell.record()
    student = ("def f(x, w):\n"
               "    gen = (v for v in range(3))\n"
               "    big = torch.zeros(400, 400)\n"
               "    layer = torch.nn.Linear(2, 2)\n"
               "    return torch.tanh(x @ w) * 2 + 1\n")
    assert shell.run_cell(student).success
    assert shell.run_cell(TEST_CELL).success
    before = sys.getprofile()
    assert shell.run_cell("import sys\nsys.setprofile(lambda *a: None)\n" + TEST_CELL).success
    assert sys.getprofile() is not None          # the student's own profile function is left as it is
    sys.setprofile(before)


def test_a_tensor_passed_with_another_shape_is_followed_to_the_callers_line(tmp_path, monkeypatch):
    """The error is raised in a right helper, given a tensor the caller made wrong (it rebinds its own argument: the
    signature is what the call was GIVEN, so the reference's shapes still apply): the message names the caller's
    line where the tensor went wrong, not fixes inside the helper."""
    from IPython.core.interactiveshell import InteractiveShell

    from autograder import edit_hints

    sh = InteractiveShell.instance()
    try:
        sh.run_cell("import torch\nfrom seqcourse.checks import explain_errors\nexplain_errors()")
        reference = ("def cell(h, W):\n"
                     "    return torch.tanh(h @ W.T)\n"
                     "def layer(h0, W, steps, flip):\n"
                     "    if flip:\n"
                     "        W = W.flip(0)\n"
                     "    h = h0\n"
                     "    for _ in range(steps):\n"
                     "        h = cell(h, W)\n"
                     "    return h\n")
        test = "out = layer(torch.ones(2, 3), torch.ones(3, 3) / 5, 2, True)\n"
        shapes, _ = edit_hints.traces(sh, [(reference, "solution", "f"), (test, "test", "t")])
        (tmp_path / "chXX.json").write_text(json.dumps({"sites": [], "errors": [], "shapes": shapes}))
        monkeypatch.setattr(hints, "DATA", tmp_path)
        hints._shape_sites.cache_clear()
        student = reference.replace("        W = W.flip(0)\n", "        W = W.flip(0)\n        h0 = h0.T\n")
        assert sh.run_cell(student).success
        with calltrace.recording():
            result = sh.run_cell(test)
        from seqcourse.checks import brief_error
        msg = brief_error(result.error_in_exec, result.error_in_exec.__traceback__, sh)
        assert 'it goes wrong at your line "h0 = h0.T"' in msg, msg
        assert "(the reference's: (2, 3))" in msg
    finally:
        hints._shape_sites.cache_clear()
        InteractiveShell.clear_instance()


LOOP = ("def f(x, w):\n"
        "    o = torch.zeros(2, 4)\n"
        "    outs = []\n"
        "    for t in range(3):\n"
        "        o = torch.tanh(x @ w + o)\n"
        "        outs.append(o)\n"
        "    return torch.stack(outs, 1)\n")


def test_a_loop_carried_variable_is_named_where_its_first_value_goes_wrong(shell):
    """The value a variable FIRST gets is compared (its last one reflects every step): a wrong initial value is named
    at its own line, not at the loop's."""
    shell.record(LOOP)
    msg = _message(shell, LOOP.replace("o = torch.zeros(2, 4)", "o = torch.ones(2, 4)"))
    assert 'first made: look at your line "o = torch.zeros(2, 4)"' not in msg
    assert 'look at your line "o = torch.ones(2, 4)"' in msg


def test_a_variable_right_at_first_and_wrong_at_the_end_names_what_the_loop_carries(shell):
    shell.record(LOOP)
    msg = _message(shell, LOOP.replace("o = torch.tanh(x @ w + o)", "o = torch.tanh(x @ w + o.detach() * 0.5)"))
    assert "`o` is right where it is first made, and its third value, from your line" in msg
    assert '"o = torch.tanh(x @ w + o.detach() * 0.5)"' in msg


def test_the_line_of_a_loop_that_goes_wrong_is_the_one_named_not_every_line_that_binds_the_variable(shell):
    """Two lines bind `o` in the loop; the values it takes one after the other are compared with the reference's,
    so the line named is the one whose value first parts from them (not a list of candidates)."""
    shell.record(LOOP)
    msg = _message(shell, LOOP.replace("        o = torch.tanh(x @ w + o)\n",
                                       "        o = torch.tanh(x @ w + o)\n        o = o + 0.1 * (t == 1)\n"))
    assert '"o = o + 0.1 * (t == 1)"' in msg and "is not the reference's" in msg, msg
    assert "o = torch.tanh" not in msg.split("Likely cause")[-1], msg


def test_a_value_that_does_not_change_is_bookkeeping_not_a_new_value(shell):
    """``o = o.detach()`` (the same values bound again) is not a value of its own: a correct variant keeps the
    reference's sequence of values, and a mistake after it is still named at its own line."""
    shell.record(LOOP)
    variant = LOOP.replace("        outs.append(o)\n", "        o = o.detach().requires_grad_(False)\n"
                           "        outs.append(o)\n")
    assert shell.run_cell(variant).success
    assert shell.run_cell(TEST_CELL).error_in_exec is None
    wrong = variant.replace("o = torch.tanh(x @ w + o)", "o = torch.tanh(x @ w - o)")
    msg = _message(shell, wrong)
    assert '"o = torch.tanh(x @ w - o)"' in msg and "o.detach()" not in msg.split("Likely cause")[-1], msg


COUNT = ("def f(x, w):\n"
         "    n = 0\n"
         "    per = 3\n"
         "    for layer in range(3):\n"
         "        per = 2 * layer + 3\n"
         "        n += per\n"
         "    return x + n\n")


def test_numbers_are_said_with_the_reference_value_of_the_visible_test(shell):
    shell.record(COUNT)
    msg = _message(shell, COUNT.replace("    n = 0\n", "    n = 1\n"))
    assert "`n` is the first variable whose value differs" in msg and "(1 where the reference's is 0)" in msg, msg


def test_a_line_that_runs_once_too_often_is_named_as_an_extra_value(shell):
    """A value the reference's variable never gets (the unconditional += of a bias that only some calls add) is named
    with its line and the counts, before the totals it spoils."""
    shell.record(COUNT)
    msg = _message(shell, COUNT.replace("        n += per\n", "        per += 100\n        n += per\n"))
    assert 'its second value, from your line "per += 100", is not the reference\'s second value (103 where the ' \
           "reference's is 5)" in msg, msg
    msg = _message(shell, COUNT.replace("range(3)", "range(4)"))
    assert "`layer` is right where it is first made, but it gets 4 different values where the reference's gets 3" in msg
    assert 'its 4th, from your line "for layer in range(4):", is one the reference\'s never gets' in msg, msg


def test_the_course_cost_measurement_sees_no_recording(shell):
    """The recorder's copies are not the student's memory: inside measure_cost nothing is recorded (the same cost
    with and without a recording), and the recording goes on after it."""
    from seqcourse.checks import measure_cost

    shell.record()
    assert shell.run_cell(REFERENCE).success
    shell.run_cell("from seqcourse.checks import measure_cost\n"
                   "x = torch.arange(6.).reshape(2, 3) / 7\n"
                   "w = torch.arange(12.).reshape(3, 4) / 11 - 0.4\n")
    alone = shell.run_cell("measure_cost(f, x, w)[1]").result
    with calltrace.recording() as rec:
        recorded = shell.run_cell("measure_cost(f, x, w)[1]").result
        after = shell.run_cell("f(x, w)")
    assert recorded.peak_bytes == alone.peak_bytes and recorded.largest_numel == alone.largest_numel
    assert after.success and len(rec.calls) == 1, "only the call outside the measurement is recorded"


TWO_LAYERS = ("class Two(torch.nn.Module):\n"
              "    def __init__(self):\n"
              "        super().__init__()\n"
              "        torch.manual_seed(0)\n"
              "        self.fwd = torch.nn.Linear(3, 4)\n"
              "        self.bwd = torch.nn.Linear(3, 4)\n"
              "    def forward(self, x):\n"
              "        return self.fwd(x) + self.bwd(x.flip(0))\n"
              "def f(x, w):\n"
              "    torch.manual_seed(0)\n"
              "    return Two()(x)\n")


def test_one_layer_under_two_names_is_named_before_the_line_that_uses_it(shell):
    """`self.fwd = self.bwd = nn.Linear(...)` builds ONE layer: the values are what using `fwd` where `bwd` is meant
    gives, but the cause is in __init__ (trial 22m, ch05-n05c)."""
    shell.record(TWO_LAYERS)
    msg = _message(shell, TWO_LAYERS.replace("        self.fwd = torch.nn.Linear(3, 4)\n        self.bwd = "
                                             "torch.nn.Linear(3, 4)\n",
                                             "        self.fwd = self.bwd = torch.nn.Linear(3, 4)\n"))
    assert "self.bwd and self.fwd are one and the same layer" in msg, msg


CALLER = ("def mean(out, lengths):\n"
          "    return out.sum(1) / lengths\n"
          "def f(x, w):\n"
          "    out = (x @ w)[:, None, :].expand(2, 3, 4)\n"
          "    return mean(out, torch.tensor([3., 3.])[:, None])\n")


def test_a_helper_called_with_other_shapes_than_the_references_names_the_calling_line(shell):
    shell.record(CALLER)
    wrong = CALLER.replace("torch.tensor([3., 3.])[:, None]", "torch.tensor([3., 3.])[:, None, None]")
    msg = _message(shell, wrong)
    assert "mean is called with lengths (2, 1, 1) where the reference's call gets (2, 1)" in msg, msg
    assert 'from your line "return mean(out, torch.tensor([3., 3.])[:, None, None])" in f' in msg, msg


def test_how_the_first_wrong_variable_differs_is_said_when_a_simple_transform_gives_the_references(shell):
    """A transpose, a sign, a sigmoid for a tanh: the variable's line and what its values are (trial 22m's
    'partly': the line was found, what is wrong in it was not said)."""
    square = ("def f(x, w):\n"
              "    m = w[:, :3]\n"
              "    return torch.tanh(x @ m)\n")
    shell.record(square)
    msg = _message(shell, square.replace("m = w[:, :3]", "m = w[:, :3].T"))
    assert "`m` is the first variable" in msg and "(its values are the reference's transposed (axes 0 and 1 " \
        "swapped))" in msg, msg
    shell.record()
    msg = _message(shell, REFERENCE.replace("b = torch.tanh(a)", "b = torch.sigmoid(a)"))
    assert "(squashed with a sigmoid where the reference's uses a tanh)" in msg, msg


def test_a_helper_of_a_module_called_with_other_shapes_is_named_too(shell):
    """model(x) reaches forward through PyTorch's Module.__call__: forward is still the test line's own call, and
    a helper it calls with other shapes is named (trial 22m, ch05-n05b)."""
    module = ("class M(torch.nn.Module):\n"
              "    def forward(self, x):\n"
              "        return mean(x[:, None, :].expand(2, 3, 3), torch.tensor([3., 3.])[:, None])\n"
              "def mean(out, lengths):\n"
              "    return out.sum(1) / lengths\n"
              "def f(x, w):\n"
              "    return M()(x)\n")
    shell.record(module)
    msg = _message(shell, module.replace("[:, None])\n", "[:, None, None])\n", 1))
    assert "mean is called with lengths (2, 1, 1) where the reference's call gets (2, 1)" in msg, msg


def test_a_wrong_value_made_from_a_variable_the_reference_does_not_have_names_that_variable_too(shell):
    """Trial 22n's ch06-n06d: the loss line is named (its value is the first that differs), but the mask it reads
    has a name the reference does not use: the message names the mask's line too."""
    ref = ("def f(x, w):\n"
           "    a = x @ w\n"
           "    return (a * (x[:, :1] > 0)).sum()\n")
    shell.record(ref.replace("return (a * (x[:, :1] > 0)).sum()", "out = (a * (x[:, :1] > 0)).sum()\n    return out"))
    student = ("def f(x, w):\n"
               "    a = x @ w\n"
               "    real = x[:, 1:2] > 0.6\n"
               "    out = (a * real).sum()\n"
               "    return out\n")
    msg = _message(shell, student)
    assert '`out` is the first variable' in msg and 'that line also reads `real` (your line "real = x[:, 1:2] > 0.6")' \
        in msg, msg


def test_the_named_line_is_compared_with_the_references_line_by_what_it_calls_and_reads(shell):
    """Trial 22n's 'partly' (a line named, what is wrong in it not said): what the student's line calls or reads
    that the reference's line for the same variable does not, and the reverse, from hashes (the reference's code
    stays unreadable in the hint data)."""
    values = shell.record()
    assert not any(w in json.dumps(values) for w in ("tanh", "call:", "name:")), "the reference's line leaks"
    msg = _message(shell, REFERENCE.replace("b = torch.tanh(a)", "b = torch.tanh(torch.exp(a))"))
    assert "(compared with the reference's line that makes `b`: yours calls exp, which the reference's does not)" \
        in msg, msg
    msg = _message(shell, REFERENCE.replace("b = torch.tanh(a)", "b = torch.tanh(a + x.sum(1, keepdim=True))"))
    assert "yours calls sum and reads `x` and adds (+), which the reference's does not" in msg, msg
    msg = _message(shell, REFERENCE.replace("b = torch.tanh(a)", "b = torch.sigmoid(a)"))
    assert "yours calls sigmoid, which the reference's does not; the reference's calls tanh, which yours does not" \
        in msg, msg


def test_the_line_that_returns_is_quoted_and_compared_when_only_the_result_differs(shell):
    """Trial 22n's ch01-n01a (a dropout layer in the return line): the layer or name it uses that the reference's
    return line does not; a call alone is said only if no line of the reference's function makes it (the result may
    be made elsewhere: ch02-n02b's norms, a call the reference makes on another line; trial 22r's ch08-r08b, a
    softmax the reference's dot_attention never calls)."""
    shell.record()
    msg = _message(shell, REFERENCE.replace("return c + 1", "return torch.tanh(c) + 1"))
    assert 'look at the line that returns it ("return torch.tanh(c) + 1") (or a value' in msg, msg
    msg = _message(shell, REFERENCE.replace("return c + 1", "return torch.exp(c) + 1"))
    assert 'look at the line that returns it ("return torch.exp(c) + 1"; compared with the reference\'s line that ' \
           "returns: yours calls exp, which no line of the reference's f does)" in msg, msg
    msg = _message(shell, REFERENCE.replace("return c + 1", "return c + x.sum()"))
    assert 'look at the line that returns it ("return c + x.sum()"; compared with the reference\'s line that ' \
           "returns: yours calls sum, which no line of the reference's f does; yours reads `x`, which the " \
           "reference's does not)" in msg, msg


def test_a_step_written_as_two_lines_names_the_line_that_reads_the_half_made_value(shell):
    """Trial 22n's ch02-n02c: a loop's update split over two lines with a read between them (the norm of a
    half-updated gradient): the variable takes the reference's values with others between them."""
    ref = ("def f(x, w):\n"
           "    out = []\n"
           "    h = x\n"
           "    for _ in range(3):\n"
           "        h = torch.tanh(h @ w[:, :3])\n"
           "        out.append(h.sum())\n"
           "    return torch.stack(out)\n")
    shell.record(ref)
    student = ref.replace("        h = torch.tanh(h @ w[:, :3])\n        out.append(h.sum())\n",
                          "        h = h @ w[:, :3]\n        out.append(h.sum())\n        h = torch.tanh(h)\n")
    msg = _message(shell, student)
    assert "`h` takes the reference's values in order, but also others between them" in msg, msg
    assert 'your line "h = h @ w[:, :3]" makes a half-made value that your line "h = torch.tanh(h)" completes' in msg
    assert 'your line "out.append(h.sum())" reads `h` between them' in msg, msg


def test_a_write_into_a_view_is_named_with_the_tensor_it_shares_memory_with(shell):
    """Trial 22n's ch05-n05a: an expanded tensor written in place (every row shares one memory location)."""
    ref = ("def f(x, w):\n"
           "    t = torch.arange(3.)\n"
           "    m = torch.where(x > 0.5, 5.0, t)\n"
           "    return m @ w\n")
    shell.record(ref)
    student = ref.replace("    m = torch.where(x > 0.5, 5.0, t)\n",
                          "    m = t.expand(2, 3)\n    m[x > 0.5] = 5.0\n")
    msg = _message(shell, student)
    assert "`m` is an expanded view of `t` (all its rows share ONE memory location" in msg, msg
    assert 'your line "m[x > 0.5] = 5.0" writes into it in place' in msg, msg


def test_a_recursion_that_drops_arguments_names_the_defaults_it_falls_back_to(shell):
    """Trial 22n's ch04-n04c: a function that calls itself without passing an argument on: the reference makes no
    such call, so the arguments are compared with those of the call that calls it, not with the reference's."""
    ref = ("def f(x, w, layers=1, double=False):\n"
           "    return (torch.tanh(x @ w) if double else x @ w) * layers\n")
    test = ("x = torch.arange(6.).reshape(2, 3) / 7\n"
            "w = torch.arange(12.).reshape(3, 4) / 11 - 0.4\n"
            "out = f(x, w, layers=3, double=True)\n"
            "assert_close(out, expected, name='f(x, w, layers=3, double=True)')\n")
    shell.record(ref, test)
    student = ("def f(x, w, layers=1, double=False):\n"
               "    one = torch.tanh(x @ w) if double else x @ w\n"
               "    return one if layers == 1 else one + f(x, w, layers - 1)\n")
    msg = _message(shell, student, test)
    assert 'f calls itself from your line "return one if layers == 1 else one + f(x, w, layers - 1)"' in msg, msg
    assert "that call passes no double, so it gets the default double False where the call that calls it was given " \
           "double True: pass it on" in msg, msg


def test_nan_made_by_a_function_given_another_argument_than_the_references_names_the_caller(shell):
    """Trial 22o's ch08-o08b: NaN first held in the helper's softmax line, because the caller passed it an inverted
    mask: the argument that differs (inverted) and the caller's line are named, not only the helper's line."""
    ref = ("def g(e, mask):\n"
           "    w = torch.softmax(e.masked_fill(~mask, float('-inf')), -1)\n"
           "    return w\n"
           "def f(x, w):\n"
           "    mask = torch.tensor([[True, True, True, True], [True, False, False, False]])\n"
           "    return g(x @ w, mask)\n")
    shell.record(ref)
    msg = _message(shell, ref.replace("return g(x @ w, mask)", "return g(x @ w, ~mask)"))
    assert "the first variable that holds NaN is `w` in g" in msg, msg
    assert "but g was given a `mask` other than the reference's (it is the reference's inverted: True where the " \
           "reference's is False), from your line \"return g(x @ w, ~mask)\" in f" in msg, msg


def test_nan_from_minus_inf_put_in_before_a_product_names_both_lines(shell):
    """Trial 22q's ch07-q07c: -inf put into the (B, Tx, A) energies before their product with v (inf - inf is NaN):
    the softmax check names the variable that holds NaN, the one it was made from that holds -inf, and that line."""
    ref = ("def f(x, w):\n"
           "    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])\n"
           "    e = torch.tanh(x[:, :, None] * w)\n"
           "    s = e @ torch.tensor([1.0, -1.0])\n"
           "    return torch.softmax(s.masked_fill(~mask, float('-inf')), -1)\n")
    test = ("x = torch.arange(8.).reshape(2, 4) / 7\n"
            "w = torch.tensor([0.5, 2.0])\n"
            "out = f(x, w)\n"
            "from seqcourse.checks import assert_softmax\n"
            "assert_softmax(out, 'weights', dim=-1)\n"
            "assert_close(out, expected, name='f(x, w)')\n")
    shell.record(ref, test)
    student = ref.replace("    s = e @ torch.tensor([1.0, -1.0])\n"
                          "    return torch.softmax(s.masked_fill(~mask, float('-inf')), -1)\n",
                          "    e = e.masked_fill(~mask[:, :, None], float('-inf'))\n"
                          "    s = e @ torch.tensor([1.0, -1.0])\n"
                          "    return torch.softmax(s, -1)\n")
    msg = _message(shell, student, test)
    assert 'the first variable that holds NaN is `s` in f, made at your line "s = e @ torch.tensor([1.0, -1.0])"' \
        in msg, msg
    assert "from `e`, which holds -inf (since your line \"e = e.masked_fill(~mask[:, :, None], float('-inf'))\")" \
        in msg and "put -inf in only after the last product" in msg, msg

def test_an_argument_bound_again_in_a_loop_is_named_with_its_line(shell):
    """Trial 22q's ch01-q01e: fit rebinds its arguments to the batch (x, y = x[idx], y[idx]), so the later batches are
    drawn from the first one: the variable that goes wrong at the second step reads x, and the line that binds x
    again is named."""
    ref = ("def f(x, steps):\n"
           "    g = torch.Generator().manual_seed(0)\n"
           "    out = []\n"
           "    for _ in range(steps):\n"
           "        idx = torch.randint(0, len(x), (2,), generator=g)\n"
           "        out.append(x[idx].sum())\n"
           "    return torch.stack(out)\n")
    test = ("x = torch.arange(10.)\n"
            "out = f(x, 3)\n"
            "assert_close(out, expected, name='f(x, 3)')\n")
    shell.record(ref, test)
    student = ref.replace("        out.append(x[idx].sum())\n", "        x = x[idx]\n        out.append(x.sum())\n")
    msg = _message(shell, student, test)
    assert 'it reads `x`, an argument of f that your line "x = x[idx]" binds again' in msg, msg

def test_an_error_raised_after_a_value_went_wrong_names_that_value(shell):
    """Trial 22r's ch05-r05a: reverse_padded takes T from the lengths (3) where the padded batch has 5 steps, and an
    expand raises later: given the reference's inputs, the first variable whose value differs (T) and its line are
    named, and what the caller passed is not blamed."""
    ref = ("def f(x, lengths):\n"
           "    B, T = x.shape[0], x.shape[1]\n"
           "    idx = torch.arange(T)[None, :].expand(B, T)\n"
           "    return x.gather(1, idx)\n")
    test = ("x = torch.arange(10.).reshape(2, 5)\n"
            "out = f(x, torch.tensor([3, 1]))\n"
            "assert_close(out, expected, name='f(x, lengths)')\n")
    shell.record(ref, test)
    student = ref.replace("B, T = x.shape[0], x.shape[1]", "B, T = x.shape[0], int(lengths.max())") \
        .replace("idx = torch.arange(T)[None, :].expand(B, T)", "idx = torch.arange(T)[None, :].expand_as(x)")
    assert shell.run_cell(student).success
    result = shell.run_cell(test)
    from seqcourse.checks import brief_error

    exc = result.error_in_exec
    assert exc is not None
    msg = brief_error(exc, exc.__traceback__, shell)
    assert "`T` is the first variable whose value differs from the reference's `T` (3 where the reference's is 5), " \
           'made at your line "B, T = x.shape[0], int(lengths.max())": it goes wrong before' in msg, msg

def test_nan_from_a_division_and_a_factor_of_an_argument_are_named(shell):
    """Trial 22r's ch08-r08a (weights renormalised over the wrong axis: 0 / 0) and ch02-r02e (a factor 1/max_norm:
    the argument the function was given is named)."""
    ref = ("def f(x, scale):\n"
           "    w = x / x.sum(dim=-1, keepdim=True)\n"
           "    return w * scale\n")
    test = ("x = torch.tensor([[1.0, 3.0, 0.0], [2.0, 2.0, 0.0]])\n"
            "out = f(x, 3.5)\n"
            "assert_close(out, expected, name='f(x, 3.5)')\n")
    shell.record(ref, test)
    msg = _message(shell, ref.replace("dim=-1", "dim=0"), test)
    assert "the first variable that holds NaN is `w` in f" in msg and "0 / 0 gives NaN" in msg, msg
    msg = _message(shell, ref.replace("return w * scale", "return w"), test)
    assert "= 1/scale (scale=3.5 was given): a factor scale missing" in msg, msg

def test_a_loop_counter_that_counts_in_another_order_is_not_blamed(shell):
    """Trial 22r's ch07-r07a: after a left-to-right loop, a right-to-left loop written as t counting up (reading
    T - 1 - t) is bookkeeping; the variable made with the wrong index (mask[:, t] where mask[:, T - 1 - t] is meant)
    is named instead of t."""
    ref = ("def f(x, mask):\n"
           "    T = x.shape[1]\n"
           "    h = torch.zeros(x.shape[0])\n"
           "    out = []\n"
           "    for t in range(T):\n"
           "        h = h + x[:, t] * mask[:, t]\n"
           "    for t in reversed(range(T)):\n"
           "        keep = mask[:, t]\n"
           "        h = torch.where(keep, torch.tanh(h + x[:, t]), h)\n"
           "        out.append(h)\n"
           "    return torch.stack(out[::-1], dim=1)\n")
    test = ("x = torch.arange(8.).reshape(2, 4) / 9\n"
            "mask = torch.tensor([[True, True, True, False], [True, True, False, False]])\n"
            "out = f(x, mask)\n"
            "assert_close(out, expected, name='f(x, mask)')\n")
    shell.record(ref, test)
    student = ref.replace("    for t in reversed(range(T)):\n        keep = mask[:, t]\n"
                          "        h = torch.where(keep, torch.tanh(h + x[:, t]), h)\n",
                          "    for t in range(T):\n        keep = mask[:, t]\n"
                          "        h = torch.where(keep, torch.tanh(h + x[:, T - 1 - t]), h)\n")
    msg = _message(shell, student, test)
    assert "`t` is" not in msg and 'your line "keep = mask[:, t]"' in msg, msg


def test_a_cell_is_parsed_once_while_its_text_is_unchanged_and_again_when_it_changes():
    """The readers of a student's lines share one parse of the cell (:func:`calltrace._cell_tree`); a cell run again
    under the same name with other text is parsed again (never a stale tree)."""
    import linecache

    name = "<ipython-input-99-cache>"
    linecache.cache[name] = (10, None, ["x = 1\n"], name)
    try:
        first = calltrace._cell_tree(name)
        assert calltrace._cell_tree(name) is first
        linecache.cache[name] = (10, None, ["y = 2\n", "z = y\n"], name)
        again = calltrace._cell_tree(name)
        assert again is not first and len(again.body) == 2
        linecache.cache[name] = (10, None, ["def f(:\n"], name)
        assert calltrace._cell_tree(name) is None
    finally:
        linecache.cache.pop(name, None)
        calltrace._TREES.pop(name, None)


def test_the_names_a_line_reads_leave_out_what_it_binds_and_its_comment():
    from seqcourse import pysource

    assert pysource.names_read("h, c = step(x, h)  # c is new") == {"step", "x", "h"}
    assert pysource.names_read("out.append(h.sum())") == {"out", "h"}
    assert pysource.names_read("for t in range(T):") is None      # not a statement alone


def test_a_named_line_says_how_python_groups_an_operator_students_misread():
    """Trial 22t's ch02-t02e (``B * H ** 0.5`` for sqrt(B * H)), and the planned ``max_norm / total_norm + 1e-6``:
    the grouping Python reads is said; lines that group as written, or a number times a power, say nothing."""
    from seqcourse import pysource

    note = pysource.precedence_note("n = torch.tensor(B * H ** 0.5)  # sqrt(B * H)")
    assert "B * (H ** 0.5)" in note and "(B * H) ** 0.5" in note
    assert "max_norm / (total_norm + 1e-06)" in pysource.precedence_note("scale = max_norm / total_norm + 1e-6")
    assert "a / (b * c)" in pysource.precedence_note("x = a / b * c")
    assert "r * (h @ W.T)" in pysource.precedence_note("n = torch.tanh(x @ U.T + r * h @ W.T + b)")
    assert "done | (y == eos_index)" in pysource.precedence_note("done = done | y == eos_index")   # 22z's t07b
    for line in ("z = (B * H) ** 0.5", "q = 2 * x ** 2", "w = a / b + 1.0", "y = a / (b * c)", "y = h @ W * r", "for t in range(T):",
                 # the grouping written in parentheses is the student's own (trial 22u's ch02-u02d)
                 "grad = (grad * (1 - states[:, t]) ** 2) @ W_hh", "n = (r * h) @ W.T", "y = (a / b) * c",
                 "s = (m / t) + 1e-6", "y = a * (b ** 2)",
                 # a division by a power is the usual scaling (trial 22v's ch09-v09c)
                 "h_proj = model.W_attProj(h) / model.hidden_size ** 0.5", "e = q @ k.T / D ** 0.5"):
        assert pysource.precedence_note(line) == "", line


def test_a_draw_from_a_generator_names_the_lines_that_make_and_seed_it(shell):
    """Trial 22s's ch01-s01e: g.seed() (a fresh random seed) where g.manual_seed(seed) is meant; the line that draws
    is right, the generator's state is not: the lines that make and seed it are named."""
    ref = ("def f(x, w):\n"
           "    g = torch.Generator().manual_seed(3)\n"
           "    idx = torch.randint(0, 2, (20,), generator=g)\n"
           "    return x[idx] @ w\n")
    shell.record(ref)
    msg = _message(shell, ref.replace("    g = torch.Generator().manual_seed(3)\n",
                                      "    g = torch.Generator()\n    g.seed()\n"))
    assert 'look at your line "idx = torch.randint(0, 2, (20,), generator=g)"; that line draws from your ' \
           "generator `g`" in msg, msg
    assert 'your lines "g = torch.Generator()", "g.seed()"; g.seed() draws a fresh random seed' in msg, msg


def test_a_nan_made_by_a_product_with_an_infinity_is_named_as_such():
    """Trial 22v's ch08-v08a: ``energies + (1 - mask) * float("-inf")``: 0 * -inf is NaN, not a mask inverted."""
    from seqcourse import calltrace

    for line in ('energies = energies + (1 - mask[:, None, :].float()) * float("-inf")',
                 "e = e + (~m).float() * -float('inf')", "e = e + pad * torch.inf"):
        assert calltrace.INFINITY_PRODUCT in calltrace._from_infinity_product(line), line
    for line in ('e = e.masked_fill(~m, float("-inf"))', "e = torch.where(m, e, float('-inf'))", "e = e * 2.0"):
        assert calltrace._from_infinity_product(line) == "", line


def test_a_named_line_says_a_softmax_over_the_batch_axis_an_option_not_asked_and_n_plus_1_times_h():
    """Trial 22w's ch01-w01e (log_softmax(..., dim=0)), ch01-w01d (label_smoothing=0.1) and ch03-w03c
    (weight[n*H:n+1*H]): each line says what it does; lines that do what the course asks say nothing."""
    from seqcourse import pysource

    assert "the batch" in pysource.line_notes("loss = F.nll_loss(F.log_softmax(model(x), dim=0), y)")
    assert "the batch" in pysource.line_notes("w = energies.softmax(0)")
    assert "label_smoothing=0.1" in pysource.line_notes("loss = F.cross_entropy(model(x), y, label_smoothing=0.1)")
    assert "(n + 1) * H" in pysource.line_notes("W = {k: w[n*H:n+1*H] for n, k in enumerate(GATES)}")
    # trial 22x's ch03-x03b: each product squashed on its own
    assert "ONE sigmoid to the whole sum" in pysource.line_notes(
        'i = torch.sigmoid(x @ Wx["i"].T) + torch.sigmoid(h_prev @ Wh["i"].T)')
    assert "the LARGEST values get the SMALLEST weights" in pysource.line_notes("w = F.softmin(e, dim=-1)")
    assert "squashes hx BEFORE the product" in pysource.line_notes('g = torch.tanh(hx) @ W["g"].T + b["g"]')
    assert "gives Ty - 1 values" in pysource.line_notes("per_step = B * sum(k for t in range(1, Ty))")
    assert pysource.line_notes("g = torch.tanh(hx @ W.T + b)") == ""
    assert pysource.line_notes("h = out if l == 0 else out + h") == ""    # (out if ... else out) + h: never meant
    assert "ONE tanh to the whole sum" in pysource.line_notes("g = x.tanh() + torch.tanh(h @ U.T)")
    for line in ("i = torch.sigmoid(x @ W.T + h @ U.T)", "c = f * c_prev + i * g", "h = o * torch.tanh(c)",
                 "s = torch.sigmoid(a) * torch.tanh(b)"):
        assert pysource.split_squash_note(line) == "", line
    for line in ("w = torch.softmax(e, dim=-1)", "p = F.log_softmax(s, dim=2)", "loss = F.cross_entropy(s, y)",
                 "W = w[n * H:(n + 1) * H]", "e = F.cross_entropy(s, y, label_smoothing=0.0)"):
        assert pysource.line_notes(line) == "", line


def test_a_named_flip_says_which_axis_it_reverses_with_the_shape(shell):
    """Trial 22z's ch05 and ch09 flips of the wrong axis: the line named says which axis `.flip(k)` reverses and that
    axis's size (the tests' sizes differ, so the size names the axis); a line without a flip says nothing of it."""
    shell.record("def f(x, w):\n"
                 "    a = x @ w\n"
                 "    b = a.flip(1)\n"
                 "    return b * 2\n")
    text = _message(shell, "def f(x, w):\n"
                           "    a = x @ w\n"
                           "    b = a.flip(0)\n"
                           "    return b * 2\n")
    assert "a.flip(0) reverses axis 0 of a, whose shape is (2, 4): the axis of size 2" in text
    text = _message(shell, "def f(x, w):\n"
                           "    a = x @ w\n"
                           "    b = torch.flip(a, (1,)) * 3\n"
                           "    return b * 2\n")
    assert "reverses axis" not in text or "torch.flip(a, (1,)) reverses axis 1" in text


def _brief(sh, student: str, test: str = TEST_CELL) -> str:
    """What explain_errors shows a student for the failing ``test`` cell after ``student``'s function."""
    from seqcourse.checks import brief_error

    assert sh.run_cell(student, store_history=True).success
    exc = sh.run_cell(test, store_history=True).error_in_exec
    assert exc is not None, "the student's function passed"
    return brief_error(exc, exc.__traceback__, sh)


def test_an_argument_unpacked_over_a_stale_loop_variable_and_teacher_forcing_fed_its_guess_are_named(shell):
    """Trial 22z's ch04-t04c (`h_r, h_z, h = gh.chunk(3)` in a function given h), ch09-t09a (`if tok == EOS` after
    the loop over tok ended) and ch06-t06e (a teacher-forced loss feeding back the decoder's arg-max): each failing
    message names the line and the slip."""
    shell.record()
    text = _brief(shell, "def f(x, w):\n"
                           "    a = x @ w\n"
                           "    y0, x = a, a * 0 + 1\n"
                           "    return torch.tanh(a) * 2 + 1 + x\n")
    assert 'your line "y0, x = a, a * 0 + 1" in f binds x, an argument of f that earlier lines read' in text
    text = _brief(shell, "def f(x, w):\n"
                           "    a = x @ w\n"
                           "    for k, col in enumerate(a.T):\n"
                           "        pass\n"
                           "    rows = []\n"
                           "    for row in a:\n"
                           "        rows.append(torch.tanh(row) * 2 + 1 + k)\n"
                           "    return torch.stack(rows)\n")
    assert 'reads k, the variable of the loop at your line "for k, col in enumerate(a.T):", which had ended' in text
    text = _brief(shell, "def f(x, w):\n"
                           "    \"\"\"With teacher forcing.\"\"\"\n"
                           "    a = x @ w\n"
                           "    y = a.argmax(dim=-1)\n"
                           "    return torch.tanh(a) * 2 + 1 + 0.01 * float(sum(y))\n")
    assert 'your line "y = a.argmax(dim=-1)" in f feeds the decoder its own guess' in text


def test_a_matrix_two_norm_and_a_discarded_squash_are_named_with_their_fix(shell):
    """Trial 22aa's ch02-a02c (`torch.linalg.norm(a, 2)` of a matrix: its largest singular value) and ch07-a07c
    (`torch.sigmoid(f)` on a line of its own: the fix assigns to f, not to torch)."""
    shell.record()
    text = _brief(shell, "def f(x, w):\n"
                         "    a = x @ w\n"
                         "    n = torch.linalg.norm(a, 2)\n"
                         "    return torch.tanh(a) * 2 + 1 + n\n")
    assert 'your line "n = torch.linalg.norm(a, 2)" in f asks torch.linalg.norm for ord=2' in text
    assert "torch.linalg.vector_norm(a)" in text
    text = _brief(shell, "def f(x, w):\n"
                         "    a = x @ w\n"
                         "    torch.tanh(a)\n"
                         "    return a * 2 + 1\n")
    assert "write a = torch.tanh(a)" in text
