"""Screen 2's typing record: stored as the page saves drafts, flagged on submit, reviewed by a manager.

The page (``static/js/typing.js``) counts, per caption, keystrokes, paste events and pasted characters
and notes the first and last key time, in hidden fields that start from the stored figures (a
reload carries on counting). Each draft save and the submit send them; they only grow, so an older
save arriving late never lowers them. The server keeps its own evidence
beside it, which no page can forge: each draft save that changes the text notes the server's time
and the caption's length (:func:`draft_save_note`). On submit the pure rules of
:mod:`annotation.quality.integrity` flag the caption from both (either source flags); a flagged caption is stored and kept like any
other, waits for the manager's review, and leaves exports, reference sets and metric runs only when
the manager excludes it (``WrittenCaption.objects.counted()``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Assignment, CaptionDraft
from annotation.quality.integrity import DraftSaves, TypingFigures, TypingRules, caption_flags
from annotation.quality.models import TypingRecord, TypingReview
from core.compiled_writes import row_update
from core.errors import ValidationFailed

COUNTERS = ("keystrokes", "paste_count", "pasted_chars")
TIMES = ("first_key_ms", "last_key_ms")
COUNTER_MAX = 10_000_000
# Epoch milliseconds a browser clock can plausibly give (2001 .. 2286).
MS_MIN, MS_MAX = 10**12, 10**13
# Draft saves noted per caption: at one save a second while typing, minutes of writing and
# rewriting. Beyond, the oldest go (a few kilobytes a caption at most).
SAVES_KEPT = 400


def typing_clean(raw) -> dict | None:
    """The typing record sent by the page, checked: None when absent; raises ValidationFailed
    (nothing stored by the caller) for anything but small whole numbers and ordered key times."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - set(COUNTERS + TIMES):
        raise ValidationFailed(_("Bad typing record."))
    clean: dict = {}
    for name in COUNTERS:
        value = raw.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= COUNTER_MAX:
            raise ValidationFailed(_("Bad typing record."))
        clean[name] = value
    for name in TIMES:
        value = raw.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not MS_MIN <= value <= MS_MAX
        ):
            raise ValidationFailed(_("Bad typing record."))
        clean[name] = value
    first, last = clean["first_key_ms"], clean["last_key_ms"]
    if (first is None) != (last is None) or (first is not None and last < first):
        raise ValidationFailed(_("Bad typing record."))
    return clean


def _stored_record(assignment: Assignment) -> TypingRecord | None:
    """The assignment's typing record: from ``select_related("typing")`` where the caller loaded it,
    else one query; None when there is none yet."""
    try:
        return assignment.typing
    except TypingRecord.DoesNotExist:
        return None


def typing_merge(*, assignment: Assignment, figures: dict | None, save: bool = True) -> TypingRecord | None:
    """Merge the page's figures into the assignment's record, keeping the larger counters and the
    wider key span (figures only grow); stored with ``save`` (one query), else left for the caller
    to store (:func:`typing_flag_all`). Call inside the caller's transaction, with the batch row
    locked: every writer of a record holds its batch's lock, so read-then-write is safe."""
    if figures is None:
        return None
    record = _stored_record(assignment)
    if record is None:
        record = TypingRecord(assignment=assignment)
        assignment.typing = record
    for name in COUNTERS:
        setattr(record, name, max(getattr(record, name), figures[name]))
    if figures["first_key_ms"] is not None:
        record.first_key_ms = min(filter(None, (record.first_key_ms, figures["first_key_ms"])))
        record.last_key_ms = max(filter(None, (record.last_key_ms, figures["last_key_ms"])))
    if save:
        row_update(record)
    return record


def typing_rules() -> TypingRules:
    return TypingRules(
        pasted_share=settings.TYPING_PASTED_SHARE,
        max_chars_per_second=settings.TYPING_MAX_CHARS_PER_SECOND,
        min_chars=settings.TYPING_MIN_CHARS,
    )


def draft_save_note(*, draft: CaptionDraft, text: str, now: datetime) -> None:
    """Note on ``draft`` (not saved here: the caller saves it with its new text) that the server
    stored ``text`` at ``now``: the evidence of how the caption grew. Only the latest
    ``SAVES_KEPT`` saves are kept."""
    saves = [*(draft.saves or []), [_epoch_ms(now), len(text)]]
    if len(saves) > SAVES_KEPT:
        draft.saves_dropped += len(saves) - SAVES_KEPT
        saves = saves[-SAVES_KEPT:]
    draft.saves = saves


def _epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def draft_evidence(draft: CaptionDraft | None) -> DraftSaves | None:
    """The draft saves of one caption as plain data; None when no draft was ever stored."""
    if draft is None:
        return None
    saves = tuple((int(t), int(n)) for t, n in (draft.saves or []))
    return DraftSaves(
        saves=saves,
        from_start=draft.saves_dropped == 0,
        # A draft stored before saves were noted has text but no saves: nothing to judge.
        known=bool(saves) or draft.saves_dropped > 0,
    )


_STORED = (*COUNTERS, *TIMES, "chars", "flags", "review")


def typing_flag_all(*, captions: list[tuple[Assignment, CaptionDraft | None, str]], now: datetime) -> None:
    """On submit: flag each ``(assignment, draft, text)`` from the page's record (``unmeasured``
    without one: none stored nor merged on this submit) and from the server's draft saves (``draft``,
    None when none was stored; the submit at ``now`` counts as the last save). A flagged caption
    waits for review. Stores every record in one statement (records as merged in memory by
    :func:`typing_merge` with ``save=False``). Call inside the submit's transaction."""
    rules = typing_rules()
    records = []
    for assignment, draft, text in captions:
        record = _stored_record(assignment)
        measured = record is not None
        if record is None:
            record = TypingRecord(assignment=assignment)
        figures = TypingFigures(
            chars=len(text),
            keystrokes=record.keystrokes,
            paste_count=record.paste_count,
            pasted_chars=record.pasted_chars,
            seconds=record.typing_seconds,
            measured=measured,
        )
        flags = caption_flags(figures, draft_evidence(draft), submitted_ms=_epoch_ms(now), rules=rules)
        record.chars = len(text)
        record.flags = ",".join(flags)
        record.review = TypingReview.PENDING if flags else TypingReview.NOT_FLAGGED
        # Stored or new alike, as a new row that updates the stored one on conflict (its created_at
        # stays): one statement, where bulk_update built a CASE per field and record.
        records.append(TypingRecord(**{f: getattr(record, f) for f in ("assignment_id", *_STORED)}))
    if records:
        TypingRecord.objects.bulk_create(
            records,
            update_conflicts=True,
            unique_fields=["assignment"],
            update_fields=[*_STORED, "updated_at"],
        )


def typing_review(*, record_ids: Iterable[int], decision: str, user) -> int:
    """A manager's decision on flagged captions: ``kept`` (stays in every export and run, the
    default meanwhile) or ``excluded`` (leaves exports, reference sets, metric runs and Table 1).
    Can be changed later. Only records of submitted, flagged captions are touched. Returns how
    many. Raises ValidationFailed for another decision."""
    if decision not in (TypingReview.KEPT, TypingReview.EXCLUDED):
        raise ValidationFailed("Decide “kept” or “excluded”.")
    with transaction.atomic():
        return (
            TypingRecord.objects.filter(pk__in=list(record_ids), assignment__written_caption__isnull=False)
            .exclude(flags="")
            .update(review=decision, reviewed_by=user, reviewed_at=timezone.now())
        )
