"""Models of recruitment and onboarding (imported at the end of ``annotation.models``).

* ``EntryLink``: a revocable link to one campaign, with an expiry and a cap on sign-ups, the
  completion code and URL the participant gets at the end, an optional quota of batches, and the
  screen-out code and URL for those whose languages do not fit.
* ``Enrolment``: one person admitted to one campaign through a link, with the crowd platform's
  ids (Prolific PROLIFIC_PID/STUDY_ID/SESSION_ID, MTurk workerId/hitId/assignmentId). The ids are
  shown to project managers only and never appear in a URL.
* ``CampaignOnboarding``: a campaign's tutorial threshold and pilot mode; ``TutorialItem``: its
  gold items; ``TutorialAttempt``: the order an annotator meets them in; ``TutorialAnswer`` and
  ``TutorialResult``: what each annotator answered and scored.
* ``CaptionReview``: a manager's decision on a caption written in a pilot campaign.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.workforce import scoring
from core.models import TimeStamped, optional_fk


class EntryLink(TimeStamped):
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="entry_links")
    # 32 random bytes, URL-safe: the only secret of the link (it is the path).
    token = models.CharField(max_length=64, unique=True, editable=False)
    label = models.CharField(max_length=200, blank=True, help_text="For you: e.g. 'Prolific study, wave 1'.")
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    max_signups = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="sign-up cap", help_text="People admitted at most; empty: no cap."
    )
    signups = models.PositiveIntegerField(default=0, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    completion_code = models.CharField(
        max_length=64, blank=True, help_text="Shown at the end (e.g. the Prolific completion code)."
    )
    completion_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Where participants are sent at the end (e.g. https://app.prolific.com/submissions/complete?cc=…).",
    )
    quota_batches = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Batches per participant; the completion page comes after the last one. Empty: no limit "
        "(the completion page comes after every batch).",
    )
    # A participant whose languages do not fit is screened out: the crowd platform needs to hear it
    # (Prolific takes a screen-out completion code or URL; otherwise the worker returns the study).
    screenout_code = models.CharField(
        max_length=64,
        blank=True,
        verbose_name="screen-out code",
        help_text="Shown to participants whose languages do not fit the study (e.g. Prolific's screen-out "
        "completion code). Empty: they are asked to return the study on their platform.",
    )
    screenout_url = models.URLField(
        max_length=500,
        blank=True,
        verbose_name="screen-out URL",
        help_text="Where screened-out participants are sent back to (e.g. "
        "https://app.prolific.com/submissions/complete?cc=…).",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(max_signups__isnull=True) | Q(max_signups__gte=1), name="entry_link_cap_positive"
            ),
            models.CheckConstraint(
                condition=Q(max_signups__isnull=True) | Q(signups__lte=F("max_signups")),
                name="entry_link_signups_within_cap",
            ),
            models.CheckConstraint(
                condition=Q(quota_batches__isnull=True) | Q(quota_batches__gte=1),
                name="entry_link_quota_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.label or f"entry link {self.pk} to {self.campaign}"


class CrowdPlatform(models.TextChoices):
    NONE = "", "none (account with a password)"
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Amazon Mechanical Turk"


class Enrolment(TimeStamped):
    link = models.ForeignKey(EntryLink, on_delete=models.PROTECT, related_name="enrolments")
    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="enrolments")
    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="enrolments")
    # The account was made by the link: it sees only the campaigns it was enrolled in.
    account_created = models.BooleanField(default=False)
    platform = models.CharField(max_length=10, choices=CrowdPlatform.choices, blank=True, default="")
    worker_id = models.CharField(max_length=64, blank=True, help_text="PROLIFIC_PID or MTurk workerId.")
    study_id = models.CharField(max_length=64, blank=True, help_text="STUDY_ID or MTurk hitId.")
    session_id = models.CharField(max_length=64, blank=True, help_text="SESSION_ID or MTurk assignmentId.")
    skills_declared_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "participant"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="enrolment_unique_annotator"),
            # One crowd worker, one account per campaign, however often they follow the link.
            models.UniqueConstraint(
                fields=["campaign", "platform", "worker_id"],
                condition=~Q(worker_id=""),
                name="enrolment_unique_crowd_worker",
            ),
            models.CheckConstraint(
                condition=Q(platform="", worker_id="")
                | (Q(platform__in=["prolific", "mturk"]) & ~Q(worker_id="")),
                name="enrolment_platform_has_worker_id",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.campaign}"


class CampaignOnboarding(TimeStamped):
    campaign = models.OneToOneField(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="onboarding"
    )
    tutorial_enabled = models.BooleanField(
        default=True, help_text="Annotators answer the gold items below and must pass before any real work."
    )
    pass_threshold = models.FloatField(
        default=0.8, help_text="Share of gold items answered right needed to pass (0 to 1)."
    )
    tutorial_intro = models.TextField(blank=True, help_text="Shown before the first gold item.")
    review_hours = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        verbose_name="review time (hours)",
        help_text="Written tutorial captions are checked within this many hours: a participant whose "
        "result waits for the check is told so. Empty: no time is promised.",
    )
    is_pilot = models.BooleanField(
        default=False,
        verbose_name="pilot",
        help_text="A pilot: every caption written goes to the review page (accept, or return with a comment "
        "the annotator sees).",
    )
    main_campaign = optional_fk(
        "annotation.Campaign",
        "pilots",
        on_delete=models.SET_NULL,
        help_text="A pilot: the main campaign it prepares (its page then shows how the pilot's review stands).",
    )

    class Meta:
        verbose_name = "onboarding and pilot settings"
        verbose_name_plural = "onboarding and pilot settings"
        constraints = [
            models.CheckConstraint(
                condition=Q(pass_threshold__gte=0, pass_threshold__lte=1), name="onboarding_pass_threshold"
            ),
            models.CheckConstraint(
                condition=Q(main_campaign__isnull=True) | ~Q(main_campaign=F("campaign")),
                name="onboarding_pilot_not_its_own_main",
            ),
        ]

    def __str__(self) -> str:
        return f"onboarding of {self.campaign}"


class TutorialItem(TimeStamped):
    """A gold item. Caption and verification campaigns: ``caption`` is rated, ``expected`` is a rating
    code and answers within one level pass (NOT-ENOUGH-INFO only by itself). Side by side:
    ``caption`` left, ``caption_right`` right, ``expected`` is 'left', 'right' or 'similar' and the
    answer passes when it leans the same way ('similar': SIMILAR or a SLIGHTLY-…). Caption campaigns
    also take writing items, ``expected`` = 'write': the image alone is shown, the annotator writes a
    caption, a person checks it later; ``caption`` is then the example shown after the answer, and
    optional (no example is shown when it is empty)."""

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="tutorial_items"
    )
    position = models.PositiveSmallIntegerField(
        default=1,
        help_text="Orders the items here; each participant meets them in a random order of their own.",
    )
    image = models.ForeignKey("annotation.Image", on_delete=models.PROTECT, related_name="+")
    caption = models.TextField(
        blank=True,
        verbose_name="caption (writing items: example shown after the answer)",
        help_text="Rating items: the caption rated. Side by side: the left-hand caption. Writing items: "
        "optional, the example shown after the participant's answer; empty: no example is shown.",
    )
    caption_right = models.TextField(blank=True, help_text="Side by side only: the right-hand caption.")
    expected = models.CharField(
        max_length=16,
        help_text="Rating: excellent, good, medium, bad or nei. Side by side: left, right or similar. "
        "Caption campaigns also: write (a caption that a person checks).",
    )
    explanation = models.TextField(blank=True, help_text="Feedback shown after the answer.")

    class Meta:
        ordering = ["campaign", "position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "position"], name="tutorial_item_unique_position"),
        ]

    def __str__(self) -> str:
        return f"gold item {self.position} of {self.campaign}"


class TutorialAttempt(TimeStamped):
    """One annotator's attempt at a campaign's tutorial: the seed of the order they meet the gold items
    in (drawn once, so a reload keeps the order; a manager's "another attempt" draws a new one)."""

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="tutorial_attempts"
    )
    annotator = models.ForeignKey(
        "annotation.Annotator", on_delete=models.CASCADE, related_name="tutorial_attempts"
    )
    seed = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="tutorial_attempt_once"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in the tutorial of {self.campaign}"


class TutorialAnswer(TimeStamped):
    item = models.ForeignKey(TutorialItem, on_delete=models.CASCADE, related_name="answers")
    annotator = models.ForeignKey(
        "annotation.Annotator", on_delete=models.CASCADE, related_name="tutorial_answers"
    )
    answer = models.CharField(max_length=16, blank=True)
    # A writing item's caption (checked by a person).
    text = models.TextField(blank=True)
    # None: a written caption not checked yet.
    correct = models.BooleanField(null=True)
    checked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="tutorial_answer_once"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.item}"


class TutorialVerdict(models.TextChoices):
    """A finished tutorial's verdict. Passed and failed are final (only a manager's "another attempt"
    starts over); pending while a written caption not checked yet can still decide it."""

    PASSED = scoring.PASSED, "passed"
    FAILED = scoring.FAILED, "failed"
    PENDING = scoring.PENDING, "pending: a written caption decides"


class TutorialResult(TimeStamped):
    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="tutorial_results"
    )
    annotator = models.ForeignKey(
        "annotation.Annotator", on_delete=models.CASCADE, related_name="tutorial_results"
    )
    # Over the items scored so far (written captions once a person has checked them); the verdict
    # weighs them against every gold item, pending ones included (``scoring.verdict``).
    correct = models.PositiveSmallIntegerField()
    total = models.PositiveSmallIntegerField()
    pending = models.PositiveSmallIntegerField(default=0, help_text="Written captions not checked yet.")
    threshold = models.FloatField()
    verdict = models.CharField(max_length=10, choices=TutorialVerdict.choices)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="tutorial_result_once"),
            models.CheckConstraint(
                condition=Q(correct__lte=F("total")), name="tutorial_result_correct_le_total"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator}: {self.correct}/{self.total} in {self.campaign}"


class ReviewDecision(models.TextChoices):
    ACCEPTED = "accepted", "accepted"
    RETURNED = "returned", "returned with a comment"


class CaptionReview(TimeStamped):
    caption = models.OneToOneField(
        "annotation.WrittenCaption", on_delete=models.CASCADE, related_name="review"
    )
    decision = models.CharField(max_length=10, choices=ReviewDecision.choices)
    comment = models.TextField(blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(decision="accepted") | (Q(decision="returned") & ~Q(comment="")),
                name="caption_review_returned_has_comment",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_decision_display()}: {self.caption}"


class HoldDecision(models.TextChoices):
    HELD = "held", "held: waiting for review"
    ACCEPTED = "accepted", "accepted: counts"
    REJECTED = "rejected", "rejected: kept out of the results"


class BatchHold(TimeStamped):
    """A crowd participant's submitted batch that did not contain enough work to count
    (``annotation.workforce.counting``), with the figures that decided it and the manager's review.

    While held or rejected its assignments are ``HELD`` / ``REJECTED``: stored, but out of every
    result, of the items' K, of the participant's quota and of the completion code. Accepted, the
    batch counts like any other."""

    batch = models.OneToOneField("annotation.Batch", on_delete=models.CASCADE, related_name="hold")
    decision = models.CharField(max_length=10, choices=HoldDecision.choices, default=HoldDecision.HELD)
    # The figures at submit (real images only: control items are judged by the control checks).
    images = models.PositiveSmallIntegerField()
    not_enough_info = models.PositiveSmallIntegerField(
        verbose_name="rated NOT-ENOUGH-INFO", help_text="Images rated NOT-ENOUGH-INFO."
    )
    without_caption = models.PositiveSmallIntegerField(
        help_text="Images left without a caption (reported on screen 2)."
    )
    max_unanswered_share = models.FloatField(
        verbose_name="threshold", help_text="CROWD_MAX_UNANSWERED_SHARE when the batch was submitted."
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "held batch"
        verbose_name_plural = "held batches"
        constraints = [
            models.CheckConstraint(
                condition=Q(not_enough_info__lte=F("images"), without_caption__lte=F("images")),
                name="batch_hold_figures_within_batch",
            ),
            models.CheckConstraint(
                condition=Q(decision="held") | Q(reviewed_at__isnull=False),
                name="batch_hold_decision_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"held batch {self.batch_id}"
