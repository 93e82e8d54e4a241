"""Benchmark: the similarity check (``python -m autograder similar``) on a planted class, copydetect against
Dolos, and its time for a class of 500.

    python benchmarks/similarity_bench.py [--n 500] [--dolos DIR] [--out benchmarks/results/similarity.txt]

1. **Planted class** (``tests/planted_class.py``) of ch02, ch05 and ch09: independent answers (the reference,
   the untouched notebook, the packed alternatives of ``tests/alternatives/``, every mutant of
   ``tests/mutants/`` as its own student) and copies of the alternatives students (renamed, reformatted,
   reordered, commented, all four, and a partial copy). For each tool: the weakest copy pair and the most
   similar independent pairs, and whether the flag rule separates them.

   - copydetect (what the course uses): each answer cell fingerprinted on its own, reference and stub as
     boilerplate; a pair's score is the larger share of a student's own code found in the other's; flagged at
     score >= 0.4 with >= 110 characters of tokenized code shared (``autograder/similarity.py``).
   - Dolos (``@dodona/dolos-lib``, tree-sitter; ``--dolos DIR``: a folder holding its ``node_modules``): one file
     per student (the answer cells), the reference and stubs as its ignored template file; its ``similarity``
     and ``overlap`` (k-grams) per pair.

2. **500 submissions** (``--n``): made from the planted class of ch05 (the assignment with most answer cells):
   each a random independent student, or a disguised copy of one (about 1 in 5). Timed: the whole ``similar``
   run of the course (reading the notebooks, fingerprinting, comparing, writing pairs.csv and every page),
   with the process's CPU time and the machine's load beside it; and Dolos on the same answers when given.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import nbformat  # noqa: E402

import planted_class  # noqa: E402
import nbgrader_cli  # noqa: E402
from autograder import similarity  # noqa: E402
from autograder.assemble import parse_notebook  # noqa: E402
from autograder.submissions import Submission  # noqa: E402

DOLOS_SCRIPT = """
import { Dolos, File } from "@dodona/dolos-lib";
import fs from "fs";
const inp = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const t0 = Date.now();
const files = Object.entries(inp.files).map(([n, c]) => new File(n + ".py", c));
const dolos = new Dolos({ language: "python" });
const report = await dolos.analyze(files, "class", new File("template.py", inp.ignore));
const pairs = report.allPairs().map(p => [p.leftFile.path.slice(0, -3), p.rightFile.path.slice(0, -3),
                                          p.similarity, p.overlap]);
fs.writeFileSync(process.argv[3], JSON.stringify({ seconds: (Date.now() - t0) / 1000, pairs }));
"""


def cpu_busy() -> float:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def instructor(assignment: str) -> dict:
    return {p.name: parse_notebook(p.read_bytes()) for p in nbgrader_cli.source_notebooks(assignment)}


def subs_of(students: dict) -> dict:
    return {s: Submission(s, files={n: nbformat.writes(nb).encode() for n, nb in nbs.items()})
            for s, nbs in students.items()}


def copydetect_pairs(assignment: str, subs: dict) -> dict:
    inst = instructor(assignment)
    bp = similarity.boilerplate_hashes(inst)
    prints = [similarity.student_print(s, similarity.answers_of(sub.files, inst), bp) for s, sub in sorted(subs.items())]
    return {(p.a, p.b): p for p in similarity.compare(prints)}


def dolos_pairs(assignment: str, subs: dict, dolos_dir: Path) -> tuple[dict, float]:
    inst = instructor(assignment)
    files = {}
    for s, sub in subs.items():
        code = "\n\n".join(c for _, _, c in similarity.answers_of(sub.files, inst))
        if code.strip():
            files[s] = code
    ignore = "\n\n".join(t for nb in inst.values() for c in nb.cells if c.is_solution
                         for t in similarity.reference_and_stub(c.source))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(dolos_dir) / "_similarity_bench.mjs"
        script.write_text(DOLOS_SCRIPT)
        (Path(tmp) / "in.json").write_text(json.dumps({"files": files, "ignore": ignore}))
        try:
            subprocess.run(["node", str(script), str(Path(tmp) / "in.json"), str(Path(tmp) / "out.json")],
                           cwd=dolos_dir, check=True, capture_output=True, text=True, timeout=3600)
        finally:
            script.unlink()
        out = json.loads((Path(tmp) / "out.json").read_text())
    return {(a, b): (sim, overlap) for a, b, sim, overlap in out["pairs"]}, out["seconds"]


def separable(copies: list, independent: list) -> str:
    """Whether ANY rule "score >= t and shared >= m" flags every copy pair and no independent pair: the strictest
    rule that still flags every copy (t, m = the copies' minima) must flag no independent pair."""
    t = min(v[0] for v, _, _ in copies)
    m = min(v[1] for v, _, _ in copies)
    caught = [(x, y, v) for v, x, y in independent if v[0] >= t and v[1] >= m]
    if not caught:
        return f"separable (e.g. score >= {t:.3f} and shared >= {m})"
    x, y, v = max(caught, key=lambda c: c[2])
    return f"NOT separable by any such rule: {len(caught)} independent pair(s) reach both, e.g. {x} / {y} {v}"


def split(pairs: dict, origin: dict, value) -> tuple[list, list]:
    copies, independent = [], []
    for x, y in itertools.combinations(sorted(origin), 2):
        p = pairs.get((x, y)) or pairs.get((y, x))
        v = value(p)
        (copies if origin[x] == origin[y] else independent).append((v, x, y))
    return copies, independent


def planted_section(lines: list, dolos_dir: Path | None) -> None:
    lines.append("== 1. planted class: copies against independent answers")
    for a in ("ch02", "ch05", "ch09"):
        students, origin = planted_class.planted(a)
        subs = subs_of(students)
        n_copies = sum(1 for s in students if s.startswith("copy-"))
        t0 = time.monotonic()
        pairs = copydetect_pairs(a, subs)
        secs = time.monotonic() - t0
        copies, independent = split(pairs, origin, lambda p: (p.score, p.shared) if p else (0.0, 0))
        flagged = lambda v: v[0] >= similarity.THRESHOLD and v[1] >= similarity.MIN_TOKENS  # noqa: E731
        missed = [(x, y) for v, x, y in copies if not flagged(v)]
        false = [(x, y) for v, x, y in independent if flagged(v)]
        worst_copy = min(copies)
        lines.append(f"{a}: {len(students)} students ({n_copies} copies), {len(copies)} copy pairs, "
                     f"{len(independent)} independent pairs")
        lines.append(f"  copydetect ({secs:.2f} s): copies: lowest score {min(v[0] for v, _, _ in copies):.3f}, "
                     f"fewest shared {min(v[1] for v, _, _ in copies)} (weakest pair {worst_copy[1]} / {worst_copy[2]}: "
                     f"{worst_copy[0][0]:.3f}, {worst_copy[0][1]})")
        lines.append(f"    independent: highest score with >= 100 shared: "
                     f"{max([v[0] for v, _, _ in independent if v[1] >= 100] or [0]):.3f}; most shared with score >= "
                     f"{similarity.THRESHOLD}: {max([v[1] for v, _, _ in independent if v[0] >= similarity.THRESHOLD] or [0])}; "
                     f"highest score at all: {max(v[0] for v, _, _ in independent):.3f}")
        lines.append(f"    rule (score >= {similarity.THRESHOLD}, shared >= {similarity.MIN_TOKENS}): "
                     f"{len(copies) - len(missed)}/{len(copies)} copy pairs flagged, {len(false)} independent pairs "
                     f"flagged {'-> SEPARATED' if not missed and not false else '-> NOT separated'}; any rule: "
                     + separable(copies, independent))
        if dolos_dir:
            dp, dsecs = dolos_pairs(a, subs, dolos_dir)
            dc, di = split(dp, origin, lambda p: (p[0], p[1]) if p else (0.0, 0))
            lo_sim = min(v[0] for v, _, _ in dc)
            lo_ov = min(v[1] for v, _, _ in dc)
            lines.append(f"  Dolos ({dsecs:.2f} s in node): copies: lowest similarity {lo_sim:.3f}, smallest overlap "
                         f"{lo_ov}; independent: highest similarity {max(v[0] for v, _, _ in di):.3f}"
                         + (" (above 1: a tiny file after the template is removed)" if max(v[0] for v, _, _ in di) > 1
                            else "") + f"; any rule: {separable(dc, di)}")


def class_of(n: int, seed: int = 0) -> tuple[dict, dict]:
    """``n`` submissions from ch05's planted class: independents, and disguised copies of them."""
    rng = random.Random(seed)
    students, origin = planted_class.planted("ch05")
    sources = [s for s in students if not s.startswith("copy-")]
    out, orig = {}, {}
    for k in range(n):
        src = rng.choice(sources)
        name = f"s{k:04d}"
        if rng.random() < 0.2 and any(True for _ in students[src]):
            how = rng.choice(planted_class.HOWS)
            out[name] = {nb_name: planted_class._with_answers(nb, {
                g: planted_class.disguise(code, how, seed=k) for g, code in planted_class._answers(nb).items()
                if code.strip() and planted_class._changed("ch05", nb_name, g, code)})
                for nb_name, nb in students[src].items()}
        else:
            out[name] = students[src]
        orig[name] = src
    return out, orig


def scale_section(lines: list, n: int, dolos_dir: Path | None) -> None:
    lines.append(f"\n== 2. {n} submissions of ch05 (random independents and disguised copies of them)")
    students, _ = class_of(n)
    subs = subs_of(students)
    with tempfile.TemporaryDirectory() as tmp:
        busy0, cpu0, t0 = cpu_busy(), own_cpu(), time.monotonic()
        made = similarity.run("ch05", nbgrader_cli.SOLUTIONS / "ch05", subs, Path(tmp) / "similarity")
        wall, cpu = time.monotonic() - t0, own_cpu() - cpu0
        others = max(0.0, cpu_busy() - busy0 - cpu) / max(wall, 1e-9)
        pages = len(list((Path(tmp) / "similarity").glob("pair-*.html")))
    lines.append(f"copydetect, the course's `similar` (one process, so one of the cores): {wall:.1f} s wall, "
                 f"{cpu:.1f} s CPU; "
                 f"{made['pairs']} pairs share code, {made['flagged']} flagged, {pages} side-by-side pages; other "
                 f"processes used {others:.2f} of the machine's CPUs meanwhile")
    if dolos_dir:
        t0 = time.monotonic()
        _, dsecs = dolos_pairs("ch05", subs, dolos_dir)
        lines.append(f"Dolos on the same answers: {dsecs:.1f} s inside node ({time.monotonic() - t0:.1f} s with "
                     "start-up and reading the notebooks)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--dolos", type=Path, help="a folder whose node_modules holds @dodona/dolos-lib (built)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    import copydetect

    lines = [f"# python benchmarks/similarity_bench.py --n {args.n}" + (" --dolos DIR" if args.dolos else ""),
             f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}, {platform.node()}, {os.cpu_count()} CPUs, "
             f"Python {platform.python_version()}, copydetect {copydetect.__version__}"
             + (f", node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}, "
                f"@dodona/dolos-lib {json.loads((args.dolos / 'node_modules/@dodona/dolos-lib/package.json').read_text())['version']}"
                if args.dolos else ""),
             f"# load average at start: {os.getloadavg()[0]:.2f}"]
    if args.dolos:
        lines.append("# Dolos installed in DIR with: npm install @dodona/dolos-lib; npm install-scripts approve --all; "
                     "npm rebuild (npm 11 runs no install scripts by default; the rebuild compiles its tree-sitter "
                     "grammars with node-gyp: a C/C++ toolchain and Node's headers are needed)")
    planted_section(lines, args.dolos)
    scale_section(lines, args.n, args.dolos)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
