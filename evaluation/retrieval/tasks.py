"""Retrieval checks as a kind of the job engine: what a chunk computes and stores, and its Celery task.

Image and text embedding chunks run first; a language's recall chunk waits for them and is sent when
the last of them is stored. The task keeps its name (``evaluation.tasks.compute_retrieval_chunk``).
"""

from __future__ import annotations

from core.jobs.engine import send_when_ready
from core.jobs.kinds import JobKind, register
from core.jobs.tasks import sweep_task, unit_task
from evaluation.metrics.clip import ClipUnavailable
from evaluation.models import RetrievalCheck, RetrievalChunk, RetrievalChunkKind
from evaluation.retrieval.compute import (
    chunk_compute,
    chunk_label,
    chunk_store,
    chunk_waiting,
    ready_chunk_ids,
)

RETRIEVAL_CHECK = register(
    JobKind(
        name="retrieval_check",
        label="retrieval check",
        job_model=RetrievalCheck,
        unit_model=RetrievalChunk,
        job_field="retrieval_check",
        task_name="evaluation.tasks.compute_retrieval_chunk",
        compute=chunk_compute,
        store=chunk_store,
        ready=ready_chunk_ids,
        waiting=chunk_waiting,
        after_store=send_when_ready("retrieval_check", last=RetrievalChunkKind.RECALL),
        unit_label=chunk_label,
        unit_noun="chunk",
        id_detail="check_id",
        data_errors=(ClipUnavailable,),
        select_related=("retrieval_check",),
        resume_hint="manage.py clip_retrieval --resume {id}",
    )
)
compute_retrieval_chunk = unit_task(RETRIEVAL_CHECK)
# The per-kind sweep of before the engine, for beat messages queued before a deploy.
requeue_orphaned_retrieval_chunks = sweep_task(
    RETRIEVAL_CHECK, "evaluation.tasks.requeue_orphaned_retrieval_chunks"
)
