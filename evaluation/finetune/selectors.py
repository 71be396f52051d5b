"""Reads of fine-tuning runs and registered CLIP models."""

from __future__ import annotations

from django.db.models import QuerySet

from core.errors import NotFound
from evaluation.models import ClipFineTune, ClipModel


def fine_tune_queryset() -> QuerySet[ClipFineTune]:
    return ClipFineTune.objects.select_related("base", "model").prefetch_related("campaigns").defer("data")


def fine_tune_get(*, run_id: int) -> ClipFineTune:
    try:
        return fine_tune_queryset().get(pk=run_id)
    except ClipFineTune.DoesNotExist:
        raise NotFound(f"There is no fine-tuning run #{run_id}.") from None


def clip_model_queryset() -> QuerySet[ClipModel]:
    return ClipModel.objects.select_related("fine_tune")


def clip_model_detail(*, model_id: int) -> ClipModel:
    try:
        return clip_model_queryset().get(pk=model_id)
    except ClipModel.DoesNotExist:
        raise NotFound(f"There is no registered CLIP model #{model_id}.") from None


def split_of(run: ClipFineTune) -> dict[int, str]:
    """{image id: split} of a run."""
    return {int(k): v for k, v in (run.data.get("splits") or {}).items()}
