"""The metrics a run can compute, by name: text metrics first, then the CLIP-based ones."""

from __future__ import annotations

from django.db import models


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
