"""The warm half of a sandbox: imports the heavy libraries ONCE, then forks one fresh process per submission.

Started by :mod:`autograder.warm` inside the same bubblewrap sandbox as a cold run (same mounts, namespaces,
environment), as ``python _zygote.py CONTROL_FD``. It never runs student code itself. It imports what the
driver would import before any student code (torch, numpy, the course package, IPython), with the driver's own
``_preload`` (loaded from the driver's file, which defines it and runs nothing else unless it is ``__main__``),
makes itself non-dumpable (no ptrace, no /proc/PID/mem from its children), and then serves requests on a Unix
socket (its replies are :class:`autograder.protocol.ZygoteReply`):

1. the host sends ``{"op": "run"}`` with three file descriptors (the plan pipe, the output pipe, the event
   pipe) — SCM_RIGHTS;
2. it empties every writable place of the sandbox (``/tmp``, the home folder, ``/dev/shm``, System V IPC
   objects), so nothing of the previous submission is left, forks, and replies ``{"ev": "forked", "pid": pid}``;
3. the child puts the three pipes on fds 0, 1+2 and 3, closes everything else, and runs the unchanged
   driver (:mod:`autograder._driver`) as ``__main__``: it reads its plan, drops privileges, sets limits
   and runs the notebook exactly as in a fresh interpreter, only without re-importing the libraries;
4. when the child ends (or the host kills it), it kills every other process of the sandbox (``kill(-1)``:
   detached and background processes of the submission), and replies ``{"ev": "exit", "rc": returncode, "cpu": s,
   "left": processes it could not kill}``.

So each submission still gets a new process, a fresh namespace and working folder, and its own limits and
(as root) user id; what it shares with the previous ones is only the read-only, already-imported library
code in memory (copy-on-write pages).
"""
import os
import sys

# what the driver imports later before any student code, imported here once too (its copy-on-write pages are shared)
_ALSO = ("IPython.core.interactiveshell", "traitlets.config", "marshal", "binascii", "ctypes", "resource",
         "selectors", "json.encoder")


def _wipe(path):
    import shutil

    try:
        entries = os.listdir(path)
    except OSError:
        return
    for name in entries:
        p = os.path.join(path, name)
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                for root, dirs, _files in os.walk(p):   # a student may have removed permissions
                    for d in dirs:
                        try:
                            os.chmod(os.path.join(root, d), 0o700)
                        except OSError:
                            pass
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)
        except OSError:
            pass


def _remove_sysv_ipc(libc):
    """Remove every System V IPC object. Only its owner (or CAP_SYS_ADMIN, which we never hold) may: objects
    of another user id (the submission's, when grading as root) are removed by a short-lived child that takes
    that user id first."""
    IPC_RMID = 0
    uid_col = {"shm": 7, "msg": 7, "sem": 4}
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            try:
                cols = line.split()
                ident, uid = int(cols[1]), int(cols[uid_col[kind]])
            except (IndexError, ValueError):
                continue

            def rm():
                if kind == "shm":
                    return libc.shmctl(ident, IPC_RMID, None)
                if kind == "msg":
                    return libc.msgctl(ident, IPC_RMID, None)
                return libc.semctl(ident, 0, IPC_RMID, 0)

            if uid == os.geteuid():
                rm()
                continue
            pid = os.fork()
            if pid == 0:
                try:
                    os.setresuid(uid, uid, uid)
                    os._exit(0 if rm() == 0 else 1)
                except BaseException:  # noqa: BLE001
                    os._exit(1)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _others():
    me = os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in (1, me):
            out.append(int(d))
    return out


def _serve(ctrl_fd: int):  # noqa: C901 - one loop, kept in one place
    import json
    import signal
    import socket
    import time

    ctrl = socket.socket(fileno=ctrl_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # interrupts are for the child (the driver sets its handler)
    config = json.loads(ctrl.recv(1 << 20).decode())
    import runpy

    driver = config["driver"]
    # the driver's own preload (errors: the driver reports them again in each submission's run)
    errors = runpy.run_path(driver, run_name="_autograder_preload")["_preload"](
        config.get("preload", []), config.get("preload_packages", []), also=_ALSO)
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: children (same uid when not root) cannot ptrace us
    wipe = config.get("wipe", [])

    def reply(obj):
        ctrl.sendall((json.dumps(obj) + "\n").encode())

    def cpu():
        t = os.times()
        return round(t.user + t.system, 3)

    reply({"ev": "ready", "pid": os.getpid(), "errors": errors, "cpu": cpu()})
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(ctrl, 65536, 3)
        except OSError:
            os._exit(0)
        if not msg:
            os._exit(0)
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            reply({"ev": "error", "msg": "expected 3 file descriptors"})
            continue
        for p in wipe:
            _wipe(p)
        _remove_sysv_ipc(libc)
        pid = os.fork()
        if pid == 0:   # ---- the submission's process
            try:
                high = [os.dup(fd) for fd in fds]   # above 2 already; now place them
                os.dup2(high[0], 0)
                os.dup2(high[1], 1)
                os.dup2(high[1], 2)
                os.dup2(high[2], 3)
                os.closerange(4, 1 << 16)
                os.set_inheritable(3, True)
                sys.argv = [driver]
                runpy.run_path(driver, run_name="__main__")
            except SystemExit as e:
                os._exit(e.code if isinstance(e.code, int) else 1)
            except BaseException:  # noqa: BLE001
                os._exit(72)
            os._exit(0)
        for fd in fds:
            os.close(fd)
        reply({"ev": "forked", "pid": pid})
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                status = 0
                break
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        # nothing of this submission outlives it: detached, daemonised, re-parented processes too
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            others = _others()
            if not others:
                break
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            while True:   # reap what is ours (the rest is reaped by the sandbox's init)
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
            time.sleep(0.01)
        reply({"ev": "exit", "rc": rc, "cpu": cpu(), "left": len(_others())})


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
