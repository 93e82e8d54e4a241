"""The class report: one self-contained HTML page for the INSTRUCTOR about a graded run
(``python -m autograder report ASSIGNMENT``; written at the end of every ``grade`` run too).

It answers "how did the class do, and where did it fail?" from ``state.jsonl`` and ``grades.csv`` (see
:mod:`autograder.results`): the score distribution; per test, the pass rate, the mean score and an
item-discrimination index; per test, the most frequent failure causes (the checks' own diagnosis, "Likely
cause: ...", else the exception the test raised, else the check that failed) with counts and two example
students each; the students whose submission timed out, crashed, was invalid or missing, with the reason; the
time each submission took; late submissions and their penalties.

**Discrimination** is the point-biserial correlation between a test's score and the rest of the score (the
total without that test), over the students whose notebook ran (status ok, timeout or crashed). A test
that strong and weak students pass alike does not separate them: it is flagged when the index is below
:data:`DISCRIMINATION_FLAG` (0.2, the usual floor of classical test theory: Ebel's "poor" item, below
0.2), or when it cannot be computed because everyone scored the same on it (a trivial or a broken test).

The page is for the instructor only: it names students and quotes the judge's full reasons (values
included) that a student's feedback never shows. It is written beside ``state.jsonl`` (``--out``), never in
the feedback folder, and it says so at its top. Nothing in it is fetched at view time: CSS and SVG figures
are inline, and each figure has a text alternative and a table with its numbers.
"""
from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from .feedback import _e   # HTML-escape, as the feedback pages do
from .results import Run

DISCRIMINATION_FLAG = 0.2
ATTEMPTED = ("ok", "timeout", "crashed")
PROBLEM_STATUSES = ("timeout", "crashed", "invalid", "missing")
REPORT_NAME = "report.html"

_CSS = """
:root{--ink:#1b1b1b;--muted:#4a4a4a;--bar:#1f5fa8;--bad:#a4001d;--line:#d0d0d0}
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:var(--ink);max-width:68rem;margin:0 auto;
padding:1rem 1.2rem 3rem;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:2px solid var(--line)}
h3{margin-bottom:.3rem}
.private{border:2px solid var(--bad);background:#fff4f5;padding:.6rem .9rem;border-radius:6px}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.92rem}
th,td{border:1px solid var(--line);padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:#f1f3f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.2rem 0}
.flag{color:var(--bad);font-weight:700}.muted{color:var(--muted)}
figure{margin:1rem 0}figcaption{color:var(--muted);font-size:.9rem}
code{font-size:.88rem;background:#f4f4f4;padding:0 .2rem;border-radius:3px;word-break:break-word}
details{margin:.3rem 0 1rem}summary{cursor:pointer}
"""


def _num(x: float, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{x:.0f}"


# ---------------------------------------------------------------------------------------------- statistics
def test_columns(run: Run) -> list:
    """``[(notebook, grade_id, max_score)]`` in the notebooks' order, from the record that has most tests."""
    best: list = []
    for rec in run.records.values():
        cols = [(nb, gid, float(t.get("max_score", 0) or 0)) for nb, info in rec["notebooks"].items()
                for gid, t in (info.get("tests") or {}).items()]
        if len(cols) > len(best):
            best = cols
    return best


def _test(rec: dict, nb: str, gid: str) -> dict | None:
    t = (rec.get("notebooks", {}).get(nb, {}).get("tests") or {}).get(gid)
    return t if isinstance(t, dict) else None


def point_biserial(item: list, rest: list) -> float | None:
    """Pearson correlation of a test's scores with the rest of the score (the point-biserial correlation when
    the test is pass/fail); None when either does not vary."""
    n = len(item)
    if n < 3:
        return None
    mx, my = sum(item) / n, sum(rest) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(item, rest))
    sxx = sum((x - mx) ** 2 for x in item)
    syy = sum((y - my) ** 2 for y in rest)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sxy / math.sqrt(sxx * syy)


_LIKELY = re.compile(r"Likely cause:\s*(.+?)\s*$", re.DOTALL)
_EXC = re.compile(r"^(?:(?P<type>[A-Za-z_][\w.]*) \(line \d+\):|(?:line \d+: )?(?P<named>[A-Za-z_][\w.]*"
                  r"(?:Error|Exception|Interrupt|Exit|Warning))\b)")


def cause(detail: str) -> tuple[str, str]:
    """``(kind, label)`` of one failure, from the judge's full reason: the checks' diagnosis first, then the
    exception type, then the check that failed (numbers replaced by #, so that one mistake is one group)."""
    d = (detail or "").strip()
    m = _LIKELY.search(d)
    if m:
        return "diagnosis", "Likely cause: " + m.group(1).rstrip(".")
    m = _EXC.match(d)
    if m:
        return "exception", f"raised {m.group('type') or m.group('named')}"
    if not d:
        return "other", "failed (no reason recorded)"
    if d.startswith("the test did not finish"):
        return "other", "did not run to its end (the notebook stopped before or during it)"
    text = re.sub(r"\d+(?:\.\d+)?(?:e-?\d+)?", "#", d.splitlines()[0])
    return "check", text[:160]


def test_stats(run: Run) -> list:
    """Per test: pass rate, mean score, discrimination and failure causes over the attempted submissions."""
    attempted = {s: r for s, r in run.records.items() if r.get("status") in ATTEMPTED}
    out = []
    for nb, gid, mx in test_columns(run):
        item, rest, passed, fails = [], [], 0, []
        for s, rec in sorted(attempted.items()):
            t = _test(rec, nb, gid)
            score = float(t.get("score", 0) or 0) if t else 0.0
            item.append(score)
            rest.append(float(rec.get("score", 0) or 0) - score)
            if t and t.get("passed"):
                passed += 1
            else:
                fails.append((s, (t or {}).get("detail") or (t or {}).get("reason") or ""))
        n = len(item)
        r = point_biserial(item, rest)
        groups: dict = {}
        for s, detail in fails:
            kind, label = cause(detail)
            g = groups.setdefault(label, {"kind": kind, "students": [], "detail": detail})
            g["students"].append(s)
        causes = sorted(groups.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0]))
        flag = ""
        if n >= 3:
            if r is None:
                flag = ("everyone scored the same on it: it cannot separate students (too easy, or broken?)"
                        if n else "")
            elif r < DISCRIMINATION_FLAG:
                flag = f"discrimination below {DISCRIMINATION_FLAG}: passing it says little about the rest"
        out.append({"notebook": nb, "test": gid, "max": mx, "n": n, "passed": passed,
                    "pass_rate": passed / n if n else float("nan"), "mean": sum(item) / n if n else float("nan"),
                    "discrimination": r, "flag": flag, "causes": causes})
    return out


def histogram(values: list, lo: float, hi: float, bins: int = 10) -> list:
    """``[(low, high, count)]``: ``bins`` equal bins over [lo, hi], the last one closed."""
    if hi <= lo:
        hi = lo + 1
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        k = min(bins - 1, max(0, int((v - lo) / width + 1e-9)))
        counts[k] += 1
    return [(lo + k * width, lo + (k + 1) * width, counts[k]) for k in range(bins)]


# ---------------------------------------------------------------------------------------------- figures
def _bars_svg(fig_id: str, title: str, desc: str, bars: list, xlabel: str, ylabel: str) -> str:
    """A vertical bar chart; ``bars``: ``[(label, value, attrs)]``. Accessible name and description from
    ``<title>``/``<desc>``; the numbers are also in a table beside it."""
    w, h, left, bottom, top = 640, 260, 48, 46, 16
    n = max(1, len(bars))
    vmax = max([b[1] for b in bars] + [1])
    bw = (w - left - 10) / n
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="{fig_id}-t {fig_id}-d" '
             f'viewBox="0 0 {w} {h}" width="100%" style="max-width:{w}px">',
             f'<title id="{fig_id}-t">{_e(title)}</title><desc id="{fig_id}-d">{_e(desc)}</desc>',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - 6}" y2="{h - bottom}" stroke="#1b1b1b"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="#1b1b1b"/>']
    for frac in (0.5, 1.0):
        y = h - bottom - frac * (h - bottom - top)
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#1b1b1b">'
                     f'{_num(frac * vmax, 1)}</text>')
    step = max(1, math.ceil(n / 12))
    for k, (label, value, attrs) in enumerate(bars):
        bh = 0 if vmax == 0 else value / vmax * (h - bottom - top)
        x = left + k * bw + 2
        extra = " ".join(f'data-{a}="{_e(v)}"' for a, v in attrs.items())
        parts.append(f'<rect class="bar" x="{x:.1f}" y="{h - bottom - bh:.1f}" width="{max(1.0, bw - 4):.1f}" '
                     f'height="{bh:.1f}" fill="#1f5fa8" {extra}/>')
        if value:
            parts.append(f'<text x="{x + (bw - 4) / 2:.1f}" y="{h - bottom - bh - 3:.1f}" font-size="11" '
                         f'text-anchor="middle" fill="#1b1b1b">{_num(value, 2)}</text>')
        if k % step == 0:
            parts.append(f'<text x="{x + (bw - 4) / 2:.1f}" y="{h - bottom + 14}" font-size="11" '
                         f'text-anchor="middle" fill="#1b1b1b">{_e(label)}</text>')
    parts.append(f'<text x="{left + (w - left) / 2:.1f}" y="{h - 8}" font-size="12" text-anchor="middle" '
                 f'fill="#1b1b1b">{_e(xlabel)}</text>')
    parts.append(f'<text x="12" y="{top + (h - bottom - top) / 2:.1f}" font-size="12" text-anchor="middle" '
                 f'fill="#1b1b1b" transform="rotate(-90 12 {top + (h - bottom - top) / 2:.1f})">{_e(ylabel)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _hbars_svg(fig_id: str, title: str, desc: str, bars: list) -> str:
    """Horizontal bars of rates in [0, 1]: ``[(label, rate, flagged, attrs)]``."""
    row, left, w = 22, 260, 680
    h = 30 + row * max(1, len(bars))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="{fig_id}-t {fig_id}-d" '
             f'viewBox="0 0 {w} {h}" width="100%" style="max-width:{w}px">',
             f'<title id="{fig_id}-t">{_e(title)}</title><desc id="{fig_id}-d">{_e(desc)}</desc>']
    span = w - left - 60
    for k, (label, rate, flagged, attrs) in enumerate(bars):
        y = 10 + k * row
        extra = " ".join(f'data-{a}="{_e(v)}"' for a, v in attrs.items())
        r = 0.0 if rate is None or math.isnan(rate) else rate
        parts.append(f'<text x="{left - 8}" y="{y + 14}" font-size="12" text-anchor="end" '
                     f'fill="{"#a4001d" if flagged else "#1b1b1b"}">{_e(label[:40])}{" (flagged)" if flagged else ""}</text>')
        parts.append(f'<rect class="bar" x="{left}" y="{y + 3}" width="{span * r:.1f}" height="{row - 8}" '
                     f'fill="#1f5fa8" {extra}/>')
        parts.append(f'<text x="{left + span * r + 5:.1f}" y="{y + 14}" font-size="12" fill="#1b1b1b">'
                     f'{_num(100 * r, 0)}%</text>')
    parts.append(f'<line x1="{left}" y1="6" x2="{left}" y2="{h - 14}" stroke="#1b1b1b"/></svg>')
    return "".join(parts)


# ---------------------------------------------------------------------------------------------- the page
def _names_cell(students: list, names: dict | None, limit: int = 0) -> str:
    shown = students if not limit else students[:limit]
    text = ", ".join(_e(s) + (f" ({_e(names[s])})" if names and names.get(s) else "") for s in shown)
    if limit and len(students) > limit:
        text += f" <span class='muted'>and {len(students) - limit} more</span>"
    return text


def build(run: Run, *, charges: dict | None = None, policy_text: str = "", due_text: str = "",
          names: dict | None = None, export_note: str = "", generated: datetime | None = None) -> str:
    """The report's HTML. ``charges``: ``{student: late.Charge}`` (late submissions); ``names``: the LMS's
    names for students (shown beside ids)."""
    rows = run.rows or [{"student": s, "score": r.get("score"), "max_score": r.get("max_score"),
                         "status": r.get("status"), "reason": r.get("reason", "")} for s, r in run.records.items()]
    statuses = Counter(r.get("status", "") for r in rows)
    scores = [float(r.get("score") or 0) for r in rows if r.get("status") != "missing"]
    stats = test_stats(run)
    parts = _head(run, generated or datetime.now(timezone.utc))
    parts += _summary(run, rows, statuses, scores, export_note)
    parts += _distribution(run, statuses, scores)
    parts += _tests(run, stats)
    parts += _failures(stats, names)
    parts += _not_normal(rows, names)
    parts += _times(run, names)
    parts += _late(charges, policy_text, due_text, names)
    parts.append("</main></body></html>")
    return "".join(parts)


def _head(run: Run, generated: datetime) -> list:
    a = run.assignment
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>Class report: {_e(a)} (instructor only)</title><style>{_CSS}</style></head><body><main>",
             f"<h1>Class report: {_e(a)}</h1>",
             "<p class='private' id='private'><strong>For the instructor only. Do not hand this page out.</strong> "
             "It names students and quotes the grader's full reasons, values included, which students' "
             "feedback pages never show (hidden tests stay hidden there).</p>",
             f"<p class='muted'>Made {generated:%Y-%m-%d %H:%M UTC} from <code>{_e(run.out / 'state.jsonl')}</code> and "
             f"<code>grades.csv</code>; make it again with <code>python -m autograder report {_e(a)}</code>.</p>"]
    if run.torn:
        parts.append(f"<p class='muted'>{run.torn} incomplete line(s) of state.jsonl skipped: written by a run that "
                     "was stopped; the run after it graded those submissions again.</p>")
    return parts


def _summary(run: Run, rows: list, statuses: Counter, scores: list, export_note: str) -> list:
    mx = run.max_score
    parts = []
    parts.append("<h2 id='summary'>Summary</h2><table id='summary-table'><caption>The class at a glance"
                 "</caption><tbody>")
    summary = [("students", "students", len(rows)), ("submitted", "with a submission", len(scores)),
               ("max-score", "maximum score", _num(mx)),
               ("mean-score", "mean score (with a submission)", _num(statistics.fmean(scores)) if scores else "n/a"),
               ("median-score", "median score (with a submission)", _num(statistics.median(scores)) if scores else "n/a"),
               ("full-marks", "full marks", sum(1 for s in scores if abs(s - mx) < 1e-9))]
    for key, label, value in summary:
        parts.append(f"<tr><th scope='row'>{_e(label)}</th><td class='num' id='{key}'>{_e(value)}</td></tr>")
    parts.append("<tr><th scope='row'>statuses</th><td id='statuses'>"
                 + ", ".join(f"{_e(k)}: <span data-status='{_e(k)}'>{v}</span>" for k, v in sorted(statuses.items()))
                 + "</td></tr></tbody></table>")
    if export_note:
        parts.append(f"<p>{export_note}</p>")
    return parts


def _distribution(run: Run, statuses: Counter, scores: list) -> list:
    a, mx = run.assignment, run.max_score
    parts = []
    top = mx or max(scores or [1.0])
    if float(top).is_integer() and top <= 30:   # one bin per point: [k, k+1)
        bins = histogram(scores, 0.0, top + 1, bins=int(top) + 1)
    else:
        bins = histogram(scores, 0.0, top)
    parts.append("<h2 id='distribution'>Score distribution</h2>")
    desc = (f"Histogram of the scores of the {len(scores)} students with a submission, in {len(bins)} equal bins "
            f"from 0 to {_num(bins[-1][1])}: " + "; ".join(f"{_num(lo)} to {_num(hi)}: {c}" for lo, hi, c in bins) + ".")
    parts.append("<figure>" + _bars_svg("fig-dist", f"Scores of {a}", desc,
                                        [(f"{_num(lo, 1)}", c, {"lo": f"{lo:.6g}", "hi": f"{hi:.6g}", "count": c})
                                         for lo, hi, c in bins], "score (from the bin's lower edge, below the next one)", "students")
                 + f"<figcaption>Scores of the students with a submission (missing ones are not shown: "
                   f"{statuses.get('missing', 0)}). Each bin holds the scores from its lower edge to below the next one's."
                   "</figcaption></figure>")
    parts.append("<details><summary>The histogram's numbers</summary><table id='dist-table'><caption>Students per "
                 "score bin</caption><thead><tr><th scope='col'>from</th><th scope='col'>to</th>"
                 "<th scope='col'>students</th></tr></thead><tbody>"
                 + "".join(f"<tr><td class='num'>{_num(lo)}</td><td class='num'>{_num(hi)}</td>"
                           f"<td class='num'>{c}</td></tr>" for lo, hi, c in bins) + "</tbody></table></details>")
    return parts


def _tests(run: Run, stats: list) -> list:
    a = run.assignment
    parts = []
    parts.append("<h2 id='tests'>Tests</h2>")
    n_att = stats[0]["n"] if stats else 0
    parts.append(f"<p>Over the {n_att} submission(s) whose notebook ran (status ok, timeout or crashed). "
                 f"<strong>Discrimination</strong>: the point-biserial correlation of the test's score with the rest "
                 f"of the score; flagged below {DISCRIMINATION_FLAG}, or when everyone scored the same on it "
                 "(such a test does not separate strong from weak students: too easy, too hard, or broken).</p>")
    if stats:
        parts.append("<figure>" + _hbars_svg(
            "fig-tests", f"Pass rate per test of {a}",
            "Pass rate of each test: " + "; ".join(f"{s['test']}: {_num(100 * s['pass_rate'], 0)}%"
                                                  + (" (flagged)" if s["flag"] else "") for s in stats) + ".",
            [(s["test"], s["pass_rate"], bool(s["flag"]), {"test": s["test"], "rate": f"{s['pass_rate']:.6g}"})
             for s in stats]) + "<figcaption>Share of submissions that passed each test; flagged tests are in red "
            "and named '(flagged)'.</figcaption></figure>")
    parts.append("<table id='tests-table'><caption>Per test</caption><thead><tr><th scope='col'>test</th>"
                 "<th scope='col'>points</th><th scope='col'>passed</th><th scope='col'>pass rate</th>"
                 "<th scope='col'>mean score</th><th scope='col'>discrimination</th><th scope='col'>flag</th>"
                 "</tr></thead><tbody>")
    for s in stats:
        parts.append(f"<tr data-test='{_e(s['test'])}'><th scope='row'><code>{_e(s['test'])}</code>"
                     f"<br><span class='muted'>{_e(s['notebook'])}</span></th><td class='num'>{_num(s['max'])}</td>"
                     f"<td class='num' data-passed='{s['passed']}'>{s['passed']} of {s['n']}</td>"
                     f"<td class='num'>{_num(100 * s['pass_rate'], 0)}%</td>"
                     f"<td class='num' data-mean='{s['mean']:.6g}'>{_num(s['mean'])}</td>"
                     f"<td class='num'>{_num(s['discrimination']) if s['discrimination'] is not None else 'n/a'}</td>"
                     f"<td>{'<span class=flag>' + _e(s['flag']) + '</span>' if s['flag'] else ''}</td></tr>")
    parts.append("</tbody></table>")
    return parts


def _failures(stats: list, names: dict | None) -> list:
    parts = []
    parts.append("<h2 id='failures'>Why tests failed</h2><p>For each test, its failures grouped by cause: the checks' "
                 "own diagnosis (\"Likely cause: ...\") when they name one, else the exception the test raised, "
                 "else the check that failed (numbers shown as #). Two example students each; the full reason of "
                 "the first one is quoted.</p>")
    for s in stats:
        if not s["causes"]:
            continue
        parts.append(f"<h3><code>{_e(s['test'])}</code>: {s['n'] - s['passed']} failure(s)</h3>"
                     f"<table class='causes' data-test='{_e(s['test'])}'><caption>Failure causes of "
                     f"{_e(s['test'])}</caption><thead><tr><th scope='col'>cause</th><th scope='col'>kind</th>"
                     "<th scope='col'>students</th><th scope='col'>examples</th></tr></thead><tbody>")
        for label, g in s["causes"][:8]:
            ex = g["students"][:2]
            parts.append(f"<tr><td>{_e(label)}<details><summary>full reason ({_e(ex[0])})</summary><code>"
                         f"{_e(g['detail'][:1500])}</code></details></td><td>{_e(g['kind'])}</td>"
                         f"<td class='num' data-count='{len(g['students'])}'>{len(g['students'])}</td>"
                         f"<td>{_names_cell(ex, names)}</td></tr>")
        if len(s["causes"]) > 8:
            rest = sum(len(g["students"]) for _, g in s["causes"][8:])
            parts.append(f"<tr><td colspan='4' class='muted' data-count='{rest}'>{len(s['causes']) - 8} other "
                         f"cause(s), {rest} failure(s)</td></tr>")
        parts.append("</tbody></table>")
    return parts


def _not_normal(rows: list, names: dict | None) -> list:
    parts = []
    parts.append("<h2 id='statuses-section'>Submissions that did not run normally</h2>")
    problem_rows = [r for r in rows if r.get("status") in PROBLEM_STATUSES]
    if not problem_rows:
        parts.append("<p>None: every submission ran to its end.</p>")
    else:
        parts.append("<table id='status-table'><caption>Students by status</caption><thead><tr>"
                     "<th scope='col'>status</th><th scope='col'>students</th><th scope='col'>student</th>"
                     "<th scope='col'>reason</th></tr></thead><tbody>")
        for status in PROBLEM_STATUSES:
            group = sorted((r for r in problem_rows if r.get("status") == status), key=lambda r: r.get("student", ""))
            for k, r in enumerate(group):
                head = (f"<th scope='rowgroup' rowspan='{len(group)}'>{_e(status)}</th><td class='num' "
                        f"rowspan='{len(group)}'>{len(group)}</td>") if k == 0 else ""
                parts.append(f"<tr data-status='{_e(status)}'>{head}<td>{_names_cell([r.get('student', '')], names)}"
                             f"</td><td>{_e((r.get('reason') or '')[:400])}</td></tr>")
        parts.append("</tbody></table>")
    return parts


def _times(run: Run, names: dict | None) -> list:
    a = run.assignment
    parts = []
    secs = sorted(((float(r.get("seconds") or 0), s) for s, r in run.records.items()
                   if r.get("status") in ATTEMPTED), reverse=True)
    parts.append("<h2 id='time'>Time per submission</h2>")
    if secs:
        values = [v for v, _ in secs]
        tb = histogram(values, 0.0, max(values) * 1.0001 or 1.0)
        parts.append(f"<p>Grading wall time of the {len(values)} submissions that ran: median "
                     f"<span id='time-median'>{_num(statistics.median(values), 1)}</span> s, longest "
                     f"<span id='time-max'>{_num(values[0], 1)}</span> s, total {_num(sum(values), 0)} s (across all "
                     "workers).</p>")
        parts.append("<figure>" + _bars_svg(
            "fig-time", f"Seconds per submission of {a}",
            f"Histogram of grading time per submission, {len(tb)} bins: "
            + "; ".join(f"{_num(lo, 1)} to {_num(hi, 1)} s: {c}" for lo, hi, c in tb) + ".",
            [(_num(lo, 1), c, {"lo": f"{lo:.6g}", "count": c}) for lo, hi, c in tb], "seconds (bin's lower edge)",
            "submissions") + "<figcaption>Wall time per submission (sandbox start, notebook, judging).</figcaption>"
            "</figure>")
        parts.append("<table id='slowest'><caption>Slowest submissions</caption><thead><tr><th scope='col'>student"
                     "</th><th scope='col'>seconds</th></tr></thead><tbody>"
                     + "".join(f"<tr><td>{_names_cell([s], names)}</td><td class='num'>{_num(v, 1)}</td></tr>"
                               for v, s in secs[:5]) + "</tbody></table>")
    else:
        parts.append("<p>No submission ran.</p>")
    return parts


def _late(charges: dict | None, policy_text: str, due_text: str, names: dict | None) -> list:
    parts = []
    parts.append("<h2 id='late'>Late submissions</h2>")
    late = {s: c for s, c in (charges or {}).items() if c.late}
    unread = sorted(s for s, c in (charges or {}).items() if not c.late and c.note)
    if unread:
        parts.append(f"<p class='flag'>Not checked for lateness (time unreadable): {_names_cell(unread, names)}.</p>")
    if charges and not any(c.submitted_at for c in charges.values()) and not late:
        parts.append("<p>No submission time was kept for any student (a folder without nbgrader's timestamp.txt, "
                     "or a Canvas download: only its LATE marks count).</p>")
    if not charges:
        parts.append("<p>Not checked (no <code>--late-penalty</code> or <code>--due</code> given).</p>")
    elif not late:
        parts.append(f"<p>None{(' (due ' + _e(due_text) + ')') if due_text else ''}.</p>")
    else:
        parts.append(f"<p>Due {_e(due_text or 'as the LMS marked it')}; policy: {_e(policy_text or 'none (late submissions listed only)')}. "
                     "The penalty is in grades.csv (<code>penalty</code>, <code>final_score</code>) and in the LMS "
                     "export.</p><table id='late-table'><caption>Late submissions</caption><thead><tr>"
                     "<th scope='col'>student</th><th scope='col'>submitted</th><th scope='col'>late by</th>"
                     "<th scope='col'>penalty</th><th scope='col'>note</th></tr></thead><tbody>")
        for s, c in sorted(late.items()):
            parts.append(f"<tr data-student='{_e(s)}'><td>{_names_cell([s], names)}</td><td>{_e(c.submitted_at)}</td>"
                         f"<td>{_e(c.late_by)}</td><td class='num' data-penalty='{c.penalty:.6g}'>{_num(c.penalty)}</td>"
                         f"<td>{_e(c.note)}</td></tr>")
        parts.append("</tbody></table>")
    return parts


def write(run: Run, path: Path | None = None, **kwargs) -> Path:
    path = Path(path) if path else run.out / REPORT_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(build(run, **kwargs), encoding="utf-8")
    tmp.replace(path)
    return path
