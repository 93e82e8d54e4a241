"""The grader's side of the conversation with one driver: the setup message, then each cell only when the one before
it has ended (a test cell part by part: a hidden part only once the part before it passed), every event checked
against the message it answers, and the notebook's limits enforced from outside (time per cell and per notebook,
the memory of its process tree, the size of its report channel).

Each message carries a fresh token; an event is accepted only with the token of the message being answered and
only if it fits that message (:class:`Turn`): a check or a test's end only for the test being run, one end per cell.
Everything else is counted as forged (never shown to the student once a hidden part was sent) and, past
:data:`MAX_FORGED_LINES`, stops the sandbox. The event pipe is split into lines in one pass over its bytes.
"""
from __future__ import annotations

import json
import os
import queue
import secrets
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from .jail import Limits, Started
from .proctree import descendants, find_python, memory, signal_name
from .protocol import CellKind, Event, Status

# Report lines that the grader did not ask for (a wrong token, out of turn, garbage) before the sandbox is stopped:
# a flood of them must cost the grader at most this much parsing.
MAX_FORGED_LINES = 1000
_KEPT_OUTPUT = 65536          # bytes of the sandbox's own stdout/stderr kept (for the instructor)
# what of a plan's cell goes into its message (the rest is the grader's)
_MESSAGE_KEYS = ("kind", "code", "code_b64", "filename", "grade_id", "hide")


@dataclass
class Outcome:
    events: list = field(default_factory=list)
    status: Status = Status.OK         # ok | timeout | crashed
    reason: str = ""
    cell_seconds: dict = field(default_factory=dict)
    interrupted: list = field(default_factory=list)   # cell indices interrupted for time
    last_cell: int | None = None
    output: str = ""                   # low-level stdout/stderr of the sandbox (capped)
    forged: int = 0                    # event lines with a wrong token or out of turn (student code writing to the pipe)
    forged_after_hidden: int = 0       # the same, once a hidden part had been sent (never shown to the student)
    wall: float = 0.0
    sent: int = 0                      # cells sent to the sandbox (each only when it was about to run)
    hidden_from: int | None = None     # the cell whose hidden part was the first one sent, if any


class Lines:
    """Complete lines out of a byte stream, in one pass over its bytes (a flood of short lines costs what its size
    costs, never a copy of the rest of the buffer per line)."""

    def __init__(self):
        self.rest = bytearray()

    def feed(self, chunk: bytes) -> list:
        if b"\n" not in chunk:
            self.rest.extend(chunk)
            return []
        lines = (bytes(self.rest) + chunk).split(b"\n") if self.rest else chunk.split(b"\n")
        self.rest = bytearray(lines.pop())
        return lines


class Turn:
    """What the driver may say now: the token of the message it answers, the cell (and test, and part) being run."""

    def __init__(self, token: str):
        self.tok, self.i, self.test = token, None, None
        self.ended = self.ready = self.finished = False
        self.part, self.parts = 0, 1

    def accept(self, ev) -> bool:
        """Whether an event is the answer to the message being run."""
        if ev.get("tok") != self.tok:
            return False
        kind = ev.get("ev")
        if kind == Event.READY:
            ok = not self.ready and self.i is None and not self.finished
            self.ready = True
            return ok
        if kind == Event.DONE:
            return self.finished
        if kind not in (Event.CELL_START, Event.CELL_END, Event.CHECK, Event.TEST_END, Event.PART_END):
            return False
        if self.i is None or self.ended:
            return False
        if kind in (Event.CELL_START, Event.CELL_END, Event.PART_END) and ev.get("i") != self.i:
            return False
        if kind == Event.PART_END:
            if ev.get("part") != self.part or self.part + 1 >= self.parts:
                return False
            self.tok = None   # answered: nothing more may come with this token
            return True
        if kind in (Event.CHECK, Event.TEST_END) and (self.test is None or ev.get("test") != self.test):
            return False
        if kind == Event.CELL_END:
            self.ended = True
        return True


class Session:
    """One run of a plan: ``Session(...).run()`` returns its :class:`Outcome`. ``stop()`` (given) kills the driver and
    everything it started; ``cpu`` (given) adds the CPU time the driver reports for itself."""

    def __init__(self, started: Started, event_r: int, *, cells: list, setup: dict, limits: Limits,
                 cell_limits: list | None, labels: list | None, stop, cpu, t0: float):
        self.started, self.proc, self.event_r = started, started.proc, event_r
        self.cells, self.limits, self.stop, self.cpu, self.t0 = cells, limits, stop, cpu, t0
        self.cell_limits, self.labels = cell_limits or [], labels or []
        self.out = Outcome()
        token = secrets.token_hex(16)
        self.turn = Turn(token)
        self.outbox: queue.Queue = queue.Queue()
        self.outbox.put(json.dumps({**setup, "tok": token}).encode() + b"\n")
        self.current = self.cell_started = self.interrupted_at = None
        self.deadline = t0 + limits.notebook_seconds
        self.driver_pid = None if started.wrapped else self.proc.pid
        self.done = False
        self.killed_for = None         # (status, reason) when the grader stopped the sandbox
        self.received = 0
        self.low_output, self.low_total = bytearray(), 0

    # ------------------------------------------------------------------ the whole run
    def run(self) -> Outcome:
        threads = [threading.Thread(target=self._feed, daemon=True), threading.Thread(target=self._drain, daemon=True)]
        for t in threads:
            t.start()
        sel = selectors.DefaultSelector()
        sel.register(self.event_r, selectors.EVENT_READ)
        try:
            self._converse(sel)
        finally:
            self.outbox.put(None)
            sel.close()
            os.close(self.event_r)
            self._end_process()
            for t in threads:
                t.join(timeout=5)
        out = self.out
        out.wall = time.monotonic() - self.t0
        out.output = self.low_output.decode("utf-8", "replace")
        if self.low_total > len(self.low_output):
            out.output += f"\n[... {self.low_total - len(self.low_output)} more bytes of output not kept]"
        out.status, out.reason = self._ending()
        return out

    def _converse(self, sel) -> None:
        """Read events and watch the limits until the plan is done, the driver's pipe closes, or it is stopped."""
        lines = Lines()
        next_mem = self.t0 + 1.0
        while True:
            now = time.monotonic()
            for _key, _ in sel.select(timeout=min(self._wait(now, next_mem), 1.0)):
                try:
                    chunk = os.read(self.event_r, 1 << 20)
                except OSError:
                    chunk = b""
                if not chunk or not self._receive(chunk, lines):
                    return
            if self.done:
                return
            now = time.monotonic()
            if not self._within_time(now):
                return
            if now >= next_mem:
                next_mem = now + 0.5
                if not self._within_memory():
                    return

    def _wait(self, now: float, next_mem: float) -> float:
        timeout = max(0.0, min(self.deadline, next_mem) - now)
        if self.current is not None:
            if self.interrupted_at is None:
                timeout = min(timeout, max(0.0, self.cell_started + self._cell_limit() - now))
            else:
                timeout = min(timeout, max(0.0, self.interrupted_at + self.limits.interrupt_grace - now))
        return timeout

    # ------------------------------------------------------------------ the two pipes
    def _feed(self) -> None:
        """Write queued messages to the driver's stdin (a thread: a full pipe must not block the event loop)."""
        stdin = self.proc.stdin
        try:
            while True:
                msg = self.outbox.get()
                if msg is None:
                    break
                stdin.write(msg)
                stdin.flush()
        except (OSError, ValueError):
            pass
        try:
            stdin.close()
        except (OSError, ValueError):
            pass

    def _drain(self) -> None:
        """Keep the first bytes of the sandbox's own stdout and stderr; count the rest."""
        while True:
            try:
                chunk = self.proc.stdout.read1(65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            self.low_total += len(chunk)
            if len(self.low_output) < _KEPT_OUTPUT:
                self.low_output.extend(chunk[: _KEPT_OUTPUT - len(self.low_output)])

    # ------------------------------------------------------------------ events
    def _receive(self, chunk: bytes, lines: Lines) -> bool:
        """Take a chunk of the event pipe; False once the sandbox was stopped for what it sent."""
        self.received += len(chunk)
        if self.received > self.limits.event_bytes:
            return self._kill(Status.CRASHED, f"the notebook reported more data than allowed "
                                              f"({self.limits.event_bytes >> 20} MiB)")
        for line in lines.feed(chunk):
            ev = None
            if line:
                try:
                    ev = json.loads(line)
                except (ValueError, RecursionError):
                    ev = None
            if not isinstance(ev, dict) or not self.turn.accept(ev):
                if not self._forged():
                    return False
                continue
            ev.pop("tok", None)
            self.out.events.append(ev)
            self._answered(ev)
        return True

    def _forged(self) -> bool:
        """Count a line the grader did not ask for; False once there are too many (the sandbox is stopped)."""
        out = self.out
        if out.hidden_from is None:
            out.forged += 1
        else:   # chosen by code that may have read a hidden test: never shown to the student
            out.forged_after_hidden += 1
        if out.forged + out.forged_after_hidden > MAX_FORGED_LINES:
            return self._kill(Status.CRASHED, f"the notebook wrote more than {MAX_FORGED_LINES} lines that the "
                                              "grader did not ask for into its report channel")
        return True

    def _answered(self, ev: dict) -> None:
        """What an accepted event sets going: the next cell or part, the end of a cell, the end of the plan."""
        kind = ev.get("ev")
        if kind == Event.READY:
            if self.driver_pid is None:
                self.driver_pid = find_python(self.proc.pid)
            self._send_next()
        elif kind == Event.PART_END:
            self._send_next(self.turn.part + 1)
        elif kind == Event.CELL_END:
            self.out.cell_seconds[ev["i"]] = time.monotonic() - (self.cell_started or self.t0)
            self.current, self.interrupted_at = None, None
            self._send_next()
        elif kind == Event.DONE:
            self.done = True
            if isinstance(ev.get("cpu"), (int, float)) and 0 <= ev["cpu"] < 1e6:
                self.cpu.add(ev["cpu"])

    def _send_next(self, part: int = 0) -> None:
        """Send the next cell (or, with ``part``, the next part of the current test cell; or the end of the
        plan) with a fresh token. A cell's time starts when its first part is sent."""
        out, turn = self.out, self.turn
        tok = secrets.token_hex(16)
        turn.tok = tok
        if part:
            i = turn.i
        elif out.sent < len(self.cells):
            i = out.sent
            out.sent += 1
            self.current, self.cell_started, self.interrupted_at = i, time.monotonic(), None
            out.last_cell = i
        else:
            self.outbox.put(json.dumps({"end": True, "tok": tok}).encode() + b"\n")
            turn.i, turn.test, turn.ended, turn.finished = None, None, True, True
            return
        c = self.cells[i]
        msg = {k: v for k, v in c.items() if k in _MESSAGE_KEYS}
        parts = c.get("parts")
        if parts:
            msg.update(parts[part])
            msg.update(part=part, last=part == len(parts) - 1)
            if parts[part].get("hidden") and out.hidden_from is None:
                out.hidden_from = i
        msg.update(i=i, tok=tok)
        turn.i, turn.test, turn.ended = i, c.get("grade_id") if c.get("kind") == CellKind.TEST else None, False
        turn.part, turn.parts = part, len(parts) if parts else 1
        self.outbox.put(json.dumps(msg).encode() + b"\n")

    # ------------------------------------------------------------------ limits
    def _name(self, i) -> str:
        return self.labels[i] if isinstance(i, int) and 0 <= i < len(self.labels) else f"cell {i}"

    def _cell_limit(self) -> float:
        i = self.current
        return self.cell_limits[i] if i < len(self.cell_limits) else self.limits.cell_seconds

    def _within_time(self, now: float) -> bool:
        """Stop the notebook past its limit; interrupt a cell past its own (SIGINT, like Jupyter), and stop the
        notebook if it does not end within the grace period."""
        if now >= self.deadline:
            where = f" (during {self._name(self.current)})" if self.current is not None else ""
            return self._kill(Status.TIMEOUT, f"the notebook ran longer than its limit of "
                                              f"{self.limits.notebook_seconds:g} s{where}")
        if self.current is None:
            return True
        lim = self._cell_limit()
        if self.interrupted_at is None and now >= self.cell_started + lim:
            self.out.interrupted.append(self.current)
            self.interrupted_at = now
            if self.driver_pid:
                try:
                    os.kill(self.driver_pid, signal.SIGINT)
                except OSError:
                    pass
        elif self.interrupted_at is not None and now >= self.interrupted_at + self.limits.interrupt_grace:
            return self._kill(Status.TIMEOUT, f"{self._name(self.current)} ran longer than its limit of {lim:g} s "
                                              "and did not stop when interrupted")
        return True

    def _within_memory(self) -> bool:
        pid = self.proc.pid
        tree = descendants(pid) if self.started.wrapped else [pid] + descendants(pid)
        if sum(memory(p) for p in tree) > self.limits.tree_rss_bytes:
            return self._kill(Status.CRASHED, f"the notebook's processes used more than "
                                              f"{self.limits.tree_rss_bytes >> 20} MiB of memory together")
        return True

    def _kill(self, status: Status, reason: str) -> bool:
        self.killed_for = (status, reason)
        self.stop()
        return False

    # ------------------------------------------------------------------ the end
    def _end_process(self) -> None:
        """Let the driver end by itself if it was not stopped (its exit status tells how it ended); then, whatever
        happened, nothing of this submission survives it."""
        proc = self.proc
        if not self.killed_for:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
        self.stop()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()

    def _ending(self) -> tuple:
        """``(status, reason)`` of the run."""
        out = self.out
        if self.killed_for:
            return self.killed_for
        if self.done:
            if not out.interrupted:
                return Status.OK, ""
            return Status.TIMEOUT, ("interrupted after its time limit: " + ", ".join(map(self._name, out.interrupted))
                                    + " (the notebook went on)")
        rc = self.proc.returncode
        how = (f"was killed by signal {-rc} ({signal_name(-rc)})" if rc is not None and rc < 0
               else f"exited with code {rc}")
        if self.started.wrapped and rc is not None and rc > 128:
            how = f"was killed by signal {rc - 128} ({signal_name(rc - 128)})"
        where = f" while running {self._name(out.last_cell)}" if out.last_cell is not None else " before running any cell"
        reason = f"the notebook's process {how}{where}"
        if not out.events:
            tail = out.output.strip().splitlines()[-3:]
            if tail:
                reason += ": " + " | ".join(tail)[:500]
        return Status.CRASHED, reason
