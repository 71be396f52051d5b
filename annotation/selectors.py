"""Reads of the annotation app: what an annotator may see, and progress figures."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils.translation import gettext

from annotation.assignment.engine import batch_start_problem
from annotation.models import (
    CAPPED_KINDS,
    OPEN_BATCH_STAGES,
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    BatchHold,
    BatchStage,
    Campaign,
    CampaignKind,
    CampaignState,
    CaptionDraft,
    HoldDecision,
    Image,
    ImageSelection,
    Item,
    SelectedImage,
    TypingRecord,
)
from annotation.workforce.counting import most_allowed
from annotation.workforce.selectors import campaigns_visible
from core.errors import NotFound


def annotator_for_user(user) -> Annotator | None:
    if not user.is_authenticated:
        return None
    try:
        return user.annotator
    except Annotator.DoesNotExist:
        return None


@dataclass
class CampaignCard:
    campaign: Campaign
    open_batch: Batch | None
    expired_batch: Batch | None
    submitted_batches: int
    my_images: int
    items_total: int
    items_full: int  # images with K submitted results that count
    held_batches: int = 0  # submitted, but held for review: they do not count (yet)
    rejected_batches: int = 0  # submitted, and not accepted on review: they do not count
    start_problem: str | None = None  # why no new batch can start now; None: it can

    @property
    def percent_full(self) -> int:
        return round(100 * self.items_full / self.items_total) if self.items_total else 0


def dashboard_cards(annotator: Annotator) -> list[CampaignCard]:
    """Open campaigns in the annotator's languages, each with the annotator's own progress and, where
    no new batch can start, the reason (:func:`annotation.assignment.engine.batch_start_problem`)."""
    language_ids = list(annotator.skills.values_list("language_id", flat=True))
    campaigns = list(
        campaigns_visible(
            annotator, Campaign.objects.filter(state=CampaignState.OPEN, language_id__in=language_ids)
        )
        .select_related("language")
        .annotate(
            items_total=Count("items", filter=Q(items__control_kind__in=CAPPED_KINDS), distinct=True),
        )
        .order_by("language__code", "name")
    )
    # Complete means K results submitted (and counting), never merely handed out: an image in
    # someone's open batch, or in a batch held for review, is not done.
    items_full = dict(
        Item.objects.filter(campaign__in=campaigns, control_kind__in=CAPPED_KINDS)
        .annotate(done=Coalesce(_done_per_item(), 0))
        .filter(done__gte=F("campaign__replication"))
        .order_by()
        .values("campaign_id")
        .annotate(n=Count("pk"))
        .values_list("campaign_id", "n")
    )
    batches = list(
        Batch.objects.filter(annotator=annotator, campaign__in=campaigns)
        .annotate(
            n_items=Count("assignments"),
            held=Exists(BatchHold.objects.filter(batch=OuterRef("pk"), decision=HoldDecision.HELD)),
            rejected=Exists(BatchHold.objects.filter(batch=OuterRef("pk"), decision=HoldDecision.REJECTED)),
        )
        .only("pk", "campaign_id", "stage", "lease_expires_at", "writing_opened_at")
    )
    cards = []
    for c in campaigns:
        own = [b for b in batches if b.campaign_id == c.pk]
        submitted = [b for b in own if b.stage == BatchStage.SUBMITTED]
        open_batch = next((b for b in own if b.stage in OPEN_BATCH_STAGES), None)
        cards.append(
            CampaignCard(
                campaign=c,
                open_batch=open_batch,
                expired_batch=next((b for b in own if b.stage == BatchStage.EXPIRED), None),
                submitted_batches=len(submitted),
                my_images=sum(b.n_items for b in submitted),
                items_total=c.items_total,
                items_full=items_full.get(c.pk, 0),
                held_batches=sum(1 for b in submitted if b.held),
                rejected_batches=sum(1 for b in submitted if b.rejected),
                # No start button where nothing can start: the sentence that says why instead.
                start_problem=None
                if open_batch is not None
                else batch_start_problem(annotator=annotator, campaign=c),
            )
        )
    return cards


def batch_of(annotator: Annotator, batch_id: int, *, lock: bool = False) -> Batch:
    """``annotator``'s batch ``batch_id`` with its campaign and language; with ``lock``, its row FOR
    UPDATE (the first lock every write inside a batch takes). Another annotator's batch raises
    NotFound, indistinguishable from a missing one."""
    qs = Batch.objects.select_related("campaign", "campaign__language")
    if lock:
        qs = qs.select_for_update(of=("self",))
    try:
        return qs.get(pk=batch_id, annotator=annotator)
    except Batch.DoesNotExist:
        raise NotFound(gettext("No such batch.")) from None


def assignment_of(batch: Batch, assignment_id: int, *, writing: bool = False) -> Assignment:
    """The assignment ``assignment_id`` of ``batch`` with its item (and with ``writing``, its draft and
    typing record, in the same query); NotFound for one of another batch (or an id that is not a number)."""
    related = ("item", "draft", "typing") if writing else ("item",)
    try:
        return batch.assignments.select_related(*related).get(pk=assignment_id)
    except (Assignment.DoesNotExist, ValueError, TypeError):
        raise NotFound(gettext("No such image in this batch.")) from None


# What a save inside a batch reads of the rows it joins (issue 24): the columns it uses, not the
# campaign's 27 and the language's; the draft and the typing record whole, since the save stores them.
# Fewer columns made the query cheaper to build and its row cheaper to turn into objects: this one
# query was about 40% of a draft save's CPU.
_SAVE_COLUMNS = (
    "position",
    "state",
    "batch__stage",
    "batch__annotator_id",
    "batch__lease_expires_at",
    "batch__writing_opened_at",
    "batch__campaign__kind",
    "batch__campaign__lease_minutes",
    "item__image_id",
    "item__is_control",
)


def _whole(relation: str, model) -> tuple[str, ...]:
    return tuple(f"{relation}__{field.attname}" for field in model._meta.concrete_fields)


def batch_and_assignment(
    annotator: Annotator, batch_id: int, assignment_id, *, writing: bool = False
) -> tuple[Batch, Assignment | None]:
    """``annotator``'s batch ``batch_id``, its row locked FOR UPDATE, and its assignment
    ``assignment_id`` with the item (and with ``writing``, its draft and typing record), in one
    query: the two reads every save inside a batch makes. The assignment is None when it is not
    of this batch (the caller checks the batch first and then says so); another annotator's batch
    raises NotFound, indistinguishable from a missing one, as :func:`batch_of`.

    Only the columns a save uses are read (``_SAVE_COLUMNS``: stage, lease, screen 2, the
    campaign's kind and lease length, the item's image and control flag; the draft and the typing
    record whole): the batch and campaign it answers are for the save's checks, not for pages."""
    related = ["batch__campaign", "item"]
    columns = _SAVE_COLUMNS
    if writing:
        related += ["draft", "typing"]
        columns += _whole("draft", CaptionDraft) + _whole("typing", TypingRecord)
    try:
        assignment = (
            Assignment.objects.select_related(*related)
            .only(*columns)
            .select_for_update(of=("batch",))
            .get(pk=int(assignment_id), batch_id=batch_id, batch__annotator=annotator)
        )
    except (Assignment.DoesNotExist, ValueError, TypeError):
        return batch_of(annotator, batch_id, lock=True), None
    return assignment.batch, assignment


def held_context(hold: BatchHold) -> dict:
    """What the held-batch page tells its participant: the figures, the rule, and whether (else why
    not) they can do another batch."""
    batch = hold.batch
    return {
        "batch": batch,
        "hold": hold,
        "rejected": hold.decision == HoldDecision.REJECTED,
        "captions": batch.campaign.kind == CampaignKind.CAPTION,
        "percent": round(100 * hold.max_unanswered_share),
        "most": most_allowed(hold.images, hold.max_unanswered_share),
        "start_problem": batch_start_problem(annotator=batch.annotator, campaign=batch.campaign),
    }


def batch_lease_expiry(annotator: Annotator, batch_id: int):
    """When the lease of this annotator's batch runs out (None for a batch that is not theirs).

    Read after a save, which may have renewed it, so the page's countdown follows the server.
    """
    return (
        Batch.objects.filter(pk=batch_id, annotator=annotator)
        .values_list("lease_expires_at", flat=True)
        .first()
    )


def batch_state(annotator: Annotator, batch_id: int) -> dict:
    """What an open page re-checks when it comes back (from the back-forward cache, or when its
    tab is shown again): the batch's stage and, on screen 2, each draft's text and revision, so
    a page learns that another tab submitted or saved. Never carries an English caption, a
    system or a side. Raises NotFound for a batch not of this annotator."""
    batch = batch_of(annotator, batch_id)
    drafts = {}
    if batch.writing_opened_at is not None and batch.stage != BatchStage.SUBMITTED:
        for a in batch.assignments.filter(item__is_control=False).select_related("draft"):
            draft = getattr(a, "draft", None)
            drafts[str(a.pk)] = {
                "text": draft.text if draft else "",
                "revision": draft.revision if draft else 0,
            }
    return {
        "batch": batch.pk,
        "stage": batch.stage,
        "submitted": batch.stage == BatchStage.SUBMITTED,
        "writing_opened": batch.writing_opened_at is not None,
        "drafts": drafts,
    }


def _reported_images(batch: Batch) -> set[int]:
    """Images of ``batch`` its annotator reported (the page marks them; screen 2 lets them stay empty)."""
    from annotation.quality.models import ImageReport

    return set(
        ImageReport.objects.filter(
            annotator_id=batch.annotator_id,
            campaign_id=batch.campaign_id,
            image__items__assignments__batch=batch,
        ).values_list("image_id", flat=True)
    )


def screen1_rows(batch: Batch) -> list[dict]:
    """Screen 1: each image with the prompt system's English caption and the rating so far."""
    reported = _reported_images(batch)
    rows = []
    for a in batch.assignments.select_related("item__image", "item__prompt_caption", "rating").order_by(
        "position"
    ):
        rating = getattr(a, "rating", None)
        rows.append(
            {
                "assignment_id": a.pk,
                "position": a.position + 1,
                "image_id": a.item.image_id,
                "image": a.item.image,
                "caption": a.item.prompt_caption.text if a.item.prompt_caption_id else "",
                "value": rating.value if rating else "",
                "reported": a.item.image_id in reported,
            }
        )
    return rows


def screen2_rows(batch: Batch) -> list[dict]:
    """Screen 2: each image with the draft so far and its typing figures so far (the page counts on
    from them). Never carries the English caption. Rated control items are on screen 1 only."""
    rows = []
    reported = _reported_images(batch)
    assignments = (
        batch.assignments.filter(item__is_control=False)
        .select_related("item__image", "draft", "typing")
        .order_by("position")
    )
    for index, a in enumerate(assignments):
        draft = getattr(a, "draft", None)
        typing = getattr(a, "typing", None)
        rows.append(
            {
                "assignment_id": a.pk,
                # Numbered on this screen (a control of screen 1 leaves no gap).
                "position": index + 1,
                "image_id": a.item.image_id,
                "image": a.item.image,
                "draft": draft.text if draft else "",
                "revision": draft.revision if draft else 0,
                "typing": typing,
                "reported": a.item.image_id in reported,
            }
        )
    return rows


def sxs_rows(batch: Batch) -> list[dict]:
    """Side-by-side screen: each image with its two captions in the order drawn for this
    annotator, and the choice so far. Carries neither system names nor which side is m2:
    only the texts, already placed left and right."""
    rows = []
    for a in batch.assignments.select_related(
        "item__caption_m1", "item__caption_m2", "sxs_judgment"
    ).order_by("position"):
        m1 = a.item.caption_m1.text if a.item.caption_m1_id else ""
        m2 = a.item.caption_m2.text if a.item.caption_m2_id else ""
        left, right = (m2, m1) if a.m2_side == "left" else (m1, m2)
        judgment = getattr(a, "sxs_judgment", None)
        rows.append(
            {
                "assignment_id": a.pk,
                "position": a.position + 1,
                "image_id": a.item.image_id,
                "left": left,
                "right": right,
                "value": judgment.choice if judgment else "",
            }
        )
    return rows


def verification_rows(batch: Batch) -> list[dict]:
    """Verification screen: each image with the human caption to rate and the rating so far.
    Carries no author (annotator) of the caption."""
    rows = []
    for a in batch.assignments.select_related(
        "item__written_caption", "item__prompt_caption", "rating"
    ).order_by("position"):
        rating = getattr(a, "rating", None)
        item = a.item
        # A reference control shows a reference caption (a system caption) where others show a human one.
        shown = item.written_caption if item.written_caption_id else item.prompt_caption
        rows.append(
            {
                "assignment_id": a.pk,
                "position": a.position + 1,
                "image_id": a.item.image_id,
                "caption": shown.text if shown is not None else "",
                "value": rating.value if rating else "",
            }
        )
    return rows


def image_visible_to(user, image_id: int) -> Image:
    """The image, if ``user`` may see it: staff, or an annotator who was assigned it."""
    try:
        image = Image.objects.get(pk=image_id)
    except Image.DoesNotExist:
        raise NotFound(gettext("No such image.")) from None
    if user.is_staff:
        return image
    annotator = annotator_for_user(user)
    if annotator and Assignment.objects.filter(annotator=annotator, item__image_id=image_id).exists():
        return image
    raise NotFound(gettext("No such image."))


def _done_per_item() -> Subquery:
    """Submitted results (late ones included) of the outer query's item, as a subquery."""
    return Subquery(
        Assignment.objects.filter(
            item=OuterRef("pk"), state__in=[AssignmentState.SUBMITTED, AssignmentState.LATE]
        )
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n"),
        output_field=IntegerField(),
    )


def campaign_progress(campaign: Campaign) -> dict:
    """Figures for the admin's campaign page: the fill histogram, batch stages, live work.

    ``histogram`` is [(captions, images)] for 0..max(K, highest): how many images have how
    many submitted results (late work included, so a bucket above K can appear).
    """
    done = _done_per_item()
    per_value = dict(
        # Rated controls have no K: they are not part of the fill (see UNCAPPED_CONTROL_KINDS).
        Item.objects.filter(campaign=campaign, control_kind__in=CAPPED_KINDS)
        .annotate(done=Coalesce(done, 0))
        .order_by()
        .values("done")
        .annotate(n=Count("pk"))
        .values_list("done", "n")
    )
    top = max([campaign.replication, *per_value])
    stages = dict(
        Batch.objects.filter(campaign=campaign).order_by().values_list("stage").annotate(n=Count("pk"))
    )
    return {
        "histogram": [(k, per_value.get(k, 0)) for k in range(top + 1)],
        "items": sum(per_value.values()),
        "stages": {s.label: stages.get(s.value, 0) for s in BatchStage},
        "late": Batch.objects.filter(campaign=campaign, is_late=True).count(),
        "live_assignments": Assignment.objects.filter(
            batch__campaign=campaign, state=AssignmentState.LIVE
        ).count(),
    }


def has_open_batch(annotator: Annotator) -> Exists:
    return Exists(
        Batch.objects.filter(annotator=annotator, campaign=OuterRef("pk"), stage__in=OPEN_BATCH_STAGES)
    )


# --- Progress of many campaigns at once ----------------------------------------------------------


@dataclass(frozen=True)
class CampaignProgress:
    """``items`` (control items included), ``control_items``, ``complete``: items with at least K
    submitted results; ``results``: submitted results (late ones included)."""

    items: int = 0
    control_items: int = 0
    complete: int = 0
    results: int = 0

    @property
    def all_complete(self) -> bool:
        return bool(self.items) and self.complete == self.items


def campaigns_progress(campaign_ids: Iterable[int]) -> dict[int, CampaignProgress]:
    """Progress of each campaign in ``campaign_ids`` in one grouped query (a list page stays cheap)."""
    ids = list(campaign_ids)
    if not ids:
        return {}
    done = _done_per_item()
    rows = (
        Item.objects.filter(campaign_id__in=ids)
        .annotate(done=Coalesce(done, 0))
        .order_by()
        .values("campaign_id")
        .annotate(
            # Rated controls (no K) are counted as controls only, never towards completion.
            n_items=Count("pk", filter=Q(control_kind__in=CAPPED_KINDS)),
            n_controls=Count("pk", filter=Q(is_control=True)),
            n_complete=Count(
                "pk", filter=Q(done__gte=F("campaign__replication"), control_kind__in=CAPPED_KINDS)
            ),
            n_results=Sum("done", filter=Q(control_kind__in=CAPPED_KINDS)),
        )
    )
    out = {campaign_id: CampaignProgress() for campaign_id in ids}
    for row in rows:
        out[row["campaign_id"]] = CampaignProgress(
            items=row["n_items"],
            control_items=row["n_controls"],
            complete=row["n_complete"],
            results=row["n_results"] or 0,
        )
    return out


def campaign_is_finished(campaign: Campaign, progress: CampaignProgress) -> bool:
    """A campaign whose numbers will not change: closed, or every item has its K submitted results."""
    return campaign.state == CampaignState.CLOSED or progress.all_complete


# --- Image selections ---------------------------------------------------------------------


def selected_keys(*, language_set_id: int) -> list[str]:
    """The keys of a language's image set, in drawing order."""
    return list(
        SelectedImage.objects.filter(language_set_id=language_set_id)
        .order_by("rank")
        .values_list("image__key", flat=True)
    )


def selection_points(*, selection_id: int) -> list[dict]:
    """Every selected image with its language, level and coordinates (for the map and the export)."""
    return list(
        SelectedImage.objects.filter(selection_id=selection_id)
        .order_by("language_set__order", "rank")
        .values(
            "image__key",
            "language_set__language__code",
            "level",
            "rank",
            "image__latitude",
            "image__longitude",
            "image__country_code",
            "image__region",
            "image__continent",
        )
    )


def image_selection_list():
    """Selections, newest first, with their per-language sets (for the level table)."""
    return ImageSelection.objects.order_by("-created_at", "-pk").prefetch_related("languages__language")


def image_selection_detail(*, selection_id: int) -> ImageSelection:
    """One selection with its sets; NotFound when there is none."""
    selection = image_selection_list().filter(pk=selection_id).first()
    if selection is None:
        raise NotFound("No such image selection.")
    return selection
