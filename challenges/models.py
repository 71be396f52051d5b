"""The evaluation server's data: benchmarks, their phases, teams and invitations, submissions and scores.

A **benchmark** has languages, each with the reference set its submissions are scored against, and
phases. A **phase** (validation or test) scores over its image set; a test phase's references never
leave the server and its images are split, by the phase's stored seed, into a public part (scores
shown while the phase runs) and a private part (the final ranking, shown once the host closes the
phase). A **submission** is a scoring job of the job engine: one unit per submitted language.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from annotation.models import Image, Language
from core.jobs.models import ChunkedJob, JobStatus, UnitStatus, WorkUnit
from core.models import Named, TimeStamped
from evaluation.models import ALL_METRICS, ClipModel, ImageSet, Metric, ReferenceSet

DEFAULT_METRICS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR"]
ACTIVE_STATUSES = (JobStatus.PENDING, JobStatus.QUEUED, JobStatus.RUNNING)
# A submission's state in the viewer's language (the job engine's labels are its stored values).
STATUS_LABELS = {
    JobStatus.PENDING: pgettext_lazy("submission state", "waiting"),
    JobStatus.QUEUED: pgettext_lazy("submission state", "queued"),
    JobStatus.RUNNING: pgettext_lazy("submission state", "being scored"),
    JobStatus.SUCCEEDED: pgettext_lazy("submission state", "scored"),
    JobStatus.FAILED: pgettext_lazy("submission state", "failed"),
}


def default_metrics() -> list[str]:
    return list(DEFAULT_METRICS)


def default_reference_counts() -> list[int]:
    return [0]


class Benchmark(Named):
    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(
        blank=True, help_text="Instructions for the teams: the task, the file formats, the rules."
    )
    languages = models.ManyToManyField(Language, through="BenchmarkLanguage", related_name="benchmarks")


class BenchmarkLanguage(TimeStamped):
    """A language of a benchmark and the references its submissions are scored against."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="benchmark_languages")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="benchmark_languages")
    reference_set = models.ForeignKey(ReferenceSet, on_delete=models.PROTECT, related_name="benchmarks")
    fresh_reference_set = models.ForeignKey(
        ReferenceSet,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="fresh_benchmarks",
        help_text="Fresh references of the same images, written and verified on this platform and never "
        "exported: every entry is also scored on them, and the leaderboard shows both rankings and each "
        "entry's rank change (how much of a ranking on public references is memorisation).",
    )

    class Meta:
        ordering = ["benchmark", "language__code"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "language"], name="benchmark_language_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark} / {self.language.code}"


class PhaseKind(models.TextChoices):
    VALIDATION = "validation", _("validation (references downloadable, per-image scores)")
    TEST = "test", _("test (hidden references, public/private split)")


class Visibility(models.TextChoices):
    HOSTS = "hosts", _("hosts only")
    PARTICIPANTS = "participants", _("teams of the benchmark")
    PUBLIC = "public", _("everyone")


def phase_settings_problems(metrics: object, ranking_metric: str, reference_counts: object) -> dict[str, str]:
    """What is wrong with a phase's metrics, ranking metric and reference counts, by field (empty: nothing).

    A metric must be one the scorers compute (a misspelt name would be stored and never computed), and the
    ranking metric one of the phase's metrics (else the leaderboard and the choice of entries for human
    evaluation would rank by different metrics)."""
    problems = {}
    if not isinstance(metrics, list) or not metrics or not all(isinstance(m, str) for m in metrics):
        problems["metrics"] = _('A list of metric names, e.g. ["BLEU-4", "CIDEr-D"].')
    else:
        unknown = [m for m in metrics if m not in ALL_METRICS]
        if unknown:
            problems["metrics"] = _("Unknown metric(s) %(unknown)s; the scorers compute %(known)s.") % {
                "unknown": ", ".join(unknown),
                "known": ", ".join(ALL_METRICS),
            }
        elif len(set(metrics)) != len(metrics):
            problems["metrics"] = _("Each metric once.")
        elif ranking_metric not in metrics:
            problems["ranking_metric"] = _(
                "The ranking metric %(metric)s is not among the phase's metrics (%(metrics)s): rank by one of "
                "them, or add it."
            ) % {"metric": ranking_metric, "metrics": ", ".join(metrics)}
    if (
        not isinstance(reference_counts, list)
        or not reference_counts
        or not all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= 100 for k in reference_counts)
        or len(set(reference_counts)) != len(reference_counts)
    ):
        problems["reference_counts"] = _(
            "A list of distinct reference counts from 0 to 100, e.g. [0, 5] (0: all references)."
        )
    return problems


class Phase(TimeStamped):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="phases")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=12, choices=PhaseKind.choices)
    image_set = models.ForeignKey(ImageSet, on_delete=models.PROTECT, related_name="phases")
    starts_at = models.DateTimeField(null=True, blank=True, help_text="Empty: from when the host opens it.")
    ends_at = models.DateTimeField(null=True, blank=True, help_text="Empty: until the host closes it.")
    is_open = models.BooleanField(default=False, help_text="Teams may submit (within the dates).")
    closed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set when the host closes the phase: the private ranking is revealed.",
    )
    max_per_day = models.PositiveIntegerField(default=5, help_text="Submissions per team per UTC day.")
    max_total = models.PositiveIntegerField(default=50, help_text="Submissions per team in the phase.")
    max_concurrent = models.PositiveIntegerField(
        default=1, help_text="Submissions of a team scoring at once."
    )
    selection_limit = models.PositiveIntegerField(
        default=2, help_text="How many submissions a team may select for the final ranking."
    )
    metrics = models.JSONField(default=default_metrics, help_text="Metric names to compute.")
    ranking_metric = models.CharField(max_length=16, choices=Metric.choices, default=Metric.CIDER_D)
    reference_counts = models.JSONField(
        default=default_reference_counts,
        help_text="Reference counts to score with: 0 = all references, k = the first k of each image (c5: 5).",
    )
    visibility = models.CharField(max_length=12, choices=Visibility.choices, default=Visibility.PARTICIPANTS)
    split_seed = models.BigIntegerField(
        default=0, help_text="Seed of the public/private split (test phases)."
    )
    public_share = models.FloatField(default=0.5, help_text="Share of the test images in the public part.")
    clip_model = models.ForeignKey(
        ClipModel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="phases",
        help_text="For CLIPScore/RefCLIPScore (when the metrics name them); empty: the settings' CLIP_MODEL.",
    )
    accepted_formats = models.JSONField(
        default=list,
        blank=True,
        help_text="The result-file formats teams may upload (see docs/evaluation-server.md); empty: every format.",
    )
    human_comparison = models.BooleanField(
        default=True,
        help_text="Also score every entry against the references less the last of each image, so that the human "
        "row (that held-out caption scored as a prediction) is comparable.",
    )

    class Meta:
        ordering = ["benchmark", "starts_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "name"], name="phase_unique_name"),
            models.CheckConstraint(
                condition=Q(public_share__gt=0, public_share__lt=1), name="phase_public_share"
            ),
            models.CheckConstraint(condition=Q(kind__in=PhaseKind.values), name="phase_kind"),
            models.CheckConstraint(condition=Q(visibility__in=Visibility.values), name="phase_visibility"),
            models.CheckConstraint(
                condition=Q(ends_at__isnull=True) | Q(starts_at__isnull=True) | Q(ends_at__gt=F("starts_at")),
                name="phase_dates_in_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark} / {self.name}"

    def clean(self):
        super().clean()
        problems = phase_settings_problems(self.metrics, self.ranking_metric, self.reference_counts)
        if problems:
            raise ValidationError(problems)

    def save(self, *args, **kwargs):
        # Checked on every save, not only in forms: the admin, create_benchmark and any service refuse alike.
        problems = phase_settings_problems(self.metrics, self.ranking_metric, self.reference_counts)
        if problems:
            raise ValidationError(problems)
        super().save(*args, **kwargs)

    @property
    def ranked_by(self) -> str:
        """The metric the phase ranks by: the one rule every leaderboard and every choice of top entries
        reads (a phase saved before its settings were checked falls back to its first metric)."""
        return self.ranking_metric if self.ranking_metric in self.metrics else self.metrics[0]

    @property
    def is_test(self) -> bool:
        return self.kind == PhaseKind.TEST

    @property
    def private_revealed(self) -> bool:
        return self.closed_at is not None


class Team(Named):
    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="challenge_teams", blank=True)
    benchmarks = models.ManyToManyField(Benchmark, related_name="teams", blank=True)


class Invitation(TimeStamped):
    """A one-use link that creates a participant account in ``team``."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True, editable=False)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True, editable=False)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.team} ({self.token[:6]}…)"


class Submission(ChunkedJob):
    """A team's result file for a phase, its captions, and the scoring job over them (one unit per language)."""

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="submissions")
    team = models.ForeignKey(
        Team, on_delete=models.PROTECT, related_name="submissions", null=True, blank=True
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    method_name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    paper_url = models.URLField(blank=True)
    code_url = models.URLField(blank=True)
    file = models.FileField(upload_to="submissions/%Y/%m/", blank=True)
    file_name = models.CharField(max_length=255, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    languages = models.JSONField(default=list, help_text="Codes of the languages submitted.")
    is_baseline = models.BooleanField(
        default=False, help_text="A host's reference entry, marked on leaderboards."
    )
    is_human = models.BooleanField(
        default=False,
        help_text="The human row: one held-out reference per image (the last of each), scored as a prediction "
        "against the remaining references.",
    )
    is_selected = models.BooleanField(default=False, help_text="Counts in the team's final ranking.")
    withdrawn_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Withdrawn by its team: on no leaderboard, in no human evaluation; it still counts "
        "toward the phase's limits.",
    )
    signatures = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(chunks_done__lte=F("chunks_total")), name="submission_progress"
            ),
            models.CheckConstraint(condition=Q(status__in=JobStatus.values), name="submission_status"),
            models.CheckConstraint(
                condition=Q(team__isnull=False) | Q(is_baseline=True) | Q(is_human=True),
                name="submission_team_or_host_entry",
            ),
        ]
        indexes = [models.Index(fields=["phase", "team", "created_at"], name="submission_quota_idx")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.method_name}"

    @property
    def status_label(self) -> str:
        return str(STATUS_LABELS.get(self.status, self.status))

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def entrant(self) -> str:
        if self.is_human:
            return _("human")
        return self.team.name if self.team_id else _("baseline")


class SubmissionCaption(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="captions")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="+")
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "language", "image"], name="submission_caption_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"submission {self.submission_id} / {self.language_id} / image {self.image_id}"


class ScoringUnit(WorkUnit):
    """One language of a submission: what one worker scores, retries and resumes."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="units")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["submission", "language__code"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "language"], name="scoring_unit_unique"),
            models.CheckConstraint(condition=Q(status__in=UnitStatus.values), name="scoring_unit_status"),
        ]

    def __str__(self) -> str:
        return f"submission {self.submission_id} / {self.language_id}"


class Split(models.TextChoices):
    ALL = "all", _("all images")
    PUBLIC = "public", _("public part")
    PRIVATE = "private", _("private part")


class SubmissionScore(TimeStamped):
    """A corpus score of a submission in one language, reference count and split, with its 95% interval:
    the percentile interval of the same score recomputed on the split's image resamples."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="scores")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")
    reference_count = models.PositiveSmallIntegerField(help_text="0: all references.")
    held_out = models.BooleanField(
        default=False,
        help_text="Scored against the references less the held-out human caption (the human comparison).",
    )
    fresh = models.BooleanField(
        default=False, help_text="Scored against the language's fresh references (see BenchmarkLanguage)."
    )
    split = models.CharField(max_length=8, choices=Split.choices)
    metric = models.CharField(max_length=16, choices=Metric.choices)
    value = models.FloatField()
    low = models.FloatField(null=True)
    high = models.FloatField(null=True)
    n_images = models.PositiveIntegerField()
    signature = models.TextField(blank=True)
    replicates = models.BinaryField(
        null=True,
        editable=False,
        help_text="The score on each of the split's shared image resamples (float64, little-endian): what "
        "the interval, the paired tests and the mean over languages are read from.",
    )

    class Meta:
        ordering = ["submission", "language", "reference_count", "split", "metric"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "language", "reference_count", "held_out", "fresh", "split", "metric"],
                name="submission_score_unique",
            ),
        ]


class ImageScores(TimeStamped):
    """Per-image scores of a submission (one metric, language, reference count), in image-id order: what
    the intervals and paired tests resample. Shown to the team only for validation phases."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="image_scores")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")
    reference_count = models.PositiveSmallIntegerField()
    held_out = models.BooleanField(default=False)
    fresh = models.BooleanField(default=False)
    metric = models.CharField(max_length=16, choices=Metric.choices)
    image_ids = models.JSONField()
    values = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "language", "reference_count", "held_out", "fresh", "metric"],
                name="image_scores_unique",
            ),
        ]


class HumanComparison(TimeStamped):
    """A side-by-side campaign that compares two entries of a phase in one language: ``entry_a`` is the
    campaign's base system m1, ``entry_b`` its test system m2 (ΔS×S is from entry_b's side)."""

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="human_comparisons")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")
    entry_a = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    entry_b = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    campaign = models.OneToOneField(
        "annotation.Campaign", on_delete=models.PROTECT, related_name="challenge_comparison"
    )

    class Meta:
        ordering = ["phase", "language", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["phase", "language", "entry_a", "entry_b"], name="human_comparison_unique"
            ),
            models.CheckConstraint(condition=~Q(entry_a=F("entry_b")), name="human_comparison_two_entries"),
        ]

    def __str__(self) -> str:
        return f"{self.phase} / {self.language_id}: #{self.entry_a_id} vs #{self.entry_b_id}"
