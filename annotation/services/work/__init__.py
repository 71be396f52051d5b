"""Writes an annotator makes inside a batch: ratings, the switch to screen 2, drafts, submit;
side-by-side judgments, and the submit of side-by-side and verification batches.

Every service here first loads the batch *of this annotator* (another annotator's batch id
raises NotFound, indistinguishable from a missing one) and checks the batch's campaign kind
and stage. A caption batch goes RATING -> WRITING -> SUBMITTED; a side-by-side or
verification batch has one screen and goes RATING -> SUBMITTED.

Shared checks in ``checks``; caption batches in ``captions``; side-by-side and verification in
``judgments``. Every service is importable from here.
"""

from annotation.services.work.captions import (  # noqa: F401
    DraftResult,
    ShownCaption,
    batch_submit,
    draft_save,
    rating_save,
    writing_open,
)
from annotation.services.work.checks import SUBMIT_KEY_PATTERN, SUBMITTED_MESSAGE  # noqa: F401
from annotation.services.work.judgments import judgment_batch_submit, sxs_judgment_save  # noqa: F401
