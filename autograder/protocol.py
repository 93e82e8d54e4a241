"""The words the grader and the driver exchange, in one place: messages and events on the wire, the kinds of check
nodes and value tags in a check's report, the recorder's methods that instrumented tests call, the comparison table
that both the driver and the judge apply, and the statuses and failure kinds of results.

The wire (one JSON object per line):

- grader -> driver, on the driver's stdin: first the *setup* (:data:`SETUP_FIELDS`), then each cell only when it is
  about to run (:data:`CELL_FIELDS`; a test cell part by part), then ``{"end": true}``. Every message carries a
  fresh token (``tok``) that signs the events answering it;
- driver -> grader, on the event pipe: :class:`Event` objects (``ev``: the kind) with the fields of
  :data:`EVENT_FIELDS` and the token of the message they answer (see :mod:`autograder.session` for which event may
  answer which message);
- grader <-> a warm sandbox's server (:mod:`autograder._zygote`), on a Unix socket: its configuration, then
  ``{"op": "run"}`` with three file descriptors per submission; it answers :class:`ZygoteReply` objects.

The driver runs alone inside the sandbox from one file, with only the standard library imported before it drops
privileges, so it keeps its own copy of this vocabulary; ``tests/test_autograder_layout.py`` holds the driver (by
reading its source), the zygote, the instrumenter and the judge to this module.
"""
from __future__ import annotations

import operator
from enum import StrEnum


class CellKind(StrEnum):
    """What a cell of the plan is, and so how the driver runs it."""

    STUDENT = "student"          # the student's code: through IPython's run_cell, as in Jupyter
    INSTRUCTOR = "instructor"    # a locked setup cell: compiled here, executed directly
    TEST = "test"                # an autograded test cell, instrumented: executed directly, part by part


SETUP_FIELDS = frozenset({
    "tok", "uid", "gid", "event_fd", "dumpable", "workdir", "files", "copy_dirs", "limits", "preload",
    "preload_packages", "protected_prefixes", "recorder_placeholder", "builtins_placeholder", "max_output_chars",
    "max_event_bytes", "max_value_bytes", "private_namespaces"})
CELL_FIELDS = frozenset({
    "tok", "i", "kind", "code", "code_b64", "filename", "grade_id", "hide",      # a cell
    "part", "last", "hidden", "binds",                                         # a part of a test cell
    "end"})                                                                    # the end of the plan
LIMIT_FIELDS = frozenset({"nproc", "memory_bytes", "file_bytes", "open_files", "cpu_seconds"})
# how a note of the ready event starts when the submission runs without a user and IPC namespace of its own (its user
# id's keyrings are then emptied by the driver before, and by the grader after: autograder.userkeys)
NO_PRIVATE_NAMESPACES = "no private namespaces"


class Event(StrEnum):
    """What the driver reports (``ev``)."""

    READY = "ready"              # set up, libraries snapshotted: send the first cell
    CELL_START = "cell_start"
    PART_END = "part_end"        # a part of a test cell passed and more follow: send the next part
    CHECK = "check"              # one check of a test, its operands as plain data
    REFBLOCK = "refblock"        # a hidden part's reference block: the fingerprint of what it reads
    TEST_END = "test_end"        # a test cell ended (how, and what was changed while it ran)
    CELL_END = "cell_end"        # a cell ended: its output and error
    DONE = "done"                # the plan's end: the driver's CPU time


EVENT_FIELDS = {
    Event.READY: {"pid", "uid", "nproc_limited", "notes", "preload_errors", "python", "torch", "protected"},
    Event.CELL_START: {"i"},
    Event.PART_END: {"i", "part"},
    Event.CHECK: {"test", "site", "node", "msg", "dirty"},
    Event.REFBLOCK: {"test", "block", "fp"},
    Event.TEST_END: {"test", "ok", "exc", "checks", "restored", "changed", "audit", "shadowed"},
    Event.CELL_END: {"i", "seconds", "error", "stdout", "stdout_chars", "stderr", "stderr_chars"},
    Event.DONE: {"cpu"},
}


class ZygoteReply(StrEnum):
    """What a warm sandbox's server says (``ev``)."""

    READY = "ready"              # libraries imported: {"pid", "errors", "cpu"}
    FORKED = "forked"            # a submission's process started: {"pid"}
    EXIT = "exit"                # it ended and every other process is gone: {"rc", "cpu", "left"}
    ERROR = "error"              # a request it could not serve: {"msg"}


class Node(StrEnum):
    """The kinds of nodes of a reported check (``t``), mirroring the structure of the checked expression."""

    CMP = "cmp"                  # a comparison chain: values and (for is / is not) the driver's links
    AND = "and"
    OR = "or"
    NOT = "not"
    CALL = "call"                # a checking function or a predicate, with its arguments
    PRIM = "prim"                # isinstance, evaluated with captured primitives in the driver
    VAL = "val"                  # any other expression: its value


class CallKind(StrEnum):
    ASSERT = "assert"            # a checking function called as a statement (assert_close(...))
    PREDICATE = "predicate"      # a function whose result an assert tests (torch.allclose(...))


class Value(StrEnum):
    """Tags of values reported as plain data (``[tag, ...]``; see ``_driver`` for the encoding, ``judge.decode``)."""

    NONE = "none"
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    COMPLEX = "complex"
    STR = "str"
    BYTES = "bytes"
    LIST = "list"
    TUPLE = "tuple"
    SET = "set"
    FROZENSET = "frozenset"
    DICT = "dict"
    ODICT = "odict"
    RANGE = "range"
    SLICE = "slice"
    ELLIPSIS = "ellipsis"
    NP_SCALAR = "npscalar"
    NP_DTYPE = "npdtype"
    NDARRAY = "ndarray"
    TENSOR = "tensor"
    T_DTYPE = "tdtype"
    T_DEVICE = "tdevice"
    T_CONST = "tconst"
    TYPE = "type"
    OPAQUE = "opaque"            # not plain data: its check fails
    PLACEHOLDER = "ph"           # a hidden part's operand that the student's copy does not have (the judge has it)


# The recorder's methods: what an instrumented test cell calls (on a constant, see autograder.instrument)
RECORDER_METHODS = frozenset({
    "check",                     # an assert: build its node, report it, raise if false
    "check_call",                # a checking function called as a statement: report its arguments, call it
    "hidden_check",              # the same two in a hidden part of the student's copy: report only
    "hidden_check_call",
    "compare", "and_", "or_", "not_", "predicate", "isinstance_", "value",   # the nodes of a check
    "reference_block",           # where a reference block is (was): the fingerprint of what it reads
    "isolated",                  # a call into student code, the random number generators put back afterwards
    "placeholder",               # the value standing for a hidden part's missing operand
})

# The comparison operators of a check (ast class names), as both the driver and the judge apply them; ``is`` and
# ``is not`` are decided by identity in the driver (the judge only reads the driver's answer).
COMPARE = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
           "GtE": operator.ge, "In": lambda a, b: operator.contains(b, a),
           "NotIn": lambda a, b: not operator.contains(b, a)}
IDENTITY = ("Is", "IsNot")
SYMBOL = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "In": "in",
          "NotIn": "not in", "Is": "is", "IsNot": "is not"}


class Status(StrEnum):
    """How a submission's notebook ended (separate from its score), worst first."""

    INVALID = "invalid"          # not a readable notebook, or refused input
    MISSING = "missing"          # no notebook
    CRASHED = "crashed"          # the process died (os._exit, a signal, memory...)
    TIMEOUT = "timeout"          # a cell was interrupted for time, or the notebook was stopped
    OK = "ok"                    # ran to its end (tests may fail)


def worst(statuses) -> Status:
    order = list(Status)
    return min((Status(s) for s in statuses), key=order.index, default=Status.OK)


class Failure(StrEnum):
    """Why a test failed, in words that carry no value (what a student may see after a hidden part ran)."""

    CHECK = "check"              # a check is false when the judge redoes it
    OPAQUE = "opaque"            # a checked value is not plain data
    MALFORMED = "malformed"      # a report the driver cannot have written
    EXCEPTION = "exception"      # the cell raised
    UNFINISHED = "unfinished"    # the notebook stopped before or during the test
    FEWER = "fewer"              # fewer checks ran than in the reference run
    TAMPER = "tamper"            # a protected library object was changed while it ran
    INPUTS = "inputs"            # a reference block read other values than in the reference run
