"""How CLIP inference runs: CPU threads, reduced-precision autocast and its tolerance check.

Autocast (``LoadedClip.autocast``)
    ``""`` (default) computes in fp32. ``"bf16"`` or ``"fp16"`` runs the forward passes under
    ``torch.autocast`` on the model's device: on a GPU the matrix products then run in half
    precision (about twice the throughput); on a CPU without native bf16 (AVX512-BF16/AMX) it
    is *slower* than fp32, so it is meant for CUDA. Embeddings are still returned as
    L2-normalised float32. Reduced-precision embeddings are cached under their own key (see
    ``LoadedClip.embedding_key``), never mixed with fp32 ones.

Tolerance (:data:`AUTOCAST_TOLERANCE`)
    CLIPScore is ``2.5 * max(cos, 0)``. bf16 keeps 8 bits of mantissa, so a cosine of unit
    vectors of dimension 512 moves by a few 1e-3; :func:`autocast_check` embeds a sample both
    ways and passes when no CLIPScore (and no caption-reference cosine) moves by more than the
    tolerance, 0.01 by default: a tenth of the smallest CLIPScore difference the platform's
    reports discuss (0.1) and below the two decimals they print. A worker whose check fails
    computes in fp32 and says so.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .choices import choice_check

if TYPE_CHECKING:
    from .loading import LoadedClip

__all__ = [
    "AUTOCAST_CHOICES",
    "AUTOCAST_TOLERANCE",
    "AutocastCheck",
    "autocast_check",
    "autocast_choice_check",
    "inference",
    "inference_model",
    "set_torch_threads",
]

AUTOCAST_CHOICES = ("", "bf16", "fp16")
AUTOCAST_TOLERANCE = 0.01


def autocast_choice_check(value: object) -> str:
    """``value`` if it is ``""``, ``"bf16"`` or ``"fp16"``; ``ValueError`` naming the choices otherwise."""
    return choice_check(
        value, AUTOCAST_CHOICES, "CLIP autocast", "'' (fp32), 'bf16' or 'fp16' (meant for CUDA)"
    )


def set_torch_threads(threads: int) -> int:
    """Set torch's intra-op CPU threads to ``threads`` (0 leaves torch's default); returns the count in force.

    Process-wide: a Celery worker process sets it once, when it loads its model. Raises
    ValueError for a negative count.
    """
    import torch

    if threads < 0:
        raise ValueError(f"CLIP_TORCH_THREADS must be 0 (torch's default) or positive, not {threads}")
    if threads and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


@contextlib.contextmanager
def inference(loaded: LoadedClip) -> Iterator[None]:
    """``torch.inference_mode`` plus, when ``loaded.autocast`` is set, autocast on the model's device."""
    import torch

    with torch.inference_mode():
        if not loaded.autocast:
            yield
            return
        device_type = torch.device(loaded.device).type
        with torch.autocast(device_type=device_type, dtype=autocast_dtype(loaded.autocast)):
            yield


def autocast_dtype(autocast: str):
    """The torch dtype of an autocast choice (``"bf16"``, ``"fp16"``); None for fp32 (``""``)."""
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(autocast)


def inference_model(loaded: LoadedClip, *, cast_weights: bool | None = None):
    """The module the forward passes of ``loaded`` run on: ``loaded.model``, or for an autocast run on
    CUDA its copy with the weights held in the autocast dtype (:func:`.device.reduced_precision_model`),
    so autocast no longer casts every weight on every call. ``cast_weights`` defaults to "autocast on
    CUDA" (tests force it on a CPU)."""
    from .device import device_type, reduced_precision_model

    if cast_weights is None:
        cast_weights = bool(loaded.autocast) and device_type(loaded.device) == "cuda"
    if not cast_weights or not loaded.autocast:
        return loaded.model
    return reduced_precision_model(loaded.model, autocast_dtype(loaded.autocast))


@dataclass(frozen=True)
class AutocastCheck:
    """How far reduced precision moved the scores of a sample, against fp32."""

    autocast: str
    max_clipscore_diff: float
    max_text_cosine_diff: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return max(self.max_clipscore_diff, self.max_text_cosine_diff) <= self.tolerance


def autocast_check(
    loaded: LoadedClip,
    texts: list[str],
    image_pixels,
    *,
    tolerance: float = AUTOCAST_TOLERANCE,
    w: float = 2.5,
) -> AutocastCheck:
    """Compare the autocast of ``loaded`` with fp32 on a sample: ``texts[i]`` against image ``i``.

    ``image_pixels`` is a preprocessed ``(n, 3, H, W)`` tensor with ``n == len(texts)``. Measures
    the largest change of a CLIPScore (``w * max(cos, 0)``) and of a text-text cosine (what
    RefCLIPScore uses). Raises ValueError when ``loaded.autocast`` is empty or the sample is empty
    or mismatched.
    """
    import dataclasses

    import torch.nn.functional as F

    from .texts import embed_texts

    if not loaded.autocast:
        raise ValueError("autocast_check needs a model with autocast set")
    if not texts or len(texts) != len(image_pixels):
        raise ValueError(f"{len(texts)} texts for {len(image_pixels)} images: the sample must pair them")
    full = dataclasses.replace(loaded, autocast="")

    def embeddings(model: LoadedClip) -> tuple[np.ndarray, np.ndarray]:
        with inference(model):
            images = inference_model(model).encode_image(image_pixels.to(model.device))
            images = F.normalize(images.float(), dim=-1).cpu().numpy().astype(np.float64)
        return images, embed_texts(model, texts).astype(np.float64)

    images32, texts32 = embeddings(full)
    images16, texts16 = embeddings(loaded)
    score32 = w * np.maximum(np.einsum("ij,ij->i", images32, texts32), 0.0)
    score16 = w * np.maximum(np.einsum("ij,ij->i", images16, texts16), 0.0)
    return AutocastCheck(
        autocast=loaded.autocast,
        max_clipscore_diff=float(np.max(np.abs(score32 - score16))),
        max_text_cosine_diff=float(np.max(np.abs(texts32 @ texts32.T - texts16 @ texts16.T))),
        tolerance=tolerance,
    )
