"""Retrieval checks as a kind of the job engine: what a chunk computes and stores, and its Celery task.

Image and text embedding chunks run first; a language's recall chunk waits for them and is sent when
the last of them is stored. The task keeps its name (``evaluation.tasks.compute_retrieval_chunk``).
"""

from __future__ import annotations

from core.jobs.tasks import sweep_task, unit_task
from evaluation.retrieval.compute import RETRIEVAL_CHUNKS

RETRIEVAL_CHECK = RETRIEVAL_CHUNKS.job_kind(
    name="retrieval_check",
    label="retrieval check",
    task_name="evaluation.tasks.compute_retrieval_chunk",
    resume_hint="manage.py clip_retrieval --resume {id}",
)
compute_retrieval_chunk = unit_task(RETRIEVAL_CHECK)
# The per-kind sweep of before the engine, for beat messages queued before a deploy.
requeue_orphaned_retrieval_chunks = sweep_task(
    RETRIEVAL_CHECK, "evaluation.tasks.requeue_orphaned_retrieval_chunks"
)
