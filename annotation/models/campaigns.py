"""Campaigns of each kind, their translated guidelines, and their items (what one annotator judges once)."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from annotation import caption_checks
from annotation.models.catalog import CaptioningSystem, Image, Language, SystemCaption
from core.models import TimeStamped, optional_fk
from core.scales import SXS_CONTROL_MIN_JUDGMENTS


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
    prompt_system = optional_fk(
        CaptioningSystem,
        "prompt_campaigns",
        help_text="Captioning system whose English captions annotators rate on screen 1.",
    )
    state = models.CharField(max_length=10, choices=CampaignState.choices, default=CampaignState.DRAFT)
    # Side by side (seed 000, sec. 3.3): m1 is the base condition, m2 the test condition.
    base_system = optional_fk(CaptioningSystem, "sxs_base_campaigns", verbose_name="base system (m1)")
    test_system = optional_fk(CaptioningSystem, "sxs_test_campaigns", verbose_name="test system (m2)")
    # The items ARE the sample; its size and the seed that drew it are kept to reproduce it.
    sample_size = models.PositiveIntegerField(
        null=True, blank=True, help_text="Images drawn at random; empty: every eligible image."
    )
    sample_seed = models.BigIntegerField(
        null=True, blank=True, help_text="Seed of the random sample (and of the control items)."
    )
    # Verification (sec. 2.5): the caption campaign whose written captions are rated.
    source_campaign = optional_fk(
        "self",
        "verification_campaigns",
        help_text="For a verification campaign: the caption campaign whose captions are rated.",
    )
    control_pass_threshold = models.FloatField(
        default=0.75,
        help_text="Annotators who pass a smaller share of control items are flagged.",
    )
    # Caption checks on submit (annotation.caption_checks; defaults measured, see docs/protocol.md).
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
    captions_sealed = models.BooleanField(
        default=False,
        help_text="Its written captions are the hidden references of a benchmark's test phase: no export or "
        "research API shows them (the evaluation server sets this when it takes them as fresh references; "
        "clear it once every phase that uses them is closed).",
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
