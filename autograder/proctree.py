"""Process trees as the grader sees them in ``/proc``: a process's children and descendants, their memory, killing a
whole tree, the processes of a user id, and the Python process (the driver or a warm sandbox's server) under a
sandbox's bubblewrap. Linux only; every function tolerates processes that end while it looks."""
from __future__ import annotations

import os
import signal
import sys


def children(pid: int) -> list:
    """The direct children of ``pid`` (of all its threads)."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out += [int(x) for x in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return out


def descendants(pid: int) -> list:
    """Every process below ``pid`` (not ``pid`` itself)."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children(p):
            if c not in seen:
                seen.append(c)
                todo.append(c)
    return seen


def memory(pid: int) -> int:
    """Proportional resident memory (PSS: shared pages split between their users, so forked copies of a big
    process are not counted many times), falling back to RSS."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def uid_processes(uid: int) -> list:
    """Every process (in this PID namespace) that belongs to ``uid``."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    out.append(int(d))
            except OSError:
                pass
    return out


def kill(pids) -> None:
    """SIGKILL each of ``pids`` (those already gone are ignored)."""
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def kill_tree(pid: int | None) -> None:
    """SIGKILL every process below ``pid`` (the caller ends ``pid`` itself, the way its kind of process needs)."""
    if pid is not None and pid > 0:
        kill(descendants(pid))


def find_python(root: int) -> int | None:
    """The pid, as seen from here, of the first Python process under ``root`` (the driver, or a warm
    sandbox's server; bubblewrap's own processes carry the same arguments, so the executable decides)."""
    python = os.path.realpath(sys.executable)
    for p in descendants(root):
        try:
            if os.path.realpath(f"/proc/{p}/exe") == python:
                return p
        except OSError:
            pass
    return None


def signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return "?"
