"""The jail a submission runs in: bubblewrap's mounts and namespaces, the environment, the limits, the user id, the
check that the sandbox imports the same course package as the grader, and starting the driver in it (a cold start).

Isolation (``mode="bwrap"``, needs Debian's ``bubblewrap`` package):

- new PID, network, IPC and UTS namespaces: the submission sees only its own processes, has no network
  (loopback only, not connected to the host's), and everything it started dies with it;
- a new mount namespace holding ONLY: ``/usr`` (and the ``/lib``... links), the Python installation and
  virtual environment, the course package, the driver, all read-only; fresh size-limited tmpfs for the
  working folder (the notebook and the files the assignment ships, nothing else), ``/tmp`` and ``/dev/shm``.
  The course's ``solutions/``, the gradebook, other students' submissions are simply not there;
- when the grader runs as root, the driver switches to a user id of its own per worker slot (no
  capabilities, ``no_new_privs``), so the process-count limit counts only this submission's processes; the driver
  then gives itself a user namespace and an IPC namespace of its own (see ``_driver._private_namespaces``);
- rlimits set by the driver before any student code (:class:`Limits`, sent in the setup message): address space,
  processes, file size, open files, CPU time, no core files; the wall-clock and memory limits are watched from
  outside (:mod:`autograder.session`).

Without bubblewrap (``mode="none"``, or ``auto`` when it is missing or does not work) the grader still runs
each submission in its own session with the same rlimits and (as root) its own user id, kills the session
and that user's processes at the end, and gives it a fresh working folder; but the submission CAN read any
file the grader's user can read (solutions, gradebook) and CAN use the network. A loud warning says so
(:meth:`Jail.announce`); ``--require-sandbox`` refuses to grade instead.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .course import Profile, load_profile

log = logging.getLogger("autograder")

DRIVER = Path(__file__).with_name("_driver.py")
IN_SANDBOX_DRIVER = "/opt/autograder/_driver.py"
IN_SANDBOX_MPL = "/opt/autograder/mplcache"
HOME = "/home/student"
# No user site-packages, no .pyc files, and (3.11+) the driver's folder not on sys.path. Not -I: the environment
# is set entirely by the grader, and PYTHONHASHSEED=0 must apply (the same submission, the same result).
PY_FLAGS = ["-s", "-B"] + (["-P"] if sys.version_info >= (3, 11) else [])


@dataclass
class Limits:
    cell_seconds: float = 120.0
    notebook_seconds: float = 600.0
    memory_bytes: int = 4 << 30        # address space of each process (RLIMIT_AS)
    tree_rss_bytes: int = 6 << 30      # resident memory of the whole submission
    nproc: int = 64                    # processes and threads of the submission
    file_bytes: int = 256 << 20        # largest file it may write
    disk_bytes: int = 512 << 20        # its working folder (tmpfs)
    open_files: int = 1024
    output_chars: int = 20000          # printed text kept per cell (the rest is counted, not kept)
    event_bytes: int = 96 << 20        # reported data per notebook
    interrupt_grace: float = 5.0       # seconds a cell gets to stop after SIGINT

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def rlimits(self) -> dict:
        """What the driver sets with ``setrlimit`` before any student code."""
        return {"nproc": self.nproc, "memory_bytes": self.memory_bytes, "file_bytes": self.file_bytes,
                "open_files": self.open_files, "cpu_seconds": int(self.notebook_seconds * 2 + 60)}


class PackageMismatch(RuntimeError):
    """The sandboxed interpreter would import another copy of the course package than the grader's."""


@dataclass
class Started:
    """A driver process that was just started, and what the session needs to know about how."""

    proc: object                       # subprocess.Popen, or a warm sandbox's stand-in (autograder.warm.WarmProc)
    event_fd: int                      # the event pipe's number in the driver's process
    home: str                          # the driver's home folder (its working folder is below it)
    wrapped: bool = False              # ``proc`` is bubblewrap: the driver is one of its descendants
    tmp_home: str | None = None        # a folder made on the host for this run (no bubblewrap), removed after it
    t0: float = field(default_factory=time.monotonic)   # when it started (a warm sandbox's own start not counted)


def bwrap_works() -> tuple[bool, str]:
    """``(True, path of bwrap)`` if bubblewrap can make its namespaces here, else ``(False, why not)``."""
    exe = shutil.which("bwrap")
    if not exe:
        return False, "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    args = [exe, "--ro-bind", "/usr", "/usr", *usr_links(), "--proc", "/proc", "--dev", "/dev",
            "--unshare-pid", "--unshare-net", "--die-with-parent"]
    if os.getuid() != 0:
        args.append("--unshare-user")
    args += ["/usr/bin/true"]
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap failed to start: {exc}"
    if r.returncode != 0:
        return False, f"bwrap cannot create namespaces here: {r.stderr.strip()[:300]}"
    return True, exe


def usr_links() -> list:
    """bubblewrap arguments for ``/bin``, ``/lib``...: links into ``/usr`` where the system has them."""
    out = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            out += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            out += ["--ro-bind", str(p), str(p)]
    return out


def package_files(roots: list, pattern: str = "*.py") -> dict:
    """``{path inside its folder: bytes}`` of the files matching ``pattern`` in package folders (a root that is a
    file stands for itself); ``__pycache__`` left out."""
    out = {}
    for root in roots:
        r = Path(root)
        for f in ([r] if r.is_file() else sorted(r.rglob(pattern))):
            if "__pycache__" not in f.parts and f.is_file():
                out[str(f.relative_to(r)) if r.is_dir() else f.name] = f.read_bytes()
    return out


def same_tree(a: list, b: list) -> bool:
    """Whether two lists of package folders hold the same Python files, byte for byte."""
    try:
        return package_files(a) == package_files(b)
    except OSError:
        return False


_PROBE = ("import importlib.util, json, sys\nout = {}\nfor name in sys.argv[1:]:\n"
          "    try:\n        spec = importlib.util.find_spec(name)\n    except Exception:\n        spec = None\n"
          "    out[name] = None if spec is None else list(spec.submodule_search_locations or [spec.origin])\n"
          "print(json.dumps(out))\n")


class Jail:
    """How this machine isolates a submission (bubblewrap, or nothing but limits), built once per grading run."""

    def __init__(self, mode: str = "auto", *, profile: Profile | None = None, uid_base: int | None = None,
                 cache_dir: Path | None = None, env: dict | None = None):
        self.profile = profile if profile is not None else load_profile()
        self.extra_env = dict(env or {})
        self.is_root = os.getuid() == 0
        self.uid_base = uid_base if uid_base is not None else 2_000_000 + (os.getpid() % 5000) * 100
        # AUTOGRADER_PRIVATE_NAMESPACES=0: submissions run without a user namespace of their own, as where the kernel
        # refuses one (for the tests of that fallback)
        self.private_namespaces = os.environ.get("AUTOGRADER_PRIVATE_NAMESPACES", "1") != "0"
        self.cache_dir = Path(cache_dir or tempfile.mkdtemp(prefix="autograder-cache-")).resolve()
        self.mode, self.bwrap, self.warnings = self._choose(mode)
        self.package_paths = self._resolve_packages()
        self.mpl_cache = self._prepare_mpl_cache()

    # ------------------------------------------------------------------ what isolation there is
    def _choose(self, mode: str) -> tuple:
        """``(mode, bwrap path or None, warnings)``; a mode that cannot be had raises."""
        if mode not in ("auto", "bwrap", "none"):
            raise ValueError(f"unknown sandbox mode {mode!r}")
        warnings = []
        if mode in ("auto", "bwrap"):
            ok, info = bwrap_works()
            if ok:
                return "bwrap", info, warnings
            if mode == "bwrap":
                raise RuntimeError(f"sandbox required but unavailable: {info}")
            warnings.append(f"NO SANDBOX: {info}.")
        else:
            warnings.append("NO SANDBOX: disabled by the caller.")
        warnings.append(
            "Submissions run WITHOUT filesystem or network isolation: student code can read every file this "
            "user can read (solutions, hidden tests, the gradebook, other submissions) and reach the network. "
            + ("They do run as a separate user id with resource limits." if self.is_root else
               "They run as YOUR user, so they can also write what you can write, and the process limit counts "
               "your own processes.")
            + " Install bubblewrap (apt-get install bubblewrap) before grading untrusted submissions.")
        return "none", None, warnings

    def announce(self, slots: int) -> None:
        """Log the isolation in use, and shout every warning about it on the terminal (the NO SANDBOX banner)."""
        for w in self.warnings:
            log.warning(w)
            print(f"\n{'!' * 100}\nWARNING: {w}\n{'!' * 100}\n", file=sys.stderr)
        log.info("sandbox: %s", self.mode)
        if self.is_root:
            log.info("submissions run as user ids %d-%d", self.uid_base, self.uid_base + max(1, slots) - 1)

    def uid(self, slot: int) -> int | None:
        """The user id of a worker slot's submissions (None when the grader is not root: its own)."""
        return self.uid_base + slot if self.is_root else None

    # ------------------------------------------------------------------ what the sandbox holds
    def _prepare_mpl_cache(self) -> Path | None:
        """Build matplotlib's font cache once, so each sandbox copies it instead of scanning fonts."""
        target = self.cache_dir / "mplcache"
        if any(target.glob("fontlist-*.json")):
            return target
        target.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, MPLCONFIGDIR=str(target), MPLBACKEND="Agg")
        try:
            subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, capture_output=True,
                           timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return None
        os.chmod(target, 0o755)
        for f in target.iterdir():
            os.chmod(f, 0o755 if f.is_dir() else 0o644)
        return target if any(target.glob("fontlist-*.json")) else None

    def _resolve_packages(self) -> dict:
        """``{package: [folders]}`` that the interpreter which runs submissions will import the course packages
        from: asked of that interpreter itself, with the sandbox's flags and environment (an editable install
        may point at another checkout than the one the grader runs from). They must be what the grader itself
        imports (the judge recomputes checks with its own copy); if not, :class:`PackageMismatch` names both."""
        import importlib.util

        packages = list(self.profile.packages)
        if not packages:
            return {}
        try:
            r = subprocess.run([sys.executable, *PY_FLAGS, "-c", _PROBE, *packages], env=self.env("/tmp"), cwd="/",
                               capture_output=True, text=True, timeout=120)
            theirs = json.loads(r.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
            raise PackageMismatch(f"could not ask {sys.executable} where it imports {', '.join(packages)} "
                                  f"from: {exc}") from None
        out = {}
        for name in packages:
            spec = importlib.util.find_spec(name)
            mine = [str(Path(p).resolve()) for p in ((spec.submodule_search_locations or [spec.origin]) if spec else [])]
            there = [str(Path(p).resolve()) for p in (theirs.get(name) or [])]
            if not mine:
                raise PackageMismatch(f"the grader cannot import {name} ({sys.executable}): install the course "
                                      "(`make setup`, or `pip install -e .` in the course folder)")
            if not there:
                raise PackageMismatch(
                    f"the Python that runs submissions ({sys.executable}) cannot import {name}, which the grader "
                    f"imports from {', '.join(mine) or '?'}: install the course into that environment "
                    f"(`{sys.executable} -m pip install -e .` in the course folder, or `make setup`)")
            if mine != there:
                if same_tree(mine, there):
                    log.info("%s: the grader imports it from %s, submissions from %s (identical files): mounting "
                             "the latter", name, ", ".join(mine), ", ".join(there))
                else:
                    raise PackageMismatch(
                        f"the grader imports {name} from {', '.join(mine)} but the Python that runs submissions "
                        f"({sys.executable}) imports it from {', '.join(there)}, and the two differ (an editable "
                        "install made from another checkout?). Run the grader from the checkout that environment "
                        f"points at, or reinstall the course from this one (`{sys.executable} -m pip install -e .`).")
            out[name] = there
        return out

    def _ro_paths(self) -> list:
        paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
                 Path(sys.executable).resolve().parent.parent}
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                paths.add(Path(p).resolve())
        for locations in self.package_paths.values():   # where the sandboxed interpreter will import them from
            for loc in map(Path, locations):
                paths.add(loc if loc.is_dir() else loc.parent)
        usr = Path("/usr")
        paths = {p for p in paths if usr not in p.parents and p != usr}
        # keep only the outermost of nested paths
        out = []
        for p in sorted(paths, key=lambda p: len(p.parts)):
            if not any(q in p.parents for q in out):
                out.append(p)
        return out

    def bwrap_args(self, tmp_bytes: int) -> list:
        """bubblewrap's command line up to (not including) the program it runs: mounts, namespaces, capabilities."""
        args = [self.bwrap, "--ro-bind", "/usr", "/usr", *usr_links()]
        for f in ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf"):
            if os.path.exists(f):
                args += ["--ro-bind", f, f]
        if os.path.isdir("/etc/fonts"):
            args += ["--ro-bind", "/etc/fonts", "/etc/fonts"]
        # /tmp first: a tmpfs mounted after the read-only binds would hide any of them that lives under /tmp
        # (a checkout or virtual environment in /tmp, as CI clones often are).
        args += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
        dirs = set()
        binds = self._ro_paths()
        targets = [str(p) for p in binds] + [IN_SANDBOX_DRIVER, IN_SANDBOX_MPL, HOME]
        for t in targets:
            for parent in Path(t).parents:
                if str(parent) != "/":
                    dirs.add(str(parent))
        for d in sorted(dirs, key=lambda d: d.count("/")):
            args += ["--perms", "0755", "--dir", d]
        for p in binds:
            args += ["--ro-bind", str(p), str(p)]
        args += ["--ro-bind", str(DRIVER), IN_SANDBOX_DRIVER]
        if self.mpl_cache:
            args += ["--ro-bind", str(self.mpl_cache), IN_SANDBOX_MPL]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", HOME,
                 "--perms", "1777", "--size", str(64 << 20), "--tmpfs", "/dev/shm",
                 "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--die-with-parent", "--new-session", "--hostname", "grader", "--chdir", HOME, "--clearenv"]
        if self.is_root:
            args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-user", "--uid", "1000", "--gid", "1000"]
        return args

    def env(self, home: str) -> dict:
        """The whole environment of the driver (nothing of the grader's own)."""
        venv_bin = str(Path(sys.executable).parent)
        env = {"HOME": home, "PATH": f"{venv_bin}:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "USER": "student", "LOGNAME": "student", "TMPDIR": "/tmp" if self.mode == "bwrap" else home,
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/.config/matplotlib", "IPYTHONDIR": f"{home}/.ipython",
               "NBGRADER_EXECUTION": "autograde", "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONWARNINGS": "ignore::DeprecationWarning",
               "TORCH_HOME": f"{home}/.cache/torch", "XDG_CACHE_HOME": f"{home}/.cache"}
        env.update(self.profile.env)
        env.update(self.extra_env)
        return env

    def setenv_args(self, home: str) -> list:
        """The environment as bubblewrap arguments (the sandbox starts with ``--clearenv``)."""
        out = []
        for k, v in self.env(home).items():
            out += ["--setenv", k, v]
        return out

    # ------------------------------------------------------------------ a cold start
    def start(self, *, slot: int, disk_bytes: int, event_w: int) -> Started:
        """Start the driver in a fresh sandbox (a new interpreter that imports everything itself)."""
        t0 = time.monotonic()
        if self.mode == "bwrap":
            cmd = self.bwrap_args(disk_bytes) + self.setenv_args(HOME)
            cmd += [sys.executable, *PY_FLAGS, IN_SANDBOX_DRIVER]
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    pass_fds=[event_w], env={}, cwd="/")
            return Started(proc, event_w, HOME, wrapped=True, t0=t0)
        tmp_home = tempfile.mkdtemp(prefix="autograder-sub-")
        try:
            uid = self.uid(slot)
            if uid is not None:
                os.chown(tmp_home, uid, uid)
            os.chmod(tmp_home, 0o700)
            proc = subprocess.Popen([sys.executable, *PY_FLAGS, str(DRIVER)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=[event_w],
                                    env=self.env(tmp_home), start_new_session=True, cwd=tmp_home)
        except OSError:
            shutil.rmtree(tmp_home, ignore_errors=True)
            raise
        return Started(proc, event_w, tmp_home, tmp_home=tmp_home, t0=t0)

    def setup(self, started: Started, *, slot: int, workdir_name: str, files: dict, limits: Limits) -> dict:
        """The jail's part of the driver's setup message: who it becomes, its limits, its folder, what it imports
        and protects (the session adds the token and the placeholders)."""
        uid = self.uid(slot)
        mpl = (IN_SANDBOX_MPL if self.mode == "bwrap" else str(self.mpl_cache)) if self.mpl_cache else None
        return {"uid": uid, "gid": uid, "event_fd": started.event_fd,
                # alone with its own user id (a sandbox, or a user id per slot): it may read its own peak memory
                "dumpable": self.mode == "bwrap" or self.is_root,
                "workdir": f"{started.home}/{workdir_name}", "files": files,
                "copy_dirs": [{"from": mpl, "to": f"{started.home}/.config/matplotlib"}] if mpl else [],
                "limits": limits.rlimits(), "preload": list(self.profile.preload),
                "private_namespaces": self.private_namespaces,
                "preload_packages": list(self.profile.packages),
                "protected_prefixes": list(self.profile.protected_prefixes),
                "max_output_chars": limits.output_chars, "max_event_bytes": limits.event_bytes}
