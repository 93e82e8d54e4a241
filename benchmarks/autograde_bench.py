"""Benchmark: grade N submissions of a real assignment with the sandboxed autograder, against plain nbgrader.

    python benchmarks/autograde_bench.py [--n 100] [--sample 20] [--workers 2] [--no-cold]
                                         [--out benchmarks/results/autograde.txt]

Rerun it on a quiet machine to replace the committed figures: every step prints the machine's load (other
processes' CPU seconds meanwhile) next to its times, and the CPU-time figures hardly depend on that load.

Measured in one run, on the same submissions (made from exercises/ch01: 4 in 5 are the reference solution,
1 in 5 a realistic wrong solution from tests/mutants/ch01.yaml; the ungraded demo training cell is deleted,
as students may do, to keep the run short):

1. plain ``nbgrader autograde`` of all N, serial (one process, one kernel after the other);
2. ``python -m autograder grade`` of all N with ``--workers`` sandboxes in parallel (plus its one-off
   reference run, reported separately);
   with warm sandboxes (the default: torch and the course package imported once per worker slot, one fork
   per submission) and, unless ``--no-cold``, cold (``--cold``: a fresh interpreter per submission);
3. the autograder with one worker, on a sample, per submission (warm, and cold);
4. only executing the notebook that is graded (the instructor's notebook with the student's answers), on the
   same sample, (a) in a plain IPython shell in a fresh process, no sandbox, no instrumentation, no judge,
   (b) with nbclient in a Jupyter kernel, (c) the notebook's own work alone: forked from a process that has
   already imported torch, the course package and IPython (what is left when nothing else is paid);
5. where the seconds of one submission go: starting Python, the imports, starting a bubblewrap sandbox,
   the notebook's own work (4c), judging (timed inside the grader during step 3).

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
import nbgrader_cli  # noqa: E402
from autograder import grade_command  # noqa: E402
from autograder.assemble import assemble, parse_notebook  # noqa: E402
from autograder.jail import Limits  # noqa: E402

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
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime + sandbox.REPORTED_CPU.seconds


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
    source = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / "ch01" / NB)
    sol = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source) for c in source.cells
           if nbgrader_cli.is_solution_cell(c)}
    mutants = harness.load_mutants("ch01")
    students = {}
    for i in range(n):
        over = {}
        if i % 5 == 4:
            m = mutants[(i // 5) % len(mutants)]
            over = {m.cell: m.apply(sol[m.cell])}
        nb = nbgrader_cli.submission(release, source, over)
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


OWN_WORK_RUNNER = r"""
import sys, json, os, time, pkgutil
os.environ.setdefault("MPLBACKEND", "Agg")
import torch, numpy, seqcourse
for info in pkgutil.walk_packages(seqcourse.__path__, "seqcourse."):
    __import__(info.name)
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
out = []
for path in sys.argv[1:]:
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.chdir(os.path.dirname(path))
        c = Config(); c.HistoryManager.enabled = False
        shell = InteractiveShell.instance(config=c)
        devnull = open(os.devnull, "w")
        sys.stdout = sys.stderr = devnull
        for src in json.load(open(path)):
            shell.run_cell(src, silent=True)
        os._exit(0)
    _, status, ru = os.wait4(pid, 0)
    out.append([time.monotonic() - t, ru.ru_utime + ru.ru_stime])
print(json.dumps(out))
"""


def own_work_execution(paths: list) -> list:
    """``[(wall, cpu), ...]``: each notebook forked from one process that imported everything first."""
    env = dict(os.environ, OMP_NUM_THREADS="1", SEQCOURSE_PROGRESS="0", NBGRADER_EXECUTION="autograde",
               MPLCONFIGDIR=str(paths[0].parent.parent / "mpl"))
    r = subprocess.run([sys.executable, "-c", OWN_WORK_RUNNER, *map(str, paths)], env=env, check=True,
                       capture_output=True, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def child_cost(code: str, reps: int = 3) -> tuple:
    """Median (wall, CPU) of ``python -c code`` in a fresh process."""
    walls, cpus = [], []
    env = dict(os.environ, OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    for _ in range(reps):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        subprocess.run([sys.executable, "-s", "-B", "-c", code], env=env, check=True, capture_output=True)
        walls.append(time.monotonic() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return sorted(walls)[reps // 2], sorted(cpus)[reps // 2]


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


def load_now() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:  # noqa: C901 - the steps, in order
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-cold", action="store_true", help="skip the cold (fresh interpreter) autograder runs")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "autograde.txt")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["SEQCOURSE_PROGRESS"] = "0"
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    work = Path(tempfile.mkdtemp(prefix="autograde-bench-"))
    lines = []
    meters = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    def load(m) -> str:
        meters.append(m)
        return f"[other processes: {m.foreign:.0f} CPU-s = {m.foreign / max(m.wall, 1e-9):.2f} CPUs busy; load avg {load_now()}]"

    load_before = os.getloadavg()
    course = nbgrader_cli.ThrowawayCourse.create(work / "course", ["ch01"])
    students = make_submissions(course, args.n)
    sample = sorted(students)[: args.sample]
    say(f"$ python benchmarks/autograde_bench.py --n {args.n} --sample {args.sample} --workers {args.workers}"
        + (" --no-cold" if args.no_cold else ""))
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
    per_nb = m_nb.wall / args.n
    say(f"1. nbgrader autograde (serial), {args.n} submissions: {m_nb.wall:.0f} s = {per_nb:.2f} s each  {load(m_nb)}")

    # 2. the autograder, parallel: warm (default), then cold
    from autograder import judge as judge_mod

    def ours(name, workers, warm, students_=None):
        out = work / name
        opts = grade_command.Options(assignment="ch01", submissions=work / "course" / "submitted", workers=workers,
                             config=work / "course" / "nbgrader_config.py", out=out, force=True,
                             limits=Limits(), cache_dir=work / "cache", warm=warm, students=students_)
        with Meter(name) as m:
            summary = grade_command.run(opts)
        log = (out / "autograde.log").read_text()
        ref = next((float(ln.rsplit("(", 1)[1].split(" s)")[0]) for ln in log.splitlines()
                    if "reference run of" in ln), 0.0)
        return m, summary, ref

    throughput = {}
    for warm in ([True] if args.no_cold else [True, False]):
        label = "warm" if warm else "cold (--cold)"
        m_ours, summary, ref = ours("ours-warm" if warm else "ours-cold", args.workers, warm)
        ours_scores = {r["student"]: r["score"] for r in summary.rows}
        statuses = {r["status"] for r in summary.rows}
        grading_wall = m_ours.wall - ref
        throughput[warm] = (m_nb.wall / grading_wall, m_ours.mine / args.n)
        say(f"2{'a' if warm else 'b'}. python -m autograder grade --workers {args.workers}, {label}, {args.n} submissions: "
            f"{m_ours.wall:.0f} s in all" + (f", of which {ref:.0f} s the one-off reference run" if ref else "")
            + f"; {grading_wall / args.n:.2f} s each  {load(m_ours)}")
        agree = sum(1 for s in students if abs(nb_scores.get(s, -1) - ours_scores.get(s, -2)) < 1e-9)
        say(f"    scores equal to nbgrader's for {agree}/{args.n} submissions; statuses: {sorted(statuses)}")
        say(f"    throughput vs serial nbgrader: {m_nb.wall / grading_wall:.2f}x (wall); CPU per submission "
            f"{m_ours.mine / args.n:.2f} CPU-s vs nbgrader's {m_nb.mine / args.n:.2f} "
            f"({m_nb.mine / m_ours.mine:.2f}x fewer)")

    # 3. the autograder, one worker, on the sample (judging timed in this process)
    judged = [0.0]
    real_judge = judge_mod.judge_test

    def timed_judge(*a, **k):
        t = time.perf_counter()
        try:
            return real_judge(*a, **k)
        finally:
            judged[0] += time.perf_counter() - t

    import autograder.assignment as assignment_mod

    assignment_mod.judge_mod.judge_test = timed_judge
    one = {}
    for warm in ([True] if args.no_cold else [True, False]):
        judged[0] = 0.0
        m_one, _, _ = ours("ours1-warm" if warm else "ours1-cold", 1, warm, sample)
        one[warm] = (m_one.wall / len(sample), m_one.mine / len(sample), judged[0] / len(sample))
        say(f"3{'a' if warm else 'b'}. autograder, 1 worker, {'warm' if warm else 'cold'}, {len(sample)} submissions: "
            f"{one[warm][0]:.2f} s and {one[warm][1]:.2f} CPU-s each (the warm sandbox's start included)  {load(m_one)}")
    assignment_mod.judge_mod.judge_test = real_judge

    # 4. only executing what is graded
    src = parse_notebook((nbgrader_cli.SOLUTIONS / "ch01" / NB).read_bytes())
    plain, kernel = [], []
    (work / "exec").mkdir()
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True,
                   env=dict(os.environ, MPLCONFIGDIR=str(work / "exec" / "mpl")))
    paths = []
    for s_ in sample:
        plan, _ = assemble(src, parse_notebook(nbformat.writes(students[s_]).encode()))
        d = work / "exec" / s_
        d.mkdir(parents=True)
        (d / "cells.json").write_text(json.dumps([p.source for p in plan]))
        paths.append(d / "cells.json")
    with Meter("plain") as m_plain:
        for s_, path in zip(sample, paths):
            plain.append(plain_execution(json.loads(path.read_text()), path.parent))
    with Meter("kernel") as m_kernel:
        for s_, path in zip(sample, paths):
            kernel.append(nbclient_execution(json.loads(path.read_text()), path.parent))
    with Meter("own") as m_own:
        own = own_work_execution(paths)
    p_plain, p_kernel = sum(plain) / len(plain), sum(kernel) / len(kernel)
    own_wall, own_cpu = sum(w for w, _ in own) / len(own), sum(c for _, c in own) / len(own)
    c_plain, c_kernel = m_plain.mine / len(sample), m_kernel.mine / len(sample)
    say(f"4. only executing the graded notebook, {len(sample)} submissions, per submission:")
    say(f"   a. plain IPython in a fresh process: {p_plain:.2f} s, {c_plain:.2f} CPU-s  {load(m_plain)}")
    say(f"   b. Jupyter kernel (nbclient):        {p_kernel:.2f} s, {c_kernel:.2f} CPU-s  {load(m_kernel)}")
    say(f"   c. the notebook's own work (forked after the imports): {own_wall:.2f} s, {own_cpu:.2f} CPU-s  {load(m_own)}")

    # 5. where the seconds of one submission go
    w_start, c_start = child_cost("pass")
    w_imp, c_imp = child_cost("import pkgutil, torch, numpy, seqcourse\n"
                              "[__import__(i.name) for i in pkgutil.walk_packages(seqcourse.__path__, 'seqcourse.')]\n"
                              "import IPython.core.interactiveshell")
    bw = shutil.which("bwrap")
    if bw:
        from autograder.jail import usr_links

        t = time.monotonic()
        for _ in range(5):
            subprocess.run([bw, "--ro-bind", "/usr", "/usr", *usr_links(), "--proc", "/proc", "--dev", "/dev",
                            "--unshare-pid", "--unshare-net", "--die-with-parent", "/usr/bin/true"], check=True)
        w_bw = (time.monotonic() - t) / 5
    else:
        w_bw = float("nan")
    say()
    say("5. where the seconds of one submission go (medians of fresh processes; the notebook's own work from 4c):")
    say(f"   starting Python {w_start:.2f} s / {c_start:.2f} CPU-s; imports (torch, numpy, the course package, "
        f"IPython) {w_imp - w_start:.2f} s / {c_imp - c_start:.2f} CPU-s; starting a bubblewrap sandbox "
        f"{w_bw:.3f} s; the notebook's own work {own_wall:.2f} s / {own_cpu:.2f} CPU-s; judging "
        f"{one[True][2]:.3f} s (in the grader)")
    if False in one:
        say(f"   cold grading, 1 worker: {one[False][0]:.2f} s / {one[False][1]:.2f} CPU-s = own work + "
            f"{one[False][1] - own_cpu:.2f} CPU-s of everything else (start, imports, sandbox, instrumentation, judge)")
    say(f"   warm grading, 1 worker: {one[True][0]:.2f} s / {one[True][1]:.2f} CPU-s = own work + "
        f"{one[True][1] - own_cpu:.2f} CPU-s")
    say()
    say("Summary (per submission; CPU time hardly depends on what else runs on the machine, wall time does):")
    wall_w, cpu_w, _ = one[True]
    say(f"   grading overhead, warm, 1 worker, over executing the notebook alone in a fresh process (4a): "
        f"{100 * (wall_w - p_plain) / p_plain:+.1f}% wall, {100 * (cpu_w - c_plain) / c_plain:+.1f}% CPU; over "
        f"its own work alone (4c): {100 * (wall_w - own_wall) / own_wall:+.1f}% wall, "
        f"{100 * (cpu_w - own_cpu) / own_cpu:+.1f}% CPU")
    say(f"   throughput with {args.workers} workers vs serial nbgrader: warm {throughput[True][0]:.2f}x"
        + (f", cold {throughput[False][0]:.2f}x" if False in throughput else "")
        + f" (wall); by CPU time per submission: warm {m_nb.mine / args.n / throughput[True][1]:.2f}x"
        + (f", cold {m_nb.mine / args.n / throughput[False][1]:.2f}x" if False in throughput else "")
        + f" (nbgrader {m_nb.mine / args.n:.2f} CPU-s, warm {throughput[True][1]:.2f})")
    say(f"   per worker core, warm: {3600 / max(cpu_w, 1e-9):.0f} ch01 submissions per CPU-hour")
    say()
    load_after = os.getloadavg()
    foreign = sum(m.foreign for m in meters)
    total_wall = sum(m.wall for m in meters)
    say(f"load average after: {' '.join(f'{x:.2f}' for x in load_after)}; other processes used {foreign:.0f} CPU-s "
        f"over {total_wall:.0f} s of measurement (= {foreign / total_wall:.2f} of the {os.cpu_count()} CPUs)")
    if foreign / total_wall > 0.1:
        say("NOTE: other processes loaded the machine during the run; all wall times are inflated by their load, "
            "and unevenly so between the steps. Rerun on a quiet machine for wall-time figures.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
