"""Celery tasks of the annotation app."""

from celery import shared_task

from annotation.assignment.engine import leases_expire


@shared_task(name="annotation.tasks.expire_leases", acks_late=True, time_limit=300, soft_time_limit=240)
def expire_leases() -> int:
    """Periodic (Celery beat, every minute): return expired batches' items to the pool.

    Idempotent: a batch is expired once, and a second run finds nothing to do.
    """
    return leases_expire()
