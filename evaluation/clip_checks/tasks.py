"""Zero-shot and foil checks as one kind of the job engine, and its Celery task.

Image and text embedding chunks run first; a language's score chunk waits for them and is sent when
the last of them is stored.
"""

from __future__ import annotations

from core.jobs.tasks import unit_task
from evaluation.clip_checks.compute import PROBE_CHUNKS

CLIP_PROBE_CHECK = PROBE_CHUNKS.job_kind(
    name="clip_probe_check",
    label="CLIP probe check",
    task_name="evaluation.tasks.compute_clip_probe_chunk",
    resume_hint="manage.py clip_zeroshot --resume {id} (a foil check: clip_foils --resume {id})",
)
compute_clip_probe_chunk = unit_task(CLIP_PROBE_CHECK)
