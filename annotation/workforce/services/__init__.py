"""Writes of recruitment and onboarding: entry links and admission (``links``), the language declaration,
the tutorial and pilot reviews (``onboarding``), and crowd batches held until they count (``holds``).
Every function is atomic and raises only ``core.errors`` errors; every one is importable from here."""

from annotation.workforce.services.holds import (  # noqa: F401
    batch_hold_decide,
    batch_hold_if_empty,
)
from annotation.workforce.services.links import (  # noqa: F401
    COMPLETION_CODE,
    CROWD_ID,
    MTURK_PREVIEW,
    Admission,
    CrowdIdentity,
    crowd_identity_parse,
    entry_admit,
    entry_link_create,
    entry_link_revoke,
    link_closed_reason,
)
from annotation.workforce.services.onboarding import (  # noqa: F401
    WRITE,
    answer_codes,
    answer_correct,
    caption_review,
    expected_codes,
    onboarding_check_item,
    onboarding_settings,
    skills_declare,
    tutorial_answer,
    tutorial_attempt_start,
    tutorial_reset,
    tutorial_writing_check,
)
