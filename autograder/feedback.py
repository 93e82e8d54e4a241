"""Per-student feedback pages that never show hidden test code, nor anything the student's code could have
learnt from it.

A page lists, in the order they ran, the student's own cells (code, printed output, error), and for each
test cell the VISIBLE part of the instructor's test (the ``### BEGIN/END HIDDEN TESTS`` regions are cut out,
as in the released notebook) with its points and, when it failed, why. When the failure lies in the hidden
part, the page says only that a hidden test failed (and the type of an exception the student's code raised),
never the hidden code, its values, its line or an exception's message. Test cells' printed output is not shown.

From the first test with a hidden part on, the student's code may have read what that test contains (it runs in
the same process), so from that cell on the page shows nothing that code chose: no printed output, no error,
not even whether a cell ran, and of each test only whether it passed; it says so at the top. The student can see all of
that by running the notebook themselves.
"""
from __future__ import annotations

import html
from datetime import datetime, timezone

from .instrument import strip_hidden
from .protocol import CellKind, Status

_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;border-radius:4px;font-size:.85rem}
.cell{border-left:4px solid #ccc;padding-left:.8rem;margin:1.2rem 0}
.test.pass{border-color:#2a7}.test.fail{border-color:#c33}.out{background:#fff;border:1px solid #eee}
.err{color:#a00}.badge{font-weight:bold}.status{padding:.6rem;background:#fffbe6;border:1px solid #ec6}
"""


def _e(s) -> str:
    return html.escape(str(s), quote=True)


def _clip(s: str, n: int = 4000) -> str:
    return s if len(s) <= n else s[:n] + f"\n[... {len(s) - n} more characters]"


def render(*, student: str, assignment: str, result, instructor_notebook, status: str, reason: str) -> str:
    """HTML for one notebook of one submission (``result``: :class:`autograder.assignment.NotebookResult`)."""
    tests = {c.grade_id: c for c in instructor_notebook.tests()}
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(assignment)} - {_e(result.name)}</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<h1>{_e(assignment)}: {_e(result.name)}</h1>",
             f"<p>Student: <b>{_e(student)}</b> &middot; Score: <span class='badge'>{result.score:g} / "
             f"{result.max_score:g}</span> &middot; Status: <b>{_e(result.status)}</b></p>"]
    if result.status != "ok" or result.reason:
        parts.append(f"<p class='status'>{_e(result.reason or reason)}</p>")
    if result.notes:
        parts.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in result.notes) + "</ul>")
    if result.hidden_from and result.status not in (Status.MISSING, Status.INVALID):
        parts.append(f"<p class='status'>Hidden tests ran from <b>{_e(result.hidden_from)}</b> on. So that they stay "
                     "hidden, this page shows, from that point on, no output of your code, no error messages (only "
                     "the type of an error), no values and no reasons in the messages of failed tests: only which "
                     "tests passed. Run your notebook (Kernel, Restart &amp; Run All) to see them.</p>")
    if result.status in (Status.MISSING, Status.INVALID):
        parts.append("<p>No cell was run; every test scores 0.</p></body></html>")
        return "".join(parts)
    for cell in result.cells:
        if cell["kind"] == CellKind.TEST:
            gid = cell["grade_id"]
            t = result.tests.get(gid)
            ok = bool(t and t.passed)
            parts.append(f"<div class='cell test {'pass' if ok else 'fail'}'><h3>Test {_e(gid)}: "
                         f"{t.score if t else 0:g} / {t.max_score if t else 0:g}</h3>")
            src = tests.get(gid).source if gid in tests else ""
            parts.append(f"<pre>{_e(strip_hidden(src))}</pre>")
            if t and not ok:
                if not cell["ran"]:
                    msg = "This test did not run: the notebook stopped before it (see above)."
                else:
                    msg = t.reason or "This test failed."   # already free of hidden code and values (assignment)
                    msg = msg[0].upper() + msg[1:]
                parts.append(f"<p class='err'>{_e(msg)}</p>")
            elif ok:
                parts.append("<p>Passed.</p>")
            parts.append("</div>")
            continue
        title = cell["label"] if cell["kind"] == CellKind.STUDENT else f"{cell['label']} (provided)"
        parts.append(f"<div class='cell'><h4>{_e(title)}</h4><pre>{_e(_clip(cell['source'] or ''))}</pre>")
        if cell.get("after_hidden"):
            # whether it ran, how it ended, what it printed: all chosen by code that may have read a hidden test
            parts.append("<p>(Not shown after a hidden test has run: whether this cell ran, its output and "
                         "its errors.)</p>")
        else:
            if not cell["ran"]:
                parts.append("<p class='err'>Not run (the notebook stopped before this cell).</p>")
            text = (cell.get("stdout") or "") + (cell.get("stderr") or "")
            if text.strip():
                parts.append(f"<pre class='out'>{_e(_clip(text))}</pre>")
            more = (cell.get("stdout_chars", 0) + cell.get("stderr_chars", 0)) - len(text)
            if more > 0:
                parts.append(f"<p>[{more} more characters of output not kept]</p>")
            if cell.get("error"):
                err = cell["error"]
                parts.append(f"<p class='err'>{_e(err.get('type', 'Error'))}: {_e(str(err.get('msg', ''))[:1000])}</p>")
        parts.append("</div>")
    parts.append(f"<p><small>Graded {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}.</small></p></body></html>")
    return "".join(parts)
