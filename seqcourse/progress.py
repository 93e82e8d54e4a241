"""Progress bars for anything long, quiet where nobody watches.

Bars are shown in a terminal and in Jupyter. They are switched off when the environment variable
``SEQCOURSE_PROGRESS`` is ``0`` (the book build and the test suite set it, so that no progress text lands
in the HTML or in a grader's stderr).
"""
from __future__ import annotations

import os
from typing import Iterable, TypeVar

T = TypeVar("T")


def enabled() -> bool:
    return os.environ.get("SEQCOURSE_PROGRESS", "1") not in ("0", "false", "no", "off")


def progress(iterable: Iterable[T] | None = None, **kwargs) -> Iterable[T]:
    """``tqdm`` with the course's defaults: ``progress(range(n), desc="train")``.

    Uses the notebook widget when ipywidgets is available, the plain text bar otherwise.
    """
    kwargs.setdefault("disable", not enabled())
    kwargs.setdefault("dynamic_ncols", True)
    try:
        import ipywidgets  # noqa: F401
        from tqdm.auto import tqdm
    except ImportError:  # tqdm.auto would warn and fall back; go straight to the text bar
        from tqdm import tqdm
    return tqdm(iterable, **kwargs)
