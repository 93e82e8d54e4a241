"""The durable result of grading: one *record* per submission (a line of ``state.jsonl``, the instructor's full
account), the append-only store of records that makes a grading run resumable, and ``grades.csv`` (what may be
handed to students, spreadsheet-safe).

A record's ``reason`` fields are what the student may see; its ``detail`` fields are the judge's full reasons, for
the instructor only. ``hidden_from`` (per notebook) is the label of the first cell whose hidden part was sent to the
sandbox (records written before this name existed carry it under the same key).
"""
from __future__ import annotations

import csv
import io
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from .protocol import Status, worst

GRADER_VERSION = "2"


# ---------------------------------------------------------------------------------------------- records
def make_record(student: str, assignment: str, content_hash: str, results: list, *, timestamp, seconds,
                problems: list, identified: bool = True) -> dict:
    """The durable result of one submission (a line of state.jsonl). ``reason`` fields are what the student
    may see; ``detail`` fields (tests) are the judge's full reasons, for the instructor only."""
    status = worst(r.status for r in results)
    score = sum(r.score for r in results)
    max_score = sum(r.max_score for r in results)
    return {"student": student, "assignment": assignment, "hash": content_hash, "status": status,
            "reason": summarize(results, problems), "score": round(score, 6), "max_score": round(max_score, 6),
            "timestamp": timestamp, "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(seconds, 2), "grader": GRADER_VERSION, "identified": identified,
            "notebooks": {r.name: {"status": r.status, "reason": r.reason, "detail": r.detail,
                                   "notes": r.notes,
                                   "submitted_as": r.submitted_as, "seconds": round(r.seconds, 2),
                                   "hidden_from": r.hidden_from,
                                   "tests": {gid: {"score": t.score, "max_score": t.max_score, "passed": t.passed,
                                                   "reason": t.reason, "hidden": t.hidden,
                                                   "detail": t.detail}
                                             for gid, t in r.tests.items()}}
                          for r in results}}


def summarize(results: list, problems: list | None = None) -> str:
    """The record's ``reason``: what was refused, each notebook's reason and notes, the failed tests (what the
    student may see: every part of it already is)."""
    parts = list(problems or [])
    for r in results:
        if r.reason:
            parts.append(r.reason)
        parts.extend(r.notes)
    for r in results:
        if r.status in (Status.MISSING, Status.INVALID):
            continue
        failed = [f"{gid} ({t.reason.splitlines()[0][:120] if t.reason else 'failed'})"
                  for gid, t in r.tests.items() if not t.passed]
        if failed:
            parts.append("failed: " + "; ".join(failed))
    text = " | ".join(p for p in parts if p)
    return text if len(text) <= 1500 else text[:1497] + "..."



# ---------------------------------------------------------------------------------------------- state.jsonl
class StateStore:
    """Append-only JSON lines; the last line for a student wins; a torn last line is ignored."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.records: dict = {}
        if self.path.exists():
            with open(self.path, "rb") as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(rec, dict) and "student" in rec:
                        self.records[rec["student"]] = rec
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "ab")
        if self._f.tell() and not self.path.read_bytes().endswith(b"\n"):
            self._f.write(b"\n")  # end a line torn by a kill, so the next record starts on its own line

    def append(self, rec: dict) -> None:
        self._f.write(json.dumps(rec, sort_keys=True).encode() + b"\n")
        self._f.flush()
        os.fsync(self._f.fileno())
        self.records[rec["student"]] = rec

    def close(self):
        self._f.close()



# ---------------------------------------------------------------------------------------------- grades.csv
CSV_FIELDS = ["student", "assignment", "score", "max_score", "status", "reason"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value) -> str:
    """A CSV cell that no spreadsheet runs as a formula: text that begins with = + - @, a tab or a carriage
    return gets a leading apostrophe (OWASP's advice for CSV injection); line breaks inside become spaces (one
    row per line, whatever reads the file)."""
    s = str(value)
    s = "'" + s if s.startswith(FORMULA_START) else s
    return s.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def write_csv(path: Path, rows: list) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in sorted(rows, key=lambda r: r["student"]):
        w.writerow({**{k: spreadsheet_safe(r.get(k, "")) for k in ("student", "assignment", "status", "reason")},
                    "score": f"{r['score']:g}", "max_score": f"{r['max_score']:g}"})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(buf.getvalue())
    tmp.replace(path)
