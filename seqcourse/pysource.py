"""Small readers of Python syntax trees shared by the message code (:mod:`seqcourse.checks`) and the edit-hint
generator (:mod:`autograder.edit_hints`); no torch, so that either can import it cheaply."""
from __future__ import annotations

import ast


def callee_name(node: ast.Call) -> str | None:
    """The name a call calls: ``f`` for ``f(x)``, ``softmax`` for ``torch.softmax(x)``; None for ``(g())(x)``."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
