"""The class grader against a determined student (issue 20): every class of attack, with variants, as submissions
graded through the course's command (``python -m autograder grade``), in warm and cold sandboxes, and the channels
between students in the queue mode too.

The assignment ``rt`` mirrors what the attacks were first made on (exercise 2's ``rnn_cell`` with hidden cases and a
"do not call nn.RNNCell" rule; exercise 8's "do not form W"), plus ``magic()``, a one-line part that the probes of
channels between students use: a reader gets its point only if it can read what the previous student wrote.

1. **The expected value is within the answer's reach**: ``globals()``, every frame's locals, ``gc``, ``__main__``,
   the hidden part's code constants, ``inspect.stack()``, a thread that watches the test and patches the answer in
   place, a global forward hook on the reference's module. All score 0 on the attacked part.
2. **Tampering judged by content**: a correct answer that, while the test runs, swaps a library function's code,
   defaults or closure, adds an attribute to a protected module, registers a global module hook, a torch function
   mode, a trace function: each test fails as tampering; done in the student's own cell before the test, it is
   undone (and noted) and the test passes.
3. **The course's rules switched off**: the forbidden builtin called with torch functions disabled, from another
   thread, through ``torch.ops.aten``; W formed inside ``_disable_current_modes()``, with PyTorch's operator record
   switched off too (at a size the kernel's memory count sees), after resetting the peak-memory count.
4. **One student reaches the next**: POSIX message queues, System V message queues, the user, user-session,
   session and persistent kernel keyrings, POSIX shared memory, files in /tmp, /dev/shm and the home folder. After
   the batch no key and no process of any grading user id remains.
5. **Nothing chosen after a hidden part reaches a student-visible file**: pairs of submissions that differ only in
   what they choose after a hidden part ran (exit code, signal, forged lines, output size, the cell that crashes or
   stalls, an exception's type, which check fails) get identical grades.csv rows and feedback pages.
6. **A flood of the event pipe**: newlines, long lines, well-formed but unsigned events: each costs at most the
   notebook's limits, the grader stays responsive, the next student is graded as usual.
"""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import autograder_synth as synth
import nbgrader_cli
from autograder.jail import bwrap_works

BWRAP_OK, BWRAP_INFO = bwrap_works()
pytestmark = pytest.mark.skipif(not BWRAP_OK or os.getuid() != 0,
                                reason=f"the red team needs bubblewrap and root (CI has both): {BWRAP_INFO}")
ASSIGNMENT = "rt"
NB = f"{ASSIGNMENT}.ipynb"
MAGIC = 8675309

SETUP = '''
import torch
from torch import nn
from seqcourse import set_seed
from seqcourse.checks import assert_close, assert_not_materialised, forbid, measure_cost, reference

torch.set_num_threads(1)
BUILT_IN_RNN = ("torch.nn.RNNBase", "torch.nn.RNNCell", "torch.rnn_tanh_cell", "torch.rnn_relu_cell")
'''

RNN_CELL = '''def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    ### BEGIN SOLUTION
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
    ### END SOLUTION'''

RNN_TEST = '''
W_hx = torch.linspace(-1, 1, 12).reshape(4, 3)
W_hh = torch.linspace(-0.5, 0.5, 16).reshape(4, 4)
x_t, h_prev, b_h = torch.linspace(-1, 1, 6).reshape(2, 3), torch.linspace(0, 1, 8).reshape(2, 4), torch.zeros(4)
with forbid(*BUILT_IN_RNN, what="rnn_cell", reason="write the formula yourself"):
    h_t = rnn_cell(x_t, h_prev, W_hx, W_hh, b_h)
assert_close(h_t, torch.tensor([[0.8675, 0.5151, -0.1815, -0.7337], [-0.9876, -0.615, 0.8016, 0.9942]]), atol=1e-4)
### BEGIN HIDDEN TESTS
for seed, (B, D, H) in enumerate([(3, 2, 5), (1, 4, 3), (2, 3, 3)]):
    set_seed(2100 + seed)
    cell = nn.RNNCell(D, H)
    x_t, h_prev = torch.randn(B, D), torch.randn(B, H)
    W_hx, W_hh, b_h = cell.weight_ih.detach(), cell.weight_hh.detach(), (cell.bias_ih + cell.bias_hh).detach()
    with reference():
        with torch.no_grad():
            want = cell(x_t, h_prev)
    with forbid(*BUILT_IN_RNN, what="rnn_cell", reason="write the formula yourself"):
        got = rnn_cell(x_t, h_prev, W_hx, W_hh, b_h)
    assert_close(got, want, atol=1e-5, name=f"rnn_cell, seed {seed}")
assert_close(rnn_cell(torch.ones(1, 1), torch.ones(1, 1), torch.ones(1, 1), torch.ones(1, 1), torch.ones(1)),
             torch.tensor([[0.99505475]]), atol=1e-5, name="all ones")
### END HIDDEN TESTS
'''

REDUCED = '''def reduced_scores(dec, enc, U, V):
    """Energies (B, Ty, Tx) of reduced-rank attention: (U d_t) . (V h_s). Never form W = U^T V (Dd, Dh)."""
    ### BEGIN SOLUTION
    return (dec @ U.T) @ (enc @ V.T).transpose(1, 2)
    ### END SOLUTION'''

REDUCED_TEST = '''
def fixed(*shape, offset=0):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n, dtype=torch.float32) + offset).reshape(shape)

e, cost = measure_cost(reduced_scores, fixed(1, 2, 300), fixed(1, 3, 400, offset=1), fixed(2, 300, offset=2) / 10,
                       fixed(2, 400, offset=3) / 10)
assert_not_materialised(cost, (300, 400), "W = U^T V", "reduced_scores")
### BEGIN HIDDEN TESTS
e, cost = measure_cost(reduced_scores, fixed(1, 2, 4096), fixed(1, 3, 4096, offset=1), fixed(2, 4096, offset=2) / 10,
                       fixed(2, 4096, offset=3) / 10)
assert_not_materialised(cost, (4096, 4096), "W = U^T V", "reduced_scores")
g = torch.Generator().manual_seed(840)
for i in range(3):
    dec, enc = torch.randn(2, 3, 5, generator=g), torch.randn(2, 4, 6, generator=g)
    U, V = torch.randn(2, 5, generator=g), torch.randn(2, 6, generator=g)
    with reference():
        want = dec @ (U.T @ V) @ enc.transpose(1, 2)
    assert_close(reduced_scores(dec, enc, U, V), want, atol=1e-4, name=f"case {i}")
### END HIDDEN TESTS
'''

MAGIC_SOL = f'''def magic():
    ### BEGIN SOLUTION
    return {MAGIC}
    ### END SOLUTION'''

MAGIC_TEST = f'''
result = magic()
assert type(result) is int, "magic() returns an int"
assert result > 0, "magic() is positive"
assert result == {MAGIC}, "magic() is the number"
'''


def build(nb):
    nb.readonly("rt_setup", SETUP)
    nb.solution("rt_rnn_cell", RNN_CELL)
    nb.test("rt_test_rnn_cell", 2, RNN_TEST)
    nb.solution("rt_reduced", REDUCED)
    nb.test("rt_test_reduced", 3, REDUCED_TEST)
    nb.solution("rt_magic", MAGIC_SOL)
    nb.test("rt_test_magic", 1, MAGIC_TEST)


FULL = 6.0
CORRECT_RNN = RNN_CELL.replace("    ### BEGIN SOLUTION\n", "").replace("    ### END SOLUTION", "")
WRONG_RNN = "def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):\n    return torch.zeros(x_t.shape[0], W_hh.shape[0])\n"

# ------------------------------------------------------------------------------------------------- class 1
# Each attack answers the visible case with the values the visible test shows (no implementation at all), takes the
# hidden literal case from the hidden part's code constants, and the hidden reference values from its own channel:
# on a grader that keeps expected values in the student's process, each one alone scores full marks.
_NO_IMPLEMENTATION = '''
import sys as _sys
def _known(x_t, W_hh):
    if x_t.shape == (2, 3) and W_hh.shape == (4, 4):   # the visible case: its answer is in the visible test
        return torch.tensor([[0.8675, 0.5151, -0.1815, -0.7337], [-0.9876, -0.615, 0.8016, 0.9942]])
    if x_t.shape == (1, 1):                             # the hidden literal: in the hidden part's code constants
        f = _sys._getframe(2)
        while f is not None:
            todo = [f.f_code]
            while todo:
                c = todo.pop()
                for k in c.co_consts:
                    if hasattr(k, "co_consts"):
                        todo.append(k)
                    elif type(k) is float and 0.99 < k < 1.0:
                        return torch.tensor([[k]])
            f = f.f_back
    return None
'''
_START = ("def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):\n    k = _known(x_t, W_hh)\n"
          "    if k is not None:\n        return k\n")
STEAL = {name: _NO_IMPLEMENTATION + code.replace("def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):\n", _START) for name, code in {
    "globals": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    for name in ("want", "got", "expected", "ref"):
        w = globals().get(name)
        if isinstance(w, torch.Tensor) and w.shape == (x_t.shape[0], W_hh.shape[0]):
            return w.clone()
    return torch.zeros(x_t.shape[0], W_hh.shape[0])
''',
    "frames": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    f = _sys._getframe(1)
    while f is not None:
        for k, v in list(f.f_locals.items()):
            if isinstance(v, torch.Tensor) and v.shape == (x_t.shape[0], W_hh.shape[0]) and v is not h_prev:
                return v.clone()
        f = f.f_back
    return torch.zeros(x_t.shape[0], W_hh.shape[0])
''',
    "gc": '''
import gc
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    for o in gc.get_objects():   # a module's namespace, a closure, a frame's locals
        if isinstance(o, dict):
            for key, v in list(o.items()):
                if key == "want" and isinstance(v, torch.Tensor) and v.shape == (x_t.shape[0], W_hh.shape[0]):
                    return v.clone()
    return torch.zeros(x_t.shape[0], W_hh.shape[0])
''',
    "main-module": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    v = vars(_sys.modules["__main__"]).get("want")
    if isinstance(v, torch.Tensor) and v.shape == (x_t.shape[0], W_hh.shape[0]):
        return v.clone()
    return torch.zeros(x_t.shape[0], W_hh.shape[0])
''',
    "inspect-stack": '''
import inspect
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    for info in inspect.stack():
        v = info.frame.f_locals.get("want")
        if isinstance(v, torch.Tensor) and v.shape == (x_t.shape[0], W_hh.shape[0]):
            return v.clone()
    return torch.zeros(x_t.shape[0], W_hh.shape[0])
''',
    "watcher-thread": '''
import threading, time
_answers = []
def _watch():   # patches the returned tensors in place once an expected value shows up in a frame
    while True:
        for f in list(_sys._current_frames().values()):
            while f is not None:
                w = f.f_locals.get("want")
                if isinstance(w, torch.Tensor):
                    for a in _answers:
                        if a.shape == w.shape:
                            a.copy_(w)
                f = f.f_back
        time.sleep(0.0005)
threading.Thread(target=_watch, daemon=True).start()
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    a = torch.zeros(x_t.shape[0], W_hh.shape[0])
    _answers.append(a)
    return a
''',
    "forward-hook": '''
_seen = {}
def _hook(module, inputs, output):
    if isinstance(output, torch.Tensor):
        _seen[tuple(output.shape)] = output.detach().clone()
torch.nn.modules.module.register_module_forward_hook(_hook)
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    return _seen.get((x_t.shape[0], W_hh.shape[0]), torch.zeros(x_t.shape[0], W_hh.shape[0])).clone()
''',
}.items()}

# ------------------------------------------------------------------------------------------------- class 2
# a correct answer that also changes library state WHILE the test runs: the test fails as tampering
TAMPER_DURING = {
    "code-swap": '''
def _fake(self, input, hx=None):
    return input
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    nn.RNNCell.forward.__code__ = _fake.__code__
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
    "defaults-swap": '''
import torch.nn.functional as F
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    F.softmax.__defaults__ = (-1, 3, None)
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
    "new-module-key": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    torch._VF.rnn_tanh_cell = lambda *a, **k: torch.tanh(a[1] @ a[3].T + a[0] @ a[2].T + a[4])
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
    "global-hook": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o)
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
    "function-mode": '''
from torch.overrides import TorchFunctionMode
class _Spy(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    _Spy().__enter__()
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
    "closure-cell": '''
import types
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    for mod in (torch.nn.functional, torch.nn.modules.module, torch.serialization):
        for f in list(vars(mod).values()):
            if isinstance(f, types.FunctionType) and f.__closure__:
                for c in f.__closure__:
                    try:
                        c.cell_contents = c.cell_contents
                        c.cell_contents = None
                        break
                    except ValueError:
                        pass
                else:
                    continue
                break
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
    "settrace": '''
import sys
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    sys.settrace(lambda *a: None)
    return torch.tanh(h_prev @ W_hh.T + x_t @ W_hx.T + b_h)
''',
}
# the same changes made by the student's own cell BEFORE the tests: undone before every test, which passes
TAMPER_BEFORE = {
    "hook-before": "torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o)\n" + CORRECT_RNN,
    "vf-key-before": "torch._VF.rnn_tanh_cell = lambda *a, **k: 0\n" + CORRECT_RNN,
    "code-before": ("def _fake(self, input, hx=None):\n    return input\n"
                    "nn.RNNCell.forward.__code__ = _fake.__code__\n" + CORRECT_RNN),
}

# ------------------------------------------------------------------------------------------------- class 3
RULES_RNN = {
    "disable-torch-function": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    with torch._C.DisableTorchFunction():
        return torch._C._VariableFunctions.rnn_tanh_cell(x_t, h_prev, W_hx, W_hh, b_h)
''',
    "ops-aten": '''
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    return torch.ops.aten.rnn_tanh_cell(x_t, h_prev, W_hx, W_hh, b_h)
''',
    "other-thread": '''
import threading
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    out = []
    t = threading.Thread(target=lambda: out.append(torch._VF.rnn_tanh_cell(x_t, h_prev, W_hx, W_hh, b_h)))
    t.start(); t.join()
    return out[0] if out else torch.zeros(x_t.shape[0], W_hh.shape[0])
''',
    "modes-off": '''
from torch.utils._python_dispatch import _disable_current_modes
def rnn_cell(x_t, h_prev, W_hx, W_hh, b_h):
    with _disable_current_modes(), torch._C.DisableTorchFunction():
        return torch._C._VariableFunctions.rnn_tanh_cell(x_t, h_prev, W_hx, W_hh, b_h)
''',
}
_FORM_W = "    W = U.T @ V\n    return dec @ W @ enc.transpose(1, 2)\n"
RULES_W = {
    "w-modes-off": ("from torch.utils._python_dispatch import _disable_current_modes\n"
                    "def reduced_scores(dec, enc, U, V):\n    with _disable_current_modes():\n"
                    "        W = U.T @ V\n    return dec @ W @ enc.transpose(1, 2)\n"),
    "w-record-off": ("from torch.utils._python_dispatch import _disable_current_modes\n"
                     "def reduced_scores(dec, enc, U, V):\n    torch._C._autograd._enable_record_function(False)\n"
                     "    try:\n        with _disable_current_modes():\n            W = U.T @ V\n"
                     "            return dec @ W @ enc.transpose(1, 2)\n"
                     "    finally:\n        torch._C._autograd._enable_record_function(True)\n"),
    "w-reset-peak": ("def reduced_scores(dec, enc, U, V):\n    W = U.T @ V\n    r = dec @ W @ enc.transpose(1, 2)\n"
                     "    del W\n    open('/proc/self/clear_refs', 'w').write('5')\n    return r\n"),
    "w-reset-peak-link": ("import os\ndef reduced_scores(dec, enc, U, V):\n    W = U.T @ V\n"
                          "    r = dec @ W @ enc.transpose(1, 2)\n    del W\n"
                          "    os.symlink('/proc/self/clear_refs', '/tmp/cr')\n    open('/tmp/cr', 'w').write('5')\n"
                          "    return r\n"),
    "w-nested-measure": ("from seqcourse.checks import measure_cost as _mc\n"
                         "def reduced_scores(dec, enc, U, V):\n    W = U.T @ V\n    r = dec @ W @ enc.transpose(1, 2)\n"
                         "    del W\n    _mc(lambda: None)\n    return r\n"),
}

# ------------------------------------------------------------------------------------------------- class 4
_SYSCALLS = ("import ctypes, os\n_libc = ctypes.CDLL(None, use_errno=True)\n"
             "_ADD_KEY, _KEYCTL = (248, 250) if os.uname().machine == 'x86_64' else (217, 219)\n")
_KEY_READ = ("def _key(ring, name):\n"
             "    kid = _libc.syscall(_KEYCTL, 10, ring, b'user', name, 0)\n"
             "    if kid < 0:\n        return 0\n"
             "    buf = ctypes.create_string_buffer(64)\n"
             "    n = _libc.syscall(_KEYCTL, 11, kid, buf, 64)\n"
             "    return int(buf.raw[:n]) if n > 0 else 0\n")
CHANNELS = {   # name: (what the writer's cell runs, the reader's magic() body)
    "posix-mq": (
        f"{_SYSCALLS}_q = _libc.mq_open(b'/rt20q', os.O_CREAT | os.O_RDWR, 0o666, None)\n"
        f"_libc.mq_send(_q, b'{MAGIC}', {len(str(MAGIC))}, 0)\n",
        f"{_SYSCALLS}def magic():\n    q = _libc.mq_open(b'/rt20q', os.O_RDWR | os.O_NONBLOCK)\n"
        "    if q < 0:\n        return 0\n    buf = ctypes.create_string_buffer(8192)\n"
        "    n = _libc.mq_receive(q, buf, 8192, None)\n    return int(buf.raw[:n]) if n > 0 else 0\n"),
    "sysv-msg": (
        f"{_SYSCALLS}class _M(ctypes.Structure):\n    _fields_ = [('t', ctypes.c_long), ('x', ctypes.c_char * 16)]\n"
        f"_q = _libc.msgget(0x2020, 0o1666)\n_libc.msgsnd(_q, ctypes.byref(_M(1, b'{MAGIC}')), 16, 0)\n",
        f"{_SYSCALLS}class _M(ctypes.Structure):\n    _fields_ = [('t', ctypes.c_long), ('x', ctypes.c_char * 16)]\n"
        "def magic():\n    q = _libc.msgget(0x2020, 0o666)\n    if q < 0:\n        return 0\n    m = _M()\n"
        "    n = _libc.msgrcv(q, ctypes.byref(m), 16, 0, 0o4000)\n    return int(m.x) if n > 0 else 0\n"),
    "user-keyring": (
        f"{_SYSCALLS}_libc.syscall(_ADD_KEY, b'user', b'rt20u', b'{MAGIC}', {len(str(MAGIC))}, -4)\n",
        f"{_SYSCALLS}{_KEY_READ}def magic():\n    return _key(-4, b'rt20u')\n"),
    "user-session-keyring": (
        f"{_SYSCALLS}_libc.syscall(_ADD_KEY, b'user', b'rt20us', b'{MAGIC}', {len(str(MAGIC))}, -5)\n",
        f"{_SYSCALLS}{_KEY_READ}def magic():\n    return _key(-5, b'rt20us')\n"),
    "session-keyring": (
        f"{_SYSCALLS}_libc.syscall(_ADD_KEY, b'user', b'rt20s', b'{MAGIC}', {len(str(MAGIC))}, -3)\n",
        f"{_SYSCALLS}{_KEY_READ}def magic():\n    return _key(-3, b'rt20s')\n"),
    "persistent-keyring": (
        f"{_SYSCALLS}_p = _libc.syscall(_KEYCTL, 22, -1, -3)\n"
        f"_libc.syscall(_ADD_KEY, b'user', b'rt20p', b'{MAGIC}', {len(str(MAGIC))}, _p)\n",
        f"{_SYSCALLS}{_KEY_READ}def magic():\n    p = _libc.syscall(_KEYCTL, 22, -1, -3)\n"
        "    return _key(p, b'rt20p') if p > 0 else 0\n"),
    "posix-shm": (
        f"from multiprocessing import shared_memory\n_m = shared_memory.SharedMemory('rt20m', create=True, size=16)\n"
        f"_m.buf[:{len(str(MAGIC))}] = b'{MAGIC}'\n",
        "from multiprocessing import shared_memory\ndef magic():\n    try:\n"
        "        m = shared_memory.SharedMemory('rt20m')\n    except OSError:\n        return 0\n"
        f"    return int(bytes(m.buf[:{len(str(MAGIC))}]))\n"),
    "files": (
        "import os\nfor _p in ('/tmp/rt20', '/dev/shm/rt20', os.path.expanduser('~/rt20'), '/var/tmp/rt20'):\n"
        "    try:\n        open(_p, 'w').write('" + str(MAGIC) + "')\n    except OSError:\n        pass\n",
        "import os\ndef magic():\n    for p in ('/tmp/rt20', '/dev/shm/rt20', os.path.expanduser('~/rt20'), '/var/tmp/rt20'):\n"
        "        try:\n            return int(open(p).read())\n        except (OSError, ValueError):\n            pass\n"
        "    return 0\n"),
}

# ------------------------------------------------------------------------------------------------- class 5
# pairs of cells run AFTER the hidden part of rt_test_rnn_cell (an extra cell after that test): what they choose
# must never reach what the student sees
_PIPES = ("import os, stat\n_fds = [fd for fd in range(3, 64) if os.path.exists(f'/proc/self/fd/{fd}')"
          " and stat.S_ISFIFO(os.fstat(fd).st_mode)]\n")
CHOICES = {
    "exit-code": ("import os\nos._exit(37)\n", "import os\nos._exit(99)\n"),
    "signal": ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
               "import os, signal\nos.kill(os.getpid(), signal.SIGUSR2)\n"),
    "forged-lines": (_PIPES + "for fd in _fds:\n    os.write(fd, b'garbage\\n' * 3)\n",
                     _PIPES + "for fd in _fds:\n    os.write(fd, b'garbage\\n' * 700)\n"),
    "output-size": ("print('x' * 10)\n", "print('x' * 90000)\nimport sys\nprint('y' * 5000, file=sys.stderr)\n"),
    "raises": ("raise ValueError('a')\n", "raise KeyError('bbbbbbbbbbbbbbbbbbbbbbbbbb')\n"),
    "later-check": ("def magic():\n    return -1\n", "def magic():\n    return 1.5\n"),
    "tamper-names": ("setattr(nn.GRUCell, 'leak_31337', 1)\ndef magic():\n    setattr(nn.GRUCell, 'leak_a', 1)\n"
                     "    return 1\n",
                     "setattr(nn.GRUCell, 'leak_27182', 1)\ndef magic():\n    setattr(nn.GRUCell, 'leak_bbbb', 1)\n"
                     "    return 1\n"),
}
# crash or stall in the first or the second of two extra cells
STOP_WHERE = {
    "crash-cell": ("import os\nos._exit(3)\n", "x = 1\n"),
    "stall-cell": ("import time\nwhile True:\n    time.sleep(1)\n", "x = 1\n"),
}

# ------------------------------------------------------------------------------------------------- class 6
FLOODS = {
    "newlines": (_PIPES + "import fcntl\nfor fd in _fds:\n    try:\n        fcntl.fcntl(fd, 1031, 1 << 20)\n"
                 "    except OSError:\n        pass\nfor _ in range(200):\n    for fd in _fds:\n"
                 "        try:\n            os.write(fd, b'\\n' * (1 << 20))\n        except OSError:\n            pass\n"),
    "long-lines": (_PIPES + "for _ in range(200):\n    for fd in _fds:\n        try:\n"
                   "            os.write(fd, b'[' * (1 << 20))\n        except OSError:\n            pass\n"),
    "unsigned-events": (_PIPES + "_line = b'{\"ev\": \"check\", \"test\": \"rt_test_magic\", \"tok\": \"0\"}\\n' * 4096\n"
                        "for _ in range(400):\n    for fd in _fds:\n        try:\n            os.write(fd, _line)\n"
                        "        except OSError:\n            pass\n"),
}


# ------------------------------------------------------------------------------------------------- the batch
# In cold sandboxes (a fresh process per submission) and in the queue mode, the classes whose defence depends on
# how a submission is run: the channels between students, and a sample of the others (the rest is the same code)
COLD_SAMPLE = ("a-", "c1-globals", "c1-frames", "c2-code-swap", "c3-disable", "c3-w-modes", "c4-", "c5-exit",
               "c5-signal", "c5-forged", "c6-newlines", "z-")


def _submissions(folder: Path, sample: tuple | None = None) -> dict:
    """``{student: (files, expected score or None)}`` for the red team (``sample``: only students whose id starts
    with one of these)."""
    subs = {}

    def add(student, answers=None, extra=None, score=None):
        if sample is None or student.startswith(sample):
            subs[student] = (synth.submission(folder, answers or {}, extra or {}), score)

    add("a-reference", score=FULL)
    for name, code in STEAL.items():
        add(f"c1-{name}", {"rt_rnn_cell": code}, score=FULL - 2)
    add("c1-wrong-answer", {"rt_rnn_cell": WRONG_RNN}, score=FULL - 2)
    for name, code in TAMPER_DURING.items():
        add(f"c2-{name}", {"rt_rnn_cell": code}, score=FULL - 2)
    for name, code in TAMPER_BEFORE.items():
        add(f"c2-{name}", {"rt_rnn_cell": code}, score=FULL)
    for name, code in RULES_RNN.items():
        add(f"c3-{name}", {"rt_rnn_cell": code}, score=FULL - 2)
    for name, code in RULES_W.items():
        add(f"c3-{name}", {"rt_reduced": code}, score=FULL - 3)
    for name, (writer, reader) in CHANNELS.items():
        add(f"c4-{name}-1-writer", extra={"rt_magic": writer}, score=FULL)
        add(f"c4-{name}-2-reader", {"rt_magic": reader}, score=FULL - 1)
    for name, (a, b) in CHOICES.items():
        add(f"c5-{name}-a", extra={"rt_test_rnn_cell": a})
        add(f"c5-{name}-b", extra={"rt_test_rnn_cell": b})
    for name, (first, second) in STOP_WHERE.items():
        add(f"c5-{name}-a", extra={"rt_test_rnn_cell": first, "rt_reduced": second})
        add(f"c5-{name}-b", extra={"rt_test_rnn_cell": second, "rt_reduced": first})
    for name, code in FLOODS.items():
        add(f"c6-{name}", extra={"rt_test_rnn_cell": code})
    add("z-honest-after-floods", score=FULL)
    return subs


def _grade(root: Path, subs: dict, *extra_args: str, env: dict | None = None) -> dict:
    folder = root / "submitted"
    for student, (files, _score) in subs.items():
        d = folder / student / ASSIGNMENT
        d.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (d / name).write_bytes(data)
    out = root / "out"
    cmd = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--submissions", str(folder), "--config",
           str(root / "nbgrader_config.py"), "--out", str(out), "--feedback-dir", str(root / "feedback"),
           "--workers", "1", "--cell-timeout", "10", "--notebook-timeout", "60", *extra_args]
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=nbgrader_cli.REPO,
                       env=dict(os.environ, PYTHONPATH=str(nbgrader_cli.REPO), **(env or {})),
                       capture_output=True, text=True, timeout=3000)
    wall = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    records, order = {}, []
    for line in (out / "state.jsonl").read_text().splitlines():
        rec = json.loads(line)
        records[rec["student"]] = rec
        order.append(rec["student"])
    with open(out / "grades.csv") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    log = (out / "autograde.log").read_text()
    m = re.search(r"submissions run as user ids (\d+)-(\d+)", log)
    uids = range(int(m.group(1)), int(m.group(2)) + 1) if m else range(0)
    return {"records": records, "rows": rows, "root": root, "wall": wall, "uids": uids, "log": log, "order": order}


def _course(tmp_path_factory, name: str) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp(name)
    folder = synth.course(root, ASSIGNMENT, build)
    return root, folder


def _queue_skip_reason():
    try:
        from test_autograder_distributed import _skip_reason
    except Exception as exc:  # noqa: BLE001
        return f"the distributed tests cannot be imported: {exc}"
    return _skip_reason()


# "fallback": warm sandboxes whose submissions get no user and IPC namespace of their own (as where the kernel refuses
# one, which happened on a loaded machine): the class-4 channels and what remains of the grading users
FALLBACK_SAMPLE = ("a-", "c4-", "z-")


@pytest.fixture(scope="module", params=["warm", "cold", "queue", "fallback"])
def batch(request, tmp_path_factory):
    mode = request.param
    root, folder = _course(tmp_path_factory, f"redteam-{mode}")
    subs = _submissions(folder, {"warm": None, "fallback": FALLBACK_SAMPLE}.get(mode, COLD_SAMPLE))
    if mode == "fallback":
        if os.getuid() != 0:
            pytest.skip("only a grader running as root gives submissions user ids of their own")
        result = _grade(root, subs, env={"AUTOGRADER_PRIVATE_NAMESPACES": "0"})
    elif mode != "queue":
        result = _grade(root, subs, *(["--cold"] if mode == "cold" else []))
    else:   # one worker, one slot: its warm sandbox grades one student after the other
        why = _queue_skip_reason()
        if why:
            pytest.skip(why)
        from nbgrader.api import Gradebook
        from test_autograder_distributed import Redis

        postgres = request.getfixturevalue("postgres")
        with Gradebook(postgres) as gb:
            gb.update_or_create_assignment(ASSIGNMENT)
            gb.update_or_create_notebook(ASSIGNMENT, ASSIGNMENT)
            for gid, p in synth.points_of(folder)[NB].items():
                gb.update_or_create_grade_cell(gid, ASSIGNMENT, ASSIGNMENT, max_score=p, cell_type="code")
        (root / "redis").mkdir()
        broker = Redis(root / "redis")
        broker.start()
        log = open(root / "worker.log", "ab")
        worker = subprocess.Popen(
            [sys.executable, "-m", "autograder", "worker", "--queue", broker.url, "--store-url", postgres,
             "--concurrency", "1", "--cache-dir", str(root / "worker-cache")],
            cwd=nbgrader_cli.REPO, env=dict(os.environ, PYTHONPATH=str(nbgrader_cli.REPO)), stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            result = _grade(root, subs, "--queue", broker.url, "--db-url", postgres)
        finally:
            os.killpg(worker.pid, 9)
            worker.wait(timeout=60)
            broker.stop()
        m = re.search(r"submissions run as user ids (\d+)-(\d+)", (root / "worker.log").read_text())
        result["uids"] = range(int(m.group(1)), int(m.group(2)) + 1) if m else range(0)
    result["mode"], result["subs"] = mode, subs
    return result


try:   # the throw-away PostgreSQL of the gradebook tests, for the queue mode
    from test_autograder_postgres import postgres  # noqa: F401
except Exception:  # noqa: BLE001 - skipped with its reason above
    pass


def _need(batch, *students):
    if any(s not in batch["records"] for s in students):
        pytest.skip(f"not in the {batch['mode']} sample")


def _page(batch, student: str) -> str:
    return (batch["root"] / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()


def test_reference_and_honest_after_floods_keep_full_marks(batch):
    for s in ("a-reference", "z-honest-after-floods"):
        assert float(batch["rows"][s]["score"]) == FULL, (s, batch["rows"][s])


@pytest.mark.parametrize("student", [f"c1-{n}" for n in STEAL] + ["c1-wrong-answer"])
def test_class1_no_expected_value_within_reach(batch, student):
    _need(batch, student)
    rec = batch["records"][student]
    t = rec["notebooks"][NB]["tests"]["rt_test_rnn_cell"]
    assert not t["passed"] and rec["score"] == FULL - 2, (student, rec["score"], t["detail"])


@pytest.mark.parametrize("student", [f"c2-{n}" for n in TAMPER_DURING])
def test_class2_tampering_while_a_test_runs_is_seen(batch, student):
    _need(batch, student)
    rec = batch["records"][student]
    t = rec["notebooks"][NB]["tests"]["rt_test_rnn_cell"]
    assert not t["passed"], (student, t)
    assert "replaced" in t["detail"] or "changed" in t["detail"] or "registr" in t["detail"], (student, t["detail"])
    assert rec["score"] == FULL - 2, (student, rec["score"], rec["reason"])


@pytest.mark.parametrize("student", [f"c2-{n}" for n in TAMPER_BEFORE])
def test_class2_tampering_before_the_tests_is_undone(batch, student):
    _need(batch, student)
    rec = batch["records"][student]
    assert rec["score"] == FULL, (student, rec["score"], rec["reason"], rec["notebooks"][NB]["tests"])
    assert "restored" in rec["reason"], rec["reason"]


@pytest.mark.parametrize("student", [f"c3-{n}" for n in list(RULES_RNN) + list(RULES_W)])
def test_class3_rules_hold_when_switched_off_from_python(batch, student):
    _need(batch, student)
    rec = batch["records"][student]
    part = "rt_test_rnn_cell" if student[3:] in RULES_RNN else "rt_test_reduced"
    t = rec["notebooks"][NB]["tests"][part]
    assert not t["passed"], (student, t)
    assert rec["score"] == FULL - (2 if part == "rt_test_rnn_cell" else 3), (student, rec["score"], t["detail"])


@pytest.mark.parametrize("channel", list(CHANNELS))
def test_class4_nothing_passes_between_students(batch, channel):
    writer, reader = batch["records"][f"c4-{channel}-1-writer"], batch["records"][f"c4-{channel}-2-reader"]
    assert writer["score"] == FULL, writer["reason"]
    order = batch["order"]   # the reader must come after the writer, in the same worker slot, for the probe to mean it
    assert order.index(writer["student"]) < order.index(reader["student"]), order
    t = reader["notebooks"][NB]["tests"]["rt_test_magic"]
    assert not t["passed"], f"{channel}: the reader got the writer's value ({batch['mode']} sandboxes)"


def test_class4_the_instructor_is_told_how_submissions_were_isolated(batch):
    """The fallback is not silent: each record's instructor detail says the submission had no private namespaces
    (and the fallback batch really ran without them, or its class-4 tests would prove nothing)."""
    if batch["mode"] != "fallback":
        pytest.skip("private namespaces may be refused on a loaded machine: only the fallback batch surely lacks them")
    said = {s: "sandbox: no private namespaces" in rec["notebooks"][NB]["detail"]
            for s, rec in batch["records"].items()}
    assert all(said.values()), [s for s, v in said.items() if not v]
    assert "switched off by the grader" in batch["records"]["a-reference"]["notebooks"][NB]["detail"]


def test_class4_nothing_of_any_grading_user_remains(batch):
    uids = list(batch["uids"])
    assert uids, "the log does not say which user ids submissions ran as"
    deadline = time.monotonic() + 15
    while True:   # the kernel collects the keys of a dead user namespace shortly after it ends
        keys = [line for line in Path("/proc/key-users").read_text().splitlines()
                if int(line.split(":")[0]) in uids and int(line.split()[1]) > 0]
        if not keys or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not keys, f"kernel keys of grading users remain: {keys}"
    procs = [d for d in os.listdir("/proc") if d.isdigit() and os.stat(f"/proc/{d}").st_uid in uids]
    assert not procs, f"processes of grading users remain: {procs}"
    for place in ("/tmp", "/dev/shm", "/var/tmp"):
        left = [p for p in Path(place).iterdir() if p.lstat().st_uid in uids]
        assert not left, f"files of grading users remain in {place}: {left}"


def _visible(batch, student: str) -> tuple:
    """What the student sees, without what differs by construction: their id, their own code, the time."""
    row = dict(batch["rows"][student])
    row.pop("student")
    page = _page(batch, student)
    page = re.sub(r"<pre>(?:(?!</pre>).)*</pre>", "", page, flags=re.S)   # code (theirs and the visible tests')
    page = page.replace(student, "STUDENT")
    page = re.sub(r"Graded \d{4}-\d\d-\d\d \d\d:\d\d UTC", "", page)
    return row, page


@pytest.mark.parametrize("pair", list(CHOICES) + list(STOP_WHERE))
def test_class5_nothing_chosen_after_a_hidden_part_is_shown(batch, pair):
    a, b = f"c5-{pair}-a", f"c5-{pair}-b"
    _need(batch, a, b)
    ra, rb = batch["records"][a], batch["records"][b]
    assert ra["notebooks"][NB]["hidden_from"] == rb["notebooks"][NB]["hidden_from"] == "test rt_test_rnn_cell"
    va, vb = _visible(batch, a), _visible(batch, b)
    assert va[0] == vb[0], f"grades.csv differs: {va[0]} / {vb[0]}"
    assert va[1] == vb[1], "the feedback pages differ"
    for secret in ("37", "99", "SIGUSR2", "SIGTERM", "700", "90000", "KeyError", "bbbb", "31337", "27182", "1.5"):
        assert secret not in va[0]["reason"] + vb[0]["reason"], (pair, secret)


@pytest.mark.parametrize("flood", list(FLOODS))
def test_class6_a_flood_costs_at_most_the_notebooks_limits(batch, flood):
    _need(batch, f"c6-{flood}")
    rec = batch["records"][f"c6-{flood}"]
    # stopped as soon as the flood passes the grader's limits (lines it did not ask for, bytes): seconds, not minutes
    assert rec["status"] == "crashed", (flood, rec["status"], rec["notebooks"][NB]["detail"])
    assert rec["seconds"] < 25, f"{flood}: graded in {rec['seconds']} s"
    assert rec["notebooks"][NB]["tests"]["rt_test_rnn_cell"]["passed"], rec["reason"]
    assert "ended abnormally" in rec["reason"], rec["reason"]   # after a hidden part: the status, nothing more
