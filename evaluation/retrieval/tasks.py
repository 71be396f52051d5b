"""Retrieval checks as a kind of the job engine: what a chunk computes and stores, and its Celery task.

Image and text embedding chunks run first; a language's recall chunk waits for them and is sent when
the last of them is stored. The task keeps its name (``evaluation.tasks.compute_retrieval_chunk``).
"""

from __future__ import annotations

from django.db import transaction

from core.jobs.engine import units_send
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


def _send_recall(check: RetrievalCheck, chunk: RetrievalChunk) -> None:
    # After an embedding chunk: the recall chunks that stopped waiting go to the workers on commit.
    if chunk.kind == RetrievalChunkKind.RECALL:
        return
    recall = set(
        RetrievalChunk.objects.filter(
            retrieval_check_id=check.pk, kind=RetrievalChunkKind.RECALL
        ).values_list("pk", flat=True)
    )
    ready = [pk for pk in ready_chunk_ids(check.pk) if pk in recall]
    if ready:
        check_id = check.pk
        transaction.on_commit(lambda: units_send(RETRIEVAL_CHECK, check_id, ready))


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
        after_store=_send_recall,
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
