"""Models of workforce quality, imported by ``annotation.models`` (app label ``annotation``).

* ``TypingRecord``: how a caption was typed on screen 2 (keystrokes, pastes, first and last key),
  the flags computed from it on submit, and the manager's review (keep / exclude).
* ``ImageReport``: an annotator's "report a problem with this image" (one per image, annotator
  and campaign), and whether the reporter was trusted to count toward a withdrawal.
* ``ImageWithdrawal``: an image taken out of one campaign's pool (or, by a manager, out of every
  campaign's) after enough trusted reports or a manager's decision, until a manager puts it back.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.models import TimeStamped, optional_fk


class TypingReview(models.TextChoices):
    NOT_FLAGGED = "", "not flagged"
    PENDING = "pending", "flagged, to review"
    KEPT = "kept", "kept"
    EXCLUDED = "excluded", "excluded"


class TypingRecord(TimeStamped):
    """What the screen-2 page measured while one caption was typed (cumulative over reloads: the page
    starts from the stored figures). Times are the browser's clock in epoch milliseconds; only their
    difference is used. ``flags`` is set on submit (comma-separated codes of
    ``annotation.quality.integrity``); a flagged caption waits for review and is kept meanwhile."""

    assignment = models.OneToOneField(
        "annotation.Assignment", on_delete=models.CASCADE, related_name="typing"
    )
    keystrokes = models.PositiveIntegerField(default=0)
    paste_count = models.PositiveIntegerField(default=0)
    pasted_chars = models.PositiveIntegerField(default=0)
    first_key_ms = models.BigIntegerField(null=True, blank=True)
    last_key_ms = models.BigIntegerField(null=True, blank=True)
    chars = models.PositiveIntegerField(default=0, help_text="Length of the submitted caption.")
    flags = models.CharField(max_length=100, blank=True)
    review = models.CharField(max_length=10, choices=TypingReview.choices, default="", blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "caption typing record"
        verbose_name_plural = "caption typing (flagged captions to review)"
        constraints = [
            models.CheckConstraint(
                condition=Q(review__in=["", "pending", "kept", "excluded"]), name="typing_review_values"
            ),
            models.CheckConstraint(
                condition=Q(first_key_ms__isnull=True)
                | Q(last_key_ms__isnull=True)
                | Q(last_key_ms__gte=models.F("first_key_ms")),
                name="typing_key_times_ordered",
            ),
        ]
        indexes = [models.Index(fields=["review"], name="typing_review")]

    def __str__(self) -> str:
        return f"typing of {self.assignment_id}"

    @property
    def typing_seconds(self) -> float | None:
        if self.first_key_ms is None or self.last_key_ms is None:
            return None
        return (self.last_key_ms - self.first_key_ms) / 1000


class ReportReason(models.TextChoices):
    BROKEN = "broken", "the image does not show or is broken"
    OFFENSIVE = "offensive", "the image is offensive"
    PRIVATE = "private", "the image shows private information"


class ImageReport(TimeStamped):
    """One annotator's report of a problem with an image they were assigned, in the campaign of
    that batch (idempotent: one per image, annotator and campaign). ``trusted``: the reporter was a
    trusted reporter when reporting (``annotation.quality.reports.reporter_trusted``) and the report
    counts toward withdrawing the image from that campaign; otherwise it waits for a manager's
    review. ``resolved`` once a manager dismissed it or put the image back in the pool."""

    image = models.ForeignKey("annotation.Image", on_delete=models.CASCADE, related_name="reports")
    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="reports")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="reports")
    reason = models.CharField(max_length=10, choices=ReportReason.choices)
    note = models.CharField(max_length=500, blank=True)
    trusted = models.BooleanField(
        default=False, help_text="The reporter had passed onboarding and submitted work when reporting."
    )
    resolved = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["image", "annotator", "campaign"], name="image_report_once_per_annotator_campaign"
            ),
            models.CheckConstraint(
                condition=Q(reason__in=["broken", "offensive", "private"]), name="image_report_reason_values"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.image} reported by {self.annotator} ({self.reason})"


class ImageWithdrawalQuerySet(models.QuerySet):
    def in_force(self, campaign_id: int) -> ImageWithdrawalQuerySet:
        """The withdrawals that keep an image out of ``campaign_id``'s pool: its own, and those a
        manager extended to every campaign."""
        return self.filter(Q(campaign_id=campaign_id) | Q(everywhere=True))


class ImageWithdrawal(TimeStamped):
    """An image out of a campaign's pool (``campaign``, where it was reported), or out of every
    campaign's pool when a manager extended it (``everywhere``): no new batch gets it. Work already
    done on it stays. Deleting the row (the admin's "put back") returns it to the pool.
    ``withdrawn_by``: the manager who decided; empty when trusted reports reached
    ``IMAGE_REPORT_THRESHOLD``."""

    objects = ImageWithdrawalQuerySet.as_manager()

    image = models.ForeignKey("annotation.Image", on_delete=models.CASCADE, related_name="withdrawals")
    campaign = optional_fk(
        "annotation.Campaign",
        "withdrawals",
        on_delete=models.CASCADE,
        help_text="Where it was reported. Empty only for a withdrawal from every campaign made before "
        "withdrawals had a campaign.",
    )
    everywhere = models.BooleanField(
        default=False, help_text="Out of every campaign's pool, not only this one."
    )
    reports = models.PositiveIntegerField(help_text="Open reports when the image was withdrawn.")
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["image", "campaign"], name="image_withdrawal_once_per_campaign"),
            models.CheckConstraint(
                condition=Q(campaign__isnull=False) | Q(everywhere=True), name="image_withdrawal_has_scope"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.image} withdrawn"
