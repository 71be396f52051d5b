"""Reads of recruitment and onboarding, and the one gate every batch request asks (:func:`work_check`).

Who sees which campaign: an account made by an entry link sees only the campaigns it was admitted
to (RELIABILITY 24); every other annotator sees the open campaigns in their languages, as before.
Whatever a participant may not see answers NotFound, the same as what does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from annotation.models import (
    Annotator,
    Batch,
    BatchStage,
    Campaign,
    CampaignOnboarding,
    CampaignState,
    CaptionReview,
    Enrolment,
    TutorialAnswer,
    TutorialItem,
    TutorialResult,
    WrittenCaption,
)
from core.errors import NotAllowed, NotFound, NoWorkAvailable


def is_link_account(annotator: Annotator) -> bool:
    """The account was made by an entry link (it is scoped to the campaigns it was admitted to)."""
    return Enrolment.objects.filter(annotator=annotator, account_created=True).exists()


def campaigns_visible(annotator: Annotator, campaigns: QuerySet) -> QuerySet:
    """``campaigns`` narrowed to those ``annotator`` may see at all."""
    if is_link_account(annotator):
        return campaigns.filter(enrolments__annotator=annotator)
    return campaigns


def campaign_for_participant(annotator: Annotator, campaign_id: int) -> Campaign:
    """An open campaign ``annotator`` may work on (visible to them, in one of their languages).
    Raises NotFound otherwise, whatever the reason."""
    qs = campaigns_visible(annotator, Campaign.objects.select_related("language"))
    campaign = qs.filter(pk=campaign_id, state=CampaignState.OPEN).first()
    if campaign is None or not annotator.skills.filter(language_id=campaign.language_id).exists():
        raise NotFound(_("No such campaign."))
    return campaign


def enrolment_of(annotator: Annotator, campaign: Campaign) -> Enrolment | None:
    return Enrolment.objects.select_related("link").filter(campaign=campaign, annotator=annotator).first()


def onboarding_of(campaign: Campaign) -> CampaignOnboarding | None:
    return CampaignOnboarding.objects.filter(campaign=campaign).first()


def tutorial_required(campaign: Campaign) -> bool:
    """The campaign has an enabled tutorial with at least one gold item."""
    return CampaignOnboarding.objects.filter(
        campaign=campaign, tutorial_enabled=True, campaign__tutorial_items__isnull=False
    ).exists()


def tutorial_result(annotator: Annotator, campaign: Campaign) -> TutorialResult | None:
    return TutorialResult.objects.filter(campaign=campaign, annotator=annotator).first()


def work_check(*, annotator: Annotator, campaign: Campaign) -> None:
    """Raise why ``annotator`` may not get a batch of ``campaign`` under the workforce rules, or return.

    NotFound: an account made by a link asks for a campaign it was not admitted to. NotAllowed:
    languages not declared yet; the campaign's tutorial not passed (or failed). NoWorkAvailable:
    the link's quota of batches is reached. Reads only: two queries for an annotator who needs
    no tutorial (it runs on every batch request)."""
    enrolments = list(Enrolment.objects.select_related("link").filter(annotator=annotator))
    enrolment = next((e for e in enrolments if e.campaign_id == campaign.pk), None)
    if enrolment is None and any(e.account_created for e in enrolments):
        raise NotFound(_("No such campaign."))
    if enrolment is not None and enrolment.account_created and enrolment.skills_declared_at is None:
        raise NotAllowed(_("Declare your languages first."))
    if tutorial_required(campaign):
        result = tutorial_result(annotator, campaign)
        if result is None:
            raise NotAllowed(_("Pass the tutorial of this campaign first."))
        if not result.passed:
            raise NotAllowed(_("You did not reach the score this campaign needs in its tutorial."))
    if enrolment is not None and enrolment.link.quota_batches is not None:
        done = Batch.objects.filter(
            campaign=campaign, annotator=annotator, stage=BatchStage.SUBMITTED
        ).count()
        if done >= enrolment.link.quota_batches:
            raise NoWorkAvailable(_("You have done every batch of this study. Thank you!"))


@dataclass(frozen=True)
class TutorialStep:
    campaign: Campaign
    item: TutorialItem | None  # the next gold item; None when every item is answered
    number: int  # 1-based position of ``item`` among the campaign's gold items
    total: int
    result: TutorialResult | None


def tutorial_step(annotator: Annotator, campaign: Campaign) -> TutorialStep:
    """Where ``annotator`` stands in ``campaign``'s tutorial: the next unanswered gold item, or the result."""
    items = list(TutorialItem.objects.filter(campaign=campaign).order_by("position", "pk"))
    answered = set(
        TutorialAnswer.objects.filter(item__campaign=campaign, annotator=annotator).values_list(
            "item_id", flat=True
        )
    )
    nxt = next(((i, item) for i, item in enumerate(items) if item.pk not in answered), None)
    return TutorialStep(
        campaign=campaign,
        item=nxt[1] if nxt else None,
        number=(nxt[0] + 1) if nxt else len(items),
        total=len(items),
        result=tutorial_result(annotator, campaign),
    )


def last_tutorial_answer(annotator: Annotator, campaign: Campaign) -> TutorialAnswer | None:
    """The annotator's most recent answer in ``campaign``'s tutorial (its feedback page shows it)."""
    return (
        TutorialAnswer.objects.select_related("item")
        .filter(item__campaign=campaign, annotator=annotator)
        .order_by("-created_at", "-pk")
        .first()
    )


def tutorial_item_for(annotator: Annotator, campaign_id: int, item_id: int) -> TutorialItem:
    """A gold item of a campaign ``annotator`` may work on (for its image). Raises NotFound."""
    campaign = campaign_for_participant(annotator, campaign_id)
    try:
        return TutorialItem.objects.select_related("image").get(pk=item_id, campaign=campaign)
    except (TutorialItem.DoesNotExist, ValueError, TypeError):
        raise NotFound(_("No such tutorial item.")) from None


def next_step(annotator: Annotator, campaign: Campaign) -> str:
    """The URL name (with the campaign id as its argument) of what a participant does next:
    'languages', 'tutorial', or 'dashboard' (no argument) once they may work."""
    enrolment = enrolment_of(annotator, campaign)
    if enrolment is not None and enrolment.account_created and enrolment.skills_declared_at is None:
        return "annotation:participant_languages"
    speaks = annotator.skills.filter(language_id=campaign.language_id).exists()
    result = tutorial_result(annotator, campaign)
    if speaks and tutorial_required(campaign) and (result is None or not result.passed):
        return "annotation:tutorial"
    return "annotation:dashboard"


@dataclass(frozen=True)
class Completion:
    code: str
    url: str
    final: bool  # the quota is reached: no further batch (the page sends them on to ``url``)
    done: int
    quota: int | None


def completion_for(batch: Batch) -> Completion | None:
    """The completion code and URL to show after ``batch`` (submitted), when its annotator came through
    an entry link that has one; None otherwise."""
    if batch.stage != BatchStage.SUBMITTED:
        return None
    enrolment = enrolment_of(batch.annotator, batch.campaign)
    if enrolment is None:
        return None
    link = enrolment.link
    if not (link.completion_code or link.completion_url):
        return None
    done = Batch.objects.filter(
        campaign=batch.campaign, annotator=batch.annotator, stage=BatchStage.SUBMITTED
    ).count()
    quota = link.quota_batches
    if quota is not None and done < quota:
        return None
    return Completion(
        code=link.completion_code, url=link.completion_url, final=quota is not None, done=done, quota=quota
    )


def own_reviews(annotator: Annotator, campaign: Campaign) -> list[CaptionReview]:
    """The manager's decisions on ``annotator``'s own captions in ``campaign`` (never anyone else's)."""
    return list(
        CaptionReview.objects.select_related("caption", "caption__image")
        .filter(caption__annotator=annotator, caption__campaign=campaign)
        .order_by("-updated_at")
    )


def pilot_captions(campaign: Campaign) -> list[WrittenCaption]:
    """Every caption of a pilot campaign with its review (if any), for the manager's review page."""
    return list(
        WrittenCaption.objects.select_related("annotator__user", "image", "review")
        .filter(campaign=campaign)
        .order_by("image__key", "pk")
    )
