"""The course as the grader knows it, from nbgrader's config file: its folders and gradebook (:class:`Course`), and what
the grader must know about its code (:class:`Profile`: the course package, its checking functions, the marker of a
hidden part's expected values, what the sandbox imports before student code and protects).

Both come from ``autograder/nbgrader_config.py`` (the installation's, which also holds this course's profile) unless
``--config`` names another file; a key that file does not set keeps the installation's value, else the built-in
default. Nothing course-specific is written anywhere else in ``autograder/``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

INSTALLATION_CONFIG = Path(__file__).with_name("nbgrader_config.py")
# modules of the standard library whose functions, classes and values student code must not change under the tests
_STDLIB_PROTECTED = ("math", "operator", "functools", "itertools", "collections", "random", "copy", "types", "abc")


class AssignmentError(Exception):
    """The assignment itself cannot be graded (the instructor must fix something)."""


@dataclass(frozen=True)
class Profile:
    """What the grader knows about the course's code (``c.Autograder.<field>`` in the nbgrader config)."""

    # the course packages: mounted in the sandbox (from where its Python imports them, checked against the grader's),
    # imported before any student code, every module-level value protected, their functions trusted as the
    # instructor's own when a test patches a library with them
    packages: tuple = ()
    # qualified-name prefixes of the course's checking functions (called as statements in tests: reported and judged)
    checker_prefixes: tuple = ()
    # the qualified name of the context manager that marks a hidden part's expected values (``with reference():``)
    reference_marker: str = ""
    # libraries imported before any student code (besides the packages, IPython and the standard library)
    preload: tuple = ("torch", "numpy")
    # top-level modules whose functions, classes and descriptors are snapshotted, put back and compared (the course
    # packages and ``builtins`` always are)
    protected: tuple = ("torch", "numpy") + _STDLIB_PROTECTED
    # environment variables the course's code reads while graded (besides the sandbox's own)
    env: dict = field(default_factory=dict)

    @property
    def protected_prefixes(self) -> tuple:
        return tuple(dict.fromkeys(tuple(self.protected) + tuple(self.packages)))

    def as_dict(self) -> dict:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}


def _read(config: Path):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader(config.name, path=str(config.parent)).load_config()


def _section(cfg, name: str) -> dict:
    sec = cfg.get(name, {})
    return {k: sec[k] for k in list(sec.keys())}


def profile_from(*configs) -> Profile:
    """The profile that the ``Autograder`` sections of these configs (later ones win) make of the defaults."""
    values: dict = {}
    for cfg in configs:
        values.update(_section(cfg, "Autograder"))
    known = {f.name for f in fields(Profile)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown setting(s) c.Autograder.{', c.Autograder.'.join(unknown)} in the nbgrader config "
                         f"(known: {', '.join(sorted(known))})")
    return Profile(**{k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in values.items()})


def load_profile(config: Path | None = None) -> Profile:
    """The installation's profile (``autograder/nbgrader_config.py``), overridden by ``config``'s if given."""
    configs = [_read(INSTALLATION_CONFIG)] if INSTALLATION_CONFIG.exists() else []
    if config is not None and Path(config).exists() and Path(config).resolve() != INSTALLATION_CONFIG.resolve():
        configs.append(_read(Path(config)))
    return profile_from(*configs)


@dataclass
class Course:
    """A course's folders and gradebook (nbgrader's ``CourseDirectory``) and its :class:`Profile`."""

    root: Path
    source_dir: Path
    db_url: str
    zip_regexp: str | None = None      # FileNameCollectorPlugin.named_regexp of the nbgrader config, if any
    profile: Profile = field(default_factory=Profile)


def load_course(config: Path | None = None, root: Path | None = None, source: str | None = None,
                db_url: str | None = None) -> Course:
    """Course folders, gradebook and profile from an nbgrader config file (default: ``autograder/nbgrader_config.py``),
    overridden by explicit arguments."""
    config = Path(config) if config else INSTALLATION_CONFIG
    cfg = _read(config) if config.exists() else {}
    cd = _section(cfg, "CourseDirectory") if cfg else {}
    fc = _section(cfg, "FileNameCollectorPlugin") if cfg else {}
    root = Path(root or cd.get("root") or Path.cwd()).resolve()
    source_dir = root / (source or cd.get("source_directory") or "source")
    db_url = db_url or cd.get("db_url") or f"sqlite:///{root / 'gradebook.db'}"
    if db_url.startswith("sqlite:///") and "?" not in db_url:
        db_url += "?timeout=60"   # other nbgrader commands may hold the file; wait instead of failing
    return Course(root, source_dir, db_url, fc.get("named_regexp") or None, load_profile(config))


def safe_url(url: str) -> str:
    """A database or broker URL without its password (for logs and messages)."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
