"""Zero-shot and foil checks as one kind of the job engine, and its Celery task.

Image and text embedding chunks run first; a language's score chunk waits for them and is sent when
the last of them is stored.
"""

from __future__ import annotations

from core.jobs.engine import send_when_ready
from core.jobs.kinds import JobKind, register
from core.jobs.tasks import unit_task
from evaluation.clip_checks.compute import (
    check_finalise,
    chunk_compute,
    chunk_label,
    chunk_store,
    chunk_waiting,
    ready_chunk_ids,
)
from evaluation.metrics.clip import ClipUnavailable
from evaluation.models import ClipProbeCheck, ClipProbeChunk, ClipProbeChunkKind

CLIP_PROBE_CHECK = register(
    JobKind(
        name="clip_probe_check",
        label="CLIP probe check",
        job_model=ClipProbeCheck,
        unit_model=ClipProbeChunk,
        job_field="probe_check",
        task_name="evaluation.tasks.compute_clip_probe_chunk",
        compute=chunk_compute,
        store=chunk_store,
        finalise=check_finalise,
        ready=ready_chunk_ids,
        waiting=chunk_waiting,
        after_store=send_when_ready("clip_probe_check", last=ClipProbeChunkKind.SCORE),
        unit_label=chunk_label,
        unit_noun="chunk",
        id_detail="check_id",
        data_errors=(ClipUnavailable,),
        select_related=("probe_check",),
        resume_hint="manage.py clip_zeroshot --resume {id} (a foil check: clip_foils --resume {id})",
    )
)
compute_clip_probe_chunk = unit_task(CLIP_PROBE_CHECK)
