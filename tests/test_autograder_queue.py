"""Fast checks of the distributed mode's pieces that need no Redis or PostgreSQL: the Celery settings that
make a task survive its worker, what travels in the store, the command line, and the deployment files."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autograder.__main__ import _parser
from autograder.__main__ import options as cli_options
from autograder.submissions import Submission

REPO = Path(__file__).resolve().parents[1]
celery = pytest.importorskip("celery", reason="celery[redis] is not installed (pip install -r requirements.txt)")


def test_celery_settings_redeliver_lost_tasks_one_at_a_time():
    from autograder import distributed

    app = distributed.make_app("redis://127.0.0.1:1/0", visibility_timeout=40)
    c = app.conf
    assert c.task_acks_late and c.task_reject_on_worker_lost and c.worker_prefetch_multiplier == 1
    assert c.task_ignore_result and c.accept_content == ["json"]
    opts = c.broker_transport_options
    assert opts["visibility_timeout"] == 40
    assert opts["unacked_restore_interval"] * opts["unacked_restore_throttle"] <= 10
    task = app.tasks[distributed.TASK]
    assert task.acks_late and task.reject_on_worker_lost


def test_submission_round_trip_and_keys():
    from autograder import distributed

    sub = Submission("ada", {"a.ipynb": b"\x00\xff{}"}, timestamp="2026-01-01 10:00:00", problems=["renamed"])
    back = distributed.decode_submission(distributed.encode_submission(sub))
    assert back == sub and back.content_hash() == sub.content_hash()
    h = sub.content_hash()
    assert distributed.job_key(h, "ada") != distributed.job_key(h, "bob")   # twins: one grade each
    with pytest.raises(RuntimeError, match="needs a PostgreSQL store"):
        distributed.Store("sqlite:///gradebook.db")


def test_command_line_of_both_modes(monkeypatch):
    opts = cli_options(["grade", "ch01", "--submissions", "s", "--queue", "redis://h:6379/0", "--store-url",
                        "postgresql+psycopg2://u@h/db"])
    assert (opts.queue, opts.store_url, opts.warm) == ("redis://h:6379/0", "postgresql+psycopg2://u@h/db", True)
    assert cli_options(["grade", "ch01", "--submissions", "s", "--cold"]).queue is None
    assert not cli_options(["grade", "ch01", "--submissions", "s", "--cold"]).warm
    monkeypatch.setenv("AUTOGRADER_QUEUE", "redis://env/0")
    args = _parser().parse_args(["worker", "--concurrency", "3", "--visibility-timeout", "900"])
    assert (args.command, args.concurrency, args.visibility_timeout) == ("worker", 3, 900.0)


def test_compose_file_matches_the_command_line():
    """The compose file is not run here (no Docker engine); it was validated against the Compose
    Specification's JSON schema when written (deploy/README.md). This keeps it consistent with the code."""
    doc = yaml.safe_load((REPO / "deploy" / "compose.yaml").read_text())
    services = doc["services"]
    assert {"redis", "postgres", "worker"} <= set(services)
    worker = services["worker"]
    assert worker["command"][:4] == ["python", "-m", "autograder", "worker"]
    assert "--require-sandbox" in worker["command"]
    assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(worker["security_opt"])
    env = worker["environment"]
    assert env["AUTOGRADER_QUEUE"].startswith("redis://redis:")
    assert env["AUTOGRADER_STORE_URL"].startswith("postgresql+psycopg2://") and "@postgres:" in env["AUTOGRADER_STORE_URL"]
    assert "--appendonly" in services["redis"]["command"]
    for name in ("redis", "postgres"):
        assert "healthcheck" in services[name]
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"
    assert (REPO / "deploy" / "Dockerfile").read_text().count("bubblewrap") >= 1
