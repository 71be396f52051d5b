"""Geographically diverse image selection: where languages are spoken, and the selections drawn from that."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotation.models.catalog import Image, Language
from core.models import TimeStamped


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
