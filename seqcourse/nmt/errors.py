"""The one exception type of the capstone's commands: a problem the user can fix.

Anything raised as :class:`NMTError` is printed by ``python -m seqcourse.nmt.train`` and
``python -m seqcourse.nmt.translate`` as one line, ``error: <what was wrong>; <what to do>``, with a non-zero
exit status and no traceback. It is a ``ValueError``, so Python callers may catch either.
"""
from __future__ import annotations


class NMTError(ValueError):
    """A bad input (file, checkpoint, option or corpus), with a message that says what to do."""
