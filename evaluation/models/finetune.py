"""CLIP fine-tuning: models learned from the platform's own people (seed 001, sec. 3), as a job kind."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Campaign
from core.jobs.models import (
    SingleUnitJob,
    job_constraints,
)
from core.models import TimeStamped, optional_fk
from evaluation.models.fields import started_by
from evaluation.models.runs import RunStatus


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
        verbose_name = "CLIP model"
        verbose_name_plural = "CLIP models"
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
    base = optional_fk(ClipModel, "fine_tunes", help_text="Empty: the CLIP_* settings.")
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
    created_by = started_by("clip_fine_tunes")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = "CLIP fine-tuning run"
        verbose_name_plural = "CLIP fine-tuning runs"
        constraints = job_constraints("clip_fine_tune")
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
