"""Metric runs: their chunks, caption and corpus scores, and the CLIP embeddings they cache.

A metric run scores the captions of some captioning systems in one language against a
reference set, over an image set (or every image that has references and a caption). Its
work is split into chunks that any worker can take: one ``text`` chunk per system (corpus
BLEU pools statistics and the CIDEr IDF comes from the references of the whole evaluated
image set, so a system's text metrics are one computation) and ``clip`` chunks of
``METRIC_CLIP_CHUNK_SIZE`` captions. Results are one row per (run, system, image, metric)
and one per (run, system, metric) for the corpus score.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotation.models import CaptioningSystem, Image, Language
from core.jobs.models import (
    FINISHED_JOB_STATUSES,
    ChunkedJob,
    JobStatus,
    UnitStatus,
    WorkUnit,
    chunked_job_constraints,
)
from core.models import TimeStamped, one_of, optional_fk
from evaluation.models.fields import started_by
from evaluation.models.metrics import Metric
from evaluation.models.sets import ImageSet, ReferenceSet

# The states of every job and unit are the engine's (core.jobs); these names stay for the readers.
RunStatus = JobStatus
ChunkStatus = UnitStatus
FINISHED_RUN_STATUSES = FINISHED_JOB_STATUSES


class MetricRun(ChunkedJob):
    name = models.CharField(max_length=200)
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="metric_runs")
    systems = models.ManyToManyField(CaptioningSystem, related_name="metric_runs")
    image_set = optional_fk(
        ImageSet, "metric_runs", help_text="Empty: every image with references and a caption from the system."
    )
    reference_set = models.ForeignKey(ReferenceSet, on_delete=models.PROTECT, related_name="metric_runs")
    metrics = models.JSONField(default=list, help_text="Metric names, e.g. ['BLEU-4', 'CIDEr-D'].")
    # What the numbers depend on besides the data: tokenisation scheme, CLIP model, tag, checkpoint, prompt.
    params = models.JSONField(default=dict, blank=True)
    signatures = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "Metric -> signature of its numbers (tokenisation scheme and version, case, punctuation, CIDEr "
            "document frequencies, implementation; CLIP model, weights, prompt, image orientation). Two numbers "
            "are comparable exactly when their signatures match. Empty for runs made before signatures."
        ),
    )
    # Requested metrics a chunk could not compute while the rest were stored: {metric: {system: reason}}
    # (METEOR without Java). The run still succeeds: its other scores are complete and correct.
    not_computed = models.JSONField(default=dict, blank=True)
    created_by = started_by("metric_runs")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = chunked_job_constraints("metric_run")
        indexes = [models.Index(fields=["status"], name="metric_run_status_idx")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"

    def signature(self, metric: str) -> str:
        """The signature of this run's ``metric`` numbers, or a clear "not recorded" for older runs."""
        from evaluation.metrics.signatures import NOT_RECORDED

        return (self.signatures or {}).get(metric) or NOT_RECORDED

    @property
    def signature_groups(self) -> list[tuple[list[str], str]]:
        """``[(metrics, signature), ...]``: the run's metrics grouped by shared signature, for display."""
        from evaluation.metrics.signatures import group_signatures

        return group_signatures(list(self.metrics or []), self.signatures)


class ChunkKind(models.TextChoices):
    TEXT = "text", "text metrics"
    CLIP = "clip", "CLIP metrics"


class MetricChunk(WorkUnit):
    """The unit of work a worker takes, retries and resumes: some metrics of one system on some images."""

    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="chunks")
    system = models.ForeignKey(CaptioningSystem, on_delete=models.PROTECT, related_name="metric_chunks")
    kind = models.CharField(max_length=4, choices=ChunkKind.choices)
    index = models.PositiveIntegerField()
    image_ids = models.JSONField(default=list)

    class Meta:
        ordering = ["run", "system", "kind", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "system", "kind", "index"], name="metric_chunk_unique"),
            one_of("status", ChunkStatus, "metric_chunk_status"),
        ]
        indexes = [models.Index(fields=["run", "status"], name="metric_chunk_run_status")]

    def __str__(self) -> str:
        return f"run {self.run_id} / {self.system_id} / {self.kind} {self.index}"


class CaptionScore(TimeStamped):
    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="caption_scores")
    system = models.ForeignKey(CaptioningSystem, on_delete=models.PROTECT, related_name="caption_scores")
    image = models.ForeignKey(Image, on_delete=models.PROTECT, related_name="caption_scores")
    metric = models.CharField(max_length=16, choices=Metric.choices)
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "system", "image", "metric"], name="caption_score_unique"),
            one_of("metric", Metric, "caption_score_metric"),
        ]
        indexes = [models.Index(fields=["run", "metric"], name="caption_score_run_metric")]

    def __str__(self) -> str:
        return f"{self.metric}={self.value:.4f} ({self.system_id}, {self.image_id})"


class CorpusScore(TimeStamped):
    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="corpus_scores")
    system = models.ForeignKey(CaptioningSystem, on_delete=models.PROTECT, related_name="corpus_scores")
    metric = models.CharField(max_length=16, choices=Metric.choices)
    value = models.FloatField()

    class Meta:
        ordering = ["run", "system", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["run", "system", "metric"], name="corpus_score_unique"),
            one_of("metric", Metric, "corpus_score_metric"),
        ]

    def __str__(self) -> str:
        return f"{self.metric}={self.value:.4f} ({self.system_id})"


class EmbeddingKind(models.TextChoices):
    IMAGE = "image", "image"
    TEXT = "text", "text"


class ClipEmbedding(TimeStamped):
    """A cached CLIP embedding of an image file or of a text, per model key (weights, preprocessing,
    precision) and sha256 of the content (the file's bytes, or the text's UTF-8 as embedded)."""

    model_id = models.CharField(max_length=300)
    kind = models.CharField(max_length=5, choices=EmbeddingKind.choices, default=EmbeddingKind.IMAGE)
    content_hash = models.CharField(max_length=64)
    vector = models.BinaryField(help_text="float32 little-endian bytes of the L2-normalised embedding.")
    dim = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["model_id", "kind", "content_hash"], name="clip_embedding_unique_kind"
            ),
            models.CheckConstraint(condition=Q(dim__gte=1), name="clip_embedding_dim"),
            models.CheckConstraint(condition=Q(kind__in=["image", "text"]), name="clip_embedding_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.model_id} / {self.kind} {self.content_hash[:12]}"
