"""Student trial 22c: a third set of realistic mistakes (ch03, ch05, ch07, ch09), as the student sees them in Jupyter.

A short fresh trial for issue 22: 16 mistakes written from the student notebooks alone and committed before
solutions/, the mutant catalogues or earlier trials' lists were read (benchmarks/results/student_trial_22c_plan.md,
commit d8e7063); no correct variants. Each mistake is ONE edit of the reference solution of one
cell (``(old, new)`` pairs, each ``old`` found exactly once); each correct variant rewrites a cell another way and
must keep full marks.

The machinery is benchmarks/student_trial.py's (building the submissions with tests/nbgrader_cli.submission,
grading each assignment in ONE run of ``python -m autograder grade --workers 1``, reading ``out/state.jsonl``,
running the same submissions in Jupyter with nbclient); only the cases and the verdicts are this file's.

    nice -n 5 .venv/bin/python benchmarks/student_trial_22c.py [ch01 ...] [--root /tmp/student_trial_22c]  # grade
    nice -n 5 .venv/bin/python benchmarks/student_trial_22c.py --student-view --students ch01-M1,...       # Jupyter
    .venv/bin/python benchmarks/student_trial_22c.py --table            # the tables of student_trial_22c.md
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_trial as st  # noqa: E402  (the previous trial's machinery; its own cases are not used)

M, OK, mistake, variant = st.registry()


# ------------------------------------------------------------------------------------------------------ ch03
mistake("ch03", "M1", "ch03_lstm_cell", "lstm_cell: h = o * c, the tanh of the cell state left out",
        ("h = o * torch.tanh(c)", "h = o * c"))
mistake("ch03", "M2", "ch03_lstm_cell_nobias", "lstm_cell_nobias: the candidate g uses sigmoid (copied from the gate lines)",
        ("g = torch.tanh(x @ Wx", "g = torch.sigmoid(x @ Wx"))
mistake("ch03", "M3", "ch03_split_gates", "split_gates names the row blocks in the order i, f, o, g (g and o swapped)",
        ("    Wx = dict(zip(GATES, cell.weight_ih", "    GATES = (\"i\", \"f\", \"o\", \"g\")   # the order of the rows\n    Wx = dict(zip(GATES, cell.weight_ih"))
mistake("ch03", "M4", "ch03_lstm_layer", "lstm_layer with a given state uses h_0 but starts the cell state from zeros",
        ("h, c = state[0][0], state[1][0]", "h, c = state[0][0], torch.zeros_like(state[1][0])"))

# ------------------------------------------------------------------------------------------------------ ch05
mistake("ch05", "M1", "ch05_reverse_padded", "reverse_padded writes the result into x itself (in place) and returns x",
        ("return x.gather(1, idx)", "x.copy_(x.gather(1, idx))\n    return x"))
mistake("ch05", "M2", "ch05_lstm_direction", "lstm_direction resets h and c to zero at padded steps instead of keeping them",
        ("h = torch.where(real, h_new, h)                         # padded steps keep the old state\n"
         "        c = torch.where(real, c_new, c)",
         "h = torch.where(real, h_new, torch.zeros_like(h))      # padded steps: zeros\n"
         "        c = torch.where(real, c_new, torch.zeros_like(c))"))
mistake("ch05", "M3", "ch05_final_states", "final_states slices the backward half with the forward columns (:H twice)",
        ("backward_first = outputs[:, 0, H:]", "backward_first = outputs[:, 0, :H]"))
mistake("ch05", "M4", "ch05_masked_mean", "masked_mean divides the (B, F) sum by lengths (B,) without unsqueeze(1)",
        ("return total / lengths.unsqueeze(1).to(outputs.dtype)", "return total / lengths.to(outputs.dtype)"))

# ------------------------------------------------------------------------------------------------------ ch07
mistake("ch07", "M1", "ch07_lstm_cell", "LSTMCell chunks the gates in PyTorch's order i, f, g, o (the exercise's is f, i, o, g)",
        ("f, i, o, g = z.chunk(4, dim=-1)", "i, f, g, o = z.chunk(4, dim=-1)"))
mistake("ch07", "M2", "ch07_attention", "Attention sets masked scores to 0 (not -inf) before the softmax",
        ('scores = scores.masked_fill(~mask, float("-inf"))', "scores = scores.masked_fill(~mask, 0.0)"))
mistake("ch07", "M3", "ch07_decoder", "the decoder unpacks its state in the wrong order: attends with c_prev, not h_prev",
        ("h_prev, _ = state", "_, h_prev = state"))
mistake("ch07", "M4", "ch07_greedy", "greedy_translate keeps the <eos> token in each output list (off by one)",
        ("row[: row.index(eos_index)]", "row[: row.index(eos_index) + 1]"))

# ------------------------------------------------------------------------------------------------------ ch09
mistake("ch09", "M1", "ch09_encode", "encode builds d_0 and c_0 from [forward ; backward] (halves swapped)",
        ("d0 = model.W_h(torch.cat([h_n[1], h_n[0]], dim=-1))", "d0 = model.W_h(torch.cat([h_n[0], h_n[1]], dim=-1))"),
        ("c0 = model.W_c(torch.cat([c_n[1], c_n[0]], dim=-1))", "c0 = model.W_c(torch.cat([c_n[0], c_n[1]], dim=-1))"))
mistake("ch09", "M2", "ch09_decode_step", "decode_step: the combined output o_t without its tanh",
        ("o = model.dropout(torch.tanh(model.W_u(u)))", "o = model.dropout(model.W_u(u))"))
mistake("ch09", "M3", "ch09_teacher_forcing", "decode_teacher_forcing never updates o_prev (zeros at every step: no input feeding)",
        ("state, o, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)\n        outputs.append(o)",
         "state, o_t, _ = decode_step(model, tgt_in[:, t], o, state, h, h_proj, mask)\n        outputs.append(o_t)"))
mistake("ch09", "M4", "ch09_beam_search", "beam_search normalises a finished hypothesis by its length WITHOUT the <eos>",
        ("score / len(tokens) ** alpha))\n", "score / len(tokens[:-1]) ** alpha))\n"))

CASES = M + OK

# ------------------------------------------------------------------------------------------------------ verdicts
# The rule (strict): read ONLY the first failing visible test's message, as the student sees it in Jupyter.
# P  points to the cause; Pa partly (locates it without saying what is wrong); N not at all; M misleading.
# "-": no visible test fails. Filled in after reading student_view.json.
VERDICTS: dict[str, tuple[str, str]] = {
    "ch03-M1": ("P", "forget the tanh in h_t = o * tanh(c_t)"),
    "ch03-M2": ("P", "a sigmoid for the candidate g (it takes tanh)"),
    "ch03-M3": ("P", "blocks in the wrong order [0, 1, 3, 2]: gates in another order than the stated one"),
    "ch03-M4": ("P", "h_0 taken from the given state but c started from zeros"),
    "ch05-M1": ("P", "wrote into its argument x (in place): compute a new tensor"),
    "ch05-M2": ("M", "h_n is located (after the last REAL step), but the 'likely cause' is a division by the wrong "
                     "count; the cause is the state reset to zero at padded steps (nothing is divided)"),
    "ch05-M3": ("Pa", "the wrong entries are the columns 2, 3 (the backward half); not why"),
    "ch05-M4": ("P", "at the student's line: broadcasting from the right, use lengths[:, None]"),
    "ch07-M1": ("P", "the blocks read in PyTorch's order i, f, g, o instead of f, i, o, g"),
    "ch07-M2": ("P", "masked positions get weight: set their energies to -inf"),
    "ch07-M3": ("P", "attends with the cell state c_(t-1) instead of d_(t-1)"),
    "ch07-M4": ("P", "the tokens keep a trailing <eos> (2); the test name says 'without its <eos>'"),
    "ch09-M1": ("P", "concatenate [forward; backward] instead of [backward h_1; forward h_Tx]"),
    "ch09-M2": ("P", "forget the tanh in tilde d_t"),
    "ch09-M3": ("P", "feed zeros instead of the previous combined output at every step"),
    "ch09-M4": ("P", "normalise by the length without the <eos>"),
}


# ------------------------------------------------------------------------------------------------------ running
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("assignments", nargs="*", default=sorted({c.assignment for c in CASES}))
    ap.add_argument("--root", default="/tmp/student_trial_22c")
    ap.add_argument("--students", default="", help="comma-separated submissions to view (default: all)")
    ap.add_argument("--table", action="store_true", help="print the report's table")
    ap.add_argument("--grade", action="store_true", help="grade with the class grader instead (scores only)")
    ap.add_argument("--student-view", action="store_true",
                    help="run the built submissions in Jupyter (nbclient, errors allowed); keep what each test shows")
    args = ap.parse_args(argv)
    st.CASES = CASES                      # st.build lays out these cases, not the previous trial's
    root = Path(args.root)
    only = [x for x in args.students.split(",") if x]
    view_file = root / "student_view.json"
    views = json.loads(view_file.read_text()) if view_file.exists() else {}
    if args.table:
        print(table(views))
        return
    if args.grade:
        st.grade_assignments(args.assignments, root)
        return
    st.view_assignments(args.assignments, root, only)


def table(views: dict) -> str:
    names = {"P": "points to the cause", "Pa": "partly", "N": "not at all", "M": "MISLEADING", "-": "(no visible failure)",
             "?": "not judged"}
    rows = ["| id | exercise | mistake (one line) | first failing visible test | first message the student sees "
            "(shortened) | verdict |", "| --- | --- | --- | --- | --- | --- |"]
    count = {k: 0 for k in names}
    special = []
    for case in M:
        view = views.get(case.name)
        if view is None:
            rows.append(f"| {case.name} | {case.cell} | {case.what} | not run | | |")
            continue
        first = next((t for t in st.test_order(case.assignment) if view.get(t)), None)
        msg = st.one_line(view.get(first, "")) if first else ""
        verdict, note = VERDICTS.get(case.name, ("?", ""))
        count[verdict] += 1
        short = msg[:260].replace("|", "\\|") + ("..." if len(msg) > 260 else "")
        rows.append(f"| {case.name} | {case.cell} | {case.what} | {first or '**none: passes every visible test**'} | "
                    f"{short} | {names[verdict]}{': ' + note if note else ''} |")
        if first is None or verdict in ("N", "M"):
            special.append(case)
    judged = sum(count[k] for k in ("P", "Pa", "N", "M"))
    out = ["## Mistakes", "", *rows, "", "## Totals", "",
           f"- mistakes run in Jupyter: {sum(c.name in views for c in M)} of {len(M)}",
           f"- pass every visible test: {count['-']}",
           f"- first messages (of the {judged} judged): "
           + ", ".join(f"{names[k]} {count[k]} ({100 * count[k] / max(judged, 1):.0f}%)" for k in ("P", "Pa", "N", "M")),
           "", "## The exact edits of the mistakes that pass every visible test or get a misleading or 'not at all' "
           "message", ""]
    for case in special:
        out.append(f"- **{case.name}** (`{case.cell}`): {case.what}")
        for old, new in case.edits:
            out.append(f"  - `{old.strip()}` -> `{new.strip()}`".replace("\n", "\\n"))
    return "\n".join(out)


if __name__ == "__main__":
    main()
