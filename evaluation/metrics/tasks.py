"""Celery tasks of the evaluation app: one task per metric chunk.

Delivery guarantees come from the settings (``CELERY_TASK_ACKS_LATE``,
``CELERY_TASK_REJECT_ON_WORKER_LOST``, prefetch 1) and are repeated on the task so they hold
whatever the deployment sets: a worker that dies mid-chunk leaves the message unacknowledged
and another worker takes it again; the chunk is idempotent, so that costs only time. Redis
gives such a message back only after its visibility timeout (an hour, longer than any task),
so the chunk's heartbeat is what finds a dead worker within minutes: the beat task
``requeue_orphaned_chunks`` queues orphaned chunks again.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from evaluation.metrics.chunks import metric_chunk_compute, metric_chunk_fail
from evaluation.metrics.runs import JobsUnavailable, metric_chunks_requeue_orphaned

log = logging.getLogger(__name__)

# A CLIP chunk of 256 captions takes well under a minute on a CPU; ten times that is a hang.
CHUNK_SOFT_TIME_LIMIT = 25 * 60
CHUNK_TIME_LIMIT = 30 * 60
# Errors that pass: the database restarting or a dropped connection.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)


class ChunkTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        # Retries of a database error exhausted (other errors are handled in the task): the chunk
        # must not look 'running' forever.
        chunk_id = kwargs.get("chunk_id", args[0] if args else None)
        if chunk_id is None:
            return
        try:
            metric_chunk_fail(chunk_id=chunk_id, message=f"{type(exc).__name__}: {exc}")
        except Exception:  # the database may be what failed; resume treats the chunk as stale later
            log.exception("could not mark metric chunk %s failed", chunk_id)


@shared_task(
    bind=True,
    base=ChunkTask,
    name="evaluation.tasks.compute_metric_chunk",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=True,
    max_retries=5,
    soft_time_limit=CHUNK_SOFT_TIME_LIMIT,
    time_limit=CHUNK_TIME_LIMIT,
)
def compute_metric_chunk(self, chunk_id: int) -> str:
    """Compute one chunk of a metric run (see ``metric_chunk_compute``); idempotent.

    Retries database errors with backoff; a chunk over its time limit is marked failed
    (the run can be resumed). Any other error is a bug, not bad data: its traceback is
    logged and the chunk and run are marked failed with the error's type and message; it is
    not retried (a retry would fail the same way) and the run's other chunks go on.
    """
    try:
        return metric_chunk_compute(chunk_id=chunk_id)
    except SoftTimeLimitExceeded:
        metric_chunk_fail(
            chunk_id=chunk_id, message=f"took longer than {CHUNK_SOFT_TIME_LIMIT} s and was stopped"
        )
        return "failed"
    except TRANSIENT_ERRORS:
        raise  # autoretry_for retries them
    except Exception as exc:
        log.exception("metric chunk %s failed on an unexpected error", chunk_id)
        metric_chunk_fail(
            chunk_id=chunk_id,
            message=f"internal error, not a data problem ({type(exc).__name__}: {exc}); see the worker log",
        )
        return "failed"


@shared_task(
    name="evaluation.tasks.requeue_orphaned_chunks", acks_late=True, time_limit=300, soft_time_limit=240
)
def requeue_orphaned_chunks() -> int:
    """Periodic (Celery beat, every ``METRIC_ORPHAN_SWEEP_SECONDS``): queue again the chunks of dead workers.

    Calls :func:`evaluation.metrics.runs.metric_chunks_requeue_orphaned`; idempotent. With the
    broker down the run is marked failed (resumable) and the next sweep carries on.
    """
    try:
        return metric_chunks_requeue_orphaned()
    except JobsUnavailable as exc:
        log.error("%s", exc.message)
        return 0
