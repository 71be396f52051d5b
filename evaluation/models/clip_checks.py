"""Zero-shot classification and foil checks of a CLIP model, per language, as one job kind."""

from __future__ import annotations

from django.db import models

from core.jobs.models import ChunkedJob, chunked_job_constraints
from core.models import one_of
from evaluation.models.fields import clip_weights_label, embedding_chunk_meta, started_by
from evaluation.models.retrieval import EmbeddingChunk


class ClipProbe(models.TextChoices):
    ZEROSHOT = "zeroshot", "zero-shot classification"
    FOIL = "foil", "foils"


class ClipProbeCheck(ChunkedJob):
    """One probe of a CLIP model per language: zero-shot classification (seed 004) or foils (seed 001).

    The imported data is frozen in the check's chunks when it is created (labels and prompts, or
    caption/foil pairs), so a check says what it measured. ``data`` holds what the import decided
    (class counts per language, the foil validity rule, pairs dropped). ``results`` maps a language
    code to its measures (``evaluation.clip_checks.measures``).
    """

    name = models.CharField(max_length=200, blank=True)
    probe = models.CharField(max_length=10, choices=ClipProbe.choices)
    languages = models.JSONField(default=list, help_text="Language codes checked, in order.")
    params = models.JSONField(default=dict, blank=True, help_text="CLIP model, pretrained tag, checkpoint.")
    data = models.JSONField(default=dict, blank=True, help_text="What the import kept and why.")
    model_key = models.CharField(max_length=400, blank=True)
    model_id = models.CharField(max_length=300, blank=True, help_text="The model as the workers loaded it.")
    results = models.JSONField(default=dict, blank=True)
    # Apart from ``results`` (and deferred by the reads), as a full VALSE set is thousands of pairs per
    # language: each language's ``[key, phenomenon, caption CLIPScore, foil CLIPScore]``.
    pairs = models.JSONField(default=dict, blank=True, help_text="Foils: every pair's two CLIPScores.")
    created_by = started_by("clip_probe_checks")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = "CLIP zero-shot or foil check"
        verbose_name_plural = "CLIP zero-shot and foil checks"
        constraints = [
            *chunked_job_constraints("clip_probe_check"),
            one_of("probe", ClipProbe, "clip_probe_check_probe"),
        ]
        indexes = [models.Index(fields=["model_key", "probe", "status"], name="clip_probe_model_status")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name or self.get_probe_display()}"

    @property
    def model_label(self) -> str:
        return clip_weights_label(self.params)


class ClipProbeChunkKind(models.TextChoices):
    IMAGES = "images", "image embeddings"
    TEXTS = "texts", "text embeddings"
    SCORE = "score", "measures of one language"


class ClipProbeChunk(EmbeddingChunk):
    """One unit of a probe check. ``images``: image ids. ``texts``: one language's rows — zero-shot
    ``[class id, prompted label]``, foils ``[pair key, image id, phenomenon, caption, foil]``.
    ``score``: one language's measures from the cached embeddings, once every embedding chunk is done.
    Zero-shot image chunks hold ``[image id, class id]``."""

    probe_check = models.ForeignKey(ClipProbeCheck, on_delete=models.CASCADE, related_name="chunks")
    kind = models.CharField(max_length=6, choices=ClipProbeChunkKind.choices)

    Meta = embedding_chunk_meta("probe_check", ClipProbeChunkKind, "clip_probe_chunk")

    def __str__(self) -> str:
        return f"probe check {self.probe_check_id} / {self.kind} {self.language} {self.index}"
