"""Fine-tuning as a kind of the job engine: a run is its own single unit, trained by one Celery task.

Late acks and reject-on-worker-lost: a killed worker's task is delivered again; the run's claim makes a
second delivery harmless, and the sweep (or ``fine_tune_resume``) queues a silent run again, which
continues from its last checkpoint. A run whose database retries run out is marked failed by the task
base's failure hook. The task keeps its name (``evaluation.tasks.train_clip``).
"""

from __future__ import annotations

from core.jobs.kinds import JobKind, register
from core.jobs.tasks import sweep_task, unit_task
from evaluation.finetune.compute import run_compute, run_store
from evaluation.metrics.clip import ClipUnavailable
from evaluation.models import ClipFineTune

FINE_TUNE = register(
    JobKind(
        name="fine_tune",
        label="fine-tuning run",
        job_model=ClipFineTune,
        task_name="evaluation.tasks.train_clip",
        compute=run_compute,
        store=run_store,
        unit_noun="run",
        id_detail="run_id",
        # ValueError: a hyperparameter or data shape the trainer refuses; the run fails with its reason.
        data_errors=(ClipUnavailable, ValueError),
        resume_hint="manage.py finetune_clip --resume {id}",
        # A run checkpoints as it goes, so a time limit costs at most the steps since its last checkpoint.
        soft_time_limit=23 * 3600,
        time_limit=24 * 3600,
        soft_time_limit_hint="; resume it to continue from its last checkpoint",
    )
)
train_clip = unit_task(FINE_TUNE)
# The per-kind sweep of before the engine, for beat messages queued before a deploy.
requeue_orphaned_fine_tunes = sweep_task(FINE_TUNE, "evaluation.tasks.requeue_orphaned_fine_tunes")
