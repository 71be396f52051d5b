"""The Celery side of the engine: one task base with a failure hook, one factory of unit tasks, the sweep.

Delivery guarantees come from the settings (``CELERY_TASK_ACKS_LATE``,
``CELERY_TASK_REJECT_ON_WORKER_LOST``, prefetch 1) and are set again on :class:`UnitTask`, the base of
every unit task, so they hold whatever the deployment sets: a worker that dies mid-unit leaves the
message unacknowledged and another worker takes it again; units are idempotent, so that costs only time. Redis gives such a message back
only after its visibility timeout (an hour, longer than any task), so the unit's heartbeat is what finds
a dead worker within minutes: the beat's :func:`sweep_orphans` queues orphaned units again.

Every task sets both ``soft_time_limit`` and ``time_limit``: a task that set only a hard limit below the
global soft limit (``CELERY_TASK_SOFT_TIME_LIMIT``) was refused by the worker on every run.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from core.jobs.engine import orphans_requeue, orphans_sweep, unit_fail, unit_run
from core.jobs.kinds import JobKind

log = logging.getLogger(__name__)

# Errors that pass: the database restarting or a dropped connection. Retried with backoff.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)
SWEEP_SOFT_TIME_LIMIT = 240
SWEEP_TIME_LIMIT = 300


class UnitTask(Task):
    """Base of every unit task: when the task fails for good (the retries of a database error used up),
    the unit and its job are marked failed, so nothing looks "running" until the sweep."""

    job_kind: JobKind | None = None
    # The delivery guarantees (whatever the deployment sets) and the retries of transient errors.
    acks_late = True
    reject_on_worker_lost = True
    autoretry_for = TRANSIENT_ERRORS
    retry_backoff = 2
    retry_backoff_max = 120
    retry_jitter = True
    max_retries = 5

    def on_failure(self, exc, task_id, args, kwargs, einfo):
        unit_id = next((kwargs[k] for k in ("unit_id", "chunk_id", "run_id") if k in kwargs), None)
        if unit_id is None and args:
            unit_id = args[0]
        if unit_id is None or self.job_kind is None:
            return
        try:
            unit_fail(self.job_kind, unit_id=unit_id, message=f"{type(exc).__name__}: {exc}")
        except Exception:  # the database may be what failed: the sweep finds the unit silent later
            log.exception("could not mark %s unit %s failed", self.job_kind.name, unit_id)


def unit_task(kind: JobKind):
    """Make and register the Celery task that computes one unit of ``kind``, under ``kind.task_name``
    (the name queued messages carry: keep it when code moves)."""

    def compute_unit(self, unit_id: int) -> str:
        try:
            return unit_run(kind, unit_id=unit_id)
        except SoftTimeLimitExceeded:
            message = f"took longer than {kind.soft_time_limit} s and was stopped{kind.soft_time_limit_hint}"
            unit_fail(kind, unit_id=unit_id, message=message)
            return "failed"
        except TRANSIENT_ERRORS:
            raise  # autoretry_for retries them; on_failure fails the unit once they are used up
        except Exception as exc:
            log.exception("%s %s %s failed on an unexpected error", kind.label, kind.unit_noun, unit_id)
            unit_fail(
                kind,
                unit_id=unit_id,
                message=f"internal error, not a data problem ({type(exc).__name__}: {exc}); see the worker log",
            )
            return "failed"

    compute_unit.__name__ = kind.task_name.rsplit(".", 1)[-1]
    compute_unit.__doc__ = f"Compute one unit of a {kind.label} (``core.jobs.engine.unit_run``); idempotent."
    task = shared_task(
        bind=True,
        base=UnitTask,
        name=kind.task_name,
        job_kind=kind,
        soft_time_limit=kind.soft_time_limit,
        time_limit=kind.time_limit,
    )(compute_unit)
    kind.task = task
    return task


def sweep_task(kind: JobKind, name: str):
    """A task under an old per-kind sweep name, so that a beat message queued before a deploy still runs."""

    def sweep_kind() -> int:
        return orphans_sweep_of(kind)

    sweep_kind.__name__ = name.rsplit(".", 1)[-1]
    return shared_task(
        name=name, acks_late=True, soft_time_limit=SWEEP_SOFT_TIME_LIMIT, time_limit=SWEEP_TIME_LIMIT
    )(sweep_kind)


def orphans_sweep_of(kind: JobKind) -> int:
    from core.errors import JobsUnavailable

    try:
        return orphans_requeue(kind)
    except JobsUnavailable as exc:
        log.error("%s", exc.message)
        return 0


@shared_task(
    name="core.jobs.sweep_orphans",
    acks_late=True,
    soft_time_limit=SWEEP_SOFT_TIME_LIMIT,
    time_limit=SWEEP_TIME_LIMIT,
)
def sweep_orphans() -> dict[str, int]:
    """Periodic (Celery beat, every ``JOB_SWEEP_SECONDS``): queue again the orphaned units of every
    registered kind (``core.jobs.engine.orphans_sweep``); idempotent."""
    return orphans_sweep()
