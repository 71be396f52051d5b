"""Submission scoring as a kind of the job engine: one unit per submitted language, and its Celery task."""

from __future__ import annotations

from challenges.models import ScoringUnit, Submission
from challenges.scoring.compute import unit_compute, unit_label, unit_store
from core.jobs.kinds import JobKind, register
from core.jobs.tasks import unit_task
from evaluation.metrics.clip import ClipUnavailable
from evaluation.metrics.text.schemes import SchemeError

SUBMISSION_SCORING = register(
    JobKind(
        name="submission_scoring",
        label="submission scoring",
        job_model=Submission,
        unit_model=ScoringUnit,
        job_field="submission",
        task_name="challenges.tasks.score_submission_language",
        compute=unit_compute,
        store=unit_store,
        unit_label=unit_label,
        unit_noun="language",
        id_detail="submission_id",
        data_errors=(SchemeError, ClipUnavailable),
        select_related=("submission", "submission__phase", "submission__phase__clip_model", "language"),
        resume_hint="the Resume action of the submission's admin page",
    )
)
score_submission_language = unit_task(SUBMISSION_SCORING)
