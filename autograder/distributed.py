"""Distributed mode: the class grader on Celery (Redis broker) with a PostgreSQL store.

``python -m autograder grade chNN --submissions ... --queue redis://HOST/0`` (the *submitter*) does everything
the local mode does (reference run, state, gradebook, CSV, feedback: :func:`autograder.grade_command.run`), except
the grading itself, which it hands out: one Celery task per new or changed submission. Any number of
``python -m autograder worker --queue redis://HOST/0 --store-url postgresql+psycopg2://...`` processes, on
any machines, take those tasks and grade each submission with :func:`autograder.grade_one.grade_submission`, the
very function the local mode's threads call, in the same bubblewrap sandbox.

What travels where (the design choice, see README "Distributed mode"):

- **Redis carries only small messages**: ``(bundle id, key, student)``. Losing the broker
  (restart without persistence) loses no data: re-running the submitter re-enqueues what has no result.
- **PostgreSQL (the store) holds the bytes and the results**, content-addressed, in tables of its own
  (``autograder_*``, next to nbgrader's when the store is the gradebook's database):
  *bundles* (an assignment as the submitter compiled it: its source notebooks, the files it ships, the
  gradebook's points, the limits, and the reference run's trace, keyed by the grader's fingerprint and
  settings), *submissions* (a student's files, keyed by the submission's content hash, the same hash as
  ``state.jsonl``, and the student), *results* (the record and the feedback pages, one row per key, never
  two), *attempts* (every start of a grading, to
  audit) and *errors* (a worker that cannot grade a bundle says why). Workers need no shared filesystem,
  no course checkout and no access to nbgrader's tables: only the same software (image) as the submitter;
  they cache each bundle (notebooks, reference trace) on local disk by its id.
- **Exactly one grade per submission** (its key: content hash and student): tasks are acknowledged late
  (``acks_late``; a worker that dies mid-task leaves its message unacknowledged and Redis hands it out again after ``visibility_timeout``;
  ``task_reject_on_worker_lost`` requeues it when a pool process dies), so a task can arrive twice. A
  worker takes a PostgreSQL advisory lock on the key (held by its database session: released by the
  server the moment the worker dies), then grades only if the key has no result yet, and writes the
  result before releasing the lock: a duplicate waits for the first copy and then finds its result; a
  copy whose worker died finds the lock free and no result, and grades. ``worker_prefetch_multiplier=1``:
  a worker reserves only as many tasks as it has free slots (grading tasks are long).
- **The gradebook keeps one writer**: the submitter. It polls the results table, and records each result
  exactly as the local mode does. Killed and restarted, it skips what ``state.jsonl`` has, takes what
  workers finished meanwhile from the store, and re-enqueues the rest (duplicates are harmless, above).
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import logging
import os
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .assignment import AssignmentGrader
from .course import load_profile, safe_url
from .grade_one import Graded, Slots, grade_submission
from .jail import Limits
from .reference import ReferenceTrace
from .sandbox import Sandbox
from .submissions import Submission

log = logging.getLogger("autograder")

QUEUE = "autograder"
TASK = "autograder.grade"
DEFAULT_VISIBILITY_TIMEOUT = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS autograder_bundles (
    id text PRIMARY KEY, assignment text NOT NULL, fingerprint text NOT NULL, data bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS autograder_submissions (
    key text PRIMARY KEY, hash text NOT NULL, bundle text NOT NULL, student text NOT NULL, submission bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS autograder_results (
    id bigserial UNIQUE, key text PRIMARY KEY, hash text NOT NULL, bundle text NOT NULL, student text NOT NULL,
    record text NOT NULL, pages text NOT NULL, worker text NOT NULL,
    graded_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS autograder_results_bundle ON autograder_results (bundle, id);
CREATE TABLE IF NOT EXISTS autograder_attempts (
    id bigserial PRIMARY KEY, key text NOT NULL, worker text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS autograder_errors (
    id bigserial PRIMARY KEY, bundle text NOT NULL, worker text NOT NULL, message text NOT NULL,
    at timestamptz NOT NULL DEFAULT now());
"""


class Unusable(Exception):
    """This worker cannot grade this bundle (other software, no sandbox...): reported, never retried here."""


# ---------------------------------------------------------------------------------------------- the store
class Store:
    """The shared, durable half: bundles, submissions, results (PostgreSQL, through SQLAlchemy)."""

    def __init__(self, url: str, pool_size: int = 4):
        if not url or not url.startswith("postgresql"):
            raise RuntimeError(f"distributed mode needs a PostgreSQL store (postgresql+psycopg2://...), not "
                               f"{safe_url(url or '(none)')}: give --store-url, or a PostgreSQL --db-url")
        from sqlalchemy import create_engine

        self.url = url
        self.engine = create_engine(url, pool_pre_ping=True, pool_size=pool_size, max_overflow=pool_size * 2,
                                    future=True)

    def close(self):
        self.engine.dispose()

    def _q(self, sql: str, **params):
        from sqlalchemy import text

        with self.engine.begin() as conn:
            res = conn.execute(text(sql), params)
            return list(res) if res.returns_rows else []

    def ensure_schema(self) -> None:
        from sqlalchemy import text

        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(7261001)"))   # concurrent CREATEs would collide
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    conn.execute(text(stmt))

    # ---- bundles and submissions (written by the submitter, read by workers)
    def put_bundle(self, bundle_id: str, assignment: str, fingerprint: str, data: bytes) -> None:
        self._q("INSERT INTO autograder_bundles (id, assignment, fingerprint, data) VALUES (:i, :a, :f, :d) "
                "ON CONFLICT (id) DO NOTHING", i=bundle_id, a=assignment, f=fingerprint, d=data)

    def get_bundle(self, bundle_id: str) -> bytes | None:
        rows = self._q("SELECT data FROM autograder_bundles WHERE id = :i", i=bundle_id)
        return bytes(rows[0][0]) if rows else None

    def put_submissions(self, bundle_id: str, items: list) -> None:
        """``items``: ``[(key, hash, Submission), ...]``; existing keys are left as they are."""
        from sqlalchemy import text

        with self.engine.begin() as conn:
            for i in range(0, len(items), 200):
                conn.execute(text("INSERT INTO autograder_submissions (key, hash, bundle, student, submission) "
                                  "VALUES (:k, :h, :b, :s, :d) ON CONFLICT (key) DO NOTHING"),
                             [{"k": k, "h": h, "b": bundle_id, "s": sub.student, "d": encode_submission(sub)}
                              for k, h, sub in items[i:i + 200]])

    def get_submission(self, key: str):
        rows = self._q("SELECT hash, submission FROM autograder_submissions WHERE key = :k", k=key)
        return (rows[0][0], decode_submission(bytes(rows[0][1]))) if rows else (None, None)

    # ---- results
    def has_result(self, key: str) -> bool:
        return bool(self._q("SELECT 1 FROM autograder_results WHERE key = :k", k=key))

    def put_result(self, key: str, h: str, bundle_id: str, graded, worker: str) -> bool:
        rows = self._q("INSERT INTO autograder_results (key, hash, bundle, student, record, pages, worker) "
                       "VALUES (:k, :h, :b, :s, :r, :p, :w) ON CONFLICT (key) DO NOTHING RETURNING id",
                       k=key, h=h, b=bundle_id, s=graded.record["student"], r=json.dumps(graded.record),
                       p=json.dumps(graded.pages), w=worker)
        return bool(rows)

    def results_since(self, bundle_id: str, after_id: int) -> list:
        """``[(id, key, Graded, worker), ...]`` of a bundle, in the order they were written."""
        rows = self._q("SELECT id, key, record, pages, worker FROM autograder_results "
                       "WHERE bundle = :b AND id > :a ORDER BY id LIMIT 500", b=bundle_id, a=after_id)
        return [(r[0], r[1], Graded(json.loads(r[2]), json.loads(r[3])), r[4]) for r in rows]

    def attempt(self, key: str, worker: str) -> None:
        self._q("INSERT INTO autograder_attempts (key, worker) VALUES (:k, :w)", k=key, w=worker)

    def error(self, bundle_id: str, worker: str, message: str) -> None:
        self._q("INSERT INTO autograder_errors (bundle, worker, message) VALUES (:b, :w, :m)",
                b=bundle_id, w=worker, m=message[:2000])

    def errors_since(self, bundle_id: str, after_id: int) -> list:
        return [tuple(r) for r in self._q("SELECT id, worker, message FROM autograder_errors WHERE bundle = :b "
                                          "AND id > :a ORDER BY id", b=bundle_id, a=after_id)]

    def last_error_id(self, bundle_id: str) -> int:
        return int(self._q("SELECT coalesce(max(id), 0) FROM autograder_errors WHERE bundle = :b",
                           b=bundle_id)[0][0])

    @contextmanager
    def lock(self, key: str):
        """A PostgreSQL advisory lock on the submission, held by one database session: released when the
        block ends, or by the server as soon as that session's process dies."""
        from sqlalchemy import text

        key = int(key[:15], 16)   # 60 bits of the key: a collision would only serialise two gradings
        conn = self.engine.connect()
        try:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                conn.commit()
        finally:
            conn.close()


def job_key(h: str, student: str) -> str:
    """What a task and its result are keyed by: the submission's content hash (as in ``state.jsonl``) and the
    student (the record names the student; twins with identical files get one grade each)."""
    return hashlib.sha256(f"{h}\0{student}".encode()).hexdigest()


def encode_submission(sub) -> bytes:
    d = dataclasses.asdict(sub)
    d["files"] = {k: base64.b64encode(v).decode() for k, v in sub.files.items()}
    return json.dumps(d).encode()


def decode_submission(data: bytes) -> Submission:
    d = json.loads(data)
    d["files"] = {k: base64.b64decode(v) for k, v in d.get("files", {}).items()}
    known = {f.name for f in dataclasses.fields(Submission)}
    return Submission(**{k: v for k, v in d.items() if k in known})


# ---------------------------------------------------------------------------------------------- bundles
def make_bundle(grader, opts, settings: str) -> tuple:
    """``(bundle id, bytes)``: what a worker needs to grade this assignment exactly as the submitter would (the
    reference trace included: workers never run the reference)."""
    data = {"version": 1, "assignment": grader.assignment, "fingerprint": grader.fingerprint, "settings": settings,
            "limits": opts.limits.as_dict(), "time_factor": opts.time_factor,
            "points": {name: cnb.points for name, cnb in grader.notebooks.items()},
            "notebooks": {name: base64.b64encode((grader.source_dir / name).read_bytes()).decode()
                          for name in grader.notebooks},
            "files": {k: base64.b64encode(v).decode() for k, v in grader.files.items()},
            "reference": grader.reference_trace.to_json()}
    bundle_id = hashlib.sha256((grader.fingerprint + settings).encode()).hexdigest()[:32]
    import gzip

    return bundle_id, gzip.compress(json.dumps(data, sort_keys=True).encode(), mtime=0)


def grader_from_bundle(bundle_id: str, raw: bytes, *, sandbox: Sandbox, cache_dir: Path) -> AssignmentGrader:
    """Rebuild the submitter's :class:`AssignmentGrader` on a worker; its fingerprint must match."""
    import gzip

    data = json.loads(gzip.decompress(raw))
    settings = json.loads(data["settings"])
    if settings.get("sandbox") == "bwrap" and sandbox.mode != "bwrap":
        raise Unusable("this worker has no bubblewrap sandbox, and the batch was started with one; install "
                       "bubblewrap (or allow user namespaces) on the worker")
    folder = cache_dir / "bundles" / bundle_id / data["assignment"]
    folder.mkdir(parents=True, exist_ok=True)
    for name, b64 in data["notebooks"].items():
        (folder / name).write_bytes(base64.b64decode(b64))
    known = {f.name for f in dataclasses.fields(Limits)}
    limits = Limits(**{k: v for k, v in data["limits"].items() if k in known})
    grader = AssignmentGrader(data["assignment"], folder, data["points"], sandbox=sandbox, limits=limits,
                              time_factor=data["time_factor"], cache_dir=cache_dir,
                              extra_files={k: base64.b64decode(v) for k, v in data["files"].items()})
    if grader.fingerprint != data["fingerprint"]:
        raise Unusable("this worker's grader differs from the submitter's (autograder code, Python or torch "
                       "version): run workers and the grade command from the same installation or image")
    grader.use_reference(ReferenceTrace.from_json(data["reference"]))   # never re-run on a worker
    return grader


# ---------------------------------------------------------------------------------------------- Celery
def make_app(broker_url: str, *, visibility_timeout: float = DEFAULT_VISIBILITY_TIMEOUT):
    from celery import Celery

    app = Celery("autograder", set_as_current=False)
    app.conf.update(
        broker_url=broker_url,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,          # a broker that is down is waited for, forever
        # Redis: an unacknowledged task comes back after visibility_timeout; kombu looks for such tasks every
        # unacked_restore_interval x unacked_restore_throttle seconds (100 s by default): every few seconds here.
        broker_transport_options={"visibility_timeout": visibility_timeout,
                                  "unacked_restore_interval": max(1, min(10, int(visibility_timeout // 4))),
                                  "unacked_restore_throttle": 1},
        task_default_queue=QUEUE,
        task_serializer="json", accept_content=["json"],
        task_ignore_result=True,                     # results go to the store, not to a result backend
        task_acks_late=True,                         # acknowledged after grading: a lost worker's task comes back
        task_reject_on_worker_lost=True,             # ...also when a pool process dies (prefork pools)
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,                # reserve only what the free slots can take
        worker_cancel_long_running_tasks_on_connection_loss=False,   # keep grading; the store dedups
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    app.task(name=TASK, bind=True, acks_late=True, reject_on_worker_lost=True)(_grade_task)
    return app


_WORKER = None   # the worker process's state (one per process)


def _grade_task(self, bundle_id: str, key: str, student: str):
    try:
        return _WORKER.handle(bundle_id, key, student)
    except Retry as exc:
        raise self.retry(exc=exc.__cause__ or exc, countdown=5, max_retries=None) from None


class Retry(Exception):
    """The store was unreachable: the task goes back to the queue (Celery retry) and nothing is lost."""


class Worker:
    """One ``python -m autograder worker`` process: ``concurrency`` sandbox slots, graders cached by bundle."""

    def __init__(self, store: Store, sandbox, cache_dir: Path, concurrency: int, name: str):
        self.store, self.sandbox, self.cache_dir, self.name = store, sandbox, Path(cache_dir), name
        self.graders: dict = {}
        self._lock = threading.Lock()
        self.slots = Slots(concurrency)

    def grader(self, bundle_id: str):
        with self._lock:
            if bundle_id not in self.graders:
                raw = self.store.get_bundle(bundle_id)
                if raw is None:
                    raise Unusable(f"bundle {bundle_id} is not in the store")
                self.graders[bundle_id] = grader_from_bundle(bundle_id, raw, sandbox=self.sandbox,
                                                             cache_dir=self.cache_dir)
                log.info("bundle %s: %s ready", bundle_id, self.graders[bundle_id].assignment)
            return self.graders[bundle_id]

    def handle(self, bundle_id: str, key: str, student: str) -> str:
        from sqlalchemy.exc import DBAPIError, OperationalError

        try:
            if self.store.has_result(key):
                log.info("%s (%s): already graded, nothing to do", student, key[:12])
                return "duplicate"
            with self.store.lock(key):
                if self.store.has_result(key):   # graded by the copy we waited for
                    log.info("%s (%s): graded by another worker meanwhile", student, key[:12])
                    return "duplicate"
                try:
                    try:
                        grader = self.grader(bundle_id)
                    except (Unusable, OperationalError, DBAPIError):
                        raise
                    except Exception as exc:  # noqa: BLE001 - e.g. the bundle's assignment does not compile here
                        raise Unusable(f"the assignment could not be prepared on this worker: "
                                       f"{type(exc).__name__}: {exc}") from exc
                    h, sub = self.store.get_submission(key)
                    if sub is None:
                        raise Unusable(f"submission {key[:12]} of {student} is not in the store")
                except Unusable as exc:
                    log.error("cannot grade %s: %s", student, exc)
                    self.store.error(bundle_id, self.name, str(exc))
                    return "unusable"
                self.store.attempt(key, self.name)
                with self.slots.take() as slot:
                    graded = grade_submission(grader, sub, h, slot=slot)   # the local mode's very function
                self.store.put_result(key, h, bundle_id, graded, self.name)
                rec = graded.record
                log.info("%s: %g/%g %s (%.1f s)", student, rec["score"], rec["max_score"], rec["status"],
                         rec["seconds"])
                return "graded"
        except (OperationalError, DBAPIError) as exc:
            log.warning("%s: the store is unreachable (%s); the task will be retried", student,
                        str(exc).splitlines()[0][:200])
            raise Retry(str(exc)) from exc


def run_worker(*, queue_url: str, store_url: str, concurrency: int, sandbox_mode: str = "auto",
               cache_dir: Path | None = None, name: str | None = None,
               visibility_timeout: float = DEFAULT_VISIBILITY_TIMEOUT, loglevel: str = "INFO",
               warm: bool = True) -> int:
    global _WORKER
    cache_dir = Path(cache_dir or Path(tempfile.gettempdir()) / "autograder-worker").resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    name = name or f"autograder-{os.getpid()}@{socket.gethostname()}"
    store = Store(store_url, pool_size=concurrency + 2)
    store.ensure_schema()
    # the profile of this installation (workers run the submitter's software; the fingerprint checks it)
    sandbox = Sandbox(sandbox_mode, profile=load_profile(), cache_dir=cache_dir, warm=warm)
    sandbox.jail.announce(concurrency)
    _WORKER = Worker(store, sandbox, cache_dir, concurrency, name)
    app = make_app(queue_url, visibility_timeout=visibility_timeout)
    log.info("worker %s: %d slot(s), sandbox %s%s, queue %s", name, concurrency, sandbox.mode,
             " (warm)" if sandbox.warm_pool else "", safe_url(queue_url))
    app.worker_main(["worker", "--pool=threads", f"--concurrency={concurrency}", f"--hostname={name}", "-Q", QUEUE,
                     f"--loglevel={loglevel}", "--without-gossip", "--without-mingle", "--without-heartbeat"])
    return 0


# ---------------------------------------------------------------------------------------------- the submitter
def grade_remotely(opts, course, grader, todo: list, settings: str, *, poll: float = 1.0):
    """The queue mode's runner (the local mode's is :func:`autograder.grade_one.grade_locally`): enqueue, then yield
    ``(student, submission, hash, Graded)`` as workers finish."""
    store = Store(opts.store_url or course.db_url)
    try:
        store.ensure_schema()
        bundle_id, raw = make_bundle(grader, opts, settings)
        store.put_bundle(bundle_id, grader.assignment, grader.fingerprint, raw)
        by_key = {job_key(h, s): (s, sub, h) for s, sub, h in todo}
        store.put_submissions(bundle_id, [(k, h, sub) for k, (s, sub, h) in by_key.items()])
        remaining = set(by_key)
        errors_after = store.last_error_id(bundle_id)
        # results that workers wrote while no submitter was watching (a restarted submitter) come first
        last_id, early = 0, []
        while True:
            rows = store.results_since(bundle_id, last_id)
            if not rows:
                break
            last_id = rows[-1][0]
            early += [r for r in rows if r[1] in remaining]
        ready = {r[1] for r in early}
        app = make_app(opts.queue)
        to_send = [k for k in sorted(remaining, key=lambda k: by_key[k][0]) if k not in ready]
        with app.producer_or_acquire() as producer:
            for k in to_send:
                app.send_task(TASK, args=[bundle_id, k, by_key[k][0]], queue=QUEUE, producer=producer,
                              retry=True, retry_policy={"max_retries": None, "interval_start": 1,
                                                        "interval_step": 1, "interval_max": 5})
        log.info("distributed: %d task(s) queued on %s (bundle %s); %d already graded by workers; results "
                 "from %s", len(to_send), safe_url(opts.queue), bundle_id, len(ready), safe_url(store.url))
        for _id, k, graded, _w in early:
            remaining.discard(k)
            s, sub, h = by_key[k]
            yield s, sub, h, graded
        t0 = last_progress = last_note = time.monotonic()
        done0 = len(by_key) - len(remaining)
        while remaining:
            try:
                rows = store.results_since(bundle_id, last_id)
                errs = store.errors_since(bundle_id, errors_after)
            except Exception as exc:  # noqa: BLE001 - the store may be restarting: wait for it
                log.warning("the store is unreachable (%s); waiting", str(exc).splitlines()[0][:200])
                time.sleep(5)
                continue
            if errs:
                detail = "; ".join(f"{w}: {m}" for _i, w, m in errs[:3])
                raise RuntimeError(f"a worker cannot grade this batch ({detail}). Fix the worker(s) and run the "
                                   "same command again: everything graded so far is kept")
            for _id, k, graded, _w in rows:
                last_id = _id
                if k in remaining:
                    remaining.discard(k)
                    last_progress = time.monotonic()
                    s, sub, h = by_key[k]
                    yield s, sub, h, graded
            now = time.monotonic()
            if remaining and not rows:
                if now - last_note >= 15:
                    last_note = now
                    done = len(by_key) - len(remaining)
                    rate = (done - done0) / (now - t0) if now > t0 else 0
                    eta = f", about {len(remaining) / rate / 60:.0f} min left" if rate > 0 else ""
                    log.info("progress: %d/%d graded, %s task(s) in the queue%s%s", done, len(by_key),
                             _queue_length(opts.queue), eta,
                             "; no result for %.0f s: are workers running (python -m autograder worker "
                             "--queue ...)?" % (now - last_progress) if now - last_progress > 120 else "")
                time.sleep(poll)
    finally:
        store.close()


def _queue_length(url: str) -> str:
    try:
        import redis

        r = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        return str(r.llen(QUEUE))
    except Exception:  # noqa: BLE001 - only for the progress line
        return "? (broker unreachable)"
