"""Edit hints: name the one edit of the reference solution that gives a student's wrong values, revealing nothing else.

``python -m autograder.edit_hints`` runs each exercise's reference solution once per single edit (an activation
swapped, a term or a step left out, another axis, another variable, an off-by-one, ...) through the exercise's
VISIBLE tests and records, for the first ``assert_close`` of each test cell that the edit changes, a fingerprint of
the values the edit gives. :func:`describe` (called by ``seqcourse.checks.diagnose`` when no hand-written cause
matches) finds the test by the fingerprint of its expected value and tells a student whose values have the
fingerprint of an edit which edit that is.

Nothing here reveals the reference: a fingerprint is a hash of up to 12 rounded entries (chosen far from a rounding
boundary; an exact zero is a class of its own) and two weighted sums of every entry, and each description is
encrypted with a key derived from the values of the edit it describes, so only values that equal those of the edit
(the student has made that very mistake) decrypt it. Values a student could guess (integers, plain data, fewer than
4 entries: "weak" fingerprints) are described in words, never code. A hint is looked up by the check's name and
its expected value: it never speaks in another check.

An edit whose first failing visible check is not a value (a shape, a type, an error PyTorch raises) is recorded by
the error instead: the test's line, the exception's type and its message (:func:`describe_error`, called by
``seqcourse.checks.brief_error``). A message is easy to guess, so these hints are always in words (the kind of edit
and its place), never code.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from pathlib import Path

import torch

DATA = Path(__file__).with_name("hint_data")
KEY_ENTRIES = 12         # entries hashed per fingerprint
STABLE = (0.15, 0.85)    # an entry is used only where its rounding is this far from a rounding boundary
ZERO = 1e-6              # below this an entry is zero (a masked or reset entry), a class of its own


def _flat(value) -> torch.Tensor | None:
    try:
        v = torch.as_tensor(value).detach().to("cpu", torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None
    return v if bool(torch.isfinite(v).all()) else None


def _quantum(v: torch.Tensor) -> float:
    """0 for integral values (hashed exactly), else the relative rounding step (see :func:`_steps`)."""
    if v.numel() and bool((v == v.round()).all()) and float(v.abs().max()) < 2 ** 40:
        return 0.0
    return 1e-4


def _steps(v: torch.Tensor, q: float) -> torch.Tensor:
    """Each entry's rounding step: ``q`` times the power of two at or above its magnitude (at least 1/8), so that a
    small entry is not rounded with the step of the largest one."""
    return q * torch.exp2(torch.ceil(torch.log2(v.abs().clamp_min(0.125))))


def _rounded(v: torch.Tensor, q: float) -> torch.Tensor:
    if q == 0:
        return v.round().long()
    zero = v.abs() < ZERO
    return torch.where(zero, torch.zeros_like(v), torch.floor(v / _steps(v, q)) * 2 + 1).long()   # 0: exactly 0


def _stable(v: torch.Tensor, q: float) -> torch.Tensor:
    """Entries whose rounding does not change under a small error: far from a rounding boundary and from a power of
    two (where the step changes)."""
    if q == 0:
        return torch.ones_like(v, dtype=torch.bool)
    x = v / _steps(v, q)
    frac = x - torch.floor(x)
    log = torch.log2(v.abs().clamp_min(1e-300))
    near_power = ((log - log.round()).abs() < 1e-3) & (v.abs() >= 0.12)
    zero = v.abs() < ZERO                         # an exact zero (a masked entry) is its own class
    return zero | ((frac >= STABLE[0]) & (frac <= STABLE[1]) & ~near_power & (v.abs() > 1000 * ZERO))


def _spread(candidates: list, k: int) -> list:
    if len(candidates) <= k:
        return list(candidates)
    step = len(candidates) / k
    return [candidates[int(i * step)] for i in range(k)]


def _material(kind: bytes, shape, q: float, idx: list, rounded: list) -> bytes:
    return kind + json.dumps([list(shape), repr(q), idx, rounded]).encode()


def _key(material: bytes) -> str:
    return hashlib.sha256(b"k" + material).hexdigest()[:20]


def _stream(material: bytes, n: int) -> bytes:
    out, counter = b"", 0
    while len(out) < n:
        out += hashlib.sha256(b"d" + counter.to_bytes(4, "big") + material).digest()
        counter += 1
    return out[:n]


def _xor(data: bytes, material: bytes) -> bytes:
    """``data`` XOR the key stream of ``material``: encrypts and decrypts."""
    return bytes(a ^ b for a, b in zip(data, _stream(material, len(data))))


def fingerprint(value, prefer=None) -> dict | None:
    """A fingerprint of ``value``: its shape, a rounding step, the hash of up to 12 stable rounded entries (half of
    them, where ``prefer`` is a boolean mask, taken among the preferred entries) and two projections of every entry
    (plain data: the hash of its JSON). None when it has no stable entry."""
    v = _flat(value)
    if v is None:
        text = _plain(value)
        return None if text is None else {"shape": None, "q": "json", "idx": [], "key": _key(b"v" + text)}
    flat = v.flatten()
    tries = (0.0,) if _quantum(flat) == 0 else (1e-4, 3.7e-4, 2.9e-5)
    q = max(tries, key=lambda t: int(_stable(flat, t).sum()))    # the step that keeps the most entries
    ok = _stable(flat, q)
    if not bool(ok.any()) and flat.numel():
        return None
    idx: list = []
    if prefer is not None:
        pref = (torch.as_tensor(prefer).flatten() & ok).nonzero().flatten().tolist()
        idx = _spread(pref, KEY_ENTRIES // 2)
    chosen = set(idx)
    rest = [i for i in ok.nonzero().flatten().tolist() if i not in chosen]
    idx = sorted(idx + _spread(rest, KEY_ENTRIES - len(idx)))
    rounded = _rounded(flat[idx], q).tolist() if idx else []
    return {"shape": list(v.shape), "q": q, "idx": idx, "key": _key(_material(b"v", v.shape, q, idx, rounded)),
            "proj": [round(x, 9) for x in _projections(flat)]}


def _plain(value) -> bytes | None:
    """Plain data (strings, lists of them) as canonical JSON; None for tensors and what JSON cannot say."""
    if isinstance(value, torch.Tensor):
        return None
    try:
        return json.dumps(value, sort_keys=True).encode()
    except (TypeError, ValueError):
        return None


def _projections(flat: torch.Tensor) -> list:
    """Two fixed pseudo-random weighted sums of every entry: a wrong entry outside the hashed ones still shows."""
    g = torch.Generator().manual_seed(flat.numel())
    w = torch.rand(2, flat.numel(), generator=g, dtype=torch.float64) * 2 - 1
    return (w @ flat).tolist()


def _projections_agree(flat: torch.Tensor, proj: list) -> bool:
    tol = 1e-5 * (float(flat.abs().sum()) + 1e-6)
    return all(abs(a - b) <= tol for a, b in zip(_projections(flat), proj))


def _material_of(value, pattern: dict, kind: bytes = b"v") -> bytes | None:
    if pattern["q"] == "json":
        text = _plain(value)
        return None if text is None else kind + text
    v = _flat(value)
    if v is None or list(v.shape) != pattern["shape"]:
        return None
    flat, idx = v.flatten(), pattern["idx"]
    if idx and max(idx) >= flat.numel():
        return None
    return _material(kind, v.shape, pattern["q"], idx, _rounded(flat[idx], pattern["q"]).tolist() if idx else [])


def matches(value, pattern: dict) -> bool:
    if pattern["q"] == 0:           # integers are hashed exactly: a value that is not all integers is not them
        v = _flat(value)
        if v is None or not bool((v == v.round()).all()):
            return False
    m = _material_of(value, pattern)
    if m is None or _key(m) != pattern["key"]:
        return False
    return "proj" not in pattern or _projections_agree(_flat(value).flatten(), pattern["proj"])


def differing(value, expected, q) -> torch.Tensor | None:
    """Entries of ``value`` that differ from ``expected`` by more than 1/1000 of its magnitude (at least 1/1000); None
    for values of another shape or plain data."""
    if q == "json":
        return None
    v, e = _flat(value), _flat(expected)
    if v is None or e is None or v.shape != e.shape:
        return None
    return (v - e).abs() > 1e-3 * e.abs().clamp_min(1.0)


def encrypt(text: str, value, pattern: dict) -> str:
    return base64.b64encode(_xor(text.encode(), _material_of(value, pattern, b"d"))).decode()


def decrypt(token: str, value, pattern: dict) -> str | None:
    m = _material_of(value, pattern, b"d")
    if m is None:
        return None
    try:
        return _xor(base64.b64decode(token), m).decode()
    except UnicodeDecodeError:
        return None


@functools.lru_cache(maxsize=1)
def _sites() -> list:
    """Every recorded check of every assignment (read once: at import, so that the class grader's sandbox reads the
    files before any student code runs)."""
    sites = []
    for path in sorted(DATA.glob("*.json")):
        try:
            sites.extend(json.loads(path.read_text())["sites"])
        except (OSError, ValueError, KeyError):
            continue   # a damaged hint file costs its hints, never a test
    return sites


def _merged(field: str, entries) -> dict:
    """One dict from the ``field`` of every assignment's hint file (``entries(value)`` gives its (key, value)
    pairs); a damaged file costs its hints, never a test."""
    found = {}
    for path in sorted(DATA.glob("*.json")):
        try:
            found.update(entries(json.loads(path.read_text()).get(field, {})))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return found


@functools.lru_cache(maxsize=1)
def _error_sites() -> dict:
    """``{key: encrypted text}`` of every recorded error of every assignment (read once, at import)."""
    return _merged("errors", lambda errors: {e["key"]: e["text"] for e in errors})


def _message_head(message: str) -> str:
    """An error's message with spaces and addresses normalised, up to its explanation (a check's "; ...", ". Likely
    cause", " -- "): what the error says of the values, not how the course explains it."""
    msg = re.sub(r"0x[0-9a-fA-F]+", "0x", " ".join(str(message).split()))
    return re.split(r"; |\. Likely cause| -- ", msg, maxsplit=1)[0]


def _error_material(line: str, ename: str, message: str) -> bytes:
    """What identifies an error: the test's line that raised it, its type and the head of its message (rewording an
    explanation keeps the hints)."""
    return b"e" + json.dumps([" ".join(str(line).split()), ename, _message_head(message)]).encode()


def error_key(line: str, ename: str, message: str) -> str:
    return _key(_error_material(line, ename, message))


def encrypt_error(text: str, line: str, ename: str, message: str) -> str:
    return base64.b64encode(_xor(text.encode(), b"d" + _error_material(line, ename, message))).decode()


def informative(message: str) -> bool:
    """Whether an error's message says enough of the values to stand for one edit: two sizes or values at least (a
    number of dimensions, "expected 2" values to unpack, or a position do not count), or a quoted name. "too many
    values to unpack (expected 2)" or "Expected input to be 1D or 2D, got 3D" come from any of many mistakes: an edit
    that raises them says nothing of the student's."""
    msg = re.sub(r"\b\d+-?D\b|\(expected \d+(, got \d+)?\)|\b(dimension|position|argument|arguments|dim)s? \d+|"
                 r"#\d+", " ", _message_head(message))
    return len(re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", msg)) >= 2 or bool(re.search(r"'\w+'", msg))


def describe_error(line: str, ename: str, message: str) -> str:
    """The edits of the reference that raise this very error (type and message) at this line of a visible test, in
    words; ``""`` when none was recorded."""
    if not informative(message):
        return ""
    token = _error_sites().get(error_key(line, ename, message))
    if token is None:
        return ""
    try:
        return _xor(base64.b64decode(token), b"d" + _error_material(line, ename, message)).decode()
    except UnicodeDecodeError:
        return ""


def call_signature(code, local: dict) -> list:
    """What a call of a function was given, as far as its variables' shapes depend on it: each argument's shape (a
    tensor), value (a number, a flag, None) or type name, read from the frame's current ``local`` variables."""
    out = []
    for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        v = local.get(name)
        out.append(list(v.shape) if isinstance(v, torch.Tensor) else v if v is None or type(v) in (int, bool)
                   else type(v).__name__)
    return out


def shape_key(line: str, function: str, signature: list, name: str) -> str:
    """The key of a variable of a function called with ``signature`` (:func:`call_signature`) while a line of a
    visible test runs (names hashed, never stored): the same line of a hidden test, with other sizes, has another."""
    return _key(b"s" + json.dumps([" ".join(str(line).split()), function, signature, name]).encode())


@functools.lru_cache(maxsize=1)
def _shape_sites() -> dict:
    """``{key: shape}`` of the reference's tensor variables (see :func:`reference_shape`), read once at import."""
    return _merged("shapes", lambda shapes: {k: tuple(v) for k, v in shapes.items()})


def reference_shape(line: str, function: str, signature: list, name: str) -> tuple | None:
    """The shape the reference's variable ``name`` of ``function`` (a qualified name, ``Attention.forward``), called
    with ``signature``, has all through the visible test's ``line``, or None when it was not recorded (another name,
    another test, other arguments, or a variable whose shape changes)."""
    return _shape_sites().get(shape_key(line, function, signature, name))

def value_key(line: str, function: str, signature: list, name: str) -> str:
    """The key of what a call of ``function`` with ``signature``, the first while a visible test's ``line`` runs, was
    given or made under ``name`` (an argument, a variable, ``"<return>"``; see :mod:`seqcourse.calltrace`)."""
    return _key(b"c" + json.dumps([" ".join(str(line).split()), function, signature, name]).encode())


@functools.lru_cache(maxsize=1)
def _value_sites() -> dict:
    """``{key: fingerprint}`` of the reference's arguments, variables and results (see :func:`reference_value`)."""
    return _merged("values", dict)


def reference_value(line: str, function: str, signature: list, name: str) -> dict | None:
    """The fingerprint of the reference's ``name`` in the first call of ``function`` with ``signature`` while the
    visible test's ``line`` runs (its arguments at the call, its other variables and ``"<return>"`` at the return),
    or None when none was recorded."""
    return _value_sites().get(value_key(line, function, signature, name))


def weak(pattern: dict) -> bool:
    """A fingerprint that values other than its own often share (integers, plain data, fewer than 4 entries): its
    description is in words, not code (a student could guess these values), and it is tried after other causes."""
    return pattern["q"] in (0, 0.0, "json") or len(pattern["idx"]) < 4


def describe(actual, expected, name: str, strong: bool | None = None) -> str:
    """The edit of the reference whose values ``actual`` has, for the check called ``name`` whose expected value is
    ``expected``; ``""`` when no recorded edit gives these values. ``strong``: True for strong fingerprints only,
    False for weak ones only (see :func:`weak`), None for both."""
    found = []
    for site in _sites():
        if site.get("name") != name or not matches(expected, site["expected"]):
            continue
        for hint in site["hints"]:
            if strong is not None and weak(hint["value"]) == strong:
                continue
            if not matches(actual, hint["value"]):
                continue
            n = hint.get("differ")
            if n is not None:
                d = differing(actual, expected, hint["value"]["q"])
                if d is None or abs(int(d.sum()) - n) > max(1, n // 10):
                    continue
            text = decrypt(hint["text"], actual, hint["value"])
            if text and text not in found:
                found.append(text)
    return found[0] if found else ""


_sites()
_error_sites()
_shape_sites()
_value_sites()
