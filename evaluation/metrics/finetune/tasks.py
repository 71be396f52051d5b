"""The Celery task that trains one fine-tuning run, and the sweep that re-queues runs of killed workers.

Late acks and reject-on-worker-lost: a killed worker's task is delivered again; the run's claim makes a
second delivery harmless, and the orphan sweep (or ``fine_tune_resume``) queues a silent run again,
which continues from its last checkpoint. Database errors are retried; anything else fails the run
visibly with the reason.
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from evaluation.metrics.finetune.jobs import fine_tune_fail, fine_tune_runs_orphaned, fine_tune_train
from evaluation.metrics.finetune.services import fine_tune_resume
from evaluation.metrics.runs import JobsUnavailable
from evaluation.metrics.tasks import TRANSIENT_ERRORS

log = logging.getLogger(__name__)

# A run checkpoints as it goes, so a time limit costs at most the steps since its last checkpoint.
TRAIN_SOFT_TIME_LIMIT = 23 * 3600
TRAIN_TIME_LIMIT = 24 * 3600


@shared_task(
    bind=True,
    name="evaluation.tasks.train_clip",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=120,
    max_retries=5,
    soft_time_limit=TRAIN_SOFT_TIME_LIMIT,
    time_limit=TRAIN_TIME_LIMIT,
)
def train_clip(self, run_id: int) -> str:
    """Train fine-tuning run ``run_id`` (``fine_tune_train``); idempotent."""
    try:
        return fine_tune_train(run_id=run_id)
    except SoftTimeLimitExceeded:
        fine_tune_fail(
            run_id=run_id,
            message=f"took longer than {TRAIN_SOFT_TIME_LIMIT} s and was stopped; resume it to continue "
            "from its last checkpoint",
        )
        return "failed"
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        log.exception("fine-tuning run %s failed on an unexpected error", run_id)
        fine_tune_fail(
            run_id=run_id,
            message=f"internal error, not a data problem ({type(exc).__name__}: {exc}); see the worker log. "
            "Resume continues from the last checkpoint",
        )
        return "failed"


@shared_task(name="evaluation.tasks.requeue_orphaned_fine_tunes", acks_late=True, time_limit=300)
def requeue_orphaned_fine_tunes() -> int:
    """Periodic: queue again the runs whose worker went silent (killed); they resume from their checkpoint."""
    count = 0
    for run_id in fine_tune_runs_orphaned():
        try:
            fine_tune_resume(run_id=run_id)
            count += 1
        except JobsUnavailable as exc:
            log.error("%s", exc.message)
            break
    return count
