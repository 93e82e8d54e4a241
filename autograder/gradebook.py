"""The nbgrader gradebook, written by one object from one thread (no ``database is locked``): the points of an
assignment's autograded cells, the students, and each graded submission's auto scores (flagged when its status is
not ``ok``). The gradebook is whatever nbgrader's ``db_url`` says: sqlite, or PostgreSQL."""
from __future__ import annotations

from .course import AssignmentError, safe_url
from .protocol import Status
from .submissions import valid_student_id


def in_gradebook(rec: dict) -> bool:
    """Rows for something that names no student (an unsafe archive member...) stay out of the gradebook."""
    return rec.get("identified", True) and valid_student_id(rec["student"])


class GradebookWriter:
    """The only object that touches the gradebook; used from the main thread only."""

    def __init__(self, db_url: str):
        from nbgrader.api import Gradebook

        self.db_url = db_url
        self.gb = Gradebook(db_url)

    def close(self):
        self.gb.close()

    def points(self, assignment: str) -> dict:
        """``{notebook file: {grade_id: max score}}`` of the autograded test cells."""
        from nbgrader.api import MissingEntry

        try:
            a = self.gb.find_assignment(assignment)
        except MissingEntry:
            raise AssignmentError(f"assignment {assignment!r} is not in the gradebook ({safe_url(self.db_url)}): "
                                  f"run `nbgrader generate_assignment {assignment}` first") from None
        out = {}
        for nb in a.notebooks:
            manual = {c.name for c in nb.solution_cells}
            out[nb.name + ".ipynb"] = {g.name: float(g.max_score) for g in nb.grade_cells
                                       if g.cell_type == "code" and g.name not in manual}
        return out

    def students(self) -> list:
        return [s.id for s in self.gb.students]

    def stored(self, student: str, assignment: str) -> dict | None:
        from nbgrader.api import MissingEntry

        try:
            sub = self.gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        out = {}
        for nb in sub.notebooks:
            out[nb.name + ".ipynb"] = {g.name: g.auto_score for g in nb.grades}
        return out

    def record(self, rec: dict) -> None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbgrader's API triggers SQLAlchemy 'not in session' warnings
            self._record(rec)

    def _record(self, rec: dict) -> None:
        student, assignment = rec["student"], rec["assignment"]
        try:
            self.gb.update_or_create_student(student)
            kwargs = {}
            if rec.get("timestamp"):
                kwargs["timestamp"] = rec["timestamp"]
            try:
                self.gb.update_or_create_submission(assignment, student, **kwargs)
            except Exception:  # noqa: BLE001 - an unparsable timestamp must not lose the grade
                self.gb.db.rollback()
                self.gb.update_or_create_submission(assignment, student)
            for name, nb in rec["notebooks"].items():
                stem = name[: -len(".ipynb")]
                subnb = self.gb.find_submission_notebook(stem, assignment, student)
                subnb.flagged = nb["status"] != Status.OK
                for gid, t in nb["tests"].items():
                    g = self.gb.find_grade(gid, stem, assignment, student)
                    g.auto_score = t["score"]
            self.gb.db.commit()
        except Exception:
            self.gb.db.rollback()
            raise

    def matches(self, rec: dict) -> bool:
        stored = self.stored(rec["student"], rec["assignment"])
        if stored is None:
            return False
        for name, nb in rec["notebooks"].items():
            have = stored.get(name, {})
            for gid, t in nb["tests"].items():
                if have.get(gid) is None or abs(float(have[gid]) - t["score"]) > 1e-9:
                    return False
        return True
