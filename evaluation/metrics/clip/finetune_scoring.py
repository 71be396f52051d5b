"""Scoring during fine-tuning: CLIP cosines of pairs on dev and test, and the early-stopping agreement
(Kendall τ_b with human ratings). Plain functions; torch is imported where it is used."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from evaluation.metrics.clip.finetune import Pair, Rated

__all__ = ["autocast_context", "cosines", "dev_agreement", "encode_batch", "score_cosines"]


def autocast_context(device: str, autocast: str):
    import contextlib

    import torch

    if autocast == "bf16" and device.startswith("cuda"):
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def encode_batch(
    model, tokenizer, pixels: Callable[[str], Any], images: Sequence[str], texts: Sequence[str], device
):
    import torch

    image_batch = torch.stack([pixels(key) for key in images]).to(device)
    tokens = tokenizer(list(texts)).to(device)
    return model.encode_image(image_batch), model.encode_text(tokens)


def cosines(image_features, text_features):
    import torch.nn.functional as F

    return (F.normalize(image_features.float(), dim=-1) * F.normalize(text_features.float(), dim=-1)).sum(-1)


def score_cosines(
    model,
    tokenizer,
    pixels: Callable[[str], Any],
    items: Sequence[Pair | Rated],
    *,
    device: str = "cpu",
    batch_size: int = 64,
    autocast: str = "",
) -> np.ndarray:
    """Cosine of each item's image and caption under ``model`` (eval mode, no gradients), float64."""
    import torch

    was_training = model.training
    model.eval()
    out = []
    with torch.no_grad(), autocast_context(device, autocast):
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            image, text = encode_batch(
                model, tokenizer, pixels, [i.image for i in batch], [i.text for i in batch], device
            )
            out.append(cosines(image, text).float().cpu().numpy())
    model.train(was_training)
    return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


def dev_agreement(scores: Sequence[float], rated: Sequence[Rated]) -> float | None:
    """Mean over languages of Kendall τ_b between scores and ratings (languages with at least 3 ratings and
    non-constant values); None when no language qualifies. The early-stopping criterion."""
    from scipy import stats

    by_language: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for score, item in zip(scores, rated):
        by_language[item.language][0].append(float(score))
        by_language[item.language][1].append(float(item.rating))
    taus = []
    for x, y in by_language.values():
        if len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
            tau = stats.kendalltau(x, y, variant="b").statistic
            if math.isfinite(tau):
                taus.append(float(tau))
    return float(np.mean(taus)) if taus else None
