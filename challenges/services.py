"""Writes of the evaluation server: phases opened and closed, teams and invitations, submissions.

Every service validates before it writes and runs in one transaction; the domain errors
(``core.errors``) say what was wrong and that nothing changed.
"""

from __future__ import annotations

import hashlib
import io
import secrets
from datetime import timedelta
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.base import File
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Language
from challenges.files import Limits, SubmissionInvalid, submission_parse
from challenges.models import (
    Invitation,
    Phase,
    Submission,
    SubmissionCaption,
    Team,
)
from challenges.scoring.plan import scoring_plan
from challenges.scoring.selectors import phase_image_keys
from challenges.selectors import team_for, team_usage
from core import ratelimit
from core.errors import Conflict, NotAllowed, NotFound, RateLimited, ValidationFailed


class SubmissionRefused(ValidationFailed):
    """A file refused before anything was counted: ``problems`` (first 20, with positions) and ``total``."""

    code = "invalid_submission"

    def __init__(self, message: str, *, problems: list[str], total: int):
        super().__init__(message, details={"problems": problems, "total": total})
        self.problems = problems
        self.total = total


class QuotaExceeded(Conflict):
    code = "quota_exceeded"


class TooManyRefused(RateLimited):
    """The account or its team had ``SUBMISSION_REFUSED_RATE`` files refused: no file is read for now."""

    code = "too_many_refused"


def _limits() -> Limits:
    return Limits(
        max_bytes=settings.SUBMISSION_MAX_BYTES,
        max_unzipped_bytes=settings.SUBMISSION_MAX_UNZIPPED_BYTES,
        max_members=settings.SUBMISSION_MAX_ZIP_MEMBERS,
        max_caption_chars=settings.SUBMISSION_MAX_CAPTION_CHARS,
    )


# --- Phases ---------------------------------------------------------------------------------------------


def phase_open(*, phase_id: int) -> Phase:
    """Open a phase for submissions (idempotent). A reopened phase hides its private ranking again."""
    with transaction.atomic():
        phase = Phase.objects.select_for_update().get(pk=phase_id)
        phase.is_open = True
        phase.closed_at = None
        phase.save(update_fields=["is_open", "closed_at", "updated_at"])
    return phase


def phase_close(*, phase_id: int) -> Phase:
    """Close a phase: no more submissions, and a test phase's private ranking is revealed (idempotent)."""
    with transaction.atomic():
        phase = Phase.objects.select_for_update().get(pk=phase_id)
        if phase.closed_at is None:
            phase.closed_at = timezone.now()
        phase.is_open = False
        phase.save(update_fields=["is_open", "closed_at", "updated_at"])
    return phase


# --- Teams and invitations ----------------------------------------------------------------------------


def invitation_create(*, team_id: int, days: int | None = None) -> Invitation:
    """A one-use invitation link into the team, valid ``days`` (``INVITATION_DAYS``)."""
    team = Team.objects.filter(pk=team_id).first()
    if team is None:
        raise NotFound(_("No such team."))
    days = settings.INVITATION_DAYS if days is None else days
    return Invitation.objects.create(
        team=team, token=secrets.token_urlsafe(32), expires_at=timezone.now() + timedelta(days=days)
    )


def member_invitation_create(*, team_id: int, user) -> Invitation:
    """An invitation link made by a member of the team (self-service, as hosts do): one use, valid
    ``INVITATION_DAYS``; at most ``TEAM_OPEN_INVITATIONS`` unused, unexpired links per team at once.
    NotFound for someone outside the team; Conflict past the limit."""
    with transaction.atomic():
        team = Team.objects.select_for_update().filter(pk=team_id, members=user).first()
        if team is None:
            raise NotFound(_("No such team."))
        open_links = Invitation.objects.filter(
            team=team, used_at__isnull=True, expires_at__gt=timezone.now()
        ).count()
        if open_links >= settings.TEAM_OPEN_INVITATIONS:
            raise Conflict(
                ngettext(
                    "Your team has %(n)s unused invitation link, the most it may hold at once; wait until "
                    "it is used or expires.",
                    "Your team has %(n)s unused invitation links, the most it may hold at once; wait until "
                    "one is used or expires.",
                    open_links,
                )
                % {"n": open_links}
            )
        return invitation_create(team_id=team.pk)


def invitation_usable(token: str) -> Invitation:
    """The invitation of ``token`` if it can still be used; NotFound otherwise (unknown, used or expired:
    one answer, so a guessed token learns nothing)."""
    invitation = Invitation.objects.select_related("team").filter(token=token).first()
    if invitation is None or invitation.used_at is not None or invitation.expires_at <= timezone.now():
        raise NotFound(
            _("This invitation link is not valid: it was used already, has expired or never existed.")
        )
    return invitation


def invitation_accept(*, token: str, username: str, password: str):
    """Create a participant account from an invitation and put it in the invitation's team.

    Locks the invitation row, so two people racing with one link create one account; the link is
    used up in the same transaction. Raises NotFound (link not usable) or ValidationFailed (the
    username is taken, the password too weak): then nothing is created and the link stays usable."""
    user_model = get_user_model()
    username = (username or "").strip()
    if not username:
        raise ValidationFailed(_("Choose a username."))
    with transaction.atomic():
        invitation = invitation_usable(token)
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if invitation.used_at is not None:
            raise NotFound(
                _("This invitation link is not valid: it was used already, has expired or never existed.")
            )
        if user_model.objects.filter(username__iexact=username).exists():
            raise ValidationFailed(_("That username is taken; choose another."))
        user = user_model(username=username)
        try:
            validate_password(password, user)
        except DjangoValidationError as exc:
            raise ValidationFailed(" ".join(exc.messages)) from exc
        user.set_password(password)
        user.save()
        invitation.team.members.add(user)
        invitation.used_at = timezone.now()
        invitation.used_by = user
        invitation.save(update_fields=["used_at", "used_by", "updated_at"])
    return user


def api_token_rotate(*, user) -> str:
    """A new REST API token for ``user`` (the old one stops working); returns its key."""
    from rest_framework.authtoken.models import Token

    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user).key


# --- Submissions ------------------------------------------------------------------------------------------


def _phase_for_team(phase_id: int, team: Team | None) -> Phase:
    phase = Phase.objects.select_related("benchmark", "image_set").filter(pk=phase_id).first()
    if phase is None or (team is not None and not team.benchmarks.filter(pk=phase.benchmark_id).exists()):
        raise NotFound(_("No such phase."))
    return phase


def _parse(
    phase: Phase, *, data: BinaryIO, filename: str, language: str | None
) -> tuple[dict, dict[str, int]]:
    keys = phase_image_keys(phase)
    codes = list(phase.benchmark.languages.values_list("code", flat=True))
    try:
        parsed = submission_parse(
            data,
            filename=filename,
            languages=codes,
            image_keys=keys,
            language=language or None,
            limits=_limits(),
            formats=phase.accepted_formats or None,
        )
    except SubmissionInvalid as exc:
        raise SubmissionRefused(
            _("The file was refused (problems found: %(total)s); nothing was counted against your limits.")
            % {"total": exc.total},
            problems=[problem.render(_) for problem in exc.messages],  # in the team's language
            total=exc.total,
        ) from exc
    return parsed.captions, keys


def _sha256(stream: BinaryIO) -> str:
    digest = hashlib.sha256()
    stream.seek(0)
    for piece in iter(lambda: stream.read(1024 * 1024), b""):
        digest.update(piece)
    stream.seek(0)
    return digest.hexdigest()


# --- Refused files: a limit per account and per team --------------------------------------------------
# Only refused files count (an accepted one uses the phase's quota instead). The count is checked before
# a file is read and added once it was refused, so uploads read at the same moment may pass the limit by
# their number (at most one per web process); each of them is bounded in memory and time by the reading.


def _refusal_keys(user, team: Team | None) -> list[tuple[str, str]]:
    keys = [("upload-refused-user", str(user.pk))]
    if team is not None:
        keys.append(("upload-refused-team", str(team.pk)))
    return keys


def _refusals_check(user, team: Team | None) -> None:
    rate = ratelimit.Rate.parse(settings.SUBMISSION_REFUSED_RATE)
    waits = [ratelimit.peek(scope, key, rate) for scope, key in _refusal_keys(user, team)]
    refused = [d.retry_after for d in waits if not d.allowed]
    if refused:
        wait = max(refused)
        minutes = max(1, round(wait / 60))
        raise TooManyRefused(
            ngettext(
                "Too many refused files from your account or team: try again in %(minutes)s minute. "
                "Refused files use none of your submissions; after %(count)s of them the server reads "
                "no more files from you for a while.",
                "Too many refused files from your account or team: try again in %(minutes)s minutes. "
                "Refused files use none of your submissions; after %(count)s of them the server reads "
                "no more files from you for a while.",
                minutes,
            )
            % {"minutes": minutes, "count": rate.count},
            retry_after=wait,
        )


def _refusal_count(user, team: Team | None) -> None:
    rate = ratelimit.Rate.parse(settings.SUBMISSION_REFUSED_RATE)
    for scope, key in _refusal_keys(user, team):
        ratelimit.hit(scope, key, rate)


def _quota_check(phase: Phase, team: Team) -> None:
    usage = team_usage(phase, team)
    if usage.total >= phase.max_total:
        raise QuotaExceeded(
            _("Your team has used all %(n)s submissions of this phase.") % {"n": phase.max_total}
        )
    if usage.today >= phase.max_per_day:
        raise QuotaExceeded(
            _("Your team has used its %(n)s submissions of today (UTC); try again tomorrow.")
            % {"n": phase.max_per_day}
        )
    if usage.scoring >= phase.max_concurrent:
        raise QuotaExceeded(
            _("Your team has %(n)s submission(s) still being scored; wait until they finish.")
            % {"n": phase.max_concurrent}
        )


# What a submitter describes with the file, the same on the upload page's form and the API's serializer.
SUBMISSION_FIELDS = ("language", "method_name", "description", "paper_url", "code_url")


def _open_check(phase: Phase) -> None:
    now = timezone.now()
    if (
        not phase.is_open
        or (phase.starts_at and now < phase.starts_at)
        or (phase.ends_at and now >= phase.ends_at)
    ):
        raise Conflict(_("This phase is not open for submissions."))


def submission_upload_check(*, phase: Phase, user) -> Team:
    """What an upload to ``phase`` by ``user`` must pass before its body is read: a team of the
    benchmark (NotAllowed), an open phase (Conflict), fewer refused files than ``SUBMISSION_REFUSED_RATE``
    from the account and the team (:class:`TooManyRefused`). Reads only; :func:`submission_create`
    checks the same again. Returns the team."""
    team = team_for(user, phase.benchmark)
    if team is None:
        raise NotAllowed(_("Only a member of a team of this benchmark can submit."))
    _open_check(phase)
    _refusals_check(user, team)
    return team


def submission_from_upload(*, phase, user, cleaned: dict) -> Submission:
    """:func:`submission_create` for an upload to ``phase`` by ``user`` (for their team, if any):
    ``cleaned`` holds the uploaded ``file`` (read as a stream) and the :data:`SUBMISSION_FIELDS`.
    Raises as it."""
    team = team_for(user, phase.benchmark)
    upload = cleaned["file"]
    return submission_create(
        phase_id=phase.pk,
        user=user,
        team_id=team.pk if team else None,
        data=upload,
        filename=upload.name,
        **{name: cleaned[name] for name in SUBMISSION_FIELDS},
    )


def submission_create(
    *,
    phase_id: int,
    user,
    team_id: int | None,
    data: bytes | BinaryIO,
    filename: str,
    language: str | None = None,
    method_name: str,
    description: str = "",
    paper_url: str = "",
    code_url: str = "",
    baseline: bool = False,
) -> Submission:
    """Check a result file, then store it as a submission and queue its scoring.

    ``data``: the file's bytes or a seekable binary file (an upload), read as a stream, never whole.
    The file is read and checked completely first (no lock, nothing written): an invalid file raises
    :class:`SubmissionRefused` with its problems, uses no quota and counts toward the refused files of
    the account and the team; once those reach ``SUBMISSION_REFUSED_RATE``, :class:`TooManyRefused` is
    raised before any file is read. Then, in one transaction, the team's row is locked
    (``SELECT ... FOR UPDATE``), so concurrent uploads of one team are counted one after the other
    against the per-day, total and at-once limits (:class:`QuotaExceeded`), and the file, its captions
    and scoring units are stored; the units are sent to the workers on commit.
    A baseline (``baseline=True``, hosts only, no team) is not limited."""
    method_name = (method_name or "").strip()
    if not method_name:
        raise ValidationFailed(_("Give the method a name."))
    team = None
    if not baseline:
        team = Team.objects.filter(pk=team_id, members=user).first() if team_id else None
        if team is None:
            raise NotAllowed(_("Only a member of a team of this benchmark can submit."))
    phase = _phase_for_team(phase_id, team)
    if not baseline:
        _open_check(phase)
        _refusals_check(user, team)
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    try:
        captions, keys = _parse(phase, data=stream, filename=filename, language=language)
    except SubmissionRefused:
        if not baseline:
            _refusal_count(user, team)
        raise
    sha256 = _sha256(stream)
    languages = {lang.code: lang for lang in Language.objects.filter(code__in=captions)}
    with transaction.atomic():
        if team is not None:
            Team.objects.select_for_update().get(pk=team.pk)
            _quota_check(phase, team)
        submission = Submission.objects.create(
            phase=phase,
            team=team,
            submitted_by=user if getattr(user, "is_authenticated", False) else None,
            method_name=method_name[:200],
            description=description,
            paper_url=paper_url,
            code_url=code_url,
            file_name=filename[-255:],
            file_sha256=sha256,
            languages=sorted(captions),
            is_baseline=baseline,
        )
        submission.file.save(f"{submission.pk}-{sha256[:12]}", File(stream), save=True)
        SubmissionCaption.objects.bulk_create(
            [
                SubmissionCaption(
                    submission=submission, language=languages[code], image_id=keys[key], text=text
                )
                for code, by_key in captions.items()
                for key, text in by_key.items()
            ],
            batch_size=2000,
        )
        scoring_plan(submission=submission)
    return submission


HUMAN_METHOD = "Human (held-out reference)"


def human_row_create(*, phase_id: int, user=None) -> Submission:
    """The human row of a phase (seed 002 Table 1): per language, the last reference of each image as a
    prediction, scored against the remaining references like every entry's human comparison. Languages
    with fewer than two references for some image are left out. Replaces an earlier human row of the
    phase (idempotent); raises ValidationFailed when no language qualifies."""
    from challenges.models import BenchmarkLanguage
    from challenges.scoring.selectors import phase_image_ids, phase_references

    phase = Phase.objects.select_related("benchmark").filter(pk=phase_id).first()
    if phase is None:
        raise NotFound(_("No such phase."))
    if not phase.human_comparison:
        raise ValidationFailed(_("Turn on the phase's human comparison first."))
    image_ids = phase_image_ids(phase)
    held_out: dict[int, dict[int, str]] = {}
    for link in BenchmarkLanguage.objects.filter(benchmark=phase.benchmark).select_related("language"):
        references = phase_references(phase, link.language_id, image_ids)
        if image_ids and all(len(references.get(i, [])) >= 2 for i in image_ids):
            held_out[link.language_id] = {i: references[i][-1] for i in image_ids}
    if not held_out:
        raise ValidationFailed(
            _("No language of the benchmark has two references for every image of the phase.")
        )
    codes = dict(Language.objects.filter(pk__in=held_out).values_list("pk", "code"))
    with transaction.atomic():
        Phase.objects.select_for_update().get(pk=phase.pk)
        Submission.objects.filter(phase=phase, is_human=True).delete()
        submission = Submission.objects.create(
            phase=phase,
            team=None,
            is_human=True,
            method_name=HUMAN_METHOD,
            submitted_by=user if getattr(user, "is_authenticated", False) else None,
            languages=sorted(codes.values()),
        )
        SubmissionCaption.objects.bulk_create(
            [
                SubmissionCaption(
                    submission=submission, language_id=language_id, image_id=image_id, text=text
                )
                for language_id, by_image in held_out.items()
                for image_id, text in by_image.items()
            ],
            batch_size=2000,
        )
        scoring_plan(submission=submission)
    return submission


def submission_withdraw(*, submission_id: int, user, withdrawn: bool) -> Submission:
    """Withdraw one of the team's entries (or put it back): a withdrawn entry is on no leaderboard and
    in no new human evaluation, and leaves the final-ranking selection; it still counts toward the
    phase's limits, so withdrawing frees no submission. Idempotent."""
    with transaction.atomic():
        submission = (
            Submission.objects.select_for_update().filter(pk=submission_id, team__members=user).first()
        )
        if submission is None:
            raise NotFound(_("No such submission."))
        if withdrawn and submission.withdrawn_at is None:
            submission.withdrawn_at = timezone.now()
            submission.is_selected = False
        elif not withdrawn:
            submission.withdrawn_at = None
        submission.save(update_fields=["withdrawn_at", "is_selected", "updated_at"])
    return submission


def submission_select(*, submission_id: int, user, selected: bool) -> Submission:
    """Select (or unselect) one of the team's scored submissions for the final ranking, within the phase's
    selection limit. Locks the team's row, so two selections at once cannot pass the limit together."""
    with transaction.atomic():
        submission = (
            Submission.objects.select_related("phase", "team")
            .filter(pk=submission_id, team__members=user)
            .first()
        )
        if submission is None:
            raise NotFound(_("No such submission."))
        if selected and submission.withdrawn_at is not None:
            raise Conflict(_("This submission is withdrawn; put it back on the leaderboard first."))
        Team.objects.select_for_update().get(pk=submission.team_id)
        if selected and not submission.is_selected:
            taken = Submission.objects.filter(
                phase=submission.phase, team=submission.team, is_selected=True
            ).count()
            if taken >= submission.phase.selection_limit:
                raise Conflict(
                    _(
                        "Your team has selected %(n)s submission(s), the limit of this phase; unselect one first."
                    )
                    % {"n": submission.phase.selection_limit}
                )
        submission.is_selected = selected
        submission.save(update_fields=["is_selected", "updated_at"])
    return submission
