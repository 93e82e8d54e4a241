"""Benchmark: grade N submissions of a real assignment with the sandboxed autograder, against plain nbgrader.

    python benchmarks/autograde_bench.py [--n 100] [--sample 20] [--workers 2] [--out benchmarks/results/autograde.txt]

Measured in one run, on the same submissions (made from exercises/ch01: 4 in 5 are the reference solution,
1 in 5 a realistic wrong solution from tests/mutants/ch01.yaml; the ungraded demo training cell is deleted,
as students may do, to keep the run short):

1. plain ``nbgrader autograde`` of all N, serial (one process, one kernel after the other);
2. ``python -m autograder grade`` of all N with ``--workers`` sandboxes in parallel (plus its one-off
   reference run, reported separately);
3. the autograder with one worker, on a sample, per submission;
4. only executing the notebook that is graded (the instructor's notebook with the student's answers), on the
   same sample, (a) in a plain IPython shell in a fresh process, no sandbox, no instrumentation, no judge,
   (b) with nbclient in a Jupyter kernel.

Other processes on the machine are measured too (CPU time not spent by this benchmark's process tree) and
reported, since they distort every number.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import nbformat  # noqa: E402

import harness  # noqa: E402
from autograder import batch, grading  # noqa: E402
from autograder.assemble import assemble, parse_notebook  # noqa: E402
from autograder.sandbox import Limits  # noqa: E402

NB = "ch01_sequence_configurations.ipynb"


def cpu_busy() -> float:
    """Seconds of CPU time used by everything on the machine so far (from /proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    """This process, its waited-for children (nbgrader, kernels) and the sandboxes (which report their own CPU
    time: bubblewrap's reaper does not pass it on)."""
    from autograder import sandbox

    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime + sandbox.CPU_REPORTED[0]


class Meter:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t, self.busy, self.own = time.monotonic(), cpu_busy(), own_cpu()
        return self

    def __exit__(self, *exc):
        self.wall = time.monotonic() - self.t
        total = cpu_busy() - self.busy
        self.mine = own_cpu() - self.own
        self.foreign = max(0.0, total - self.mine)


def make_submissions(course, n: int) -> dict:
    release = course.generate("ch01")[NB]
    source = grading.load(grading.SOLUTIONS / "ch01" / NB)
    sol = {grading.nbgrader_meta(c)["grade_id"]: grading.student_code(c.source) for c in source.cells
           if grading.is_solution_cell(c)}
    mutants = harness.load_mutants("ch01")
    students = {}
    for i in range(n):
        over = {}
        if i % 5 == 4:
            m = mutants[(i // 5) % len(mutants)]
            over = {m.cell: m.apply(sol[m.cell])}
        nb = grading.submission(release, source, over)
        nb.cells = [c for c in nb.cells if c.cell_type != "code" or "nbgrader" in c.metadata]
        student = f"s{i:03d}"
        course.submit(student, "ch01", {NB: nb})
        students[student] = nb
    return students


PLAIN_RUNNER = r"""
import sys, json, os
os.environ.setdefault("MPLBACKEND", "Agg")
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
c = Config(); c.HistoryManager.enabled = False
shell = InteractiveShell.instance(config=c)
for src in json.load(open(sys.argv[1])):
    shell.run_cell(src, silent=True)
"""


def plain_execution(cells: list, workdir: Path) -> float:
    path = workdir / "cells.json"
    path.write_text(json.dumps(cells))
    env = dict(os.environ, OMP_NUM_THREADS="1", SEQCOURSE_PROGRESS="0", NBGRADER_EXECUTION="autograde",
               MPLCONFIGDIR=str(workdir.parent / "mpl"))   # font cache built once, before measuring
    t = time.monotonic()
    subprocess.run([sys.executable, "-c", PLAIN_RUNNER, str(path)], cwd=workdir, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def nbclient_execution(cells: list, workdir: Path) -> float:
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    t = time.monotonic()
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return time.monotonic() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "autograde.txt")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["SEQCOURSE_PROGRESS"] = "0"
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    work = Path(tempfile.mkdtemp(prefix="autograde-bench-"))
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    load_before = os.getloadavg()
    course = grading.Course.create(work / "course", ["ch01"])
    students = make_submissions(course, args.n)
    sample = sorted(students)[: args.sample]
    say(f"$ python benchmarks/autograde_bench.py --n {args.n} --sample {args.sample} --workers {args.workers}")
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    say(f"machine: {os.cpu_count()} CPUs ({cpu}), {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB,"
        f" {platform.platform()}, Python {platform.python_version()}")
    import torch
    import nbgrader

    say(f"versions: torch {torch.__version__}, nbgrader {nbgrader.__version__}; sandbox: bubblewrap "
        f"{'yes' if shutil.which('bwrap') else 'NO'}; running as {'root' if os.getuid() == 0 else 'a user'}")
    say(f"submissions: {args.n} of ch01 ({sum(1 for i in range(args.n) if i % 5 == 4)} with a wrong part), "
        "demo training cell deleted")
    say(f"load average before: {' '.join(f'{x:.2f}' for x in load_before)}")
    say()

    # 1. plain nbgrader, serial
    with Meter("nbgrader") as m_nb:
        course.autograde("ch01")
    nb_scores = {s: sum(v[0] for v in per.values()) for s, nbs in course.scores("ch01").items() for per in nbs.values()}
    say(f"1. nbgrader autograde (serial), {args.n} submissions: {m_nb.wall:.0f} s = {m_nb.wall / args.n:.2f} s each"
        f"  [other processes used {m_nb.foreign:.0f} CPU-s meanwhile]")

    # 2. the autograder, parallel
    out = work / "ours"
    opts = batch.Options(assignment="ch01", submissions=work / "course" / "submitted", workers=args.workers,
                         config=work / "course" / "nbgrader_config.py", out=out, force=True,
                         limits=Limits(), cache_dir=work / "cache")
    with Meter("ours") as m_ours:
        summary = batch.run(opts)
    log = (out / "autograde.log").read_text()
    ref = next(float(ln.rsplit("(", 1)[1].split(" s)")[0]) for ln in log.splitlines() if "reference run of" in ln)
    ours_scores = {r["student"]: r["score"] for r in summary.rows}
    statuses = {r["status"] for r in summary.rows}
    grading_wall = m_ours.wall - ref
    say(f"2. python -m autograder grade --workers {args.workers}, {args.n} submissions: {m_ours.wall:.0f} s in all, "
        f"of which {ref:.0f} s the one-off reference run; {grading_wall:.0f} s grading = "
        f"{grading_wall / args.n:.2f} s each  [other processes: {m_ours.foreign:.0f} CPU-s]")
    agree = sum(1 for s in students if abs(nb_scores.get(s, -1) - ours_scores.get(s, -2)) < 1e-9)
    say(f"   scores equal to nbgrader's for {agree}/{args.n} submissions; statuses: {sorted(statuses)}")
    say(f"   throughput vs serial nbgrader: {m_nb.wall / grading_wall:.2f}x (grading only), "
        f"{m_nb.wall / m_ours.wall:.2f}x (including the reference run)")

    # 3. the autograder, one worker, on the sample
    opts1 = batch.Options(assignment="ch01", submissions=work / "course" / "submitted", workers=1,
                          config=work / "course" / "nbgrader_config.py", out=work / "ours1", force=True,
                          limits=Limits(), cache_dir=work / "cache", students=sample)
    with Meter("ours1") as m_one:
        batch.run(opts1)
    per_one = m_one.wall / len(sample)
    per_nb = m_nb.wall / args.n
    say(f"3. autograder, 1 worker, {len(sample)} submissions: {per_one:.2f} s each "
        f"(reference cached)  [other processes: {m_one.foreign:.0f} CPU-s]")
    say(f"   isolation + instrumentation + judging vs plain nbgrader, per submission: "
        f"{100 * (per_one - per_nb) / per_nb:+.1f}%")

    # 4. only executing what is graded
    src = parse_notebook((grading.SOLUTIONS / "ch01" / NB).read_bytes())
    plain, kernel = [], []
    (work / "exec").mkdir()
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True,
                   env=dict(os.environ, MPLCONFIGDIR=str(work / "exec" / "mpl")))
    with Meter("plain") as m_plain:
        for s in sample:
            plan, _ = assemble(src, parse_notebook(nbformat.writes(students[s]).encode()))
            d = work / "exec" / s
            d.mkdir(parents=True)
            plain.append(plain_execution([p.source for p in plan], d))
    with Meter("kernel") as m_kernel:
        for s in sample:
            plan, _ = assemble(src, parse_notebook(nbformat.writes(students[s]).encode()))
            kernel.append(nbclient_execution([p.source for p in plan], work / "exec" / s))
    p_plain, p_kernel = sum(plain) / len(plain), sum(kernel) / len(kernel)
    say(f"4. only executing the graded notebook, {len(sample)} submissions: {p_plain:.2f} s each in a plain IPython "
        f"process, {p_kernel:.2f} s each in a Jupyter kernel (nbclient)  [other processes: "
        f"{m_plain.foreign + m_kernel.foreign:.0f} CPU-s]")
    say(f"   autograder overhead per submission (1 worker) over plain execution: {per_one - p_plain:+.2f} s "
        f"({100 * (per_one - p_plain) / p_plain:+.1f}%); over kernel execution: {per_one - p_kernel:+.2f} s "
        f"({100 * (per_one - p_kernel) / p_kernel:+.1f}%)")
    say()
    say("CPU time spent by this benchmark's own process tree (sandboxes and kernels included), per submission;")
    say("unlike wall time, it hardly depends on what else runs on the machine:")
    c_nb, c_ours, c_one = m_nb.mine / args.n, m_ours.mine / args.n, m_one.mine / len(sample)
    c_plain, c_kernel = m_plain.mine / len(sample), m_kernel.mine / len(sample)
    say(f"   nbgrader {c_nb:.2f} CPU-s; autograder {c_ours:.2f} ({args.workers} workers, reference run included), "
        f"{c_one:.2f} (1 worker); plain IPython execution {c_plain:.2f}; Jupyter kernel execution {c_kernel:.2f}")
    say(f"   autograder (1 worker) vs nbgrader: {100 * (c_one - c_nb) / c_nb:+.1f}% CPU; vs plain execution: "
        f"{100 * (c_one - c_plain) / c_plain:+.1f}% CPU")
    say()
    load_after = os.getloadavg()
    foreign = m_nb.foreign + m_ours.foreign + m_one.foreign + m_plain.foreign + m_kernel.foreign
    total_wall = m_nb.wall + m_ours.wall + m_one.wall + m_plain.wall + m_kernel.wall
    say(f"load average after: {' '.join(f'{x:.2f}' for x in load_after)}; other processes used {foreign:.0f} CPU-s "
        f"over {total_wall:.0f} s of measurement (= {foreign / total_wall:.2f} of the {os.cpu_count()} CPUs)")
    if foreign / total_wall > 0.1:
        say("NOTE: other processes loaded the machine during the run; all times are inflated by their load, "
            "and unevenly so between the steps.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
