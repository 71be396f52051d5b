"""Onboarding: the language declaration, the tutorial (attempts, answers scored at once, written captions
checked by a person, the result) and the review of pilot captions."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.captions import caption_problem, caption_rules
from annotation.models import (
    Annotator,
    AnnotatorSkill,
    Campaign,
    CampaignKind,
    CampaignOnboarding,
    CaptionReview,
    Enrolment,
    Language,
    ReviewDecision,
    SkillLevel,
    TutorialAnswer,
    TutorialAttempt,
    TutorialItem,
    TutorialResult,
    TutorialVerdict,
    WrittenCaption,
)
from annotation.workforce import scoring
from core.errors import Conflict, NotAllowed, NotFound, ValidationFailed
from core.scales import RATING, SXS


def skills_declare(
    *, annotator: Annotator, native: list[int], fluent: list[int], reads_english: bool
) -> None:
    """A participant whose account a link made declares their languages (replacing what they declared
    before). Raises NotAllowed for other accounts (their skills are set by a project manager),
    ValidationFailed for no language, a language twice or an unknown one."""
    native, fluent = [int(x) for x in native], [int(x) for x in fluent]
    if not native and not fluent:
        raise ValidationFailed(_("Tick at least one language you speak natively or fluently."))
    both = set(native) & set(fluent)
    if both:
        raise ValidationFailed(_("Tick each language once: native or fluent."))
    known = set(Language.objects.filter(pk__in=[*native, *fluent]).values_list("pk", flat=True))
    if known != set(native) | set(fluent):
        raise ValidationFailed(_("Unknown language."))
    with transaction.atomic():
        enrolments = Enrolment.objects.select_for_update().filter(annotator=annotator, account_created=True)
        if not enrolments.exists():
            raise NotAllowed(_("Your languages are managed by your project team."))
        AnnotatorSkill.objects.filter(annotator=annotator).delete()
        AnnotatorSkill.objects.bulk_create(
            [AnnotatorSkill(annotator=annotator, language_id=pk, level=SkillLevel.NATIVE) for pk in native]
            + [AnnotatorSkill(annotator=annotator, language_id=pk, level=SkillLevel.FLUENT) for pk in fluent]
        )
        Annotator.objects.filter(pk=annotator.pk).update(reads_english=bool(reads_english))
        annotator.reads_english = bool(reads_english)
        enrolments.update(skills_declared_at=timezone.now())


# --- Tutorial ------------------------------------------------------------------------------------------


WRITE = scoring.WRITE


def answer_codes(campaign: Campaign) -> tuple[str, ...]:
    return SXS.codes if campaign.kind == CampaignKind.SIDE_BY_SIDE else RATING.codes


def answer_correct(campaign: Campaign, expected: str, answer: str) -> bool:
    if campaign.kind == CampaignKind.SIDE_BY_SIDE:
        return scoring.sxs_answer_correct(expected, answer)
    return scoring.rating_answer_correct(expected, answer)


def expected_codes(campaign: Campaign) -> tuple[str, ...]:
    if campaign.kind == CampaignKind.SIDE_BY_SIDE:
        return scoring.SXS_DIRECTIONS
    if campaign.kind == CampaignKind.CAPTION:
        return (*RATING.codes, WRITE)
    return RATING.codes


def _result_update(campaign: Campaign, annotator: Annotator) -> TutorialResult | None:
    """(Re)compute the annotator's result once every item is answered: the share right among every
    gold item against the threshold, pending while a written caption not checked yet can decide it
    (``scoring.verdict``). Returns it, or None.

    The one place that keeps a verdict shown from turning around: once passed or failed, a change
    that would give another verdict (a check decided again, a threshold moved) raises Conflict, and
    the caller's transaction stores none of it; a manager's "another attempt" starts over instead."""
    total_items = TutorialItem.objects.filter(campaign=campaign).count()
    answers = list(TutorialAnswer.objects.filter(item__campaign=campaign, annotator=annotator))
    if len(answers) < total_items:
        return None
    correct = sum(1 for a in answers if a.correct is True)
    wrong = sum(1 for a in answers if a.correct is False)
    pending = len(answers) - correct - wrong
    threshold = campaign.onboarding.pass_threshold
    verdict = scoring.verdict(correct=correct, wrong=wrong, pending=pending, threshold=threshold)
    shown = TutorialResult.objects.select_for_update().filter(campaign=campaign, annotator=annotator).first()
    if shown is not None and shown.verdict != TutorialVerdict.PENDING and shown.verdict != verdict:
        raise Conflict(
            f"{annotator}'s tutorial verdict is already “{shown.get_verdict_display()}” and a verdict "
            "shown is never turned around: allow another attempt at the tutorial instead."
        )
    result, _created = TutorialResult.objects.update_or_create(
        campaign=campaign,
        annotator=annotator,
        defaults={
            "correct": correct,
            "total": correct + wrong,
            "pending": pending,
            "threshold": threshold,
            "verdict": verdict,
        },
    )
    return result


def tutorial_attempt_start(*, annotator: Annotator, campaign: Campaign) -> TutorialAttempt:
    """The annotator's attempt at ``campaign``'s tutorial, with the seed of their order of the gold
    items, drawn the first time. Idempotent: a reload, or two tabs at once (the unique constraint
    decides, ``get_or_create`` reads the winner), keeps the same seed."""
    attempt, _created = TutorialAttempt.objects.get_or_create(
        campaign=campaign, annotator=annotator, defaults={"seed": secrets.randbelow(2**31)}
    )
    return attempt


def tutorial_answer(
    *, annotator: Annotator, campaign_id: int, item_id: int, answer: str = "", text: str = ""
) -> TutorialAnswer:
    """Record the answer to one gold item, scored at once (a writing item's caption waits for a
    person's check); after the last item, the annotator's result. An item already answered keeps its
    first answer (idempotent: a reload or double click changes nothing). Locks the annotator's row.

    Raises NotFound for a campaign the annotator may not work on or an item not of its tutorial,
    Conflict when the tutorial is already finished, ValidationFailed for an unknown answer or a
    caption the campaign's caption checks refuse."""
    from annotation.workforce.selectors import campaign_for_participant

    with transaction.atomic():
        Annotator.objects.select_for_update().filter(pk=annotator.pk).exists()
        campaign = campaign_for_participant(annotator, campaign_id)
        if TutorialResult.objects.filter(campaign=campaign, annotator=annotator).exists():
            raise Conflict(_("You have already finished this tutorial."))
        try:
            item = TutorialItem.objects.get(pk=item_id, campaign=campaign)
        except (TutorialItem.DoesNotExist, ValueError, TypeError):
            raise NotFound(_("No such tutorial item.")) from None
        tutorial_attempt_start(annotator=annotator, campaign=campaign)
        existing = TutorialAnswer.objects.filter(item=item, annotator=annotator).first()
        if existing is not None:
            return existing
        if item.expected == WRITE:
            text = (text or "").strip()
            problem = caption_problem(text, None, caption_rules(campaign))
            if problem:
                raise ValidationFailed(problem)
            recorded = TutorialAnswer.objects.create(item=item, annotator=annotator, text=text, correct=None)
        else:
            if answer not in answer_codes(campaign):
                raise ValidationFailed(_("Choose one of the answers shown."))
            recorded = TutorialAnswer.objects.create(
                item=item,
                annotator=annotator,
                answer=answer,
                correct=answer_correct(campaign, item.expected, answer),
            )
        _result_update(campaign, annotator)
        return recorded


def tutorial_writing_check(*, answer_id: int, correct: bool, checker) -> TutorialAnswer:
    """A person's verdict on a caption written in a tutorial; the annotator's result is recomputed
    (a pending verdict becomes passed or failed once the checks decide it). Deciding again replaces
    the check while the annotator's verdict stays what it was. Locks the answer and the result.
    Raises NotFound for an unknown answer, Conflict for an answer that is not a written caption or
    a check that would turn a passed or failed verdict around (nothing is stored then)."""
    with transaction.atomic():
        try:
            answer = (
                TutorialAnswer.objects.select_for_update()
                .select_related("item__campaign", "annotator")
                .get(pk=answer_id)
            )
        except (TutorialAnswer.DoesNotExist, ValueError, TypeError):
            raise NotFound("No such tutorial answer.") from None
        if answer.item.expected != WRITE:
            raise Conflict("Only written captions are checked by a person; the other answers are scored.")
        answer.correct, answer.checked_by = bool(correct), checker
        answer.save(update_fields=["correct", "checked_by", "updated_at"])
        _result_update(answer.item.campaign, answer.annotator)
        return answer


def tutorial_reset(*, campaign_id: int, annotator_id: int) -> int:
    """Give an annotator another attempt at a campaign's tutorial (a manager's decision): their
    answers, result and order are deleted (the next attempt meets the items in a new order).
    Idempotent. Returns the number of answers removed."""
    with transaction.atomic():
        TutorialResult.objects.filter(campaign_id=campaign_id, annotator_id=annotator_id).delete()
        TutorialAttempt.objects.filter(campaign_id=campaign_id, annotator_id=annotator_id).delete()
        removed, _details = TutorialAnswer.objects.filter(
            item__campaign_id=campaign_id, annotator_id=annotator_id
        ).delete()
        return removed


def onboarding_check_item(*, campaign: Campaign, expected: str) -> None:
    """Raise ValidationFailed when ``expected`` is no answer key for ``campaign``'s kind."""
    codes = expected_codes(campaign)
    if expected not in codes:
        raise ValidationFailed(f"The expected answer is one of {', '.join(codes)}.")


def onboarding_settings(*, campaign: Campaign) -> CampaignOnboarding:
    """The campaign's onboarding settings, created with the defaults when it has none. Idempotent."""
    onboarding, _created = CampaignOnboarding.objects.get_or_create(campaign=campaign)
    return onboarding


# --- Pilot review --------------------------------------------------------------------------------------


def caption_review(*, caption_id: int, decision: str, comment: str, reviewer) -> CaptionReview:
    """Accept a pilot caption, or return it with a comment its author sees. Deciding again replaces
    the decision. Raises NotFound for an unknown caption, Conflict for a caption of a campaign that
    is not a pilot, ValidationFailed for an unknown decision or a return without a comment."""
    comment = (comment or "").strip()
    if decision not in ReviewDecision.values:
        raise ValidationFailed(f"Unknown decision “{decision}”.")
    if decision == ReviewDecision.RETURNED and not comment:
        raise ValidationFailed("Say in a comment what the annotator should change.")
    if len(comment) > 2000:
        raise ValidationFailed("A comment has at most 2,000 characters.")
    with transaction.atomic():
        try:
            caption = WrittenCaption.objects.select_related("campaign").get(pk=caption_id)
        except (WrittenCaption.DoesNotExist, ValueError, TypeError):
            raise NotFound("No such caption.") from None
        if not CampaignOnboarding.objects.filter(campaign=caption.campaign, is_pilot=True).exists():
            raise Conflict(f"“{caption.campaign.name}” is not a pilot campaign.")
        review, _created = CaptionReview.objects.update_or_create(
            caption=caption, defaults={"decision": decision, "comment": comment, "reviewer": reviewer}
        )
        return review
