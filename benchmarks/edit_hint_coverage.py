"""How many of the student trials' mistakes get an edit hint, and what their first visible message says with and
without the hints.

The mistakes of trials 22, 22b, 22c and 22d (benchmarks/student_trial*.py; each one edit of a reference solution
cell, written by people who had not seen the hints, which did not exist then) run in-process: the student notebook
with the reference solution except the edited cell, from that cell until the first test cell that fails (its first
line is what Jupyter shows), once with the hints of seqcourse/hint_data/ and once without them.

    nice -n 5 .venv/bin/python benchmarks/edit_hint_coverage.py [ch01 ...] > benchmarks/results/edit_hint_coverage.txt

Result on 1834d1d (all nine): of the 191 earlier trial mistakes, 22 first messages now name an edit; the other
first messages are unchanged (the hand-named causes, which come first, were written for those mistakes).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ["SEQCOURSE_PROGRESS"] = "0"

from autograder.edit_hints import _cells, restore_snapshot, run_quietly, snapshot  # noqa: E402

TRIALS = ("student_trial", "student_trial_22b", "student_trial_22c", "student_trial_22d")


def cases(assignments, trials=TRIALS):
    out = []
    for name in trials:
        module = importlib.import_module(name)
        for case in module.M:
            if case.assignment in assignments:
                out.append((name.replace("student_trial", "22").replace("22_", ""), case))
    return out


def first_failure(shell, cells, start: int) -> tuple[str, str]:
    """(grade id, first line of the error) of the first test cell or other cell that fails from ``start`` on."""
    from seqcourse.checks import brief_error

    for src, role, gid in cells[start:]:
        result = run_quietly(shell, src)
        if not result.success:
            err = result.error_in_exec or result.error_before_exec
            if isinstance(err, AssertionError):
                return gid or "?", f"{type(err).__name__}: {err}".splitlines()[0]
            return gid or "?", brief_error(err, err.__traceback__, shell)      # what explain_errors shows
    return "", ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", default=[f"ch0{i}" for i in range(1, 10)])
    parser.add_argument("--trials", default=",".join(TRIALS), help="the trial scripts whose mistakes run "
                        "(default: those written before the hints existed)")
    args = parser.parse_args(argv)
    from IPython.core.interactiveshell import InteractiveShell

    import seqcourse.checks as checks
    import student_trial as st

    shell = InteractiveShell.instance()
    real_hint = checks._edit_hint
    totals = {"mistakes": 0, "first message names an edit": 0, "first message changed": 0}
    here = os.getcwd()
    for assignment in args.assignments:
        cells, _, ex = _cells(assignment)
        os.chdir(ex.parent)
        shell.user_ns.clear()
        snapshots = {}
        for i, (src, role, gid) in enumerate(cells):
            if role == "solution":
                snapshots[gid] = (i, snapshot(shell))
            run_quietly(shell, src)
        for trial, case in cases([assignment], args.trials.split(",")):
            i, state = snapshots[case.cell]
            edited = list(cells)
            try:
                edited[i] = (st.apply(case, cells[i][0]), "solution", case.cell)
            except ValueError as exc:
                print(f"{trial:4s} {case.name:10s} skipped: {exc}")
                continue
            seen = {}
            for label, hint in (("without", lambda a, e, name, strong=None: ""), ("with", real_hint)):
                checks._edit_hint = hint
                restore_snapshot(shell, state)
                seen[label] = first_failure(shell, edited, i)
            checks._edit_hint = real_hint
            before, after = seen["without"][1], seen["with"][1]
            hinted = "what you get with" in after and "what you get with" not in before
            totals["mistakes"] += 1
            totals["first message names an edit"] += hinted
            totals["first message changed"] += before != after
            print(f"{trial:4s} {case.name:10s} {'HINT' if hinted else '    '} {case.what[:90]}")
            if before != after:
                print(f"     before: {before[:400]}")
            print(f"     {'after: ' if before != after else 'same:  '} {seen['with'][0]}: {after[:400]}")
        os.chdir(here)
    print()
    for k, v in totals.items():
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
