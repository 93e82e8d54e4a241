"""Collect submissions from a folder or an LMS download, without trusting them, and without ever merging or
renaming students.

Inputs (``--submissions``), read by name (``--lms``):

- ``nbgrader`` (default): a folder in nbgrader's layout ``<dir>/<student>/<assignment>/*.ipynb`` (``<dir>``
  is nbgrader's ``submitted/``, or a folder that holds one; ``timestamp.txt`` is read when present), or an
  archive as nbgrader's ``zip_collect`` reads it: members named by ``FileNameCollectorPlugin.named_regexp``
  (``--zip-regexp``, or the nbgrader config's; default ``<assignment>_<student>_attempt_<timestamp>_<file>``,
  the example of nbgrader's documentation, where the student id is everything between the assignment's name
  and ``_attempt_``, underscores included), or nbgrader's folder layout inside the archive;
- ``canvas``: the zip of Canvas's "Download Submissions" (or the folder it was extracted to). Canvas names
  each file ``<name>[_LATE]_<user id>_<file id>_<uploaded file name>`` (``anon_<id>`` instead of ``<name>_<user
  id>`` when grading is anonymous); a re-uploaded file gets ``-1``, ``-2``... before its extension. The
  student id is the Canvas user id (the name is only logged);
- ``moodle``: the zip of Moodle's "Download all submissions" (or its extracted folder):
  ``<Full Name>_<participant id>_assignsubmission_file_/<file>`` (one folder per student, Moodle 3.1+) or
  ``<Full Name>_<participant id>_assignsubmission_file_<file>`` (flat). The student id is Moodle's
  participant id for the assignment (Moodle replaces ``_`` in names, so the parse is unambiguous).

Rules, whatever the format: two members that give the same student id but differ in what comes before it
(a pattern that cut ids short) stop the command with an error naming them, never merged. Two files of one
student with the same name: the newer one (by the archive's timestamp, or Canvas's upload number) is graded
and the log says which and why; with no way to tell, that student is not graded (status ``invalid``, with
the reason). A member with an unsafe name (absolute, ``..``, a drive letter, control characters), a
symbolic link, a device: never read, and an ``invalid`` row says why. Every student the input names gets
a row; a member that names no student gets one under its own name (never written to the gradebook).
Archives are never extracted to disk; files are read with size limits.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

log = logging.getLogger("autograder")

LMS_FORMATS = ("nbgrader", "canvas", "moodle")
MAX_FILE = 64 << 20
MAX_STUDENT = 256 << 20
MAX_ARCHIVE = 2 << 30
_STUDENT_ID = re.compile(r"[^\x00-\x1f\x7f/\\]{1,128}")


def default_zip_regexp(assignment: str) -> str:
    """nbgrader's documented example (``ps1_bitdiddle_attempt_2016-01-30-15-00-00_problem1.ipynb``), with
    the student id running from after the assignment's name (or the first ``_``) to the first ``_attempt_``."""
    return (r"^(?:.*/)?(?:" + re.escape(assignment) + r"|[^_/]*)_(?P<student_id>[^/]+?)_attempt_"
            r"(?P<timestamp>[0-9\-]+)_(?P<file_id>[^/]+)$")

_CANVAS = re.compile(r"^(?:(?P<name>.*?)_)??(?:(?P<late>LATE)_)?(?P<uid>\d+|anon_[A-Za-z0-9]+)_(?P<fid>\d+)_"
                     r"(?P<file>[^/]+)$")
_MOODLE = re.compile(r"^(?P<name>[^/_]*)_(?P<uid>\d+)_assign(?P<area>submission|feedback)_(?P<plugin>[a-z0-9]+)_"
                     r"(?:/(?P<sub>.+)|(?P<flat>[^/]+))$")


class CollectionError(ValueError):
    """The input cannot be read as asked without merging or renaming students: nothing is graded."""


@dataclass
class Submission:
    student: str
    files: dict = field(default_factory=dict)      # notebook file name -> bytes
    timestamp: str | None = None
    origin: str = ""
    problems: list = field(default_factory=list)   # notes for the reason column
    invalid: str | None = None                     # set when files were refused and none is left to grade
    identified: bool = True                        # False: a row for something that names no student
    display: str = ""                              # the LMS's name for the student (logged, not written out)
    late: bool = False                             # the LMS marked the submission late (Canvas's _LATE_)

    def content_hash(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        h.update(b"\0invalid:" + (self.invalid or "").encode())
        return h.hexdigest()

    def refuse(self, what: str) -> None:
        self.problems.append(what)


def valid_student_id(s: str) -> bool:
    return bool(_STUDENT_ID.fullmatch(s)) and not s.startswith(".") and s.strip() == s


def _printable(s: str, n: int = 200) -> str:
    s = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in s)
    return s if len(s) <= n else s[: n - 3] + "..."


# ---------------------------------------------------------------------------------------------- members
@dataclass
class Member:
    """One entry of an archive or of an extracted folder, not read yet."""

    name: str                    # relative path, '/' separated, as the archive or folder gives it
    kind: str                    # file | link | dir | other
    size: int = 0
    when: datetime | None = None
    opener: object = None        # () -> bytes | None (read with the size limit)

    def read(self) -> bytes | None:
        return self.opener() if self.opener else None


def unsafe_name(name: str) -> str | None:
    """Why an archive member's name is unsafe to use, or None."""
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "control characters in the name"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "an absolute path"
    parts = re.split(r"[/\\]", name)
    if ".." in parts:
        return "a '..' component"
    if "\\" in name:
        return "a backslash in the name"
    return None


def zip_members(path: Path) -> list:
    zf = zipfile.ZipFile(path)
    out = []
    for info in zf.infolist():
        mode = info.external_attr >> 16
        fmt = stat.S_IFMT(mode)
        if info.is_dir() or fmt == stat.S_IFDIR:
            kind = "dir"
        elif fmt == stat.S_IFLNK:
            kind = "link"
        elif fmt in (0, stat.S_IFREG):
            kind = "file"
        else:
            kind = "other"
        try:
            when = datetime(*info.date_time)
        except ValueError:
            when = None

        def opener(info=info):
            if info.file_size > MAX_FILE:
                return None
            with zf.open(info) as f:
                data = f.read(MAX_FILE + 1)
            return data if len(data) <= MAX_FILE else None

        out.append(Member(info.filename, kind, info.file_size, when, opener))
    return out


def folder_members(root: Path) -> list:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for d in list(dirnames):
            p = Path(dirpath) / d
            if p.is_symlink():
                out.append(Member(str(p.relative_to(root)).replace(os.sep, "/"), "link"))
                dirnames.remove(d)
        for f in filenames:
            p = Path(dirpath) / f
            rel = str(p.relative_to(root)).replace(os.sep, "/")
            try:
                st = os.lstat(p)
            except OSError:
                continue
            kind = "link" if stat.S_ISLNK(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
            out.append(Member(rel, kind, st.st_size, datetime.fromtimestamp(st.st_mtime, timezone.utc).replace(tzinfo=None),
                              (lambda p=p: _read_regular(p, MAX_FILE))))
    return sorted(out, key=lambda m: m.name)


def _read_regular(path: Path, limit: int) -> bytes | None:
    """Bytes of a regular file, never following a symlink; None if it is not one or is too large."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, total = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            total += len(b)
            if total > limit:
                return None
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------- parsing names
@dataclass
class Parsed:
    student: str
    file: str                    # the notebook's file name as the student meant it
    identity: str                # everything the name says up to the student id (for the merge guard)
    timestamp: datetime | None = None
    order: int = 0               # a later upload of the same file name (Canvas's -N) sorts after
    display: str = ""
    late: bool = False           # Canvas's LATE marker


def _parse_nbgrader(name: str, regexp: re.Pattern, assignment: str, layout: bool = True) -> Parsed | None:
    for candidate in (name, name.rsplit("/", 1)[-1]):
        m = regexp.match(candidate)
        if m and m.groupdict().get("student_id") and m.groupdict().get("file_id"):
            file_id = m.group("file_id")
            file_name = os.path.splitext(file_id.rsplit("/", 1)[-1])[0] + os.path.splitext(name)[1]
            when = None
            ts = m.groupdict().get("timestamp")
            if ts:
                from nbgrader.utils import parse_utc

                try:
                    when = parse_utc(ts).replace(tzinfo=None)
                except Exception:  # noqa: BLE001
                    when = None
            return Parsed(m.group("student_id"), file_name, candidate[: m.end("student_id")], when)
    if not layout:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if parts and parts[0] == "submitted":
        parts = parts[1:]
    if len(parts) == 3 and parts[1] == assignment:
        return Parsed(parts[0], parts[2], parts[0])
    if len(parts) == 2:
        return Parsed(parts[0], parts[1], parts[0])
    return None


def _parse_canvas(name: str, notebooks) -> Parsed | None:
    base = name.rsplit("/", 1)[-1]
    m = _CANVAS.match(base)
    if not m:
        return None
    file_name, order = m.group("file"), 0
    r = re.fullmatch(r"(?P<stem>.+)-(?P<n>\d+)(?P<ext>\.[A-Za-z0-9]+)", file_name)
    if r and (r.group("stem") + r.group("ext")) in set(notebooks or ()):
        file_name, order = r.group("stem") + r.group("ext"), int(r.group("n"))   # Canvas's re-upload suffix
    display = (m.group("name") or "") + (" (late)" if m.group("late") else "")
    return Parsed(m.group("uid"), file_name, f"{m.group('name') or ''}_{m.group('uid')}", None, order, display,
                  late=bool(m.group("late")))


def _parse_moodle(name: str) -> tuple[Parsed | None, bool]:
    """``(parsed, counts)``: ``counts`` is False for Moodle's other areas (online text, feedback files)."""
    for candidate in [name] + [name.split("/", k)[-1] for k in range(1, name.count("/") + 1)]:
        m = _MOODLE.match(candidate)
        if m:
            path = m.group("sub") or m.group("flat")
            counts = m.group("area") == "submission" and m.group("plugin") == "file"
            return Parsed(m.group("uid"), path.rsplit("/", 1)[-1], f"{m.group('name')}_{m.group('uid')}",
                          display=m.group("name")), counts
    return None, False


# ---------------------------------------------------------------------------------------------- collecting
def collect(path: Path, assignment: str, named_regexp: str | None = None, *, lms: str = "nbgrader",
            notebooks=()) -> dict:
    """``{student: Submission}`` from a folder or an archive (see the module's docstring)."""
    path = Path(path)
    if lms not in LMS_FORMATS:
        raise CollectionError(f"unknown --lms {lms!r} (one of {', '.join(LMS_FORMATS)})")
    if path.is_dir() and lms == "nbgrader":
        return from_folder(path, assignment)
    if path.is_dir():
        members = folder_members(path)
        origin = str(path)
    elif path.is_file() and zipfile.is_zipfile(path):
        members = zip_members(path)
        origin = path.name
    elif not path.exists():
        raise CollectionError(f"{path} does not exist")
    else:
        raise CollectionError(f"{path} is neither a folder nor a zip archive")
    return from_members(members, assignment, lms=lms, named_regexp=named_regexp, notebooks=notebooks, origin=origin)


def from_members(members: list, assignment: str, *, lms: str, named_regexp: str | None, notebooks=(),
                 origin: str = "") -> dict:
    regexp = None
    if lms == "nbgrader":
        try:
            regexp = re.compile(named_regexp or default_zip_regexp(assignment))
        except re.error as exc:
            raise CollectionError(f"--zip-regexp is not a valid regular expression: {exc}") from None
        if "student_id" not in regexp.groupindex or "file_id" not in regexp.groupindex:
            raise CollectionError("--zip-regexp must have the named groups (?P<student_id>...) and (?P<file_id>...), "
                                  "like nbgrader's FileNameCollectorPlugin.named_regexp")
    out: dict[str, Submission] = {}
    identities: dict[str, tuple] = {}      # student -> (identity, member) of the first member naming them
    chosen: dict[tuple, tuple] = {}        # (student, file) -> (member, parsed)
    total = 0

    def sub_for(student: str, member: Member, parsed: Parsed | None) -> Submission:
        s = out.get(student)
        if s is None:
            s = out[student] = Submission(student, origin=f"{origin}:{member.name}",
                                          display=parsed.display if parsed else "")
        return s

    for m in members:
        if m.kind == "dir":
            continue
        base = m.name.rstrip("/").rsplit("/", 1)[-1]
        if "__MACOSX" in m.name.split("/") or base.startswith("."):
            continue
        counts = True
        why_unsafe = unsafe_name(m.name)
        if lms == "canvas":
            parsed = _parse_canvas(m.name, notebooks)
        elif lms == "moodle":
            parsed, counts = _parse_moodle(m.name)
        else:   # an unsafe path is never read as nbgrader's <student>/<assignment>/<file> folders
            parsed = _parse_nbgrader(m.name, regexp, assignment, layout=not why_unsafe)
        is_notebook = m.name.endswith(".ipynb")
        if parsed is None:
            if is_notebook or why_unsafe or m.kind != "file":
                key = _printable(m.name)
                if key not in out:
                    why = why_unsafe and f"its name is unsafe ({why_unsafe})"
                    why = why or (f"it is a {'symbolic link' if m.kind == 'link' else 'special file'}"
                                  if m.kind != "file" else None)
                    why = why or f"its name does not say which student it belongs to (as --lms {lms} reads names)"
                    out[key] = Submission(key, origin=f"{origin}:{m.name}", identified=False,
                                          invalid=f"{_printable(m.name)}: not graded: {why}")
                    log.warning("%s: %s", _printable(m.name), out[key].invalid)
            else:
                log.info("ignored %s (names no student)", _printable(m.name))
            continue
        student = parsed.student
        if not valid_student_id(student):
            key = _printable(student)
            s = out.setdefault(key, Submission(key, origin=f"{origin}:{m.name}", identified=False))
            s.invalid = (f"{_printable(m.name)}: {_printable(student)!r} is not a valid student id (empty, a leading "
                         "'.', '/', '\\' or control characters): not graded")
            log.warning("%s", s.invalid)
            continue
        seen = identities.get(student)
        if seen is None:
            identities[student] = (parsed.identity, m.name)
        elif seen[0] != parsed.identity:
            raise CollectionError(
                f"two archive members give the same student id {student!r} but name different students: "
                f"{_printable(seen[1])!r} and {_printable(m.name)!r} (as --lms {lms} reads them"
                + (f" with the pattern {regexp.pattern!r}" if regexp is not None else "")
                + "). The pattern cuts student ids short; nothing was graded. Give a --zip-regexp whose "
                "(?P<student_id>...) group takes the whole id.")
        sub = sub_for(student, m, parsed)
        sub.late = sub.late or parsed.late
        if why_unsafe or m.kind != "file":
            why = f"its name is unsafe ({why_unsafe})" if why_unsafe else (
                "it is a symbolic link" if m.kind == "link" else "it is not a regular file")
            sub.refuse(f"{_printable(m.name)} was not read: {why}")
            log.warning("%s: %s was not read: %s", student, _printable(m.name), why)
            continue
        if not counts:
            continue
        if not is_notebook:
            sub.problems.append(f"{_printable(parsed.file)} ignored (not a notebook)")
            continue
        key = (student, parsed.file)
        if key in chosen:
            old_m, old_p = chosen[key]
            new_rank = (parsed.timestamp or m.when, parsed.order)
            old_rank = (old_p.timestamp or old_m.when, old_p.order)
            if None in (new_rank[0], old_rank[0]) or new_rank == old_rank:
                sub.invalid = (f"two files for {_printable(parsed.file)} ({_printable(old_m.name)} and "
                               f"{_printable(m.name)}) and nothing tells which is newer: not graded")
                log.warning("%s: %s", student, sub.invalid)
                continue
            newer, older = (m, old_m) if new_rank > old_rank else (old_m, m)
            log.info("%s: two files for %s: graded %s (%s), not %s (%s): the newer one", student, parsed.file,
                     _printable(newer.name), _rank_text(max(new_rank, old_rank)), _printable(older.name),
                     _rank_text(min(new_rank, old_rank)))
            sub.problems.append(f"older copy of {_printable(parsed.file)} ignored: {_printable(older.name)}")
            if newer is old_m:
                continue
        if m.size > MAX_FILE or total + m.size > MAX_ARCHIVE:
            sub.refuse(f"{_printable(parsed.file)} ignored (larger than {MAX_FILE >> 20} MiB)")
            continue
        data = m.read()
        if data is None:
            sub.refuse(f"{_printable(parsed.file)} ignored (larger than {MAX_FILE >> 20} MiB, or unreadable)")
            continue
        total += len(data)
        chosen[key] = (m, parsed)
        sub.files[parsed.file] = data
        when = parsed.timestamp or m.when
        if when is not None and (sub.timestamp is None or str(when) > sub.timestamp):
            sub.timestamp = str(when)
    for s in out.values():
        if s.invalid and s.identified:
            s.files = {}   # refused as a whole: two indistinguishable copies
        elif not s.files and s.identified and any("was not read" in p for p in s.problems):
            s.invalid = "; ".join(p for p in s.problems if "was not read" in p)
    for s in out.values():
        if s.display:
            log.info("%s: %s (%s)", s.student, _printable(s.display), lms)
    return out


def _rank_text(rank) -> str:
    when, order = rank
    parts = []
    if when is not None:
        parts.append(f"{when:%Y-%m-%d %H:%M:%S}")
    if order:
        parts.append(f"upload #{order + 1}")
    return ", ".join(parts) or "?"


def from_folder(root: Path, assignment: str) -> dict:
    """nbgrader's ``submitted/`` layout."""
    root = Path(root)
    if (root / "submitted").is_dir() and not (root / assignment).is_dir():
        root = root / "submitted"
    out = {}
    for student_dir in sorted(root.iterdir()):
        name = student_dir.name
        if student_dir.is_symlink():
            sub = Submission(_printable(name), origin=str(student_dir), identified=valid_student_id(name))
            sub.invalid = f"the folder {_printable(name)} is a symbolic link: not followed, not graded"
            log.warning("%s", sub.invalid)
            out[sub.student] = sub
            continue
        if not student_dir.is_dir():
            if name.endswith(".ipynb"):
                log.warning("%s lies directly in %s, outside any student's folder: ignored", _printable(name), root)
            continue
        if name.startswith("."):
            continue
        if not valid_student_id(name):
            sub = Submission(_printable(name), origin=str(student_dir), identified=False)
            sub.invalid = f"{_printable(name)!r} is not a valid student id (control characters?): not graded"
            log.warning("%s", sub.invalid)
            out[sub.student] = sub
            continue
        sub = Submission(name, origin=str(student_dir))
        adir = student_dir / assignment
        if adir.is_symlink() or (adir.exists() and not adir.is_dir()):
            sub.invalid = f"{assignment} is not a folder (a symbolic link or a file): not graded"
            out[name] = sub
            continue
        if not adir.exists():
            continue  # this student has nothing for this assignment
        total = 0
        refused = []
        for p in sorted(adir.iterdir()):
            if p.name == "timestamp.txt":
                data = _read_regular(p, 4096)
                if data:
                    sub.timestamp = data.decode("utf-8", "replace").strip()[:64] or None
                continue
            if not p.name.endswith(".ipynb"):
                continue
            data = _read_regular(p, MAX_FILE)
            if data is None:
                why = "a symbolic link" if p.is_symlink() else f"not a regular file, or larger than {MAX_FILE >> 20} MiB"
                refused.append(f"{_printable(p.name)} ignored ({why}: not a regular file)")
                continue
            total += len(data)
            if total > MAX_STUDENT:
                sub.problems.append("too much data submitted; the rest was ignored")
                break
            sub.files[p.name] = data
        sub.problems.extend(refused)
        if refused and not sub.files:
            sub.invalid = "; ".join(refused)
        out[name] = sub
    return out


def from_archive(path: Path, assignment: str, named_regexp: str | None = None) -> dict:
    """An nbgrader-style archive (kept for callers of the old API)."""
    return collect(path, assignment, named_regexp, lms="nbgrader")
