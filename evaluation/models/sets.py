"""Image sets and reference sets: what a metric run scores, and against which human captions."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotation.models import Campaign, Image, Language
from core.models import TimeStamped, optional_fk


class ImageSet(TimeStamped):
    """A named set of images to evaluate on (e.g. XM600, the 600 images of the side-by-side study)."""

    name = models.CharField(max_length=200, unique=True)
    language = optional_fk(Language, "image_sets", help_text="Empty: the set serves every language.")
    images = models.ManyToManyField(Image, related_name="image_sets", blank=True)
    seed = models.BigIntegerField(
        null=True, blank=True, help_text="Random seed of the selection, if sampled."
    )
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ReferenceSetKind(models.TextChoices):
    CAMPAIGN = "campaign", "written captions of a caption campaign"
    IMPORTED = "imported", "imported from a file"


class ReferenceSet(TimeStamped):
    """Reference captions in one language.

    ``campaign``: the campaign's written captions, read when a run computes (so captions
    written later count in later runs). ``imported``: the :class:`Reference` rows, with the
    name, format and sha256 of the file they came from. ``public_dataset`` names the public dataset
    the references were taken from (anyone may have trained on them); empty for the platform's own.
    """

    name = models.CharField(max_length=200, unique=True)
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="reference_sets")
    kind = models.CharField(max_length=10, choices=ReferenceSetKind.choices)
    campaign = models.ForeignKey(
        Campaign, on_delete=models.PROTECT, null=True, blank=True, related_name="reference_sets"
    )
    source_name = models.CharField(max_length=300, blank=True)
    source_format = models.CharField(max_length=20, blank=True)
    source_sha256 = models.CharField(max_length=64, blank=True)
    description = models.TextField(blank=True)
    min_verified_rating = models.CharField(
        max_length=10,
        blank=True,
        choices=[("", "every counted caption"), ("MEDIUM", "MEDIUM or better"), ("GOOD", "GOOD or better")],
        help_text="Campaign sets: only the captions whose median verification rating (their verification "
        "campaigns' raters, as in Table 2) is at least this; a caption not yet rated is left out. Empty: every "
        "counted caption.",
    )
    public_dataset = models.CharField(
        max_length=200,
        blank=True,
        help_text="The public dataset these references come from, with its licence (e.g. “XM3600, CC-BY 4.0”); "
        "empty: written on this platform. A hidden test phase scored on a public dataset's references hides "
        "nothing from a team that has the dataset.",
    )
    language_check_override = models.JSONField(
        default=dict,
        blank=True,
        help_text="Imported although captions failed the script or language check: the manager's reason, "
        "the counts per problem, the file and when.",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="campaign", campaign__isnull=False)
                | Q(kind="imported", campaign__isnull=True),
                name="reference_set_kind_campaign",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Reference(TimeStamped):
    """One imported reference caption: the ``position``-th reference of ``image`` in the set."""

    reference_set = models.ForeignKey(ReferenceSet, on_delete=models.CASCADE, related_name="references")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="references")
    text = models.TextField()
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["reference_set", "image", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["reference_set", "image", "position"], name="reference_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference_set} / {self.image} #{self.position}"
