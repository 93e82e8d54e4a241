"""Late submissions: a penalty policy (``--late-penalty``), the due date (``--due``), and what each student is
charged, from the submission times the LMS download or nbgrader's folders keep.

Policy syntax (one argument, no spaces needed): ``RATE/UNIT[,max=CAP][,grace=DURATION]``

- ``RATE``: ``10%`` (of the assignment's maximum score) or ``2pt`` (points); ``UNIT``: ``day`` or ``hour``;
- every unit begun counts in full: 1 minute late is 1 day late for ``/day`` (the usual LMS rule);
- ``max=CAP``: the most a submission loses (``50%`` or ``5pt``); without it, down to a score of 0;
- ``grace=DURATION``: lateness below it is forgiven (``15m``, ``2h``, ``1d``); above it, lateness counts from
  the due date.

Examples: ``10%/day,max=50%``, ``2%/hour,max=40%,grace=15m``, ``1pt/day``. The penalty never makes a score
negative and is never applied to a submission whose status is ``missing`` or ``invalid``.

Where the submission time comes from, by ``--lms``:

- ``nbgrader``: ``timestamp.txt`` (written by ``nbgrader submit``/``collect``) or the timestamp in a
  ``zip_collect`` name; timezone-aware when nbgrader wrote one;
- ``moodle``: the archive member's modification time, which Moodle takes from the stored file (the upload):
  in the Moodle server's local time, so ``--due`` should be given in that zone (or with its offset);
- ``canvas``: Canvas's *Download Submissions* archive carries NO submission time (its entries are dated when
  the archive is made: ``ContentZipper`` writes each with ``get_output_stream``), only the ``LATE`` mark in the
  name. A LATE submission is charged one unit (it is at least one begun unit late), and the report says the
  lateness is unknown. For exact penalties use Canvas's own late policy (Course settings), which applies
  when the imported grade is saved, and leave ``--late-penalty`` out.

``--due`` takes ISO 8601 (``2026-03-01T23:59``, ``2026-03-01 23:59:00+01:00``); without an offset it is
compared with the submission times as they are written (naive with naive; an aware time is taken in UTC).
Without ``--due``, the gradebook's due date of the assignment is used (``nbgrader db assignment add
--duedate``), when it has one.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone

_POLICY = re.compile(r"^\s*(?P<rate>\d+(?:\.\d+)?)\s*(?P<kind>%|pt)\s*/\s*(?P<unit>day|hour)s?\s*(?P<rest>(?:,.*)?)$",
                     re.IGNORECASE)
_AMOUNT = re.compile(r"^\s*(?P<v>\d+(?:\.\d+)?)\s*(?P<kind>%|pt)\s*$", re.IGNORECASE)
_DURATION = re.compile(r"^\s*(?P<v>\d+(?:\.\d+)?)\s*(?P<u>m|min|h|d)\s*$", re.IGNORECASE)
UNIT_SECONDS = {"day": 86400, "hour": 3600}


class LateError(ValueError):
    """A late policy or due date that cannot be read (the message says how to write it)."""


@dataclass(frozen=True)
class Policy:
    rate: float          # per unit begun
    percent: bool        # rate and cap in % of the maximum score (else points)
    unit: str            # day | hour
    cap: float | None = None
    cap_percent: bool = True
    grace: float = 0.0   # seconds

    def describe(self) -> str:
        amount = f"{self.rate:g}{'%' if self.percent else ' point(s)'}"
        text = f"{amount} per {self.unit} or part of one"
        if self.cap is not None:
            text += f", at most {self.cap:g}{'%' if self.cap_percent else ' point(s)'}"
        if self.grace:
            text += f", {self.grace / 60:g} minute(s) of grace"
        return text

    def units(self, late_seconds: float) -> int:
        if late_seconds <= self.grace:
            return 0
        return math.ceil(late_seconds / UNIT_SECONDS[self.unit])

    def penalty(self, units: int, score: float, max_score: float) -> float:
        if units <= 0:
            return 0.0
        p = units * (self.rate * max_score / 100 if self.percent else self.rate)
        if self.cap is not None:
            p = min(p, self.cap * max_score / 100 if self.cap_percent else self.cap)
        return round(min(p, max(score, 0.0)), 6)


def parse_policy(text: str) -> Policy:
    m = _POLICY.match(text or "")
    if not m:
        raise LateError(f"--late-penalty {text!r}: write RATE/UNIT[,max=CAP][,grace=DURATION], e.g. "
                        "'10%/day,max=50%' or '2pt/hour,grace=15m'")
    cap = grace = None
    cap_percent = True
    for part in filter(None, (p.strip() for p in m.group("rest").split(","))):
        key, _, value = part.partition("=")
        key = key.strip().lower()
        if key == "max" and _AMOUNT.match(value):
            a = _AMOUNT.match(value)
            cap, cap_percent = float(a.group("v")), a.group("kind") == "%"
        elif key == "grace" and _DURATION.match(value):
            d = _DURATION.match(value)
            grace = float(d.group("v")) * {"m": 60, "min": 60, "h": 3600, "d": 86400}[d.group("u").lower()]
        else:
            raise LateError(f"--late-penalty: cannot read {part!r}; options are max=50% (or max=5pt) and "
                            "grace=15m (m, h or d)")
    return Policy(float(m.group("rate")), m.group("kind") == "%", m.group("unit").lower(), cap, cap_percent,
                  grace or 0.0)


def parse_time(text: str | None) -> datetime | None:
    """A submission time or due date as nbgrader, the LMS readers or the instructor write it; None if absent or
    unreadable."""
    if not text:
        return None
    s = str(text).strip()
    utc = s.endswith(" UTC") or s.endswith("Z")
    s = s[:-4] if s.endswith(" UTC") else s[:-1] if s.endswith("Z") else s
    try:
        t = datetime.fromisoformat(s.replace("T", " ", 1) if "T" in s else s)
    except ValueError:
        try:   # what nbgrader itself accepts in timestamp.txt (dateutil: "2026-03-01 10:00:00 PST", ...)
            from nbgrader.utils import parse_utc

            return parse_utc(str(text).strip())
        except Exception:  # noqa: BLE001 - unreadable: the caller says so
            return None
    if utc and t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t


def parse_due(text: str) -> datetime:
    t = parse_time(text)
    if t is None:
        raise LateError(f"--due {text!r}: write an ISO 8601 date and time, e.g. 2026-03-01T23:59 or "
                        "'2026-03-01 23:59+01:00'")
    return t


def _lateness(submitted: datetime, due: datetime) -> float:
    if (submitted.tzinfo is None) != (due.tzinfo is None):   # one aware, one naive: compare in UTC
        submitted = submitted if submitted.tzinfo else submitted.replace(tzinfo=timezone.utc)
        due = due if due.tzinfo else due.replace(tzinfo=timezone.utc)
    return (submitted - due).total_seconds()


@dataclass
class Charge:
    """What one student is charged."""

    submitted_at: str = ""      # as the input kept it ('' when unknown)
    late_seconds: float | None = None   # None: not known (Canvas) or not late
    late: bool = False
    units: int = 0
    penalty: float = 0.0
    note: str = ""

    @property
    def late_by(self) -> str:
        if not self.late:
            return ""
        if self.late_seconds is None:
            return "late (time unknown)"
        return _human(self.late_seconds)


def _human(seconds: float) -> str:
    d, rest = divmod(int(seconds), 86400)
    h, rest = divmod(rest, 3600)
    m = rest // 60
    return " ".join(f"{v}{u}" for v, u in ((d, "d"), (h, "h"), (m, "min")) if v) or f"{int(seconds)} s"


def charge(policy: Policy | None, due: datetime | None, *, timestamp: str | None, marked_late: bool, lms: str,
           status: str, score: float, max_score: float) -> Charge:
    """The charge for one student (``marked_late``: the LMS said LATE, as Canvas does in file names)."""
    c = Charge(submitted_at=timestamp or "")
    if status in ("missing", "invalid"):
        return c
    when = None if lms == "canvas" else parse_time(timestamp)   # Canvas's archive dates are the download's
    if timestamp and when is None and lms != "canvas":
        c.note = f"submission time {timestamp!r} unreadable: not checked"
    if when is not None and due is not None:
        secs = _lateness(when, due)
        if secs > 0:
            c.late, c.late_seconds = True, secs
    if marked_late and not c.late:
        c.late, c.late_seconds = True, None
        c.note = "marked LATE by the LMS; its download does not say how late: charged as one unit"
    if c.late and policy is not None:
        c.units = policy.units(c.late_seconds) if c.late_seconds is not None else 1
        c.penalty = policy.penalty(c.units, score, max_score)
    return c


def due_from_gradebook(db_url: str, assignment: str) -> datetime | None:
    """The assignment's due date in the nbgrader gradebook (UTC), or None."""
    try:
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(db_url) as gb:
            try:
                due = gb.find_assignment(assignment).duedate
            except MissingEntry:
                return None
    except Exception:  # noqa: BLE001 - no gradebook to read: no default due date
        return None
    return due.replace(tzinfo=timezone.utc) if due is not None and due.tzinfo is None else due
