"""Batches of assignments and what an annotator produces in them: ratings, drafts, written captions and
side-by-side judgments."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotation.models.campaigns import Campaign, Item
from annotation.models.catalog import Image, Language
from annotation.models.people import Annotator
from core.models import TimeStamped, one_of
from core.scales import RATING, SXS, Scale, canonical


class BatchStage(models.TextChoices):
    RATING = "rating", "screen 1: rating"
    WRITING = "writing", "screen 2: writing"
    SUBMITTED = "submitted", "submitted"
    EXPIRED = "expired", "lease expired"


OPEN_BATCH_STAGES = (BatchStage.RATING, BatchStage.WRITING)


class Batch(TimeStamped):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="batches")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="batches")
    stage = models.CharField(max_length=10, choices=BatchStage.choices, default=BatchStage.RATING)
    lease_expires_at = models.DateTimeField()
    writing_opened_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    # Submitted after its lease ran out: kept, and flagged.
    is_late = models.BooleanField(default=False)
    # The client's idempotency key of the submit that was stored.
    submit_key = models.CharField(max_length=64, blank=True)
    # Seconds the annotator spent on each screen, as measured by the page.
    rating_seconds = models.FloatField(null=True, blank=True)
    writing_seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "batches"
        constraints = [
            # At most one open batch per annotator and campaign, whatever the locking: 20 simultaneous
            # requests of one annotator make one batch.
            models.UniqueConstraint(
                fields=["campaign", "annotator"],
                condition=Q(stage__in=["rating", "writing"]),
                name="batch_one_open_per_annotator",
            ),
        ]
        indexes = [models.Index(fields=["stage", "lease_expires_at"], name="batch_lease")]

    def __str__(self) -> str:
        return f"batch {self.pk} of {self.annotator} in {self.campaign}"

    @property
    def is_open(self) -> bool:
        return self.stage in OPEN_BATCH_STAGES


class Side(models.TextChoices):
    LEFT = "left", "left"
    RIGHT = "right", "right"


class AssignmentState(models.TextChoices):
    LIVE = "live", "live"
    SUBMITTED = "submitted", "submitted"
    EXPIRED = "expired", "expired (back in the pool)"
    LATE = "late", "submitted late"
    # Submitted in a crowd batch that does not count (annotation.workforce.counting): kept, out of
    # every result and of K until a manager accepts the batch (then SUBMITTED or LATE again).
    HELD = "held", "submitted, held for review"
    REJECTED = "rejected", "submitted, rejected on review"


# Submitted work that enters no result, no progress figure and no K (the data stays stored).
NOT_COUNTED_STATES = (AssignmentState.HELD, AssignmentState.REJECTED)
# Work its annotator finished: submitted in time or after the lease ran out (late work is kept).
DONE_STATES = (AssignmentState.SUBMITTED, AssignmentState.LATE)


class Assignment(TimeStamped):
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    position = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=10, choices=AssignmentState.choices, default=AssignmentState.LIVE)
    # Side by side: where m2's caption is shown to this annotator, drawn at random on the
    # server when the assignment is made. Never sent to the page.
    m2_side = models.CharField(max_length=5, choices=Side.choices, blank=True, default="")

    class Meta:
        ordering = ["batch", "position"]
        constraints = [
            # Never the same item twice to one annotator, under any concurrency.
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_unique_item_annotator"),
            models.UniqueConstraint(fields=["batch", "position"], name="assignment_unique_position"),
            models.CheckConstraint(
                condition=Q(m2_side__in=["", "left", "right"]), name="assignment_m2_side_values"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.annotator}"


def _choices(name: str, scale: Scale) -> type[models.TextChoices]:
    """TextChoices built from a scale of ``core.scales``: the stored code and the label the
    annotator sees; member names from the paper's labels (NOT_ENOUGH_INFO, MUCH_BETTER, …)."""
    members = [(canonical(p.paper_label).replace("-", "_"), (p.code, p.label)) for p in scale]
    return models.TextChoices(name, members)


# The 5-level scale from best to worst, NOT-ENOUGH-INFO apart (core.scales.RATING).
RatingValue = _choices("RatingValue", RATING)


class RatingQuerySet(models.QuerySet):
    def counted(self) -> RatingQuerySet:
        """Ratings that enter statistics, correlations and exports: never those of control items,
        nor those of a batch held for review or rejected (annotation.workforce.counting)."""
        return self.filter(assignment__item__is_control=False).exclude(
            assignment__state__in=NOT_COUNTED_STATES
        )


class Rating(TimeStamped):
    """A 5-level rating: on screen 1 of the item's prompt caption (editable until screen 2
    opens); in a verification campaign of the item's written caption (editable until submit)."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="rating")
    value = models.CharField(max_length=10, choices=RatingValue.choices)

    objects = RatingQuerySet.as_manager()
    # Seconds the image was in focus on screen 1, where the page could measure it.
    seconds = models.FloatField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.assignment}: {self.get_value_display()}"


class CaptionDraft(TimeStamped):
    """What the annotator has typed so far on screen 2, saved as they type."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    text = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)
    # Client-side revision counter: an older save arriving late never overwrites a newer one.
    revision = models.PositiveIntegerField(default=0)
    # The server's own evidence of how the caption grew (annotation.quality.typing): one
    # [server epoch ms, length] per save that changed the text, oldest first; only the latest
    # SAVES_KEPT are kept, ``saves_dropped`` counts the others. Empty on a draft saved before
    # this was recorded.
    saves = models.JSONField(default=list, blank=True)
    saves_dropped = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"draft of {self.assignment}"


class WrittenCaptionQuerySet(models.QuerySet):
    def counted(self) -> WrittenCaptionQuerySet:
        """Captions that enter statistics, exports, reference sets and metric runs: all but those a
        manager excluded after reviewing their typing (annotation.quality.integrity), and those of a
        batch held for review or rejected (annotation.workforce.counting)."""
        return self.exclude(assignment__typing__review="excluded").exclude(
            assignment__state__in=NOT_COUNTED_STATES
        )


class WrittenCaption(TimeStamped):
    """A caption written by an annotator on screen 2 and submitted."""

    objects = WrittenCaptionQuerySet.as_manager()

    assignment = models.OneToOneField(Assignment, on_delete=models.PROTECT, related_name="written_caption")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="written_captions")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="written_captions")
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="written_captions")
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="written_captions")
    text = models.TextField()
    seconds = models.FloatField(null=True, blank=True)
    is_late = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["campaign", "image"], name="written_caption_campaign_image")]

    def __str__(self) -> str:
        return f"{self.image} [{self.language.code}] by {self.annotator}"


# --- Side-by-side judgments ---------------------------------------------------------------------


# The 7 points as the annotator sees them, read from the LEFT caption's side (core.scales.SXS;
# seed 000, sec. 3.3: MUCH-BETTER … MUCH-WORSE).
SxsChoice = _choices("SxsChoice", SXS)


class SxsJudgment(TimeStamped):
    """One side-by-side judgment: the choice as seen, and the score from m2's side.

    ``score`` (−3 … +3, +3 = m2 much better) is computed by the service from the choice and
    the assignment's ``m2_side``; the client never sends it. Editable until the batch is submitted.
    """

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="sxs_judgment")
    choice = models.CharField(max_length=16, choices=SxsChoice.choices)
    score = models.SmallIntegerField()
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(score__gte=-3, score__lte=3), name="sxs_judgment_score_range"),
            one_of("choice", SxsChoice, "sxs_judgment_choice_values"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment}: {self.get_choice_display()}"
