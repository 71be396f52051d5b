"""The recruitment panel on each campaign's page (``annotation.admin.panels``)."""

from __future__ import annotations

from annotation.admin.panels import campaign_panel_register
from annotation.models import (
    BatchHold,
    Campaign,
    CampaignKind,
    CaptionReview,
    Enrolment,
    EntryLink,
    HoldDecision,
    ReviewDecision,
    TutorialItem,
    TutorialResult,
    TutorialVerdict,
    WrittenCaption,
)
from core.admin import count_of


def recruitment_panel(campaign: Campaign) -> dict:
    """Entry links, participants, tutorial results and the pilot review of one campaign. Two queries."""
    figures = (
        Campaign.objects.filter(pk=campaign.pk)
        .annotate(
            n_participants=count_of(Enrolment, "campaign"),
            n_gold=count_of(TutorialItem, "campaign"),
            n_passed=count_of(TutorialResult, "campaign", verdict=TutorialVerdict.PASSED),
            n_failed=count_of(TutorialResult, "campaign", verdict=TutorialVerdict.FAILED),
            n_pending=count_of(TutorialResult, "campaign", verdict=TutorialVerdict.PENDING),
            n_reviewed=count_of(CaptionReview, "caption__campaign"),
            n_held=count_of(BatchHold, "batch__campaign", decision=HoldDecision.HELD),
        )
        .values(
            "n_participants",
            "n_gold",
            "n_passed",
            "n_failed",
            "n_pending",
            "n_reviewed",
            "n_held",
            "onboarding__pk",
            "onboarding__tutorial_enabled",
            "onboarding__pass_threshold",
            "onboarding__is_pilot",
        )
        .get()
    )
    onboarding = None
    if figures["onboarding__pk"] is not None:
        onboarding = {
            "pk": figures["onboarding__pk"],
            "tutorial_enabled": figures["onboarding__tutorial_enabled"],
            "pass_threshold": figures["onboarding__pass_threshold"],
            "is_pilot": figures["onboarding__is_pilot"],
        }
    # The pilots that prepare this campaign, each with how its review stands (one query in all).
    pilots = list(
        Campaign.objects.filter(onboarding__main_campaign=campaign, onboarding__is_pilot=True)
        .annotate(
            n_captions=count_of(WrittenCaption, "campaign"),
            n_accepted=count_of(CaptionReview, "caption__campaign", decision=ReviewDecision.ACCEPTED),
            n_returned=count_of(CaptionReview, "caption__campaign", decision=ReviewDecision.RETURNED),
        )
        .values("pk", "name", "onboarding__pk", "n_captions", "n_accepted", "n_returned")
    )
    return {
        "campaign": campaign,
        "pilots": pilots,
        "links": list(EntryLink.objects.filter(campaign=campaign).order_by("-created_at")),
        "participants": figures["n_participants"],
        "onboarding": onboarding,
        "gold_items": figures["n_gold"],
        "passed": figures["n_passed"],
        "failed": figures["n_failed"],
        "pending": figures["n_pending"],
        "reviewed": figures["n_reviewed"],
        "held": figures["n_held"],
    }


campaign_panel_register(
    name="recruitment",
    kinds=[CampaignKind.CAPTION, CampaignKind.SIDE_BY_SIDE, CampaignKind.RATING],
    template="admin/annotation/campaign/recruitment_panel.html",
    build=recruitment_panel,
)
