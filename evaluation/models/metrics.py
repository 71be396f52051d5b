"""The metrics a run can compute, by name: text metrics first, then the CLIP-based ones."""

from __future__ import annotations

from django.db import models

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

# The choices of the metric columns: each name once, its member name in capitals with _ for -.
Metric = models.TextChoices(
    "Metric", [(name.upper().replace("-", "_"), (name, name)) for name in ALL_METRICS], module=__name__
)
