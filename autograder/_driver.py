"""The in-sandbox half of the autograder: runs ONE notebook plan and reports what happened.

This file is started by :mod:`autograder.sandbox` as ``python -s -B -P _driver.py`` inside the sandbox (bubblewrap,
or a weaker fallback). It reads a JSON *setup* line from stdin, drops privileges and sets resource limits, then
receives the notebook's cells ONE AT A TIME on the same pipe, each only when it is about to run (so no test
cell, hidden or not, is anywhere in this process before its turn), and executes each in an IPython shell
(no Jupyter kernel, no ZeroMQ):

- ``student`` cells (the student's code) go through ``InteractiveShell.run_cell`` like in Jupyter;
- ``instructor`` cells (locked setup cells) and ``test`` cells (the instructor's autograded tests) are
  compiled and executed directly, so that no IPython input or AST transformer installed by student code
  ever sees or rewrites them.

Test cells arrive *instrumented* (see :mod:`autograder.instrument`): every ``assert`` and every call to a
known checking function reports its operands as plain data (numbers, strings, tensors as raw bytes) on an
event pipe. The verdict is NOT taken here: the grader re-evaluates every check outside this process, on that
data (:mod:`autograder.judge`). What runs here is only trusted to *produce* values.

Because student code shares this process, everything in here is best-effort hardening, not a guarantee
(see the threat model in :mod:`autograder`): the functions used to serialise values and write events are
captured before any student code runs; the instrumented test code reaches the recorder and the builtins
through constants patched into its code objects, not through names the student can rebind; library modules
(torch, numpy, the course package, builtins...) are snapshotted before student code runs and restored
before every test cell, and any change made to them while a test runs is reported, unless the new value is
the instructor's own (a function whose code comes from an instructor cell or from the course package, such
as a checker that makes a forbidden function raise while a test runs). Every message from the grader carries
a fresh token that signs the events of that cell only; names bound only by a hidden test are removed from
the namespace after its cell.

Only the standard library is imported before privileges are dropped.
"""
import os
import sys

# Linux syscall numbers and constants used before any student code runs (x86_64, else aarch64)
_X86 = os.uname().machine == "x86_64"
_SYS_KEYCTL = 250 if _X86 else 219
_CLONE_NEWUSER, _CLONE_NEWIPC = 0x10000000, 0x08000000
_KEYCTL_JOIN_SESSION_KEYRING, _KEYCTL_CLEAR = 1, 7
_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING = -4, -5


def _private_namespaces(libc, notes: list) -> None:
    """Give this submission a user namespace and an IPC namespace of its own, and a fresh session keyring.

    What the kernel keeps per user id or per IPC namespace outlives a process: System V and POSIX message queues,
    semaphores and shared memory (per IPC namespace), the user and user-session keyrings and the persistent keyring
    (per user id, in the registers of a user namespace). Successive submissions of one worker slot share a user id,
    and in a warm sandbox they share its namespaces too; so each submission gets its own: a user namespace that maps
    only its own user id (the kernel's keyring registers live in it, and die with it), a new IPC namespace inside it,
    and a new anonymous session keyring. The capabilities that a new user namespace grants are dropped at once.
    Where the kernel refuses (unprivileged user namespaces disabled), the user's keyrings are emptied instead."""
    import ctypes

    uid, gid = os.getuid(), os.getgid()

    class _Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class _Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    libc.prctl(4, 1, 0, 0, 0)   # PR_SET_DUMPABLE 1: after a change of user id, /proc/self/*_map are ours to write
    problem = None
    if libc.unshare(_CLONE_NEWUSER) != 0:
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
        notes.append(f"no private namespaces ({problem}); the user id's keyrings were emptied instead")
        for ring in (_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING):
            libc.syscall(_SYS_KEYCTL, _KEYCTL_CLEAR, ring)
    libc.syscall(_SYS_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)


def _main():  # noqa: C901 - one linear procedure, kept in one place on purpose
    import json as _json

    import signal

    # Interrupts are how the grader stops a cell that runs too long: make sure SIGINT raises
    # KeyboardInterrupt even if the grader was started with SIGINT ignored (e.g. as a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # The command pipe: the grader writes one JSON message per line on it, the setup first, then each cell when
    # it is about to run. It moves off fd 0, which becomes /dev/null: input() in a cell must not eat a message.
    cmd_fd = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _read = os.read
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
        return _json.loads(line.decode("utf-8"))

    plan = read_msg()

    # ------------------------------------------------------------------ privileges and limits (stdlib only)
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
        _private_namespaces(libc, notes)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: setuid binaries stay unprivileged
            notes.append("no_new_privs unavailable")
        # PR_SET_DUMPABLE: in a sandbox the submission's own processes are the only ones of its user id and
        # namespaces, and a dumpable process may reset its own peak-memory count (/proc/self/clear_refs: what
        # seqcourse.checks.measure_cost does); without one, processes of the grader's user id could ptrace it
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
    nproc_effective = os.getuid() != 0

    workdir = plan["workdir"]
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    import base64 as _b64

    for name, data in plan.pop("files", {}).items():
        path = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(_b64.b64decode(data))
    for src in plan.get("copy_dirs", []):  # e.g. a prebuilt matplotlib font cache
        import shutil

        dst = src["to"]
        try:
            shutil.copytree(src["from"], dst, dirs_exist_ok=True)
        except OSError:
            pass

    # ------------------------------------------------------------------ the event channel
    event_fd = plan["event_fd"]
    signer = {"tok": plan.pop("tok")}   # the token of the message being answered (the setup, then each cell)
    from json.encoder import encode_basestring_ascii as _esc

    _write = os.write
    _getpid = os.getpid
    my_pid = os.getpid()
    _type, _isinstance, _len, _repr, _str = type, isinstance, len, repr, str
    _bool, _zip, _int, _float, _dict, _list, _tuple = bool, zip, int, float, dict, list, tuple
    _inf, _ninf = float("inf"), float("-inf")
    _sysmodules = sys.modules
    import signal as _signal

    _sigmask, _BLOCK, _SETMASK = _signal.pthread_sigmask, _signal.SIG_BLOCK, _signal.SIG_SETMASK
    _block_set = {_signal.SIGINT}
    _int_repr, _float_repr = int.__repr__, float.__repr__
    _join = "".join
    _BaseException = BaseException
    _KeyboardInterrupt = KeyboardInterrupt
    _AssertionError = AssertionError
    _exit = os._exit

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

    def describe_exc(e):
        try:
            name = _type(e).__name__
        except _BaseException:
            name = "Exception"
        return {"type": short(name, 200), "msg": short(e)}

    # ------------------------------------------------------------------ heavy imports, seeds, pristine captures
    os.environ.setdefault("MPLBACKEND", "Agg")
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    preload_errors = []
    for mod in plan.get("preload", []):
        try:
            __import__(mod)
        except _BaseException as e:  # noqa: BLE001
            preload_errors.append(f"{mod}: {describe_exc(e)['msg']}")
    import pkgutil

    for pkg in plan.get("preload_packages", []):
        try:
            p = __import__(pkg)
            for info in pkgutil.walk_packages(p.__path__, pkg + "."):
                try:
                    __import__(info.name)
                except _BaseException:  # noqa: BLE001
                    pass
        except _BaseException as e:  # noqa: BLE001
            preload_errors.append(f"{pkg}: {describe_exc(e)['msg']}")

    import binascii
    import builtins
    import functools
    import operator
    import random
    import threading
    import types

    random.seed(0)
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
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

    _b2a = binascii.b2a_base64
    _is_not = operator.is_not
    _any, _all, _map = any, all, map
    _settrace, _setprofile = sys.settrace, sys.setprofile
    _thr_settrace, _thr_setprofile = threading.settrace, threading.setprofile
    _compile, _exec = compile, exec
    import gc

    _gc_collect = gc.collect
    _getframe = sys._getframe
    _set_attr = setattr
    _type_setattr = type.__setattr__
    _type_delattr = type.__delattr__
    _mro_get = type.__dict__["__mro__"].__get__
    _tqualname = type.__dict__["__qualname__"].__get__
    _tmodule = type.__dict__["__module__"].__get__
    pristine_builtins = types.SimpleNamespace(**vars(builtins))
    max_value_bytes = int(plan.get("max_value_bytes", 16 << 20))
    budget = {"left": int(plan.get("max_event_bytes", 64 << 20))}

    # ---- values -> plain data, read with the base types' own (captured) methods: an object that merely imitates
    # a number, a container or a tensor (an always-equal object...) becomes 'opaque' and fails its check; a
    # SUBCLASS of a plain type is reported by what it really holds (its overridden __eq__/__iter__ are never
    # called), so the judge's recomputation with plain semantics decides, whatever the subclass claims.
    if torch is not None:
        TB = torch._C.TensorBase
        _t_detach, _t_cpu, _t_contig, _t_numpy, _t_to = TB.detach, TB.cpu, TB.contiguous, TB.numpy, TB.to
        _t_resolve_conj, _t_resolve_neg = TB.resolve_conj, TB.resolve_neg
        _t_dtype = TB.__dict__["dtype"].__get__
        _t_shape = TB.__dict__["shape"].__get__
        _t_layout = TB.__dict__["layout"].__get__
        _t_is_q = TB.__dict__["is_quantized"].__get__
        _t_is_meta = TB.__dict__["is_meta"].__get__
        _t_is_nested = TB.__dict__["is_nested"].__get__
        strided = torch.strided
        f32 = torch.float32
        widen = {torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2} if hasattr(torch, "float8_e4m3fn") else {torch.bfloat16}
        t_dtype_type, t_device_type, t_size_type = torch.dtype, torch.device, torch.Size
        t_enum_types = tuple(t for t in (getattr(torch, "layout", None), getattr(torch, "memory_format", None),
                                         getattr(torch, "qscheme", None)) if _isinstance(t, type))
        _dtype_str = torch.dtype.__repr__
        _device_str = torch.device.__str__
    else:
        TB = None
        t_dtype_type = t_device_type = t_size_type = None
        t_enum_types = ()
    if np is not None:
        nd = np.ndarray
        _np_ascont = np.ascontiguousarray
        _np_tobytes = nd.tobytes
        _np_dtype = nd.__dict__["dtype"].__get__ if "dtype" in nd.__dict__ else None
        _np_shape = nd.__dict__["shape"].__get__ if "shape" in nd.__dict__ else None
        np_generic = np.generic
        np_dtype_type = np.dtype
        _np_array = np.array
        _np_dtype_str = np.dtype.__dict__["str"].__get__
    else:
        nd = np_generic = np_dtype_type = None
    import collections

    _OrderedDict = collections.OrderedDict
    _list_iter, _tuple_iter, _set_iter, _fs_iter = list.__iter__, tuple.__iter__, set.__iter__, frozenset.__iter__
    _dict_items, _dict_len = dict.items, dict.__len__
    _list_len, _tuple_len, _set_len, _fs_len = list.__len__, tuple.__len__, set.__len__, frozenset.__len__
    _bjoin = b"".join
    _dict_keys_type = _type({}.keys())
    _dict_items_type = _type({}.items())
    _range, _slice, _ellipsis = range, slice, _type(Ellipsis)
    _float_hex = float.hex

    def b64(b):
        return _b2a(b, newline=False).decode("ascii")

    PH_BOX = [object()]   # the placeholder of a hidden part's missing operands (see Recorder.ph)

    def spend(n):
        budget["left"] -= n
        return budget["left"] >= 0 and n <= max_value_bytes

    def ser(v, depth=0):
        t = _type(v)
        if v is None:
            return ["none"]
        if v is PH_BOX[0]:
            return ["ph"]
        if t is bool:
            return ["bool", v]
        if depth > 20:
            return ["opaque", "nested too deeply"]
        try:
            mro = _mro_get(t)
        except _BaseException:  # noqa: BLE001
            return ["opaque", "unknown type"]
        # numpy scalars first: numpy.float64 is also a subclass of float, numpy.str_ of str
        if np_generic is not None and np_generic in mro:
            try:
                return ["npscalar", ser_ndarray(_np_array(v))]
            except _BaseException:  # noqa: BLE001
                return ["opaque", "numpy scalar"]
        if int in mro:
            try:
                return ["int", _int_repr(v)]
            except ValueError:
                return ["opaque", "int (too large)"]
        if float in mro:
            return ["float", _float_hex(v)]
        if complex in mro:
            return ["complex", _float_hex(complex.real.__get__(v)), _float_hex(complex.imag.__get__(v))]
        if str in mro:
            s = v if t is str else _join((v,))
            return ["str", s] if spend(_len(s)) else ["opaque", "str (too large)"]
        if bytes in mro:
            b = v if t is bytes else _bjoin((v,))
            return ["bytes", b64(b)] if spend(_len(b)) else ["opaque", "bytes (too large)"]
        if tuple in mro:    # namedtuples and torch.return_types too: compared as tuples
            if _tuple_len(v) > 100000:
                return ["opaque", "tuple (too long)"]
            return ["tuple", [ser(x, depth + 1) for x in _tuple_iter(v)]]
        if list in mro:
            if _list_len(v) > 100000:
                return ["opaque", "list (too long)"]
            return ["list", [ser(x, depth + 1) for x in _list_iter(v)]]
        if dict in mro:
            if _dict_len(v) > 10000:
                return ["opaque", "dict (too long)"]
            return ["odict" if t is _OrderedDict else "dict",
                    [[ser(k, depth + 1), ser(x, depth + 1)] for k, x in _dict_items(v)]]
        if set in mro or frozenset in mro:
            it, n = (_set_iter, _set_len) if set in mro else (_fs_iter, _fs_len)
            if n(v) > 100000:
                return ["opaque", "set (too long)"]
            return ["set" if set in mro else "frozenset", [ser(x, depth + 1) for x in it(v)]]
        if t is _dict_keys_type:   # d.keys() compares like a set
            return ["set", [ser(x, depth + 1) for x in v]]
        if t is _dict_items_type:
            return ["set", [["tuple", [ser(k, depth + 1), ser(x, depth + 1)]] for k, x in v]]
        if TB is not None and TB in mro:
            return ser_tensor(v)
        if t_size_type is not None and t is t_size_type:
            return ["size", [ser(x, depth + 1) for x in _tuple_iter(v)]]
        if t_dtype_type is not None and t is t_dtype_type:
            return ["tdtype", _dtype_str(v)]
        if t_device_type is not None and t is t_device_type:
            return ["tdevice", _device_str(v)]
        if t in t_enum_types:
            return ["tconst", _tqualname(t), short(_str(v), 100)]
        if nd is not None and nd in mro:
            return ser_ndarray(v)
        if np_dtype_type is not None and np_dtype_type in mro:
            try:
                return ["npdtype", _np_dtype_str(v)]
            except _BaseException:  # noqa: BLE001
                return ["opaque", "numpy dtype"]
        if t is _range:
            return ["range", _int_repr(v.start), _int_repr(v.stop), _int_repr(v.step)]
        if t is _slice:
            return ["slice", ser(v.start, depth + 1), ser(v.stop, depth + 1), ser(v.step, depth + 1)]
        if t is _ellipsis:
            return ["ellipsis"]
        if type in mro:
            return ["type", short(_tmodule(v), 300), short(_tqualname(v), 300)]
        return ["opaque", short(_tmodule(t), 100) + "." + short(_tqualname(t), 200)]

    def ser_tensor(v):
        try:
            if _t_layout(v) is not strided or _t_is_q(v) or _t_is_meta(v) or _t_is_nested(v):
                return ["opaque", "tensor (not a plain dense tensor)"]
            dt = _t_dtype(v)
            x = _t_detach(v)
            x = _t_resolve_neg(_t_resolve_conj(_t_cpu(x)))
            if dt in widen:
                x = _t_to(x, f32)
            arr = _t_numpy(_t_contig(x))
            raw = _np_tobytes(arr)
            if not spend(_len(raw)):
                return ["opaque", f"tensor (too large: {_len(raw) >> 20} MiB)"]
            return ["tensor", _dtype_str(dt), [_int(s) for s in _t_shape(v)], _np_dtype_str(_np_dtype(arr)), b64(raw)]
        except _BaseException as e:  # noqa: BLE001
            return ["opaque", "tensor: " + describe_exc(e)["msg"][:200]]

    def ser_ndarray(v):
        try:
            dt = _np_dtype(v)
            kind = dt.kind
            if kind not in "biufc":
                return ["opaque", f"numpy array of dtype {short(_np_dtype_str(dt), 50)}"]
            arr = _np_ascont(v)
            raw = _np_tobytes(arr)
            if not spend(_len(raw)):
                return ["opaque", f"array (too large: {_len(raw) >> 20} MiB)"]
            return ["ndarray", _np_dtype_str(_np_dtype(arr)), [_int(s) for s in _np_shape(v)], b64(raw)]
        except _BaseException as e:  # noqa: BLE001
            return ["opaque", "array: " + describe_exc(e)["msg"][:200]]

    # ---- protected library state: snapshot now, before any notebook code runs
    prefixes = tuple(plan.get("protected_prefixes", []))
    KINDS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, property, staticmethod,
             classmethod, types.MethodDescriptorType, types.WrapperDescriptorType,
             types.ClassMethodDescriptorType, functools.partial, types.GetSetDescriptorType,
             types.MemberDescriptorType)

    def protected_module(name):
        return name == "builtins" or name.split(".")[0] in prefixes

    snap_modules = []  # (name, module dict, keys tuple, values tuple, number of keys, all keys)
    snap_classes = []  # (qualified name, class, keys tuple, values tuple)
    class_keys = {}    # id(class) -> (number of keys, all keys) before any notebook code
    _absent = object()
    seen_classes = set()
    course_pkgs = tuple(plan.get("preload_packages", []))
    snap_funcs = {}    # id(function) -> (qualified name, function): the protected Python functions

    def snap_function(qn, f):
        t = _type(f)
        if t is staticmethod or t is classmethod:
            f = f.__func__
        if t is property:
            for part, g in (("fget", f.fget), ("fset", f.fset), ("fdel", f.fdel)):
                if _type(g) is types.FunctionType and id(g) not in snap_funcs:
                    snap_funcs[id(g)] = (qn + "." + part, g)
        elif _type(f) is types.FunctionType and id(f) not in snap_funcs:
            snap_funcs[id(f)] = (qn, f)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, mod in list(sys.modules.items()):
            if mod is None or not protected_module(name):
                continue
            try:
                d = object.__getattribute__(mod, "__dict__")
            except Exception:  # noqa: BLE001
                continue
            keep = {}
            # the course's own modules: every value (a flag or a table it reads is as much its behaviour as a function)
            everything = name.split(".")[0] in course_pkgs
            for k, v in list(d.items()):
                if everything or _isinstance(v, KINDS) or (
                        _isinstance(v, types.ModuleType) and sys.modules.get(name + "." + k) is v):
                    keep[k] = v
                    snap_function(name + "." + k, v)
                    if _type(v) is type or _isinstance(v, type):
                        if id(v) in seen_classes:
                            continue
                        try:
                            cmod = _tmodule(v)
                        except Exception:  # noqa: BLE001
                            continue
                        if _type(cmod) is not str or not protected_module(cmod):
                            continue
                        seen_classes.add(id(v))
                        cd = {ck: cv for ck, cv in v.__dict__.items() if _isinstance(cv, KINDS)}
                        qn = cmod + "." + _tqualname(v)
                        snap_classes.append((qn, v, tuple(cd), tuple(cd.values())))
                        for ck, cv in cd.items():
                            snap_function(qn + "." + ck, cv)
                        # every key, so that one ADDED later is seen too (a __call__ shadowing the inherited one)
                        class_keys[id(v)] = (_len(v.__dict__), frozenset(v.__dict__))
            snap_modules.append((name, d, tuple(keep), tuple(keep.values()), _len(d), frozenset(d)))
    snap_sysmodules = {name: mod for name, mod in sys.modules.items() if mod is not None and protected_module(name)}
    _dget = dict.get
    _callable = callable

    def new_module_key(name, k, v):
        """Whether a key that appeared in a protected module could change what library code does: a callable, a
        class or a module that is not that module's own submodule (a lazy ``import`` adds those)."""
        if _isinstance(v, types.ModuleType):
            return _sysmodules.get(name + "." + k) is not v
        return k != "__warningregistry__" and (_callable(v) or _isinstance(v, KINDS))

    def changed_names():
        """Names of protected functions/classes/descriptors that differ from the snapshot, and keys added to
        protected modules and classes (fast path first: this runs at every check)."""
        out = []
        for name, d, keys, vals, n0, all0 in snap_modules:
            if _any(_map(_is_not, _map(d.get, keys), vals)):
                out += [(name + "." + k, d, k, v) for k, v in _zip(keys, vals) if _dget(d, k, _absent) is not v]
            if _len(d) != n0:
                out += [(name + "." + k, d, k, _absent) for k, v in list(d.items())
                        if k not in all0 and new_module_key(name, k, v)]
        for qn, cls, keys, vals in snap_classes:
            cd = cls.__dict__
            if _any(_map(_is_not, _map(cd.get, keys), vals)):
                out += [(qn + "." + k, cls, k, v) for k, v in _zip(keys, vals) if cd.get(k, _absent) is not v]
            n0, all0 = class_keys[id(cls)]
            if _len(cd) != n0:
                out += [(qn + "." + k, cls, k, _absent) for k in list(cd) if k not in all0]
        for name, mod in snap_sysmodules.items():
            if _dget(_sysmodules, name) is not mod:
                out.append(("sys.modules[" + name + "]", _sysmodules, name, mod))
        return out

    # ---- what a protected function IS: its code, defaults and closure (assigning ``f.__code__`` keeps the
    # function object, so comparing identities in the module alone would never see it)
    _funcs = [f for _qn, f in snap_funcs.values()]
    _fnames = [qn for qn, _f in snap_funcs.values()]
    _get_code, _get_defaults, _get_kwdefaults, _get_closure = (operator.attrgetter(a) for a in (
        "__code__", "__defaults__", "__kwdefaults__", "__closure__"))
    snap_internals = [(a, g, tuple(_map(g, _funcs))) for a, g in (("__code__", _get_code),
                                                                ("__defaults__", _get_defaults),
                                                                ("__kwdefaults__", _get_kwdefaults))]
    _closed = [(i, f.__closure__) for i, f in enumerate(_funcs) if f.__closure__]

    def _cell_value(c):
        try:
            return c.cell_contents
        except ValueError:
            return _absent

    snap_cells = [(i, cells, tuple(_cell_value(c) for c in cells)) for i, cells in _closed]

    def changed_internals():
        """(qualified name.attribute, function, attribute, original) for every protected function whose code,
        defaults or closure differ from the snapshot (at the borders of every test: a change made while a test
        runs is also reported at once by the audit hook)."""
        out = []
        for attr, getter, old in snap_internals:
            if _any(_map(_is_not, _map(getter, _funcs), old)):
                out += [(_fnames[i] + "." + attr, _funcs[i], attr, o) for i, (f, o) in enumerate(_zip(_funcs, old))
                        if getter(f) is not o]
        for i, cells, old in snap_cells:
            if _funcs[i].__closure__ is not cells or _any(_map(_is_not, _map(_cell_value, cells), old)):
                out.append((_fnames[i] + ".__closure__", cells, "cell_contents", old))
        return out

    _FunctionType = types.FunctionType
    _CodeType = types.CodeType
    _missing = object()

    # ---- the instructor's own values. A test may patch a library function on purpose while it runs (e.g. make
    # nn.GRUCell.forward raise, to check that an answer does not call it) and restore it afterwards. Such a value
    # is not tampering: it is a function whose code object IS one the grader loaded for an instructor cell or
    # one of the course package's (identity, not name: a student cannot mint either), whose globals are the
    # notebook's or the course module's, and whose closure and defaults hold only inert data or such functions.
    trusted_codes = set()
    trusted_refs = []           # keeps the trusted code objects alive, so that their ids stay theirs
    trusted_globals = set()

    def trust_code(code, depth=0):
        if _type(code) is not _CodeType or depth > 50 or id(code) in trusted_codes:
            return
        trusted_codes.add(id(code))
        trusted_refs.append(code)
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

    module_dict = [None]
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
        if t is not _FunctionType:
            return False
        if id(v.__code__) not in trusted_codes:
            return False
        g = v.__globals__
        if g is not user_ns and id(g) not in trusted_globals:
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

    def trusted_patch(v):
        """Whether a value put into a library object is the instructor's own: a trusted FUNCTION (plain data
        is not: `torch.pi = 3` or a new class attribute is somebody's change)."""
        return _type(v) in (_FunctionType, staticmethod, classmethod, property) and trusted_value(v)

    def part_ok(x, depth):
        """What a trusted function may hold in its closure or defaults: inert data, trusted functions, and the
        library's own objects as they were before any notebook code ran (e.g. the original it restores)."""
        return id(x) in snap_value_ids or trusted_value(x, depth + 1)

    def suspicious_changes(changes):
        """Changes that are neither a library wrapping its own function (functools.wraps keeps ``__wrapped__``)
        nor the instructor's own patch (see ``trusted_value``)."""
        out = []
        for name, where, k, old in changes:
            try:
                t = _type(where)
                if t is tuple:     # a closure's cells: never the instructor's to change
                    out.append(name)
                    continue
                if t is _FunctionType:
                    if k == "__code__" and id(where.__code__) in trusted_codes:
                        continue
                    out.append(name)
                    continue
                new = where.get(k, _absent) if t is dict else where.__dict__.get(k, _absent)
                if _type(new) is _FunctionType and new.__dict__.get("__wrapped__") is old:
                    continue
                if trusted_patch(new):
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
                        if x is _absent:
                            del c.cell_contents
                        else:
                            c.cell_contents = x
                elif t is dict:
                    if v is _absent:
                        where.pop(k, None)
                    else:
                        where[k] = v
                elif t is _FunctionType:
                    _set_attr(where, k, v)
                elif v is _absent:   # a key that was not there: removed again
                    _type_delattr(where, k)
                else:
                    _type_setattr(where, k, v)
            except _BaseException:  # noqa: BLE001
                pass

    snap_attr = {}
    snap_value_ids = {id(_v) for _n, _d, _keys, _vals, _n0, _all in snap_modules for _v in _vals}
    snap_value_ids |= {id(_v) for _qn, _cls, _keys, _vals in snap_classes for _v in _vals}
    for _qn, _cls, _keys, _vals in snap_classes:
        for _k, _v in _zip(_keys, _vals):
            snap_attr[(id(_cls), _k)] = _v
    audit = {"active": False, "events": []}
    suspicious = ("ctypes.", "gc.get_referrers", "gc.get_referents", "gc.get_objects", "sys._current_frames",
                  "sys.settrace", "sys.setprofile", "object.__setattr__", "object.__delattr__")

    _fsdecode, _realpath, _PathLike = os.fsdecode, os.path.realpath, os.PathLike

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

    def hook(event, args):
        if event == "sys.addaudithook":
            raise RuntimeError("audit hooks are disabled while grading")
        if event == "open" and args and _isinstance(args[0], (str, bytes, _PathLike)):
            # a process's own memory and its peak-memory count (what measure_cost reads): never the student's to
            # write; only the course package's own code may reset the count
            which = proc_file(args[0])
            if which == "mem" or (which == "clear_refs" and id(_getframe(1).f_code) not in trusted_codes):
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
        if audit["active"] and event.startswith(suspicious):
            if event in ("object.__setattr__", "object.__delattr__"):
                try:
                    obj = args[0]
                    fn = snap_funcs.get(id(obj))
                    if fn is not None and fn[1] is obj:   # a protected function's code, defaults...
                        # the instructor's own (a forbid block swapping in its raiser, and back): by who does it
                        if args[1] == "__code__" and id(_getframe(1).f_code) in trusted_codes:
                            return
                        if _len(audit["events"]) < 50:
                            audit["events"].append(f"{event} {fn[0]}.{args[1]}"[:300])
                        return
                    if id(obj) not in seen_classes:  # only classes that existed before any notebook code
                        return
                    if event == "object.__setattr__" and _len(args) > 2:
                        value = args[2]
                        # putting the pristine value back, or installing the instructor's own: not tampering
                        if value is snap_attr.get((id(obj), args[1]), _missing) or trusted_patch(value):
                            return
                    event = f"{event} {_tmodule(obj)}.{_tqualname(obj)}.{args[1]}"
                except Exception:  # noqa: BLE001
                    return
            if _len(audit["events"]) < 50:
                audit["events"].append(event[:300])

    sys.addaudithook(hook)

    # ------------------------------------------------------------------ the recorder used by instrumented tests
    current = {"test": None, "count": 0}
    PH = PH_BOX[0]   # see Recorder.ph
    import hashlib

    _sha256 = hashlib.sha256
    rng_state = [(random.getstate, random.setstate)]
    if torch is not None:
        rng_state.append((torch.random.get_rng_state, torch.random.set_rng_state))
    if np is not None:
        rng_state.append((np.random.get_state, np.random.set_state))
    _Module = torch.nn.Module if torch is not None else None
    _ModuleType = types.ModuleType

    def fp_value(v, depth=0):
        """A plain, comparable description of an input of a reference block (tensors by a digest of their bytes,
        modules by their parameters and buffers, functions by their code and defaults)."""
        t = _type(v)
        if depth > 8:
            return "..."
        if TB is not None and TB in _mro_get(t):
            try:
                arr = _t_numpy(_t_contig(_t_resolve_neg(_t_resolve_conj(_t_cpu(_t_detach(v))))))
                return ["tensor", _dtype_str(_t_dtype(v)), [_int(x) for x in _t_shape(v)],
                        _sha256(_np_tobytes(arr)).hexdigest()]
            except _BaseException:  # noqa: BLE001
                return ["tensor", "?"]
        if _Module is not None and _Module in _mro_get(t):
            d = object.__getattribute__(v, "__dict__")
            return ["nn.Module", _tqualname(t),
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
        return plain if plain[0] != "opaque" else ["object", _tqualname(t)]

    def fingerprint(pairs):
        return _sha256(enc([[n, fp_value(v)] for n, v in pairs]).encode()).hexdigest()

    class Recorder:
        __slots__ = ()

        def check(self, site, build, msg):
            node = build()
            ok = node["k"]
            text = None
            if not ok and msg is not None:
                try:
                    text = short(msg(), 2000)
                except _BaseException as e:  # noqa: BLE001
                    text = "<message failed: " + describe_exc(e)["msg"] + ">"
            if current["test"] is not None:
                current["count"] += 1
                emit({"ev": "check", "test": current["test"], "site": site, "node": node, "msg": text,
                      "dirty": (suspicious_changes(changed_names()) + changed_registries())[:20]})
            if not ok:
                raise _AssertionError(text) if text is not None else _AssertionError()

        def acall(self, site, nid, qual, fthunk, athunk, kthunk):
            f, args, kw = fthunk(), athunk(), kthunk()
            node = {"t": "call", "id": nid, "fn": qual, "args": [ser(a) for a in args],
                    "kw": [[k, ser(v)] for k, v in kw.items()]}
            exc = None
            try:
                f(*args, **kw)
                node["k"] = True
            except _BaseException as e:  # noqa: BLE001
                node["k"] = False
                exc = e
            if current["test"] is not None:
                current["count"] += 1
                emit({"ev": "check", "test": current["test"], "site": site, "node": node,
                      "msg": describe_exc(exc)["msg"] if exc is not None else None,
                      "dirty": (suspicious_changes(changed_names()) + changed_registries())[:20]})
            if exc is not None:
                raise exc

        # ---- expression nodes (evaluated lazily, like Python's own short-circuiting)
        # ---- the placeholder of a hidden part's literal or reference operand (the student's copy has no such
        # value: the judge takes it from the instructor's source or the reference run); a check that meets one
        # cannot tell its own truth here (None), and says so
        ph = PH

        def cmp(self, nid, ops, thunks):
            vals, links, ok = [], [], True
            left = thunks[0]()
            vals.append(ser(left))
            for op, th in _zip(ops, thunks[1:]):
                right = th()
                vals.append(ser(right))
                if left is PH or right is PH:
                    r = None
                elif op == "Is":
                    r = left is right
                elif op == "IsNot":
                    r = left is not right
                else:
                    r = _bool(OPS[op](left, right))
                links.append(r)
                if r is None:
                    ok = None if ok is True else ok
                elif not r:
                    ok = False
                    break
                left = right
            return {"t": "cmp", "id": nid, "ops": list(ops), "vals": vals, "links": links, "k": ok}

        def and_(self, nid, thunks):
            items, k = [], True
            for th in thunks:
                n = th()
                items.append(n)
                if n["k"] is None:
                    k = None
                elif not n["k"]:
                    return {"t": "and", "id": nid, "items": items, "k": False}
            return {"t": "and", "id": nid, "items": items, "k": k}

        def or_(self, nid, thunks):
            items, k = [], False
            for th in thunks:
                n = th()
                items.append(n)
                if n["k"] is None:
                    k = None
                elif n["k"]:
                    return {"t": "or", "id": nid, "items": items, "k": True}
            return {"t": "or", "id": nid, "items": items, "k": k}

        def not_(self, nid, thunk):
            n = thunk()
            return {"t": "not", "id": nid, "items": [n], "k": None if n["k"] is None else not n["k"]}

        def pcall(self, nid, qual, fthunk, athunk, kthunk):
            f, args, kw = fthunk(), athunk(), kthunk()
            unknown = _any(a is PH for a in args) or _any(v is PH for v in kw.values())
            r = None if unknown else _bool(f(*args, **kw))
            return {"t": "call", "id": nid, "fn": qual, "args": [ser(a) for a in args],
                    "kw": [[k, ser(v)] for k, v in kw.items()], "k": r}

        def inst(self, nid, xthunk, cthunk):
            x, c = xthunk(), cthunk()
            return {"t": "prim", "id": nid, "k": strict_isinstance(x, c)}

        def val(self, nid, thunk):
            v = thunk()
            return {"t": "val", "id": nid, "v": ser(v), "k": None if v is PH else _bool(v)}

        # ---- a hidden part's checks, in the student's copy: they report and never decide
        def hcheck(self, site, build):
            node = build()
            if current["test"] is not None:
                current["count"] += 1
                emit({"ev": "check", "test": current["test"], "site": site, "node": node, "msg": None,
                      "dirty": (suspicious_changes(changed_names()) + changed_registries())[:20]})

        def hcall(self, site, nid, qual, fthunk, athunk, kthunk):
            _f, args, kw = fthunk(), athunk(), kthunk()
            node = {"t": "call", "id": nid, "fn": qual, "args": [ser(a) for a in args],
                    "kw": [[k, ser(v)] for k, v in kw.items()], "k": None}
            if current["test"] is not None:
                current["count"] += 1
                emit({"ev": "check", "test": current["test"], "site": site, "node": node, "msg": None,
                      "dirty": (suspicious_changes(changed_names()) + changed_registries())[:20]})

        def refblock(self, bid, names, thunk):
            """Where a reference block is (or, in the student's copy, was): the fingerprint of what it reads."""
            values = thunk()
            if current["test"] is not None:
                emit({"ev": "refblock", "test": current["test"], "block": bid,
                      "fp": fingerprint(_zip(names, values))})

        def iso(self, thunk):
            """A call into the student's code, with the random number generators put back afterwards."""
            states = [get() for get, _set in rng_state]
            try:
                return thunk()
            finally:
                for (_get, put), st in _zip(rng_state, states):
                    put(st)

    OPS = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
           "GtE": operator.ge, "In": lambda a, b: operator.contains(b, a),
           "NotIn": lambda a, b: not operator.contains(b, a)}

    def strict_isinstance(x, c):
        """isinstance() that a fake ``__class__`` or a patched builtin cannot fool for ordinary classes."""
        if _type(c) is tuple:
            return _any(strict_isinstance(x, cc) for cc in c)
        if not _isinstance(c, type):
            return _isinstance(x, c)
        if _type(c) is type:
            return c in _mro_get(_type(x))
        return _isinstance(x, c) and (c in _mro_get(_type(x)) or _type(c).__name__ == "ABCMeta")

    recorder = Recorder()

    def patch_consts(code, table):
        consts = []
        for c in code.co_consts:
            if _type(c) is str and c in table:
                consts.append(table[c])
            elif _isinstance(c, types.CodeType):
                consts.append(patch_consts(c, table))
            else:
                consts.append(c)
        return code.replace(co_consts=tuple(consts))

    const_table = {plan["rt_placeholder"]: recorder, plan["builtins_placeholder"]: pristine_builtins}

    # ------------------------------------------------------------------ the shell and output capture
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    cfg = Config()
    cfg.HistoryManager.enabled = False
    cfg.InteractiveShell.colors = "nocolor"
    cfg.InteractiveShell.xmode = "Plain"
    shell = InteractiveShell.instance(config=cfg)
    # the shell puts its own names into builtins (display...): before any notebook code, so not anybody's change
    for _i, (_n, _d, _keys, _vals, _n0, _all0) in enumerate(snap_modules):
        if _len(_d) != _n0:
            snap_modules[_i] = (_n, _d, _keys, _vals, _len(_d), frozenset(_d))
    user_ns = shell.user_ns
    if workdir not in sys.path:
        sys.path.append(workdir)  # at the END: a file beside the notebook never shadows a library
    if "" in sys.path:
        sys.path.remove("")
    max_out = int(plan.get("max_output_chars", 20000))

    class Capped:
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

        encoding = "utf-8"
        errors = "replace"

        def text(self):
            return _join(self.parts)

    instructor_names = {}
    real_stdout, real_stderr = sys.stdout, sys.stderr

    def bound_names_after(before):
        after = {}
        for k, v in list(user_ns.items()):
            if before.get(k, before) is not v:
                after[k] = v
        return after

    import marshal

    _loads = marshal.loads

    def run_trusted(cell):
        code = patch_consts(_loads(_b64.b64decode(cell["code_b64"])), const_table)
        trust_code(code)   # the functions it defines are the instructor's own (see trusted_value)
        _exec(code, user_ns)

    hidden_names = set()   # names that only hidden tests bind: never left in the namespace for student cells
    PART_DONE = object()
    test_state = {}

    def run_test_part(cell):
        """Run one part of a test cell (its first part starts the test, its last part or an error ends it).
        Returns PART_DONE when more parts follow, else the test's error (None when it passed)."""
        part, last = cell.get("part", 0), cell.get("last", True)
        ts = test_state
        if part == 0:
            ts.clear()
            gid = cell["grade_id"]
            before_restore = changed_names() + changed_internals()
            ts["restored"] = suspicious_changes(before_restore) + changed_registries()
            restore(before_restore)
            reset_registries()
            # what could not be put back (a guard that switches torch functions off, left entered) is held
            # against this test: the rules it checks would not hold
            ts["stuck"] = changed_registries()
            shadowed = {}
            for k, v in instructor_names.items():
                if user_ns.get(k, shadowed) is not v:
                    shadowed[k] = user_ns.get(k, shadowed)
                    user_ns[k] = v
            if user_ns.get("__builtins__") is not builtins:
                user_ns["__builtins__"] = builtins
            ts.update(gid=gid, shadowed=shadowed, before=dict(user_ns), saved={})
            current["test"], current["count"] = gid, 0
            audit["events"] = []
        elif ts.get("gid") != cell.get("grade_id"):
            return {"type": "RuntimeError", "msg": "a part of a test arrived out of order"}
        if cell.get("hidden"):
            # what the visible part left in these names is what the student's own notebook has: kept, to be
            # put back for the student's cells once the test is over
            for k in cell.get("binds", []):
                if _type(k) is str and k not in ts["saved"]:
                    ts["saved"][k] = user_ns.get(k, _missing)
        exc_info = None
        audit["active"] = True
        try:
            run_trusted(cell)
        except _BaseException as e:  # noqa: BLE001
            exc_info = describe_exc(e)
            try:
                tb, line = e.__traceback__, None
                while tb is not None:
                    if tb.tb_frame.f_code.co_filename == cell["filename"]:
                        line = tb.tb_lineno
                    tb = tb.tb_next
                exc_info["line"] = line
            except _BaseException:  # noqa: BLE001
                pass
        audit["active"] = False
        if exc_info is None and not last:
            return PART_DONE
        current["test"] = None
        during = changed_names() + changed_internals()
        during_report = suspicious_changes(during) + changed_registries() + ts["stuck"]
        restore(during)
        reset_registries()
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
        return exc_info

    # ---- registries of global hooks: what library code or the interpreter calls back into, whatever object it
    # works on (module hooks, torch function and dispatch modes, saved-tensor hooks, trace and profile functions,
    # gc callbacks, import hooks, sys hooks, signal handlers). Their state now, before any notebook code, is the
    # baseline: every test starts from it (anything the student's cells registered is removed, and reported), and
    # anything registered while a test runs is tampering (the instructor's own modes, such as a forbid block's,
    # are recognised by their class: defined in a protected module before any notebook code ran).
    import signal as _sig

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

    def trusted_mode(m):
        return id(_type(m)) in seen_classes

    if torch is not None:
        C = torch._C
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
    handlers0 = {}
    for sig in _sig.valid_signals():
        try:
            handlers0[sig] = _sig.getsignal(sig)
        except (ValueError, OSError):
            pass

    def signal_state():
        return tuple(_sig.getsignal(s) is h for s, h in handlers0.items()) + tuple(
            _sig.getitimer(w) == (0.0, 0.0) for w in (_sig.ITIMER_REAL, _sig.ITIMER_VIRTUAL, _sig.ITIMER_PROF))

    def signal_reset():
        for w in (_sig.ITIMER_REAL, _sig.ITIMER_VIRTUAL, _sig.ITIMER_PROF):
            _sig.setitimer(w, 0)
        for s, h in handlers0.items():
            if _sig.getsignal(s) is not h and h is not None:
                try:
                    _sig.signal(s, h)
                except (ValueError, OSError, TypeError):
                    pass

    registry("signal handlers and timers", signal_state, signal_reset)
    registries_baseline = [(name, get()) for name, get, _reset in registries]

    def changed_registries():
        """Names of the hook registries that are not as they were before any notebook code ran."""
        out = []
        for (name, get, _reset), (_n, base) in _zip(registries, registries_baseline):
            try:
                now = get()
            except _BaseException:  # noqa: BLE001
                out.append(name)
                continue
            if now != base and not (_type(now) is tuple and now[: _len(base)] == base and _all(now[_len(base):])):
                out.append(name)   # (a longer mode stack is fine when the extra modes are all trusted ones)
        return out

    def reset_registries():
        for name, get, reset in registries:
            try:
                reset()
            except _BaseException:  # noqa: BLE001
                pass

    emit({"ev": "ready", "pid": my_pid, "uid": os.getuid(), "nproc_limited": nproc_effective, "notes": notes,
          "preload_errors": preload_errors, "python": sys.version.split()[0],
          "torch": getattr(torch, "__version__", None), "protected": len(snap_modules) + len(snap_classes)})

    import time

    _now = time.perf_counter
    while True:
        cell = read_msg()
        if _getpid() != my_pid:
            _exit(0)
        if cell is None:   # the grader closed the pipe: it wants nothing more
            break
        signer["tok"] = cell.pop("tok", None)
        if cell.get("end"):
            break
        index, kind = cell["i"], cell["kind"]
        if not cell.get("part"):   # a new cell (the later parts of a test cell continue it)
            emit({"ev": "cell_start", "i": index})
            out, err = Capped(), Capped()
            t0 = _now()
        sys.stdout, sys.stderr = out, err
        error = None
        try:
            if kind == "student":
                result = shell.run_cell(cell["code"], store_history=True, silent=False)
                exc = result.error_before_exec or result.error_in_exec
                if exc is not None:
                    error = describe_exc(exc)
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
            elif kind == "instructor":
                before = dict(user_ns)
                try:
                    run_trusted(cell)
                except _BaseException as e:  # noqa: BLE001
                    error = describe_exc(e)
                instructor_names.update(bound_names_after(before))
            elif kind == "test":
                error = run_test_part(cell)
                if error is PART_DONE:   # more parts follow: the cell goes on with the next message
                    sys.stdout, sys.stderr = real_stdout, real_stderr
                    emit({"ev": "part_end", "i": index, "part": cell.get("part", 0)})
                    continue
        except _KeyboardInterrupt:
            error = {"type": "KeyboardInterrupt", "msg": "interrupted (time limit)"}
        except _BaseException as e:  # noqa: BLE001 - the driver itself must survive anything a cell does
            error = describe_exc(e)
        finally:
            sys.stdout, sys.stderr = real_stdout, real_stderr
        if _getpid() != my_pid:
            _exit(0)
        emit({"ev": "cell_end", "i": index, "seconds": round(_now() - t0, 4), "error": error,
              "stdout": out.text(), "stdout_chars": out.total, "stderr": err.text(), "stderr_chars": err.total})
        del cell, out, err
    _t = os.times()
    emit({"ev": "done", "cpu": round(_t.user + _t.system + _t.children_user + _t.children_system, 3)})
    sys.stdout.flush()
    _exit(0)


if __name__ == "__main__":
    try:
        _main()
    except KeyboardInterrupt:
        os._exit(71)
