"""The in-sandbox half of the autograder: runs ONE notebook plan and reports what happened.

This file is started by :mod:`autograder.jail` as ``python -s -B -P _driver.py`` inside the sandbox (bubblewrap,
or a weaker fallback), or forked from a warm sandbox's server (:mod:`autograder._zygote`), which runs it the same way.
It reads a JSON *setup* line from stdin, drops privileges and sets resource limits, then receives the notebook's
cells ONE AT A TIME on the same pipe, each only when it is about to run (so no test cell, hidden or not, is anywhere
in this process before its turn), and executes each in an IPython shell (no Jupyter kernel, no ZeroMQ):

- ``student`` cells (the student's code) go through ``InteractiveShell.run_cell`` like in Jupyter;
- ``instructor`` cells (locked setup cells) and ``test`` cells (the instructor's autograded tests) are
  compiled and executed directly, so that no IPython input or AST transformer installed by student code
  ever sees or rewrites them.

Test cells arrive *instrumented* (see :mod:`autograder.instrument`): every ``assert`` and every call to a
known checking function reports its operands as plain data (numbers, strings, tensors as raw bytes) on an
event pipe. The verdict is NOT taken here: the grader re-evaluates every check outside this process, on that
data (:mod:`autograder.judge`). What runs here is only trusted to *produce* values.

Because student code shares this process, everything in here is best-effort hardening, not a guarantee
(see the threat model in ``autograder/README.md``): the functions used to serialise values and write events are
captured before any student code runs; the instrumented test code reaches the recorder and the builtins
through constants patched into its code objects, not through names the student can rebind; library modules
(torch, numpy, the course package, builtins...) and this file's own globals are snapshotted before student code
runs and restored before every test cell, and any change made to them while a test runs is reported, unless the
new value is the instructor's own (a function whose code comes from an instructor cell or from the course package,
such as a checker that makes a forbidden function raise while a test runs). Every message from the grader carries
a fresh token that signs the events of that cell only; names bound only by a hidden test are removed from
the namespace after its cell.

How it is built: :func:`_main` is a short sequence of factories, each of which captures what it needs and returns
the functions (closures over captured primitives) that the later steps use; all of them run before any student
code. The words on the wire (message fields, event kinds, check nodes, value tags, the recorder's methods, the
comparison table) are :mod:`autograder.protocol`'s, copied here because this file runs alone with the standard
library; ``tests/test_autograder_layout.py`` holds the copy to that module. Only the standard library is imported
before privileges are dropped.
"""
import operator
import os
import sys

# Linux syscall numbers and constants used before any student code runs (x86_64, else aarch64)
_X86 = os.uname().machine == "x86_64"
_SYS_KEYCTL = 250 if _X86 else 219
_CLONE_NEWUSER, _CLONE_NEWIPC = 0x10000000, 0x08000000
_KEYCTL_GET_KEYRING_ID, _KEYCTL_JOIN_SESSION_KEYRING, _KEYCTL_CLEAR = 0, 1, 7
_KEYCTL_INVALIDATE, _KEYCTL_GET_PERSISTENT = 21, 22
_KEY_SPEC_THREAD_KEYRING, _KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING = -1, -4, -5
_NO_PRIVATE_NAMESPACES = "no private namespaces"   # autograder.protocol.NO_PRIVATE_NAMESPACES
_DRIVER_MODULE = "autograder._driver"   # the name its globals have in the protected snapshot

# the comparison operators of a check (autograder.protocol.COMPARE; ``is``/``is not`` are decided by identity)
_COMPARE = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
            "GtE": operator.ge, "In": lambda a, b: operator.contains(b, a),
            "NotIn": lambda a, b: not operator.contains(b, a)}
# builtins the recorder uses, as they were when this file was loaded (before any student code)
_bool, _zip, _any, _AssertionError, _BaseException = bool, zip, any, AssertionError, BaseException


def _text(e, n=2000):
    """``str(e)`` cut to ``n`` characters (used before any student code only: plain builtins)."""
    try:
        s = str(e)
    except BaseException:  # noqa: BLE001
        return "<unprintable>"
    return s if len(s) <= n else s[:n] + f"... [{len(s) - n} more characters]"


def _preload(modules, packages, also=()):
    """Import, before any student code, what the notebook and its checks use: ``modules``, every module of the
    course ``packages``, and ``also`` (silently). Returns one line per module or package that failed.

    Shared with the warm sandbox's server (:mod:`autograder._zygote`), which loads it from this file."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import pkgutil
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    errors = []
    for mod in modules:
        try:
            __import__(mod)
        except BaseException as e:  # noqa: BLE001 - reported to the grader, the run goes on
            errors.append(f"{mod}: {_text(e)}")
    for pkg in packages:
        try:
            p = __import__(pkg)
            for info in pkgutil.walk_packages(p.__path__, pkg + "."):
                try:
                    __import__(info.name)
                except BaseException:  # noqa: BLE001
                    pass
        except BaseException as e:  # noqa: BLE001
            errors.append(f"{pkg}: {_text(e)}")
    for mod in also:
        try:
            __import__(mod)
        except BaseException:  # noqa: BLE001
            pass
    return errors


# ---------------------------------------------------------------------------------------------- the process itself
def empty_user_keyrings(libc) -> None:
    """Empty and invalidate the calling user id's persistent, user-session and user keyrings in its user namespace
    (the kernel makes fresh, empty ones when they are next needed), so that no key written under this user id is
    left for a later process of it. The persistent keyring goes first (it is reached through a thread keyring, which
    makes it possessed: only its possessor may clear it); looking up the other two creates them where they were not,
    so both are looked up before either is invalidated. Also used by the grader after a submission that ran
    without private namespaces (:mod:`autograder.userkeys`, in a child that has taken the user id)."""
    rings = [libc.syscall(_SYS_KEYCTL, _KEYCTL_GET_PERSISTENT, -1, _KEY_SPEC_THREAD_KEYRING)]
    rings += [libc.syscall(_SYS_KEYCTL, _KEYCTL_GET_KEYRING_ID, spec, 0)
              for spec in (_KEY_SPEC_USER_SESSION_KEYRING, _KEY_SPEC_USER_KEYRING)]
    for ring in rings:
        if ring > 0:
            libc.syscall(_SYS_KEYCTL, _KEYCTL_CLEAR, ring)
            libc.syscall(_SYS_KEYCTL, _KEYCTL_INVALIDATE, ring)


def _private_namespaces(libc, notes: list, allowed: bool = True) -> None:
    """Give this submission a user namespace and an IPC namespace of its own, and a fresh session keyring.

    What the kernel keeps per user id or per IPC namespace outlives a process: System V and POSIX message queues,
    semaphores and shared memory (per IPC namespace), the user and user-session keyrings and the persistent keyring
    (per user id, in the registers of a user namespace). Successive submissions of one worker slot share a user id,
    and in a warm sandbox they share its namespaces too; so each submission gets its own: a user namespace that maps
    only its own user id (the kernel's keyring registers live in it, and die with it), a new IPC namespace inside it,
    and a new anonymous session keyring. The capabilities that a new user namespace grants are dropped at once.
    Where the kernel refuses (unprivileged user namespaces disabled), or the grader says not to (``allowed`` False:
    the tests of the fallback), the user id's keyrings are emptied instead (:func:`empty_user_keyrings`), and the
    ready event's notes say so: the grader empties them again after the submission."""
    import ctypes

    uid, gid = os.getuid(), os.getgid()

    class _Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class _Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    libc.prctl(4, 1, 0, 0, 0)   # PR_SET_DUMPABLE 1: after a change of user id, /proc/self/*_map are ours to write
    problem = None
    if not allowed:
        problem = "switched off by the grader"
    elif libc.unshare(_CLONE_NEWUSER) != 0:
        problem = f"unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}"
    else:
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as f:
                    f.write(text)
            if libc.unshare(_CLONE_NEWIPC) != 0:
                problem = f"unshare(CLONE_NEWIPC): {os.strerror(ctypes.get_errno())}"
        except OSError as exc:
            problem = f"user namespace map: {exc}"
        # the new user namespace granted every capability inside it: none is kept
        if libc.capset(ctypes.byref(_Header(0x20080522, 0)), (_Data * 2)()) != 0:
            os._exit(75)   # never run a submission with capabilities
    if problem:
        notes.append(f"{_NO_PRIVATE_NAMESPACES} ({problem}); the user id's keyrings were emptied instead")
        empty_user_keyrings(libc)
    libc.syscall(_SYS_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)


def _command_pipe():
    """``read_msg()``: the next message of the command pipe (None when the grader closed it). The grader writes one
    JSON message per line on it, the setup first, then each cell when it is about to run. It moves off fd 0, which
    becomes /dev/null: input() in a cell must not eat a message."""
    import json

    cmd_fd = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _read, _loads = os.read, json.loads
    pending = bytearray()

    def read_msg():
        while b"\n" not in pending:
            try:
                chunk = _read(cmd_fd, 1 << 20)
            except InterruptedError:
                continue
            except KeyboardInterrupt:  # an interrupt meant for a cell that had just ended: not for us
                continue
            if not chunk:
                return None
            pending.extend(chunk)
        i = pending.index(b"\n")
        line = bytes(pending[:i])
        del pending[: i + 1]
        return _loads(line.decode("utf-8"))

    return read_msg


def _confine(plan) -> list:
    """Become the submission's user (grading as root), in namespaces of its own, unable to gain privileges, within
    its resource limits. Returns notes on what could not be done."""
    import resource

    notes = []
    uid, gid = plan.get("uid"), plan.get("gid")
    if os.getuid() == 0 and uid:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _private_namespaces(libc, notes, plan.get("private_namespaces") is not False)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: setuid binaries stay unprivileged
            notes.append("no_new_privs unavailable")
        # PR_SET_DUMPABLE: in a sandbox the submission's own processes are the only ones of its user id and
        # namespaces, and a dumpable process may reset its own peak-memory count (/proc/self/clear_refs: what the
        # course's cost measurement does); without one, processes of the grader's user id could ptrace it
        libc.prctl(4, 1 if plan.get("dumpable") else 0, 0, 0, 0)
    except Exception:  # noqa: BLE001
        notes.append("prctl unavailable")
    limits = plan.get("limits", {})

    def setlim(which, value):
        if value:
            try:
                resource.setrlimit(which, (int(value), int(value)))
            except (ValueError, OSError) as exc:
                notes.append(f"rlimit {which}: {exc}")

    setlim(resource.RLIMIT_CORE, 1)  # 1 byte: effectively no core files (0 means 'unchanged' to setlim)
    setlim(resource.RLIMIT_NPROC, limits.get("nproc"))
    setlim(resource.RLIMIT_AS, limits.get("memory_bytes"))
    setlim(resource.RLIMIT_FSIZE, limits.get("file_bytes"))
    setlim(resource.RLIMIT_NOFILE, limits.get("open_files"))
    setlim(resource.RLIMIT_CPU, limits.get("cpu_seconds"))
    return notes


def _working_folder(plan) -> str:
    """Make the working folder, go there, write the notebook's files into it (and copy prepared folders such as
    matplotlib's font cache). Returns its path."""
    import base64
    import shutil

    workdir = plan["workdir"]
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    for name, data in plan.pop("files", {}).items():
        path = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
    for src in plan.get("copy_dirs", []):
        try:
            shutil.copytree(src["from"], src["to"], dirs_exist_ok=True)
        except OSError:
            pass
    return workdir


def _event_channel(plan):
    """How the driver speaks: ``emit(event)`` writes one JSON line, signed with the token of the message being
    answered (``signer``), on the event pipe, encoded with captured primitives only (``enc``), never cut in half by
    an interrupt and never from a forked copy of this process; ``short`` and ``describe`` make bounded text of
    anything."""
    import signal
    import types
    from json.encoder import encode_basestring_ascii as _esc

    event_fd = plan["event_fd"]
    signer = {"tok": plan.pop("tok")}   # the token of the message being answered (the setup, then each cell)
    _write, _getpid, my_pid = os.write, os.getpid, os.getpid()
    _type, _len, _str, _exit, _BaseException = type, len, str, os._exit, BaseException
    _int_repr, _float_repr = int.__repr__, float.__repr__
    _inf, _ninf = float("inf"), float("-inf")
    _sigmask, _BLOCK, _SETMASK = signal.pthread_sigmask, signal.SIG_BLOCK, signal.SIG_SETMASK
    _block_set = {signal.SIGINT}

    def enc(o):
        """JSON for dict/list/tuple/str/int/float/bool/None, built from captured primitives only."""
        t = _type(o)
        if o is None:
            return "null"
        if t is bool:
            return "true" if o else "false"
        if t is int:
            return _int_repr(o)
        if t is float:
            if o != o or o == _inf or o == _ninf:
                return '"' + _float_repr(o) + '"'
            return _float_repr(o)
        if t is str:
            return _esc(o)
        if t is dict:
            return "{" + ",".join([_esc(k) + ":" + enc(v) for k, v in o.items()]) + "}"
        if t is list or t is tuple:
            return "[" + ",".join([enc(v) for v in o]) + "]"
        return _esc("<unencodable>")

    def emit(obj):
        if _getpid() != my_pid:  # a forked copy of this process must never speak for it
            return
        obj["tok"] = signer["tok"]
        data = (enc(obj) + "\n").encode("utf-8", "replace")
        old = _sigmask(_BLOCK, _block_set)  # an interrupt must not cut an event in half
        try:
            view = memoryview(data)
            while view:
                try:
                    n = _write(event_fd, view)
                except InterruptedError:
                    continue
                except OSError:
                    _exit(70)
                view = view[n:]
        finally:
            _sigmask(_SETMASK, old)

    def short(s, n=2000):
        try:
            if _type(s) is not str:
                s = _str(s)
        except _BaseException:
            return "<unprintable>"
        return s if _len(s) <= n else s[:n] + f"... [{_len(s) - n} more characters]"

    def describe(e):
        try:
            name = _type(e).__name__
        except _BaseException:
            name = "Exception"
        return {"type": short(name, 200), "msg": short(e)}

    return types.SimpleNamespace(emit=emit, signer=signer, enc=enc, short=short, describe=describe, pid=my_pid)


def _seed_libraries():
    """Seed the random number generators (the same submission, the same result) and keep torch to one thread.
    Returns ``(torch, numpy)``, either None when not imported."""
    import random

    random.seed(0)
    torch, np = sys.modules.get("torch"), sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(0)
        except Exception:  # noqa: BLE001
            pass
    if torch is not None:
        try:
            torch.manual_seed(0)
            torch.set_num_threads(1)
        except Exception:  # noqa: BLE001
            pass
    return torch, np


# ---------------------------------------------------------------------------------------------- values as plain data
def _type_readers(torch, np):
    """The base types' own methods and getters (captured now), with which values are read: an object that merely
    imitates a number, a container or a tensor never gets to answer for itself."""
    import types

    r = types.SimpleNamespace(TB=None, t_dtype_type=None, t_device_type=None, t_enum_types=(),
                              nd=None, np_generic=None, np_dtype_type=None)
    r.mro = type.__dict__["__mro__"].__get__
    r.qualname = type.__dict__["__qualname__"].__get__
    r.module = type.__dict__["__module__"].__get__
    if torch is not None:
        TB = r.TB = torch._C.TensorBase
        r.t_detach, r.t_cpu, r.t_contig, r.t_numpy, r.t_to = TB.detach, TB.cpu, TB.contiguous, TB.numpy, TB.to
        r.t_resolve_conj, r.t_resolve_neg = TB.resolve_conj, TB.resolve_neg
        for name in ("dtype", "shape", "layout", "is_quantized", "is_meta", "is_nested"):
            setattr(r, "t_" + name, TB.__dict__[name].__get__)
        r.strided, r.f32 = torch.strided, torch.float32
        r.widen = ({torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2} if hasattr(torch, "float8_e4m3fn")
                   else {torch.bfloat16})
        r.t_dtype_type, r.t_device_type = torch.dtype, torch.device
        r.t_enum_types = tuple(t for t in (getattr(torch, "layout", None), getattr(torch, "memory_format", None),
                                           getattr(torch, "qscheme", None)) if isinstance(t, type))
        r.dtype_str, r.device_str = torch.dtype.__repr__, torch.device.__str__
        r.Module = torch.nn.Module
    if np is not None:
        nd = r.nd = np.ndarray
        r.np_ascont, r.np_tobytes, r.np_array = np.ascontiguousarray, nd.tobytes, np.array
        r.np_dtype = nd.__dict__["dtype"].__get__ if "dtype" in nd.__dict__ else None
        r.np_shape = nd.__dict__["shape"].__get__ if "shape" in nd.__dict__ else None
        r.np_generic, r.np_dtype_type = np.generic, np.dtype
        r.np_dtype_str = np.dtype.__dict__["str"].__get__
    return r


def _array_encoders(r, spend, b64, describe, short):
    """``(tensor, ndarray, tensor_digest)``: a dense tensor or a numeric array as dtype, shape and raw bytes (within
    the report's budget), and a tensor as a digest of its bytes (for fingerprints)."""
    import hashlib

    _len, _int, _BaseException, _sha256 = len, int, BaseException, hashlib.sha256

    def plain_tensor(v):
        x = r.t_resolve_neg(r.t_resolve_conj(r.t_cpu(r.t_detach(v))))
        return r.t_to(x, r.f32) if r.t_dtype(v) in r.widen else x

    def tensor(v):
        try:
            if r.t_layout(v) is not r.strided or r.t_is_quantized(v) or r.t_is_meta(v) or r.t_is_nested(v):
                return ["opaque", "tensor (not a plain dense tensor)"]
            arr = r.t_numpy(r.t_contig(plain_tensor(v)))
            raw = r.np_tobytes(arr)
            if not spend(_len(raw)):
                return ["opaque", f"tensor (too large: {_len(raw) >> 20} MiB)"]
            return ["tensor", r.dtype_str(r.t_dtype(v)), [_int(s) for s in r.t_shape(v)],
                    r.np_dtype_str(r.np_dtype(arr)), b64(raw)]
        except _BaseException as e:  # noqa: BLE001
            return ["opaque", "tensor: " + describe(e)["msg"][:200]]

    def ndarray(v):
        try:
            dt = r.np_dtype(v)
            if dt.kind not in "biufc":
                return ["opaque", f"numpy array of dtype {short(r.np_dtype_str(dt), 50)}"]
            arr = r.np_ascont(v)
            raw = r.np_tobytes(arr)
            if not spend(_len(raw)):
                return ["opaque", f"array (too large: {_len(raw) >> 20} MiB)"]
            return ["ndarray", r.np_dtype_str(r.np_dtype(arr)), [_int(s) for s in r.np_shape(v)], b64(raw)]
        except _BaseException as e:  # noqa: BLE001
            return ["opaque", "array: " + describe(e)["msg"][:200]]

    def tensor_digest(v):
        try:
            arr = r.t_numpy(r.t_contig(r.t_resolve_neg(r.t_resolve_conj(r.t_cpu(r.t_detach(v))))))
            return ["tensor", r.dtype_str(r.t_dtype(v)), [_int(x) for x in r.t_shape(v)],
                    _sha256(r.np_tobytes(arr)).hexdigest()]
        except _BaseException:  # noqa: BLE001
            return ["tensor", "?"]

    return tensor, ndarray, tensor_digest


def _value_encoder(plan, r, ch):
    """``ser(value)``: a value as plain data (``[tag, ...]``, the tags of ``autograder.protocol.Value``), read with
    the base types' own methods (see :func:`_type_readers`): an object that merely imitates a number, a container or
    a tensor (an always-equal object...) becomes ``opaque`` and fails its check; a SUBCLASS of a plain type is
    reported by what it really holds (its overridden ``__eq__``/``__iter__`` are never called), so the judge's
    recomputation with plain semantics decides, whatever the subclass claims. Also the placeholder of a hidden
    part's missing operands, and the tensor digest used by fingerprints."""
    import binascii
    import collections
    import types

    _b2a, _type, _len, _int_repr, _float_hex, _join, _bjoin = (binascii.b2a_base64, type, len, int.__repr__,
                                                               float.hex, "".join, b"".join)
    _OrderedDict = collections.OrderedDict
    _list_iter, _tuple_iter, _set_iter, _fs_iter = list.__iter__, tuple.__iter__, set.__iter__, frozenset.__iter__
    _dict_items, _dict_len = dict.items, dict.__len__
    _list_len, _tuple_len, _set_len, _fs_len = list.__len__, tuple.__len__, set.__len__, frozenset.__len__
    _dict_keys_type, _dict_items_type = _type({}.keys()), _type({}.items())
    _range, _slice, _ellipsis, _BaseException = range, slice, _type(Ellipsis), BaseException
    _str, short = str, ch.short
    max_value_bytes = int(plan.get("max_value_bytes", 16 << 20))
    budget = {"left": int(plan.get("max_event_bytes", 64 << 20))}
    placeholder = object()   # a hidden part's literal or reference operand, absent from the student's copy
    TB, nd, np_generic, np_dtype_type, mro = r.TB, r.nd, r.np_generic, r.np_dtype_type, r.mro
    t_dtype_type, t_device_type, t_enum_types = r.t_dtype_type, r.t_device_type, r.t_enum_types

    def b64(b):
        return _b2a(b, newline=False).decode("ascii")

    def spend(n):
        budget["left"] -= n
        return budget["left"] >= 0 and n <= max_value_bytes

    ser_tensor, ser_ndarray, tensor_digest = _array_encoders(r, spend, b64, ch.describe, short)

    def ser(v, depth=0):
        t = _type(v)
        if v is None:
            return ["none"]
        if v is placeholder:
            return ["ph"]
        if t is bool:
            return ["bool", v]
        if depth > 20:
            return ["opaque", "nested too deeply"]
        try:
            m = mro(t)
        except _BaseException:  # noqa: BLE001
            return ["opaque", "unknown type"]
        # numpy scalars first: numpy.float64 is also a subclass of float, numpy.str_ of str
        if np_generic is not None and np_generic in m:
            try:
                return ["npscalar", ser_ndarray(r.np_array(v))]
            except _BaseException:  # noqa: BLE001
                return ["opaque", "numpy scalar"]
        if int in m:
            try:
                return ["int", _int_repr(v)]
            except ValueError:
                return ["opaque", "int (too large)"]
        if float in m:
            return ["float", _float_hex(v)]
        if complex in m:
            return ["complex", _float_hex(complex.real.__get__(v)), _float_hex(complex.imag.__get__(v))]
        if str in m:
            s = v if t is str else _join((v,))
            return ["str", s] if spend(_len(s)) else ["opaque", "str (too large)"]
        if bytes in m:
            b = v if t is bytes else _bjoin((v,))
            return ["bytes", b64(b)] if spend(_len(b)) else ["opaque", "bytes (too large)"]
        if tuple in m:    # namedtuples, torch.Size and torch.return_types too: compared as tuples
            if _tuple_len(v) > 100000:
                return ["opaque", "tuple (too long)"]
            return ["tuple", [ser(x, depth + 1) for x in _tuple_iter(v)]]
        if list in m:
            if _list_len(v) > 100000:
                return ["opaque", "list (too long)"]
            return ["list", [ser(x, depth + 1) for x in _list_iter(v)]]
        if dict in m:
            if _dict_len(v) > 10000:
                return ["opaque", "dict (too long)"]
            return ["odict" if t is _OrderedDict else "dict",
                    [[ser(k, depth + 1), ser(x, depth + 1)] for k, x in _dict_items(v)]]
        if set in m or frozenset in m:
            it, n = (_set_iter, _set_len) if set in m else (_fs_iter, _fs_len)
            if n(v) > 100000:
                return ["opaque", "set (too long)"]
            return ["set" if set in m else "frozenset", [ser(x, depth + 1) for x in it(v)]]
        if t is _dict_keys_type:   # d.keys() compares like a set
            return ["set", [ser(x, depth + 1) for x in v]]
        if t is _dict_items_type:
            return ["set", [["tuple", [ser(k, depth + 1), ser(x, depth + 1)]] for k, x in v]]
        if TB is not None and TB in m:
            return ser_tensor(v)
        if t_dtype_type is not None and t is t_dtype_type:
            return ["tdtype", r.dtype_str(v)]
        if t_device_type is not None and t is t_device_type:
            return ["tdevice", r.device_str(v)]
        if t in t_enum_types:
            return ["tconst", r.qualname(t), short(_str(v), 100)]
        if nd is not None and nd in m:
            return ser_ndarray(v)
        if np_dtype_type is not None and np_dtype_type in m:
            try:
                return ["npdtype", r.np_dtype_str(v)]
            except _BaseException:  # noqa: BLE001
                return ["opaque", "numpy dtype"]
        if t is _range:
            return ["range", _int_repr(v.start), _int_repr(v.stop), _int_repr(v.step)]
        if t is _slice:
            return ["slice", ser(v.start, depth + 1), ser(v.stop, depth + 1), ser(v.step, depth + 1)]
        if t is _ellipsis:
            return ["ellipsis"]
        if type in m:
            return ["type", short(r.module(v), 300), short(r.qualname(v), 300)]
        return ["opaque", short(r.module(t), 100) + "." + short(r.qualname(t), 200)]

    return types.SimpleNamespace(ser=ser, placeholder=placeholder, tensor_digest=tensor_digest)


def _fingerprinter(r, values, enc):
    """``fingerprint([(name, value), ...])``: a digest of what a reference block reads (tensors by a digest of their
    bytes, modules by their parameters and buffers, functions by their code and defaults), compared between the
    student's run and the reference run."""
    import hashlib
    import types

    _type, _str, _dict_items, _sha256 = type, str, dict.items, hashlib.sha256
    _FunctionType, _ModuleType = types.FunctionType, types.ModuleType
    TB, Module, ser = r.TB, getattr(r, "Module", None), values.ser

    def fp_value(v, depth=0):
        t = _type(v)
        if depth > 8:
            return "..."
        if TB is not None and TB in r.mro(t):
            return values.tensor_digest(v)
        if Module is not None and Module in r.mro(t):
            d = object.__getattribute__(v, "__dict__")
            return ["nn.Module", r.qualname(t),
                    [[k, fp_value(x, depth + 1)] for k, x in _dict_items(d.get("_parameters") or {})],
                    [[k, fp_value(x, depth + 1)] for k, x in _dict_items(d.get("_buffers") or {})],
                    [[k, fp_value(x, depth + 1)] for k, x in _dict_items(d.get("_modules") or {})]]
        if t is _FunctionType:
            c = v.__code__
            return ["function", _sha256(c.co_code).hexdigest(), [fp_value(x, depth + 1) for x in (v.__defaults__ or ())]]
        if t is _ModuleType:
            return ["module", _str(getattr(v, "__name__", "?"))]
        if t in (list, tuple):
            return [t.__name__, [fp_value(x, depth + 1) for x in v]]
        if t is dict:
            return ["dict", [[fp_value(k, depth + 1), fp_value(x, depth + 1)] for k, x in _dict_items(v)]]
        plain = ser(v, depth)
        return plain if plain[0] != "opaque" else ["object", r.qualname(t)]

    def fingerprint(pairs):
        return _sha256(enc([[n, fp_value(v)] for n, v in pairs]).encode()).hexdigest()

    return fingerprint


# ---------------------------------------------------------------------------------------------- the protected surface
_ABSENT = object()   # a key that was not there


def _snapshot(plan, own_globals):
    """The protected library state, before any notebook code: every function, class, descriptor and submodule of the
    protected modules (every value of the course's modules and of this file's globals), the keys of the modules and
    of their classes, the protected Python functions, and ``sys.modules``' entries for them."""
    import functools
    import types
    import warnings

    prefixes = tuple(plan.get("protected_prefixes", []))
    course_pkgs = tuple(plan.get("preload_packages", []))
    kinds = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, property, staticmethod,
             classmethod, types.MethodDescriptorType, types.WrapperDescriptorType,
             types.ClassMethodDescriptorType, functools.partial, types.GetSetDescriptorType,
             types.MemberDescriptorType)
    _tmodule, _tqualname = type.__dict__["__module__"].__get__, type.__dict__["__qualname__"].__get__
    s = types.SimpleNamespace(kinds=kinds, prefixes=prefixes,
                              modules=[],        # (name, module dict, keys, values, number of keys, all keys)
                              classes=[],        # (qualified name, class, keys, values)
                              class_keys={},     # id(class) -> (number of keys, all keys) before any notebook code
                              seen_classes=set(),
                              funcs={})          # id(function) -> (qualified name, function): the Python functions

    def protected_module(name):
        return name == "builtins" or name.split(".")[0] in prefixes

    def snap_function(qn, f):
        t = type(f)
        if t is staticmethod or t is classmethod:
            f = f.__func__
        if t is property:
            for part, g in (("fget", f.fget), ("fset", f.fset), ("fdel", f.fdel)):
                if type(g) is types.FunctionType and id(g) not in s.funcs:
                    s.funcs[id(g)] = (qn + "." + part, g)
        elif type(f) is types.FunctionType and id(f) not in s.funcs:
            s.funcs[id(f)] = (qn, f)

    def snap_class(v, cmod):
        s.seen_classes.add(id(v))
        cd = {ck: cv for ck, cv in v.__dict__.items() if isinstance(cv, kinds)}
        qn = cmod + "." + _tqualname(v)
        s.classes.append((qn, v, tuple(cd), tuple(cd.values())))
        for ck, cv in cd.items():
            snap_function(qn + "." + ck, cv)
        # every key, so that one ADDED later is seen too (a __call__ shadowing the inherited one)
        s.class_keys[id(v)] = (len(v.__dict__), frozenset(v.__dict__))

    def snap_module(name, d, everything, own=False):
        keep = {}
        for k, v in list(d.items()):
            if everything or isinstance(v, kinds) or (
                    isinstance(v, types.ModuleType) and sys.modules.get(name + "." + k) is v):
                keep[k] = v
                snap_function(name + "." + k, v)
                if (type(v) is type or isinstance(v, type)) and id(v) not in s.seen_classes:
                    try:
                        cmod = _tmodule(v)
                    except Exception:  # noqa: BLE001
                        continue
                    if type(cmod) is str and (protected_module(cmod) or (own and cmod == d.get("__name__"))):
                        snap_class(v, _DRIVER_MODULE if own else cmod)
        s.modules.append((name, d, tuple(keep), tuple(keep.values()), len(d), frozenset(d)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, mod in list(sys.modules.items()):
            if mod is None or not protected_module(name):
                continue
            try:
                d = object.__getattribute__(mod, "__dict__")
            except Exception:  # noqa: BLE001
                continue
            # the course's own modules: every value (a flag or a table it reads is as much its behaviour as a function)
            snap_module(name, d, name.split(".")[0] in course_pkgs)
    snap_module(_DRIVER_MODULE, own_globals, True, own=True)
    s.sysmodules = {name: mod for name, mod in sys.modules.items() if mod is not None and protected_module(name)}
    s.value_ids = {id(v) for _n, _d, _keys, vals, _n0, _all in s.modules for v in vals}
    s.value_ids |= {id(v) for _qn, _cls, _keys, vals in s.classes for v in vals}
    s.attr = {(id(cls), k): v for _qn, cls, keys, vals in s.classes for k, v in zip(keys, vals)}
    return s


def _name_changes(snap):
    """``changed_names()``: (name, where, key, original) for every protected module or class entry that differs from
    the snapshot, every key added to one, and every protected ``sys.modules`` entry replaced (fast path first: this
    runs at every check)."""
    import types

    _any, _map, _zip, _len, _isinstance, _callable = any, map, zip, len, isinstance, callable
    _is_not, _dget = operator.is_not, dict.get
    _ModuleType, _sysmodules, kinds = types.ModuleType, sys.modules, snap.kinds

    def new_module_key(name, k, v):
        """Whether a key that appeared in a protected module could change what library code does: a callable, a
        class or a module that is not that module's own submodule (a lazy ``import`` adds those)."""
        if _isinstance(v, _ModuleType):
            return _sysmodules.get(name + "." + k) is not v
        return k != "__warningregistry__" and (_callable(v) or _isinstance(v, kinds))

    def changed_names():
        out = []
        for name, d, keys, vals, n0, all0 in snap.modules:
            if _any(_map(_is_not, _map(d.get, keys), vals)):
                out += [(name + "." + k, d, k, v) for k, v in _zip(keys, vals) if _dget(d, k, _ABSENT) is not v]
            if _len(d) != n0:
                out += [(name + "." + k, d, k, _ABSENT) for k, v in list(d.items())
                        if k not in all0 and new_module_key(name, k, v)]
        for qn, cls, keys, vals in snap.classes:
            cd = cls.__dict__
            if _any(_map(_is_not, _map(cd.get, keys), vals)):
                out += [(qn + "." + k, cls, k, v) for k, v in _zip(keys, vals) if cd.get(k, _ABSENT) is not v]
            n0, all0 = snap.class_keys[id(cls)]
            if _len(cd) != n0:
                out += [(qn + "." + k, cls, k, _ABSENT) for k in list(cd) if k not in all0]
        for name, mod in snap.sysmodules.items():
            if _dget(_sysmodules, name) is not mod:
                out.append(("sys.modules[" + name + "]", _sysmodules, name, mod))
        return out

    return changed_names


def _internal_changes(snap):
    """``changed_internals()``: (qualified name.attribute, function, attribute, original) for every protected function
    whose code, defaults or closure differ from the snapshot (at the borders of every test: a change made while a
    test runs is also reported at once by the audit hook). Assigning ``f.__code__`` keeps the function object, so
    comparing identities in the module alone would never see it."""
    _any, _map, _zip, _is_not = any, map, zip, operator.is_not
    funcs = [f for _qn, f in snap.funcs.values()]
    names = [qn for qn, _f in snap.funcs.values()]
    getters = {a: operator.attrgetter(a) for a in ("__code__", "__defaults__", "__kwdefaults__")}
    snap_internals = [(a, g, tuple(_map(g, funcs))) for a, g in getters.items()]

    def cell_value(c):
        try:
            return c.cell_contents
        except ValueError:
            return _ABSENT

    snap_cells = [(i, f.__closure__, tuple(cell_value(c) for c in f.__closure__))
                  for i, f in enumerate(funcs) if f.__closure__]

    def changed_internals():
        out = []
        for attr, getter, old in snap_internals:
            if _any(_map(_is_not, _map(getter, funcs), old)):
                out += [(names[i] + "." + attr, funcs[i], attr, o) for i, (f, o) in enumerate(_zip(funcs, old))
                        if getter(f) is not o]
        for i, cells, old in snap_cells:
            if funcs[i].__closure__ is not cells or _any(_map(_is_not, _map(cell_value, cells), old)):
                out.append((names[i] + ".__closure__", cells, "cell_contents", old))
        return out

    return changed_internals


def _trust(plan, snap):
    """The instructor's own values. A test may patch a library function on purpose while it runs (e.g. make
    nn.GRUCell.forward raise, to check that an answer does not call it) and restore it afterwards. Such a value is
    not tampering: it is a function whose code object IS one the grader loaded for an instructor cell or one of the
    course package's (identity, not name: a student cannot mint either), whose globals are the notebook's or the
    course module's, and whose closure and defaults hold only inert data or such functions.

    Returns ``codes`` (ids of trusted code objects), ``code(c)`` (trust a code object and the ones it holds),
    ``patch(v)`` (whether a value put into a library object is the instructor's own) and ``globals_`` (ids of the
    namespaces such functions may have: the course modules', and the notebook's once the shell exists)."""
    import types

    _type, _all, _isinstance = type, all, isinstance
    _FunctionType, _CodeType = types.FunctionType, types.CodeType
    _tmodule = type.__dict__["__module__"].__get__
    codes, refs, trusted_globals = set(), [], set()   # refs: keeps trusted code objects alive (their ids stay theirs)
    module_dict = [None]

    def trust_code(code, depth=0):
        if _type(code) is not _CodeType or depth > 50 or id(code) in codes:
            return
        codes.add(id(code))
        refs.append(code)
        for c in code.co_consts:
            if _type(c) is _CodeType:
                trust_code(c, depth + 1)

    def trust_object(v, depth=0):
        t = _type(v)
        if t is staticmethod or t is classmethod:
            v, t = v.__func__, _type(v.__func__)
        if t is property:
            for f in (v.fget, v.fset, v.fdel):
                trust_object(f, depth + 1)
        elif t is _FunctionType:
            if v.__globals__ is module_dict[0]:   # defined in this module (not imported into it)
                trust_code(v.__code__)
            inner = v.__dict__.get("__wrapped__")   # e.g. a @contextmanager: the code is the wrapped function's
            if inner is not None and depth < 4:
                trust_object(inner, depth + 1)
        elif t is type and depth < 2:
            for cv in list(v.__dict__.values()):
                trust_object(cv, depth + 1)

    for pkg in plan.get("preload_packages", []):
        for name, mod in list(sys.modules.items()):
            if mod is None or not (name == pkg or name.startswith(pkg + ".")):
                continue
            try:
                d = object.__getattribute__(mod, "__dict__")
            except Exception:  # noqa: BLE001
                continue
            trusted_globals.add(id(d))
            module_dict[0] = d
            for v in list(d.values()):
                try:
                    if _isinstance(v, type) and _tmodule(v) != name:
                        continue  # a class imported from elsewhere (torch...): not the course's code
                    trust_object(v)
                except Exception:  # noqa: BLE001
                    pass
    _INERT = (_type(None), bool, int, float, complex, str, bytes)

    def trusted_value(v, depth=0):
        if depth > 6:
            return False
        t = _type(v)
        if t in _INERT:
            return True
        if t is tuple or t is frozenset:
            return _all(trusted_value(x, depth + 1) for x in v)
        if t is staticmethod or t is classmethod:
            return trusted_value(v.__func__, depth + 1)
        if t is property:
            return _all(f is None or trusted_value(f, depth + 1) for f in (v.fget, v.fset, v.fdel))
        if t is not _FunctionType or id(v.__code__) not in codes or id(v.__globals__) not in trusted_globals:
            return False
        for c in v.__closure__ or ():
            try:
                x = c.cell_contents
            except ValueError:
                continue
            if x is not v and not part_ok(x, depth):
                return False
        if not _all(part_ok(x, depth) for x in (v.__defaults__ or ())):
            return False
        return _all(part_ok(x, depth) for x in (v.__kwdefaults__ or {}).values())

    def part_ok(x, depth):
        """What a trusted function may hold in its closure or defaults: inert data, trusted functions, and the
        library's own objects as they were before any notebook code ran (e.g. the original it restores)."""
        return id(x) in snap.value_ids or trusted_value(x, depth + 1)

    def trusted_patch(v):
        """Whether a value put into a library object is the instructor's own: a trusted FUNCTION (plain data
        is not: `torch.pi = 3` or a new class attribute is somebody's change)."""
        return _type(v) in (_FunctionType, staticmethod, classmethod, property) and trusted_value(v)

    return types.SimpleNamespace(codes=codes, code=trust_code, patch=trusted_patch, globals_=trusted_globals)


def _tamper(trust):
    """``suspicious(changes)``: the names of changes that are neither a library wrapping its own function
    (functools.wraps keeps ``__wrapped__``) nor the instructor's own patch; ``restore(changes)``: put the originals
    back."""
    import types

    _type, _zip, _BaseException, _FunctionType = type, zip, BaseException, types.FunctionType
    _set_attr, _type_setattr, _type_delattr = setattr, type.__setattr__, type.__delattr__

    def suspicious(changes):
        out = []
        for name, where, k, old in changes:
            try:
                t = _type(where)
                if t is tuple:     # a closure's cells: never the instructor's to change
                    out.append(name)
                    continue
                if t is _FunctionType:
                    if k == "__code__" and id(where.__code__) in trust.codes:
                        continue
                    out.append(name)
                    continue
                new = where.get(k, _ABSENT) if t is dict else where.__dict__.get(k, _ABSENT)
                if _type(new) is _FunctionType and new.__dict__.get("__wrapped__") is old:
                    continue
                if trust.patch(new):
                    continue
            except _BaseException:  # noqa: BLE001
                pass
            out.append(name)
        return out

    def restore(changes):
        for _, where, k, v in changes:
            try:
                t = _type(where)
                if t is tuple:     # closure cells: their original contents
                    for c, x in _zip(where, v):
                        if x is _ABSENT:
                            del c.cell_contents
                        else:
                            c.cell_contents = x
                elif t is dict:
                    if v is _ABSENT:
                        where.pop(k, None)
                    else:
                        where[k] = v
                elif t is _FunctionType:
                    _set_attr(where, k, v)
                elif v is _ABSENT:   # a key that was not there: removed again
                    _type_delattr(where, k)
                else:
                    _type_setattr(where, k, v)
            except _BaseException:  # noqa: BLE001
                pass

    return suspicious, restore


def _audit_hook(snap, trust):
    """Install the audit hook (no later one can be added) and return its state: while ``active`` (a test runs), every
    suspicious event (ctypes, gc introspection, trace functions, ``object.__setattr__`` on a protected class or a
    protected function's code, defaults...) is recorded in ``events``; at any time, opening a process's memory or
    (outside the course package's code) its peak-memory count is refused."""
    _isinstance, _len, _getframe, _BaseException = isinstance, len, sys._getframe, BaseException
    _fsdecode, _realpath, _PathLike = os.fsdecode, os.path.realpath, os.PathLike
    _tmodule, _tqualname = type.__dict__["__module__"].__get__, type.__dict__["__qualname__"].__get__
    audit = {"active": False, "events": []}
    watched = ("ctypes.", "gc.get_referrers", "gc.get_referents", "gc.get_objects", "sys._current_frames",
               "sys.settrace", "sys.setprofile", "object.__setattr__", "object.__delattr__")
    missing = object()

    def proc_file(path):
        """'clear_refs' / 'mem' when ``path`` (as given, or with its links resolved) names such a file of /proc."""
        try:
            p = _fsdecode(path)
        except _BaseException:  # noqa: BLE001 - a file descriptor, or not a path at all
            return None
        for q in (p, _realpath(p)):
            base = q.rsplit("/", 1)[-1]
            if base == "clear_refs" or (base == "mem" and q.startswith("/proc/")):
                return base
        return None

    def attribute_event(event, args):
        """The recorded name of an ``object.__setattr__``/``__delattr__``, or None when it is no one's change."""
        obj = args[0]
        fn = snap.funcs.get(id(obj))
        if fn is not None and fn[1] is obj:   # a protected function's code, defaults...
            # the instructor's own (a forbid block swapping in its raiser, and back): by who does it
            if args[1] == "__code__" and id(_getframe(2).f_code) in trust.codes:
                return None
            return f"{event} {fn[0]}.{args[1]}"
        if id(obj) not in snap.seen_classes:  # only classes that existed before any notebook code
            return None
        if event == "object.__setattr__" and _len(args) > 2:
            value = args[2]
            # putting the pristine value back, or installing the instructor's own: not tampering
            if value is snap.attr.get((id(obj), args[1]), missing) or trust.patch(value):
                return None
        return f"{event} {_tmodule(obj)}.{_tqualname(obj)}.{args[1]}"

    def hook(event, args):
        if event == "sys.addaudithook":
            raise RuntimeError("audit hooks are disabled while grading")
        if event == "open" and args and _isinstance(args[0], (str, bytes, _PathLike)):
            # a process's own memory and its peak-memory count (what the course's cost measurement reads): never
            # the student's to write; only the course package's own code may reset the count
            which = proc_file(args[0])
            if which == "mem" or (which == "clear_refs" and id(_getframe(1).f_code) not in trust.codes):
                raise PermissionError(f"opening /proc/.../{which} is not allowed while grading")
            return
        if event == "os.symlink" and args and _isinstance(args[0], (str, bytes, _PathLike)):
            try:
                target = _fsdecode(args[0])
            except _BaseException:  # noqa: BLE001
                return
            if "clear_refs" in target or (target.startswith("/proc") and target.rstrip("/").endswith("/mem")):
                raise PermissionError("links to /proc/.../clear_refs or mem are not allowed while grading")
            return
        if audit["active"] and event.startswith(watched):
            if event in ("object.__setattr__", "object.__delattr__"):
                try:
                    event = attribute_event(event, args)
                except Exception:  # noqa: BLE001
                    return
                if event is None:
                    return
            if _len(audit["events"]) < 50:
                audit["events"].append(event[:300])

    sys.addaudithook(hook)
    return audit


def _hook_registries(torch, snap):
    """``(changed, reset)`` for the registries of global hooks: what library code or the interpreter calls back into,
    whatever object it works on (module hooks, torch function and dispatch modes, saved-tensor hooks, trace and
    profile functions, gc callbacks, import hooks, sys hooks, signal handlers). Their state now, before any notebook
    code, is the baseline: every test starts from it (anything the student's cells registered is removed, and
    reported), and anything registered while a test runs is tampering (the instructor's own modes, such as a forbid
    block's, are recognised by their class: defined in a protected module before any notebook code ran)."""
    import collections
    import gc
    import signal as _sig
    import threading

    _type, _isinstance, _len, _all, _zip = type, isinstance, len, all, zip
    _set_attr, _BaseException, _OrderedDict = setattr, BaseException, collections.OrderedDict
    _settrace, _setprofile = sys.settrace, sys.setprofile
    _thr_settrace, _thr_setprofile = threading.settrace, threading.setprofile
    registries = []

    def registry(name, get, reset):
        try:
            get()
        except _BaseException:  # noqa: BLE001 - not in this version of the library
            return
        registries.append((name, get, reset))

    mm = sys.modules.get("torch.nn.modules.module")
    for attr in sorted(k for k in (vars(mm) if mm is not None else {}) if k.startswith("_global_")):
        v = getattr(mm, attr)
        if _type(v) is _OrderedDict or _isinstance(v, dict):
            keys0 = tuple(v)
            registry(f"torch.nn.modules.module.{attr}", lambda v=v: tuple(v),
                     lambda v=v, keys0=keys0: [v.pop(k) for k in list(v) if k not in keys0])
        else:
            registry(f"torch.nn.modules.module.{attr}", lambda mm=mm, a=attr: getattr(mm, a),
                     lambda mm=mm, a=attr, v0=v: _set_attr(mm, a, v0))
    if torch is not None:
        _torch_registries(torch, snap, registry)
    registry("sys.settrace", lambda: sys.gettrace() is None, lambda: _settrace(None))
    registry("sys.setprofile", lambda: sys.getprofile() is None, lambda: _setprofile(None))
    registry("threading.settrace", lambda: threading._trace_hook is None, lambda: _thr_settrace(None))
    registry("threading.setprofile", lambda: threading._profile_hook is None, lambda: _thr_setprofile(None))
    for attr in ("excepthook", "displayhook", "unraisablehook", "breakpointhook"):
        v0 = getattr(sys, attr, None)
        registry(f"sys.{attr}", lambda a=attr, v0=v0: getattr(sys, a, None) is v0,
                 lambda a=attr, v0=v0: _set_attr(sys, a, v0))
    v0 = threading.excepthook
    registry("threading.excepthook", lambda v0=v0: threading.excepthook is v0,
             lambda v0=v0: _set_attr(threading, "excepthook", v0))
    for attr in ("meta_path", "path_hooks"):
        lst, items0 = getattr(sys, attr), tuple(getattr(sys, attr))
        registry(f"sys.{attr}", lambda a=attr, lst=lst, items0=items0: getattr(sys, a) is lst and tuple(lst) == items0,
                 lambda a=attr, lst=lst, items0=items0: (_set_attr(sys, a, lst), lst.__setitem__(slice(None), items0)))
    cbs, cbs0 = gc.callbacks, tuple(gc.callbacks)
    registry("gc.callbacks", lambda: gc.callbacks is cbs and tuple(cbs) == cbs0,
             lambda: (_set_attr(gc, "callbacks", cbs), cbs.__setitem__(slice(None), cbs0)))
    registry("signal handlers and timers", *_signal_registry(_sig))
    baseline = [(name, get()) for name, get, _reset in registries]

    def changed():
        """Names of the hook registries that are not as they were before any notebook code ran."""
        out = []
        for (name, get, _reset), (_n, base) in _zip(registries, baseline):
            try:
                now = get()
            except _BaseException:  # noqa: BLE001
                out.append(name)
                continue
            if now != base and not (_type(now) is tuple and now[: _len(base)] == base and _all(now[_len(base):])):
                out.append(name)   # (a longer mode stack is fine when the extra modes are all trusted ones)
        return out

    def reset():
        for _name, _get, put_back in registries:
            try:
                put_back()
            except _BaseException:  # noqa: BLE001
                pass

    return changed, reset


def _torch_registries(torch, snap, registry):
    """PyTorch's: the torch function and dispatch mode stacks (a mode counts as the instructor's when its class is a
    protected one), the infrastructure modes, the torch-function and dispatch-key switches, saved-tensor hooks and the
    profiler."""
    _type, _str, seen_classes = type, str, snap.seen_classes
    C = torch._C

    def trusted_mode(m):
        return id(_type(m)) in seen_classes

    registry("torch function mode stack",
             lambda: tuple(trusted_mode(C._get_function_stack_at(i)) for i in range(C._len_torch_function_stack())),
             lambda: [C._pop_torch_function_stack() for _ in range(C._len_torch_function_stack())])
    registry("torch dispatch mode stack",
             lambda: tuple(trusted_mode(C._get_dispatch_stack_at(i)) for i in range(C._len_torch_dispatch_stack())),
             lambda: [C._pop_torch_dispatch_stack() for _ in range(C._len_torch_dispatch_stack())])
    for key in list(getattr(C, "_TorchDispatchModeKey", {}).__members__.values()) if hasattr(
            C, "_TorchDispatchModeKey") else []:
        registry(f"torch dispatch mode {key.name}", lambda k=key: C._get_dispatch_mode(k) is None,
                 lambda k=key: C._unset_dispatch_mode(k))
    registry("torch function enabled", lambda: (C._is_torch_function_enabled(),), lambda: None)
    registry("torch dispatch keys excluded", lambda: _str(C._dispatch_tls_local_exclude_set()), lambda: None)
    registry("torch dispatch keys included", lambda: _str(C._dispatch_tls_local_include_set()), lambda: None)
    registry("torch saved tensor hooks", lambda: C._autograd._top_saved_tensors_default_hooks(False) is None,
             lambda: [C._autograd._pop_saved_tensors_default_hooks() for _ in range(64)
                      if C._autograd._top_saved_tensors_default_hooks(False) is not None])
    registry("torch profiler", lambda: torch.autograd._profiler_enabled(), lambda: None)


def _signal_registry(_sig):
    """``(get, reset)`` of the signal handlers and interval timers."""
    handlers0 = {}
    for sig in _sig.valid_signals():
        try:
            handlers0[sig] = _sig.getsignal(sig)
        except (ValueError, OSError):
            pass
    timers = (_sig.ITIMER_REAL, _sig.ITIMER_VIRTUAL, _sig.ITIMER_PROF)

    def signal_state():
        return tuple(_sig.getsignal(s) is h for s, h in handlers0.items()) + tuple(
            _sig.getitimer(w) == (0.0, 0.0) for w in timers)

    def signal_reset():
        for w in timers:
            _sig.setitimer(w, 0)
        for s, h in handlers0.items():
            if _sig.getsignal(s) is not h and h is not None:
                try:
                    _sig.signal(s, h)
                except (ValueError, OSError, TypeError):
                    pass

    return signal_state, signal_reset


# ---------------------------------------------------------------------------------------------- the recorder
def _strict_isinstance_check():
    """isinstance() that a fake ``__class__`` or a patched builtin cannot fool for ordinary classes."""
    _type, _isinstance, _any = type, isinstance, any
    _mro = type.__dict__["__mro__"].__get__

    def strict_isinstance(x, c):
        if _type(c) is tuple:
            return _any(strict_isinstance(x, cc) for cc in c)
        if not _isinstance(c, type):
            return _isinstance(x, c)
        if _type(c) is type:
            return c in _mro(_type(x))
        return _isinstance(x, c) and (c in _mro(_type(x)) or _type(c).__name__ == "ABCMeta")

    return strict_isinstance


def _rng_isolation(torch, np):
    """``isolated(thunk)``: call into the student's code with the random number generators put back afterwards."""
    import random

    _zip = zip
    rng_state = [(random.getstate, random.setstate)]
    if torch is not None:
        rng_state.append((torch.random.get_rng_state, torch.random.set_rng_state))
    if np is not None:
        rng_state.append((np.random.get_state, np.random.set_state))

    def isolated(thunk):
        states = [get() for get, _set in rng_state]
        try:
            return thunk()
        finally:
            for (_get, put), st in _zip(rng_state, states):
                put(st)

    return isolated


class _Recorder:
    """What instrumented test cells call (through a constant patched into their code, never a name): each check's
    operands as plain data on the event pipe, while the test being run is ``current["test"]``. The method names are
    ``autograder.protocol.RECORDER_METHODS``; the node dicts are ``autograder.protocol.Node``'s."""

    __slots__ = ("placeholder", "isolated", "_emit", "_current", "_ser", "_dirty", "_short", "_describe",
                 "_fingerprint", "_isinstance")

    def __init__(self, *, emit, current, ser, placeholder, dirty, short, describe, fingerprint, isolated,
                 strict_isinstance):
        self.placeholder, self.isolated = placeholder, isolated
        self._emit, self._current, self._ser, self._dirty = emit, current, ser, dirty
        self._short, self._describe, self._fingerprint, self._isinstance = short, describe, fingerprint, strict_isinstance

    def _report(self, site, node, msg):
        current = self._current
        if current["test"] is not None:
            current["count"] += 1
            self._emit({"ev": "check", "test": current["test"], "site": site, "node": node, "msg": msg,
                        "dirty": self._dirty()})

    # ---- checks: an assert, and a checking function called as a statement
    def check(self, site, build, msg):
        node = build()
        ok = node["k"]
        text = None
        if not ok and msg is not None:
            try:
                text = self._short(msg(), 2000)
            except _BaseException as e:  # noqa: BLE001
                text = "<message failed: " + self._describe(e)["msg"] + ">"
        self._report(site, node, text)
        if not ok:
            raise _AssertionError(text) if text is not None else _AssertionError()

    def check_call(self, site, nid, qual, fthunk, athunk, kthunk):
        f, args, kw = fthunk(), athunk(), kthunk()
        ser = self._ser
        node = {"t": "call", "id": nid, "fn": qual, "args": [ser(a) for a in args],
                "kw": [[k, ser(v)] for k, v in kw.items()]}
        exc = None
        try:
            f(*args, **kw)
            node["k"] = True
        except _BaseException as e:  # noqa: BLE001
            node["k"] = False
            exc = e
        self._report(site, node, self._describe(exc)["msg"] if exc is not None else None)
        if exc is not None:
            raise exc

    # ---- a hidden part's checks, in the student's copy: they report and never decide
    def hidden_check(self, site, build):
        self._report(site, build(), None)

    def hidden_check_call(self, site, nid, qual, fthunk, athunk, kthunk):
        _f, args, kw = fthunk(), athunk(), kthunk()
        ser = self._ser
        self._report(site, {"t": "call", "id": nid, "fn": qual, "args": [ser(a) for a in args],
                            "kw": [[k, ser(v)] for k, v in kw.items()], "k": None}, None)

    # ---- expression nodes (evaluated lazily, like Python's own short-circuiting). A hidden part's literal or
    # reference operand is the placeholder in the student's copy (the judge has it): a check that meets one cannot
    # tell its own truth here (None), and says so
    def compare(self, nid, ops, thunks):
        ph, ser = self.placeholder, self._ser
        vals, links, ok = [], [], True
        left = thunks[0]()
        vals.append(ser(left))
        for op, th in _zip(ops, thunks[1:]):
            right = th()
            vals.append(ser(right))
            if left is ph or right is ph:
                r = None
            elif op == "Is":
                r = left is right
            elif op == "IsNot":
                r = left is not right
            else:
                r = _bool(_COMPARE[op](left, right))
            links.append(r)
            if r is None:
                ok = None if ok is True else ok
            elif not r:
                ok = False
                break
            left = right
        return {"t": "cmp", "id": nid, "ops": list(ops), "vals": vals, "links": links, "k": ok}

    def and_(self, nid, thunks):
        return self._junction("and", nid, thunks, False)

    def or_(self, nid, thunks):
        return self._junction("or", nid, thunks, True)

    @staticmethod
    def _junction(t, nid, thunks, decisive):
        """``and``/``or``: the items, evaluated in order until one is ``decisive`` (False for and, True for or)."""
        items, k = [], not decisive
        for th in thunks:
            n = th()
            items.append(n)
            if n["k"] is None:
                k = None
            elif _bool(n["k"]) is decisive:
                return {"t": t, "id": nid, "items": items, "k": decisive}
        return {"t": t, "id": nid, "items": items, "k": k}

    def not_(self, nid, thunk):
        n = thunk()
        return {"t": "not", "id": nid, "items": [n], "k": None if n["k"] is None else not n["k"]}

    def predicate(self, nid, qual, fthunk, athunk, kthunk):
        f, args, kw = fthunk(), athunk(), kthunk()
        ph, ser = self.placeholder, self._ser
        unknown = _any(a is ph for a in args) or _any(v is ph for v in kw.values())
        r = None if unknown else _bool(f(*args, **kw))
        return {"t": "call", "id": nid, "fn": qual, "args": [ser(a) for a in args],
                "kw": [[k, ser(v)] for k, v in kw.items()], "k": r}

    def isinstance_(self, nid, xthunk, cthunk):
        x, c = xthunk(), cthunk()
        return {"t": "prim", "id": nid, "k": self._isinstance(x, c)}

    def value(self, nid, thunk):
        v = thunk()
        return {"t": "val", "id": nid, "v": self._ser(v), "k": None if v is self.placeholder else _bool(v)}

    def reference_block(self, bid, names, thunk):
        """Where a reference block is (or, in the student's copy, was): the fingerprint of what it reads."""
        values = thunk()
        if self._current["test"] is not None:
            self._emit({"ev": "refblock", "test": self._current["test"], "block": bid,
                        "fp": self._fingerprint(_zip(names, values))})


# ---------------------------------------------------------------------------------------------- running cells
def _shell(snap, workdir):
    """The IPython shell that runs the student's cells (no history, plain tracebacks). The names it puts into
    builtins (display...) are there before any notebook code, so they are nobody's change; the working folder goes
    on ``sys.path`` at the END: a file beside the notebook never shadows a library."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    cfg = Config()
    cfg.HistoryManager.enabled = False
    cfg.InteractiveShell.colors = "nocolor"
    cfg.InteractiveShell.xmode = "Plain"
    shell = InteractiveShell.instance(config=cfg)
    for i, (name, d, keys, vals, n0, _all0) in enumerate(snap.modules):
        if len(d) != n0:
            snap.modules[i] = (name, d, keys, vals, len(d), frozenset(d))
    if workdir not in sys.path:
        sys.path.append(workdir)
    if "" in sys.path:
        sys.path.remove("")
    return shell


def _output_capture(max_out: int):
    """The class of a cell's stdout/stderr stand-in: keeps ``max_out`` characters, counts the rest."""
    _type, _str, _len, _join = type, str, len, "".join

    class Capped:
        encoding = "utf-8"
        errors = "replace"

        def __init__(self):
            self.parts, self.kept, self.total = [], 0, 0

        def write(self, s):
            if _type(s) is not str:
                s = _str(s)
            n = _len(s)
            self.total += n
            if self.kept < max_out:
                piece = s[: max_out - self.kept]
                self.parts.append(piece)
                self.kept += _len(piece)
            return n

        def flush(self):
            pass

        def isatty(self):
            return False

        def fileno(self):
            raise OSError("captured stream")

        def text(self):
            return _join(self.parts)

    return Capped


def _trusted_runner(user_ns, const_table, trust):
    """``run_trusted(cell)``: execute an instructor or test cell's compiled code directly in the notebook's namespace,
    its placeholder constants replaced by the recorder and the pristine builtins (see autograder.instrument); the
    functions it defines are the instructor's own (see :func:`_trust`)."""
    import base64
    import marshal
    import types

    _type, _isinstance, _CodeType, _exec = type, isinstance, types.CodeType, exec
    _loads, _b64decode = marshal.loads, base64.b64decode

    def patch_consts(code, table):
        consts = []
        for c in code.co_consts:
            if _type(c) is str and c in table:
                consts.append(table[c])
            elif _isinstance(c, _CodeType):
                consts.append(patch_consts(c, table))
            else:
                consts.append(c)
        return code.replace(co_consts=tuple(consts))

    def run_trusted(cell):
        code = patch_consts(_loads(_b64decode(cell["code_b64"])), const_table)
        trust.code(code)
        _exec(code, user_ns)

    return run_trusted


def _test_runner(guard, user_ns, run_trusted, ch, current):
    """``run_test_part(cell)``: run one part of a test cell (its first part starts the test, its last part or an
    error ends it). Returns ``PART_DONE`` when more parts follow, else the test's error (None when it passed).

    Before a test: the protected libraries, the registries of global hooks and the names the instructor's cells
    defined are put back (what was changed is reported with the test). After it: what was changed while it ran is
    reported and put back, the names only its hidden parts bound are removed, and the names both parts bound get
    back what the visible part left, so that the student's next cells see what their own notebook would (later
    tests still see everything, as in nbgrader). Also returns the names instructor cells bound (``instructor``)."""
    import builtins
    import linecache
    import types

    _type, _BaseException, _missing = type, BaseException, object()
    _len, _tuple, _list, _str, _int, _dict_get = len, tuple, list, str, int, dict.get
    _lines = linecache.cache   # the dict itself, taken before any student code runs (IPython keeps cells' sources here)
    instructor_names, hidden_names, ts = {}, set(), {}
    PART_DONE = object()
    emit, describe, audit = ch.emit, ch.describe, guard.audit

    def student_line(filename, lineno):
        """The text of line ``lineno`` of a cell the student ran (IPython keeps it with no modification time), or
        None: read with plain type checks only, so that nothing the student defined runs here."""
        entry = _dict_get(_lines, filename) if _type(filename) is _str else None
        if _type(entry) is not _tuple or _len(entry) != 4 or entry[1] is not None or _type(entry[2]) is not _list:
            return None
        if _type(lineno) is not _int or not 0 < lineno <= _len(entry[2]) or _type(entry[2][lineno - 1]) is not _str:
            return None
        return entry[2][lineno - 1].strip()[:300]

    def begin(cell):
        before_restore = guard.changed()
        ts["restored"] = guard.suspicious(before_restore) + guard.registries_changed()
        guard.restore(before_restore)
        guard.registries_reset()
        # what could not be put back (a guard that switches torch functions off, left entered) is held
        # against this test: the rules it checks would not hold
        ts["stuck"] = guard.registries_changed()
        shadowed = {}
        for k, v in instructor_names.items():
            if user_ns.get(k, shadowed) is not v:
                shadowed[k] = user_ns.get(k, shadowed)
                user_ns[k] = v
        if user_ns.get("__builtins__") is not builtins:
            user_ns["__builtins__"] = builtins
        ts.update(gid=cell["grade_id"], shadowed=shadowed, before=dict(user_ns), saved={})
        current["test"], current["count"] = cell["grade_id"], 0
        audit["events"] = []

    def run_part(cell):
        exc_info = None
        audit["active"] = True
        try:
            run_trusted(cell)
        except _BaseException as e:  # noqa: BLE001
            exc_info = describe(e)
            try:
                tb, line, mine = e.__traceback__, None, None
                while tb is not None:
                    code = tb.tb_frame.f_code
                    if code.co_filename == cell["filename"]:
                        # the test's own statement that was running (the outermost frame of the cell): a visible
                        # line that calls a helper defined in the cell's hidden lines failed visibly
                        line = tb.tb_lineno if line is None else line
                    else:
                        text = student_line(code.co_filename, tb.tb_lineno)
                        if text:   # the innermost line of the student's own cells, as Jupyter shows it
                            mine = f'at your line "{text}" (line {tb.tb_lineno}, in {_str(code.co_name)[:100]}): '
                    tb = tb.tb_next
                exc_info["line"] = line
                if mine is not None and _type(exc_info.get("msg")) is _str:
                    exc_info["msg"] = mine + exc_info["msg"]
            except _BaseException:  # noqa: BLE001
                pass
        audit["active"] = False
        return exc_info

    def end(cell, exc_info):
        current["test"] = None
        during = guard.changed()
        during_report = guard.suspicious(during) + guard.registries_changed() + ts["stuck"]
        guard.restore(during)
        guard.registries_reset()
        shadowed = ts["shadowed"]
        rebound = bound_names_after(ts["before"])
        instructor_names.update(rebound)   # later tests see what this one left, as in nbgrader
        for k, v in shadowed.items():  # the student's own bindings come back for the student's cells
            if k not in rebound and v is not shadowed:
                user_ns[k] = v
        # what the hidden parts bound: the student's cells get what the visible part had left (or nothing)
        for k, v in ts["saved"].items():
            if v is _missing:
                user_ns.pop(k, None)
                hidden_names.add(k)
            else:
                user_ns[k] = v
        hide = {k for k in cell.get("hide", []) if _type(k) is str}   # a cell that could not be cut in parts
        hidden_names.update(hide)
        for k in hidden_names:
            put_back = shadowed.get(k) is shadowed and k not in rebound   # restored for this test only
            if (k in hide or put_back) and k in instructor_names and user_ns.get(k, _missing) is instructor_names[k]:
                del user_ns[k]
        emit({"ev": "test_end", "test": ts["gid"], "ok": exc_info is None, "exc": exc_info,
              "checks": current["count"], "restored": ts["restored"][:50],
              "changed": during_report[:50], "audit": list(audit["events"]),
              "shadowed": sorted(k for k in shadowed)[:50]})
        ts.clear()

    def bound_names_after(before):
        return {k: v for k, v in list(user_ns.items()) if before.get(k, before) is not v}

    def run_test_part(cell):
        part, last = cell.get("part", 0), cell.get("last", True)
        if part == 0:
            ts.clear()
            begin(cell)
        elif ts.get("gid") != cell.get("grade_id"):
            return {"type": "RuntimeError", "msg": "a part of a test arrived out of order"}
        if cell.get("hidden"):
            # what the visible part left in these names is what the student's own notebook has: kept, to be
            # put back for the student's cells once the test is over
            for k in cell.get("binds", []):
                if _type(k) is str and k not in ts["saved"]:
                    ts["saved"][k] = user_ns.get(k, _missing)
        exc_info = run_part(cell)
        if exc_info is None and not last:
            return PART_DONE
        end(cell, exc_info)
        return exc_info

    return types.SimpleNamespace(run=run_test_part, PART_DONE=PART_DONE, instructor_names=instructor_names,
                                 bound_after=bound_names_after)


def _cell_loop(read_msg, ch, shell, run_trusted, tests, capture):
    """Run the cells as they come, each with its output captured, until the grader sends the end of the plan (or
    closes the pipe); every cell's start and end is reported, with its output and error."""
    import gc
    import time

    user_ns, emit, describe, signer = shell.user_ns, ch.emit, ch.describe, ch.signer
    _getpid, _exit, _now, _gc_collect = os.getpid, os._exit, time.perf_counter, gc.collect
    _BaseException, _KeyboardInterrupt = BaseException, KeyboardInterrupt
    real_stdout, real_stderr = sys.stdout, sys.stderr

    def run_student(cell):
        result = shell.run_cell(cell["code"], store_history=True, silent=False)
        exc = result.error_before_exec or result.error_in_exec
        if exc is None:
            return None
        error = describe(exc)
        # the traceback keeps the failing frames (and e.g. a memory bomb's list) alive: drop it
        for attr in ("last_type", "last_value", "last_traceback", "last_exc"):
            if hasattr(sys, attr):
                try:
                    delattr(sys, attr)
                except _BaseException:  # noqa: BLE001
                    pass
        try:
            exc.__traceback__ = None
            shell.InteractiveTB.tb = None
            shell.last_execution_result = None
        except _BaseException:  # noqa: BLE001
            pass
        del result, exc
        if error["type"] == "MemoryError":
            _gc_collect()
        return error

    def run_instructor(cell):
        before = dict(user_ns)
        error = None
        try:
            run_trusted(cell)
        except _BaseException as e:  # noqa: BLE001
            error = describe(e)
        tests.instructor_names.update(tests.bound_after(before))
        return error

    while True:
        cell = read_msg()
        if _getpid() != ch.pid:
            _exit(0)
        if cell is None:   # the grader closed the pipe: it wants nothing more
            break
        signer["tok"] = cell.pop("tok", None)
        if cell.get("end"):
            break
        index, kind = cell["i"], cell["kind"]
        if not cell.get("part"):   # a new cell (the later parts of a test cell continue it)
            emit({"ev": "cell_start", "i": index})
            out, err = capture(), capture()
            t0 = _now()
        sys.stdout, sys.stderr = out, err
        error = None
        try:
            if kind == "student":
                error = run_student(cell)
            elif kind == "instructor":
                error = run_instructor(cell)
            elif kind == "test":
                error = tests.run(cell)
                if error is tests.PART_DONE:   # more parts follow: the cell goes on with the next message
                    sys.stdout, sys.stderr = real_stdout, real_stderr
                    emit({"ev": "part_end", "i": index, "part": cell.get("part", 0)})
                    continue
        except _KeyboardInterrupt:
            error = {"type": "KeyboardInterrupt", "msg": "interrupted (time limit)"}
        except _BaseException as e:  # noqa: BLE001 - the driver itself must survive anything a cell does
            error = describe(e)
        finally:
            sys.stdout, sys.stderr = real_stdout, real_stderr
        if _getpid() != ch.pid:
            _exit(0)
        emit({"ev": "cell_end", "i": index, "seconds": round(_now() - t0, 4), "error": error,
              "stdout": out.text(), "stdout_chars": out.total, "stderr": err.text(), "stderr_chars": err.total})
        del cell, out, err


# ---------------------------------------------------------------------------------------------- the whole run
def _main():
    """Set everything up before any student code (each step a factory above), report ready, run the cells."""
    import builtins
    import signal
    import types

    _exit = os._exit
    # Interrupts are how the grader stops a cell that runs too long: make sure SIGINT raises
    # KeyboardInterrupt even if the grader was started with SIGINT ignored (e.g. as a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    read_msg = _command_pipe()
    plan = read_msg()
    notes = _confine(plan)                                   # stdlib only until here
    nproc_limited = os.getuid() != 0
    workdir = _working_folder(plan)
    ch = _event_channel(plan)
    preload_errors = _preload(plan.get("preload", []), plan.get("preload_packages", []))
    torch, np = _seed_libraries()
    pristine_builtins = types.SimpleNamespace(**vars(builtins))
    readers = _type_readers(torch, np)
    values = _value_encoder(plan, readers, ch)
    fingerprint = _fingerprinter(readers, values, ch.enc)
    # the protected surface: snapshot now, before any notebook code runs
    snap = _snapshot(plan, globals())
    changed_names, changed_internals = _name_changes(snap), _internal_changes(snap)
    trust = _trust(plan, snap)
    suspicious, restore = _tamper(trust)
    audit = _audit_hook(snap, trust)
    shell = _shell(snap, workdir)
    trust.globals_.add(id(shell.user_ns))   # the notebook's functions may be the instructor's own
    registries_changed, registries_reset = _hook_registries(torch, snap)
    guard = types.SimpleNamespace(changed=lambda: changed_names() + changed_internals(), suspicious=suspicious,
                                  restore=restore, registries_changed=registries_changed,
                                  registries_reset=registries_reset, audit=audit)
    current = {"test": None, "count": 0}
    recorder = _Recorder(emit=ch.emit, current=current, ser=values.ser, placeholder=values.placeholder,
                         dirty=lambda: (suspicious(changed_names()) + registries_changed())[:20], short=ch.short,
                         describe=ch.describe, fingerprint=fingerprint, isolated=_rng_isolation(torch, np),
                         strict_isinstance=_strict_isinstance_check())
    const_table = {plan["recorder_placeholder"]: recorder, plan["builtins_placeholder"]: pristine_builtins}
    run_trusted = _trusted_runner(shell.user_ns, const_table, trust)
    tests = _test_runner(guard, shell.user_ns, run_trusted, ch, current)
    capture = _output_capture(int(plan.get("max_output_chars", 20000)))
    ch.emit({"ev": "ready", "pid": ch.pid, "uid": os.getuid(), "nproc_limited": nproc_limited, "notes": notes,
             "preload_errors": preload_errors, "python": sys.version.split()[0],
             "torch": getattr(torch, "__version__", None), "protected": len(snap.modules) + len(snap.classes)})
    _cell_loop(read_msg, ch, shell, run_trusted, tests, capture)
    _t = os.times()
    ch.emit({"ev": "done", "cpu": round(_t.user + _t.system + _t.children_user + _t.children_system, 3)})
    sys.stdout.flush()
    _exit(0)


if __name__ == "__main__":
    try:
        _main()
    except KeyboardInterrupt:
        os._exit(71)
