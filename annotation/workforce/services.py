"""Writes of recruitment and onboarding: entry links, admission, language declaration, the
tutorial, and pilot reviews. Every function is atomic and raises only ``core.errors`` errors."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.assignment.engine import item_counters_add
from annotation.captions import caption_problem, caption_rules
from annotation.models import (
    NOT_COUNTED_STATES,
    UNCAPPED_CONTROL_KINDS,
    Annotator,
    AnnotatorSkill,
    AssignmentState,
    Batch,
    BatchHold,
    BatchStage,
    Campaign,
    CampaignKind,
    CampaignOnboarding,
    CampaignState,
    CaptionReview,
    CrowdPlatform,
    Enrolment,
    EntryLink,
    HoldDecision,
    Language,
    RatingValue,
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
from annotation.workforce.counting import BatchWork, batch_counts
from core.errors import Conflict, NotAllowed, NotFound, ValidationFailed
from core.scales import RATING, SXS

User = get_user_model()

# What crowd platforms send: letters, digits, '_' and '-' (Prolific ids are 24 hex digits, MTurk's
# upper-case letters and digits). Anything else is refused rather than stored.
CROWD_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
COMPLETION_CODE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# MTurk sends this as the assignment id while a worker only previews the HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


# --- Entry links ----------------------------------------------------------------------------------


def _check_link_settings(
    *,
    expires_at: datetime | None,
    max_signups: int | None,
    completion_code: str,
    completion_url: str,
    quota_batches: int | None,
    now: datetime,
    screenout_code: str = "",
    screenout_url: str = "",
) -> None:
    if expires_at is not None and expires_at <= now:
        raise ValidationFailed("The expiry must lie in the future.")
    if max_signups is not None and max_signups < 1:
        raise ValidationFailed("The sign-up cap must be at least 1 (or empty for no cap).")
    if quota_batches is not None and quota_batches < 1:
        raise ValidationFailed("The quota must be at least 1 batch (or empty for no limit).")
    for code, what in ((completion_code, "completion code"), (screenout_code, "screen-out code")):
        if code and not COMPLETION_CODE.match(code):
            raise ValidationFailed(f"A {what} is 1 to 64 letters, digits, '_' or '-'.")
    for url in (completion_url, screenout_url):
        if url:
            try:
                URLValidator(schemes=["http", "https"])(url)
            except ValidationError:
                raise ValidationFailed(f"“{url}” is not an http(s) address.") from None


def entry_link_create(
    *,
    campaign_id: int,
    label: str = "",
    expires_at: datetime | None = None,
    max_signups: int | None = None,
    completion_code: str = "",
    completion_url: str = "",
    quota_batches: int | None = None,
    screenout_code: str = "",
    screenout_url: str = "",
) -> EntryLink:
    """A new entry link to campaign ``campaign_id`` with a fresh random token. Not idempotent
    (each call makes a link). Raises NotFound for an unknown campaign, Conflict for a closed one,
    ValidationFailed for an expiry in the past, a cap or quota below 1, a malformed code or URL."""
    completion_code, completion_url = (completion_code or "").strip(), (completion_url or "").strip()
    screenout_code, screenout_url = (screenout_code or "").strip(), (screenout_url or "").strip()
    _check_link_settings(
        expires_at=expires_at,
        max_signups=max_signups,
        completion_code=completion_code,
        completion_url=completion_url,
        quota_batches=quota_batches,
        now=timezone.now(),
        screenout_code=screenout_code,
        screenout_url=screenout_url,
    )
    with transaction.atomic():
        try:
            campaign = Campaign.objects.get(pk=campaign_id)
        except Campaign.DoesNotExist:
            raise NotFound(f"No campaign with id {campaign_id}.") from None
        if campaign.state == CampaignState.CLOSED:
            raise Conflict(f"The campaign “{campaign.name}” is closed.")
        return EntryLink.objects.create(
            campaign=campaign,
            token=secrets.token_urlsafe(32),
            label=(label or "").strip(),
            expires_at=expires_at,
            max_signups=max_signups,
            completion_code=completion_code,
            completion_url=completion_url,
            quota_batches=quota_batches,
            screenout_code=screenout_code,
            screenout_url=screenout_url,
        )


def entry_link_revoke(*, link_id: int) -> EntryLink:
    """Revoke a link: it admits nobody from now on (people already admitted keep working).
    Idempotent (the first revocation time stays). Raises NotFound."""
    with transaction.atomic():
        try:
            link = EntryLink.objects.select_for_update().get(pk=link_id)
        except EntryLink.DoesNotExist:
            raise NotFound(f"No entry link with id {link_id}.") from None
        if link.revoked_at is None:
            link.revoked_at = timezone.now()
            link.save(update_fields=["revoked_at", "updated_at"])
        return link


def link_closed_reason(link: EntryLink, now: datetime | None = None) -> str | None:
    """Why ``link`` admits nobody new, in the participant's language, or None."""
    now = now or timezone.now()
    if link.revoked_at is not None:
        return _("This link has been withdrawn by the project team.")
    if link.expires_at is not None and link.expires_at <= now:
        return _("This link has expired.")
    if link.campaign.state == CampaignState.CLOSED:
        return _("This study has ended.")
    if link.campaign.state == CampaignState.DRAFT:
        return _("This study has not started yet; come back when it opens.")
    if link.max_signups is not None and link.signups >= link.max_signups:
        return _("This study is full: every place has been taken.")
    return None


# --- Admission ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrowdIdentity:
    """What a crowd platform says about the visitor (empty strings: no platform)."""

    platform: str = CrowdPlatform.NONE
    worker_id: str = ""
    study_id: str = ""
    session_id: str = ""

    @property
    def is_crowd(self) -> bool:
        return bool(self.worker_id)


def crowd_identity_parse(params) -> CrowdIdentity:
    """The crowd ids in a query string or form (``params.get``): Prolific's PROLIFIC_PID, STUDY_ID,
    SESSION_ID, or MTurk's workerId, hitId, assignmentId. Raises ValidationFailed for malformed ids,
    for both platforms at once, for an MTurk preview, and when the session id is missing."""
    prolific = {k: (params.get(k) or "").strip() for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
    mturk = {k: (params.get(k) or "").strip() for k in ("workerId", "hitId", "assignmentId")}
    if any(prolific.values()) and any(mturk.values()):
        raise ValidationFailed(_("This link carries both Prolific and MTurk ids; open it from one platform."))
    if mturk["assignmentId"] == MTURK_PREVIEW:
        raise ValidationFailed(_("Accept the HIT on MTurk first, then open this link again."))
    if any(prolific.values()):
        platform, ids = (
            CrowdPlatform.PROLIFIC,
            (prolific["PROLIFIC_PID"], prolific["STUDY_ID"], prolific["SESSION_ID"]),
        )
    elif any(mturk.values()):
        platform, ids = CrowdPlatform.MTURK, (mturk["workerId"], mturk["hitId"], mturk["assignmentId"])
    else:
        return CrowdIdentity()
    worker, study, session = ids
    if not worker or not session:
        raise ValidationFailed(
            _("The link is missing your participant or session id; open it again from the study page.")
        )
    for value in ids:
        if value and not CROWD_ID.match(value):
            raise ValidationFailed(
                _("The participant ids in this link are malformed; open it again from the study page.")
            )
    return CrowdIdentity(platform=platform, worker_id=worker, study_id=study, session_id=session)


@dataclass(frozen=True)
class Admission:
    enrolment: Enrolment
    # The account to sign in (a crowd participant's, new or resumed); None when the visitor is
    # already signed in as this annotator.
    sign_in: object | None
    created: bool


def _link_for_admission(token: str) -> EntryLink:
    if not isinstance(token, str) or not token:
        raise NotFound(_("No such link."))
    try:
        return EntryLink.objects.select_for_update().select_related("campaign").get(token=token)
    except EntryLink.DoesNotExist:
        raise NotFound(_("No such link.")) from None


def _take_a_place(link: EntryLink) -> None:
    """Count one admission; the conditional UPDATE is the cap under any concurrency."""
    taken = (
        EntryLink.objects.filter(pk=link.pk)
        .filter(Q(max_signups__isnull=True) | Q(signups__lt=F("max_signups")))
        .update(signups=F("signups") + 1)
    )
    if not taken:
        raise NotAllowed(_("This study is full: every place has been taken."))


def _new_participant_account(*, username: str | None = None, password: str | None = None):
    if username is None:
        # Crowd accounts: a random name (shown in the top bar, never the crowd id), no password.
        user = User.objects.create_user(username=f"p-{secrets.token_hex(6)}")
        user.set_unusable_password()
        user.save(update_fields=["password"])
    else:
        user = User.objects.create_user(username=username, password=password)
    Annotator.objects.create(user=user, reads_english=False)
    return user


def _check_new_account(username: str, password: str, password2: str) -> str:
    username = (username or "").strip()
    if not username:
        raise ValidationFailed(_("Choose a user name."))
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise ValidationFailed(_("A user name has letters, digits and @/./+/-/_ only.")) from None
    if len(username) > 150:
        raise ValidationFailed(_("A user name has at most 150 characters."))
    if User.objects.filter(username__iexact=username).exists():
        raise ValidationFailed(_("This user name is taken; choose another."))
    if password != password2:
        raise ValidationFailed(_("The two passwords differ."))
    try:
        validate_password(password, User(username=username))
    except ValidationError as exc:
        raise ValidationFailed(" ".join(exc.messages)) from None
    return username


def entry_admit(
    *,
    token: str,
    identity: CrowdIdentity,
    user=None,
    username: str | None = None,
    password: str = "",
    password2: str = "",
) -> Admission:
    """Admit a person to the campaign of the entry link ``token``.

    * ``identity`` with crowd ids: the crowd worker's account for this campaign. A worker seen
      before comes back to their account only with the same session id (Prolific SESSION_ID,
      MTurk assignmentId): a worker id alone is never a way into anyone's account.
    * ``user``: a signed-in annotator joins with their own account.
    * otherwise ``username`` and ``password`` make a new account.

    A new admission takes one place of the link's cap (a conditional update: two people racing
    for the last place give one admission); coming back takes none. Locks the link row.
    Raises NotFound for an unknown token, NotAllowed for a withdrawn, expired or full link, a
    closed campaign, staff, or crowd ids already used from another session, ValidationFailed for
    a bad user name or password. Nothing is stored when it raises.
    """
    with transaction.atomic():
        link = _link_for_admission(token)
        campaign = link.campaign
        signed_in = None
        if user is not None and user.is_authenticated:
            if user.is_staff or user.is_superuser:
                raise NotAllowed(_("Staff accounts cannot join a study; log out first."))
            signed_in = Annotator.objects.filter(user=user).first()
            if signed_in is None:
                raise NotAllowed(_("This account cannot take part; log out first."))

        if identity.is_crowd:
            known = (
                Enrolment.objects.select_related("annotator__user")
                .filter(campaign=campaign, platform=identity.platform, worker_id=identity.worker_id)
                .first()
            )
            if known is not None:
                same_person = signed_in is not None and signed_in.pk == known.annotator_id
                if not same_person and known.session_id != identity.session_id:
                    raise NotAllowed(
                        _("These participant ids have already been used in this study from another session.")
                    )
                return Admission(
                    enrolment=known, sign_in=None if same_person else known.annotator.user, created=False
                )
            if (
                signed_in is not None
                and Enrolment.objects.filter(campaign=campaign, annotator=signed_in).exists()
            ):
                raise NotAllowed(_("You are signed in with another account; log out first."))
        elif signed_in is not None:
            known = Enrolment.objects.filter(campaign=campaign, annotator=signed_in).first()
            if known is not None:
                return Admission(enrolment=known, sign_in=None, created=False)

        reason = link_closed_reason(link)
        if reason:
            raise NotAllowed(reason)
        if identity.is_crowd or signed_in is None:
            if not identity.is_crowd:
                username = _check_new_account(username or "", password, password2)
            _take_a_place(link)
            account = _new_participant_account(
                username=None if identity.is_crowd else username, password=password or None
            )
            annotator, created_account = account.annotator, True
        else:
            _take_a_place(link)
            annotator, created_account, account = signed_in, False, None
        try:
            with transaction.atomic():
                enrolment = Enrolment.objects.create(
                    link=link,
                    campaign=campaign,
                    annotator=annotator,
                    account_created=created_account,
                    platform=identity.platform,
                    worker_id=identity.worker_id,
                    study_id=identity.study_id,
                    session_id=identity.session_id,
                )
        except IntegrityError:
            # The same worker admitted by a concurrent request a moment ago.
            raise Conflict(
                _("You were admitted in another window a moment ago; open the link again.")
            ) from None
        return Admission(enrolment=enrolment, sign_in=account, created=True)


# --- Language declaration ----------------------------------------------------------------------------


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


# --- Work that counts ----------------------------------------------------------------------------------


def _batch_work(batch: Batch) -> BatchWork:
    """The figures :func:`annotation.workforce.counting.batch_counts` judges, read from the stored batch."""
    real = batch.assignments.filter(item__is_control=False)
    return BatchWork(
        images=real.count(),
        not_enough_info=real.filter(rating__value=RatingValue.NOT_ENOUGH_INFO).count(),
        without_caption=(
            real.filter(written_caption__isnull=True).count()
            if batch.campaign.kind == CampaignKind.CAPTION
            else 0
        ),
    )


def _capped_items(batch: Batch) -> dict[int, int]:
    """The batch's items that keep a live-or-done counter (K), each once."""
    ids = batch.assignments.exclude(item__control_kind__in=UNCAPPED_CONTROL_KINDS).values_list(
        "item_id", flat=True
    )
    return dict.fromkeys(ids, 1)


def batch_hold_if_empty(*, batch: Batch) -> BatchHold | None:
    """Hold a just-submitted batch that does not contain enough work to count; return the hold, or None.

    Called by the submit services inside their transaction, after the batch and its assignments
    are marked submitted. Only batches of participants who came through an entry link are judged
    (``annotation.workforce.counting``, threshold ``settings.CROWD_MAX_UNANSWERED_SHARE``). A held
    batch keeps every answer; its assignments become HELD, so that they enter no result, and its
    items' counters go down by one, so that the pool hands those items to someone else (the
    items' rows locked in id order). Idempotent: a batch already judged is left as it is."""
    if batch.stage != BatchStage.SUBMITTED or BatchHold.objects.filter(batch=batch).exists():
        return None
    if not Enrolment.objects.filter(campaign_id=batch.campaign_id, annotator_id=batch.annotator_id).exists():
        return None
    share = settings.CROWD_MAX_UNANSWERED_SHARE
    work = _batch_work(batch)
    if batch_counts(work, share):
        return None
    hold = BatchHold.objects.create(
        batch=batch,
        images=work.images,
        not_enough_info=work.not_enough_info,
        without_caption=work.without_caption,
        max_unanswered_share=share,
    )
    batch.assignments.filter(state__in=[AssignmentState.SUBMITTED, AssignmentState.LATE]).update(
        state=AssignmentState.HELD
    )
    item_counters_add(_capped_items(batch), sign=-1)
    return hold


def batch_hold_decide(*, hold_id: int, accept: bool, reviewer) -> BatchHold:
    """A manager's review of a held batch. Accepted, the batch counts from now on: its assignments
    are SUBMITTED again (LATE for a late batch), its items count it again (an item may then end above
    K, as with late work), and it counts towards the participant's quota and completion code.
    Rejected, it stays stored and out of every result (REJECTED). Deciding the same again changes
    nothing; a rejected batch may still be accepted, but an accepted one is never rejected (its
    participant may already hold the completion code). Locks the hold row, then the item rows in id
    order. Raises NotFound for an unknown hold, Conflict for rejecting an accepted batch."""
    with transaction.atomic():
        try:
            hold = BatchHold.objects.select_for_update(of=("self",)).select_related("batch").get(pk=hold_id)
        except (BatchHold.DoesNotExist, ValueError, TypeError):
            raise NotFound("No such held batch.") from None
        decision = HoldDecision.ACCEPTED if accept else HoldDecision.REJECTED
        if hold.decision == decision:
            return hold
        if hold.decision == HoldDecision.ACCEPTED:
            raise Conflict(
                f"Batch {hold.batch_id} was accepted: it counts, and its participant may already have the "
                "completion code."
            )
        batch = hold.batch
        if accept:
            done = AssignmentState.LATE if batch.is_late else AssignmentState.SUBMITTED
            batch.assignments.filter(state__in=NOT_COUNTED_STATES).update(state=done)
            item_counters_add(_capped_items(batch), sign=+1)
        else:
            batch.assignments.filter(state=AssignmentState.HELD).update(state=AssignmentState.REJECTED)
        hold.decision, hold.reviewer, hold.reviewed_at = decision, reviewer, timezone.now()
        hold.save(update_fields=["decision", "reviewer", "reviewed_at", "updated_at"])
        return hold
