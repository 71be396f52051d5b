"""Reads of recruitment and onboarding, and the one gate every batch request asks (:func:`work_check`).

Who sees which campaign: an account made by an entry link sees only the campaigns it was admitted
to, and reaches nothing of any other campaign or participant; every other annotator sees the open campaigns in their languages, as before.
Whatever a participant may not see answers NotFound, the same as what does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.assignment.qualification import annotator_qualification_problem
from annotation.models import (
    Annotator,
    Batch,
    BatchHold,
    BatchStage,
    Campaign,
    CampaignKind,
    CampaignOnboarding,
    CampaignState,
    CaptionReview,
    Enrolment,
    HoldDecision,
    TutorialAnswer,
    TutorialAttempt,
    TutorialItem,
    TutorialResult,
    TutorialVerdict,
    WrittenCaption,
)
from annotation.workforce import scoring
from core.compiled_reads import CompiledRead
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


# Two reads of every batch request (work_check), their SQL built once per connection.
_TUTORIAL_READ = CompiledRead(
    CampaignOnboarding,
    lambda campaign_id: (
        CampaignOnboarding.objects.filter(
            campaign_id=campaign_id, tutorial_enabled=True, campaign__tutorial_items__isnull=False
        )
        .only("pk")
        .order_by()[:1]
    ),
    {"campaign_id": int},
)
_ENROLMENTS_READ = CompiledRead(
    Enrolment,
    lambda annotator_id: (
        Enrolment.objects.select_related("link").filter(annotator_id=annotator_id).order_by("pk")
    ),
    {"annotator_id": int},
)


def tutorial_required(campaign: Campaign) -> bool:
    """The campaign has an enabled tutorial with at least one gold item."""
    return _TUTORIAL_READ.read(campaign_id=campaign.pk) is not None


def tutorial_result(annotator: Annotator, campaign: Campaign) -> TutorialResult | None:
    return TutorialResult.objects.filter(campaign=campaign, annotator=annotator).first()


def work_check(*, annotator: Annotator, campaign: Campaign) -> None:
    """Raise why ``annotator`` may not get a batch of ``campaign`` under the workforce rules, or return.

    NotFound: an account made by a link asks for a campaign it was not admitted to. NotAllowed:
    languages not declared yet; the campaign's tutorial not taken, waiting for a caption check, or
    failed. NoWorkAvailable: the link's quota of batches is reached (batches that count: a held batch
    does not). Reads only: two queries for an annotator who needs
    no tutorial (it runs on every batch request)."""
    enrolments = _ENROLMENTS_READ.all(annotator_id=annotator.pk)
    enrolment = next((e for e in enrolments if e.campaign_id == campaign.pk), None)
    if enrolment is None and any(e.account_created for e in enrolments):
        raise NotFound(_("No such campaign."))
    if enrolment is not None and enrolment.account_created and enrolment.skills_declared_at is None:
        raise NotAllowed(_("Declare your languages first."))
    if tutorial_required(campaign):
        result = tutorial_result(annotator, campaign)
        if result is None:
            raise NotAllowed(_("Pass the tutorial of this campaign first."))
        if result.verdict == TutorialVerdict.PENDING:
            message = _("Your tutorial caption is being checked; come back later.")
            onboarding = onboarding_of(campaign)
            if onboarding is not None and onboarding.review_hours:
                message += " " + ngettext(
                    "Captions are checked within %(hours)d hour.",
                    "Captions are checked within %(hours)d hours.",
                    onboarding.review_hours,
                ) % {"hours": onboarding.review_hours}
            raise NotAllowed(message)
        if result.verdict != TutorialVerdict.PASSED:
            raise NotAllowed(_("You did not reach the score this campaign needs in its tutorial."))
    if enrolment is not None and enrolment.link.quota_batches is not None:
        done = counted_batches(annotator, campaign).count()
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
    """Where ``annotator`` stands in ``campaign``'s tutorial: the next unanswered gold item in their own
    order (the seed of their attempt; the manager's order before an attempt is started), or the result."""
    items = list(TutorialItem.objects.filter(campaign=campaign).order_by("position", "pk"))
    seed = (
        TutorialAttempt.objects.filter(campaign=campaign, annotator=annotator)
        .values_list("seed", flat=True)
        .first()
    )
    if seed is not None:
        by_id = {item.pk: item for item in items}
        items = [by_id[pk] for pk in scoring.gold_order(list(by_id), seed)]
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


@dataclass(frozen=True)
class ScreenOut:
    """Why a participant cannot take part, and what their crowd platform needs from them."""

    reason: str  # "language": the campaign's language not declared; "english": cannot read English;
    # "tutorial": the tutorial's verdict is failed
    platform: str  # CrowdPlatform value ("" for an account with a password)
    code: str  # the entry link's screen-out code
    url: str  # the entry link's screen-out URL


def tutorial_screen_out_for(annotator: Annotator, campaign: Campaign) -> ScreenOut | None:
    """What a crowd participant who failed ``campaign``'s tutorial is to tell their platform (the
    link's screen-out code or URL, else the platform's way to return the study); None for an account
    no entry link made, which has no study to return."""
    enrolment = (
        Enrolment.objects.select_related("link")
        .filter(annotator=annotator, campaign=campaign, account_created=True)
        .first()
    )
    if enrolment is None:
        return None
    return ScreenOut(
        reason="tutorial",
        platform=enrolment.platform,
        code=enrolment.link.screenout_code,
        url=enrolment.link.screenout_url,
    )


def screen_out_for(enrolment: Enrolment) -> ScreenOut | None:
    """The screen-out of a participant whose account the link made and who has declared languages that
    do not qualify them for the campaign; None while they may go on (or have not declared yet). The
    rule is the assignment engine's (``annotator_qualification_problem``): whom it screens out here
    it would refuse a batch."""
    if not enrolment.account_created or enrolment.skills_declared_at is None:
        return None
    annotator, campaign = enrolment.annotator, enrolment.campaign
    if annotator_qualification_problem(annotator, campaign) is None:
        return None
    speaks = annotator.skills.filter(language_id=campaign.language_id).exists()
    return ScreenOut(
        reason="english" if speaks else "language",
        platform=enrolment.platform,
        code=enrolment.link.screenout_code,
        url=enrolment.link.screenout_url,
    )


def next_step(annotator: Annotator, campaign: Campaign) -> str:
    """The URL name (with the campaign id as its argument) of what a participant does next:
    'languages', 'screened_out' (their languages do not fit), 'tutorial', or 'dashboard' (no
    argument) once they may work."""
    enrolment = enrolment_of(annotator, campaign)
    if enrolment is not None and enrolment.account_created and enrolment.skills_declared_at is None:
        return "annotation:participant_languages"
    if enrolment is not None and screen_out_for(enrolment) is not None:
        return "annotation:screened_out"
    speaks = annotator.skills.filter(language_id=campaign.language_id).exists()
    result = tutorial_result(annotator, campaign)
    if (
        speaks
        and tutorial_required(campaign)
        and (result is None or result.verdict != TutorialVerdict.PASSED)
    ):
        return "annotation:tutorial"
    return "annotation:dashboard"


@dataclass(frozen=True)
class Completion:
    code: str
    url: str
    final: bool  # the quota is reached: no further batch (the page sends them on to ``url``)
    done: int
    quota: int | None


def counted_batches(annotator: Annotator, campaign: Campaign) -> QuerySet:
    """``annotator``'s submitted batches of ``campaign`` that count: all but those held for review or
    rejected (``annotation.workforce.counting``). The quota and the completion code count these."""
    return Batch.objects.filter(campaign=campaign, annotator=annotator, stage=BatchStage.SUBMITTED).exclude(
        hold__decision__in=[HoldDecision.HELD, HoldDecision.REJECTED]
    )


def hold_of(batch: Batch) -> BatchHold | None:
    """The hold of a submitted ``batch`` while it does not count (held, or rejected on review); None
    for a batch that counts."""
    return BatchHold.objects.filter(batch=batch).exclude(decision=HoldDecision.ACCEPTED).first()


def completion_for(batch: Batch) -> Completion | None:
    """The completion code and URL to show after ``batch`` (submitted, and counting), when its annotator
    came through an entry link that has one; None otherwise: a held batch earns no code."""
    if batch.stage != BatchStage.SUBMITTED or hold_of(batch) is not None:
        return None
    enrolment = enrolment_of(batch.annotator, batch.campaign)
    if enrolment is None:
        return None
    link = enrolment.link
    if not (link.completion_code or link.completion_url):
        return None
    done = counted_batches(batch.annotator, batch.campaign).count()
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


def gold_set_constant_passes(
    campaign: Campaign, threshold: float | None = None
) -> list[scoring.ConstantPass]:
    """The answers that, given to every gold item of ``campaign``, pass its tutorial at ``threshold``
    (the stored threshold when None; the field's default before the campaign has settings)."""
    if threshold is None:
        onboarding = onboarding_of(campaign)
        threshold = (
            onboarding.pass_threshold
            if onboarding is not None
            else CampaignOnboarding._meta.get_field("pass_threshold").default
        )
    expected = list(TutorialItem.objects.filter(campaign=campaign).values_list("expected", flat=True))
    return scoring.constant_answers_passing(
        expected, threshold, side_by_side=campaign.kind == CampaignKind.SIDE_BY_SIDE
    )


def held_batch_answers(hold: BatchHold) -> list[dict]:
    """Every answer of a held batch, in the order its participant saw the images, for the manager's
    review: the image, whether it is a control item, the rating or judgment, the caption and the
    participant's report on the image (if any)."""
    from annotation.quality.models import ImageReport

    batch = hold.batch
    assignments = list(
        batch.assignments.select_related(
            "item__image", "rating", "written_caption", "sxs_judgment", "draft"
        ).order_by("position")
    )
    reports = dict(
        ImageReport.objects.filter(
            annotator_id=batch.annotator_id, image_id__in=[a.item.image_id for a in assignments]
        ).values_list("image_id", "reason")
    )
    rows = []
    for a in assignments:
        rating = getattr(a, "rating", None)
        judgment = getattr(a, "sxs_judgment", None)
        caption = getattr(a, "written_caption", None)
        rows.append(
            {
                "position": a.position + 1,
                "image": a.item.image.key,
                "control": a.item.is_control,
                "answer": rating.get_value_display()
                if rating
                else (judgment.get_choice_display() if judgment else ""),
                "caption": caption.text if caption else "",
                "report": reports.get(a.item.image_id, ""),
            }
        )
    return rows
