"""Metric runs as a kind of the job engine: what a chunk computes and stores, and its Celery task.

The task keeps its name (``evaluation.tasks.compute_metric_chunk``), so chunks queued before a deploy
are still computed after it.
"""

from __future__ import annotations

from core.jobs.kinds import JobKind, register
from core.jobs.tasks import sweep_task, unit_task
from evaluation.metrics.clip import ClipUnavailable
from evaluation.metrics.text.schemes import SchemeError
from evaluation.models import ChunkKind, ChunkStatus, MetricChunk, MetricRun
from evaluation.runs.compute import chunk_compute, chunk_label, chunk_store, metric_run_finalise


def _ready(run_id: int) -> list[int]:
    # Text chunks first: they are fast, and their scores do not wait behind CLIP inference.
    rows = MetricChunk.objects.filter(run_id=run_id, status=ChunkStatus.PENDING).values_list(
        "pk", "kind", "system_id", "index"
    )
    return [pk for pk, *_ in sorted(rows, key=lambda c: (c[1] != ChunkKind.TEXT, c[2], c[3]))]


METRIC_RUN = register(
    JobKind(
        name="metric_run",
        label="metric run",
        job_model=MetricRun,
        unit_model=MetricChunk,
        job_field="run",
        task_name="evaluation.tasks.compute_metric_chunk",
        compute=chunk_compute,
        store=chunk_store,
        finalise=metric_run_finalise,
        ready=_ready,
        unit_label=chunk_label,
        unit_noun="chunk",
        id_detail="run_id",
        data_errors=(ClipUnavailable, SchemeError),
        select_related=("run", "run__language", "run__reference_set", "system"),
        resume_hint="manage.py metric_run resume {id}",
    )
)
compute_metric_chunk = unit_task(METRIC_RUN)
# The per-kind sweep of before the engine, for beat messages queued before a deploy.
requeue_orphaned_chunks = sweep_task(METRIC_RUN, "evaluation.tasks.requeue_orphaned_chunks")
