"""Grade ONE student's submission, and the pool of sandbox slots that gradings share.

:func:`grade_submission` is what every way of running the grader calls: the local mode's threads
(:func:`grade_locally`, chosen by the grade command without ``--queue``) and the queue mode's workers
(:class:`autograder.distributed.Worker`); both take a slot from a :class:`Slots` pool for each grading (a slot is a
warm sandbox, and as root a user id). It writes nothing and never raises for a problem of the submission (a grader
bug becomes a ``crashed`` record).
"""
from __future__ import annotations

import logging
import queue
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import feedback
from .assignment import AssignmentGrader
from .protocol import Status
from .records import make_record
from .submissions import Submission

log = logging.getLogger("autograder")


@dataclass
class Graded:
    """What grading one submission produces: the durable record, and the feedback pages (HTML by notebook
    file name), which never hold hidden test code or anything made after a hidden test ran."""

    record: dict
    pages: dict = field(default_factory=dict)


def grade_submission(grader: AssignmentGrader, sub: Submission, content_hash: str, *, slot: int = 0) -> Graded:
    """Grade ONE student's submission in sandbox slot ``slot``: its record and its feedback pages."""
    start = time.monotonic()
    try:
        if sub.invalid:
            results = grader.invalid_results(sub.invalid)
        else:
            results = grader.grade_files(sub.files, slot=slot)
    except Exception as exc:  # noqa: BLE001 - a grader bug for one submission must not stop the others
        log.exception("%s: internal error while grading", sub.student)
        results = grader.invalid_results(f"internal grader error: {type(exc).__name__}: {exc}", status=Status.CRASHED,
                                         test_reason="not graded")
    rec = make_record(sub.student, grader.assignment, content_hash, results, timestamp=sub.timestamp,
                      seconds=time.monotonic() - start, problems=sub.problems, identified=sub.identified)
    pages = {}
    for r in results:
        try:
            pages[r.name] = feedback.render(student=sub.student, assignment=grader.assignment, result=r,
                                            instructor_notebook=grader.notebooks[r.name].notebook,
                                            status=rec["status"], reason=rec["reason"])
        except Exception:  # noqa: BLE001 - a page that cannot be made must not lose the grade
            log.exception("%s: could not render feedback for %s", sub.student, r.name)
    return Graded(rec, pages)


class Slots:
    """The sandbox slots of one process (0 .. n-1): each grading holds one while it runs."""

    def __init__(self, n: int):
        self._free: queue.Queue = queue.Queue()
        for i in range(n):
            self._free.put(i)

    @contextmanager
    def take(self):
        slot = self._free.get()
        try:
            yield slot
        finally:
            self._free.put(slot)


def grade_locally(grader: AssignmentGrader, todo: list, workers: int):
    """The local mode: ``workers`` threads, each grading one submission at a time in a slot of its own; yields
    ``(student, submission, hash, Graded)`` as submissions finish (``todo``: ``[(student, submission, hash)]``)."""
    slots = Slots(workers)

    def job(sub, h):
        with slots.take() as slot:
            return grade_submission(grader, sub, h, slot=slot)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grader") as pool:
        pending = {pool.submit(job, sub, h): (s, sub, h) for s, sub, h in todo}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    student, sub, h = pending.pop(fut)
                    yield student, sub, h, fut.result()
        except KeyboardInterrupt:
            grader.sandbox.abort()   # before the pool waits for its running jobs
            raise
        finally:
            for f in pending:
                f.cancel()
