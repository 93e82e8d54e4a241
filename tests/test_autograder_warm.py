"""Warm sandboxes (one per worker slot, a fork per submission) isolate successive submissions as a cold run
does: nothing a submission leaves behind (files in /tmp, the home folder or /dev/shm, System V shared memory,
detached processes, changes to an imported library) is there for the next one; limits and timeouts behave
the same; a warm run and a cold run of the same code give the same result."""
from __future__ import annotations

import json

import pytest

from autograder.jail import Limits, bwrap_works
from autograder.sandbox import Sandbox

BWRAP_OK, BWRAP_INFO = bwrap_works()
pytestmark = pytest.mark.skipif(not BWRAP_OK, reason=f"needs bubblewrap: {BWRAP_INFO}")

LEAVE = r'''
import ctypes, json, os, subprocess, sys, torch
open("/tmp/left.txt", "w").write("secret answer")
open(os.path.expanduser("~/left.txt"), "w").write("secret answer")
open("left-in-workdir.txt", "w").write("secret answer")
open("/dev/shm/left", "w").write("secret answer")
libc = ctypes.CDLL(None)
shmid = libc.shmget(0x5eed, 4096, 0o1666)          # IPC_CREAT | 0666
bg = subprocess.Popen(["sleep", "1000"], start_new_session=True)
if os.fork() == 0:                                   # a detached grandchild
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(1000)
    os._exit(0)
torch.left_behind = "secret answer"
print(json.dumps({"shmid": shmid, "bg": bg.pid, "pid": os.getpid()}))
'''

LOOK = r'''
import ctypes, glob, json, os, torch
libc = ctypes.CDLL(None)
me = os.getpid()
others = []
for d in os.listdir("/proc"):
    if d.isdigit() and int(d) not in (1, me, os.getppid()):
        try:
            others.append(open(f"/proc/{d}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:80])
        except OSError:
            pass
print(json.dumps({"tmp": os.listdir("/tmp"), "home": sorted(os.listdir(os.path.expanduser("~"))),
                  "workdir": sorted(os.listdir(".")), "shm": os.listdir("/dev/shm"),
                  "sysv": libc.shmget(0x5eed, 0, 0), "others": others,
                  "torch": getattr(torch, "left_behind", None), "pid": me}))
'''


def _run(sb, code, slot=0, **limits):
    out = sb.run([{"kind": "student", "code": code}], files={}, workdir_name="hw", limits=Limits(**limits),
                 slot=slot, recorder_placeholder="__rt_placeholder__", builtins_placeholder="__bt_placeholder__")
    ends = [e for e in out.events if e.get("ev") == "cell_end"]
    return out, ends


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    sb = Sandbox("bwrap", warm=True, cache_dir=tmp_path_factory.mktemp("warm-cache"))
    yield sb
    sb.close()


def test_nothing_of_a_submission_reaches_the_next(warm, tmp_path):
    # what a fresh (cold) sandbox sees: /tmp is empty unless the course or Python lives under /tmp (a clone in
    # /tmp/x is mounted read-only at its own path, so /tmp then shows "x")
    _, fresh = _run(Sandbox("bwrap", warm=False, cache_dir=tmp_path), LOOK)
    baseline = json.loads(fresh[0]["stdout"])
    out, ends = _run(warm, LEAVE)
    assert out.status == "ok" and not ends[0]["error"], (out.reason, ends)
    zygote = warm.warm_pool.zygotes[0]
    first = json.loads(ends[0]["stdout"])
    assert first["shmid"] >= 0
    out, ends = _run(warm, LOOK)
    assert out.status == "ok" and not ends[0]["error"], (out.reason, ends)
    assert warm.warm_pool.zygotes[0] is zygote and zygote.alive(), "the second run did not use the same warm sandbox"
    seen = json.loads(ends[0]["stdout"])
    assert "left.txt" not in seen["tmp"] and sorted(seen["tmp"]) == sorted(baseline["tmp"]), (seen, baseline)
    assert seen["shm"] == [] and seen["workdir"] == []
    assert "left.txt" not in seen["home"]
    assert seen["sysv"] == -1, "System V shared memory of the previous submission survived"
    assert seen["others"] == [], f"processes of the previous submission survived: {seen['others']}"
    assert seen["torch"] is None, "a change to an imported library reached the next submission"


def test_same_result_warm_and_cold(warm, tmp_path):
    code = "import torch\ntorch.manual_seed(0)\nprint(torch.randn(3).sum().item(), hash('abc'), id(None) > 0)"
    _, w = _run(warm, code)
    cold = Sandbox("bwrap", warm=False, cache_dir=tmp_path)
    _, c = _run(cold, code)
    assert w[0]["stdout"] == c[0]["stdout"] and not w[0]["error"]


def test_limits_and_timeouts_in_a_warm_sandbox(warm):
    out, ends = _run(warm, "while True:\n    pass", cell_seconds=2, interrupt_grace=2)
    assert out.status == "timeout" and ends and ends[0]["error"]["type"] == "KeyboardInterrupt", out.reason
    out, _ = _run(warm, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
                  cell_seconds=2, interrupt_grace=2)
    assert out.status == "timeout" and "did not stop" in out.reason, out.reason
    out, _ = _run(warm, "import os\nos._exit(3)")
    assert out.status == "crashed" and "exited with code 3" in out.reason, out.reason
    out, ends = _run(warm, "x = bytearray(8 << 30)")   # above the 4 GiB address-space limit
    assert ends[0]["error"]["type"] == "MemoryError", ends
    out, ends = _run(warm, "print('still serving')")       # the slot still works after all that
    assert out.status == "ok" and ends[0]["stdout"].strip() == "still serving"
