"""What the instructor gets once a class is graded: late penalties in ``grades.csv``, the class report
(:mod:`autograder.report`) and the LMS's import file (:mod:`autograder.lms_export`).

Made from the grader's output only (``state.jsonl``, ``grades.csv``; :mod:`autograder.results`) and, for the
LMS's names and LATE marks, the submissions as :func:`autograder.submissions.collect` reads them. Called once
at the end of every ``grade`` run (local and queue mode), where a failure here is logged and never loses a
grade, and by ``python -m autograder report ASSIGNMENT`` (same options, no grading).

Everything written here stays in the ``--out`` folder beside ``state.jsonl``; the feedback folder is never
touched, and grades.csv gains only the late-penalty columns (``submitted_at, late_by, penalty, final_score``,
only when ``--late-penalty`` is given), nothing from the report or the similarity check.
"""
from __future__ import annotations

import csv
import io
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from . import late as late_mod
from . import lms_export, report
from .feedback import _e
from .results import Run, RunError, load, number

log = logging.getLogger("autograder")
PENALTY_FIELDS = ["submitted_at", "late_by", "penalty", "final_score"]
INPUTS = "graded-from.json"   # what the last grade run read: `report` and `similar` default to it


@dataclass
class Extras:
    """The instructor's options of ``grade`` and ``report``."""

    late_penalty: str | None = None    # e.g. "10%/day,max=50%" (autograder.late)
    due: str | None = None             # ISO 8601; default: the gradebook's due date
    export: str | None = None          # canvas | moodle
    missing: str = "zero"              # zero | blank: the export's grade for missing/invalid submissions
    export_column: str | None = None   # Canvas's assignment column (default: the assignment's name)

    def check(self) -> None:
        """Raise a one-line ValueError for options that cannot work (before any grading starts)."""
        if self.late_penalty:
            late_mod.parse_policy(self.late_penalty)
        if self.due:
            late_mod.parse_due(self.due)
        if self.export and self.export not in lms_export.EXPORTS:
            raise lms_export.ExportError(f"unknown --export {self.export!r} (one of {', '.join(lms_export.EXPORTS)})")
        if self.missing not in lms_export.MISSING:
            raise lms_export.ExportError(f"--missing must be one of {', '.join(lms_export.MISSING)}")


def lms_facts(subs: dict | None) -> tuple[dict, set]:
    """``({student: the LMS's name}, {students the LMS marked late})`` from collected submissions."""
    names, marked = {}, set()
    for s, sub in (subs or {}).items():
        display = (getattr(sub, "display", "") or "").replace(" (late)", "")
        if display:
            names[s] = display
        if getattr(sub, "late", False):
            marked.add(s)
    return names, marked


def charges(run: Run, extras: Extras, *, lms: str, marked_late: set, db_url: str | None = None) -> tuple[dict, str, str]:
    """``({student: late.Charge}, policy text, due text)``; empty when nothing about lateness was asked or
    known."""
    policy = late_mod.parse_policy(extras.late_penalty) if extras.late_penalty else None
    due = late_mod.parse_due(extras.due) if extras.due else None
    if due is None and (policy is not None) and db_url:
        due = late_mod.due_from_gradebook(db_url, run.assignment)
    if policy is None and due is None and not marked_late:
        return {}, "", ""
    if policy is not None and due is None and not marked_late:
        raise late_mod.LateError(f"--late-penalty needs a due date: give --due (the gradebook has none for "
                                 f"{run.assignment})" + ("" if lms != "canvas" else " or grade a Canvas download "
                                                          "whose late files are marked LATE"))
    out = {}
    for r in run.rows:
        s = r.get("student", "")
        rec = run.records.get(s, {})
        out[s] = late_mod.charge(policy, due, timestamp=rec.get("timestamp") or r.get("submitted_at") or None,
                                 marked_late=s in marked_late, lms=lms, status=r.get("status", ""),
                                 score=number(r.get("score")), max_score=number(r.get("max_score")))
    return out, policy.describe() if policy else "", str(due) if due else ""


def write_grades_with_penalty(run: Run, charged: dict) -> Path:
    """grades.csv again, with ``submitted_at, late_by, penalty, final_score`` after the usual columns."""
    from .records import CSV_FIELDS, spreadsheet_safe

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS + PENALTY_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in sorted(run.rows, key=lambda r: r.get("student", "")):
        c = charged.get(r.get("student", ""))
        score = number(r.get("score"))
        penalty = c.penalty if c else 0.0
        r.update(submitted_at=c.submitted_at if c else "", late_by=c.late_by if c else "", penalty=f"{penalty:g}",
                 final_score=f"{round(score - penalty, 6):g}")
        w.writerow({k: spreadsheet_safe(r.get(k, "")) for k in CSV_FIELDS + PENALTY_FIELDS})
    path = run.out / "grades.csv"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(path)
    return path


def produce(run: Run, extras: Extras, *, lms: str = "nbgrader", subs: dict | None = None,
            db_url: str | None = None) -> dict:
    """Late penalties, the export file and the report for a run; returns ``{"report": path, "export": path,
    "left_out": [...], "charges": {...}}``."""
    names, marked = lms_facts(subs)
    charged, policy_text, due_text = charges(run, extras, lms=lms, marked_late=marked, db_url=db_url)
    out: dict = {"charges": charged, "left_out": []}
    if extras.late_penalty:
        write_grades_with_penalty(run, charged)
    note, failed = "", None
    if extras.export:
        try:
            note = _export(run, extras, out, charged, names)
        except lms_export.ExportError as exc:   # the report is still written, and says so
            failed, note = exc, f"LMS import file NOT written: {_e(exc)}"
    out["report"] = report.write(run, charges=charged, policy_text=policy_text, due_text=due_text, names=names,
                                 export_note=note)
    if failed is not None:
        raise failed
    return out


def _export(run: Run, extras: Extras, out: dict, charged: dict, names: dict) -> str:
    """Write the LMS file; the line the report shows about it."""
    grades = {}
    for r in run.rows:
        s = r.get("student", "")
        if r.get("status") in ("missing", "invalid"):
            grades[s] = 0.0 if extras.missing == "zero" else None
        else:
            c = charged.get(s)
            grades[s] = round(number(r.get("score")) - (c.penalty if c else 0.0), 6)
    path = run.out / lms_export.FILE_NAMES[extras.export]
    out["export"], out["left_out"] = lms_export.write(extras.export, path, grades, names=names,
                                                      column=extras.export_column or run.assignment,
                                                      max_score=run.max_score)
    if out["left_out"] and len(out["left_out"]) == len(grades):
        path.unlink(missing_ok=True)
        out.pop("export")
        raise lms_export.ExportError(
            f"no student id of {run.assignment} is a {extras.export.capitalize()} id (e.g. "
            f"{out['left_out'][0][0]!r}): --export {extras.export} needs a class graded from a "
            f"{extras.export.capitalize()} download (--lms {extras.export})")
    note = (f"LMS import file: <code>{_e(path.name)}</code> ({len(grades) - len(out['left_out'])} "
            f"rows for {extras.export.capitalize()}, missing/invalid as {extras.missing})")
    if out["left_out"]:
        note += "; left out: " + ", ".join(f"{_e(s)} ({_e(why)})" for s, why in out["left_out"][:10])
    return note


def save_inputs(out: Path, opts) -> None:
    """Remember where the grade run read its submissions and how (``--lms``): ``report`` then needs neither (a
    Canvas download's dates are not submission times, so reading it as nbgrader's would charge everyone late)."""
    data = {"assignment": opts.assignment, "submissions": str(Path(opts.submissions).resolve()), "lms": opts.lms,
            "zip_regexp": opts.zip_regexp}
    (Path(out) / INPUTS).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def saved_inputs(out: Path, assignment: str) -> dict:
    """What :func:`save_inputs` wrote for ``assignment``, or ``{}``."""
    try:
        data = json.loads((Path(out) / INPUTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("assignment") == assignment else {}


def after_grading(opts, course, out: Path, subs: dict) -> None:
    """The grade command's last step (``autograder.grade_command``): never raises, so no grade is ever lost here."""
    extras = getattr(opts, "extras", None) or Extras()
    try:
        save_inputs(out, opts)
        run = load(out, opts.assignment)
        try:
            made = produce(run, extras, lms=opts.lms, subs=subs, db_url=course.db_url)
        except lms_export.ExportError as exc:   # the report is written; the grades stand
            log.warning("LMS import file NOT written: %s", exc)
            print(f"WARNING: LMS import file NOT written: {exc}", file=sys.stderr)
            return
        except late_mod.LateError as exc:   # e.g. no due date anywhere: the grades stand, without a penalty
            warning = f"late penalty NOT applied: {exc}; grades.csv has no penalty; run `python -m autograder report`"
            log.warning(warning)
            print(f"WARNING: {warning}", file=sys.stderr)
            made = produce(run, Extras(export=extras.export, missing=extras.missing,
                                       export_column=extras.export_column), lms=opts.lms, subs=subs)
        log.info("class report: %s%s", made["report"], f"; LMS import file: {made['export']}" if made.get("export") else "")
    except RunError as exc:
        log.info("no class report: %s", exc)
    except Exception as exc:  # noqa: BLE001 - the grades are saved; the instructor can run `report` again
        log.exception("the class report could not be written (%s); grades are saved; run `python -m autograder "
                      "report %s` to retry", exc, opts.assignment)
