"""Entry links and admission: creating and revoking links, reading what a crowd platform sends, and
letting a person in (one place per admission, even when two race for the last one)."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import (
    Annotator,
    Campaign,
    CampaignState,
    CrowdPlatform,
    Enrolment,
    EntryLink,
)
from core.errors import Conflict, NotAllowed, NotFound, ValidationFailed

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
