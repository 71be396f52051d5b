"""Retrieval checks: per-language trust in a CLIP model, as a job kind."""

from __future__ import annotations

from django.db import models

from annotation.models import Campaign
from core.jobs.models import (
    ChunkedJob,
    WorkUnit,
    chunked_job_constraints,
)
from core.models import one_of
from evaluation.models.fields import clip_weights_label, embedding_chunk_meta, started_by
from evaluation.models.sets import ReferenceSet


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
    created_by = started_by("retrieval_checks")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            *chunked_job_constraints("retrieval_check"),
            one_of("source", RetrievalSource, "retrieval_check_source"),
        ]
        indexes = [models.Index(fields=["model_key", "status"], name="retrieval_check_model_status")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name or 'retrieval check'}"

    @property
    def model_label(self) -> str:
        params = self.params or {}
        if params.get("clip_registered"):
            return f"{params['clip_registered']} (registered)"
        return clip_weights_label(params)


class RetrievalChunkKind(models.TextChoices):
    IMAGES = "images", "image embeddings"
    TEXTS = "texts", "caption embeddings"
    RECALL = "recall", "recall of one language"


class EmbeddingChunk(WorkUnit):
    """What the chunk models of CLIP checks (retrieval, zero-shot and foil) share: a subclass adds the
    foreign key to its check and its ``kind`` (image embeddings, text embeddings, one language's measure)."""

    language = models.CharField(max_length=16, blank=True)
    index = models.PositiveIntegerField()
    payload = models.JSONField(default=list)

    class Meta:
        abstract = True


class RetrievalChunk(EmbeddingChunk):
    """One unit of a retrieval check that a worker takes, retries and resumes.

    ``images``: image ids to embed (cached per model and file). ``texts``: ``[[image id, caption],
    ...]`` of one language to embed (cached per model, prompt and text). ``recall``: one language's
    recalls from the cached embeddings, sent once every embedding chunk is done.
    """

    retrieval_check = models.ForeignKey(RetrievalCheck, on_delete=models.CASCADE, related_name="chunks")
    kind = models.CharField(max_length=6, choices=RetrievalChunkKind.choices)

    Meta = embedding_chunk_meta("retrieval_check", RetrievalChunkKind, "retrieval_chunk")

    def __str__(self) -> str:
        return f"check {self.retrieval_check_id} / {self.kind} {self.language} {self.index}"
