"""Collect submissions from a folder in nbgrader's layout or from an LMS archive, without trusting them.

- folder: ``<dir>/<student>/<assignment>/*.ipynb`` (``<dir>`` is nbgrader's ``submitted/``, or a folder that
  holds one); nbgrader's ``timestamp.txt`` is read when present;
- archive (``.zip``): files named the way nbgrader's ``zip_collect`` expects, matched with the same
  ``FileNameCollectorPlugin`` and a ``named_regexp`` (default: ``..._<student>_attempt_<timestamp>_<file>``,
  as in nbgrader's documentation); folders inside the archive in nbgrader's layout work too. When a student
  submitted the same file more than once, the newest timestamp wins (``zip_collect``'s rule).

Files are read into memory with size limits; symbolic links, devices and anything that is not a regular
file are ignored (a symlink to the gradebook is not a submission); archives are never extracted to disk.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("autograder")

DEFAULT_ZIP_REGEXP = (r"^(?:.*[/_])?(?P<student_id>[^/_]+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>[^/]+)$")
MAX_FILE = 64 << 20
MAX_STUDENT = 256 << 20
MAX_ARCHIVE = 2 << 30
_STUDENT_ID = re.compile(r"[^\x00-\x1f\x7f/\\]{1,128}")


@dataclass
class Submission:
    student: str
    files: dict = field(default_factory=dict)      # notebook file name -> bytes
    timestamp: str | None = None
    origin: str = ""
    problems: list = field(default_factory=list)

    def content_hash(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        return h.hexdigest()


def valid_student_id(s: str) -> bool:
    return bool(_STUDENT_ID.fullmatch(s)) and not s.startswith(".") and s.strip() == s


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


def from_folder(root: Path, assignment: str) -> dict:
    root = Path(root)
    if (root / "submitted").is_dir() and not (root / assignment).is_dir():
        root = root / "submitted"
    out = {}
    for student_dir in sorted(root.iterdir()):
        if student_dir.is_symlink() or not student_dir.is_dir():
            continue
        student = student_dir.name
        if not valid_student_id(student):
            log.warning("skipping %r: not a valid student id", student)
            continue
        sub = Submission(student, origin=str(student_dir))
        adir = student_dir / assignment
        if adir.is_symlink() or not adir.is_dir():
            if not adir.exists() and not adir.is_symlink():
                continue  # this student has nothing for this assignment
            sub.problems.append(f"{assignment} is not a folder")
            out[student] = sub
            continue
        total = 0
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
                sub.problems.append(f"{p.name} ignored (not a regular file, or larger than {MAX_FILE >> 20} MiB)")
                continue
            total += len(data)
            if total > MAX_STUDENT:
                sub.problems.append("too much data submitted; the rest was ignored")
                break
            sub.files[p.name] = data
        out[student] = sub
    return out


def from_archive(path: Path, assignment: str, named_regexp: str = DEFAULT_ZIP_REGEXP) -> dict:
    from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
    from nbgrader.utils import parse_utc

    plugin = FileNameCollectorPlugin(named_regexp=named_regexp)
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    out: dict[str, Submission] = {}
    stamps: dict = {}
    total = 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename
            mode = info.external_attr >> 16
            if info.is_dir() or stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # links, devices...
                continue
            if "__MACOSX" in name or Path(name).name.startswith("."):
                continue
            ext = os.path.splitext(name)[1]
            if ext != ".ipynb":
                continue
            student, file_name, ts = _identify(name, assignment, plugin)
            if student is None:
                log.warning("archive member %r: cannot tell which student it belongs to; skipped", name)
                continue
            if not valid_student_id(student):
                log.warning("archive member %r: %r is not a valid student id; skipped", name, student)
                continue
            sub = out.setdefault(student, Submission(student, origin=f"{path.name}:{name}"))
            if info.file_size > MAX_FILE or total + info.file_size > MAX_ARCHIVE:
                sub.problems.append(f"{file_name} ignored (larger than {MAX_FILE >> 20} MiB)")
                continue
            with zf.open(info) as f:
                data = f.read(MAX_FILE + 1)
            if len(data) > MAX_FILE:
                sub.problems.append(f"{file_name} ignored (larger than {MAX_FILE >> 20} MiB)")
                continue
            total += len(data)
            when = None
            if ts:
                try:
                    when = parse_utc(ts)
                except Exception:  # noqa: BLE001
                    when = None
            key = (student, file_name)
            if key in stamps:
                old = stamps[key]
                if when is None or (old is not None and when < old):
                    log.info("%s: older or undated copy of %s skipped", student, file_name)
                    continue
            stamps[key] = when
            sub.files[file_name] = data
            if when is not None and (sub.timestamp is None or str(when) > sub.timestamp):
                sub.timestamp = str(when)
    return out


def _identify(name: str, assignment: str, plugin) -> tuple:
    """``(student, file name, timestamp)`` of an archive member, by nbgrader's regexp or folder layout."""
    info = plugin.collect(name)
    if info is None:
        info = plugin.collect(Path(name).name)
    if info and info.get("student_id") and info.get("file_id"):
        file_name = os.path.splitext(Path(info["file_id"]).name)[0] + os.path.splitext(name)[1]
        return info["student_id"], file_name, info.get("timestamp")
    parts = [p for p in Path(name).parts if p not in ("", ".")]
    if parts and parts[0] == "submitted":
        parts = parts[1:]
    if len(parts) == 3 and parts[1] == assignment:
        return parts[0], parts[2], None
    if len(parts) == 2:
        return parts[0], parts[1], None
    return None, None, None


def collect(path: Path, assignment: str, named_regexp: str = DEFAULT_ZIP_REGEXP) -> dict:
    """``{student: Submission}`` from a folder or an archive."""
    path = Path(path)
    if path.is_dir():
        return from_folder(path, assignment)
    if zipfile.is_zipfile(path):
        return from_archive(path, assignment, named_regexp)
    raise ValueError(f"{path} is neither a folder nor a zip archive")
