"""The annotation data model.

A campaign (of a kind) holds items; an item is one thing to judge. An annotator asks for
work and gets a batch; a batch is a list of assignments of items to that one annotator.
What the annotator produces hangs off the assignment:

* caption campaign: an image; a rating of the prompt system's English caption (screen 1),
  a draft and finally a written caption (screen 2);
* side-by-side campaign: an image with one caption of the base system m1 and one of the
  test system m2, shown left/right in an order drawn per assignment; a ``SxsJudgment``;
* verification (rating) campaign: an image with one human caption written in a caption
  campaign; a ``Rating`` of that caption on the same 5-level scale as screen 1.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation import caption_checks
from core import tokenisation
from core.models import TimeStamped
from core.scales import RATING, SXS, SXS_CONTROL_MIN_JUDGMENTS, Scale, canonical

# --- Languages ----------------------------------------------------------------------------


class TextDirection(models.TextChoices):
    LTR = "ltr", "left to right"
    RTL = "rtl", "right to left"


class Tokenizer(models.TextChoices):
    """The tokenisation schemes a language can be scored with (names from :mod:`core.tokenisation`;
    implemented in ``evaluation.metrics.text.schemes``, a test checks that the two agree)."""

    WHITESPACE = tokenisation.WHITESPACE, tokenisation.SCHEME_LABELS[tokenisation.WHITESPACE]
    CHAR = tokenisation.CHAR, tokenisation.SCHEME_LABELS[tokenisation.CHAR]
    COCO_PTB = tokenisation.COCO_PTB, tokenisation.SCHEME_LABELS[tokenisation.COCO_PTB]
    XM3600_PTB = tokenisation.XM3600_PTB, tokenisation.SCHEME_LABELS[tokenisation.XM3600_PTB]
    JIEBA = tokenisation.JIEBA, tokenisation.SCHEME_LABELS[tokenisation.JIEBA]
    MECAB = tokenisation.MECAB, tokenisation.SCHEME_LABELS[tokenisation.MECAB]
    NEWMM = tokenisation.NEWMM, tokenisation.SCHEME_LABELS[tokenisation.NEWMM]


class Language(TimeStamped):
    code = models.CharField(max_length=16, unique=True, help_text="BCP 47 code, e.g. 'de', 'ar', 'zh'.")
    name = models.CharField(max_length=100)
    direction = models.CharField(max_length=3, choices=TextDirection.choices, default=TextDirection.LTR)
    tokenizer = models.CharField(
        "tokenisation scheme",
        max_length=16,
        choices=Tokenizer.choices,
        default=Tokenizer.WHITESPACE,
        help_text=(
            "How captions in this language are split into tokens for BLEU, ROUGE-L and CIDEr; a metric run "
            "can override it. Defaults: coco-ptb for English, char for languages written without spaces, "
            "whitespace otherwise. Changing it changes the numbers of new runs only (each run records its scheme)."
        ),
    )

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
    # Derived from the coordinates at import (annotation.selection.geography); what image selection
    # matches languages' countries against. Empty: no coordinates (usable at the global level only).
    country_code = models.CharField(
        max_length=2, blank=True, help_text="ISO 3166-1 alpha-2, derived from the coordinates."
    )

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
    # The annotator's own choice of interface language (a code of settings.LANGUAGES), kept here so
    # that it follows them to every device; empty: each page's default (annotation.interface).
    interface_language = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="Language of the annotator screens; empty: the campaign's language where the interface "
        "has it, else English.",
    )
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
    SIDE_BY_SIDE = "sxs", "side by side"
    RATING = "rating", "verification rating"


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
    # Side by side (seed 000, sec. 3.3): m1 is the base condition, m2 the test condition.
    base_system = models.ForeignKey(
        CaptioningSystem,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="sxs_base_campaigns",
        verbose_name="base system (m1)",
    )
    test_system = models.ForeignKey(
        CaptioningSystem,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="sxs_test_campaigns",
        verbose_name="test system (m2)",
    )
    # The items ARE the sample; its size and the seed that drew it are kept to reproduce it.
    sample_size = models.PositiveIntegerField(
        null=True, blank=True, help_text="Images drawn at random; empty: every eligible image."
    )
    sample_seed = models.BigIntegerField(
        null=True, blank=True, help_text="Seed of the random sample (and of the control items)."
    )
    # Verification (sec. 2.5): the caption campaign whose written captions are rated.
    source_campaign = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="verification_campaigns",
        help_text="For a verification campaign: the caption campaign whose captions are rated.",
    )
    control_pass_threshold = models.FloatField(
        default=0.75,
        help_text="Annotators who pass a smaller share of control items are flagged.",
    )
    # Caption checks on submit (annotation.caption_checks; defaults measured, see the README).
    min_caption_length = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text=(
            "Shortest caption accepted, in words, or in characters for languages written without "
            "spaces (zh, ja, th, ...). Empty: the language's default (3 words; ja 5, zh 4, th 6 characters)."
        ),
    )
    language_check = models.BooleanField(
        default=True,
        help_text="Refuse captions that the language identifier attributes to another language.",
    )
    language_check_threshold = models.FloatField(
        default=caption_checks.DEFAULT_LANGUAGE_THRESHOLD,
        help_text=(
            "Refuse when another language gets at least this probability (0.5 to 1; higher refuses less)."
        ),
    )
    near_copy_threshold = models.FloatField(
        default=caption_checks.DEFAULT_NEAR_COPY_THRESHOLD,
        help_text=(
            "Refuse captions at least this similar to the English prompt caption (0.5 to 1; 1: exact copies only)."
        ),
    )
    # Caption campaigns: made from a chosen selection of images (keys, or another campaign's);
    # opening such a campaign adds no other image. Otherwise every eligible image joins on open.
    fixed_images = models.BooleanField(
        default=False,
        help_text="Caption campaign made from a selection of images: opening it adds no other image.",
    )
    controls_per_batch = models.PositiveSmallIntegerField(
        default=0,
        help_text="Caption (screen 1) and verification campaigns: control items added to each batch, on top "
        "of its N images, among those the annotator has not seen (add them with “Add control items”).",
    )
    control_min_judgments = models.PositiveSmallIntegerField(
        default=SXS_CONTROL_MIN_JUDGMENTS,
        verbose_name="minimum control judgments",
        help_text="An annotator's pass rate is judged (and flagged) only from this many "
        "control judgments on; below it the results say “too few to judge”.",
    )
    rating_guidelines = models.TextField(
        blank=True, help_text="Shown on screen 1 and on the verification screen; empty: the built-in text."
    )
    writing_guidelines = models.TextField(
        blank=True, help_text="Shown on screen 2; empty: the built-in text."
    )
    sxs_guidelines = models.TextField(
        blank=True, help_text="Shown on the side-by-side screen; empty: the built-in text."
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
            models.CheckConstraint(
                condition=Q(control_min_judgments__gte=1), name="campaign_control_min_judgments"
            ),
            models.CheckConstraint(
                condition=~Q(kind="sxs")
                | (
                    Q(base_system__isnull=False, test_system__isnull=False) & ~Q(base_system=F("test_system"))
                ),
                name="campaign_sxs_two_different_systems",
            ),
            models.CheckConstraint(
                condition=~Q(kind="rating") | Q(source_campaign__isnull=False),
                name="campaign_rating_has_source",
            ),
            models.CheckConstraint(
                condition=Q(sample_size__isnull=True) | Q(sample_size__gte=1), name="campaign_sample_size"
            ),
            models.CheckConstraint(
                condition=Q(control_pass_threshold__gte=0, control_pass_threshold__lte=1),
                name="campaign_control_pass_threshold",
            ),
            models.CheckConstraint(
                condition=Q(language_check_threshold__gte=0.5, language_check_threshold__lte=1),
                name="campaign_language_check_threshold",
            ),
            models.CheckConstraint(
                condition=Q(near_copy_threshold__gte=0.5, near_copy_threshold__lte=1),
                name="campaign_near_copy_threshold",
            ),
            models.CheckConstraint(
                condition=Q(min_caption_length__isnull=True) | Q(min_caption_length__gte=1),
                name="campaign_min_caption_length",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class CampaignGuidelines(TimeStamped):
    """A campaign's own guidelines in one interface language (annotation.guidelines picks them).
    An empty text falls back to the campaign's text for every language, then to the built-in one."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="translated_guidelines")
    interface_language = models.CharField(max_length=16, help_text="A code of the interface's languages.")
    rating = models.TextField(blank=True, help_text="Screen 1 and the verification screen.")
    writing = models.TextField(blank=True, help_text="Screen 2.")
    sxs = models.TextField("side by side", blank=True, help_text="The side-by-side screen.")

    class Meta:
        verbose_name = "guidelines in an interface language"
        verbose_name_plural = "guidelines in other interface languages"
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "interface_language"], name="campaign_guidelines_language_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.campaign} ({self.interface_language})"


class ControlKind(models.TextChoices):
    """Side-by-side control items, mixed in among the real pairs and looking like them.

    * ``identical``: both sides show the same caption (m1's). Expected: SIMILAR; the
      judgment passes when |score| <= 1 (a SLIGHTLY-… is forgiven, a clear preference is not).
    * ``wrong_image``: the m2 slot holds a caption of ANOTHER image, the m1 slot the real
      caption. Expected: a clear preference for the real caption; the judgment passes when it
      favours the real one by at least 2 points (BETTER or MUCH-BETTER for it), i.e. score
      from m2's side <= -2.
    """

    NONE = "", "not a control"
    IDENTICAL = "identical", "identical captions"
    WRONG_IMAGE = "wrong_image", "caption of another image"
    # Rated controls (screen 1 of caption campaigns, verification campaigns): see
    # annotation.quality.controls for what passes.
    MISMATCHED = "mismatched", "rated: caption of another image"
    REFERENCE = "reference", "rated: human reference caption"


# Rated controls are not capped by K: each annotator may get each of them once, a few per batch
# (Campaign.controls_per_batch), so their items keep no live-or-done counter.
UNCAPPED_CONTROL_KINDS = (ControlKind.MISMATCHED, ControlKind.REFERENCE)
# The items a campaign's progress is counted over: real items, and side-by-side controls (which have a K).
CAPPED_KINDS = (ControlKind.NONE, ControlKind.IDENTICAL, ControlKind.WRONG_IMAGE)


class Item(TimeStamped):
    """One unit of work in a campaign: an image, and what is judged about it (see the module docstring)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="items")
    # For a caption campaign: the prompt system's English caption rated on screen 1.
    prompt_caption = models.ForeignKey(SystemCaption, on_delete=models.PROTECT, null=True, blank=True)
    # For a side-by-side campaign: the two captions compared (for a control, see ControlKind).
    caption_m1 = models.ForeignKey(
        SystemCaption, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    caption_m2 = models.ForeignKey(
        SystemCaption, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # For a verification campaign: the human caption rated.
    written_caption = models.ForeignKey(
        "WrittenCaption", on_delete=models.PROTECT, null=True, blank=True, related_name="verification_items"
    )
    is_control = models.BooleanField(default=False)
    control_kind = models.CharField(
        max_length=12, choices=ControlKind.choices, default=ControlKind.NONE, blank=True
    )
    # The two systems produced the same text (ignoring case and outer spaces): judged like
    # any pair, reported separately.
    is_identical_pair = models.BooleanField(default=False)
    # Live-or-done assignments (live, submitted, late). The engine never lets it pass K when
    # assigning; only late work (kept, never dropped) can take it above K.
    active_count = models.PositiveIntegerField(default=0)
    # Random order among items with the same count, fixed at creation so the choice is an index scan.
    shuffle_key = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # One real item per image; control items reuse images of the campaign.
            models.UniqueConstraint(
                fields=["campaign", "image"],
                condition=Q(is_control=False),
                name="item_unique_image_non_control",
            ),
            models.CheckConstraint(
                condition=Q(is_control=False, control_kind="")
                | (
                    Q(is_control=True)
                    & Q(control_kind__in=["identical", "wrong_image", "mismatched", "reference"])
                ),
                name="item_control_kind",
            ),
        ]
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
            models.CheckConstraint(
                condition=Q(choice__in=SxsChoice.values), name="sxs_judgment_choice_values"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment}: {self.get_choice_display()}"


# --- Geographically diverse image selection (seed 000, sec. 2.2) ----------------------------


class LanguageArea(TimeStamped):
    """A manager's override of where a language is spoken, on top of CLDR's countries.

    With a region: that first-level region (state, province) is in the language's area, and the
    country becomes a country-level back-off. Without: the whole country is in its area.
    ``excluded``: CLDR's country is not used for this language (region left empty).
    """

    language = models.ForeignKey(Language, on_delete=models.CASCADE, related_name="areas")
    country_code = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2, e.g. IN.")
    region = models.CharField(
        max_length=100,
        blank=True,
        help_text="First-level region as GeoNames names it (e.g. Telangana); empty: the whole country.",
    )
    excluded = models.BooleanField(
        default=False, help_text="The language is not to be looked for in this country (overrides CLDR)."
    )
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["language__code", "country_code", "region"]
        constraints = [
            models.UniqueConstraint(
                fields=["language", "country_code", "region"], name="language_area_unique"
            ),
            models.CheckConstraint(
                condition=Q(excluded=False) | Q(region=""), name="language_area_exclusion_whole_country"
            ),
        ]

    def __str__(self) -> str:
        where = f"{self.region}, {self.country_code}" if self.region else self.country_code
        return f"{self.language.code}: {'not ' if self.excluded else ''}{where}"


class SelectionLevel(models.TextChoices):
    REGION = "region", "region (where the language is spoken)"
    COUNTRY = "country", "country where it is spoken"
    CONTINENT = "continent", "continent where it is spoken"
    GLOBAL = "global", "anywhere"


class ImageSelection(TimeStamped):
    """One run of the selection: its inputs, so it can be reproduced, and what it chose."""

    name = models.CharField(max_length=200, unique=True)
    per_language = models.PositiveIntegerField(help_text="Target number of images per language.")
    seed = models.BigIntegerField(
        help_text="Seed that broke the ties; the same pool and seed give the same sets."
    )
    pool_query = models.CharField(max_length=500, blank=True, help_text="Which images were candidates.")
    pool_size = models.PositiveIntegerField(default=0)
    min_share = models.FloatField(help_text="Minimum CLDR population share (percent) for a country to count.")
    geography = models.CharField(max_length=300, blank=True, help_text="Data sources of the places.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class SelectedLanguage(TimeStamped):
    """The image set of one language in a selection, with its per-level counts."""

    selection = models.ForeignKey(ImageSelection, on_delete=models.CASCADE, related_name="languages")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="image_selections")
    order = models.PositiveSmallIntegerField(help_text="1: served first (the smallest pool).")
    pool = models.PositiveIntegerField(help_text="Candidate images in the language's area.")
    target = models.PositiveIntegerField()
    n_region = models.PositiveIntegerField(default=0)
    n_country = models.PositiveIntegerField(default=0)
    n_continent = models.PositiveIntegerField(default=0)
    n_global = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["selection", "order"]
        constraints = [
            models.UniqueConstraint(fields=["selection", "language"], name="selected_language_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.selection.name} · {self.language.code}"

    @property
    def selected(self) -> int:
        return self.n_region + self.n_country + self.n_continent + self.n_global

    @property
    def shortfall(self) -> int:
        return max(self.target - self.selected, 0)


class SelectedImage(TimeStamped):
    selection = models.ForeignKey(ImageSelection, on_delete=models.CASCADE, related_name="images")
    language_set = models.ForeignKey(SelectedLanguage, on_delete=models.CASCADE, related_name="images")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="selections")
    level = models.CharField(max_length=10, choices=SelectionLevel.choices)
    rank = models.PositiveIntegerField(help_text="Order in which the image was drawn for its language.")

    class Meta:
        ordering = ["language_set", "rank"]
        constraints = [
            # Never the same image for two languages of one selection.
            models.UniqueConstraint(fields=["selection", "image"], name="selected_image_once"),
        ]


# Recruitment, onboarding and pilots live in their own module (annotation.workforce.models).
# Workforce quality: control items' results, typing records, image reports (issue 14).
from annotation.quality.models import ImageReport, ImageWithdrawal, TypingRecord  # noqa: E402, F401
from annotation.workforce.models import (  # noqa: E402, F401
    BatchHold,
    CampaignOnboarding,
    CaptionReview,
    CrowdPlatform,
    Enrolment,
    EntryLink,
    HoldDecision,
    ReviewDecision,
    TutorialAnswer,
    TutorialAttempt,
    TutorialItem,
    TutorialResult,
    TutorialVerdict,
)
