"""Small readers of Python syntax trees shared by the message code (:mod:`seqcourse.checks`) and the edit-hint
generator (:mod:`autograder.edit_hints`); no torch, so that either can import it cheaply."""
from __future__ import annotations

import ast


def callee_name(node: ast.Call) -> str | None:
    """The name a call calls: ``f`` for ``f(x)``, ``softmax`` for ``torch.softmax(x)``; None for ``(g())(x)``."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def names_read(line: str) -> set | None:
    """The names one line of source reads (``ast.Load``), its comment left out: ``{"h", "W"}`` of
    ``h = torch.tanh(W @ h)  # step``; None when the line alone is not a statement (a part of a longer one)."""
    try:
        tree = ast.parse(line.split(" #")[0].strip())
    except SyntaxError:
        return None
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
