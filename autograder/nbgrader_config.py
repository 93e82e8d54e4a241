"""nbgrader configuration for this course.

Run nbgrader's commands from this folder (``cd autograder``); the course root is the repository:

- ``solutions/<assignment>/``  is nbgrader's *source* folder (solutions and hidden tests, instructors only);
- ``exercises/<assignment>/``  is its *release* folder (the student notebooks, committed, generated);
- ``submitted/``, ``autograded/``, ``feedback/`` and ``gradebook.db`` (sqlite) are created at the repository
  root by ``collect``/``zip_collect``/``autograde``/``generate_feedback`` and are never committed.
"""
import os

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
c.CourseDirectory.course_id = "seqcourse"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"

# Grading: per-cell limit (nbgrader has none per notebook); graded training cells take seconds on a laptop.
c.Execute.timeout = 240
c.Execute.startup_timeout = 120

# The class grader (`python -m autograder grade`): what it must know about this course's code (see autograder/course.py;
# another course sets its own here, or in the config it passes with --config).
c.Autograder.packages = ["seqcourse"]                          # mounted in the sandbox, preloaded, protected, trusted
c.Autograder.checker_prefixes = ["seqcourse.checks.assert_"]   # the course's checking functions (reported, judged)
c.Autograder.reference_marker = "seqcourse.checks.reference"   # `with reference():` holds a hidden part's expected values
c.Autograder.env = {"SEQCOURSE_PROGRESS": "0"}                 # no progress bars in graded runs
