"""A planted class for the similarity check (``python -m autograder similar``): independent answers, and copies
of some of them disguised the ways students disguise copies.

Independent answers (each its own student, written by different hands):

- ``solution`` (the reference everywhere), ``blank`` (the untouched notebook);
- ``alternatives-k``: the correct answers written another way of ``tests/alternatives/<assignment>.yaml``, packed
  as :func:`harness.submissions` packs them (one alternative per answer cell, the reference elsewhere): the
  students with most code of their own, and the ones that are copied;
- ``mutant-<id>``: every realistic wrong answer of ``tests/mutants/<assignment>.yaml`` as its own student (the
  reference elsewhere): honest variants that differ from the reference, and from each other, by a few tokens.

Copies (``copy-<source>-<how>``), of every ``alternatives-k`` with answers of its own in two cells or more: ``renamed`` (every local name and argument
renamed), ``reformatted`` (re-printed from the syntax tree: other spacing, line breaks, quotes, parentheses,
2-space indentation, blank lines), ``reordered`` (functions and statements that do not depend on each other in
another order, imports moved), ``commented`` (a comment above every statement, a docstring in every
function), ``all`` (all four), and ``partial-<source>`` (two answers copied, renamed; the reference elsewhere).

:func:`planted` returns ``({student: {notebook file: notebook}}, {student: origin})``: two students with the same
origin are a copy pair (every such pair must be flagged), two with different origins are independent (none
may be).
"""
from __future__ import annotations

import ast
import copy
import random

import harness
import nbgrader_cli

HOWS = ("renamed", "reformatted", "reordered", "commented", "all")

_SYNONYMS = {"x": "inputs", "h": "hidden", "c": "cell_state", "B": "batch", "T": "steps", "H": "hid", "D": "dim",
             "t": "step", "b": "row", "n": "count", "i": "k", "j": "m", "out": "result", "outs": "results",
             "outputs": "collected", "y": "target", "mask": "keep", "lengths": "lens", "logits": "scores",
             "probs": "p_dist", "loss": "cost", "hs": "states", "h0": "init_state", "W_hh": "U", "W_hx": "W",
             "b_h": "bias", "x_t": "inp_t", "h_prev": "prev", "m": "on", "scores": "energies"}


def _locals(tree: ast.AST) -> set:
    """Names a copier can rename without changing what the code does: arguments and names bound inside
    functions (not the functions the tests call, not modules, not attributes)."""
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} if isinstance(tree, ast.Module) else set()
    imported = {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    names = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.Lambda)):
            continue
        keyword = fn.args.args[len(fn.args.args) - len(fn.args.defaults):] + fn.args.kwonlyargs
        for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs:
            if a not in keyword or isinstance(fn, ast.Lambda):   # callers may pass these by name: kept
                names.add(a.arg)
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return {n for n in names if n not in top and n not in imported and n not in ("self", "_")}


def rename(code: str) -> str:
    tree = ast.parse(code)
    names = _locals(tree)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | names
    mapping = {}
    for n in sorted(names):
        new = _SYNONYMS.get(n, f"{n.lower()}_val")
        while new in taken or new in mapping.values():
            new += "_"
        mapping[n] = new

    class R(ast.NodeTransformer):
        def visit_Name(self, node):
            node.id = mapping.get(node.id, node.id)
            return node

        def visit_arg(self, node):
            node.arg = mapping.get(node.arg, node.arg)
            return node

        def visit_keyword(self, node):   # keyword arguments at call sites keep the callee's names
            self.generic_visit(node)
            return node

    return ast.unparse(R().visit(tree)) + "\n"


def reformat(code: str) -> str:
    out = []
    for line in ast.unparse(ast.parse(code)).splitlines():
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        out.append("  " * depth + stripped.replace("'", '"'))
        if stripped.startswith(("return", "def ", "for ", "if ")) or stripped.endswith(":"):
            out.append("")
    return "\n".join(out) + "\n"


def reorder(code: str) -> str:
    tree = ast.parse(code)
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    rest = [s for s in tree.body if s not in imports and s not in defs]
    for fn in defs:
        if isinstance(fn, ast.FunctionDef):
            fn.body = _swap_independent(fn.body)
    tree.body = imports[::-1] + defs[::-1] + rest
    return ast.unparse(tree) + "\n"


def _swap_independent(body: list) -> list:
    """Swap neighbouring assignments where neither reads what the other writes."""
    body = list(body)
    i = 0
    while i + 1 < len(body):
        a, b = body[i], body[i + 1]
        if isinstance(a, ast.Assign) and isinstance(b, ast.Assign):
            wa = {n.id for t in a.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            wb = {n.id for t in b.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            ra = {n.id for n in ast.walk(a.value) if isinstance(n, ast.Name)}
            rb = {n.id for n in ast.walk(b.value) if isinstance(n, ast.Name)}
            if not (wa & rb) and not (wb & ra) and not (wa & wb):
                body[i], body[i + 1] = b, a
                i += 2
                continue
        i += 1
    return body


_COMMENTS = ["# work out the next value", "# keep this for later", "# the main step", "# as in the lecture",
             "# shapes: see the docstring", "# careful with the padding here", "# loop over the sequence"]


def comment(code: str, seed: int = 0) -> str:
    rng = random.Random(seed)
    tree = ast.parse(code)
    lines = code.splitlines()
    inserts = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.body:
            first = node.body[0]
            inserts.setdefault(first.lineno - 1, []).append(
                " " * first.col_offset + f'"""{node.name}: my implementation (see the chapter)."""')
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            inserts.setdefault(node.lineno - 1, []).append(" " * node.col_offset + rng.choice(_COMMENTS))
    out = []
    for k, line in enumerate(lines):
        out.extend(inserts.get(k, []))
        out.append(line + ("   # ok" if line.strip() and rng.random() < 0.3 and not line.rstrip().endswith("\\")
                           and '"""' not in line else ""))
    return "\n".join(out) + "\n"


def disguise(code: str, how: str, seed: int = 0) -> str:
    if how == "renamed":
        return rename(code)
    if how == "reformatted":
        return reformat(code)
    if how == "reordered":
        return reorder(code)
    if how == "commented":
        return comment(code, seed)
    if how == "all":
        return comment(reformat(reorder(rename(code))), seed)
    raise ValueError(how)


def _answers(nb) -> dict:
    return {nbgrader_cli.nbgrader_meta(c)["grade_id"]: c.source for c in nb.cells if nbgrader_cli.is_solution_cell(c)}


def _with_answers(nb, answers: dict):
    nb = copy.deepcopy(nb)
    for c in nb.cells:
        if nbgrader_cli.is_solution_cell(c) and nbgrader_cli.nbgrader_meta(c)["grade_id"] in answers:
            c.source = answers[nbgrader_cli.nbgrader_meta(c)["grade_id"]]
    return nb


def planted(assignment: str) -> tuple[dict, dict]:
    """``({student: {notebook file: notebook}}, {student: origin})`` (see the module's docstring)."""
    base = harness.submissions(assignment)
    students = {s: info["notebooks"] for s, info in base.items() if not s.startswith("mutants-")}
    origin = {s: s for s in students}
    release = base["blank"]["notebooks"]
    sources = {p.name: nbgrader_cli.load(p) for p in nbgrader_cli.source_notebooks(assignment)}
    for m in harness.load_mutants(assignment):
        name = f"mutant-{m.id}"
        students[name] = {n: nbgrader_cli.submission(release[n], sources[n], {m.cell: m.apply(nbgrader_cli.student_code(
            next(c.source for c in sources[n].cells if nbgrader_cli.nbgrader_meta(c).get("grade_id") == m.cell)))})
            if n == m.notebook else nbgrader_cli.submission(release[n], sources[n]) for n in release}
        origin[name] = name
    # copied: the alternatives students with answers of their own in two cells or more (a copy of one short
    # answer cannot be told from two students who wrote the same short answer: see autograder/similarity.py)
    alternatives = sorted(s for s in base if s.startswith("alternatives-")
                          and sum(_changed(assignment, n, g, code) for n, nb in base[s]["notebooks"].items()
                                  for g, code in _answers(nb).items()) >= 2)
    for k, src in enumerate(alternatives):
        for j, how in enumerate(HOWS):
            name = f"copy-{src}-{how}"
            students[name] = {n: _with_answers(nb, {g: disguise(code, how, seed=k * 10 + j)
                                                   for g, code in _answers(nb).items()
                                                   if code.strip() and _changed(assignment, n, g, code)})
                              for n, nb in base[src]["notebooks"].items()}
            origin[name] = src
    if alternatives:   # a partial copy: two answers of the first alternatives student, renamed
        src = alternatives[0]
        name = f"copy-{src}-partial"
        notebooks = {}
        taken = 0
        for n, nb in base[src]["notebooks"].items():
            answers = {}
            for g, code in _answers(nb).items():
                if taken < 2 and _changed(assignment, n, g, code):
                    answers[g] = rename(code)
                    taken += 1
            notebooks[n] = _with_answers(base["solution"]["notebooks"][n], answers)
        students[name] = notebooks
        origin[name] = src
    return students, origin


_REFERENCE: dict = {}


def _changed(assignment: str, notebook: str, grade_id: str, code: str) -> bool:
    """Whether an answer differs from the reference solution (only those are worth copying)."""
    key = (assignment, notebook)
    if key not in _REFERENCE:
        nb = nbgrader_cli.load(nbgrader_cli.SOLUTIONS / assignment / notebook)
        _REFERENCE[key] = {nbgrader_cli.nbgrader_meta(c)["grade_id"]: nbgrader_cli.student_code(c.source)
                           for c in nb.cells if nbgrader_cli.is_solution_cell(c)}
    return code.strip() != _REFERENCE[key].get(grade_id, "").strip()
