"""The reference trace: what the instructor's own notebooks reported when the grader ran them (every check's operands,
every test's end, what each reference block read, each cell's seconds), per notebook. A value, made once per
assignment and grader fingerprint by :meth:`autograder.assignment.AssignmentGrader.run_reference`; kept in the
grading run's cache (:meth:`ReferenceTrace.load` / :meth:`ReferenceTrace.save`, the only place that knows the file)
and carried to queue workers in the assignment's bundle (:meth:`to_json` / :meth:`from_json`)."""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .protocol import Event

KEPT_EVENTS = (Event.CHECK, Event.TEST_END, Event.REFBLOCK)   # what the judge needs of the reference run


@dataclass
class ReferenceTrace:
    notebooks: dict = field(default_factory=dict)   # notebook file name -> {"events": [...], "seconds": {label: s}}

    def add(self, notebook: str, events: list, seconds: dict) -> None:
        self.notebooks[notebook] = {"events": [e for e in events if e.get("ev") in KEPT_EVENTS],
                                    "seconds": dict(seconds)}

    # ---- as JSON (the cache file, the bundle)
    def to_json(self) -> dict:
        return self.notebooks

    @classmethod
    def from_json(cls, data: dict) -> "ReferenceTrace":
        if not isinstance(data, dict) or not all(isinstance(v, dict) and isinstance(v.get("events"), list)
                                                 for v in data.values()):
            raise ValueError("not a reference trace")
        return cls(dict(data))

    # ---- the cache
    @staticmethod
    def path(cache_dir: Path, fingerprint: str) -> Path:
        return Path(cache_dir) / f"reference-{fingerprint[:16]}.json"

    @classmethod
    def load(cls, cache_dir: Path | None, fingerprint: str) -> "ReferenceTrace | None":
        """The cached trace of this fingerprint, if there is a readable one."""
        if cache_dir is None:
            return None
        try:
            return cls.from_json(json.loads(cls.path(cache_dir, fingerprint).read_text()))
        except (OSError, ValueError):
            return None

    def save(self, cache_dir: Path | None, fingerprint: str) -> None:
        """Write the trace to the cache atomically (threads and processes may share the cache folder)."""
        if cache_dir is None:
            return
        path = self.path(cache_dir, fingerprint)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(self.to_json()))
        tmp.replace(path)
