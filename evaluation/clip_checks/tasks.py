"""Zero-shot and foil checks as one kind of the job engine, and its Celery task.

Image and text embedding chunks run first; a language's score chunk waits for them and is sent when
the last of them is stored.
"""

from __future__ import annotations

from django.db import transaction

from core.jobs.engine import units_send
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


def _send_scores(check: ClipProbeCheck, chunk: ClipProbeChunk) -> None:
    # After an embedding chunk: the score chunks that stopped waiting go to the workers on commit.
    if chunk.kind == ClipProbeChunkKind.SCORE:
        return
    scores = set(
        ClipProbeChunk.objects.filter(probe_check_id=check.pk, kind=ClipProbeChunkKind.SCORE).values_list(
            "pk", flat=True
        )
    )
    ready = [pk for pk in ready_chunk_ids(check.pk) if pk in scores]
    if ready:
        check_id = check.pk
        transaction.on_commit(lambda: units_send(CLIP_PROBE_CHECK, check_id, ready))


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
        after_store=_send_scores,
        unit_label=chunk_label,
        unit_noun="chunk",
        id_detail="check_id",
        data_errors=(ClipUnavailable,),
        select_related=("probe_check",),
        resume_hint="manage.py clip_zeroshot --resume {id} (a foil check: clip_foils --resume {id})",
    )
)
compute_clip_probe_chunk = unit_task(CLIP_PROBE_CHECK)
