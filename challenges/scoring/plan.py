"""Plan a submission's scoring: one unit per submitted language, sent to the workers on commit."""

from __future__ import annotations

from annotation.models import Language
from challenges.models import ScoringUnit, Submission
from challenges.scoring.tasks import SUBMISSION_SCORING
from core.jobs.engine import job_units_store


def scoring_plan(*, submission: Submission) -> None:
    """Store the submission's units and queue them when the caller's transaction commits. Runs in the
    caller's transaction (which created the submission)."""
    languages = Language.objects.filter(code__in=submission.languages).order_by("code")
    job_units_store(
        SUBMISSION_SCORING,
        job=submission,
        units=[ScoringUnit(submission=submission, language=language) for language in languages],
    )
