"""Run one notebook plan in its own sandbox, with limits, and collect the driver's events.

Isolation (``mode="bwrap"``, needs Debian's ``bubblewrap`` package):

- new PID, network, IPC and UTS namespaces: the submission sees only its own processes, has no network
  (loopback only, not connected to the host's), and everything it started dies with it;
- a new mount namespace holding ONLY: ``/usr`` (and the ``/lib``... links), the Python installation and
  virtual environment, the course package, the driver, all read-only; fresh size-limited tmpfs for the
  working folder (the notebook and the files the assignment ships, nothing else), ``/tmp`` and ``/dev/shm``.
  The course's ``solutions/``, the gradebook, other students' submissions are simply not there;
- when the grader runs as root, the driver switches to a user id of its own per worker slot (no
  capabilities, ``no_new_privs``), so the process-count limit counts only this submission's processes;
- rlimits set by the driver before any student code: address space, processes, file size, open files,
  CPU time, no core files;
- wall-clock limits enforced from here: per cell (SIGINT first, like Jupyter's interrupt; the whole sandbox
  is killed if the cell does not stop within a grace period) and per notebook (killed); resident memory of
  the whole process tree is watched too (a fork bomb of big processes);
- at the end, the whole process tree is killed (namespace teardown), whatever it did to detach itself.

Without bubblewrap (``mode="none"``, or ``auto`` when it is missing or does not work) the grader still runs
each submission in its own session with the same rlimits and (as root) its own user id, kills the session
and that user's processes at the end, and gives it a fresh working folder; but the submission CAN read any
file the grader's user can read (solutions, gradebook) and CAN use the network. A loud warning says so;
``--require-sandbox`` refuses to grade instead.
"""
from __future__ import annotations

import json
import logging
import os
import queue
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("autograder")
# CPU seconds that finished sandboxes reported for themselves (for benchmarks only: bubblewrap's reaper does
# not pass its children's CPU time on to the grader, so the grader's own rusage misses it).
CPU_REPORTED = [0.0]
# Report lines that the grader did not ask for (a wrong token, out of turn, garbage) before the sandbox is stopped:
# a flood of them must cost the grader at most this much parsing.
MAX_FORGED_LINES = 1000

DRIVER = Path(__file__).with_name("_driver.py")
IN_SANDBOX_DRIVER = "/opt/autograder/_driver.py"
IN_SANDBOX_MPL = "/opt/autograder/mplcache"
HOME = "/home/student"
# No user site-packages, no .pyc files, and (3.11+) the driver's folder not on sys.path. Not -I: the environment
# is set entirely by the grader, and PYTHONHASHSEED=0 must apply (the same submission, the same result).
_PY_FLAGS = ["-s", "-B"] + (["-P"] if sys.version_info >= (3, 11) else [])


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


@dataclass
class Outcome:
    events: list = field(default_factory=list)
    status: str = "ok"                 # ok | timeout | crashed
    reason: str = ""
    cell_seconds: dict = field(default_factory=dict)
    interrupted: list = field(default_factory=list)   # cell indices interrupted for time
    last_cell: int | None = None
    output: str = ""                   # low-level stdout/stderr of the sandbox (capped)
    forged: int = 0                    # event lines with a wrong token or out of turn (student code writing to the pipe)
    forged_after_hidden: int = 0       # the same, once a hidden part had been sent (never shown to the student)
    wall: float = 0.0
    sent: int = 0                      # cells sent to the sandbox (each only when it was about to run)
    hidden_sent_at: int | None = None  # the cell whose hidden part was the first one sent, if any


class PackageMismatch(RuntimeError):
    """The sandboxed interpreter would import another copy of the course package than the grader's."""


def _same_tree(a: list, b: list) -> bool:
    """Whether two lists of package folders hold the same Python files, byte for byte."""
    def files(roots):
        out = {}
        for root in roots:
            r = Path(root)
            for f in ([r] if r.is_file() else sorted(r.rglob("*.py"))):
                if "__pycache__" not in f.parts:
                    out[str(f.relative_to(r)) if r.is_dir() else f.name] = f.read_bytes()
        return out

    try:
        return files(a) == files(b)
    except OSError:
        return False


def _bwrap_works() -> tuple[bool, str]:
    exe = shutil.which("bwrap")
    if not exe:
        return False, "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    args = [exe, "--ro-bind", "/usr", "/usr", *_usr_links(), "--proc", "/proc", "--dev", "/dev",
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


def _usr_links() -> list:
    out = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            out += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            out += ["--ro-bind", str(p), str(p)]
    return out


def _children(pid: int) -> list:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out += [int(x) for x in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return out


def descendants(pid: int) -> list:
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in _children(p):
            if c not in seen:
                seen.append(c)
                todo.append(c)
    return seen


def _rss(pid: int) -> int:
    """Proportional resident memory (PSS: shared pages split between their users, so forked copies of a big
    process are not counted many times), falling back to RSS."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _uid_processes(uid: int) -> list:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    out.append(int(d))
            except OSError:
                pass
    return out


class Sandbox:
    """Launches :mod:`autograder._driver` for one plan at a time per worker slot (thread-safe)."""

    def __init__(self, mode: str = "auto", *, packages=("seqcourse",), preload=("torch", "numpy"),
                 protected_prefixes=("torch", "numpy", "seqcourse", "math", "operator", "functools", "itertools",
                                     "collections", "random", "copy", "types", "abc"),
                 uid_base: int | None = None, cache_dir: Path | None = None, env: dict | None = None,
                 warm: bool = False):
        self.packages = list(packages)
        self.preload = list(preload)
        self.protected_prefixes = list(protected_prefixes)
        self.extra_env = dict(env or {})
        self.is_root = os.getuid() == 0
        self.uid_base = uid_base if uid_base is not None else 2_000_000 + (os.getpid() % 5000) * 100
        self.cache_dir = Path(cache_dir or tempfile.mkdtemp(prefix="autograder-cache-")).resolve()
        self.warnings: list[str] = []
        if mode not in ("auto", "bwrap", "none"):
            raise ValueError(f"unknown sandbox mode {mode!r}")
        if mode in ("auto", "bwrap"):
            ok, info = _bwrap_works()
            if ok:
                self.mode, self.bwrap = "bwrap", info
            elif mode == "bwrap":
                raise RuntimeError(f"sandbox required but unavailable: {info}")
            else:
                self.mode, self.bwrap = "none", None
                self.warnings.append(f"NO SANDBOX: {info}.")
        else:
            self.mode, self.bwrap = "none", None
            self.warnings.append("NO SANDBOX: disabled by the caller.")
        if self.mode == "none":
            self.warnings.append(
                "Submissions run WITHOUT filesystem or network isolation: student code can read every file this "
                "user can read (solutions, hidden tests, the gradebook, other submissions) and reach the network. "
                + ("They do run as a separate user id with resource limits." if self.is_root else
                   "They run as YOUR user, so they can also write what you can write, and the process limit counts "
                   "your own processes.")
                + " Install bubblewrap (apt-get install bubblewrap) before grading untrusted submissions.")
        self.package_paths = self._resolve_packages()
        self._mpl_cache = self._prepare_mpl_cache()
        self._lock = threading.Lock()
        self._running: set = set()
        self.aborted = False
        # warm: one long-lived sandbox per slot imports the libraries once and forks per submission (warm.py)
        self.warm = None
        if warm and self.mode == "bwrap":
            from .warm import WarmPool

            self.warm = WarmPool(self, CPU_REPORTED)

    def close(self) -> None:
        """Stop the warm sandboxes (if any)."""
        if self.warm is not None:
            self.warm.close()

    def abort(self) -> None:
        """Kill every running sandbox (Ctrl-C): their results are discarded by the caller."""
        self.aborted = True
        with self._lock:
            procs = list(self._running)
        for proc in procs:
            for p in descendants(proc.pid):
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL) if self.mode == "none" else proc.kill()
            except OSError:
                pass

    # ------------------------------------------------------------------ setup
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

    _PROBE = ("import importlib.util, json, sys\nout = {}\nfor name in sys.argv[1:]:\n"
              "    try:\n        spec = importlib.util.find_spec(name)\n    except Exception:\n        spec = None\n"
              "    out[name] = None if spec is None else list(spec.submodule_search_locations or [spec.origin])\n"
              "print(json.dumps(out))\n")

    def _resolve_packages(self) -> dict:
        """``{package: [folders]}`` that the interpreter which runs submissions will import the course packages
        from: asked of that interpreter itself, with the sandbox's flags and environment (an editable install
        may point at another checkout than the one the grader runs from). They must be what the grader itself
        imports (the judge recomputes checks with its own copy); if not, :class:`PackageMismatch` names both."""
        import importlib.util

        env = self._env("/tmp")
        try:
            r = subprocess.run([sys.executable, *_PY_FLAGS, "-c", self._PROBE, *self.packages], env=env, cwd="/",
                               capture_output=True, text=True, timeout=120)
            theirs = json.loads(r.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
            raise PackageMismatch(f"could not ask {sys.executable} where it imports {', '.join(self.packages)} "
                                  f"from: {exc}") from None
        out = {}
        for name in self.packages:
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
                if _same_tree(mine, there):
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
        for name in self.packages:   # where the sandboxed interpreter will import them from (see above)
            for loc in self.package_paths.get(name, []):
                loc = Path(loc)
                paths.add(loc if loc.is_dir() else loc.parent)
        usr = Path("/usr")
        paths = {p for p in paths if usr not in p.parents and p != usr}
        # keep only the outermost of nested paths
        out = []
        for p in sorted(paths, key=lambda p: len(p.parts)):
            if not any(q in p.parents for q in out):
                out.append(p)
        return out

    def _bwrap_args(self, tmp_bytes: int) -> list:
        args = [self.bwrap, "--ro-bind", "/usr", "/usr", *_usr_links()]
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
        if self._mpl_cache:
            args += ["--ro-bind", str(self._mpl_cache), IN_SANDBOX_MPL]
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

    def _env(self, home: str) -> dict:
        venv_bin = str(Path(sys.executable).parent)
        env = {"HOME": home, "PATH": f"{venv_bin}:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "USER": "student", "LOGNAME": "student", "TMPDIR": "/tmp" if self.mode == "bwrap" else home,
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/.config/matplotlib", "IPYTHONDIR": f"{home}/.ipython",
               "NBGRADER_EXECUTION": "autograde", "SEQCOURSE_PROGRESS": "0", "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONWARNINGS": "ignore::DeprecationWarning",
               "TORCH_HOME": f"{home}/.cache/torch", "XDG_CACHE_HOME": f"{home}/.cache"}
        env.update(self.extra_env)
        return env

    # ------------------------------------------------------------------ one run
    def run(self, cells: list, *, files: dict, workdir_name: str, limits: Limits, slot: int = 0,
            rt_placeholder: str, builtins_placeholder: str, cell_limits: list | None = None,
            labels: list | None = None) -> Outcome:
        """Execute ``cells`` (dicts for the driver) and return the events and how it ended.

        The driver gets a setup message first, then each cell only when the previous one has ended: no cell's
        code (a hidden test's least of all) is in the sandbox before its turn. Each message carries a fresh
        token; an event is accepted only with the token of the message being answered and only if it fits
        that message (a check or a test's end only for the test being run, one end per cell).
        """
        token = secrets.token_hex(16)
        uid = gid = None
        if self.is_root:
            uid = gid = self.uid_base + slot
        out = Outcome()
        zygote = self.warm.get(slot, limits.disk_bytes) if self.warm is not None else None
        r_fd, w_fd = os.pipe()
        tmp_home = None
        if self.mode == "bwrap":
            home = HOME
            cmd = self._bwrap_args(limits.disk_bytes)
            for k, v in self._env(home).items():
                cmd += ["--setenv", k, v]
            cmd += [sys.executable, *_PY_FLAGS, IN_SANDBOX_DRIVER]
            copy_dirs = [{"from": IN_SANDBOX_MPL, "to": f"{home}/.config/matplotlib"}] if self._mpl_cache else []
            env = None
        else:
            tmp_home = tempfile.mkdtemp(prefix="autograder-sub-")
            home = tmp_home
            if uid is not None:
                os.chown(tmp_home, uid, gid)
            os.chmod(tmp_home, 0o700)
            cmd = [sys.executable, *_PY_FLAGS, str(DRIVER)]
            copy_dirs = [{"from": str(self._mpl_cache), "to": f"{home}/.config/matplotlib"}] if self._mpl_cache else []
            env = self._env(home)
        plan = {"tok": token, "uid": uid, "gid": gid, "event_fd": 3 if zygote else w_fd,
                # alone with its own user id (a sandbox, or a user id per slot): it may read its own peak memory
                "dumpable": self.mode == "bwrap" or self.is_root,
                "workdir": f"{home}/{workdir_name}", "files": files, "copy_dirs": copy_dirs,
                "limits": {"nproc": limits.nproc, "memory_bytes": limits.memory_bytes,
                           "file_bytes": limits.file_bytes, "open_files": limits.open_files,
                           "cpu_seconds": int(limits.notebook_seconds * 2 + 60)},
                "preload": self.preload, "preload_packages": self.packages,
                "protected_prefixes": self.protected_prefixes,
                "rt_placeholder": rt_placeholder, "builtins_placeholder": builtins_placeholder,
                "max_output_chars": limits.output_chars, "max_event_bytes": limits.event_bytes}
        outbox: queue.Queue = queue.Queue()
        outbox.put(json.dumps(plan).encode() + b"\n")
        start = time.monotonic()
        try:
            proc = None
            if zygote is not None:
                from .warm import ZygoteError

                try:
                    proc = zygote.run(w_fd)
                except ZygoteError as exc:
                    log.warning("warm sandbox of slot %d failed (%s); this submission runs cold", slot, exc)
                    zygote.close()
                    zygote = None
                    outbox = queue.Queue()
                    outbox.put(json.dumps({**plan, "event_fd": w_fd}).encode() + b"\n")
            if proc is None:
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        pass_fds=[w_fd], env=env if env is not None else {},
                                        start_new_session=self.mode == "none", cwd=tmp_home or "/")
        except OSError as exc:
            os.close(r_fd)
            os.close(w_fd)
            out.status, out.reason = "crashed", f"the sandbox could not start: {exc}"
            return out
        os.close(w_fd)
        with self._lock:
            self._running.add(proc)

        def feed():
            try:
                while True:
                    msg = outbox.get()
                    if msg is None:
                        break
                    proc.stdin.write(msg)
                    proc.stdin.flush()
            except (OSError, ValueError):
                pass
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass

        low_output = bytearray()
        low_total = [0]

        def drain():
            while True:
                try:
                    chunk = proc.stdout.read1(65536)
                except (OSError, ValueError):
                    break
                if not chunk:
                    break
                low_total[0] += len(chunk)
                if len(low_output) < 65536:
                    low_output.extend(chunk[: 65536 - len(low_output)])

        threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=drain, daemon=True)]
        for t in threads:
            t.start()

        sel = selectors.DefaultSelector()
        sel.register(r_fd, selectors.EVENT_READ)
        buf = bytearray()
        received = 0
        current, cell_started, interrupted_at = None, None, None
        expect = {"tok": token, "i": None, "test": None, "ended": False, "ready": False, "finished": False,
                  "part": 0, "parts": 1}

        def send_next(part: int = 0):
            """Send the next cell (or, with ``part``, the next part of the current test cell; or the end of the
            plan) with a fresh token. A cell's time starts when its first part is sent."""
            nonlocal current, cell_started, interrupted_at
            tok = secrets.token_hex(16)
            expect["tok"] = tok
            if part:
                i = expect["i"]
            elif out.sent < len(cells):
                i = out.sent
                out.sent += 1
                current, cell_started, interrupted_at = i, time.monotonic(), None
                out.last_cell = i
            else:
                outbox.put(json.dumps({"end": True, "tok": tok}).encode() + b"\n")
                expect.update(i=None, test=None, ended=True, finished=True)
                return
            c = cells[i]
            msg = {k: v for k, v in c.items() if k in ("kind", "code", "code_b64", "filename", "grade_id", "hide")}
            parts = c.get("parts")
            if parts:
                msg.update(parts[part])
                msg.update(part=part, last=part == len(parts) - 1)
                if parts[part].get("hidden") and out.hidden_sent_at is None:
                    out.hidden_sent_at = i
            msg.update(i=i, tok=tok)
            expect.update(i=i, test=c.get("grade_id") if c.get("kind") == "test" else None, ended=False,
                          part=part, parts=len(parts) if parts else 1)
            outbox.put(json.dumps(msg).encode() + b"\n")

        def accept(ev) -> bool:
            """Whether an event is the answer to the message being run (see the docstring)."""
            if ev.get("tok") != expect["tok"]:
                return False
            kind = ev.get("ev")
            if kind == "ready":
                ok = not expect["ready"] and expect["i"] is None and not expect["finished"]
                expect["ready"] = True
                return ok
            if kind == "done":
                return expect["finished"]
            if kind in ("cell_start", "cell_end", "check", "test_end", "part_end"):
                if expect["i"] is None or expect["ended"]:
                    return False
                if kind in ("cell_start", "cell_end", "part_end") and ev.get("i") != expect["i"]:
                    return False
                if kind == "part_end":
                    if ev.get("part") != expect["part"] or expect["part"] + 1 >= expect["parts"]:
                        return False
                    expect["tok"] = None   # answered: nothing more may come with this token
                    return True
                if kind in ("check", "test_end") and (expect["test"] is None or ev.get("test") != expect["test"]):
                    return False
                if kind == "cell_end":
                    expect["ended"] = True
                return True
            return False
        deadline = start + limits.notebook_seconds
        driver_pid = proc.pid if self.mode == "none" or zygote else None
        done = False
        killed_for = None
        next_mem = start + 1.0
        cell_limits = cell_limits or []
        labels = labels or []

        def name(i):
            return labels[i] if isinstance(i, int) and 0 <= i < len(labels) else f"cell {i}"

        def kill_all():
            try:
                if self.mode == "none":
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    for p in descendants(proc.pid):
                        try:
                            os.kill(p, signal.SIGKILL)
                        except OSError:
                            pass
                    proc.kill()
            except OSError:
                pass
            if self.mode == "none" and uid is not None:
                for p in _uid_processes(uid):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass

        try:
            eof = False
            while not eof:
                now = time.monotonic()
                timeout = max(0.0, min(deadline, next_mem) - now)
                if current is not None:
                    lim = cell_limits[current] if current < len(cell_limits) else limits.cell_seconds
                    if interrupted_at is None:
                        timeout = min(timeout, max(0.0, cell_started + lim - now))
                    else:
                        timeout = min(timeout, max(0.0, interrupted_at + limits.interrupt_grace - now))
                for _key, _ in sel.select(timeout=min(timeout, 1.0)):
                    try:
                        chunk = os.read(r_fd, 1 << 20)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        eof = True
                        break
                    received += len(chunk)
                    if received > limits.event_bytes:
                        killed_for = ("crashed", "the notebook reported more data than allowed "
                                      f"({limits.event_bytes >> 20} MiB)")
                        kill_all()
                        eof = True
                        break
                    if b"\n" not in chunk:
                        buf.extend(chunk)
                        continue
                    # every complete line at once (one pass over the bytes: a flood of short lines costs what its
                    # size costs, never a copy of the rest of the buffer per line)
                    lines = (bytes(buf) + chunk).split(b"\n") if buf else chunk.split(b"\n")
                    buf = bytearray(lines.pop())
                    for line in lines:
                        ev = None
                        if line:
                            try:
                                ev = json.loads(line)
                            except (ValueError, RecursionError):
                                ev = None
                        if not isinstance(ev, dict) or not accept(ev):
                            if out.hidden_sent_at is None:
                                out.forged += 1
                            else:   # chosen by code that may have read a hidden test: never shown to the student
                                out.forged_after_hidden += 1
                            if out.forged + out.forged_after_hidden > MAX_FORGED_LINES:
                                killed_for = ("crashed", f"the notebook wrote more than {MAX_FORGED_LINES} lines "
                                              "that the grader did not ask for into its report channel")
                                kill_all()
                                eof = True
                                break
                            continue
                        ev.pop("tok", None)
                        out.events.append(ev)
                        kind = ev.get("ev")
                        if kind == "ready":
                            if driver_pid is None:
                                driver_pid = find_driver(proc.pid)
                            send_next()
                        elif kind == "part_end":
                            send_next(expect["part"] + 1)
                        elif kind == "cell_end":
                            out.cell_seconds[ev["i"]] = time.monotonic() - (cell_started or start)
                            current, interrupted_at = None, None
                            send_next()
                        elif kind == "done":
                            done = True
                            if isinstance(ev.get("cpu"), (int, float)) and 0 <= ev["cpu"] < 1e6:
                                CPU_REPORTED[0] += ev["cpu"]
                    if eof:
                        break
                if eof or done:
                    break
                now = time.monotonic()
                if now >= deadline:
                    where = f" (during {name(current)})" if current is not None else ""
                    killed_for = ("timeout", f"the notebook ran longer than its limit of "
                                  f"{limits.notebook_seconds:g} s{where}")
                    kill_all()
                    break
                if current is not None:
                    lim = cell_limits[current] if current < len(cell_limits) else limits.cell_seconds
                    if interrupted_at is None and now >= cell_started + lim:
                        out.interrupted.append(current)
                        interrupted_at = now
                        if driver_pid:
                            try:
                                os.kill(driver_pid, signal.SIGINT)
                            except OSError:
                                pass
                    elif interrupted_at is not None and now >= interrupted_at + limits.interrupt_grace:
                        killed_for = ("timeout", f"{name(current)} ran longer than its limit of {lim:g} s and did "
                                      "not stop when interrupted")
                        kill_all()
                        break
                if now >= next_mem:
                    next_mem = now + 0.5
                    tree = (descendants(proc.pid) if self.mode == "bwrap" and not zygote
                            else [proc.pid] + descendants(proc.pid))
                    if sum(_rss(p) for p in tree) > limits.tree_rss_bytes:
                        killed_for = ("crashed", f"the notebook's processes used more than "
                                      f"{limits.tree_rss_bytes >> 20} MiB of memory together")
                        kill_all()
                        break
        finally:
            outbox.put(None)
            sel.close()
            os.close(r_fd)
            if not killed_for:  # let it end by itself (its exit status tells how it ended)
                try:
                    proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass
            # whatever happened, nothing of this submission survives it
            kill_all()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            for t in threads:
                t.join(timeout=5)
            with self._lock:
                self._running.discard(proc)
            if tmp_home:
                shutil.rmtree(tmp_home, ignore_errors=True)
        out.wall = time.monotonic() - start
        out.output = low_output.decode("utf-8", "replace")
        if low_total[0] > len(low_output):
            out.output += f"\n[... {low_total[0] - len(low_output)} more bytes of output not kept]"
        if killed_for:
            out.status, out.reason = killed_for
        elif done:
            out.status = "timeout" if out.interrupted else "ok"
            if out.interrupted:
                out.reason = ("interrupted after its time limit: " + ", ".join(name(i) for i in out.interrupted)
                              + " (the notebook went on)")
        else:
            rc = proc.returncode
            how = (f"was killed by signal {-rc} ({signal.Signals(-rc).name})" if rc is not None and rc < 0
                   else f"exited with code {rc}")
            if self.mode == "bwrap" and not zygote and rc is not None and rc > 128:
                how = f"was killed by signal {rc - 128} ({_signame(rc - 128)})"
            where = f" while running {name(out.last_cell)}" if out.last_cell is not None else " before running any cell"
            out.status = "crashed"
            out.reason = f"the notebook's process {how}{where}"
            if not out.events:
                tail = out.output.strip().splitlines()[-3:]
                if tail:
                    out.reason += ": " + " | ".join(tail)[:500]
        return out


def find_driver(root: int) -> int | None:
    """The pid, as seen from here, of the first Python process under ``root`` (the driver, or a warm
    sandbox's zygote; bubblewrap's own processes carry the same arguments, so the executable decides)."""
    python = os.path.realpath(sys.executable)
    for p in descendants(root):
        try:
            if os.path.realpath(f"/proc/{p}/exe") == python:
                return p
        except OSError:
            pass
    return None


def _signame(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return "?"
