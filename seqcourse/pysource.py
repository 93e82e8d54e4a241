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


def precedence_note(line: str) -> str:
    """How Python groups an expression of one line where students often mean another grouping, in words
    (``" (Python reads B * H ** 0.5 as B * (H ** 0.5): ** binds first; ...)"``), or ``""``: ``**`` after ``*`` or
    ``/`` (not after a number: ``2 * x ** 2``), ``a / b * c`` (not ``a / (b * c)``), ``r * h @ W`` (not ``r * (h @ W)``: * and @ bind alike,
    left to right), and ``a / b + eps`` (not ``a / (b + eps)``)."""
    try:
        tree = ast.parse(line.split(" #")[0].strip())
    except SyntaxError:
        return ""
    muldiv = (ast.Mult, ast.Div)
    for node in ast.walk(tree):
        said = meant = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, muldiv) and isinstance(node.right, ast.BinOp) \
                and isinstance(node.right.op, ast.Pow) and not isinstance(node.left, ast.Constant):
            said = f"{ast.unparse(node.left)} {'*' if isinstance(node.op, ast.Mult) else '/'} ({ast.unparse(node.right)})"
            meant = f"({ast.unparse(node.left)} {'*' if isinstance(node.op, ast.Mult) else '/'} " \
                    f"{ast.unparse(node.right.left)}) ** {ast.unparse(node.right.right)}"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.Mult):
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.right))
            said, meant = f"({a} * {b}) @ {c}", f"{a} * ({b} @ {c})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.Div):
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.right))
            said, meant = f"({a} / {b}) * {c}", f"{a} / ({b} * {c})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) \
                and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Div) \
                and isinstance(node.right, ast.Constant) and isinstance(node.right.value, float) \
                and 0 < abs(node.right.value) < 1e-3:
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.right))
            op = "+" if isinstance(node.op, ast.Add) else "-"
            said, meant = f"({a} / {b}) {op} {c}", f"{a} / ({b} {op} {c})"
        if said:
            return (f" (Python reads {ast.unparse(node)} as {said}: if you mean {meant}, write the parentheses)")
    return ""
