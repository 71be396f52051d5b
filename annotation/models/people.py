"""Annotators and the languages they speak."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from annotation.models.catalog import Language
from core.models import TimeStamped


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
