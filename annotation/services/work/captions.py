"""A caption batch: screen 1's ratings, the switch to screen 2, drafts as they are typed, and the submit.

A caption batch goes RATING -> WRITING -> SUBMITTED; once screen 2 has opened, screen 1 cannot change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from annotation.captions import CAPTION_MAX_CHARS, caption_problem, caption_rules, caption_too_long
from annotation.interface import interface_list
from annotation.models import (
    Annotator,
    Assignment,
    Batch,
    BatchStage,
    CampaignKind,
    CaptionDraft,
    Rating,
    RatingValue,
    WrittenCaption,
)
from annotation.quality.reports import reported_image_ids
from annotation.quality.typing import draft_save_note, typing_clean, typing_flag_all, typing_merge
from annotation.selectors import batch_and_assignment, batch_of
from annotation.services.work.checks import (
    SUBMIT_KEY_PATTERN,
    SUBMITTED_MESSAGE,
    batch_finish,
    check_kind,
    check_not_submitted,
    check_shown,
    is_late,
    lease_touch,
    seconds_clean,
)
from annotation.workforce.services.holds import batch_hold_if_empty
from core.compiled_writes import row_update
from core.errors import AlreadySubmitted, Conflict, EditConflict, NotFound, ValidationFailed


def _on_screen2(batch: Batch) -> bool:
    return batch.writing_opened_at is not None


def rating_save(
    *, annotator: Annotator, batch_id: int, assignment_id: int, value: str, seconds: float | None = None
) -> Rating:
    """Store (or change) the rating of one image: on screen 1 of a caption batch (the prompt
    caption), or in a verification batch (the human caption). Idempotent.

    Locks the batch row. Raises NotFound for a batch or image not of this annotator,
    ValidationFailed for an unknown rating, Conflict once screen 2 has opened, after submit,
    or for a side-by-side batch. The returned rating carries ``lease_expires_at``, the batch's
    lease after the save.
    """
    if value not in RatingValue.values:
        raise ValidationFailed(gettext("Unknown rating “%(value)s”.") % {"value": value})
    seconds = seconds_clean(seconds)
    with transaction.atomic():
        batch, assignment = batch_and_assignment(annotator, batch_id, assignment_id)
        check_kind(batch, CampaignKind.CAPTION, CampaignKind.RATING)
        check_not_submitted(batch)
        if _on_screen2(batch):
            raise Conflict(gettext("Screen 2 is open: the ratings of this batch can no longer change."))
        if assignment is None:
            raise NotFound(gettext("No such image in this batch."))
        # One statement (INSERT ... ON CONFLICT DO UPDATE) where update_or_create took four or five
        # with its savepoints; the batch row lock orders the saves of one batch anyway.
        rating = Rating(assignment=assignment, value=value, seconds=seconds)
        Rating.objects.bulk_create(
            [rating],
            update_conflicts=True,
            unique_fields=["assignment"],
            update_fields=["value", "seconds", "updated_at"],
        )
        rating.lease_expires_at = lease_touch(batch)
        return rating


class _Rated(NamedTuple):
    """An image of screen 1 as the switch to screen 2 checks it."""

    pk: int
    position: int
    value: str | None


def writing_open(
    *, annotator: Annotator, batch_id: int, rating_seconds: float | None = None, shown: dict | None = None
) -> Batch:
    """Close screen 1 and open screen 2. Needs every image rated. Idempotent.

    ``shown``: the rating the page shows per assignment id; one that differs from the stored
    rating (changed in another tab or window) raises EditConflict and nothing changes.
    Locks the batch row. Raises ValidationFailed naming the positions still unrated,
    Conflict for a batch that is not a caption batch.
    """
    rating_seconds = seconds_clean(rating_seconds)
    with transaction.atomic():
        batch = batch_of(annotator, batch_id, lock=True)
        check_kind(batch, CampaignKind.CAPTION)
        check_not_submitted(batch)
        if _on_screen2(batch):
            return batch
        # One read for both checks (it was two: the unrated positions, then every rating built as an object).
        rated = [
            _Rated(pk, position, value)
            for pk, position, value in batch.assignments.order_by("position").values_list(
                "pk", "position", "rating__value"
            )
        ]
        unrated = [a.position for a in rated if a.value is None]
        if unrated:
            positions = interface_list(str(p + 1) for p in unrated)
            raise ValidationFailed(
                gettext("Rate every caption before you go on (still unrated: %(positions)s).")
                % {"positions": positions},
                details={"unrated_positions": [p + 1 for p in unrated]},
            )
        check_shown(rated, shown, lambda a: a.value)
        now = timezone.now()
        batch.writing_opened_at = now
        batch.rating_seconds = rating_seconds
        fields = ["writing_opened_at", "rating_seconds", "updated_at"]
        if batch.stage == BatchStage.RATING:
            batch.stage = BatchStage.WRITING
            fields.append("stage")
        batch.save(update_fields=fields)
        lease_touch(batch)
        return batch


@dataclass(frozen=True)
class DraftResult:
    revision: int
    saved_at: str
    lease_expires_at: object = None  # the batch's lease after the save (a datetime)


def _check_base_revision(base_revision) -> int:
    try:
        value = int(base_revision)
    except (TypeError, ValueError):
        raise ValidationFailed(gettext("Bad revision number.")) from None
    if value < 0:
        raise ValidationFailed(gettext("Bad revision number."))
    return value


def _edit_conflict(assignment: Assignment, draft: CaptionDraft | None, mine: str) -> dict:
    return {
        "position": assignment.position + 1,
        "message": gettext(
            "Image %(position)s was changed in another tab or window. Choose which text to keep."
        )
        % {"position": assignment.position + 1},
        "mine": mine,
        "theirs": draft.text if draft else "",
        "revision": draft.revision if draft else 0,
    }


def _raise_edit_conflicts(conflicts: list[dict]) -> None:
    positions = interface_list(str(c["position"]) for c in conflicts)
    raise EditConflict(
        gettext("Changed in another tab or window: image %(positions)s. Choose which text to keep.")
        % {"positions": positions},
        details={str(c.pop("assignment")): c for c in conflicts},
    )


def draft_save(
    *,
    annotator: Annotator,
    batch_id: int,
    assignment_id: int,
    text: str,
    base_revision: int,
    seconds: float | None = None,
    typing: dict | None = None,
) -> DraftResult:
    """Save what the annotator has typed for one image: a compare-and-set on the draft's revision.

    ``base_revision`` is the stored revision the page's text grew from (the one it loaded or
    last saved; 0 before the first save). The revision is counted here, not by the page, so
    two tabs can never both hold "revision 5" for different texts:

    - the same text as stored: nothing changes (a retry after a lost answer), the stored
      revision is answered;
    - ``base_revision`` equal to the stored revision: the text is stored as revision + 1;
    - otherwise another tab or window saved in between (or a slow save was overtaken):
      EditConflict (409) with both texts and the stored revision, and nothing changes.

    ``typing``: the page's typing figures for this caption (annotation.quality.typing), merged
    whatever happens to the text. A stored change also notes the server's time and the text's
    length on the draft: the evidence the typing check trusts over the page's figures. A control item (screen 1 only) has no caption: NotFound.

    Works after the lease ran out too (late work is kept). Locks the batch row. Raises
    AlreadySubmitted after submit, Conflict before screen 2, ValidationFailed for over-long text
    or a bad typing record.
    """
    typing = typing_clean(typing)
    if not isinstance(text, str):
        raise ValidationFailed(gettext("The caption must be text."))
    if len(text) > CAPTION_MAX_CHARS:
        raise ValidationFailed(caption_too_long())
    base_revision = _check_base_revision(base_revision)
    seconds = seconds_clean(seconds)
    with transaction.atomic():
        batch, assignment = batch_and_assignment(annotator, batch_id, assignment_id, writing=True)
        check_kind(batch, CampaignKind.CAPTION)
        check_not_submitted(batch)
        if not _on_screen2(batch):
            raise Conflict(gettext("Finish rating on screen 1 first."))
        if assignment is None:
            raise NotFound(gettext("No such image in this batch."))
        if assignment.item.is_control:
            raise NotFound("No such image in this batch.")
        typing_merge(assignment=assignment, figures=typing)
        draft = getattr(assignment, "draft", None)
        stored_text, stored_revision = (draft.text, draft.revision) if draft else ("", 0)
        if text != stored_text:
            if base_revision != stored_revision:
                _raise_edit_conflicts(
                    [{"assignment": assignment.pk, **_edit_conflict(assignment, draft, text)}]
                )
            if draft is None:
                draft = CaptionDraft(assignment=assignment)
            draft.text, draft.revision = text, stored_revision + 1
            draft_save_note(draft=draft, text=text, now=timezone.now())
        if draft is not None:
            if seconds is not None:
                draft.seconds = seconds
            row_update(draft)
        lease = lease_touch(batch)
        if draft is None:  # an empty text never saved before: nothing to store
            return DraftResult(revision=0, saved_at=timezone.now().isoformat(), lease_expires_at=lease)
        return DraftResult(
            revision=draft.revision, saved_at=draft.updated_at.isoformat(), lease_expires_at=lease
        )


@dataclass(frozen=True)
class ShownCaption:
    """What the submitting page shows for one image: its text, the draft revision that text
    grew from, and the seconds the page measured on it."""

    text: str
    base_revision: int
    seconds: float | None = None
    typing: dict | None = None


def _shown_by_assignment(shown, assignments: list[Assignment]) -> dict[int, ShownCaption] | None:
    if shown is None:
        return None
    by_id = {}
    for entry in shown:
        if not isinstance(entry.get("text"), str):
            raise ValidationFailed(gettext("The caption must be text."))
        try:
            pk = int(entry["assignment"])
        except (KeyError, TypeError, ValueError):
            raise ValidationFailed(gettext("Each caption must name its image.")) from None
        by_id[pk] = ShownCaption(
            text=entry["text"],
            base_revision=_check_base_revision(entry.get("base_revision")),
            seconds=seconds_clean(entry.get("seconds")),
            typing=typing_clean(entry.get("typing")),
        )
    if set(by_id) != {a.pk for a in assignments} or len(by_id) != len(shown):
        raise ValidationFailed(
            gettext("The submit must carry the caption of every image of this batch, once.")
        )
    return by_id


def batch_submit(
    *,
    annotator: Annotator,
    batch_id: int,
    submit_key: str,
    writing_seconds: float | None = None,
    captions: list[dict] | None = None,
) -> Batch:
    """Store the batch's captions, in one transaction. Idempotent per submit key.

    ``captions``: what the submitting page shows, one ``{assignment, text, base_revision,
    seconds}`` per image of the batch. Each text is stored exactly as shown (outer spaces
    stripped) when its ``base_revision`` is the stored draft's revision, or when the stored
    draft holds the same text. Otherwise another tab or window saved that image since the page
    last saw it: EditConflict (409) names every such image with both texts and the stored
    revision, and nothing is stored. Without ``captions`` the stored drafts are submitted.

    A repeated submit with the same key (double click, retry after a network error, a
    concurrent duplicate) returns the stored batch and stores nothing more; a submit of a
    submitted batch with another key (a stale tab) raises AlreadySubmitted. A batch whose
    lease ran out is still accepted: kept and flagged late (its expired items count again,
    so the image may end above K, as in the paper). On any validation error nothing is
    stored, the drafts stay as they are, and ValidationFailed lists the problem per image.
    Rated control items of the batch get no caption (they are on screen 1 only); an image the
    annotator reported may stay empty and then gets none either. Each stored caption's typing
    record is flagged here (annotation.quality.typing). A crowd participant's batch that leaves too
    many images unanswered is stored but held for review (``batch_hold_if_empty``). Locks the batch
    row, then (late work or a held batch) the item rows in id order.
    """
    if not isinstance(submit_key, str) or not SUBMIT_KEY_PATTERN.match(submit_key):
        raise ValidationFailed(gettext("Missing or malformed submit key."))
    writing_seconds = seconds_clean(writing_seconds)
    with transaction.atomic():
        batch = batch_of(annotator, batch_id, lock=True)
        check_kind(batch, CampaignKind.CAPTION)
        if batch.stage == BatchStage.SUBMITTED:
            if batch.submit_key == submit_key:
                return batch
            raise AlreadySubmitted(str(SUBMITTED_MESSAGE))
        if not _on_screen2(batch):
            raise Conflict(gettext("Finish rating on screen 1 first."))
        # The image row is not read: a caption needs only its id (item.image_id).
        every = list(
            batch.assignments.select_related("item__prompt_caption", "draft", "typing").order_by("position")
        )
        # Rated control items are on screen 1 only: no caption is written for them.
        assignments = [a for a in every if not a.item.is_control]
        shown = _shown_by_assignment(captions, assignments)
        texts, seconds, conflicts = {}, {}, []
        rules = caption_rules(batch.campaign)
        for a in assignments:
            draft = getattr(a, "draft", None)
            texts[a.pk] = draft.text if draft else ""
            seconds[a.pk] = draft.seconds if draft else None
            if shown is None:
                continue
            page = shown[a.pk]
            stored_revision = draft.revision if draft else 0
            if page.text != texts[a.pk] and page.base_revision != stored_revision:
                conflicts.append({"assignment": a.pk, **_edit_conflict(a, draft, page.text)})
            texts[a.pk] = page.text
            if page.seconds is not None:
                seconds[a.pk] = page.seconds
            typing_merge(assignment=a, figures=page.typing, save=False)
        if conflicts:
            _raise_edit_conflicts(conflicts)
        # An image the annotator reported (broken, offensive, private) may be left without a caption.
        reported = reported_image_ids(annotator, batch.campaign_id, [a.item.image_id for a in assignments])
        skipped = {a.pk for a in assignments if a.item.image_id in reported and not texts[a.pk].strip()}
        problems = {}
        for index, a in enumerate(assignments):
            if a.pk in skipped:
                continue
            prompt = a.item.prompt_caption.text if a.item.prompt_caption_id else None
            problem = caption_problem(texts[a.pk], prompt, rules)
            if problem:
                # Numbered as screen 2 numbers its images (controls are not on it).
                problems[str(a.pk)] = {"position": index + 1, "message": problem}
        if problems:
            raise ValidationFailed(
                ngettext(
                    "%(n)s caption needs attention before you can submit.",
                    "%(n)s captions need attention before you can submit.",
                    len(problems),
                )
                % {"n": len(problems)},
                details=problems,
            )

        now = timezone.now()
        late = is_late(batch, now)
        campaign = batch.campaign
        WrittenCaption.objects.bulk_create(
            WrittenCaption(
                assignment=a,
                image_id=a.item.image_id,
                language_id=campaign.language_id,
                annotator=annotator,
                campaign=campaign,
                text=texts[a.pk].strip(),
                seconds=seconds[a.pk],
                is_late=late,
            )
            for a in assignments
            if a.pk not in skipped
        )
        for a in assignments:
            if a.pk in skipped and shown is not None and shown[a.pk].typing is not None:
                a.typing.save()  # a reported image left empty: no caption to flag, its figures kept
        typing_flag_all(
            captions=[
                (a, getattr(a, "draft", None), texts[a.pk].strip())
                for a in assignments
                if a.pk not in skipped
            ],
            now=now,
        )
        batch.writing_seconds = writing_seconds
        batch_finish(batch, every, submit_key=submit_key, late=late, now=now, fields=("writing_seconds",))
        # A crowd batch without enough work is kept but held for review (annotation.workforce.counting).
        batch_hold_if_empty(batch=batch)
        return batch
