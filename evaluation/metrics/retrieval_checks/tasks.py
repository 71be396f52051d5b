"""Celery tasks of the retrieval checks: one task per chunk, and the orphan sweep.

Delivery as for metric chunks (:mod:`evaluation.metrics.tasks`): late acks, rejected on worker
loss, idempotent chunks, database errors retried, anything else fails the chunk visibly.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded

from evaluation.metrics.retrieval_checks.jobs import retrieval_chunk_compute, retrieval_chunk_fail
from evaluation.metrics.retrieval_checks.services import retrieval_chunks_requeue_orphaned
from evaluation.metrics.runs import JobsUnavailable
from evaluation.metrics.tasks import CHUNK_SOFT_TIME_LIMIT, CHUNK_TIME_LIMIT, TRANSIENT_ERRORS

log = logging.getLogger(__name__)


class RetrievalChunkTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        chunk_id = kwargs.get("chunk_id", args[0] if args else None)
        if chunk_id is None:
            return
        try:
            retrieval_chunk_fail(chunk_id=chunk_id, message=f"{type(exc).__name__}: {exc}")
        except Exception:
            log.exception("could not mark retrieval chunk %s failed", chunk_id)


@shared_task(
    bind=True,
    base=RetrievalChunkTask,
    name="evaluation.tasks.compute_retrieval_chunk",
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
def compute_retrieval_chunk(self, chunk_id: int) -> str:
    """Compute one chunk of a retrieval check (``retrieval_chunk_compute``); idempotent."""
    try:
        return retrieval_chunk_compute(chunk_id=chunk_id)
    except SoftTimeLimitExceeded:
        retrieval_chunk_fail(
            chunk_id=chunk_id, message=f"took longer than {CHUNK_SOFT_TIME_LIMIT} s and was stopped"
        )
        return "failed"
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        log.exception("retrieval chunk %s failed on an unexpected error", chunk_id)
        retrieval_chunk_fail(
            chunk_id=chunk_id,
            message=f"internal error, not a data problem ({type(exc).__name__}: {exc}); see the worker log",
        )
        return "failed"


@shared_task(
    name="evaluation.tasks.requeue_orphaned_retrieval_chunks",
    acks_late=True,
    time_limit=300,
    soft_time_limit=240,
)
def requeue_orphaned_retrieval_chunks() -> int:
    """Periodic: queue again the retrieval chunks of dead workers (idempotent)."""
    try:
        return retrieval_chunks_requeue_orphaned()
    except JobsUnavailable as exc:
        log.error("%s", exc.message)
        return 0
