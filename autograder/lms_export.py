"""Grades in the LMS's own import format (``--export canvas|moodle``), keyed by the ids that the LMS's
download named (``--lms canvas|moodle`` reads them; see :mod:`autograder.submissions`).

**Canvas**: the Gradebook's *Import* (Grades, Import) reads a CSV whose header starts with ``Student``, ``ID``,
then optionally ``SIS User ID`` and ``SIS Login ID``, then ``Section``; every later column is an assignment,
named ``Title (assignment id)`` (a title Canvas does not know makes a new assignment). Students are matched by
the ``ID`` column, the Canvas user id, which is the id in Canvas's *Download Submissions* file names; an empty
grade changes nothing. (Canvas's importer, ``lib/gradebook_importer.rb``: ``row_has_student_headers?``,
``update_column_count``, ``process_student``, ``no_score?``; Instructure's guide "How do I import grades in
the Gradebook?", and the export's columns as institutions document them, e.g. "Student, ID, SIS User ID, SIS
Login ID, Section" then "Quiz 1 (87568490)".) Anonymous ids (``anon_...``) cannot be imported: Canvas matches
only real user ids; those rows are left out and listed. ``--export-column`` names the assignment column
(default: the assignment's name; give ``"Chapter 2 (12345)"`` to hit an existing Canvas assignment by id).

**Moodle**: the assignment's *Upload grading worksheet* (the offline grading worksheet, feedback type
"Offline grading worksheet" enabled) reads a CSV with the columns ``Identifier`` (``Participant <id>``, the
participant id that *Download all submissions* puts in its folder names), ``Grade`` and ``Last modified
(grade)``; other columns are ignored. (Moodle's ``mod/assign/feedback/offline/importgradeslib.php``: it finds
the columns by the strings ``recordid`` = "Identifier", ``gradenoun`` = "Grade", ``lastmodifiedgrade`` = "Last
modified (grade)", strips "Participant " and maps the id with ``get_user_id_for_uniqueid``.) The grade
column must be in points of the assignment's maximum grade in Moodle; ``Last modified (grade)`` is the export
time, so that the upload is newer than any grade already there. The column names are English, as in a Moodle
site in English.

Students with no submission, or an invalid one (status ``missing`` or ``invalid``), get 0 or an empty grade
(``--missing zero|blank``; an empty grade leaves the LMS's grade as it is). Late penalties, when given, are
already taken off (the final score of grades.csv).
"""
from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timezone
from pathlib import Path

EXPORTS = ("canvas", "moodle")
MISSING = ("zero", "blank")
FILE_NAMES = {"canvas": "canvas-import.csv", "moodle": "moodle-grading-worksheet.csv"}
CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_HEADER = ["Identifier", "Full name", "Grade", "Maximum grade", "Last modified (grade)"]
_CANVAS_ID = re.compile(r"^\d+$")
_MOODLE_ID = re.compile(r"^\d+$")


class ExportError(ValueError):
    """The export cannot be made as asked (one line for the terminal)."""


def _grade(value: float | None) -> str:
    return "" if value is None else f"{round(value, 4):g}"


def _text(s: str) -> str:
    from .records import spreadsheet_safe   # names come from the LMS download: keep them from being formulas

    return spreadsheet_safe(s)


def write(lms: str, path: Path, grades: dict, *, names: dict | None = None, column: str = "",
          max_score: float = 0.0, now: datetime | None = None) -> tuple[Path, list]:
    """Write the import file; ``grades``: ``{student id: final score, or None for an empty grade}``. Returns
    ``(path, [(student, why it was left out)])``."""
    if lms not in EXPORTS:
        raise ExportError(f"unknown --export {lms!r} (one of {', '.join(EXPORTS)})")
    names = names or {}
    left_out = []
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if lms == "canvas":
        w.writerow(CANVAS_HEADER + [column])
        for s in sorted(grades, key=lambda x: (len(x), x)):
            if not _CANVAS_ID.match(s):
                left_out.append((s, "not a Canvas user id (anonymous grading, or not from a Canvas download)"))
                continue
            w.writerow([_text(names.get(s, "")), s, "", "", "", _grade(grades[s])])
    else:
        stamp = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S UTC")
        w.writerow(MOODLE_HEADER)
        for s in sorted(grades, key=lambda x: (len(x), x)):
            if not _MOODLE_ID.match(s):
                left_out.append((s, "not a Moodle participant id (not from a Moodle download)"))
                continue
            w.writerow([f"Participant {s}", _text(names.get(s, "")), _grade(grades[s]), f"{max_score:g}", stamp])
    path = Path(path)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(path)
    return path, left_out
