"""Small readers of Python syntax trees shared by the message code (:mod:`seqcourse.checks`) and the edit-hint
generator (:mod:`autograder.edit_hints`); no torch, so that either can import it cheaply."""
from __future__ import annotations

import ast


def callee_name(node: ast.Call) -> str | None:
    """The name a call calls: ``f`` for ``f(x)``, ``softmax`` for ``torch.softmax(x)``; None for ``(g())(x)``."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def identifiers(tree) -> set:
    """The names and attribute names of a syntax tree: ``{"torch", "sigmoid", "x"}`` of ``torch.sigmoid(x)``."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


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
    (``" (Python reads B * H ** 0.5 as B * (H ** 0.5): ** binds first; ...)"``), or ``""``: ``**`` after ``*`` (not
    after a number or a call: ``2 * x ** 2``; not after ``/``: ``x / D ** 0.5`` is the usual scaling, trial 22v's ch09-v09c), ``a / b * c`` (not ``a / (b * c)``), ``r * h @ W`` (not ``r * (h @ W)``: * and @ bind alike,
    left to right), and ``a / b + eps`` (not ``a / (b + eps)``)."""
    text = line.split(" #")[0].strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    offsets = [0]
    for row in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(row))

    def written_in_parentheses(parent, child) -> bool:
        """Whether ``child`` (an operand of ``parent``) is written in parentheses: then the grouping is the
        student's own, said explicitly."""
        start = offsets[child.lineno - 1] + child.col_offset
        before = text[offsets[parent.lineno - 1] + parent.col_offset:start].rstrip()
        return before.endswith("(") or text[start - 1:start] == "(" or (
            child is getattr(parent, "left", None) and text[offsets[parent.lineno - 1] + parent.col_offset] == "(")

    for node in ast.walk(tree):
        said = meant = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.right, ast.BinOp) \
                and isinstance(node.right.op, ast.Pow) and not isinstance(node.left, (ast.Constant, ast.Call)) \
                and not written_in_parentheses(node, node.right) \
                and isinstance(node.right.left, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            said = f"{ast.unparse(node.left)} {'*' if isinstance(node.op, ast.Mult) else '/'} ({ast.unparse(node.right)})"
            meant = f"({ast.unparse(node.left)} {'*' if isinstance(node.op, ast.Mult) else '/'} " \
                    f"{ast.unparse(node.right.left)}) ** {ast.unparse(node.right.right)}"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.Mult) and not written_in_parentheses(node, node.left):
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.right))
            said, meant = f"({a} * {b}) @ {c}", f"{a} * ({b} @ {c})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.left, ast.BinOp) \
                and isinstance(node.left.op, ast.Div) and not written_in_parentheses(node, node.left):
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.right))
            said, meant = f"({a} / {b}) * {c}", f"{a} / ({b} * {c})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) \
                and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Div) \
                and not written_in_parentheses(node, node.left) and isinstance(node.right, ast.Constant) and isinstance(node.right.value, float) \
                and 0 < abs(node.right.value) < 1e-3:
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.right))
            op = "+" if isinstance(node.op, ast.Add) else "-"
            said, meant = f"({a} / {b}) {op} {c}", f"{a} / ({b} {op} {c})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) \
                and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Mult) \
                and isinstance(node.right.left, ast.Constant) and node.right.left.value == 1 \
                and not written_in_parentheses(node, node.right):      # n + 1 * H: a product with 1 is never meant
            a, b = ast.unparse(node.left), ast.unparse(node.right.right)
            op = "+" if isinstance(node.op, ast.Add) else "-"
            said, meant = f"{a} {op} (1 * {b})", f"({a} {op} 1) * {b}"
        elif isinstance(node, ast.IfExp) and isinstance(node.orelse, ast.BinOp) \
                and isinstance(node.orelse.op, (ast.Add, ast.Sub)) \
                and not written_in_parentheses(node, node.orelse) \
                and ast.unparse(node.orelse.left) in ("[]", "()", "0", "0.0", "''"):
            # a if c else [] + d: the else takes [] + d (adding to an empty start is never meant on its own); with
            # another left operand (out if l == 0 else out + h, out if r is None else r + out) Python's reading is
            # the one meant
            a, c, b = (ast.unparse(x) for x in (node.body, node.test, node.orelse))
            op = "+" if isinstance(node.orelse.op, ast.Add) else "-"
            said = f"{a} if {c} else ({b})"
            meant = f"({a} if {c} else {ast.unparse(node.orelse.left)}) {op} {ast.unparse(node.orelse.right)}"
        elif isinstance(node, ast.IfExp) and isinstance(node.body, ast.BinOp) \
                and isinstance(node.body.op, (ast.Add, ast.Sub)) and isinstance(node.orelse, ast.Constant) \
                and not written_in_parentheses(node, node.body):       # a + b if c else 0: the if takes a + b
            a, c, b = (ast.unparse(x) for x in (node.body, node.test, node.orelse))
            op = "+" if isinstance(node.body.op, ast.Add) else "-"
            said = f"({a}) if {c} else {b}"
            meant = f"{ast.unparse(node.body.left)} {op} ({ast.unparse(node.body.right)} if {c} else {b})"
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)) \
                and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, (ast.BitOr, ast.BitAnd)) \
                and not written_in_parentheses(node, node.left):     # done | y == eos: | binds before ==
            a, b, c = (ast.unparse(x) for x in (node.left.left, node.left.right, node.comparators[0]))
            op, cmp = ("|" if isinstance(node.left.op, ast.BitOr) else "&"), ("==" if isinstance(node.ops[0], ast.Eq)
                                                                             else "!=")
            said, meant = f"({a} {op} {b}) {cmp} {c}", f"{a} {op} ({b} {cmp} {c})"
        if said:
            return (f" (Python reads {ast.unparse(node)} as {said}: if you mean {meant}, write the parentheses)")
    return ""


def _nodes(line: str) -> list:
    """The syntax nodes of one line of source (its comment left out), outside in; ``[]`` when it does not parse."""
    try:
        return list(ast.walk(ast.parse(line.split(" #")[0].strip())))
    except SyntaxError:
        return []


def batch_axis_note(line: str) -> str:
    """A softmax (or log_softmax) of one line taken over dimension 0, the batch axis of every batch-first tensor of
    the course, in words (`` (log_softmax(..., dim=0) normalises over axis 0, the batch: ...)``); ``""`` otherwise."""
    for node in _nodes(line):
        if isinstance(node, ast.Call) and callee_name(node):
            name = callee_name(node)
            if name not in ("softmax", "log_softmax"):
                return_dim = None
            else:
                method = isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) not in ("F", "torch")
                dim = next((k.value for k in node.keywords if k.arg == "dim"),
                           node.args[0 if method else 1] if len(node.args) > (0 if method else 1) else None)
                return_dim = dim.value if isinstance(dim, ast.Constant) else None
            if return_dim == 0:
                return (f" ({name}(..., dim=0) normalises over axis 0, the batch: each column of scores across the "
                        "examples; the classes (or positions) it must share out are on the last axis, dim=-1)")
    return ""


_RARE_KEYWORDS = {     # options that change a call's values and that no exercise of the course asks for
    "label_smoothing": "moves that share of each target's probability onto all the classes, so the loss is another "
                       "number (a regulariser, not the cross-entropy the docstring asks for)",
    "max_norm": "rescales what it returns (or looks up) to that norm",
    "proj_size": "projects each state to that many features",
}


def rare_keyword_note(line: str) -> str:
    """A call of one line given an option that changes its values and that no exercise asks for
    (``label_smoothing=0.1``), in words; ``""`` otherwise."""
    for node in _nodes(line):
        if isinstance(node, ast.Call):
            for k in node.keywords:
                if k.arg in _RARE_KEYWORDS and not (isinstance(k.value, ast.Constant) and k.value.value in (None, 0, 0.0)):
                    return f" ({k.arg}={ast.unparse(k.value)} {_RARE_KEYWORDS[k.arg]}: leave that option out)"
    return ""


_SQUASHES = {"sigmoid": "(0, 1)", "tanh": "(-1, 1)", "relu": "[0, inf)", "softmax": "(0, 1)"}


def split_squash_note(line: str) -> str:
    """A sum of two calls of one squashing function (``torch.sigmoid(x @ W.T) + torch.sigmoid(h @ U.T)``): each term
    squashed on its own where the gate or state squashes the sum, in words; ``""`` otherwise."""
    for node in _nodes(line):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            names = [callee_name(n) for n in (node.left, node.right) if isinstance(n, ast.Call) and callee_name(n)]
            if len(names) == 2 and names[0] == names[1] and names[0] in _SQUASHES:
                f = names[0]
                return (f" ({f}(a) + {f}(b) squashes each term on its own, so the sum can leave {_SQUASHES[f]}: the "
                        f"formula applies ONE {f} to the whole sum, {f}(a + b))")
    return ""


_RARE_FUNCTIONS = {    # functions next to the asked one (in completion lists and the docs) that no exercise asks for
    "softmin": "F.softmin(x) is softmax(-x): the LARGEST values get the SMALLEST weights, and a -inf becomes +inf "
               "(whose exp is inf, and inf / inf is NaN); weights that favour large scores are F.softmax(x)",
}


def rare_function_note(line: str) -> str:
    """A call of one line to a function next to the one asked that no exercise asks for (``F.softmin``), in words;
    ``""`` otherwise."""
    for node in _nodes(line):
        if isinstance(node, ast.Call) and callee_name(node) in _RARE_FUNCTIONS:
            return f" ({_RARE_FUNCTIONS[callee_name(node)]})"
    return ""


def squash_operand_note(line: str) -> str:
    """A squashing function applied to one operand of a matrix product (``torch.tanh(hx) @ W.T + b``: the parenthesis
    closed on ``hx``), in words; ``""`` otherwise."""
    for node in _nodes(line):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and isinstance(node.left, ast.Call) \
                and len(node.left.args) == 1:
            f = callee_name(node.left)
            if f in _SQUASHES and f != "softmax":
                inner = ast.unparse(node.left.args[0])
                return (f" ({f}({inner}) @ ... squashes {inner} BEFORE the product: the parenthesis closes on {inner}; "
                        f"the formula squashes the whole product (plus bias), {f}({inner} @ ... + b)")
    return ""


def range_note(line: str) -> str:
    """``range(1, n)`` on one line: how many values it gives, in words; ``""`` otherwise."""
    for node in _nodes(line):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
                and len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 1:
            n = ast.unparse(node.args[1])
            return f" (range(1, {n}) gives {n} - 1 values, 1 .. {n} - 1: range({n}) gives {n})"
    return ""


def line_notes(line: str) -> str:
    """What one line of source alone says of a likely slip: the grouping Python reads (:func:`precedence_note`), a
    softmax over the batch axis (:func:`batch_axis_note`), an option no exercise asks for
    (:func:`rare_keyword_note`), a squashing function applied to each term of a sum (:func:`split_squash_note`), a
    function next to the one asked (:func:`rare_function_note`), a squash closed on one operand of a product
    (:func:`squash_operand_note`), how many values ``range(1, n)`` gives (:func:`range_note`)."""
    return (precedence_note(line) + batch_axis_note(line) + rare_keyword_note(line) + split_squash_note(line)
            + rare_function_note(line) + squash_operand_note(line) + range_note(line))


def swapped_arguments(node: ast.Call, names) -> str | None:
    """For a call given, by position or by name, names of the callee's OTHER parameters (``f(b, a)`` for
    ``def f(a, b)``; ``names``: the callee's parameters in order): "`b` as a and `a` as b", the two arguments in
    each other's place, in words; None otherwise."""
    names = list(names)
    given = {names[i]: a.id for i, a in enumerate(node.args[:len(names)]) if isinstance(a, ast.Name)}
    given.update({k.arg: k.value.id for k in node.keywords if isinstance(k.value, ast.Name)})
    for param, arg in given.items():
        if arg != param and arg in names and given.get(arg) not in (None, arg):
            a, b = sorted((param, arg), key=names.index)
            return f"`{given[a]}` as {a} and `{given[b]}` as {b}"
    return None
