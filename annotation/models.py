"""The annotation data model.

A campaign (of a kind) holds items; an item is one thing to judge, for now one image.
An annotator asks for work and gets a batch; a batch is a list of assignments of items
to that one annotator. What the annotator produces hangs off the assignment: a rating of
the prompt system's caption (screen 1), a draft and finally a written caption (screen 2).
Side-by-side and rating campaigns add their own per-assignment results in later issues
without touching this skeleton.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


class TimeStamped(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


# --- Languages ----------------------------------------------------------------------------


class TextDirection(models.TextChoices):
    LTR = "ltr", "left to right"
    RTL = "rtl", "right to left"


class Tokenizer(models.TextChoices):
    # Languages written with spaces between words split on whitespace; languages written
    # without them (zh, ja, th, ...) are split per character, because a whitespace split
    # turns a whole caption into a single token and n-gram metrics become meaningless.
    WHITESPACE = "whitespace", "whitespace"
    CHARACTER = "character", "per character"


class Language(TimeStamped):
    code = models.CharField(max_length=16, unique=True, help_text="BCP 47 code, e.g. 'de', 'ar', 'zh'.")
    name = models.CharField(max_length=100)
    direction = models.CharField(max_length=3, choices=TextDirection.choices, default=TextDirection.LTR)
    tokenizer = models.CharField(max_length=16, choices=Tokenizer.choices, default=Tokenizer.WHITESPACE)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


# --- Images and system captions -------------------------------------------------------------


def image_upload_to(instance: Image, filename: str) -> str:
    # The stored name comes from the content hash, never from what the uploader called it.
    ext = (instance.format or "bin").lower().replace("jpeg", "jpg")
    return f"images/{instance.content_hash[:2]}/{instance.content_hash}.{ext}"


class Image(TimeStamped):
    key = models.CharField(max_length=200, unique=True, help_text="Source key, e.g. the XM3600 image id.")
    file = models.ImageField(
        upload_to=image_upload_to, blank=True, width_field="width", height_field="height"
    )
    # sha256 of the file bytes: the same picture is never stored twice. Null until the file arrives.
    content_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    format = models.CharField(max_length=10, blank=True)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    license = models.CharField(max_length=300, blank=True)
    author = models.CharField(max_length=300, blank=True)
    title = models.CharField(max_length=500, blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    latitude = models.FloatField(null=True, blank=True)
    longitude = models.FloatField(null=True, blank=True)
    country = models.CharField(max_length=100, blank=True)
    region = models.CharField(max_length=100, blank=True)
    continent = models.CharField(max_length=50, blank=True)

    class Meta:
        ordering = ["key"]
        constraints = [
            models.CheckConstraint(
                condition=Q(latitude__isnull=True) | Q(latitude__gte=-90, latitude__lte=90),
                name="image_latitude_range",
            ),
            models.CheckConstraint(
                condition=Q(longitude__isnull=True) | Q(longitude__gte=-180, longitude__lte=180),
                name="image_longitude_range",
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def has_file(self) -> bool:
        return bool(self.file)


class CaptioningSystem(TimeStamped):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class SystemCaption(TimeStamped):
    system = models.ForeignKey(CaptioningSystem, on_delete=models.CASCADE, related_name="captions")
    image = models.ForeignKey(Image, on_delete=models.CASCADE, related_name="system_captions")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="system_captions")
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["system", "image", "language"], name="system_caption_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.system} / {self.image} / {self.language.code}"


# --- Annotators -------------------------------------------------------------------------------


class Annotator(TimeStamped):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator")
    reads_english = models.BooleanField(default=True, help_text="Can read the English prompt captions.")
    # A stable pseudonym for exports, so research data need not carry user names.
    pseudonym = models.CharField(max_length=32, unique=True, editable=False)

    class Meta:
        ordering = ["user__username"]

    def __str__(self) -> str:
        return self.user.get_username()

    def save(self, *args, **kwargs):
        if not self.pseudonym:
            self.pseudonym = f"A-{secrets.token_hex(6)}"
        super().save(*args, **kwargs)


class SkillLevel(models.TextChoices):
    NATIVE = "native", "native"
    FLUENT = "fluent", "fluent"


class AnnotatorSkill(TimeStamped):
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="skills")
    language = models.ForeignKey(Language, on_delete=models.CASCADE, related_name="skills")
    level = models.CharField(max_length=10, choices=SkillLevel.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "language"], name="annotator_skill_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} {self.language.code} ({self.level})"


# --- Campaigns and their items ------------------------------------------------------------------


class CampaignKind(models.TextChoices):
    CAPTION = "caption", "caption (rate, then write)"


class CampaignState(models.TextChoices):
    DRAFT = "draft", "draft"
    OPEN = "open", "open"
    CLOSED = "closed", "closed"


class Campaign(TimeStamped):
    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=CampaignKind.choices, default=CampaignKind.CAPTION)
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="campaigns")
    batch_size = models.PositiveSmallIntegerField(default=15, help_text="N images per batch.")
    replication = models.PositiveSmallIntegerField(default=2, help_text="K results per image.")
    lease_minutes = models.PositiveIntegerField(default=60)
    prompt_system = models.ForeignKey(
        CaptioningSystem,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="prompt_campaigns",
        help_text="Captioning system whose English captions annotators rate on screen 1.",
    )
    state = models.CharField(max_length=10, choices=CampaignState.choices, default=CampaignState.DRAFT)
    rating_guidelines = models.TextField(blank=True, help_text="Shown on screen 1; empty: the built-in text.")
    writing_guidelines = models.TextField(
        blank=True, help_text="Shown on screen 2; empty: the built-in text."
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(batch_size__gte=1, batch_size__lte=100), name="campaign_batch_size"
            ),
            models.CheckConstraint(
                condition=Q(replication__gte=1, replication__lte=20), name="campaign_replication"
            ),
            models.CheckConstraint(condition=Q(lease_minutes__gte=1), name="campaign_lease_minutes"),
        ]

    def __str__(self) -> str:
        return self.name


class Item(TimeStamped):
    """One unit of work in a campaign (for a caption campaign, one image)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="items")
    # For a caption campaign: the prompt system's English caption rated on screen 1.
    prompt_caption = models.ForeignKey(SystemCaption, on_delete=models.PROTECT, null=True, blank=True)
    # Live-or-done assignments (live, submitted, late). The engine never lets it pass K when
    # assigning; only late work (kept, never dropped) can take it above K.
    active_count = models.PositiveIntegerField(default=0)
    # Random order among items with the same count, fixed at creation so the choice is an index scan.
    shuffle_key = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "image"], name="item_unique_image")]
        indexes = [models.Index(fields=["campaign", "active_count", "shuffle_key"], name="item_pool")]

    def __str__(self) -> str:
        return f"{self.campaign} / {self.image}"


# --- Batches and assignments --------------------------------------------------------------------


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
            # At most one open batch per annotator and campaign (RELIABILITY 2), whatever the locking.
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


class AssignmentState(models.TextChoices):
    LIVE = "live", "live"
    SUBMITTED = "submitted", "submitted"
    EXPIRED = "expired", "expired (back in the pool)"
    LATE = "late", "submitted late"


class Assignment(TimeStamped):
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    position = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=10, choices=AssignmentState.choices, default=AssignmentState.LIVE)

    class Meta:
        ordering = ["batch", "position"]
        constraints = [
            # Never the same item twice to one annotator, under any concurrency.
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_unique_item_annotator"),
            models.UniqueConstraint(fields=["batch", "position"], name="assignment_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.annotator}"


class RatingValue(models.TextChoices):
    # The order is the scale from best to worst; NOT-ENOUGH-INFO stands apart.
    EXCELLENT = "excellent", "EXCELLENT"
    GOOD = "good", "GOOD"
    MEDIUM = "medium", "MEDIUM"
    BAD = "bad", "BAD"
    NOT_ENOUGH_INFO = "nei", "NOT-ENOUGH-INFO"


class Rating(TimeStamped):
    """A screen-1 rating of the item's prompt caption. Editable until screen 2 opens."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="rating")
    value = models.CharField(max_length=10, choices=RatingValue.choices)
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

    def __str__(self) -> str:
        return f"draft of {self.assignment}"


class WrittenCaption(TimeStamped):
    """A caption written by an annotator on screen 2 and submitted."""

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
