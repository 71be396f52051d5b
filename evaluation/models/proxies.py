"""Admin pages without a table of their own (proxy models of annotation's models)."""

from __future__ import annotations

from annotation.models import Annotator, Language


class LanguageStatistics(Language):
    """A read-only admin page per language: its Table 1 and Table 2 rows (no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "language statistics"
        verbose_name_plural = "language statistics"


class AnnotatorHours(Annotator):
    """A read-only admin page: per annotator, submitted batches and the time they took, for paying
    people (annotation.quality.hours; no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "annotator hours"
        verbose_name_plural = "annotator hours"
