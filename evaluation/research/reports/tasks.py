"""The Celery task that computes a stored report (:mod:`.cache`), and the computers it may run."""

from __future__ import annotations

from celery import shared_task

from evaluation.research.reports.cache import report_compute, task_sender


@shared_task(
    name="evaluation.research.reports.compute", acks_late=True, soft_time_limit=25 * 60, time_limit=30 * 60
)
def report_compute_task(cache_id: int) -> None:
    """Compute one stored report by id; idempotent (a done row is left alone)."""
    report_compute(cache_id=cache_id)


# Looked up at each send (not bound once), so that the task's ``delay`` is what runs.
task_sender(lambda cache_id: report_compute_task.delay(cache_id))
