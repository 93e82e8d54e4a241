"""Does the graded BLEU part of exercise 9 tell wrong translators from right ones? Runs the visible part of
the test cell `ch09_test_bleu` of solutions/ch09/ch09_nmt.ipynb (train with the student's code for 120 steps
with extra padding, translate the held-out pairs) for the reference solution, every realistic mistake of
tests/mutants/ch09.yaml and every correct alternative of tests/alternatives/ch09.yaml, and prints the BLEU
each one reaches (threshold 90): plain, and with 10 more padded positions holding other sentences' states.

    OMP_NUM_THREADS=1 python benchmarks/ch09_bleu_mutants.py > benchmarks/results/ch09_bleu_mutants.txt

Each run is a fresh process with the notebook's setup cell and solution cells (one of them replaced); about
5 to 30 seconds a run on a 2-core CPU, depending on the load.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import re
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
NOTEBOOK = REPO / "solutions" / "ch09" / "ch09_nmt.ipynb"
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*\n.*?^[ \t]*### END HIDDEN TESTS[ \t]*\n?", re.S | re.M)


def _no_magics(src: str) -> str:
    return "\n".join(l[: len(l) - len(l.lstrip())] + "pass" if l.strip().startswith("%") else l for l in src.split("\n"))


def _run(override: dict, queue) -> None:
    os.environ["NBGRADER_EXECUTION"] = "autograde"     # the notebook's own demo training cell is skipped
    sys.stdout = open(os.devnull, "w")                  # the cells' own prints
    os.environ.setdefault("SEQCOURSE_PROGRESS", "0")
    import nbgrader_cli

    nb = nbgrader_cli.load(NOTEBOOK)
    ns: dict = {"__name__": "__main__"}
    out: dict = {}
    start = time.perf_counter()
    try:
        for cell in nb.cells:
            meta = nbgrader_cli.nbgrader_meta(cell)
            gid = meta.get("grade_id", "")
            if gid == "ch09_setup" or nbgrader_cli.is_solution_cell(cell):
                src = nbgrader_cli.student_code(cell.source)
                src = override.get(gid, src)
                exec(compile(_no_magics(src), gid, "exec"), ns)  # noqa: S102 - the course's own notebook
            elif gid == "ch09_test_bleu":
                visible = HIDDEN.sub("", cell.source)
                try:
                    exec(compile(visible, gid, "exec"), ns)  # noqa: S102
                    out["passes"] = True
                except AssertionError:
                    out["passes"] = False
                out["plain"], out["padded"] = ns.get("score"), ns.get("padded")
    except Exception as exc:  # noqa: BLE001 - a mistake that crashes training is a result too
        out.update(passes=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:70]}")
    out["seconds"] = time.perf_counter() - start
    queue.put(out)


def run(override: dict) -> dict:
    queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_run, args=(override, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="ids of mutants or alternatives to run (default: all)")
    args = ap.parse_args()
    import harness
    import torch
    import nbgrader_cli

    src = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
           for c in nbgrader_cli.load(NOTEBOOK).cells if nbgrader_cli.is_solution_cell(c)}
    items = [("reference solution", "", {})]
    items += [(m.id, "mutant: loses " + ", ".join(t.replace("ch09_test_", "") for t in m.loses), {m.cell: m.apply(src[m.cell])})
              for m in harness.load_mutants("ch09")]
    items += [(m.id, "alternative", {m.cell: m.apply(src[m.cell])}) for m in harness.load_alternatives("ch09")]
    if args.only:
        items = [it for it in items if it[0] in args.only]

    print(f"$ {' '.join(shlex.quote(a) for a in ['python'] + sys.argv)}")
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load average at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("BLEU of a model trained with each version's code by the graded test ch09_test_bleu (seed 0, 120 steps,")
    print("8 extra PAD columns in training; 'padded': 10 more padded positions holding other sentences' states).")
    print("The test passes at BLEU >= 90 on both.\n")
    print(f"{'version':34s} {'kind':44s} {'plain':>6s} {'padded':>7s}  test   seconds")
    below = []
    for name, kind, override in items:
        r = run(override)
        fmt = lambda v: f"{v:6.1f}" if isinstance(v, float) else f"{'-':>6s}"  # noqa: E731
        verdict = "pass" if r.get("passes") else "FAIL"
        print(f"{name:34s} {kind:44s} {fmt(r.get('plain'))} {fmt(r.get('padded')):>7s}  {verdict:5s} {r['seconds']:6.1f}"
              + (f"  ({r['error']})" if "error" in r else ""), flush=True)
        if kind.startswith("mutant") and "bleu" in kind:
            below.append((name, r.get("passes")))
    print(f"\nmutants listed as losing the BLEU test: {len(below)}, of which the test failed for "
          f"{sum(1 for _, p in below if not p)}; load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
