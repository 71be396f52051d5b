"""Reads of fine-tuning runs and registered CLIP models."""

from __future__ import annotations

from django.db.models import QuerySet

from core.lookups import row_by_id
from evaluation.models import ClipFineTune, ClipModel


def fine_tune_queryset() -> QuerySet[ClipFineTune]:
    return ClipFineTune.objects.select_related("base", "model").prefetch_related("campaigns").defer("data")


def fine_tune_get(*, run_id: int) -> ClipFineTune:
    return row_by_id(fine_tune_queryset(), run_id, "fine-tuning run")


def clip_model_queryset() -> QuerySet[ClipModel]:
    return ClipModel.objects.select_related("fine_tune")


def clip_model_detail(*, model_id: int) -> ClipModel:
    return row_by_id(clip_model_queryset(), model_id, "registered CLIP model")


def split_of(run: ClipFineTune) -> dict[int, str]:
    """{image id: split} of a run."""
    return {int(k): v for k, v in (run.data.get("splits") or {}).items()}
