"""The evaluation data model: reference sets, image sets, metric runs and their scores.

A metric run scores the captions of some captioning systems in one language against a
reference set, over an image set (or every image that has references and a caption). Its
work is split into chunks that any worker can take: one ``text`` chunk per system (corpus
BLEU pools statistics and the CIDEr IDF comes from the references of the whole evaluated
image set, so a system's text metrics are one computation) and ``clip`` chunks of
``METRIC_CLIP_CHUNK_SIZE`` captions. Results are one row per (run, system, image, metric)
and one per (run, system, metric) for the corpus score.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.models import Annotator, Campaign, CaptioningSystem, Image, Language
from core.jobs.models import (
    FINISHED_JOB_STATUSES,
    ChunkedJob,
    JobStatus,
    SingleUnitJob,
    UnitStatus,
    WorkUnit,
)
from core.models import TimeStamped


class Metric(models.TextChoices):
    BLEU_1 = "BLEU-1", "BLEU-1"
    BLEU_2 = "BLEU-2", "BLEU-2"
    BLEU_3 = "BLEU-3", "BLEU-3"
    BLEU_4 = "BLEU-4", "BLEU-4"
    ROUGE_L = "ROUGE-L", "ROUGE-L"
    CIDER = "CIDEr", "CIDEr"
    CIDER_D = "CIDEr-D", "CIDEr-D"
    METEOR = "METEOR", "METEOR"
    CLIPSCORE = "CLIPScore", "CLIPScore"
    REFCLIPSCORE = "RefCLIPScore", "RefCLIPScore"


# METEOR is computed with the text metrics (same chunk, same tokens) by the METEOR 1.5 jar under Java.
TEXT_METRICS: tuple[str, ...] = (
    "BLEU-1",
    "BLEU-2",
    "BLEU-3",
    "BLEU-4",
    "ROUGE-L",
    "CIDEr",
    "CIDEr-D",
    "METEOR",
)
CLIP_METRICS: tuple[str, ...] = ("CLIPScore", "RefCLIPScore")
ALL_METRICS: tuple[str, ...] = TEXT_METRICS + CLIP_METRICS


# --- Image sets and reference sets ---------------------------------------------------------


class ImageSet(TimeStamped):
    """A named set of images to evaluate on (e.g. XM600, the 600 images of the side-by-side study)."""

    name = models.CharField(max_length=200, unique=True)
    language = models.ForeignKey(
        Language,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="image_sets",
        help_text="Empty: the set serves every language.",
    )
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
    name, format and sha256 of the file they came from.
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


# --- Metric runs ------------------------------------------------------------------------------


# The states of every job and unit are the engine's (core.jobs); these names stay for the readers.
RunStatus = JobStatus
ChunkStatus = UnitStatus
FINISHED_RUN_STATUSES = FINISHED_JOB_STATUSES


class MetricRun(ChunkedJob):
    name = models.CharField(max_length=200)
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="metric_runs")
    systems = models.ManyToManyField(CaptioningSystem, related_name="metric_runs")
    image_set = models.ForeignKey(
        ImageSet,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="metric_runs",
        help_text="Empty: every image with references and a caption from the system.",
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
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="metric_runs"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(chunks_done__lte=F("chunks_total")), name="metric_run_progress"
            ),
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="metric_run_status"),
        ]
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
            models.CheckConstraint(condition=Q(status__in=ChunkStatus.values), name="metric_chunk_status"),
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
            models.CheckConstraint(condition=Q(metric__in=Metric.values), name="caption_score_metric"),
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
            models.CheckConstraint(condition=Q(metric__in=Metric.values), name="corpus_score_metric"),
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


# --- Retrieval checks: per-language trust in a CLIP model -------------------------------------


class RetrievalSource(models.TextChoices):
    CAMPAIGNS = "campaigns", "human captions of caption campaigns"
    REFERENCE_SETS = "reference_sets", "imported reference sets"


class RetrievalCheck(ChunkedJob):
    """Text→image and image→text recall of one CLIP model per language, over human captions.

    The data selection is frozen when the check is created (the ``texts`` chunks hold the
    captions), so a check says what it measured even after captions are added or edited. The
    model is recorded as set (``params``) and as loaded by the workers (``model_id``, with the
    checkpoint's hash). ``results`` maps a language code to its recalls
    (``evaluation.metrics.clip.retrieval.RetrievalResult.as_dict``).
    """

    name = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=20, choices=RetrievalSource.choices)
    campaigns = models.ManyToManyField(Campaign, related_name="retrieval_checks", blank=True)
    reference_sets = models.ManyToManyField(ReferenceSet, related_name="retrieval_checks", blank=True)
    languages = models.JSONField(default=list, help_text="Language codes checked, in order.")
    params = models.JSONField(
        default=dict, blank=True, help_text="CLIP model, pretrained tag, checkpoint, prompt, orientation."
    )
    model_key = models.CharField(
        max_length=400,
        blank=True,
        help_text="Model name, weights tag and checkpoint hash: what runs match on.",
    )
    model_id = models.CharField(max_length=300, blank=True, help_text="The model as the workers loaded it.")
    results = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="retrieval_checks",
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(chunks_done__lte=F("chunks_total")), name="retrieval_check_progress"
            ),
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="retrieval_check_status"),
            models.CheckConstraint(
                condition=Q(source__in=RetrievalSource.values), name="retrieval_check_source"
            ),
        ]
        indexes = [models.Index(fields=["model_key", "status"], name="retrieval_check_model_status")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name or 'retrieval check'}"

    @property
    def model_label(self) -> str:
        params = self.params or {}
        label = params.get("clip_model", "")
        if params.get("clip_pretrained"):
            label += f" ({params['clip_pretrained']})"
        if params.get("clip_checkpoint"):
            label += f" checkpoint {params['clip_checkpoint']}"
        return label


class RetrievalChunkKind(models.TextChoices):
    IMAGES = "images", "image embeddings"
    TEXTS = "texts", "caption embeddings"
    RECALL = "recall", "recall of one language"


class RetrievalChunk(WorkUnit):
    """One unit of a retrieval check that a worker takes, retries and resumes.

    ``images``: image ids to embed (cached per model and file). ``texts``: ``[[image id, caption],
    ...]`` of one language to embed (cached per model, prompt and text). ``recall``: one language's
    recalls from the cached embeddings, sent once every embedding chunk is done.
    """

    retrieval_check = models.ForeignKey(RetrievalCheck, on_delete=models.CASCADE, related_name="chunks")
    kind = models.CharField(max_length=6, choices=RetrievalChunkKind.choices)
    language = models.CharField(max_length=16, blank=True)
    index = models.PositiveIntegerField()
    payload = models.JSONField(default=list)

    class Meta:
        ordering = ["retrieval_check", "kind", "language", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["retrieval_check", "kind", "language", "index"], name="retrieval_chunk_unique"
            ),
            models.CheckConstraint(condition=Q(status__in=ChunkStatus.values), name="retrieval_chunk_status"),
            models.CheckConstraint(
                condition=Q(kind__in=RetrievalChunkKind.values), name="retrieval_chunk_kind"
            ),
        ]
        indexes = [models.Index(fields=["retrieval_check", "status"], name="retrieval_chunk_check_status")]

    def __str__(self) -> str:
        return f"check {self.retrieval_check_id} / {self.kind} {self.language} {self.index}"


# --- CLIP fine-tuning: models learned from the platform's own people (seed 001, sec. 3) --------------


class ClipModel(TimeStamped):
    """A CLIP model that metric runs can choose by name: an architecture with weights (a pretrained tag or
    a checkpoint file on the workers), registered by hand or by a fine-tuning run.

    ``architecture`` holds an open_clip config for architectures open_clip does not ship (registered
    before loading); empty for built-in ones. ``is_demo`` marks the demo's tiny random model: its
    numbers are never results. ``provenance`` records where the weights came from (for a fine-tuned
    model: base model id, data selection, hyperparameters, seeds, package versions, dev and test figures).
    """

    name = models.CharField(max_length=100, unique=True)
    model_name = models.CharField(max_length=200, help_text="open_clip architecture name.")
    pretrained = models.CharField(
        max_length=200, blank=True, help_text="Pretrained tag (or its preprocessing)."
    )
    checkpoint = models.CharField(max_length=500, blank=True, help_text="Weights file on the workers.")
    architecture = models.JSONField(default=dict, blank=True)
    model_id = models.CharField(
        max_length=300, blank=True, help_text="The model as loaded (with the weights' hash)."
    )
    base_model_id = models.CharField(max_length=300, blank=True)
    is_demo = models.BooleanField(
        default=False, help_text="A tiny random model for trying the workflow; its numbers are never results."
    )
    description = models.TextField(blank=True)
    provenance = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(pretrained="") | ~Q(checkpoint=""), name="clip_model_has_weights"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} (tiny demo model)" if self.is_demo else self.name

    @property
    def clip_params(self) -> dict:
        """The ``clip_*`` parameters a metric run or a check records for this model."""
        params = {
            "clip_model": self.model_name,
            "clip_pretrained": self.pretrained,
            "clip_checkpoint": self.checkpoint,
            "clip_registered": self.name,
        }
        if self.architecture:
            params["clip_model_config"] = self.architecture
        return params


class TrainableParameters(models.TextChoices):
    ALL = "all", "all parameters"
    TEXT = "text", "text tower and its projection"
    PROJECTIONS = "projections", "image and text projections"


class ClipFineTune(SingleUnitJob):
    """A fine-tuning run: a base CLIP model trained on the platform's captions (contrastive loss) and
    ratings (Pearson loss), early-stopped on dev, judged on a test split it never trained on.

    The data is frozen at creation in ``data`` (pairs and rated captions with their split), so the run
    says what it trained on whatever happens to the campaigns later, and a resumed run trains on the
    same data. Progress fields are updated by the worker; ``checkpoint`` is the resumable state,
    ``output`` the fine-tuned weights. ``results`` holds the test split's per-caption scores of the base
    and the fine-tuned model (the before/after table is computed from them by the research layer).
    """

    name = models.CharField(max_length=200)
    base = models.ForeignKey(
        ClipModel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="fine_tunes",
        help_text="Empty: the CLIP_* settings.",
    )
    base_params = models.JSONField(default=dict, blank=True)
    campaigns = models.ManyToManyField(Campaign, related_name="clip_fine_tunes", blank=True)
    languages = models.JSONField(default=list, blank=True)
    selection = models.JSONField(default=dict, blank=True, help_text="What data was selected, with counts.")
    data = models.JSONField(default=dict, blank=True)
    config = models.JSONField(
        default=dict, blank=True, help_text="Learning rate, batch size, epochs, seeds, …"
    )
    split_seed = models.IntegerField(default=0)
    register_as = models.CharField(max_length=100, help_text="Name of the CLIP model this run registers.")
    epoch = models.PositiveIntegerField(default=0)
    step = models.PositiveIntegerField(default=0)
    loss_contrastive = models.FloatField(null=True, blank=True)
    loss_pearson = models.FloatField(null=True, blank=True)
    dev_score = models.FloatField(null=True, blank=True)
    history = models.JSONField(default=list, blank=True)
    checkpoint = models.CharField(max_length=500, blank=True)
    output = models.CharField(max_length=500, blank=True)
    device = models.CharField(max_length=40, blank=True)
    results = models.JSONField(default=dict, blank=True)
    model = models.OneToOneField(
        ClipModel, on_delete=models.SET_NULL, null=True, blank=True, related_name="fine_tune"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="clip_fine_tunes",
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="clip_fine_tune_status"),
        ]
        indexes = [models.Index(fields=["status"], name="clip_fine_tune_status_idx")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"

    @classmethod
    def orphan_seconds(cls) -> float:
        # A training step with a cold disk cache may keep a live worker from beating for minutes.
        return float(settings.JOB_FINETUNE_ORPHAN_SECONDS)

    @property
    def progress(self) -> float:
        epochs = (self.config or {}).get("epochs") or 0
        if self.status == RunStatus.SUCCEEDED:
            return 1.0
        return min(1.0, self.epoch / epochs) if epochs else 0.0

    @property
    def is_demo(self) -> bool:
        return bool(self.base_params.get("is_demo"))
