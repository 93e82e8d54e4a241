"""Warm sandboxes: one long-lived bubblewrap sandbox per worker slot that has imported torch, numpy, IPython and
the course package once, and forks a fresh process for each submission (:mod:`autograder._zygote`).

Why: a cold run spends about 2.3 CPU-seconds per submission starting Python and importing torch and the course
package (measured: ``benchmarks/autograde_bench.py``), as much as a short exercise notebook's own work. The
fork keeps what isolation needs: every submission gets a new process (nothing of a previous student's
objects, namespace or modules' state: the zygote never runs student code), a working folder, ``/tmp``,
``/dev/shm`` and System V IPC emptied before it starts, its own limits and (as root) user id, and every
process it started is killed when it ends. The sandbox's namespaces (mounts, network, PID) are shared by
the successive submissions of one slot, one at a time: that is the difference with a cold run, and why the
zygote wipes every writable place and kills every other process of the sandbox between two submissions.

Used by :class:`autograder.sandbox.Sandbox` when ``warm=True`` (the default with bubblewrap): :meth:`WarmPool.start`
starts a submission's driver in its slot's zygote, or cold (:meth:`autograder.jail.Jail.start`) when the zygote fails
to start or stops answering (then it is replaced).
"""
from __future__ import annotations

import json
import logging
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from .jail import HOME, IN_SANDBOX_DRIVER, PY_FLAGS, Jail, Started
from .proctree import children, find_python, kill_tree
from .protocol import ZygoteReply

log = logging.getLogger("autograder")

ZYGOTE = Path(__file__).with_name("_zygote.py")
IN_SANDBOX_ZYGOTE = "/opt/autograder/_zygote.py"
EVENT_FD = 3   # where the submission's process finds its event pipe


class _Spawner:
    """Starts every zygote from one thread that lives as long as the process: bubblewrap's
    ``--die-with-parent`` fires when the *thread* that started it ends, not only the process."""

    def __init__(self):
        self.q: queue.Queue = queue.Queue()
        threading.Thread(target=self._loop, name="zygote-spawner", daemon=True).start()

    def _loop(self):
        while True:
            fn, box = self.q.get()
            try:
                box.put((True, fn()))
            except BaseException as exc:  # noqa: BLE001
                box.put((False, exc))

    def call(self, fn):
        box: queue.Queue = queue.Queue()
        self.q.put((fn, box))
        ok, value = box.get()
        if not ok:
            raise value
        return value


_SPAWNER = None
_SPAWNER_LOCK = threading.Lock()


def _spawner() -> _Spawner:
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = _Spawner()
        return _SPAWNER


class ZygoteError(Exception):
    pass


class Zygote:
    """One warm sandbox (one worker slot)."""

    def __init__(self, jail: Jail, disk_bytes: int, cpu):
        self.jail = jail
        self.disk_bytes = disk_bytes
        self.cpu_tally = cpu       # where the CPU time it reports for itself is added (see autograder.sandbox)
        self.proc = None
        self.sock = None
        self.pid = None           # the zygote's pid as seen from here
        self.buf = b""
        self.cpu = 0.0
        self.broken = False

    # ---- life
    def start(self, timeout: float = 600.0) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        jail = self.jail
        cmd = jail.bwrap_args(self.disk_bytes)
        cmd += ["--ro-bind", str(ZYGOTE), IN_SANDBOX_ZYGOTE]
        if jail.is_root:   # to kill the submission's processes and empty its files, whatever user id they have
            for cap in ("CAP_KILL", "CAP_FOWNER", "CAP_DAC_OVERRIDE", "CAP_IPC_OWNER"):
                cmd += ["--cap-add", cap]
        cmd += jail.setenv_args(HOME)
        cmd += [sys.executable, *PY_FLAGS, IN_SANDBOX_ZYGOTE, str(child.fileno())]

        def launch():
            return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, pass_fds=[child.fileno()], cwd="/", env={})

        try:
            self.proc = _spawner().call(launch)
        finally:
            child.close()
        self.sock = parent
        config = {"preload": list(jail.profile.preload), "preload_packages": list(jail.profile.packages),
                  "driver": IN_SANDBOX_DRIVER, "wipe": ["/tmp", HOME, "/dev/shm"]}
        self.sock.sendall(json.dumps(config).encode())
        ready = self._read(timeout)
        if ready.get("ev") != ZygoteReply.READY:
            raise ZygoteError(f"unexpected first message {ready!r}")
        self._add_cpu(ready)
        if ready.get("errors"):   # the driver imports them again in each submission's process and reports there
            log.warning("warm sandbox: could not preload %s", "; ".join(ready["errors"]))
        self.pid = find_python(self.proc.pid)
        if self.pid is None:
            raise ZygoteError("the warm sandbox's process was not found")

    def close(self) -> None:
        self.broken = True
        if self.proc is not None and self.proc.poll() is None:
            kill_tree(self.proc.pid)
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.sock is not None:
            self.sock.close()

    def alive(self) -> bool:
        return not self.broken and self.proc is not None and self.proc.poll() is None

    # ---- messages
    def _read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("zygote", timeout)
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            chunk = self.sock.recv(65536)
            if not chunk:
                self.broken = True
                raise ZygoteError("the warm sandbox ended")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def _add_cpu(self, msg: dict) -> None:
        c = msg.get("cpu")
        if isinstance(c, (int, float)) and c >= self.cpu:
            self.cpu_tally.add(c - self.cpu)
            self.cpu = c

    # ---- one submission
    def run(self, event_w: int) -> "WarmProc":
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.sock, [b'{"op": "run"}'], [in_r, out_w, event_w])
        except OSError as exc:
            for fd in (in_r, in_w, out_r, out_w):
                os.close(fd)
            self.broken = True
            raise ZygoteError(f"the warm sandbox does not answer: {exc}") from None
        os.close(in_r)
        os.close(out_w)
        proc = WarmProc(self, os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"))
        try:
            msg = self._read(60)
            if msg.get("ev") != ZygoteReply.FORKED:
                raise ZygoteError(f"unexpected message {msg!r}")
            for _ in range(500):
                kids = children(self.pid)
                if kids:
                    proc.pid = kids[0]
                    break
                time.sleep(0.002)
        except (ZygoteError, subprocess.TimeoutExpired, ValueError) as exc:
            proc.stdin.close()
            proc.stdout.close()
            self.broken = True
            raise ZygoteError(str(exc)) from None
        return proc   # pid None: it ended already (its exit arrives as usual); never -1 or 0 (kill semantics)


class WarmProc:
    """The submission's process in a warm sandbox, with the part of :class:`subprocess.Popen` that
    :class:`autograder.session.Session` uses."""

    def __init__(self, zygote: Zygote, stdin, stdout):
        self.zygote = zygote
        self.stdin, self.stdout = stdin, stdout
        self.pid = None
        self.returncode = None
        self._timed_out = False

    def poll(self):
        if self.returncode is None and not self.zygote.broken:
            try:
                self.wait(0)
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None):
        if self.returncode is not None:
            return self.returncode
        try:
            msg = self.zygote._read(3600 if timeout is None else timeout)
        except subprocess.TimeoutExpired:
            if timeout and timeout >= 10:
                self._timed_out = True
            raise
        except (ZygoteError, ValueError):
            self.returncode = -signal.SIGKILL
            return self.returncode
        self.zygote._add_cpu(msg)
        self.returncode = msg.get("rc", -signal.SIGKILL) if msg.get("ev") == ZygoteReply.EXIT else -signal.SIGKILL
        if msg.get("left"):
            self.zygote.broken = True   # could not kill everything: never reuse this sandbox
        return self.returncode

    def kill(self):
        if self._timed_out:   # the zygote itself does not answer: the whole warm sandbox goes
            self.zygote.close()
            self.returncode = -signal.SIGKILL
            return
        if self.pid is not None and self.pid > 0 and self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


class WarmPool:
    """The zygotes of one jail, one per worker slot, started on first use; a submission whose slot has no working
    zygote starts cold."""

    def __init__(self, jail: Jail, cpu):
        self.jail = jail
        self.cpu_tally = cpu
        self.zygotes: dict = {}
        self.lock = threading.Lock()
        self.failures = 0

    def zygote(self, slot: int, disk_bytes: int) -> Zygote | None:
        with self.lock:
            z = self.zygotes.get(slot)
        if z is not None and (not z.alive() or z.disk_bytes != disk_bytes):
            z.close()
            z = None
        if z is None:
            if self.failures >= 3:
                return None     # warm sandboxes do not work here: cold runs only
            z = Zygote(self.jail, disk_bytes, self.cpu_tally)
            try:
                z.start()
            except (ZygoteError, OSError, subprocess.TimeoutExpired, ValueError) as exc:
                self.failures += 1
                log.warning("warm sandbox for slot %d failed to start (%s); this submission runs cold", slot, exc)
                z.close()
                return None
            with self.lock:
                self.zygotes[slot] = z
        return z

    def start(self, *, slot: int, disk_bytes: int, event_w: int) -> Started:
        """Start a submission's driver in the slot's zygote (a fork), else cold."""
        zygote = self.zygote(slot, disk_bytes)
        if zygote is not None:
            t0 = time.monotonic()
            try:
                return Started(zygote.run(event_w), EVENT_FD, HOME, t0=t0)
            except ZygoteError as exc:
                log.warning("warm sandbox of slot %d failed (%s); this submission runs cold", slot, exc)
                zygote.close()
        return self.jail.start(slot=slot, disk_bytes=disk_bytes, event_w=event_w)

    def retire(self, slot: int) -> None:
        """Stop the slot's zygote: its next submission gets a new warm sandbox (new namespaces: IPC objects, POSIX
        message queues included, die with the old one). Used after a submission that had no private namespaces."""
        with self.lock:
            z = self.zygotes.pop(slot, None)
        if z is not None:
            z.close()

    def close(self) -> None:
        with self.lock:
            zs, self.zygotes = list(self.zygotes.values()), {}
        for z in zs:
            z.close()
