"""Languages, images, captioning systems and their English captions: what campaigns are built from."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from core import tokenisation
from core.models import Named, TimeStamped


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


class CaptioningSystem(Named):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    language_check_overrides = models.JSONField(
        default=list,
        blank=True,
        help_text="Imports of captions that failed the script or language check, made anyway: each with the "
        "manager's reason, the counts per problem, the file and when.",
    )


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
