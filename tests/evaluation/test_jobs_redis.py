"""Metric runs with a real Redis broker and a real Celery worker (RELIABILITY 10, 12).

Needs Redis at 127.0.0.1:6379 and PostgreSQL (the worker is another process and must see the
test database); skipped otherwise. The worker runs tests/evaluation/worker_app.py (the project's
Celery app, whose chunks sleep ``METRIC_CHUNK_TEST_DELAY`` seconds first when that is set) with
tests/evaluation/worker_settings.py (a short visibility timeout), so that killing it in the middle
of a chunk and redelivering the chunk takes seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotation.models import SystemCaption
from evaluation.models import (
    CaptionScore,
    ChunkStatus,
    ClipFineTune,
    CorpusScore,
    MetricRun,
    RunStatus,
)
from evaluation.runs.plan import metric_run_create
from tests import factories as f
from tests.evaluation.test_runs import celery_conf

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

REPO_ROOT = Path(__file__).resolve().parents[2]
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
CLAIM_KEY = "captioneval-test-claim"
METRICS = ["BLEU-4", "ROUGE-L", "CIDEr-D"]


def redis_client(db: int = 0):
    import redis

    return redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db, socket_connect_timeout=1, socket_timeout=2)


@pytest.fixture
def broker_url():
    """A Redis database nobody uses (empty), claimed for this test and emptied afterwards."""
    try:
        redis_client().ping()
    except Exception as exc:
        pytest.skip(f"no Redis at {REDIS_HOST}:{REDIS_PORT} ({exc})")
    if connection.vendor != "postgresql":
        pytest.skip("the worker is another process: it needs PostgreSQL (DATABASE_URL), not SQLite")
    token = uuid.uuid4().hex
    # TEST_REDIS_DBS=8,9 keeps a run to the databases it was given (parallel runs on one server).
    allowed = os.environ.get("TEST_REDIS_DBS", "")
    for db in [int(n) for n in allowed.split(",") if n.strip()] or range(15, 0, -1):
        client = redis_client(db)
        if client.dbsize() == 0 and client.set(CLAIM_KEY, token, nx=True):
            break
    else:
        pytest.skip("no empty Redis database to use")
    try:
        yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"
    finally:
        if client.get(CLAIM_KEY) == token.encode():
            client.flushdb()


class Workers:
    """Starts real Celery worker processes on the test database; kills what it started."""

    def __init__(self, broker: str, log_dir: Path):
        self.broker = broker
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen] = []

    def start(self, *options: str, **env) -> subprocess.Popen:
        """A worker (one pool process) on the test database and broker; ``env`` adds to its environment."""
        return self._spawn(
            [
                "worker",
                "-l",
                "warning",
                "--pool=prefork",
                "-c",
                "1",
                "-n",
                f"evaluation-test-{uuid.uuid4().hex[:8]}@%h",
                "--without-gossip",
                "--without-mingle",
                *options,
            ],
            env,
        )

    def start_beat(self, schedule: Path, **env) -> subprocess.Popen:
        """``celery beat`` in its own process, as deployed: it only sends the periodic tasks."""
        return self._spawn(["beat", "-l", "info", "-s", str(schedule)], env)

    def _spawn(self, command: list[str], env: dict) -> subprocess.Popen:
        db = settings.DATABASES["default"]
        auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.evaluation.worker_settings",
            "DATABASE_URL": f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
            "CELERY_BROKER_URL": self.broker,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "PYTHONPATH": str(REPO_ROOT),
            **{key: str(value) for key, value in env.items()},
        }
        log = open(self.log_dir / f"{command[0]}-{len(self.processes)}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.evaluation.worker_app", *command],
            cwd=REPO_ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: kill -9 takes the pool children too
        )
        self.processes.append(process)
        return process

    def kill(self, process: subprocess.Popen) -> None:
        """kill -9 the worker and its pool processes, as a machine or OOM kill would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(timeout=10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    self.kill(process)

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.log_dir.glob("*.log"))
        )


@pytest.fixture
def workers(broker_url, tmp_path):
    pool = Workers(broker_url, tmp_path)
    try:
        yield pool
    finally:
        pool.stop_all()


def make_data(german, *, systems=("sys-a",), images=6):
    pictures = [f.ImageFactory(with_file=False) for _ in range(images)]
    reference_set = f.reference_set_with(
        pictures,
        [[f"ein hund am strand {i}", f"ein brauner hund nr {i}"] for i in range(images)],
        name="refs",
        language=german,
    )
    for name in systems:
        system = f.SystemFactory(name=name)
        for i, image in enumerate(pictures):
            SystemCaption.objects.create(
                system=system, image=image, language=german, text=f"ein hund {name} {i}"
            )
    return reference_set


def start_run(broker_url, reference_set, systems) -> MetricRun:
    with celery_conf(broker_url=broker_url, task_always_eager=False):
        return metric_run_create(
            name="redis",
            language_code="de",
            system_names=list(systems),
            reference_set_id=reference_set.pk,
            metrics=METRICS,
        )


def wait_for(predicate, timeout: float, workers: Workers, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout} s waiting for {what}\n{workers.logs()}")


# Heartbeat timings of the kill test, short so that CI spends seconds, not minutes, on it;
# JOBS_TEST_PRODUCTION_TIMINGS=1 runs it with the production defaults (15 s beats, orphaned after
# 90 s, swept every 30 s) to measure what a deployment gets.
SHORT_TIMINGS = {
    "JOB_HEARTBEAT_SECONDS": 1,
    "JOB_ORPHAN_SECONDS": 5,
    "JOB_SWEEP_SECONDS": 2,
}


def test_a_real_worker_computes_a_run(german, broker_url, workers):
    reference_set = make_data(german, systems=("sys-a", "sys-b"))
    workers.start()
    run = start_run(broker_url, reference_set, ["sys-a", "sys-b"])
    assert run.status == RunStatus.PENDING  # the object as created; the worker does the rest

    def finished():
        run.refresh_from_db()
        return run.is_finished

    wait_for(finished, 60, workers, "the run to finish")
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.queued_at and run.started_at and run.finished_at
    assert run.versions["celery"]
    assert CaptionScore.objects.filter(run=run).count() == 2 * 6 * len(METRICS)
    assert CorpusScore.objects.filter(run=run).count() == 2 * len(METRICS)
    assert set(run.chunks.values_list("attempts", flat=True)) == {1}


def test_a_worker_killed_mid_chunk_loses_nothing_and_duplicates_nothing(german, broker_url, workers):
    reference_set = make_data(german)
    # As in production, the message comes back only after the chunk's orphan timeout (here 5 s,
    # with 1 s beats): a message redelivered sooner finds the chunk still beating and is refused.
    slow = {"METRIC_CHUNK_TEST_DELAY": 4, "CELERY_VISIBILITY_TIMEOUT": 12, **SHORT_TIMINGS}
    first = workers.start(**slow)
    run = start_run(broker_url, reference_set, ["sys-a"])
    chunk = run.chunks.get()

    def running():
        chunk.refresh_from_db()
        return chunk.status == ChunkStatus.RUNNING

    wait_for(running, 30, workers, "the first worker to take the chunk")
    workers.kill(first)
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.RUNNING, 1)
    assert not CaptionScore.objects.filter(run=run).exists()

    # The message was never acknowledged: a new worker gets it again once it is invisible no longer.
    workers.start(**slow)

    def finished():
        run.refresh_from_db()
        return run.is_finished

    wait_for(finished, 45, workers, "the run to finish on the second worker")
    chunk.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert chunk.status == ChunkStatus.DONE and chunk.attempts >= 2
    assert CaptionScore.objects.filter(run=run).count() == 6 * len(METRICS)
    assert CorpusScore.objects.filter(run=run).count() == len(METRICS)


def test_a_killed_worker_group_leaves_no_chunk_running_for_long(german, broker_url, workers, tmp_path):
    """kill -9 the worker's whole process group mid-chunk, with the production visibility timeout.

    Redis would hand the unacknowledged message to another worker only after an hour; before
    chunks had heartbeats the run stayed "running" at 0/1 and resume refused the chunk for 31
    minutes. Now the new worker's beat finds the chunk orphaned and queues it again.
    """
    production = os.environ.get("JOBS_TEST_PRODUCTION_TIMINGS") == "1"
    timings = {} if production else SHORT_TIMINGS
    orphan_after = 90 if production else SHORT_TIMINGS["JOB_ORPHAN_SECONDS"]
    sweep_every = 30 if production else SHORT_TIMINGS["JOB_SWEEP_SECONDS"]
    reference_set = make_data(german)
    # The chunk takes longer than the orphan timeout: only a dead worker's chunk may be taken over.
    slow = {"METRIC_CHUNK_TEST_DELAY": orphan_after + 3, "CELERY_VISIBILITY_TIMEOUT": 3600, **timings}
    first = workers.start(**slow)
    run = start_run(broker_url, reference_set, ["sys-a"])
    chunk = run.chunks.get()

    def running():
        chunk.refresh_from_db()
        return chunk.status == ChunkStatus.RUNNING

    wait_for(running, 30, workers, "the first worker to take the chunk")
    time.sleep(min(3, orphan_after / 2))  # mid-chunk, after a beat or two
    workers.kill(first)
    killed_at = time.monotonic()
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.RUNNING, 1)

    workers.start("-B", "-s", str(tmp_path / "beat-schedule"), **{**slow, "METRIC_CHUNK_TEST_DELAY": 0})

    def finished():
        run.refresh_from_db()
        return run.is_finished

    # The bound: orphan timeout + one sweep + the chunk itself, with room for a slow CI machine.
    wait_for(finished, orphan_after + sweep_every + 60, workers, "the run to finish after the kill")
    elapsed = time.monotonic() - killed_at
    print(f"kill -9 of the worker group to run finished: {elapsed:.1f} s (orphaned after {orphan_after} s)")
    chunk.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 2)
    assert CaptionScore.objects.filter(run=run).count() == 6 * len(METRICS)
    assert CorpusScore.objects.filter(run=run).count() == len(METRICS)


def test_a_real_beat_process_requeues_the_orphans_of_every_kind(german, broker_url, workers, tmp_path):
    """``celery beat`` in its own process sends the one sweep on its schedule and a worker runs it: a
    metric chunk and a fine-tuning run whose workers were killed are queued again, and neither stays
    "running". Before the engine, the fine-tuning sweep was refused by the worker on every beat
    (``SchedulingError: soft_time_limit must be less than or equal to time_limit``)."""
    timings = {**SHORT_TIMINGS, "JOB_FINETUNE_ORPHAN_SECONDS": 5}
    reference_set = make_data(german)
    with celery_conf(broker_url=broker_url, task_always_eager=False):
        run = metric_run_create(
            name="orphan", language_code="de", system_names=["sys-a"], reference_set_id=reference_set.pk,
            metrics=METRICS, enqueue=False,
        )  # fmt: skip
    # As a killed worker leaves them: claimed an hour ago, silent since; no message in the broker.
    long_ago = timezone.now() - timedelta(hours=1)
    MetricRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, queued_at=long_ago, started_at=long_ago
    )
    run.chunks.update(status=ChunkStatus.RUNNING, attempts=1, started_at=long_ago, heartbeat_at=long_ago)
    # A fine-tuning run with no base model: once queued again, its worker fails it visibly.
    fine_tune = ClipFineTune.objects.create(
        name="orphan", register_as="orphan-ft", status=RunStatus.RUNNING, attempts=1, config={"epochs": 1},
        started_at=long_ago, heartbeat_at=long_ago,
    )  # fmt: skip

    workers.start(**timings)
    workers.start_beat(tmp_path / "beat-schedule", **timings)

    def both_done():
        run.refresh_from_db()
        fine_tune.refresh_from_db()
        return run.is_finished and fine_tune.status != RunStatus.RUNNING and fine_tune.attempts == 2

    wait_for(both_done, 90, workers, "the beat's sweep to queue both orphans again")
    assert "core.jobs.sweep_orphans" in workers.logs()  # beat sent it (its log names what it sends)
    chunk = run.chunks.get()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 2)
    assert CaptionScore.objects.filter(run=run).count() == 6 * len(METRICS)
    assert fine_tune.status == RunStatus.FAILED
    assert "internal error" in fine_tune.error and "KeyError" in fine_tune.error
