"""What the kernel keeps of a grading user id outside any process -- its keyrings -- emptied after a submission that
ran without namespaces of its own.

A submission normally runs in a user namespace of its own (:mod:`autograder._driver`), whose keyring registers die
with it. Where it does not (the kernel refused one, or ``AUTOGRADER_PRIVATE_NAMESPACES=0``), the keys its code adds
stay in the user, user-session and persistent keyrings of its user id in the grader's own user namespace: a channel to
the next submission of the same worker slot, and something left on the machine after the batch. The driver empties
them before the student's code runs, and says so in its ready event (:func:`ran_without_namespaces`); :func:`empty`
empties them again once the submission has ended, in a short-lived child that takes the user id (the kernel lets no
other user reach them).
"""
from __future__ import annotations

import ctypes
import os

from ._driver import empty_user_keyrings
from .protocol import NO_PRIVATE_NAMESPACES, Event

_LIBC = ctypes.CDLL(None, use_errno=True)   # loaded before any fork: the child only makes system calls


def ran_without_namespaces(events: list) -> bool:
    """Whether the driver's ready event says the submission had no user namespace of its own (no ready event: the
    driver never got as far as running anything of the student's)."""
    for e in events:
        if e.get("ev") == Event.READY:
            notes = e.get("notes") if isinstance(e.get("notes"), list) else []
            return any(isinstance(n, str) and n.startswith(NO_PRIVATE_NAMESPACES) for n in notes)
    return False


def empty(uid: int) -> bool:
    """Empty and invalidate ``uid``'s keyrings (the grader is root: a user id of the submission's own, which
    :meth:`autograder.jail.Jail.uid` gives only then); whether the child did it."""
    pid = os.fork()
    if pid == 0:   # the child: the user id, one system call per keyring, nothing else
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            empty_user_keyrings(_LIBC)
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        except InterruptedError:
            continue
        except ChildProcessError:
            return False
