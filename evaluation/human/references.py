"""Which written captions count: the one rule every reader of the people's captions applies.

Metric runs over a campaign's reference set, retrieval checks, fine-tuning pairs, Table 1, the
caption exports and the research API all read the written captions through
:func:`reference_captions`, so a caption a manager excluded, or one of a held batch, is left out
of every number at once, and a change of the rule is made here only.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from annotation.models import WrittenCaption


def reference_captions(*, campaign_ids: Iterable[int] | None = None) -> QuerySet[WrittenCaption]:
    """The written captions that count as references and in every figure, unordered.

    A caption counts when annotation's ``WrittenCaption.objects.counted()`` keeps it (not excluded
    by a manager after the review of its typing, not of a batch held for review or rejected), it
    is not on a control item (controls are rated, never captioned: this keeps it so), and it has
    text (an image the annotator reported may be submitted without a caption, stored empty).
    ``campaign_ids``: only those campaigns' captions (default: every campaign's). A read; no lock.
    """
    captions = (
        WrittenCaption.objects.counted()
        .filter(assignment__item__is_control=False)
        .exclude(text__regex=r"^\s*$")
        .order_by()
    )
    if campaign_ids is not None:
        captions = captions.filter(campaign_id__in=list(campaign_ids))
    return captions
