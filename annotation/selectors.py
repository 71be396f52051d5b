"""Reads of the annotation app: what an annotator may see, and progress figures."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connections, router
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
from core.compiled_reads import CompiledRead
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
    try:
        batch_id = int(batch_id)
    except (TypeError, ValueError):
        batch_id = None
    batch = (
        None if batch_id is None else _BATCH_READS[lock].read(batch_id=batch_id, annotator_id=annotator.pk)
    )
    if batch is None:
        raise NotFound(gettext("No such batch."))
    return batch


def _batch_query(lock: bool):
    qs = Batch.objects.select_related("campaign", "campaign__language")
    return qs.select_for_update(of=("self",)) if lock else qs


# The read every screen and every batch-wide write starts from, its SQL (a join over the campaign's
# 27 columns and the language's) built once per connection (core.compiled_reads), not per request.
_BATCH_READS = {
    lock: CompiledRead(
        Batch,
        lambda batch_id, annotator_id, lock=lock: _batch_query(lock).filter(
            pk=batch_id, annotator_id=annotator_id
        ),
        {"batch_id": int, "annotator_id": int},
    )
    for lock in (False, True)
}


def assignment_of(batch: Batch, assignment_id: int, *, writing: bool = False) -> Assignment:
    """The assignment ``assignment_id`` of ``batch`` with its item (and with ``writing``, its draft and
    typing record, in the same query); NotFound for one of another batch (or an id that is not a number)."""
    related = ("item", "draft", "typing") if writing else ("item",)
    try:
        return batch.assignments.select_related(*related).get(pk=assignment_id)
    except (Assignment.DoesNotExist, ValueError, TypeError):
        raise NotFound(gettext("No such image in this batch.")) from None


# What a save inside a batch reads of the rows it joins: the columns it uses, not the campaign's 27
# and the language's; the draft and the typing record whole, since the save stores them. Per table:
# the relation from the assignment ("" for the assignment itself) and its columns (primary key first).
_SAVE_COLUMNS = (
    ("", Assignment, ("id", "batch_id", "item_id", "position", "state")),
    ("batch", Batch, ("id", "campaign_id", "annotator_id", "stage", "lease_expires_at", "writing_opened_at")),
    ("batch__campaign", Campaign, ("id", "kind", "lease_minutes")),
    ("item", Item, ("id", "image_id", "is_control")),
)


def _whole(model) -> tuple[str, ...]:
    return tuple(field.attname for field in model._meta.concrete_fields)


def _column(qn, model, name: str) -> str:
    return qn(model._meta.get_field(name).column)


class _SaveRead:
    """The locked read of a save (:func:`batch_and_assignment`) as one SQL statement written once per
    database connection, its row turned into model instances by hand.

    This one query, built by the ORM on every save (select_related over six tables with ``only()``,
    FOR UPDATE OF the batch) and its row turned into objects by the ORM's generic code, was the
    largest part of a rating's or a draft's CPU. Its shape never changes, so the statement and each
    column's converters are made once; what comes back is what the ORM gave: instances built with
    ``Model.from_db`` (the columns not read are deferred), related objects cached, and an absent
    draft or typing record cached as None (no query when the save asks for it)."""

    def __init__(self, connection, writing: bool) -> None:
        qn = connection.ops.quote_name
        parts = list(_SAVE_COLUMNS)
        if writing:
            parts += [
                ("draft", CaptionDraft, _whole(CaptionDraft)),
                ("typing", TypingRecord, _whole(TypingRecord)),
            ]
        tables = {relation: qn(model._meta.db_table) for relation, model, _ in parts}
        self.parts = []  # (relation, model, attnames, (column, its converters) per column)
        columns = []
        for relation, model, attnames in parts:
            converters = []
            for attname in attnames:
                field = next(f for f in model._meta.concrete_fields if f.attname == attname)
                col = field.get_col(model._meta.db_table)
                converters.append(
                    (col, connection.ops.get_db_converters(col) + field.get_db_converters(connection))
                )
                columns.append(f"{tables[relation]}.{qn(field.column)}")
            self.parts.append((relation, model, attnames, converters))
        a, b, c, i = tables[""], tables["batch"], tables["batch__campaign"], tables["item"]
        pk = qn(Assignment._meta.pk.column)  # every table here has the default "id"
        joins = [
            f"FROM {a}",
            f"INNER JOIN {b} ON ({b}.{pk} = {a}.{_column(qn, Assignment, 'batch')})",
            f"INNER JOIN {c} ON ({c}.{pk} = {b}.{_column(qn, Batch, 'campaign')})",
            f"INNER JOIN {i} ON ({i}.{pk} = {a}.{_column(qn, Assignment, 'item')})",
        ]
        if writing:
            for relation, model in (("draft", CaptionDraft), ("typing", TypingRecord)):
                t = tables[relation]
                joins.append(f"LEFT OUTER JOIN {t} ON ({t}.{_column(qn, model, 'assignment')} = {a}.{pk})")
        where = (
            f"WHERE {a}.{pk} = %s AND {a}.{_column(qn, Assignment, 'batch')} = %s"
            f" AND {b}.{_column(qn, Batch, 'annotator')} = %s"
        )
        lock = ""
        if connection.features.has_select_for_update:  # SQLite: the write lock taken at BEGIN instead
            lock = f" FOR UPDATE OF {b}" if connection.features.has_select_for_update_of else " FOR UPDATE"
        self.sql = f"SELECT {', '.join(columns)} {' '.join(joins)} {where}{lock}"

    def __call__(self, connection, assignment_id: int, batch_id: int, annotator_id: int) -> Assignment | None:
        with connection.cursor() as cursor:
            cursor.execute(self.sql, [assignment_id, batch_id, annotator_id])
            row = cursor.fetchone()
        if row is None:
            return None
        objects = {}
        start = 0
        for relation, model, attnames, converters in self.parts:
            values = list(row[start : start + len(attnames)])
            start += len(attnames)
            for index, (col, chain) in enumerate(converters):
                for converter in chain:
                    values[index] = converter(values[index], col, connection)
            objects[relation] = (
                model.from_db(connection.alias, attnames, values) if values[0] is not None else None
            )
        assignment, batch = objects[""], objects["batch"]
        Batch.campaign.field.set_cached_value(batch, objects["batch__campaign"])
        Assignment.batch.field.set_cached_value(assignment, batch)
        Assignment.item.field.set_cached_value(assignment, objects["item"])
        for relation in ("draft", "typing"):
            if relation in objects:
                related = objects[relation]
                Assignment._meta.get_field(relation).set_cached_value(assignment, related)
                if related is not None:
                    related._meta.get_field("assignment").set_cached_value(related, assignment)
        return assignment


_save_reads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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
    connection = connections[router.db_for_write(Assignment)]
    try:
        assignment_id = int(assignment_id)
    except (ValueError, TypeError):
        assignment_id = None
    assignment = None
    if assignment_id is not None:
        reads = _save_reads.setdefault(connection, {})
        if writing not in reads:
            reads[writing] = _SaveRead(connection, writing)
        assignment = reads[writing](connection, assignment_id, batch_id, annotator.pk)
    if assignment is None:
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
