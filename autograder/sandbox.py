"""Run one notebook plan in its own sandbox and collect the driver's events: the jail (:mod:`autograder.jail`), started
cold or from a warm sandbox (:mod:`autograder.warm`), the conversation with the driver (:mod:`autograder.session`),
and, whatever happened, every process of the submission killed at the end (:mod:`autograder.proctree`) and, where
it ran without namespaces of its own, its user id's keyrings emptied (:mod:`autograder.userkeys`) and its warm
sandbox retired (the next submission of the slot gets new namespaces).

:class:`Sandbox` is what the rest of the grader uses: built once per grading run (it checks the course package and
chooses the isolation), then ``run()`` once per notebook, from any number of threads, one per worker slot.
"""
from __future__ import annotations

import os
import shutil
import signal
import threading
from pathlib import Path

from .course import Profile
from .jail import Jail, Limits
from .proctree import kill, kill_tree, uid_processes
from .protocol import Status
from . import userkeys
from .session import Outcome, Session
from .warm import WarmPool


class CpuTally:
    """CPU seconds that finished sandboxes reported for themselves (for benchmarks only: bubblewrap's reaper does not
    pass its children's CPU time on to the grader, so the grader's own rusage misses it)."""

    def __init__(self):
        self.seconds = 0.0
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds


REPORTED_CPU = CpuTally()


class Sandbox:
    """Launches :mod:`autograder._driver` for one plan at a time per worker slot (thread-safe)."""

    def __init__(self, mode: str = "auto", *, profile: Profile | None = None, uid_base: int | None = None,
                 cache_dir: Path | None = None, env: dict | None = None, warm: bool = False):
        self.jail = Jail(mode, profile=profile, uid_base=uid_base, cache_dir=cache_dir, env=env)
        self.profile = self.jail.profile
        # warm: one long-lived sandbox per slot imports the libraries once and forks per submission
        self.warm_pool = WarmPool(self.jail, REPORTED_CPU) if warm and self.jail.mode == "bwrap" else None
        self._lock = threading.Lock()
        self._running: set = set()
        self.aborted = False

    @property
    def mode(self) -> str:
        return self.jail.mode

    @property
    def warnings(self) -> list:
        return self.jail.warnings

    def close(self) -> None:
        """Stop the warm sandboxes (if any)."""
        if self.warm_pool is not None:
            self.warm_pool.close()

    def abort(self) -> None:
        """Kill every running sandbox (Ctrl-C): their results are discarded by the caller."""
        self.aborted = True
        with self._lock:
            procs = list(self._running)
        for proc in procs:
            self._stop(proc)

    def _stop(self, proc, uid: int | None = None) -> None:
        """Kill a driver and everything it started: its process tree, its session (no bubblewrap), and every process
        of its user id (no bubblewrap: nothing else keeps a detached process in)."""
        kill_tree(proc.pid)
        try:
            if self.jail.mode == "none":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        except OSError:
            pass
        if self.jail.mode == "none" and uid is not None:
            kill(uid_processes(uid))

    def run(self, cells: list, *, files: dict, workdir_name: str, limits: Limits, slot: int = 0,
            recorder_placeholder: str, builtins_placeholder: str, cell_limits: list | None = None,
            labels: list | None = None) -> Outcome:
        """Execute ``cells`` (dicts for the driver) and return the events and how it ended.

        The driver gets a setup message first, then each cell only when the previous one has ended: no cell's
        code (a hidden test's least of all) is in the sandbox before its turn (see :mod:`autograder.session`).
        """
        event_r, event_w = os.pipe()
        try:
            started = (self.warm_pool or self.jail).start(slot=slot, disk_bytes=limits.disk_bytes, event_w=event_w)
        except OSError as exc:
            os.close(event_r)
            os.close(event_w)
            return Outcome(status=Status.CRASHED, reason=f"the sandbox could not start: {exc}")
        os.close(event_w)
        proc = started.proc
        with self._lock:
            self._running.add(proc)
        setup = self.jail.setup(started, slot=slot, workdir_name=workdir_name, files=files, limits=limits)
        setup.update(recorder_placeholder=recorder_placeholder, builtins_placeholder=builtins_placeholder)
        uid = self.jail.uid(slot)
        out = None
        try:
            out = Session(started, event_r, cells=cells, setup=setup, limits=limits, cell_limits=cell_limits,
                          labels=labels, stop=lambda: self._stop(proc, uid), cpu=REPORTED_CPU,
                          t0=started.t0).run()
            return out
        finally:
            with self._lock:
                self._running.discard(proc)
            if started.tmp_home:
                shutil.rmtree(started.tmp_home, ignore_errors=True)
            # no private namespaces (or nothing says how it ran): what the driver could not make private goes --
            # the user id's keyrings, and (an IPC namespace) the whole warm sandbox
            if out is None or userkeys.ran_without_namespaces(out.events):
                if uid is not None:   # the submission's own user id (None: the grader's, never touched)
                    userkeys.empty(uid)
                if self.warm_pool is not None:
                    self.warm_pool.retire(slot)
