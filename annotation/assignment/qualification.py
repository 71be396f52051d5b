"""Who may work on a campaign at all, by language: the one rule the assignment engine asks before it
hands out a batch, and the entry-link screen-out asks before a participant goes on."""

from __future__ import annotations

from django.utils.translation import gettext

from annotation.interface import language_name
from annotation.models import Annotator, Campaign, CampaignKind


def annotator_qualification_problem(annotator: Annotator, campaign: Campaign) -> str | None:
    """Why ``annotator`` may not work on ``campaign``, or None if they may.

    Every kind needs a native or fluent skill in the campaign language. Only caption
    campaigns also need English (screen 1 shows English captions); side-by-side and
    verification screens show captions in the campaign language only.
    """
    if not annotator.skills.filter(language_id=campaign.language_id).exists():
        return gettext("You are not registered as a native or fluent speaker of %(language)s.") % {
            "language": language_name(campaign.language)
        }
    if campaign.kind == CampaignKind.CAPTION and not annotator.reads_english:
        return gettext(
            "This campaign asks you to rate English captions first, and you are not registered as reading English."
        )
    return None
