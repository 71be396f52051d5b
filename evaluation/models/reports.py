"""Stored report computations: what a report selection costs to compute (bootstrap intervals,
permutation tests, figures) is computed once per selection content and kept here.

A row is keyed by a hash of the selection's content (run ids and when they finished, campaign ids with
their state and judgments, the settings that change the numbers, the code's version of the
computation), not by time: a row never goes stale, a changed selection simply has another key.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.models import TimeStamped


class ReportCacheState(models.TextChoices):
    PENDING = "pending", "queued"
    RUNNING = "running", "computing"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ReportCache(TimeStamped):
    """One computed report (or API answer) of one selection content.

    ``payload`` holds the computed result, pickled by :mod:`evaluation.research.reports.cache` (only
    this code writes it); ``progress`` says what is being computed while the row is not done."""

    key = models.CharField(max_length=64, unique=True, help_text="Hash of the selection and its content.")
    selection_key = models.CharField(
        max_length=64,
        db_index=True,
        help_text="Hash of the selection alone: the same across content changes.",
    )
    kind = models.CharField(max_length=20)
    state = models.CharField(max_length=10, choices=ReportCacheState, default=ReportCacheState.PENDING)
    selection = models.JSONField(default=dict, help_text="What the row was computed from, readable.")
    progress = models.CharField(max_length=300, blank=True)
    payload = models.BinaryField(null=True, blank=True, editable=False)
    error = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        verbose_name = "stored report"
        verbose_name_plural = "stored reports"
        indexes = [models.Index(fields=["kind", "-updated_at"], name="reportcache_kind_updated")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key[:12]} ({self.state})"


class ReportFigure(TimeStamped):
    """A figure of a stored report (scatter plot or heatmap, PNG or SVG), rendered once."""

    cache = models.ForeignKey(ReportCache, on_delete=models.CASCADE, related_name="figures")
    name = models.CharField(max_length=120)
    data = models.BinaryField(editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cache", "name"], name="reportfigure_one_per_name")]


class SavedReportSelection(TimeStamped):
    """A researcher's own default report selection: the page opens with it, whoever starts runs."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_report_selection"
    )
    query = models.TextField(help_text="The report page's query string.")
    content_key = models.CharField(max_length=64, help_text="The selection's content when saved.")

    class Meta:
        verbose_name = "saved report selection"


class ReportPiece(TimeStamped):
    """One language's part of a report's trust table and model level (correlations, soft pairwise
    gaps, trust verdict), keyed by a hash of that language's comparisons, items and settings
    (:mod:`evaluation.research.pieces`): a report whose data changed in one language reads the
    others from here. ``payload`` is pickled by :mod:`evaluation.research.reports.pieces` only."""

    key = models.CharField(max_length=64, unique=True, help_text="Hash of the language's inputs.")
    language = models.CharField(max_length=35)
    payload = models.BinaryField(editable=False)

    class Meta:
        verbose_name = "stored report piece"
        verbose_name_plural = "stored report pieces"

    def __str__(self) -> str:
        return f"{self.language} {self.key[:12]}"
